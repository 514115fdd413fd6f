// Standalone matmul of rknn_matmul_api.h (docs/matmul.md): operand descriptions per platform,
// layouts (NORM, TP_NORM, NATIVE tiles with K segments), quantisation of A/B/C, and the CPU kernels:
// a oneDNN fast path (integer A: u8 x s8 -> s32 plus exact zero-point corrections; fp16 A: f32) and
// the scalar reference kernel (OPENRKNN_MATMUL_REFERENCE=1, builds without oneDNN, configurations
// oneDNN cannot serve exactly).
// The extern "C" entry points and the handle table live in src/api/rknn_matmul_api.cc.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "rknn_matmul_api.h"

namespace orknn {

// Element kinds of the matmul operands.
enum class MmElem { kF16, kI8, kI4, kF32, kI32, kI16, kBF16 };

struct MatmulTypeInfo {
  MmElem a, b, c;
};
// Element kinds of A, B, C for an rknn_matmul_type value; error for unknown values.
Status matmul_type_info(int type, MatmulTypeInfo* out);

// Per-platform, per-type tiling and alignment (api-contract §5).
struct MatmulTiles {
  int a_subk = 0;     // native A: [K/a_subk, M, a_subk]
  int b_subn = 0;     // native B: [N/b_subn, K/b_subk, b_subn, b_subk]
  int b_subk = 0;
  int c_sub = 4;      // native C: [N/c_sub, M, c_sub]
  int k_segment = 0;  // native B split along K into segments of this many rows (0: never)
  int k_align = 0;    // K must be a multiple of this
  int n_align = 0;    // N must be a multiple of this
};

// Platform the matmul API emulates: $OPENRKNN_MATMUL_PLATFORM (default "rk3588"), lower case.
std::string matmul_platform();

// Tiles for `info->type` on `platform`; error naming the platform/type when unsupported.
Status matmul_tiles(const std::string& platform, const rknn_matmul_info& info, MatmulTiles* out);

// Validates info + (M, K, N) on `platform` and fills the operand attributes.
Status matmul_describe(const std::string& platform, const rknn_matmul_info& info, int M, int K, int N,
                       rknn_matmul_io_attr* out);

// rknn_B_normal_layout_to_native_layout: row-major [K, N] -> native B (with K segments).
Status matmul_b_normal_to_native(const std::string& platform, const void* src, void* dst, int K, int N,
                                 const rknn_matmul_info& info);

class MatmulContext {
 public:
  MatmulContext();
  ~MatmulContext();
  static Status create(const rknn_matmul_info& info, const std::vector<rknn_matmul_shape>& shapes,
                       std::unique_ptr<MatmulContext>* out, std::vector<rknn_matmul_io_attr>* attrs);

  Status set_io_mem(rknn_tensor_mem* mem, const rknn_matmul_tensor_attr* attr);
  // Returns kFail when the platform has a single core (the vendor returns -1 there).
  Status set_core_mask(int mask);
  Status set_quant_params(const rknn_quant_params* params);
  Status get_quant_params(rknn_quant_params* params, float* scale);
  Status set_dynamic_shape(const rknn_matmul_shape* shape);
  Status run();

  struct Fast;  // oneDNN state, defined in matmul.cc

 private:
  struct Quant {
    std::vector<float> scale{1.0f};
    std::vector<int32_t> zp{0};
  };
  struct Binding {
    rknn_tensor_mem* mem = nullptr;
    uint64_t serial = 0;
  };

  rknn_matmul_info info_{};
  std::string platform_;
  MatmulTypeInfo types_{};
  MatmulTiles tiles_{};
  std::vector<rknn_matmul_shape> shapes_;
  std::vector<rknn_matmul_io_attr> attrs_;
  size_t current_ = 0;
  Binding bind_[3];  // A, B, C
  Quant quant_[3];   // A, B, C
  int threads_ = 1;
  bool reference_ = false;  // $OPENRKNN_MATMUL_REFERENCE=1 at create: always the scalar kernel

  // oneDNN state: buffers sized at create, primitives per shape built at first use (and rebuilt
  // when the thread count changes). Null when the reference kernel handles this context.
  std::unique_ptr<Fast> fast_;

  // The scalar reference kernel; data = A, B, C base addresses.
  Status run_reference(void* const data[3]);
  // The oneDNN path; *handled = false when this configuration has none (the caller runs the reference).
  Status run_fast(void* const data[3], bool* handled);
  Status init_fast();
};

}  // namespace orknn
