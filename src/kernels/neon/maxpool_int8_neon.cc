// NEON kernel of quantized (int8) MaxPool, "neon_maxpool_int8": the nodes of x86_maxpool_int8
// (kernels/maxpool_int8_geometry.h: the output keeps the input's parameters, so the result is the
// window's largest code, exact in any order: bit-exact by construction), NCHW or NHWC.
//
// NCHW, per plane and output row: the window's input rows are reduced with SMAX into a row buffer
// that holds -128 left and right of the image (padding never wins, and a window with no input
// element gives -128, as the reference); then each output takes the maximum of its kw columns of
// that row, 16 outputs per vector: shifted loads for stride 1, the even bytes of LD2's
// de-interleaving load for stride 2, a scalar loop for other strides and the last outputs.
// NHWC (between the INT8 convolutions, kernel.h blocked): each output pixel is the maximum of its
// window's pixels, 16 channels per vector (the last C % 16 scalar); output rows over the threads.
#include <arm_neon.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/maxpool_int8.h"
#include "kernels/parallel.h"

namespace orknn {
namespace {

constexpr int64_t kVec = 16;  // bytes per vector

bool supports_maxpool_int8_neon(const Graph& g, const Node& n) {
  if (!is_quantized_node(g, n)) return false;
  MaxPoolGeometry geo;
  return maxpool_int8_geometry(g, n, kVec, &geo);
}

// One plane. `row` is the thread's row buffer (-128 outside the image's columns).
void maxpool_plane(const int8_t* x, int8_t* y, const MaxPoolGeometry& g, int8_t* row) {
  int8_t* img = row + g.pad_l;  // column 0 of the image
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const int64_t h0 = oh * g.sh - g.pad_t;
    const int64_t r0 = std::max<int64_t>(0, h0), r1 = std::min(g.h, h0 + g.kh);
    int64_t i = 0;  // the window's rows, reduced into the image's columns of the row buffer
    for (; i + kVec <= g.w; i += kVec) {
      int8x16_t v = vdupq_n_s8(-128);
      for (int64_t r = r0; r < r1; ++r) v = vmaxq_s8(v, vld1q_s8(x + r * g.w + i));
      vst1q_s8(img + i, v);
    }
    for (; i < g.w; ++i) {
      int8_t v = -128;
      for (int64_t r = r0; r < r1; ++r) v = std::max(v, x[r * g.w + i]);
      img[i] = v;
    }
    int8_t* out = y + oh * g.ow;
    int64_t o = 0;
    if (g.sw == 1) {
      for (; o + kVec <= g.ow; o += kVec) {
        int8x16_t v = vld1q_s8(row + o);
        for (int64_t k = 1; k < g.kw; ++k) v = vmaxq_s8(v, vld1q_s8(row + o + k));
        vst1q_s8(out + o, v);
      }
    } else if (g.sw == 2) {
      for (; o + kVec <= g.ow; o += kVec) {
        const int8_t* base = row + 2 * o;
        int8x16_t v = vdupq_n_s8(-128);
        for (int64_t k = 0; k < g.kw; ++k) v = vmaxq_s8(v, vld2q_s8(base + k).val[0]);  // bytes k, k+2, ...
        vst1q_s8(out + o, v);
      }
    }
    for (; o < g.ow; ++o) {
      int8_t v = -128;
      for (int64_t k = 0; k < g.kw; ++k) v = std::max(v, row[o * g.sw + k]);
      out[o] = v;
    }
  }
}

// Output rows [r0, r1) (over the batch) of the NHWC pooling.
void maxpool_nhwc_rows(const int8_t* x, int8_t* y, const MaxPoolGeometry& g, int64_t r0, int64_t r1) {
  const int64_t c = g.channels, w = g.w;
  auto pixel = [&](const int8_t* img, int8_t* out, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    int64_t ch = 0;
    for (; ch + kVec <= c; ch += kVec) {
      int8x16_t v = vdupq_n_s8(-128);  // a window with no input element gives -128
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) v = vmaxq_s8(v, vld1q_s8(img + (i * w + j) * c + ch));
      vst1q_s8(out + ch, v);
    }
    for (; ch < c; ++ch) {
      int8_t v = -128;
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) v = std::max(v, img[(i * w + j) * c + ch]);
      out[ch] = v;
    }
  };
  maxpool_nhwc_windows(x, y, g, r0, r1, pixel);
}

using MaxPoolInt8 = MaxPoolInt8Kernel<kVec, maxpool_plane, maxpool_nhwc_rows>;

}  // namespace

ORKNN_REGISTER_KERNEL(MaxPool, "neon_maxpool_int8", kPrioritySpecialized, supports_maxpool_int8_neon, MaxPoolInt8);

}  // namespace orknn
