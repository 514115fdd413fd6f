// float -> integer conversion for the reference kernels (Cast, Pow with an integer base,
// ConstantOfShape) and the runtime's input conversions (runtime/tensor_io.cc): truncation toward
// zero, NaN -> 0, values beyond int64 saturate to it, then the result wraps to the target width,
// which is what numpy's astype does on x86. Unlike a plain static_cast it is defined for every
// input, so hostile model or client values cannot cause UB.
#pragma once
#include <cmath>
#include <cstdint>

namespace orknn {

template <typename D>
D float_to_int(double v) {
  if (std::isnan(v)) return D(0);
  v = std::trunc(v);
  int64_t i;
  if (v >= 9.2233720368547758e18)
    i = INT64_MAX;
  else if (v <= -9.2233720368547758e18)
    i = INT64_MIN;
  else
    i = static_cast<int64_t>(v);
  return static_cast<D>(i);
}

}  // namespace orknn
