// Environment switches (OPENRKNN_DISABLE_*, OPENRKNN_REF_KERNELS, ...), for A/B measurements and
// tests: on when set to anything but "" or "0". Read at each call (plan time, not per run), so
// that a test can flip one between two plans in one process.
#pragma once
#include <cstdlib>
#include <cstring>

namespace orknn {

inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace orknn
