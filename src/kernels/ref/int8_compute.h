// Pieces shared by the quantized reference kernels of the compute ops (conv_int8.cc, gemm_int8.cc):
// the int8 bounds of a fused Relu/Clip and the final clamp, and the requantization of an int32
// accumulator into the int8 output (docs/numerics.md, "Requantization").
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

// The output of a compute op: y = clamp(sat8(rne(float(acc) * M[c]) + zp_y)) for the int32
// accumulator of output channel c, M[c] = (s_x * s_w[c]) / s_y (float32, computed once).
struct Int8Output {
  std::vector<float> mult;  // M[c]
  int32_t zp_y = 0;
  Int8Clamp clamp;

  // Infer bounds |acc| by INT32_MAX, so the conversion keeps the value.
  int8_t operator()(int64_t acc, int64_t c) const {
    return clamp(requantize(static_cast<int32_t>(acc), mult[static_cast<size_t>(c)], zp_y));
  }
};

// For a node with int8 input scale s_x, weights (or second operand) parameters `w`, per-tensor
// output `y` and `channels` output channels.
inline Int8Output int8_output(float s_x, const QuantParams& w, const Tensor& y, const Attrs& attrs,
                              int64_t channels) {
  Int8Output o;
  const QuantScalar qy = per_tensor(y);
  o.mult = requant_multipliers(s_x, w, qy.scale, channels);
  o.zp_y = qy.zp;
  o.clamp = int8_clamp_of_fused_act(attrs, qy.scale, qy.zp);
  return o;
}

}  // namespace orknn
