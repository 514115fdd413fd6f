// Helpers of the quantized (INT8) op tests: building quantized inputs and nodes, and the arithmetic
// of docs/numerics.md ("Quantized (INT8) models") written out independently of
// src/kernels/quant_util.h (round half to even by hand, saturation, dequantize/requantize), for
// expected values.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "testutil/op_harness.h"

namespace orknn::test::q8t {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

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

// Per-axis parameters along `axis`; zero points 0 (symmetric weights) unless given.
inline QuantParams per_axis(const std::vector<float>& s, int32_t axis, const std::vector<int32_t>& zp = {}) {
  QuantParams q;
  q.scale = s;
  q.zero_point = zp.empty() ? std::vector<int32_t>(s.size(), 0) : zp;
  q.axis = axis;
  return q;
}

// Constant symmetric int8 weights: one scale (per tensor) or one per index along `axis`.
inline TensorData weights(const Shape& s, const std::vector<int8_t>& v, const std::vector<float>& scales,
                          int32_t axis) {
  return q8(s, v, scales.size() == 1 ? qp(scales[0], 0) : per_axis(scales, axis), /*is_const=*/true);
}

// A constant int32 tensor (a quantized bias).
inline TensorData i32c(const Shape& s, const std::vector<int32_t>& v) { return TensorData::of(s, v, DType::kI32, true); }

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

// The spec's requantization of a compute op and its fused clamp, written out: M = (s_x * s_w) / s_y
// and v = float(acc) * M in float32, then rne (by hand) + zp_y, saturate, then the clamp of a fused
// Relu (at zp_y) or Clip (at the quantized bounds).
inline int8_t requant_naive(int64_t acc, float s_x, float s_w, float s_y, int32_t zp_y, const std::string& act,
                            float amin, float amax) {
  EXPECT_TRUE(acc >= INT32_MIN && acc <= INT32_MAX);
  const float m = (s_x * s_w) / s_y;
  const float v = static_cast<float>(acc) * m;
  int32_t y = rne_zp_naive(v, zp_y);
  if (act == "Relu") y = std::max(y, zp_y);
  if (act == "Clip") {
    y = std::max<int32_t>(y, quantize_naive(amin, qp(s_y, zp_y)));
    y = std::min<int32_t>(y, quantize_naive(amax, qp(s_y, zp_y)));
  }
  return static_cast<int8_t>(y);
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

// The Status of running a one-node quantized op (infer, then the reference kernel) whose output
// has parameters `y`; trailing absent inputs are left out of the node.
inline Status run_quantized_status(OpId op, const Attrs& attrs, std::vector<TensorData> in, const QuantParams& y) {
  while (!in.empty() && in.back().absent) in.pop_back();
  return run_op(op, attrs, in, 1, "ref", 1, {y}).status;
}

}  // namespace orknn::test::q8t
