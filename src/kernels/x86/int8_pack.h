// The vpdpbusd / AMX operand layout of NCHW int8 pixels, shared by the hand-written INT8 kernels
// that multiply NCHW images by weights per pixel (pointwise_int8_vnni.cc: the pointwise NCHW
// path; deconv2x2_avx512.cc: the 2x2 upsampling).
#pragma once
// (Its includers silence GCC 12's -Wmaybe-uninitialized false positive of the AVX-512 headers.)
#include <immintrin.h>

#include <cstdint>

namespace orknn::x86 {

constexpr int64_t kPackTilePixels = 64;  // pixels per packed tile: 4 vectors of 16

// Packs pixels [p0, p0 + np) of channels [0, c) of one NCHW image into dst[c4][64][4] u8
// (x ^ 0x80), channels past c and pixels past np as 0x80 (their weights are 0 / they are not
// stored).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) inline void pack_tile(const int8_t* x, int64_t c,
                                                                                      int64_t pixels, int64_t p0,
                                                                                      int64_t np, uint8_t* dst) {
  const __mmask64 pm = np >= 64 ? ~__mmask64{0} : ((__mmask64{1} << np) - 1);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const int64_t c4 = (c + 3) / 4;
  for (int64_t k = 0; k < c4; ++k) {
    __m512i a[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t ch = 4 * k + j;
      a[j] = ch < c ? _mm512_maskz_loadu_epi8(pm, x + ch * pixels + p0) : _mm512_setzero_si512();
      a[j] = _mm512_xor_si512(a[j], flip);
    }
    // Byte, then 16-bit interleaves give, per 128-bit lane L, pixels L*16 + {0-3, 4-7, 8-11,
    // 12-15} as 4-byte groups in u0..u3; the lane shuffles put the 64 pixels back in order.
    const __m512i t0 = _mm512_unpacklo_epi8(a[0], a[1]), t1 = _mm512_unpackhi_epi8(a[0], a[1]);
    const __m512i t2 = _mm512_unpacklo_epi8(a[2], a[3]), t3 = _mm512_unpackhi_epi8(a[2], a[3]);
    const __m512i u0 = _mm512_unpacklo_epi16(t0, t2), u1 = _mm512_unpackhi_epi16(t0, t2);
    const __m512i u2 = _mm512_unpacklo_epi16(t1, t3), u3 = _mm512_unpackhi_epi16(t1, t3);
    const __m512i s0 = _mm512_shuffle_i32x4(u0, u1, 0x44), s1 = _mm512_shuffle_i32x4(u2, u3, 0x44);
    const __m512i s2 = _mm512_shuffle_i32x4(u0, u1, 0xEE), s3 = _mm512_shuffle_i32x4(u2, u3, 0xEE);
    uint8_t* d = dst + k * kPackTilePixels * 4;
    _mm512_storeu_si512(d, _mm512_shuffle_i32x4(s0, s1, 0x88));        // pixels 0-15
    _mm512_storeu_si512(d + 64, _mm512_shuffle_i32x4(s0, s1, 0xDD));   // 16-31
    _mm512_storeu_si512(d + 128, _mm512_shuffle_i32x4(s2, s3, 0x88));  // 32-47
    _mm512_storeu_si512(d + 192, _mm512_shuffle_i32x4(s2, s3, 0xDD));  // 48-63
  }
}

}  // namespace orknn::x86
