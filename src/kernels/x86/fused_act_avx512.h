// The epilogue of the hand-written AVX-512 float kernels (depthwise, deconvolution 2x2, gemv) on 16
// lanes: the fused activations of kernels/ref/activation.h with the reference's operations and
// comparisons in its order (bit-identical to apply_fused_act, but for Sigmoid and Silu, whose e^x
// is exp_avx512's: within 8 float ulps), and the fp16 rounding of fp16 mode. The Sigmoid and
// element-wise kernels (elementwise_avx512.cc) and the recurrent ones (recurrent_avx512.cc) use the
// same e^x, sigmoid and tanh.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "kernels/ref/activation.h"

namespace orknn {

// e^t for t clamped to [-104, 104]: t = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two parts so
// n ln2 is exact enough), e^r by its degree-6 Taylor polynomial (truncation below 1.2e-7
// relative), then scaled by 2^n with scalef, which gives +inf past FLT_MAX and 0/denormals below,
// as std::exp does. NaN propagates through every step.
__attribute__((target("avx512f"))) inline __m512 exp_avx512(__m512 t) {
  t = _mm512_min_ps(_mm512_set1_ps(104.f), t);  // (NaN in the second operand is returned)
  t = _mm512_max_ps(_mm512_set1_ps(-104.f), t);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), t);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.f / 720.f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 120.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 24.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 6.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  return _mm512_scalef_ps(p, n);
}

// 1 / (1 + e^-v) on 16 lanes.
__attribute__((target("avx512f"))) inline __m512 sigmoid_lanes(__m512 v) {
  const __m512 one = _mm512_set1_ps(1.f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), v))));
}

// c[0] t^(n-1) + ... + c[n-1] on 16 lanes (Horner's scheme with fused multiply-adds).
__attribute__((target("avx512f"))) inline __m512 horner(__m512 t, const float* c, int n) {
  __m512 p = _mm512_set1_ps(c[0]);
  for (int i = 1; i < n; ++i) p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(c[i]));
  return p;
}

// tanh on 16 lanes (x86_tanh_f32, the recurrent kernels' gates): for |x| < 0.625, x + x^3 P(x^2),
// P of degree 5 (a weighted least-squares fit of (tanh(x) - x) / x^3 on Chebyshev nodes, float
// coefficients: within 0.8 float ulp of tanh there); for |x| >= 0.625, sign(x) (1 - 2 / (e^(2|x|) + 1))
// with exp_avx512 (1 past |x| = 9, +-1 for +-inf). Within 3 float ulps of std::tanh
// (tests/ops/norm_gelu_x86_test.cc); computed on |x|, the sign put back last, so odd by construction
// (tanh(-0) = -0); NaN propagates (the first branch).
constexpr float kTanhSmall[6] = {2.148984e-03f, -8.184662e-03f, 2.1704e-02f,
                                 -5.3947452e-02f, 1.3333212e-01f, -3.333333e-01f};
__attribute__((target("avx512f"))) inline __m512 tanh_lanes(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.f);
  const __m512 ax = _mm512_abs_ps(x);
  const __m512 u = _mm512_mul_ps(ax, ax);
  __m512 t = _mm512_fmadd_ps(_mm512_mul_ps(ax, u), horner(u, kTanhSmall, 6), ax);
  const __mmask16 large = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.625f), _CMP_GE_OQ);  // false for NaN
  if (large) {
    const __m512 e = exp_avx512(_mm512_add_ps(ax, ax));
    t = _mm512_mask_sub_ps(t, large, one, _mm512_div_ps(_mm512_set1_ps(2.f), _mm512_add_ps(e, one)));
  }
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(t), sign));
}

struct ActVec {
  FusedAct act = FusedAct::kNone;
  float alpha = 0.f, beta = 0.f;
};

// The node's fused activation (its attributes), for apply_act.
inline ActVec read_act_vec(const Attrs& attrs) {
  const FusedActivation f = read_fused_act(attrs);
  return ActVec{f.act, f.alpha, f.beta};
}

// The activation kA (a's parameters) on 16 lanes. vmaxps / vminps return their second operand
// when either operand is NaN or both are zeros (of either sign), which is what the reference's
// comparisons select in those cases too: max(lo, x) is `x < lo ? lo : x`, min(hi, t) is
// `t > hi ? hi : t`, and max(x, 0) is `x > 0 ? x : 0`.
template <FusedAct kA>
__attribute__((target("avx512f"), always_inline)) inline __m512 apply_act_kind(__m512 x, const ActVec& a) {
  const __m512 zero = _mm512_setzero_ps();
  const __m512 one = _mm512_set1_ps(1.f);
  if constexpr (kA == FusedAct::kRelu) {  // x > 0 ? x : 0 (NaN and -0 give +0)
    return _mm512_max_ps(x, zero);
  } else if constexpr (kA == FusedAct::kClip) {  // t = x < alpha ? alpha : x; t > beta ? beta : t
    return _mm512_min_ps(_mm512_set1_ps(a.beta), _mm512_max_ps(_mm512_set1_ps(a.alpha), x));
  } else if constexpr (kA == FusedAct::kLeakyRelu) {  // x >= 0 ? x : x * alpha
    const __m512 neg = _mm512_mul_ps(x, _mm512_set1_ps(a.alpha));
    return _mm512_mask_mov_ps(neg, _mm512_cmp_ps_mask(x, zero, _CMP_GE_OQ), x);
  } else if constexpr (kA == FusedAct::kHardSwish) {  // t = x / 6 + 0.5; t = t < 0 ? 0 : (t > 1 ? 1 : t); x * t
    const __m512 t = _mm512_add_ps(_mm512_div_ps(x, _mm512_set1_ps(6.f)), _mm512_set1_ps(0.5f));
    return _mm512_mul_ps(x, _mm512_min_ps(one, _mm512_max_ps(zero, t)));
  } else if constexpr (kA == FusedAct::kHardSigmoid) {  // t = alpha * x + beta; t < 0 ? 0 : (t > 1 ? 1 : t)
    const __m512 t = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(a.alpha), x), _mm512_set1_ps(a.beta));
    return _mm512_min_ps(one, _mm512_max_ps(zero, t));
  } else if constexpr (kA == FusedAct::kSigmoid) {
    return sigmoid_lanes(x);
  } else if constexpr (kA == FusedAct::kSilu) {
    return _mm512_mul_ps(x, sigmoid_lanes(x));
  } else {
    return x;
  }
}

__attribute__((target("avx512f"))) inline __m512 apply_act(__m512 x, const ActVec& a) {
  switch (a.act) {
    case FusedAct::kNone: return x;
    case FusedAct::kRelu: return apply_act_kind<FusedAct::kRelu>(x, a);
    case FusedAct::kClip: return apply_act_kind<FusedAct::kClip>(x, a);
    case FusedAct::kLeakyRelu: return apply_act_kind<FusedAct::kLeakyRelu>(x, a);
    case FusedAct::kHardSwish: return apply_act_kind<FusedAct::kHardSwish>(x, a);
    case FusedAct::kHardSigmoid: return apply_act_kind<FusedAct::kHardSigmoid>(x, a);
    case FusedAct::kSigmoid: return apply_act_kind<FusedAct::kSigmoid>(x, a);
    case FusedAct::kSilu: return apply_act_kind<FusedAct::kSilu>(x, a);
  }
  return x;
}

// The fused activation as a type, for loops whose epilogue must not switch on it per vector (with
// the switch inside, GCC 12 spilled the loops' registers: docs/kernels.md, "Float on nChw16c"):
// ActKind<kA> applies kA, ActAny the run-time switch.
template <FusedAct kA>
struct ActKind {
  __attribute__((target("avx512f"), always_inline)) static __m512 apply(__m512 x, const ActVec& a) {
    return apply_act_kind<kA>(x, a);
  }
};
struct ActAny {
  __attribute__((target("avx512f"), always_inline)) static __m512 apply(__m512 x, const ActVec& a) {
    return apply_act(x, a);
  }
};

// f(ActKind<act>{}) for the common activations of the float networks (none, Relu, Clip,
// HardSwish), else f(ActAny{}): one instantiation of f per type.
template <class F>
inline void with_act_type(FusedAct act, F&& f) {
  switch (act) {
    case FusedAct::kNone: return f(ActKind<FusedAct::kNone>{});
    case FusedAct::kRelu: return f(ActKind<FusedAct::kRelu>{});
    case FusedAct::kClip: return f(ActKind<FusedAct::kClip>{});
    case FusedAct::kHardSwish: return f(ActKind<FusedAct::kHardSwish>{});
    default: return f(ActAny{});
  }
}

// fp16 mode (KernelContext::round_fp16): the value as the nearest fp16, ties to even, the
// conversion round_to_fp16 (common/fp16.h) makes.
__attribute__((target("avx512f"))) inline __m512 round_to_fp16_lanes(__m512 x) {
  return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}

// In place over y[begin, end): the activation, then the fp16 rounding when round_fp16. The pass
// of the oneDNN convolutions whose Sigmoid/SiLU oneDNN would compute slowly (onednn/conv.cc).
__attribute__((target("avx512f"))) inline void act_round_range(float* y, int64_t begin, int64_t end, const ActVec& a,
                                                               bool round_fp16) {
  for (int64_t i = begin; i < end; i += 16) {
    const __mmask16 m = end - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (end - i)) - 1);
    __m512 v = apply_act(_mm512_maskz_loadu_ps(m, y + i), a);
    if (round_fp16) v = round_to_fp16_lanes(v);
    _mm512_mask_storeu_ps(y + i, m, v);
  }
}

}  // namespace orknn
