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

#include "kernels/kernel.h"
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
// The activations an int8 Conv applies to its dequantized accumulator (docs/numerics.md).
inline bool is_value_act_name(const std::string& act) {
  return act == "LeakyRelu" || act == "HardSwish" || act == "HardSigmoid";
}

// A value activation on the dequantized accumulator (LeakyRelu alpha = amin; HardSigmoid alpha =
// amin, beta = amax), written out as docs/numerics.md defines them for an int8 Conv, in float32
// (HardSwish multiplies by the float32 of 1/6).
inline float value_act_naive(float v, const std::string& act, float amin, float amax) {
  if (act == "LeakyRelu") return v < 0.f ? v * amin : v;
  if (act == "HardSwish") return v * std::min(std::max(v * (1.f / 6.f) + 0.5f, 0.f), 1.f);
  return std::min(std::max(amin * v + amax, 0.f), 1.f);  // HardSigmoid
}

inline int8_t requant_naive(int64_t acc, float s_x, float s_w, float s_y, int32_t zp_y, const std::string& act,
                            float amin, float amax) {
  EXPECT_TRUE(acc >= INT32_MIN && acc <= INT32_MAX);
  if (is_value_act_name(act))  // docs/numerics.md: one rounding
    return static_cast<int8_t>(
        rne_zp_naive(value_act_naive(static_cast<float>(acc) * (s_x * s_w), act, amin, amax) * (1.f / s_y), zp_y));
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

// The geometry of a Conv or ConvTranspose test case (1-D, 2-D or 3-D), ONNX conventions: x is
// N, C, spatial...; pads are all begins then all ends; weights are [OC, C/G, k...] for Conv and
// [C, OC/G, k...] for ConvTranspose.
struct NaiveConvGeometry {
  Shape x;
  int64_t oc = 1, group = 1;
  std::vector<int64_t> k, strides, dil, pads, out_pad;  // out_pad: ConvTranspose only (empty: 0)
  bool transposed = false;
};

inline Shape naive_conv_weight_shape(const NaiveConvGeometry& g) {
  Shape w = g.transposed ? Shape{g.x[1], g.oc / g.group} : Shape{g.oc, g.x[1] / g.group};
  for (int64_t v : g.k) w.push_back(v);
  return w;
}

inline Shape naive_conv_output_shape(const NaiveConvGeometry& g) {
  const size_t sp = g.x.size() - 2;
  Shape y = {g.x[0], g.oc};
  for (size_t i = 0; i < sp; ++i) {
    const int64_t ext = (g.k[i] - 1) * g.dil[i] + 1;
    if (g.transposed) {
      const int64_t op = g.out_pad.empty() ? 0 : g.out_pad[i];
      y.push_back(g.strides[i] * (g.x[2 + i] - 1) + op + ext - g.pads[i] - g.pads[sp + i]);
    } else {
      y.push_back((g.x[2 + i] + g.pads[i] + g.pads[sp + i] - ext) / g.strides[i] + 1);
    }
  }
  return y;
}

// The exact accumulators of docs/numerics.md in int64: acc = bias[o] + sum over the window of
// (x - zp_x) * w, padding taps skipped (empty bias: 0). Both ops are written as a gather: output
// position o reads input i when (Conv) i = o * stride - pad + t * dilation, or (ConvTranspose)
// o + pad = i * stride + t * dilation. max_u8_sum (optional) receives the largest
// |sum((x + 128) * w)|, what a u8 x s8 product sum of the same window reaches.
inline std::vector<int64_t> naive_conv_acc(const NaiveConvGeometry& g, const std::vector<int8_t>& x,
                                           const std::vector<int8_t>& w, const std::vector<int32_t>& bias,
                                           int32_t zp_x, int64_t* max_u8_sum = nullptr) {
  const size_t sp = g.x.size() - 2;
  const Shape y = naive_conv_output_shape(g);
  const int64_t n_b = g.x[0], c_in = g.x[1], oc = g.oc, cg = c_in / g.group, og = oc / g.group;
  // Three spatial slots, leading ones for 1-D and 2-D.
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, ks[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1},
          pb[3] = {0, 0, 0};
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = 3 - sp + i;
    in[j] = g.x[2 + i];
    out[j] = y[2 + i];
    ks[j] = g.k[i];
    st[j] = g.strides[i];
    dl[j] = g.dil[i];
    pb[j] = g.pads[i];
  }
  const int64_t opix = out[0] * out[1] * out[2], taps = ks[0] * ks[1] * ks[2];
  std::vector<int64_t> acc(static_cast<size_t>(n_b * oc * opix));
  int64_t max_u8 = 0;
  for (int64_t b = 0; b < n_b; ++b)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            int64_t s = bias.empty() ? 0 : bias[static_cast<size_t>(o)], u8_sum = 0;
            const int64_t grp = o / og;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t kd = 0; kd < ks[0]; ++kd)
                for (int64_t kh = 0; kh < ks[1]; ++kh)
                  for (int64_t kw = 0; kw < ks[2]; ++kw) {
                    int64_t id, ih, iw;
                    if (g.transposed) {
                      const int64_t qd = od + pb[0] - kd * dl[0], qh = oh + pb[1] - kh * dl[1],
                                    qw = ow + pb[2] - kw * dl[2];
                      if (qd < 0 || qh < 0 || qw < 0 || qd % st[0] || qh % st[1] || qw % st[2]) continue;
                      id = qd / st[0];
                      ih = qh / st[1];
                      iw = qw / st[2];
                    } else {
                      id = od * st[0] - pb[0] + kd * dl[0];
                      ih = oh * st[1] - pb[1] + kh * dl[1];
                      iw = ow * st[2] - pb[2] + kw * dl[2];
                    }
                    if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                    const int64_t xv = x[static_cast<size_t>(((b * c_in + grp * cg + ci) * in[0] + id) * in[1] * in[2] +
                                                             ih * in[2] + iw)];
                    const int64_t w_block = g.transposed ? (grp * cg + ci) * og + o % og : o * cg + ci;
                    const int64_t wv = w[static_cast<size_t>(w_block * taps + (kd * ks[1] + kh) * ks[2] + kw)];
                    s += (xv - zp_x) * wv;
                    u8_sum += (xv + 128) * wv;
                  }
            max_u8 = std::max<int64_t>(max_u8, u8_sum < 0 ? -u8_sum : u8_sum);
            acc[static_cast<size_t>((b * oc + o) * opix + (od * out[1] + oh) * out[2] + ow)] = s;
          }
  if (max_u8_sum) *max_u8_sum = max_u8;
  return acc;
}

// The fast INT8 kernel of `op` that this build runs on this CPU, for the tests that hold it to the
// reference bit for bit: the x86 backend's `x86` when it is registered and `x86_cpu` says the CPU
// has its features, else the NEON backend's `neon` when it is registered (NEON is part of every
// aarch64 CPU); nullptr when neither runs here (the test skips).
inline const char* fast_int8_kernel(OpId op, const char* x86, bool x86_cpu, const char* neon) {
  auto registered = [op](const char* name) {
    for (const KernelEntry* e : kernels_for(op))
      if (std::string(e->name) == name) return true;
    return false;
  };
  if (x86_cpu && registered(x86)) return x86;
  if (registered(neon)) return neon;
  return nullptr;
}

}  // namespace orknn::test::q8t
