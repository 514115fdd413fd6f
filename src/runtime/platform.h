// Per-platform facts (architecture §6): the one table of target platforms.
#pragma once
#include <string>
#include <vector>

namespace orknn {

struct PlatformInfo {
  const char* name;        // lower case, as given to rknn_convert -t
  int npu_cores;           // emulated NPU cores (RK3588: 3, RK3576: 2, others 1)
  int c2_int8;             // NC1HWC2 C2 for int8 (0: no native layout for the dtype)
  int c2_fp16;             // NC1HWC2 C2 for float16 (0: none)
  int w_stride_align;      // alignment of w_stride for native image inputs, in pixels
};

const PlatformInfo* find_platform(const std::string& name);  // case-insensitive; nullptr if unknown
std::vector<std::string> platform_names();

}  // namespace orknn
