// Helpers of the quantized (INT8) op tests: building quantized inputs, and the arithmetic of
// docs/numerics.md ("Quantized (INT8) models") written out independently of src/kernels/quant_util.h
// (round half to even by hand, saturation, dequantize/requantize), for expected values.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "testutil/op_harness.h"

namespace orknn::test::q8t {

inline QuantParams qp(float scale, int32_t zp) {
  QuantParams q;
  q.scale = {scale};
  q.zero_point = {zp};
  return q;
}

inline TensorData q8(const Shape& s, const std::vector<int8_t>& v, const QuantParams& q, bool is_const = false) {
  TensorData d = TensorData::of(s, v, DType::kI8, is_const);
  d.quant = q;
  return d;
}

// Plain int8 data (no quantization parameters).
inline TensorData i8(const Shape& s, const std::vector<int8_t>& v, bool is_const = false) {
  return TensorData::of(s, v, DType::kI8, is_const);
}

// Round half to even, by comparing with the floor (no reliance on the FPU rounding mode).
inline double rne_naive(double v) {
  const double f = std::floor(v);
  const double d = v - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1;  // exactly .5: the even neighbour
}

inline int8_t sat8_naive(double v) { return static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v)); }

// sat8(rne(v) + zp); NaN gives zp.
inline int8_t rne_zp_naive(float v, int32_t zp) {
  if (std::isnan(v)) return sat8_naive(zp);
  return sat8_naive(rne_naive(static_cast<double>(v)) + zp);
}

// quantize(x) = sat8(rne(x / s) + zp), x / s in float32.
inline int8_t quantize_naive(float x, const QuantParams& q) {
  const float v = x / q.scale[0];
  return rne_zp_naive(v, q.zero_point[0]);
}

// Random int8 values (full range).
inline std::vector<int8_t> random_i8(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

inline std::vector<int8_t> out_i8(const OpResult& r, size_t i = 0) { return r.outputs.at(i).as<int8_t>(); }

inline bool same_params(const QuantParams& a, const QuantParams& b) {
  return a.scale == b.scale && a.zero_point == b.zero_point;
}

}  // namespace orknn::test::q8t
