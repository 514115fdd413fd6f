// AVX-512 float 1x1 convolution on NCHW activations, "x86_pw_f32": the pointwise layers whose
// input and output channel counts are both not multiples of 16 (shufflenet_v2's 58, 116, 232),
// which never run blocked (runtime/layout_assignment.h); those with such an output and an nChw16c
// input of 16 or 32 channels (transposed to NCHW per pixel tile); and those on one-pixel images
// (the squeeze-and-excitation blocks), whose bytes are the same in both layouts. oneDNN pads the
// first to nChw16c with a reorder either side and ran them at 50-70 GFLOPS at one thread (116 ->
// 116 at 14x14: 79 us); the last, matrix-vector products of a few thousand weights, took 5-16 us.
//
// In NCHW a 1x1 convolution is the matrix product Y[oc][p] = sum_c W[oc][c] X[c][p] over the p
// pixels of an image, each X row (channel) contiguous. Register block: 8 output channels x 48
// pixels (24 accumulators); per input channel, 3 vector loads of X and 8 broadcast weights feed 24
// fused multiply-adds. The weights are packed once as [8-channel block][c][8] (rows past OC are
// zero, computed and dropped). The pixel tiles are the outer loop, so a tile's C x 48 inputs stay
// in L1 while every output block reads them; the last tile's vectors are masked, and no tile
// after others has a single vector (PixelTiles).
//
// Numerics: each output sums its C products in channel order from +0 with fused multiply-adds
// (one rounding per step, where the reference rounds the product too: the float tolerance of
// docs/kernels.md), then + bias, the fused activation, and in fp16 mode the rounding, in
// registers (fused_act_avx512.h).
//
// Threads split the output channel blocks: a thread's outputs are contiguous channel ranges, as
// the depthwise and copy kernels that read them next split theirs. With an nChw16c input they
// split the pixel tiles instead, so that each tile is transposed once.
//
// The same product serves "x86_stem_f32" (below): stems whose output never runs blocked, over the
// window taps of gathered input rows instead of input channels.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its AVX-512 headers
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"
#include "kernels/x86/gemv_f32_blocks.h"
#include "kernels/x86/pointwise_geometry.h"

namespace orknn {
namespace {

constexpr int64_t kRows = 8;     // output channels per register block
constexpr int64_t kVectors = 3;  // 16-pixel vectors per register block
constexpr int64_t kTile = 16 * kVectors;
constexpr int64_t kGemvRows = x86::kGemvBlock;  // output channels per block of the one-pixel path
constexpr int64_t kMaxGemvWeights = 16384;  // see supports_pw_f32
constexpr int64_t kMaxGemvWeightsFp16 = 131072;
constexpr int64_t kTransposedMaxChannels = 32;  // see supports_pw_f32
// Below this many multiply-adds per thread, waking another thread costs more than it saves.
constexpr int64_t kMinMacsPerThread = 256 * 1024;

bool supports_pw_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f()) return false;
  PwGeometry geo;
  if (!float_pw_geometry(g, n, &geo)) return false;
  // Images of one pixel (the squeeze-and-excitation convolutions), blocked or not
  // (PointwiseF32::blocked_io), up to kMaxGemvWeights: larger ones streamed their fp32 weights
  // faster on oneDNN (efficientnet_b0's 1152 <-> 48: 12-13 against 15-21 us). In fp16 mode the
  // weights stream as fp16 (gemv_f32_blocks.h), half the bytes, up to kMaxGemvWeightsFp16. Larger images: only where
  // neither side can be blocked, as this kernel takes NCHW only there and would otherwise turn its
  // neighbours NCHW too (efficientnet_b0's 144 -> 24 projections: each faster alone, the network
  // slower; an nChw16c input transposed per tile instead ran them at 392 against 245 us).
  // That transpose pays on few input channels (mobilenet_v3_small's 16 -> 72 at 56x56), so
  // those take an nChw16c input (kTransposedMaxChannels).
  if (geo.pixels == 1)
    return geo.c * geo.oc <= (g.precision == FloatPrecision::kFp16 ? kMaxGemvWeightsFp16 : kMaxGemvWeights);
  return geo.oc % 16 != 0 && (geo.c % 16 != 0 || geo.c <= kTransposedMaxChannels);
}

// Blocked activations the kernel takes: [N, C, 1, 1] has the same bytes in NCHW and nChw16c; an
// nChw16c input of at most kTransposedMaxChannels is transposed to NCHW per pixel tile.
BlockedIo pw_blocked_io(const Graph& g, const Node& n) {
  PwGeometry geo;
  if (!pw_geometry(g, n, &geo)) return BlockedIo::kNone;
  return geo.pixels == 1 || (geo.c % 16 == 0 && geo.c <= kTransposedMaxChannels) ? BlockedIo::kEach : BlockedIo::kNone;
}

// The lane selections of transpose16x16, round k (bit b = 2^k): for row i (bit b clear) lane l
// keeps row i's lane or takes row i+b's lane l-b (lo); for row i+b it takes row i's lane l+b or
// keeps its own (hi). permutex2var numbers the second operand's lanes 16..31.
struct TransposeLanes {
  alignas(64) int32_t lo[4][16];
  alignas(64) int32_t hi[4][16];
};
constexpr TransposeLanes make_transpose_lanes() {
  TransposeLanes t{};
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 16; ++l) {
      const int b = 1 << k;
      t.lo[k][l] = (l & b) ? 16 + l - b : l;
      t.hi[k][l] = (l & b) ? 16 + l : l + b;
    }
  return t;
}
constexpr TransposeLanes kTransposeLanes = make_transpose_lanes();

// 16 x 16 floats, r[i] lane l = element (i, l), transposed in registers: four rounds, the one for
// bit b swapping the elements whose row and lane differ in b only (the off-diagonal b x b blocks
// of each 2b x 2b block).
__attribute__((target("avx512f"))) inline void transpose16x16(__m512 r[16]) {
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const int b = 1 << k;
    const __m512i ilo = _mm512_load_si512(kTransposeLanes.lo[k]), ihi = _mm512_load_si512(kTransposeLanes.hi[k]);
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      if (i & b) continue;
      const __m512 a = r[i], c = r[i + b];
      r[i] = _mm512_permutex2var_ps(a, ilo, c);
      r[i + b] = _mm512_permutex2var_ps(a, ihi, c);
    }
  }
}

// The product Y[oc][p] = sum_k W[oc][k] X[k][p] of x86_pw_f32 (k: input channels) and
// x86_stem_f32 (k: window taps), with the bias, fused activation and fp16 rounding.
struct RowProduct {
  const float* weights;  // [8-channel block][k][8], zero rows past oc
  const float* bias;     // per output channel, zero past oc
  int64_t k, oc;
  ActVec act;
};

// Output channels [8 b, 8 b + 8) x pixels [0, count) of a tile: x = its k input rows (xs floats
// apart), y = its output rows (ys floats apart); V vectors, the last one masked to count.
template <int V, class Act>
__attribute__((target("avx512f"))) void product_block(const RowProduct& m, const float* x, int64_t xs, float* y,
                                                      int64_t ys, int64_t b, int64_t count, bool round) {
  const int tail = static_cast<int>(count - 16 * (V - 1));
  const __mmask16 last = tail >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << tail) - 1);
  __m512 acc[kRows][V];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  const float* wb = m.weights + b * m.k * kRows;
  for (int64_t c = 0; c < m.k; ++c) {
    const float* xc = x + c * xs;
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
  const int64_t rows = std::min<int64_t>(kRows, m.oc - b * kRows);
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    if (r >= rows) break;
    const int64_t o = b * kRows + r;
    const __m512 bias = _mm512_set1_ps(m.bias[o]);
    for (int v = 0; v < V; ++v) {
      __m512 out = Act::apply(_mm512_add_ps(acc[r][v], bias), m.act);
      if (round) out = round_to_fp16_lanes(out);
      if (v == V - 1) _mm512_mask_storeu_ps(y + o * ys + 16 * v, last, out);
      else _mm512_storeu_ps(y + o * ys + 16 * v, out);
    }
  }
}

template <class Act>
void product_blocks(const RowProduct& m, const float* x, int64_t xs, float* y, int64_t ys, int64_t b0, int64_t b1,
                    int64_t count, bool round) {
  for (int64_t b = b0; b < b1; ++b) {
    if (count > 32) product_block<3, Act>(m, x, xs, y, ys, b, count, round);
    else if (count > 16) product_block<2, Act>(m, x, xs, y, ys, b, count, round);
    else product_block<1, Act>(m, x, xs, y, ys, b, count, round);
  }
}

// Output blocks [b0, b1) of a tile of count <= kTile pixels. The common activations are
// compile-time variants, so that the epilogue has no switch per vector (as in the depthwise
// kernel's rows).
inline void product_blocks(const RowProduct& m, const float* x, int64_t xs, float* y, int64_t ys, int64_t b0, int64_t b1,
                           int64_t count, bool round) {
  with_act_type(m.act.act, [&](auto act) {
    product_blocks<decltype(act)>(m, x, xs, y, ys, b0, b1, count, round);
  });
}

// w[o][k] (an [oc][k] matrix) as [8-channel block][k][8], zero rows past oc.
std::vector<float> pack_row_blocks(const float* w, int64_t oc, int64_t k, int64_t rows) {
  const int64_t blocks = (oc + rows - 1) / rows;
  std::vector<float> packed(static_cast<size_t>(blocks * k * rows), 0.f);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t c = 0; c < k; ++c) packed[static_cast<size_t>(((o / rows) * k + c) * rows + o % rows)] = w[o * k + c];
  return packed;
}

// The pixel tiles of n pixels: of 3 vectors of 16 (kTile), but with no tile of one vector after
// others, which would take as many weight broadcasts as multiply-adds: the last 4 vectors make two
// tiles of 2 (49 pixels: 32 + 17; 112: 48 + 32 + 32).
struct PixelTiles {
  int64_t n = 0, full = 0, count = 0;  // pixels; tiles of kTile pixels; tiles in all
  explicit PixelTiles(int64_t pixels) : n(pixels) {
    const int64_t v = (pixels + 15) / 16;
    full = v >= 4 && v % 3 == 1 ? (v - 4) / 3 : v / 3;
    const int64_t rest = v - 3 * full;  // 0, 1 (one tile in all), 2 or 4 vectors
    count = full + (rest == 4 ? 2 : rest > 0 ? 1 : 0);
  }
  int64_t start(int64_t t) const { return t <= full ? t * kTile : full * kTile + (t - full) * 32; }
  int64_t size(int64_t t) const { return std::min(start(t + 1), n) - start(t); }
};

// `floats` floats of per-run scratch: from the executor's shared scratch (*base is set when it is
// allocated), else in *own.
void request_floats(const KernelContext& ctx, size_t floats, float** base, std::vector<ScratchLine>* own) {
  *base = nullptr;
  request_scratch(ctx, floats * sizeof(float), [base](void* p) { *base = static_cast<float*>(p); }, own);
}

class PointwiseF32 : public Kernel {
 public:
  bool rounds_fp16_outputs() const override { return true; }
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return pw_blocked_io(g, n); }

  Status prepare(const KernelContext& ctx) override {
    if (!pw_geometry(*ctx.graph, *ctx.node, &geo_) || geo_.strided())
      return ORKNN_ERR(kFail, "Conv '%s': not an unstrided 1x1 convolution this kernel handles", ctx.node->name.c_str());
    act_ = read_act_vec(ctx.node->attrs);
    // One pixel: a matrix-vector product, vectorised over the output channels instead (64 per
    // block, as x86_gemv_f32), weights [block][c][64].
    rows_ = geo_.pixels == 1 ? kGemvRows : kRows;
    blocks_ = (geo_.oc + rows_ - 1) / rows_;
    std::vector<float> packed = pack_row_blocks(ctx.in<float>(1), geo_.oc, geo_.c, rows_);
    weights_.clear();
    if (geo_.pixels == 1) gemv_.set(std::move(packed), geo_.c, blocks_);  // fp16 when exact
    else weights_ = std::move(packed);
    bias_.assign(static_cast<size_t>(blocks_ * rows_), 0.f);
    if (ctx.has_input(2)) std::copy(ctx.in<float>(2), ctx.in<float>(2) + geo_.oc, bias_.begin());
    // nChw16c input: per thread, one pixel tile of every channel in NCHW order.
    blocked_in_ = geo_.pixels > 1 && ctx.input_blocked(0);
    tiles_.clear();
    tile_base_ = nullptr;
    if (blocked_in_) request_floats(ctx, static_cast<size_t>(thread_slots(ctx.num_threads) * geo_.c * kTile), &tile_base_, &tiles_);
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
    const PixelTiles pt(geo_.pixels);
    const int64_t tiles = pt.count;
    // Output blocks [b0, b1) of pixel tile t of image n, reading its NCHW rows at xt (stride xs).
    auto tile = [&](int64_t n, int64_t t, const float* xt, int64_t xs, int64_t b0, int64_t b1) {
      float* yt = y + n * geo_.oc * geo_.pixels + pt.start(t);
      product_blocks(rows_product(), xt, xs, yt, geo_.pixels, b0, b1, pt.size(t), ctx.round_fp16);
    };
    if (blocked_in_) {
      // Threads split the pixel tiles: each transposes its own into its slot.
      parallel_ranges(geo_.batch * tiles, nt, [&](int64_t j0, int64_t j1, int slot) {
        float* buf = tile_base_ + static_cast<size_t>(slot) * static_cast<size_t>(geo_.c * kTile);
        for (int64_t j = j0; j < j1; ++j) {
          const int64_t n = j / tiles, t = j % tiles;
          tile_to_nchw(x + n * geo_.c * geo_.pixels, pt.start(t), buf);
          tile(n, t, buf, kTile, 0, blocks_);
        }
      });
      return;
    }
    parallel_ranges(blocks_, nt, [&](int64_t b0, int64_t b1, int) {
      for (int64_t n = 0; n < geo_.batch; ++n)
        for (int64_t t = 0; t < tiles; ++t) tile(n, t, x + n * geo_.c * geo_.pixels + pt.start(t), geo_.pixels, b0, b1);
    });
  }

 private:
  // Output channels [8 b, 8 b + 8) x pixels [0, count) of the tile at x / y, V vectors (the
  // last one masked to count).
  // Pixels [p0, p0 + kTile) (fewer at the end) of one nChw16c image x -> buf as NCHW rows of
  // kTile: per 16-channel block and 16 pixels, one 16 x 16 transpose. Pixels past the image read
  // as 0 (computed and dropped).
  __attribute__((target("avx512f"))) void tile_to_nchw(const float* x, int64_t p0, float* buf) const {
    const int64_t P = geo_.pixels;
    for (int64_t cb = 0; cb < geo_.c / 16; ++cb) {
      const float* xb = x + cb * P * 16;
      for (int64_t g = 0; g < kTile && p0 + g < P; g += 16) {
        __m512 r[16];
        for (int i = 0; i < 16; ++i)
          r[i] = p0 + g + i < P ? _mm512_loadu_ps(xb + (p0 + g + i) * 16) : _mm512_setzero_ps();
        transpose16x16(r);
        for (int l = 0; l < 16; ++l) _mm512_storeu_ps(buf + (cb * 16 + l) * kTile + g, r[l]);
      }
    }
  }

  // One pixel: output channels [64 b, 64 b + 64) of one image, four 16-channel accumulators over
  // the input channels in order.
  __attribute__((target("avx512f"))) void gemv_block(const float* x, float* y, int64_t b, bool round) const {
    __m512 acc[4];
    gemv_.block_sums(x, b, acc);
    for (int v = 0; v < 4; ++v) {
      const int64_t o = b * kGemvRows + 16 * v;
      if (o >= geo_.oc) break;
      const __mmask16 m = geo_.oc - o >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (geo_.oc - o)) - 1);
      __m512 out = apply_act(_mm512_add_ps(acc[v], _mm512_loadu_ps(bias_.data() + o)), act_);
      if (round) out = round_to_fp16_lanes(out);
      _mm512_mask_storeu_ps(y + o, m, out);
    }
  }

  RowProduct rows_product() const { return {weights_.data(), bias_.data(), geo_.c, geo_.oc, act_}; }

  PwGeometry geo_;
  ActVec act_;
  int64_t rows_ = kRows;  // output channels per block: kRows, or kGemvRows for one pixel
  int64_t blocks_ = 0;
  std::vector<float> weights_;  // [block][c][rows_], zero rows past OC (more than one pixel)
  x86::GemvWeights gemv_;       // one pixel: the same as 64-output blocks, fp16 when exact
  std::vector<float> bias_;     // rows_ * blocks_, zero past OC
  bool blocked_in_ = false;     // nChw16c input (more than one pixel)
  float* tile_base_ = nullptr;  // per thread slot, geo_.c * kTile floats: the shared scratch or tiles_
  std::vector<ScratchLine> tiles_;
};

// ---- x86_stem_f32: the stems whose output channels are not a multiple of 16 ----
// shufflenet_v2's 3 -> 24 at 224x224, PP-OCR cls's 3 -> 8: their output never runs blocked, and
// oneDNN computed them on channels-last copies with a reorder either side (shufflenet_v2's: 0.32
// ms for the convolution at 25 GMAC/s and 0.15 ms for its output's reorder, one thread). Here the
// convolution is the row product above over k = (c, kh, kw), the window taps in the weights' own
// order: per tile of up to kTile output pixels of one output row, each tap's input row (the
// pixels' window value, 0 over padding) is gathered into a per-thread buffer, 16 pixels by one
// load (stride 2: the even lanes of two, one permute), masked only where it reaches past the row,
// then the product reads it as x86_pw_f32 reads an NCHW tile and writes NCHW rows. Same numerics
// (k ascending from +0, FMAs).

constexpr int64_t kStemF32MaxTaps = 256;  // the gather buffer of a thread: 256 x kTile floats
// Below this many multiply-adds per thread a second thread costs more than it saves: PP-OCR cls's
// 3 -> 8 stem (0.5 M) took 28 us on two threads against 22 on one.
constexpr int64_t kStemMinMacsPerThread = 1024 * 1024;

bool supports_stem_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  StemGeometry geo;
  if (!stem_geometry(g, n, &geo) || geo.sw > 2 || geo.kh * geo.kw * geo.c > kStemF32MaxTaps) return false;
  const Tensor* b = g.input(n, 2);
  if (!is_f32(g.input(n, 0)) || !is_f32(g.input(n, 1)) || (b && !is_f32(b)) || !is_f32(&g.tensor(n.outputs[0])))
    return false;
  if (b && (!b->is_const() || b->numel() != geo.oc)) return false;
  // Output channel counts that are multiples of 16 run blocked on oneDNN (mobilenet_v2's 3 -> 32
  // at 58 GMAC/s), which an NCHW output here would undo for the layers after it.
  return geo.oc % 16 != 0;
}

class StemF32 : public Kernel {
 public:
  bool rounds_fp16_outputs() const override { return true; }

  Status prepare(const KernelContext& ctx) override {
    if (!stem_geometry(*ctx.graph, *ctx.node, &geo_) || geo_.sw > 2)
      return ORKNN_ERR(kFail, "Conv '%s': not a stem convolution this kernel handles", ctx.node->name.c_str());
    taps_ = geo_.kh * geo_.kw * geo_.c;
    act_ = read_act_vec(ctx.node->attrs);
    weights_ = pack_row_blocks(ctx.in<float>(1), geo_.oc, taps_, kRows);  // [oc][c][kh][kw] = [oc][tap]
    blocks_ = (geo_.oc + kRows - 1) / kRows;
    bias_.assign(static_cast<size_t>(blocks_ * kRows), 0.f);
    if (ctx.has_input(2)) std::copy(ctx.in<float>(2), ctx.in<float>(2) + geo_.oc, bias_.begin());
    slots_ = thread_slots(ctx.num_threads);
    request_floats(ctx, static_cast<size_t>(slots_ * taps_ * kTile), &base_, &own_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const int64_t rows = geo_.batch * geo_.oh, out_plane = geo_.oh * geo_.ow;
    const int nt = std::min(threads_for(rows * geo_.ow * taps_ * geo_.oc, kStemMinMacsPerThread, ctx.num_threads), slots_);
    const RowProduct m{weights_.data(), bias_.data(), taps_, geo_.oc, act_};
    const PixelTiles pt(geo_.ow);  // of each output row
    parallel_ranges(rows, nt, [&](int64_t r0, int64_t r1, int slot) {
      float* buf = base_ + static_cast<size_t>(slot) * static_cast<size_t>(taps_ * kTile);
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / geo_.oh, oh = r % geo_.oh;
        for (int64_t t = 0; t < pt.count; ++t) {
          const int64_t ow0 = pt.start(t), count = pt.size(t);
          gather(x + n * geo_.c * geo_.h * geo_.w, oh, ow0, count, buf);
          product_blocks(m, buf, kTile, y + n * geo_.oc * out_plane + oh * geo_.ow + ow0, out_plane, 0, blocks_, count,
                         ctx.round_fp16);
        }
      }
    });
  }

 private:
  // Lanes l of 16 with 0 <= i0 + l < n.
  static __mmask16 inside(int64_t i0, int64_t n) {
    const int64_t lo = std::max<int64_t>(0, -i0), hi = std::min<int64_t>(16, n - i0);
    return hi <= lo ? __mmask16(0) : static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
  }

  // Output pixels [ow0, ow0 + count) of output row oh: buf[tap][p] = the pixel's input under the
  // tap (c, i, j), 0 over padding; whole vectors of 16 pixels (those past count are dropped).
  __attribute__((target("avx512f"))) void gather(const float* xn, int64_t oh, int64_t ow0, int64_t count,
                                                 float* buf) const {
    const StemGeometry& g = geo_;
    const int64_t vectors = (count + 15) / 16;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t ih = oh * g.sh - g.pt + i;
        for (int64_t j = 0; j < g.kw; ++j) {
          float* dst = buf + ((c * g.kh + i) * g.kw + j) * kTile;
          if (ih < 0 || ih >= g.h) {  // a padding row
            for (int64_t v = 0; v < vectors; ++v) _mm512_storeu_ps(dst + 16 * v, _mm512_setzero_ps());
            continue;
          }
          // Masked lanes are not read, so the addresses before and past the row are never touched.
          const float* row = xn + (c * g.h + ih) * g.w;
          for (int64_t v = 0; v < vectors; ++v) {
            const int64_t iw0 = (ow0 + 16 * v) * g.sw - g.pl + j;  // pixel 16 v's input column
            __m512 val;
            if (iw0 >= 0 && iw0 + 16 * g.sw <= g.w) {  // inside the row: no masks
              val = _mm512_loadu_ps(row + iw0);
              if (g.sw == 2) val = _mm512_permutex2var_ps(val, even, _mm512_loadu_ps(row + iw0 + 16));
            } else {
              val = _mm512_maskz_loadu_ps(inside(iw0, g.w), row + iw0);
              if (g.sw == 2)
                val = _mm512_permutex2var_ps(val, even, _mm512_maskz_loadu_ps(inside(iw0 + 16, g.w), row + iw0 + 16));
            }
            _mm512_storeu_ps(dst + 16 * v, val);
          }
        }
      }
  }

  StemGeometry geo_;
  ActVec act_;
  int64_t taps_ = 0, blocks_ = 0;
  std::vector<float> weights_;  // [block][tap][kRows]
  std::vector<float> bias_;     // blocks_ * kRows, zero past oc
  int slots_ = 1;
  float* base_ = nullptr;       // per thread slot, taps_ * kTile floats: the shared scratch or own_
  std::vector<ScratchLine> own_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "x86_pw_f32", kPrioritySpecialized, supports_pw_f32, PointwiseF32);
ORKNN_REGISTER_KERNEL(Conv, "x86_stem_f32", kPrioritySpecialized, supports_stem_f32, StemF32);

}  // namespace orknn
