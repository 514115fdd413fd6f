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
#include "kernels/parallel.h"
#include "kernels/x86/cpu_features.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

constexpr int64_t kVec = 64;  // bytes per vector

struct MaxPoolGeometry {
  int64_t batch = 0, channels = 0, planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, pad_t = 0, pad_l = 0;
  int64_t row_len = 0;  // row buffer: -128 | image row | -128, plus the slack of the last vector's loads
};

bool maxpool_geometry(const Graph& g, const Node& n, MaxPoolGeometry* geo) {
  if (n.op != OpId::MaxPool || n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0)
    return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x.shape.size() != 4 || y.shape.size() != 4 || x.dtype != DType::kI8 || y.dtype != DType::kI8) return false;
  if (x.quant.scale.size() != 1 || x.quant.zero_point.size() != 1 || x.quant.scale != y.quant.scale ||
      x.quant.zero_point != y.quant.zero_point)
    return false;  // a node that requantizes stays on the reference kernel
  const std::vector<int64_t> ks = n.attrs.get_ints("kernel_shape", {});
  const std::vector<int64_t> st = n.attrs.get_ints("strides", {1, 1});
  const std::vector<int64_t> dil = n.attrs.get_ints("dilations", {1, 1});
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", {0, 0, 0, 0});
  if (ks.size() != 2 || st.size() != 2 || dil.size() != 2 || pads.size() != 4) return false;
  if (dil[0] != 1 || dil[1] != 1 || n.attrs.get_int("storage_order", 0) != 0) return false;
  for (int64_t v : ks)
    if (v < 1 || v > 64) return false;
  for (int64_t v : st)
    if (v < 1 || v > 64) return false;
  for (int64_t v : pads)
    if (v < 0 || v > 64) return false;
  if (x.shape[0] != y.shape[0] || x.shape[1] != y.shape[1] || y.numel() <= 0) return false;
  geo->batch = x.shape[0];
  geo->channels = x.shape[1];
  geo->planes = x.shape[0] * x.shape[1];
  geo->h = x.shape[2];
  geo->w = x.shape[3];
  geo->oh = y.shape[2];
  geo->ow = y.shape[3];
  geo->kh = ks[0];
  geo->kw = ks[1];
  geo->sh = st[0];
  geo->sw = st[1];
  geo->pad_t = pads[0];
  geo->pad_l = pads[1];
  // Windows reach (OW - 1) * sw + kw columns of the padded row (ceil_mode may pass the right pad);
  // the vector loops read up to 2 * 64 + kw bytes past the last output's window start.
  geo->row_len = std::max(geo->pad_l + geo->w, (geo->ow - 1) * geo->sw + geo->kw) + 2 * kVec + geo->kw + kVec;
  return true;
}

bool supports_maxpool_int8(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512vbmi() || !is_quantized_node(g, n)) return false;
  MaxPoolGeometry geo;
  return maxpool_geometry(g, n, &geo);
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
  const int64_t c = g.channels;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / g.oh, oh = r % g.oh;
    const int64_t h0 = oh * g.sh - g.pad_t;
    const int64_t i0 = std::max<int64_t>(0, h0), i1 = std::min(g.h, h0 + g.kh);
    const int8_t* img = x + b * g.h * g.w * c;
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t w0 = ow * g.sw - g.pad_l;
      const int64_t j0 = std::max<int64_t>(0, w0), j1 = std::min(g.w, w0 + g.kw);
      int8_t* out = y + (r * g.ow + ow) * c;
      for (int64_t ch = 0; ch < c; ch += kVec) {
        const __mmask64 m = mask64(c - ch);
        __m512i v = _mm512_set1_epi8(-128);  // a window with no input element gives -128
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j)
            v = _mm512_max_epi8(v, _mm512_maskz_loadu_epi8(m, img + (i * g.w + j) * c + ch));
        _mm512_mask_storeu_epi8(out + ch, m, v);
      }
    }
  }
}

class MaxPoolInt8 : public Kernel {
 public:
  // NCHW in and out, or NHWC in and out (kernel.h).
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kUniform; }

  Status prepare(const KernelContext& ctx) override {
    if (!maxpool_geometry(*ctx.graph, *ctx.node, &geo_))
      return ORKNN_ERR(kFail, "MaxPool '%s': not a pooling this kernel handles", ctx.node->name.c_str());
    // One row buffer per thread slot, -128 everywhere; run() writes only the image's columns.
    slots_ = thread_slots(ctx.num_threads);
    rows_.assign(static_cast<size_t>(slots_ * geo_.row_len), static_cast<int8_t>(-128));
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    if (ctx.input_blocked(0)) {
      parallel_ranges(geo_.batch * geo_.oh, ctx.num_threads,
                      [&](int64_t r0, int64_t r1, int) { maxpool_nhwc_rows(x, y, geo_, r0, r1); });
      return;
    }
    const int64_t in_plane = geo_.h * geo_.w, out_plane = geo_.oh * geo_.ow;
    parallel_ranges(geo_.planes, std::min(ctx.num_threads, slots_), [&](int64_t p0, int64_t p1, int slot) {
      int8_t* row = rows_.data() + static_cast<size_t>(slot) * static_cast<size_t>(geo_.row_len);
      for (int64_t p = p0; p < p1; ++p) maxpool_plane(x + p * in_plane, y + p * out_plane, geo_, row);
    });
  }

 private:
  MaxPoolGeometry geo_;
  int slots_ = 1;
  std::vector<int8_t> rows_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(MaxPool, "x86_maxpool_int8", kPrioritySpecialized, supports_maxpool_int8, MaxPoolInt8);

}  // namespace orknn
