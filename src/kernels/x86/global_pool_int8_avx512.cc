// AVX-512 kernel of quantized (int8) GlobalAveragePool, "x86_gap_int8" (squeeze-and-excitation
// blocks, classifier heads): the sums of kernels/global_pool_int8.h (which has the nodes, layouts,
// threads and the bit-exact result) with AVX-512. A plane's sum 64 bytes at a time: each int8 x
// biased to the unsigned byte x + 128 (xor 0x80) and summed with vpsadbw into 64-bit lanes, then
// the bias taken off; channels-last, 16 channels per vector of int32 sums.

// GCC 12 reports the placeholders inside its own AVX-512 intrinsics as "may be used
// uninitialized" (a false positive); the pragma must precede the header to cover them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/global_pool_int8.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/x86/cpu_features.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

bool supports_gap_int8(const Graph& g, const Node& n) { return x86::cpu_avx512bw() && gap_int8_node(g, n); }

// Sum of x[i] over [0, count), as the sum of x[i] + 128 (64-bit lanes), exact.
__attribute__((target("avx512f,avx512bw"))) int64_t plane_sum(const int8_t* x, int64_t count) {
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 64 <= count; i += 64) {
    const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(x + i), bias);
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero));
  }
  if (i < count) {
    const __mmask64 m = (__mmask64(1) << (count - i)) - 1;
    const __m512i v = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), bias));
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero));
  }
  alignas(64) int64_t lanes[8];
  _mm512_store_si512(lanes, acc);
  int64_t sum = 0;
  for (int64_t v : lanes) sum += v;
  return sum - 128 * count;
}

// sums[i] = sum of x over the pixels of channel i < n <= 16 of an NHWC image (pixels `c` bytes
// apart, x at the first of the n channels).
__attribute__((target("avx512f,avx512bw"))) void channel_sums(const int8_t* x, int64_t pixels, int64_t c, int64_t n,
                                                             int32_t* sums) {
  const __mmask64 m = (__mmask64(1) << n) - 1;
  __m512i acc = _mm512_setzero_si512();
  for (int64_t p = 0; p < pixels; ++p)
    acc = _mm512_add_epi32(acc, _mm512_cvtepi8_epi32(_mm512_castsi512_si128(_mm512_maskz_loadu_epi8(m, x + p * c))));
  _mm512_mask_storeu_epi32(sums, static_cast<__mmask16>(m), acc);
}

using GlobalAveragePoolInt8 = GlobalAveragePoolInt8Kernel<plane_sum, channel_sums>;

}  // namespace

ORKNN_REGISTER_KERNEL(GlobalAveragePool, "x86_gap_int8", kPriorityGeneral, supports_gap_int8, GlobalAveragePoolInt8);

}  // namespace orknn
