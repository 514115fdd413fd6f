// AVX-512 quantized Concat, "avx512_int8": the reference's ConcatQ8 (kernels/ref/concat.h: the
// same pieces, threads and blocked layouts) with the requantization of an input whose parameters
// differ from the output's done 16 values at a time. shufflenet_v2 and squeezenet calibrated on
// their data sets requantize one input of most Concats, and the scalar loop ran at ~0.6 values
// per ns.
//
// Bit-exact with the reference: requantize(x - zp_x, M, zp_y) = sat8(rne(float(x - zp_x) * M) +
// zp_y) is x86::requant16_float_bounds (int8_requant.h) with comp = -zp_x and the int8 bounds, for
// a finite M (the float product of an integer in [-255, 255] and M is then finite, and clamping
// before rounding to nearest is clamping after); a non-finite M takes the reference's loop.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its AVX-512 headers
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/ref/concat.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/int8_requant.h"

namespace orknn {
namespace {

bool supports_concat_q8(const Graph& g, const Node& n) {
  return x86::cpu_avx512bwvl() && concat_q8_per_tensor_node(g, n);
}

struct Avx512Requant {
  __attribute__((target("avx512f,avx512bw,avx512vl"))) static void run(const int8_t* x, int8_t* y, int64_t n,
                                                                      int32_t zp_x, float m, int32_t zp_y) {
    if (!std::isfinite(m)) {
      ScalarRequant::run(x, y, n, zp_x, m, zp_y);
      return;
    }
    const __m512i comp = _mm512_set1_epi32(-zp_x), zp = _mm512_set1_epi32(zp_y);
    const __m512 mult = _mm512_set1_ps(m);
    const __m512 lo = _mm512_set1_ps(static_cast<float>(-128 - zp_y)), hi = _mm512_set1_ps(static_cast<float>(127 - zp_y));
    for (int64_t k = 0; k < n; k += 16) {
      const __mmask16 mask = n - k >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - k)) - 1);
      const __m512i v = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, x + k));
      const __m512i r = x86::requant16_float_bounds(v, comp, mult, lo, hi, zp);
      _mm_mask_storeu_epi8(y + k, mask, _mm512_cvtsepi32_epi8(r));
    }
  }
};

}  // namespace

ORKNN_REGISTER_KERNEL(Concat, "avx512_int8", kPrioritySpecialized, supports_concat_q8, ConcatQ8<Avx512Requant>);

}  // namespace orknn
