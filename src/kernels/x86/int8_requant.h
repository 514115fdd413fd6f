// Vectorised pieces around the oneDNN INT8 kernels (src/kernels/onednn/conv_int8.cc,
// matmul_int8.cc): the sign flip of int8 activations to oneDNN's preferred u8 input (with the NCHW
// -> channels-last transpose for convolutions), and the requantization of oneDNN's int32
// accumulators to int8 exactly as docs/numerics.md specifies it (the scalar form is requantize()
// in kernels/quant_util.h).
//
// Each function exists as AVX-512 (F+BW+VL) and AVX2 code, compiled with target attributes (the
// project is built for baseline x86-64) and chosen at run time from the CPU. Results are
// identical on every path, including the scalar tails: the same float32 operations in the same
// order. Functions are single-threaded; callers split the work.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "kernels/ref/int8_compute.h"

namespace orknn::x86 {

enum class Int8Isa { kNone = 0, kAvx2 = 1, kAvx512 = 2 };

// The best path this CPU runs (kNone: neither AVX2 nor AVX-512BW, the functions must not be used).
Int8Isa int8_best_isa();
// The path the functions below take: int8_best_isa() unless overridden (tests run every path the
// CPU can execute). Setting a path the CPU lacks, or kNone, restores the automatic choice.
Int8Isa int8_active_isa();
void int8_set_isa_override(Int8Isa isa);

// Requantization of one output channel range (docs/numerics.md, "Requantization"):
//   t = acc + comp[c]                      int32, two's complement wrap-around (the caller's
//                                          compensation keeps the true sum inside int32)
//   y = sat8(rne(float(t) * mult[c]) + zp)
//   y = min(max(y, lo), hi)                fused Relu/Clip bounds in the int8 domain
//                                          (lo = -128, hi = 127 without activation)
// With a fused value activation (act LeakyRelu, HardSwish or HardSigmoid; kernels/ref/int8_compute.h):
//   y = sat8(rne(int8_value_act(float(t) * mult[c]) * inv_s_y) + zp)   mult[c] = s_x * s_w[c], lo/hi -128/127
struct RequantParams {
  const int32_t* comp = nullptr;  // per channel: bias_q[c] - zp_u8 * sum(w[c]) (see the kernels)
  const float* mult = nullptr;    // per channel: M[c] = (s_x * s_w[c]) / s_y (s_x * s_w[c] with act)
  int32_t zp = 0;                 // zp_y
  int32_t lo = -128, hi = 127;
  FusedAct act = FusedAct::kNone;  // a value activation, or kNone
  float alpha = 0.f, beta = 0.f;   // its parameters (LeakyRelu: alpha; HardSigmoid: alpha, beta)
  float inv_s_y = 1.f;             // with act: 1 / s_y
};

// The compensation every u8 x s8 kernel adds to its accumulators: activations enter the products as
// u8 (x + 128), so bias_q - (zp_x + 128) * sum(w) turns sum(u8 * w) into the exact accumulator
// sum((x - zp_x) * w) + bias_q. Taken modulo 2^32, as the int32 sums wrap (the true value fits).
inline int32_t u8_compensation(int32_t bias_q, int64_t weight_sum, int32_t zp_x) {
  const int64_t v = static_cast<int64_t>(bias_q) - (static_cast<int64_t>(zp_x) + 128) * weight_sum;
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

// Scalar requantization of one accumulator, the definition the vector paths reproduce.
int8_t requant_one(int32_t acc, int32_t comp, float mult, const RequantParams& p);

// requant_one on 16 accumulators with the output bounds applied in float, for the hand-written
// VNNI kernels: float(acc + comp) * mult (no FMA), clamped to [lo, hi] = [p.lo - zp, p.hi - zp],
// rounded half to even (vcvtps2dq, default MXCSR), + zp; int32 lanes in [-128, 127]. Equal to
// requant_one: the bounds are integers, so clamping before rounding to nearest is clamping after,
// and they lie inside its [-512, 512] and sat8 ranges.
// A fused value activation on 16 lanes (RequantParams' act, alpha, beta, inv_s_y; kNone: none).
struct ValueAct16 {
  FusedAct act = FusedAct::kNone;
  __m512 alpha, beta, inv_s_y;
};
__attribute__((target("avx512f"), always_inline)) inline ValueAct16 value_act16_of(FusedAct act, float alpha,
                                                                                  float beta, float inv_s_y) {
  return {act, _mm512_set1_ps(alpha), _mm512_set1_ps(beta), _mm512_set1_ps(inv_s_y)};
}

// int8_value_act (kernels/ref/int8_compute.h), then * inv_s_y: the same float32 operations in the
// same order. The clamps' max/min equal the scalar comparisons (the values are finite: the
// accumulator and the multipliers are).
__attribute__((target("avx512f"), always_inline)) inline __m512 value_act16(__m512 v, const ValueAct16& a) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.f);
  __m512 r = v;
  switch (a.act) {
    case FusedAct::kLeakyRelu: r = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, a.alpha); break;
    case FusedAct::kHardSwish: {
      const __m512 t = _mm512_add_ps(_mm512_mul_ps(v, _mm512_set1_ps(1.f / 6.f)), _mm512_set1_ps(0.5f));
      r = _mm512_mul_ps(v, _mm512_min_ps(_mm512_max_ps(t, zero), one));
      break;
    }
    case FusedAct::kHardSigmoid:
      r = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(_mm512_mul_ps(a.alpha, v), a.beta), zero), one);
      break;
    default: break;
  }
  return _mm512_mul_ps(r, a.inv_s_y);
}

// With `act` (a value activation), the activation and * inv_s_y come between the product and the
// clamp, as in requant_one (the bounds are then -128 - zp and 127 - zp: sat8).
__attribute__((target("avx512f"), always_inline)) inline __m512i requant16_float_bounds(
    __m512i acc, __m512i comp, __m512 mult, __m512 lo, __m512 hi, __m512i zp, const ValueAct16* act = nullptr) {
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc, comp)), mult);
  if (act && act->act != FusedAct::kNone) f = value_act16(f, *act);
  return _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(f, lo), hi)), zp);
}

// acc: `rows` rows of `channels` int32 (row stride acc_ld elements) -> out: same layout in int8
// (row stride out_ld). Channel c uses comp[c], mult[c]. (Gemm/MatMul: rows = M, channels = N.)
void requant_rows(const int32_t* acc, int64_t rows, int64_t channels, int64_t acc_ld, int8_t* out,
                  int64_t out_ld, const RequantParams& p);

// acc: `pixels` rows of `channels` int32 (channels-last, row stride acc_ld) -> out: channel-major
// int8, out[c * out_cs + pixel]. (Convolution: channels-last accumulators to NCHW output.)
void requant_to_planar(const int32_t* acc, int64_t pixels, int64_t channels, int64_t acc_ld, int8_t* out,
                       int64_t out_cs, const RequantParams& p);

// in: channel-major int8, in[c * in_cs + pixel] -> out: channels-last u8 = in ^ 0x80 (x + 128),
// out[pixel * out_ps + c]. (Convolution input: NCHW rows into the padded NHWC buffer.)
void planar_to_u8_channels_last(const int8_t* in, int64_t channels, int64_t pixels, int64_t in_cs, uint8_t* out,
                                int64_t out_ps);

// out[i] = in[i] ^ 0x80 (int8 x -> u8 x + 128).
void int8_to_u8(const int8_t* in, int64_t n, uint8_t* out);

// The sums of the positive values of w[0..n) and of the negative values' magnitudes (the weight
// sums and worst-case accumulators of the u8 x s8 kernels, computed for every quantized weight at
// each rknn_init). Exact on every path.
void int8_sign_sums(const int8_t* w, int64_t n, int64_t* pos, int64_t* neg);

}  // namespace orknn::x86
