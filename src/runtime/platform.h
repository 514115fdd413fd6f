// Per-platform facts (docs/api-contract.md §4.4, §5): the one table of target platforms.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace orknn {

// The matmul API's tiles and alignments per input element kind (docs/api-contract.md §5).
struct MatmulPlatform {
  bool supported;                           // the platform has the matmul API
  int a_subk_i4, a_subk_i8, a_subk_f16;     // native A: subK per element kind
  int b_i4[2], b_i8[2], b_f16[2];           // native B: (subN, subK)
  int k_align_i4, k_align_i8, k_align_f16;  // K multiple of
  int n_align_i4, n_align_i8, n_align_f16;  // N multiple of
  int k_segment;                            // native B split along K every this many rows (0: never)
  bool int4;                                // int4 types
};

struct PlatformInfo {
  const char* name;        // lower case, as given to rknn_convert -t
  int npu_cores;           // emulated NPU cores (RK3588: 3, RK3576: 2, others 1)
  int c2_int8;             // NC1HWC2 C2 for int8 (0: no native layout for the dtype)
  int c2_fp16;             // NC1HWC2 C2 for float16 (0: none)
  int w_stride_align;      // alignment of w_stride for native image inputs, in pixels
  MatmulPlatform matmul;
};

const PlatformInfo* find_platform(const std::string& name);  // case-insensitive; nullptr if unknown
std::vector<std::string> platform_names();
// The platforms with the matmul API, comma-separated (for messages).
std::string matmul_platform_names();

// Threads for a valid core mask of platform p (docs/decisions.md "Threads"): every emulated NPU core
// gets an equal share of the CPUs this process may use (at least one); a mask takes its cores'
// shares, and a mask of all the cores (RKNN_NPU_CORE_ALL, 0_1_2 on RK3588) every CPU. AUTO picks
// one core, as the vendor's runtime does.
int core_mask_threads(const PlatformInfo& p, uint32_t mask);

}  // namespace orknn
