// AVX-512 kernel of quantized (int8) MaxPool on NCHW, "x86_maxpool_int8", for nodes whose output
// keeps the input's parameters (then the result is the largest code of the window, docs/numerics.md
// and kernels/ref/pool.cc): resnet's stem pooling, which oneDNN's s8 pooling served only in
// channels-last with a transpose either side (0.39 ms of resnet18 int8's 6.4 ms).
//
// Per plane and output row: the window's input rows are reduced with vpmaxsb into a row buffer
// that holds -128 left and right of the image (padding never wins, and a window with no input
// element gives -128, as the reference); then each output takes the maximum of its kw columns of
// that row: shifted loads for stride 1, even bytes gathered with vpermt2b (VBMI) for stride 2, a
// scalar loop for other strides. Max of int8 codes is exact, so bit-exact by construction
// (tests/ops/pool_int8_test.cc). Planes are split over the node's threads.
// Between convolutions that keep INT8 activations channels-last (kernel.h, blocked), input and
// output are NHWC instead: each output pixel is the maximum of its window's pixels, 64 channels
// per vector (output rows split over the threads).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its AVX-512 headers
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/maxpool_int8.h"
#include "kernels/parallel.h"
#include "kernels/x86/cpu_features.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

constexpr int64_t kVec = 64;  // bytes per vector

bool supports_maxpool_int8(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512vbmi() || !is_quantized_node(g, n)) return false;
  MaxPoolGeometry geo;
  return maxpool_int8_geometry(g, n, kVec, &geo);
}

inline __mmask64 mask64(int64_t count) { return count >= kVec ? ~__mmask64(0) : (__mmask64(1) << count) - 1; }

// One plane. `row` is the thread's row buffer (-128 outside the image's columns).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void maxpool_plane(const int8_t* x, int8_t* y,
                                                                          const MaxPoolGeometry& g, int8_t* row) {
  int8_t* img = row + g.pad_l;  // column 0 of the image
  __m512i even = _mm512_setzero_si512();
  if (g.sw == 2) {
    alignas(64) int8_t idx[kVec];
    for (int i = 0; i < kVec; ++i) idx[i] = static_cast<int8_t>(2 * i);  // bytes 0, 2, ..., 126 of a:b
    even = _mm512_load_si512(idx);
  }
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const int64_t h0 = oh * g.sh - g.pad_t;
    const int64_t r0 = std::max<int64_t>(0, h0), r1 = std::min(g.h, h0 + g.kh);
    for (int64_t i = 0; i < g.w; i += kVec) {  // the window's rows, reduced
      const __mmask64 m = mask64(g.w - i);
      __m512i v = _mm512_set1_epi8(-128);
      for (int64_t r = r0; r < r1; ++r) v = _mm512_max_epi8(v, _mm512_maskz_loadu_epi8(m, x + r * g.w + i));
      _mm512_mask_storeu_epi8(img + i, m, v);
    }
    int8_t* out = y + oh * g.ow;
    if (g.sw == 1) {
      for (int64_t o = 0; o < g.ow; o += kVec) {
        __m512i v = _mm512_loadu_si512(row + o);
        for (int64_t k = 1; k < g.kw; ++k) v = _mm512_max_epi8(v, _mm512_loadu_si512(row + o + k));
        _mm512_mask_storeu_epi8(out + o, mask64(g.ow - o), v);
      }
    } else if (g.sw == 2) {
      for (int64_t o = 0; o < g.ow; o += kVec) {
        const int8_t* base = row + 2 * o;
        __m512i v = _mm512_set1_epi8(-128);
        for (int64_t k = 0; k < g.kw; ++k)
          v = _mm512_max_epi8(v, _mm512_permutex2var_epi8(_mm512_loadu_si512(base + k), even,
                                                          _mm512_loadu_si512(base + k + kVec)));
        _mm512_mask_storeu_epi8(out + o, mask64(g.ow - o), v);
      }
    } else {
      for (int64_t o = 0; o < g.ow; ++o) {
        int8_t v = -128;
        for (int64_t k = 0; k < g.kw; ++k) v = std::max(v, row[o * g.sw + k]);
        out[o] = v;
      }
    }
  }
}

// Output rows [r0, r1) (over the batch) of the NHWC pooling.
__attribute__((target("avx512f,avx512bw"))) void maxpool_nhwc_rows(const int8_t* x, int8_t* y,
                                                                 const MaxPoolGeometry& g, int64_t r0, int64_t r1) {
  const int64_t c = g.channels, w = g.w;
  // The lambda takes the function's target attribute only when given it again.
  auto pixel = [&](const int8_t* img, int8_t* out, int64_t i0, int64_t i1, int64_t j0,
                   int64_t j1) __attribute__((target("avx512f,avx512bw"))) {
    for (int64_t ch = 0; ch < c; ch += kVec) {
      const __mmask64 m = mask64(c - ch);
      __m512i v = _mm512_set1_epi8(-128);  // a window with no input element gives -128
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j)
          v = _mm512_max_epi8(v, _mm512_maskz_loadu_epi8(m, img + (i * w + j) * c + ch));
      _mm512_mask_storeu_epi8(out + ch, m, v);
    }
  };
  maxpool_nhwc_windows(x, y, g, r0, r1, pixel);
}

using MaxPoolInt8 = MaxPoolInt8Kernel<kVec, maxpool_plane, maxpool_nhwc_rows>;

}  // namespace

ORKNN_REGISTER_KERNEL(MaxPool, "x86_maxpool_int8", kPrioritySpecialized, supports_maxpool_int8, MaxPoolInt8);

}  // namespace orknn
