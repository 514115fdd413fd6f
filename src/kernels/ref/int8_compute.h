// Pieces shared by the quantized reference kernels of the compute ops (conv_int8.cc, gemm_int8.cc):
// the int8 bounds of a fused Relu/Clip and the final clamp, the fused value activations, and the
// requantization of an int32 accumulator into the int8 output (docs/numerics.md, "Requantization").
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "graph/ir.h"
#include "kernels/quant_util.h"
#include "kernels/ref/activation.h"

namespace orknn {

// A fused activation of a quantized node clamps the requantized int8 output y to [lo, hi]:
// none: [-128, 127]; Relu: [zp_y, 127]; Clip(min, max): [quantize(min), quantize(max)], where
// quantize(-inf) = -128 and quantize(+inf) = 127 leave the int8 range as it is.
struct Int8Clamp {
  int32_t lo = -128, hi = 127;
  // max with the lower bound first, then min with the upper one (as the float Clip: min > max
  // gives max).
  int8_t operator()(int32_t y) const { return static_cast<int8_t>(std::min(std::max(y, lo), hi)); }
};

inline Int8Clamp int8_clamp_of_fused_act(const Attrs& attrs, float s_y, int32_t zp_y) {
  Int8Clamp c;
  const FusedActivation act = read_fused_act(attrs);
  if (act.act == FusedAct::kRelu) {
    c.lo = zp_y;
  } else if (act.act == FusedAct::kClip) {
    c.lo = quantize_value(act.alpha, s_y, zp_y);
    c.hi = quantize_value(act.beta, s_y, zp_y);
  }
  return c;
}

// An activation a quantized Conv applies to the dequantized accumulator before quantizing its
// output (docs/numerics.md, "Requantization"): LeakyRelu, HardSwish, HardSigmoid, whose float32
// form the vector kernels reproduce exactly. Relu and Clip clamp the int8 result instead.
inline bool is_int8_value_act(FusedAct a) {
  return a == FusedAct::kLeakyRelu || a == FusedAct::kHardSwish || a == FusedAct::kHardSigmoid;
}

// The value activation of an int8 Conv, in float32 without division (vector divisions in the
// kernels' epilogues cost PP-OCRv4 rec's pointwise convolutions 7 %): HardSwish multiplies by the
// float32 of 1/6 where the float op divides by 6.
inline float int8_value_act(float v, FusedAct act, float alpha, float beta) {
  switch (act) {
    case FusedAct::kLeakyRelu: return v >= 0.f ? v : v * alpha;
    case FusedAct::kHardSwish: {
      float t = v * (1.f / 6.f) + 0.5f;
      t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
      return v * t;
    }
    case FusedAct::kHardSigmoid: {
      const float t = alpha * v + beta;
      return t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    }
    default: return v;
  }
}

// The output of a compute op: y = clamp(sat8(rne(float(acc) * M[c]) + zp_y)) for the int32
// accumulator of output channel c, M[c] = (s_x * s_w[c]) / s_y (float32, computed once). With a
// fused value activation (is_int8_value_act): M[c] = s_x * s_w[c], R = 1 / s_y (float32) and
// y = sat8(rne(int8_value_act(float(acc) * M[c]) * R) + zp_y).
struct Int8Output {
  std::vector<float> mult;  // M[c]
  int32_t zp_y = 0;
  Int8Clamp clamp;
  FusedActivation act;  // kNone unless a value activation is fused
  float inv_s_y = 1.f;  // R

  // Infer bounds |acc| by INT32_MAX, so the conversion keeps the value.
  int8_t operator()(int64_t acc, int64_t c) const {
    const float v = static_cast<float>(static_cast<int32_t>(acc)) * mult[static_cast<size_t>(c)];
    if (act.act != FusedAct::kNone) return rne_add_zp_sat8(int8_value_act(v, act.act, act.alpha, act.beta) * inv_s_y, zp_y);
    return clamp(rne_add_zp_sat8(v, zp_y));
  }
};

// For a node with int8 input scale s_x, weights (or second operand) parameters `w`, per-tensor
// output `y` and `channels` output channels.
inline Int8Output int8_output(float s_x, const QuantParams& w, const Tensor& y, const Attrs& attrs,
                              int64_t channels) {
  Int8Output o;
  const QuantScalar qy = per_tensor(y);
  const FusedActivation act = read_fused_act(attrs);
  o.zp_y = qy.zp;
  if (is_int8_value_act(act.act)) {
    o.inv_s_y = 1.f / qy.scale;
    o.act = act;
    o.mult = requant_multipliers(s_x, w, 1.f, channels);  // s_x * s_w[c]: (s_x * s_w[c]) / 1 is exact
  } else {
    o.mult = requant_multipliers(s_x, w, qy.scale, channels);
    o.clamp = int8_clamp_of_fused_act(attrs, qy.scale, qy.zp);
  }
  return o;
}

}  // namespace orknn
