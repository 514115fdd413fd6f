// The NC1HWC2 C2 per platform and dtype as the vendor guide's Table 3-1 ("C2 values for different
// hardware platforms", runtime chapter, NC1HWC2 section) gives it, written out here so that tests
// compare the runtime's platform table (src/runtime/platform.cc) with the guide, not with itself.
// The guide's columns: RK2118 | RK3566/RK3568 | RK3588/RK3576/RV1126B | RV1103B/RV1106B |
// RV1103/RV1106 | RK3562; int8: / 8 16 8 16 16; float16: 4 4 8 / 8 8. 0 stands for its "/": the
// platform has no native layout for that dtype.
#pragma once
#include <string>

namespace testutil {

struct VendorC2 {
  const char* platform;  // as given to rknn_convert -t
  int int8;
  int fp16;
};

inline constexpr VendorC2 kVendorC2[] = {
    {"rk2118", 0, 4},    {"rk3566", 8, 4},   {"rk3568", 8, 4},   {"rk3588", 16, 8},
    {"rk3576", 16, 8},   {"rv1126b", 16, 8}, {"rv1103b", 8, 0},  {"rv1106b", 8, 0},
    {"rv1103", 16, 8},   {"rv1106", 16, 8},  {"rk3562", 16, 8},
};

// The table's C2 for `platform` (lower case) and dtype; -1 for a platform the table does not list.
inline int vendor_c2(const std::string& platform, bool int8) {
  for (const VendorC2& row : kVendorC2)
    if (platform == row.platform) return int8 ? row.int8 : row.fp16;
  return -1;
}

}  // namespace testutil
