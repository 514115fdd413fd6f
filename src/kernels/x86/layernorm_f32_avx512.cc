// AVX-512 kernel of float LayerNormalization, "x86_layernorm_f32": the transformers' and ConvNeXt's
// normalisation over the trailing axes (convnext_tiny: 23 nodes over 96-768 channels per pixel).
// Scale and B must each be one value per normalised element or one value for all (B may be
// absent); other broadcasts stay on the reference.
//
// The reference's numerics (kernels/ref/norm.cc) with the two sums vectorised: per group of D
// elements, mean = (sum of x) / D, var = (sum of (x - mean)^2) / D (two passes, as the reference),
// inv_std = 1 / sqrtf(var + epsilon) in scalar float, then y = (x - mean) * inv_std * scale + B per
// element with the reference's operations in its order (B = +0 when absent). Only the sums differ:
// 32 partial sums (two accumulators of 16 lanes, the squares by FMA) instead of one running sum,
// i.e. float reassociation; the bound is in docs/kernels.md. Threads take contiguous ranges of
// groups; fp16 mode: rounded in registers.
//
// InstanceNormalization (same name; wav2vec2's first feature layer, GroupNorm exports) is the same
// row per (n, c) plane with scale[c] and B[c]: the reference's numerics are the same function.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positives in its intrinsics
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/ref/nchw.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"

namespace orknn {
namespace {

bool supports_layernorm_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.inputs[1] < 0 || n.outputs[0] < 0)
    return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  if (!is_f32(&x) || !is_f32(&g.tensor(n.outputs[0])) || x.numel() <= 0) return false;
  const int64_t axis = n.attrs.get_int("axis", -1);  // infer made it non-negative
  if (axis < 0 || axis >= static_cast<int64_t>(x.shape.size())) return false;
  int64_t len = 1;
  for (size_t d = static_cast<size_t>(axis); d < x.shape.size(); ++d) len *= x.shape[d];
  // Scale, B: broadcastable to the normalised shape (infer), so D values are one per element.
  for (size_t i = 1; i < 3; ++i) {
    if (i == 2 && (n.inputs.size() < 3 || n.inputs[2] < 0)) continue;
    const Tensor& t = g.tensor(n.inputs[i]);
    if (!is_f32(&t) || (t.numel() != len && t.numel() != 1)) return false;
  }
  return true;
}

inline __mmask16 tail_mask(int64_t count) { return count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1); }

struct Affine {
  const float *scale, *bias;  // bias null: absent
  bool scale_full, bias_full;  // one value per element, else one for all
};

__attribute__((target("avx512f"))) void normalize_row(const float* x, float* y, int64_t len, float epsilon,
                                                      const Affine& a, bool round_fp16) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= len; i += 32) {
    s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + i));
    s1 = _mm512_add_ps(s1, _mm512_loadu_ps(x + i + 16));
  }
  for (; i < len; i += 16) s0 = _mm512_add_ps(s0, _mm512_maskz_loadu_ps(tail_mask(len - i), x + i));
  const float n = static_cast<float>(len);
  const float mean = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) / n;
  const __m512 vmean = _mm512_set1_ps(mean);
  s0 = s1 = _mm512_setzero_ps();
  for (i = 0; i + 32 <= len; i += 32) {
    const __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(x + i), vmean);
    const __m512 d1 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vmean);
    s0 = _mm512_fmadd_ps(d0, d0, s0);
    s1 = _mm512_fmadd_ps(d1, d1, s1);
  }
  for (; i < len; i += 16) {
    const __mmask16 m = tail_mask(len - i);
    const __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + i), vmean);
    s0 = _mm512_fmadd_ps(d, d, s0);
  }
  const float var = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) / n;
  const __m512 inv_std = _mm512_set1_ps(1.f / std::sqrt(var + epsilon));
  const __m512 scale1 = _mm512_set1_ps(a.scale[0]);
  const __m512 bias1 = _mm512_set1_ps(a.bias ? a.bias[0] : 0.f);
  for (i = 0; i < len; i += 16) {
    const __mmask16 m = tail_mask(len - i);
    const __m512 s = a.scale_full ? _mm512_maskz_loadu_ps(m, a.scale + i) : scale1;
    const __m512 b = a.bias_full ? _mm512_maskz_loadu_ps(m, a.bias + i) : bias1;
    __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmean), inv_std);
    v = _mm512_add_ps(_mm512_mul_ps(v, s), b);
    if (round_fp16) v = round_to_fp16_lanes(v);
    _mm512_mask_storeu_ps(y + i, m, v);
  }
}

// InstanceNormalization: x [N, C, spatial...], scale and B [C].
bool supports_instancenorm_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  if (n.inputs.size() != 3 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.inputs[1] < 0 || n.inputs[2] < 0)
    return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  if (!is_f32(&x) || !is_f32(&g.tensor(n.outputs[0])) || x.shape.size() < 3 || x.numel() <= 0) return false;
  return is_f32(&g.tensor(n.inputs[1])) && is_f32(&g.tensor(n.inputs[2])) &&
         g.tensor(n.inputs[1]).numel() == x.shape[1] && g.tensor(n.inputs[2]).numel() == x.shape[1];
}

class InstanceNormF32Avx512 : public Kernel {
 public:
  bool rounds_fp16_outputs() const override { return true; }
  Status prepare(const KernelContext& ctx) override {
    p_ = channel_planes(ctx.in_tensor(0).shape);
    epsilon_ = ctx.node->attrs.get_float("epsilon", 1e-5f);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int64_t planes = p_.batch * p_.channels, len = p_.plane;
    const int nt = threads_for(planes * len, kMinPassElementsPerThread, ctx.num_threads);
    parallel_ranges(planes, nt, [&](int64_t p0, int64_t p1, int) {
      for (int64_t p = p0; p < p1; ++p) {  // plane p: channel p % C
        const Affine a{ctx.in<float>(1) + p % p_.channels, ctx.in<float>(2) + p % p_.channels, false, false};
        normalize_row(ctx.in<float>(0) + p * len, ctx.out<float>(0) + p * len, len, epsilon_, a, ctx.round_fp16);
      }
    });
  }

 private:
  ChannelPlanes p_;
  float epsilon_ = 1e-5f;
};

class LayerNormF32Avx512 : public Kernel {
 public:
  bool rounds_fp16_outputs() const override { return true; }
  Status prepare(const KernelContext& ctx) override {
    const Shape& x = ctx.in_tensor(0).shape;
    const size_t axis = static_cast<size_t>(ctx.node->attrs.get_int("axis", -1));
    len_ = 1;
    for (size_t d = axis; d < x.size(); ++d) len_ *= x[d];
    groups_ = ctx.in_tensor(0).numel() / len_;
    epsilon_ = ctx.node->attrs.get_float("epsilon", 1e-5f);
    has_bias_ = ctx.has_input(2);
    scale_full_ = ctx.in_tensor(1).numel() == len_;
    bias_full_ = has_bias_ && ctx.in_tensor(2).numel() == len_;
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const Affine a{ctx.in<float>(1), has_bias_ ? ctx.in<float>(2) : nullptr, scale_full_, bias_full_};
    const int nt = threads_for(groups_ * len_, kMinPassElementsPerThread, ctx.num_threads);
    parallel_ranges(groups_, nt, [&](int64_t g0, int64_t g1, int) {
      for (int64_t gi = g0; gi < g1; ++gi)
        normalize_row(x + gi * len_, y + gi * len_, len_, epsilon_, a, ctx.round_fp16);
    });
  }

 private:
  int64_t groups_ = 0, len_ = 1;
  float epsilon_ = 1e-5f;
  bool has_bias_ = false, scale_full_ = false, bias_full_ = false;
};

}  // namespace

ORKNN_REGISTER_KERNEL(LayerNormalization, "x86_layernorm_f32", kPriorityGeneral, supports_layernorm_f32,
                      LayerNormF32Avx512);
ORKNN_REGISTER_KERNEL(InstanceNormalization, "x86_layernorm_f32", kPriorityGeneral, supports_instancenorm_f32,
                      InstanceNormF32Avx512);

}  // namespace orknn
