// See int8_requant.h. Three paths with identical results: AVX-512 (F+BW+VL), AVX2, and scalar
// (tails, other CPUs and non-x86 builds).
//
// Why the vector form equals the scalar definition (requant_one, i.e. quant_util.h's
// rne_add_zp_sat8 followed by the activation clamp):
//   * int32 -> float32 conversion (vcvtdq2ps / cvtsi2ss) and the product use the same IEEE
//     float32 round-to-nearest-even (MXCSR default, never changed in this project); no FMA.
//   * rne_add_zp_sat8 clamps v to [-512, 512] before rounding; the vector code does the same with
//     min/max (NaN cannot occur: the accumulator is finite and M is finite).
//   * rounding: vcvtps2dq rounds to nearest even under the default MXCSR, as std::nearbyint does.
//   * sat8 then max(lo) then min(hi) equals max(lo) then min(hi) when -128 <= lo and hi <= 127.
#include "kernels/x86/int8_requant.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "kernels/quant_util.h"

#if defined(__x86_64__) || defined(_M_X64)
#define ORKNN_INT8_X86 1
#include <immintrin.h>
// GCC 12 reports its own AVX-512 intrinsics headers (the _mm512_undefined_* placeholders behind
// the masked loads) as "maybe uninitialized": a known false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace orknn::x86 {

int8_t requant_one(int32_t acc, int32_t comp, float mult, const RequantParams& p) {
  // Wrap-around sum: the caller's compensation makes the true value fit, the parts need not.
  const int32_t t = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(comp));
  const float v = static_cast<float>(t) * mult;
  int32_t y = p.act == FusedAct::kNone ? rne_add_zp_sat8(v, p.zp)
                                       : rne_add_zp_sat8(int8_value_act(v, p.act, p.alpha, p.beta) * p.inv_s_y, p.zp);
  y = y < p.lo ? p.lo : y;
  y = y > p.hi ? p.hi : y;
  return static_cast<int8_t>(y);
}

namespace {

// ------------------------------------------------------------------------------------ scalar

void requant_rows_scalar(const int32_t* acc, int64_t rows, int64_t channels, int64_t acc_ld, int8_t* out,
                         int64_t out_ld, const RequantParams& p) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c)
      out[r * out_ld + c] = requant_one(acc[r * acc_ld + c], p.comp[c], p.mult[c], p);
}

// Pixels [p_begin, p_end) of requant_to_planar.
void requant_to_planar_scalar(const int32_t* acc, int64_t p_begin, int64_t p_end, int64_t channels, int64_t acc_ld,
                              int8_t* out, int64_t out_cs, const RequantParams& p) {
  for (int64_t px = p_begin; px < p_end; ++px)
    for (int64_t c = 0; c < channels; ++c)
      out[c * out_cs + px] = requant_one(acc[px * acc_ld + c], p.comp[c], p.mult[c], p);
}

// Channels [c_begin, c_end) x pixels [p_begin, p_end) of planar_to_u8_channels_last.
void planar_to_u8_scalar(const int8_t* in, int64_t c_begin, int64_t c_end, int64_t p_begin, int64_t p_end,
                         int64_t in_cs, uint8_t* out, int64_t out_ps) {
  for (int64_t px = p_begin; px < p_end; ++px)
    for (int64_t c = c_begin; c < c_end; ++c)
      out[px * out_ps + c] = static_cast<uint8_t>(static_cast<uint8_t>(in[c * in_cs + px]) ^ 0x80u);
}

void int8_sign_sums_scalar(const int8_t* w, int64_t n, int64_t* pos, int64_t* neg) {
  // int32 partial sums over chunks that cannot overflow them (128 * 2^16 < 2^31); max/min instead
  // of a branch, so the compiler vectorises the loop.
  constexpr int64_t kChunk = int64_t{1} << 16;
  int64_t p = 0, q = 0;
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    int32_t a = 0, b = 0;
    for (int64_t i = i0; i < std::min(n, i0 + kChunk); ++i) {
      const int32_t v = w[i];
      a += std::max(v, 0);
      b -= std::min(v, 0);
    }
    p += a;
    q += b;
  }
  *pos = p;
  *neg = q;
}

void int8_to_u8_scalar(const int8_t* in, int64_t n, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(static_cast<uint8_t>(in[i]) ^ 0x80u);
}

#if ORKNN_INT8_X86

// 16x16 byte transpose of r[0..15] in place: afterwards r[j] byte i = before r[i] byte j.
// Four interleave stages: bytes of row pairs, then 16-bit units of pair pairs, 32-bit units
// (row quads), 64-bit units (row octets). SSE2 only, so it inlines into both target paths.
static inline __attribute__((always_inline)) void transpose_16x16_u8(__m128i r[16]) {
  __m128i s[16], u[16], v[16];
#pragma GCC unroll 16
  for (int k = 0; k < 8; ++k) {  // s[k]: columns 0-7, s[k+8]: columns 8-15 of rows 2k, 2k+1
    s[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
    s[k + 8] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
  }
#pragma GCC unroll 16
  for (int h = 0; h < 2; ++h) {  // u[4q + m]: column quad q, rows 4m..4m+3
  #pragma GCC unroll 16
    for (int m = 0; m < 4; ++m) {
      u[h * 8 + m] = _mm_unpacklo_epi16(s[h * 8 + 2 * m], s[h * 8 + 2 * m + 1]);
      u[h * 8 + 4 + m] = _mm_unpackhi_epi16(s[h * 8 + 2 * m], s[h * 8 + 2 * m + 1]);
    }
  }
#pragma GCC unroll 16
  for (int q = 0; q < 4; ++q) {  // v: column pairs of quad q, rows 0-7 (v0, v1) and 8-15 (v2, v3)
    v[q * 4 + 0] = _mm_unpacklo_epi32(u[q * 4 + 0], u[q * 4 + 1]);
    v[q * 4 + 1] = _mm_unpackhi_epi32(u[q * 4 + 0], u[q * 4 + 1]);
    v[q * 4 + 2] = _mm_unpacklo_epi32(u[q * 4 + 2], u[q * 4 + 3]);
    v[q * 4 + 3] = _mm_unpackhi_epi32(u[q * 4 + 2], u[q * 4 + 3]);
  }
#pragma GCC unroll 16
  for (int q = 0; q < 4; ++q) {
    r[q * 4 + 0] = _mm_unpacklo_epi64(v[q * 4 + 0], v[q * 4 + 2]);
    r[q * 4 + 1] = _mm_unpackhi_epi64(v[q * 4 + 0], v[q * 4 + 2]);
    r[q * 4 + 2] = _mm_unpacklo_epi64(v[q * 4 + 1], v[q * 4 + 3]);
    r[q * 4 + 3] = _mm_unpackhi_epi64(v[q * 4 + 1], v[q * 4 + 3]);
  }
}

// Channels [c_begin, c_end) x pixels [0, pixels) of planar_to_u8_channels_last: full 16x16 tiles
// transposed with SSE, the rest scalar. Shared by both target paths (SSE2 encoded as VEX there).
static inline __attribute__((always_inline)) void planar_to_u8_tiles(const int8_t* in, int64_t channels,
                                                                     int64_t pixels, int64_t in_cs, uint8_t* out,
                                                                     int64_t out_ps) {
  const int64_t c_full = channels / 16 * 16, p_full = pixels / 16 * 16;
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  __m128i r[16];
  for (int64_t p0 = 0; p0 < p_full; p0 += 16) {
    for (int64_t c0 = 0; c0 < c_full; c0 += 16) {
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + (c0 + i) * in_cs + p0)), flip);
      transpose_16x16_u8(r);
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (p0 + j) * out_ps + c0), r[j]);
    }
  }
  planar_to_u8_scalar(in, c_full, channels, 0, p_full, in_cs, out, out_ps);
  planar_to_u8_scalar(in, 0, channels, p_full, pixels, in_cs, out, out_ps);
}

// ------------------------------------------------------------------------------------ AVX-512

#define ORKNN_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

// 64 weights at a time: max(w, 0) and 0 - min(w, 0) are bytes in [0, 128], summed exactly by
// vpsadbw into 64-bit lanes.
ORKNN_AVX512 void int8_sign_sums_avx512(const int8_t* w, int64_t n, int64_t* pos, int64_t* neg) {
  const __m512i z = _mm512_setzero_si512();
  __m512i sp = z, sn = z;
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 m = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    const __m512i v = _mm512_maskz_loadu_epi8(m, w + i);
    sp = _mm512_add_epi64(sp, _mm512_sad_epu8(_mm512_max_epi8(v, z), z));
    sn = _mm512_add_epi64(sn, _mm512_sad_epu8(_mm512_sub_epi8(z, _mm512_min_epi8(v, z)), z));
  }
  // Lane sums through memory (GCC 12's _mm512_reduce_add_epi64 trips its own -Wuninitialized).
  alignas(64) int64_t lp[8], ln[8];
  _mm512_store_si512(lp, sp);
  _mm512_store_si512(ln, sn);
  *pos = 0;
  *neg = 0;
  for (int i = 0; i < 8; ++i) *pos += lp[i], *neg += ln[i];
}

struct Avx512Consts {
  __m512i zp, lo, hi;
  __m512 vmin, vmax;
  ValueAct16 act;
};

ORKNN_AVX512 static inline Avx512Consts avx512_consts(const RequantParams& p) {
  return {_mm512_set1_epi32(p.zp), _mm512_set1_epi32(p.lo), _mm512_set1_epi32(p.hi), _mm512_set1_ps(-512.f),
          _mm512_set1_ps(512.f),   value_act16_of(p.act, p.alpha, p.beta, p.inv_s_y)};
}

// Requantizes the channels of `k` of one accumulator row (`a` at the first channel of the block;
// comp and mult are that block's compensation and multipliers) to 16 int8 lanes.
ORKNN_AVX512 static inline __m128i avx512_requant16(const int32_t* a, __mmask16 k, __m512i comp, __m512 mult,
                                                    const Avx512Consts& q) {
  __m512i t = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, a), comp);
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(t), mult);
  if (q.act.act != FusedAct::kNone) f = value_act16(f, q.act);
  f = _mm512_min_ps(_mm512_max_ps(f, q.vmin), q.vmax);
  __m512i y = _mm512_add_epi32(_mm512_cvtps_epi32(f), q.zp);
  y = _mm512_min_epi32(_mm512_max_epi32(y, q.lo), q.hi);
  return _mm512_cvtepi32_epi8(y);  // in [-128, 127]: truncation is exact
}

ORKNN_AVX512 static inline __mmask16 lanes_mask(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

ORKNN_AVX512 void requant_rows_avx512(const int32_t* acc, int64_t rows, int64_t channels, int64_t acc_ld, int8_t* out,
                                      int64_t out_ld, const RequantParams& p) {
  const Avx512Consts q = avx512_consts(p);
  for (int64_t c0 = 0; c0 < channels; c0 += 16) {
    const __mmask16 k = lanes_mask(channels - c0);
    const __m512i comp = _mm512_maskz_loadu_epi32(k, p.comp + c0);
    const __m512 mult = _mm512_maskz_loadu_ps(k, p.mult + c0);
    for (int64_t r = 0; r < rows; ++r)
      _mm_mask_storeu_epi8(out + r * out_ld + c0, k, avx512_requant16(acc + r * acc_ld + c0, k, comp, mult, q));
  }
}

ORKNN_AVX512 void requant_to_planar_avx512(const int32_t* acc, int64_t pixels, int64_t channels, int64_t acc_ld,
                                           int8_t* out, int64_t out_cs, const RequantParams& p) {
  const Avx512Consts q = avx512_consts(p);
  __m128i r[16];
  for (int64_t p0 = 0; p0 < pixels; p0 += 16) {
    const int64_t np = std::min<int64_t>(16, pixels - p0);
    const __mmask16 pk = lanes_mask(np);
    for (int64_t c0 = 0; c0 < channels; c0 += 16) {
      const int64_t nc = std::min<int64_t>(16, channels - c0);
      const __mmask16 ck = lanes_mask(nc);
      const __m512i comp = _mm512_maskz_loadu_epi32(ck, p.comp + c0);
      const __m512 mult = _mm512_maskz_loadu_ps(ck, p.mult + c0);
      const int32_t* a = acc + p0 * acc_ld + c0;
      if (np == 16) {
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) r[i] = avx512_requant16(a + i * acc_ld, ck, comp, mult, q);
      } else {
        for (int i = 0; i < 16; ++i)
          r[i] = i < np ? avx512_requant16(a + i * acc_ld, ck, comp, mult, q) : _mm_setzero_si128();
      }
      transpose_16x16_u8(r);
      int8_t* o = out + c0 * out_cs + p0;
      if (np == 16 && nc == 16) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(o + j * out_cs), r[j]);
      } else {
        for (int64_t j = 0; j < nc; ++j) _mm_mask_storeu_epi8(o + j * out_cs, pk, r[j]);
      }
    }
  }
}

// Like planar_to_u8_tiles, with the partial tiles done by masked loads and stores.
ORKNN_AVX512 void planar_to_u8_avx512(const int8_t* in, int64_t channels, int64_t pixels, int64_t in_cs,
                                      uint8_t* out, int64_t out_ps) {
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  __m128i r[16];
  for (int64_t p0 = 0; p0 < pixels; p0 += 16) {
    const int64_t np = std::min<int64_t>(16, pixels - p0);
    const __mmask16 pk = lanes_mask(np);
    for (int64_t c0 = 0; c0 < channels; c0 += 16) {
      const int64_t nc = std::min<int64_t>(16, channels - c0);
      const int8_t* a = in + c0 * in_cs + p0;
      uint8_t* o = out + p0 * out_ps + c0;
      if (np == 16 && nc == 16) {
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i)
          r[i] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i * in_cs)), flip);
        transpose_16x16_u8(r);
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(o + j * out_ps), r[j]);
      } else {
        for (int i = 0; i < 16; ++i)
          r[i] = i < nc ? _mm_xor_si128(_mm_maskz_loadu_epi8(pk, a + i * in_cs), flip) : _mm_setzero_si128();
        transpose_16x16_u8(r);
        const __mmask16 ck = lanes_mask(nc);
        for (int64_t j = 0; j < np; ++j) _mm_mask_storeu_epi8(o + j * out_ps, ck, r[j]);
      }
    }
  }
}

ORKNN_AVX512 void int8_to_u8_avx512(const int8_t* in, int64_t n, uint8_t* out) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512(out + i, _mm512_xor_si512(_mm512_loadu_si512(in + i), flip));
  if (i < n) {
    const __mmask64 k = (~__mmask64{0}) >> (64 - (n - i));
    _mm512_mask_storeu_epi8(out + i, k, _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, in + i), flip));
  }
}

// ------------------------------------------------------------------------------------ AVX2

#define ORKNN_AVX2 __attribute__((target("avx2")))

struct Avx2Consts {
  __m256i zp, lo, hi, lane;
  __m256 vmin, vmax;
  FusedAct act;
  __m256 alpha, beta, inv_s_y;
};

ORKNN_AVX2 static inline Avx2Consts avx2_consts(const RequantParams& p) {
  return {_mm256_set1_epi32(p.zp),    _mm256_set1_epi32(p.lo),  _mm256_set1_epi32(p.hi),
          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_ps(-512.f), _mm256_set1_ps(512.f),
          p.act, _mm256_set1_ps(p.alpha), _mm256_set1_ps(p.beta), _mm256_set1_ps(p.inv_s_y)};
}

// value_act16 (int8_requant.h) on 8 lanes.
ORKNN_AVX2 static inline __m256 avx2_value_act(__m256 v, const Avx2Consts& q) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.f);
  __m256 a = v;
  switch (q.act) {
    case FusedAct::kLeakyRelu:
      a = _mm256_blendv_ps(v, _mm256_mul_ps(v, q.alpha), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
      break;
    case FusedAct::kHardSwish: {
      __m256 t = _mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(1.f / 6.f)), _mm256_set1_ps(0.5f));
      t = _mm256_min_ps(_mm256_max_ps(t, zero), one);
      a = _mm256_mul_ps(v, t);
      break;
    }
    case FusedAct::kHardSigmoid: {
      const __m256 t = _mm256_add_ps(_mm256_mul_ps(q.alpha, v), q.beta);
      a = _mm256_min_ps(_mm256_max_ps(t, zero), one);
      break;
    }
    default: break;
  }
  return _mm256_mul_ps(a, q.inv_s_y);
}

// 8 channels from c0 (lanes >= n are loaded as 0 and ignored by the caller).
ORKNN_AVX2 static inline __m256i avx2_requant8(const int32_t* a, int64_t c0, int64_t n, const RequantParams& p,
                                               const Avx2Consts& q) {
  __m256i t, comp;
  __m256 mult;
  if (n >= 8) {
    t = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + c0));
    comp = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.comp + c0));
    mult = _mm256_loadu_ps(p.mult + c0);
  } else {
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n > 0 ? n : 0)), q.lane);
    t = _mm256_maskload_epi32(a + c0, m);
    comp = _mm256_maskload_epi32(p.comp + c0, m);
    mult = _mm256_maskload_ps(p.mult + c0, m);
  }
  __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(t, comp)), mult);
  if (q.act != FusedAct::kNone) f = avx2_value_act(f, q);
  f = _mm256_min_ps(_mm256_max_ps(f, q.vmin), q.vmax);
  __m256i y = _mm256_add_epi32(_mm256_cvtps_epi32(f), q.zp);
  return _mm256_min_epi32(_mm256_max_epi32(y, q.lo), q.hi);
}

// 16 channels from c0 (n of them valid) to 16 int8 lanes.
ORKNN_AVX2 static inline __m128i avx2_requant16(const int32_t* a, int64_t c0, int64_t n, const RequantParams& p,
                                                const Avx2Consts& q) {
  const __m256i y0 = avx2_requant8(a, c0, n, p, q);
  const __m256i y1 = n > 8 ? avx2_requant8(a, c0 + 8, n - 8, p, q) : _mm256_setzero_si256();
  // packs works per 128-bit lane: [y0 0-3, y1 0-3, y0 4-7, y1 4-7]; the permute restores the order.
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(y0, y1), 0xD8);
  return _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
}

ORKNN_AVX2 void requant_rows_avx2(const int32_t* acc, int64_t rows, int64_t channels, int64_t acc_ld, int8_t* out,
                                  int64_t out_ld, const RequantParams& p) {
  const Avx2Consts q = avx2_consts(p);
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * acc_ld;
    int8_t* o = out + r * out_ld;
    int64_t c0 = 0;
    for (; c0 + 16 <= channels; c0 += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + c0), avx2_requant16(a, c0, 16, p, q));
    if (c0 < channels) {
      alignas(16) int8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), avx2_requant16(a, c0, channels - c0, p, q));
      std::memcpy(o + c0, tmp, static_cast<size_t>(channels - c0));
    }
  }
}

ORKNN_AVX2 void requant_to_planar_avx2(const int32_t* acc, int64_t pixels, int64_t channels, int64_t acc_ld,
                                       int8_t* out, int64_t out_cs, const RequantParams& p) {
  const Avx2Consts q = avx2_consts(p);
  __m128i r[16];
  for (int64_t p0 = 0; p0 < pixels; p0 += 16) {
    const int64_t np = std::min<int64_t>(16, pixels - p0);  // a tail of pixels: rows past it are 0
    for (int64_t c0 = 0; c0 < channels; c0 += 16) {
      const int64_t nc = std::min<int64_t>(16, channels - c0);
      for (int i = 0; i < 16; ++i)
        r[i] = i < np ? avx2_requant16(acc + (p0 + i) * acc_ld, c0, nc, p, q) : _mm_setzero_si128();
      transpose_16x16_u8(r);
      for (int64_t j = 0; j < nc; ++j) {
        int8_t* o = out + (c0 + j) * out_cs + p0;
        if (np == 16) {
          _mm_storeu_si128(reinterpret_cast<__m128i*>(o), r[j]);
        } else {
          alignas(16) int8_t tmp[16];
          _mm_store_si128(reinterpret_cast<__m128i*>(tmp), r[j]);
          std::memcpy(o, tmp, static_cast<size_t>(np));
        }
      }
    }
  }
}

ORKNN_AVX2 void planar_to_u8_avx2(const int8_t* in, int64_t channels, int64_t pixels, int64_t in_cs, uint8_t* out,
                                  int64_t out_ps) {
  planar_to_u8_tiles(in, channels, pixels, in_cs, out, out_ps);
}

ORKNN_AVX2 void int8_to_u8_avx2(const int8_t* in, int64_t n, uint8_t* out) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)), flip));
  int8_to_u8_scalar(in + i, n - i, out + i);
}

#endif  // ORKNN_INT8_X86

Int8Isa detect_isa() {
#if ORKNN_INT8_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return Int8Isa::kAvx512;
  if (__builtin_cpu_supports("avx2")) return Int8Isa::kAvx2;
#endif
  return Int8Isa::kNone;
}

std::atomic<int> g_isa_override{static_cast<int>(Int8Isa::kNone)};

}  // namespace

Int8Isa int8_best_isa() {
  static const Int8Isa isa = detect_isa();
  return isa;
}

Int8Isa int8_active_isa() {
  const Int8Isa forced = static_cast<Int8Isa>(g_isa_override.load(std::memory_order_relaxed));
  return forced != Int8Isa::kNone ? forced : int8_best_isa();
}

void int8_set_isa_override(Int8Isa isa) {
  // Only a path this CPU can execute (AVX-512 implies AVX2 here).
  const bool ok = isa != Int8Isa::kNone && static_cast<int>(isa) <= static_cast<int>(int8_best_isa());
  g_isa_override.store(static_cast<int>(ok ? isa : Int8Isa::kNone), std::memory_order_relaxed);
}

void requant_rows(const int32_t* acc, int64_t rows, int64_t channels, int64_t acc_ld, int8_t* out, int64_t out_ld,
                  const RequantParams& p) {
#if ORKNN_INT8_X86
  switch (int8_active_isa()) {
    case Int8Isa::kAvx512: return requant_rows_avx512(acc, rows, channels, acc_ld, out, out_ld, p);
    case Int8Isa::kAvx2: return requant_rows_avx2(acc, rows, channels, acc_ld, out, out_ld, p);
    case Int8Isa::kNone: break;
  }
#endif
  requant_rows_scalar(acc, rows, channels, acc_ld, out, out_ld, p);
}

void requant_to_planar(const int32_t* acc, int64_t pixels, int64_t channels, int64_t acc_ld, int8_t* out,
                       int64_t out_cs, const RequantParams& p) {
#if ORKNN_INT8_X86
  switch (int8_active_isa()) {
    case Int8Isa::kAvx512: return requant_to_planar_avx512(acc, pixels, channels, acc_ld, out, out_cs, p);
    case Int8Isa::kAvx2: return requant_to_planar_avx2(acc, pixels, channels, acc_ld, out, out_cs, p);
    case Int8Isa::kNone: break;
  }
#endif
  requant_to_planar_scalar(acc, 0, pixels, channels, acc_ld, out, out_cs, p);
}

void planar_to_u8_channels_last(const int8_t* in, int64_t channels, int64_t pixels, int64_t in_cs, uint8_t* out,
                                int64_t out_ps) {
#if ORKNN_INT8_X86
  switch (int8_active_isa()) {
    case Int8Isa::kAvx512: return planar_to_u8_avx512(in, channels, pixels, in_cs, out, out_ps);
    case Int8Isa::kAvx2: return planar_to_u8_avx2(in, channels, pixels, in_cs, out, out_ps);
    case Int8Isa::kNone: break;
  }
#endif
  planar_to_u8_scalar(in, 0, channels, 0, pixels, in_cs, out, out_ps);
}

void int8_to_u8(const int8_t* in, int64_t n, uint8_t* out) {
#if ORKNN_INT8_X86
  switch (int8_active_isa()) {
    case Int8Isa::kAvx512: return int8_to_u8_avx512(in, n, out);
    case Int8Isa::kAvx2: return int8_to_u8_avx2(in, n, out);
    case Int8Isa::kNone: break;
  }
#endif
  int8_to_u8_scalar(in, n, out);
}

void int8_sign_sums(const int8_t* w, int64_t n, int64_t* pos, int64_t* neg) {
#if ORKNN_INT8_X86
  if (int8_active_isa() == Int8Isa::kAvx512) return int8_sign_sums_avx512(w, n, pos, neg);
#endif
  int8_sign_sums_scalar(w, n, pos, neg);
}

}  // namespace orknn::x86
