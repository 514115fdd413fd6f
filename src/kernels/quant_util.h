// Scalar building blocks of the INT8 arithmetic specified in docs/numerics.md ("Quantized (INT8)
// models"). Reference kernels are written with these; fast kernels reproduce the same operations
// in the same order, vectorised, and are tested bit-exact against the reference.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/ir.h"

namespace orknn {

// Round half to even (the default floating-point rounding mode, which nothing in the project changes).
inline float round_half_even(float v) { return std::nearbyint(v); }

inline int32_t sat8(int32_t v) { return v < -128 ? -128 : (v > 127 ? 127 : v); }

// rne(v) + zp, saturated to int8. Values beyond int8 range are clamped before the conversion to an
// integer so that huge or infinite v cannot overflow; NaN becomes zp (ONNX QuantizeLinear).
inline int8_t rne_add_zp_sat8(float v, int32_t zp) {
  if (std::isnan(v)) return static_cast<int8_t>(sat8(zp));
  // |rne(v)| beyond 256 saturates whatever zp in [-128, 127] is added.
  if (v > 512.f) v = 512.f;
  if (v < -512.f) v = -512.f;
  return static_cast<int8_t>(sat8(static_cast<int32_t>(round_half_even(v)) + zp));
}

// quantize: q = sat8(rne(x / s) + zp)
inline int8_t quantize_value(float x, float scale, int32_t zp) { return rne_add_zp_sat8(x / scale, zp); }

// dequantize: x = float(q - zp) * s
inline float dequantize_value(int32_t q, float scale, int32_t zp) { return static_cast<float>(q - zp) * scale; }

// Requantization of an int32 accumulator: y = sat8(rne(float(acc) * M) + zp_y).
inline int8_t requantize(int32_t acc, float multiplier, int32_t zp_y) {
  return rne_add_zp_sat8(static_cast<float>(acc) * multiplier, zp_y);
}

// Per-tensor parameters of a quantized activation (scale[0], zero_point[0]).
struct QuantScalar {
  float scale = 1.f;
  int32_t zp = 0;
};
inline QuantScalar per_tensor(const Tensor& t) {
  QuantScalar q;
  if (!t.quant.scale.empty()) q.scale = t.quant.scale[0];
  if (!t.quant.zero_point.empty()) q.zp = t.quant.zero_point[0];
  return q;
}

// An int8 activation the per-tensor kernels take: one scale, at most one zero point (absent: 0, as
// per_tensor reads it).
inline bool is_q8_per_tensor(const Tensor& t) {
  return t.dtype == DType::kI8 && t.quant.scale.size() == 1 && t.quant.zero_point.size() <= 1;
}

// Output multipliers M[c] = (s_x * s_w[c]) / s_y for `channels` output channels; a weight tensor
// with one scale gives the same M for every channel.
inline std::vector<float> requant_multipliers(float s_x, const QuantParams& w, float s_y, int64_t channels) {
  std::vector<float> m(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const float sw = w.scale.size() == 1 ? w.scale[0] : w.scale[static_cast<size_t>(c)];
    m[static_cast<size_t>(c)] = (s_x * sw) / s_y;
  }
  return m;
}

}  // namespace orknn
