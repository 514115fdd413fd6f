// AVX-512 float 1x1 convolution on NCHW activations, "x86_pw_f32": the pointwise layers whose
// input and output channel counts are both not multiples of 16 (shufflenet_v2's 58, 116, 232),
// which never run blocked (runtime/blocked_layout.h), and those on one-pixel images (the squeeze-
// and-excitation blocks), whose bytes are the same in both layouts. oneDNN pads the former to
// nChw16c with a reorder either side and ran them at 50-70 GFLOPS at one thread (116 -> 116 at
// 14x14: 79 us); the latter, matrix-vector products of a few thousand weights, took 5-16 us each.
//
// In NCHW a 1x1 convolution is the matrix product Y[oc][p] = sum_c W[oc][c] X[c][p] over the p
// pixels of an image, each X row (channel) contiguous. Register block: 8 output channels x 48
// pixels (24 accumulators); per input channel, 3 vector loads of X and 8 broadcast weights feed 24
// fused multiply-adds. The weights are packed once as [8-channel block][c][8] (rows past OC are
// zero, computed and dropped). The pixel tiles are the outer loop, so a tile's C x 48 inputs stay
// in L1 while every output block reads them; the last tile's vectors are masked.
//
// Numerics: each output sums its C products in channel order from +0 with fused multiply-adds
// (one rounding per step, where the reference rounds the product too: the float tolerance of
// docs/kernels.md), then + bias, the fused activation, and in fp16 mode the rounding, in
// registers (fused_act_avx512.h).
//
// Threads split the output channel blocks: a thread's outputs are contiguous channel ranges, as
// the depthwise and copy kernels that read them next split theirs.
// OPENRKNN_DISABLE_X86_PW_F32=1 leaves every node to the other kernels (A/B measurements).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its AVX-512 headers
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/env.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"
#include "kernels/x86/pointwise_geometry.h"

namespace orknn {
namespace {

constexpr int64_t kRows = 8;     // output channels per register block
constexpr int64_t kVectors = 3;  // 16-pixel vectors per register block
constexpr int64_t kTile = 16 * kVectors;
constexpr int64_t kGemvRows = 64;  // output channels per block of the one-pixel path
constexpr int64_t kMaxGemvWeights = 16384;  // see supports_pw_f32
// Below this many multiply-adds per thread, waking another thread costs more than it saves.
constexpr int64_t kMinMacsPerThread = 256 * 1024;

bool supports_pw_f32(const Graph& g, const Node& n) {
  if (env_flag("OPENRKNN_DISABLE_X86_PW_F32") || !x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  PwGeometry geo;
  if (!pw_geometry(g, n, &geo) || geo.strided()) return false;
  const Tensor* b = g.input(n, 2);
  if (!is_f32(g.input(n, 0)) || !is_f32(g.input(n, 1)) || (b && !is_f32(b)) || !is_f32(&g.tensor(n.outputs[0])))
    return false;
  if (b && (!b->is_const() || b->numel() != geo.oc)) return false;
  // Images of one pixel (the squeeze-and-excitation convolutions), blocked or not
  // (PointwiseF32::blocked_io), up to kMaxGemvWeights: larger ones stream their weights faster
  // on oneDNN (efficientnet_b0's 1152 <-> 48: 12-13 against 15-21 us). Larger images: only where
  // neither side can be blocked, as this kernel takes NCHW only there and would otherwise turn its
  // neighbours NCHW too (efficientnet_b0's 144 -> 24 projections: each faster alone, the network
  // slower; an nChw16c input transposed per tile instead ran them at 392 against 245 us).
  if (geo.pixels == 1) return geo.c * geo.oc <= kMaxGemvWeights;
  return geo.c % 16 != 0 && geo.oc % 16 != 0;
}

bool one_pixel(const Graph& g, const Node& n) {
  PwGeometry geo;
  return pw_geometry(g, n, &geo) && geo.pixels == 1;
}

class PointwiseF32 : public Kernel {
 public:
  bool rounds_fp16_outputs() const override { return true; }
  // [N, C, 1, 1] has the same bytes in NCHW and nChw16c.
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    return one_pixel(g, n) ? BlockedIo::kEach : BlockedIo::kNone;
  }

  Status prepare(const KernelContext& ctx) override {
    if (!pw_geometry(*ctx.graph, *ctx.node, &geo_) || geo_.strided())
      return ORKNN_ERR(kFail, "Conv '%s': not an unstrided 1x1 convolution this kernel handles", ctx.node->name.c_str());
    act_ = read_act_vec(ctx.node->attrs);
    // One pixel: a matrix-vector product, vectorised over the output channels instead (64 per
    // block, as x86_gemv_f32), weights [block][c][64].
    rows_ = geo_.pixels == 1 ? kGemvRows : kRows;
    blocks_ = (geo_.oc + rows_ - 1) / rows_;
    const float* w = ctx.in<float>(1);
    weights_.assign(static_cast<size_t>(blocks_ * geo_.c * rows_), 0.f);
    for (int64_t o = 0; o < geo_.oc; ++o)
      for (int64_t c = 0; c < geo_.c; ++c)
        weights_[static_cast<size_t>(((o / rows_) * geo_.c + c) * rows_ + o % rows_)] = w[o * geo_.c + c];
    bias_.assign(static_cast<size_t>(blocks_ * rows_), 0.f);
    if (ctx.has_input(2)) std::copy(ctx.in<float>(2), ctx.in<float>(2) + geo_.oc, bias_.begin());
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const int nt = threads_for(geo_.batch * geo_.pixels * geo_.c * geo_.oc, kMinMacsPerThread, ctx.num_threads);
    if (geo_.pixels == 1) {
      parallel_ranges(blocks_, nt, [&](int64_t b0, int64_t b1, int) {
        for (int64_t n = 0; n < geo_.batch; ++n)
          for (int64_t b = b0; b < b1; ++b) gemv_block(x + n * geo_.c, y + n * geo_.oc, b, ctx.round_fp16);
      });
      return;
    }
    parallel_ranges(blocks_, nt, [&](int64_t b0, int64_t b1, int) {
      for (int64_t n = 0; n < geo_.batch; ++n) {
        const float* xn = x + n * geo_.c * geo_.pixels;
        float* yn = y + n * geo_.oc * geo_.pixels;
        for (int64_t p = 0; p < geo_.pixels; p += kTile) {
          const int64_t count = std::min(kTile, geo_.pixels - p);
          for (int64_t b = b0; b < b1; ++b) {
            if (count > 32) block<3>(xn + p, yn + p, b, count, ctx.round_fp16);
            else if (count > 16) block<2>(xn + p, yn + p, b, count, ctx.round_fp16);
            else block<1>(xn + p, yn + p, b, count, ctx.round_fp16);
          }
        }
      }
    });
  }

 private:
  // Output channels [8 b, 8 b + 8) x pixels [0, count) of the tile at x / y, V vectors (the
  // last one masked to count).
  template <int V>
  __attribute__((target("avx512f"))) void block(const float* x, float* y, int64_t b, int64_t count,
                                                bool round) const {
    const int64_t P = geo_.pixels, C = geo_.c;
    const int tail = static_cast<int>(count - 16 * (V - 1));
    const __mmask16 last = tail >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << tail) - 1);
    __m512 acc[kRows][V];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r)
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
    const float* wb = weights_.data() + b * C * kRows;
    for (int64_t c = 0; c < C; ++c) {
      const float* xc = x + c * P;
      __m512 xv[V];
      for (int v = 0; v < V; ++v)
        xv[v] = v == V - 1 ? _mm512_maskz_loadu_ps(last, xc + 16 * v) : _mm512_loadu_ps(xc + 16 * v);
      const float* wc = wb + c * kRows;
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        const __m512 wv = _mm512_set1_ps(wc[r]);
        for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(wv, xv[v], acc[r][v]);
      }
    }
    // Unrolled with constant indices, so the accumulators stay in registers.
    const int64_t rows = std::min<int64_t>(kRows, geo_.oc - b * kRows);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      if (r >= rows) break;
      const int64_t o = b * kRows + r;
      const __m512 bias = _mm512_set1_ps(bias_[static_cast<size_t>(o)]);
      for (int v = 0; v < V; ++v) {
        __m512 out = apply_act(_mm512_add_ps(acc[r][v], bias), act_);
        if (round) out = round_to_fp16_lanes(out);
        if (v == V - 1) _mm512_mask_storeu_ps(y + o * P + 16 * v, last, out);
        else _mm512_storeu_ps(y + o * P + 16 * v, out);
      }
    }
  }

  // One pixel: output channels [64 b, 64 b + 64) of one image, four 16-channel accumulators over
  // the input channels in order.
  __attribute__((target("avx512f"))) void gemv_block(const float* x, float* y, int64_t b, bool round) const {
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    const float* wb = weights_.data() + b * geo_.c * kGemvRows;
    for (int64_t c = 0; c < geo_.c; ++c) {
      const __m512 xv = _mm512_set1_ps(x[c]);
      for (int v = 0; v < 4; ++v) acc[v] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(wb + c * kGemvRows + 16 * v), acc[v]);
    }
    for (int v = 0; v < 4; ++v) {
      const int64_t o = b * kGemvRows + 16 * v;
      if (o >= geo_.oc) break;
      const __mmask16 m = geo_.oc - o >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (geo_.oc - o)) - 1);
      __m512 out = apply_act(_mm512_add_ps(acc[v], _mm512_loadu_ps(bias_.data() + o)), act_);
      if (round) out = round_to_fp16_lanes(out);
      _mm512_mask_storeu_ps(y + o, m, out);
    }
  }

  PwGeometry geo_;
  ActVec act_;
  int64_t rows_ = kRows;  // output channels per block: kRows, or kGemvRows for one pixel
  int64_t blocks_ = 0;
  std::vector<float> weights_;  // [block][c][rows_], zero rows past OC
  std::vector<float> bias_;     // rows_ * blocks_, zero past OC
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "x86_pw_f32", 20, supports_pw_f32, PointwiseF32);

}  // namespace orknn
