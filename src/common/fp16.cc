// GCC 12 reports the _mm512_undefined_*() placeholders inside its own AVX-512 intrinsics as "may
// be used uninitialized" (round_to_fp16_avx512): a false positive of those headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "common/fp16.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace orknn {

uint16_t fp32_to_fp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u));
  }
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520 -> inf
  if (absx < 0x38800000u) {  // subnormal half (or zero)
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25 -> 0 (2^-25 ties to even 0)
    uint32_t e = absx >> 23;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    uint32_t s = 126 - e;  // value = mant * 2^(e-150); in units of 2^-24 that is mant >> (126-e)
    uint32_t q = mant >> s;
    uint32_t rem = mant & ((1u << s) - 1u);
    uint32_t half = 1u << (s - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t e = (absx >> 23) - 112;  // rebias 127 -> 15
  uint32_t mant = absx & 0x7fffffu;
  uint32_t q = (e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ++q;  // carry into exponent is correct
  return static_cast<uint16_t>(sign | q);
}

float fp16_to_fp32(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  uint32_t x;
  if (e == 0) {
    if (m == 0) {
      x = sign;
    } else {  // subnormal: normalise
      int shift = 0;
      while (!(m & 0x400u)) { m <<= 1; ++shift; }
      m &= 0x3ffu;
      x = sign | (static_cast<uint32_t>(113 - shift) << 23) | (m << 13);
    }
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else {
    x = sign | ((e + 112) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

void fp32_to_fp16(const float* src, uint16_t* dst, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
#endif
  for (; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

void fp16_to_fp32(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) dst[i] = fp16_to_fp32(src[i]);
}

#if defined(__F16C__)
namespace {
// The same conversions 16 floats at a time, for CPUs with AVX-512F: the runtime's rounding pass of
// fp16 mode runs over every float output that a kernel does not round itself, and on outputs held
// in L1/L2 the conversions, not memory, set its speed (25-30% faster than 8 at a time there).
__attribute__((target("avx512f"))) size_t round_to_fp16_avx512(float* data, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(data + i, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(data + i), _MM_FROUND_TO_NEAREST_INT)));
  return i;
}
}  // namespace
#endif

void round_to_fp16(float* data, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) i = round_to_fp16_avx512(data, n);
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(data + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(data + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) data[i] = fp16_to_fp32(fp32_to_fp16(data[i]));
}

}  // namespace orknn
