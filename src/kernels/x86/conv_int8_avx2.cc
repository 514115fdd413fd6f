// INT8 2-D convolution for x86 CPUs without an int8 dot-product instruction (AVX2, no VNNI): AMD
// Zen 1-3, Intel client CPUs before Alder Lake. There, oneDNN multiplies u8 x s8 with vpmaddubsw,
// which saturates pairs of products at int16, so its INT8 kernels decline every node
// (onednn/int8_common.h) and, without this kernel, INT8 models ran on the scalar reference kernel
// (resnet18: ~4 s per frame).
//
// How: each image is first written as a zero-padded channels-last int16 buffer of x - zp_x
// (|x - zp_x| <= 255; padding taps become 0, which is the spec's "taps outside the input do not
// count"). Then
//   * general case (any group with more than one input or output channel per group): output
//     channels in blocks of 16 (two int32 vectors), pixels in register blocks of 6 along an output
//     row; for every window tap and pair of input channels, vpmaddwd multiplies the broadcast pair
//     (x[c], x[c+1]) of a pixel by the pairs (w[o][c], w[o][c+1]) of 16 output channels and adds
//     both products into int32 lanes. 12 accumulators stay in registers over the whole window.
//   * depthwise (one input and one output channel per group): channels in vectors of 8 int32,
//     pixels in blocks of 4, one vpmulld per tap.
// The int32 sums are exact (the products are exact, infer bounds |acc| by INT32_MAX, so no sum
// wraps), so the result is bit-exact with ref_int8: the accumulators + bias go through
// x86::requant_to_planar / requant_rows, the spec's requantization (docs/numerics.md), into the
// output.
//
// Handles: quantized 2-D Conv (is_q8_conv_form, value activations included), any group, stride,
// dilation and padding; input
// and output each NCHW or channels-last (the runtime's INT8 blocked layout). Priority below
// oneDNN's and the AVX-512 kernels (kPriorityFallback): on CPUs with VNNI those take the nodes
// they accept, and this kernel only the rest.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/ref/nchw.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/int8_requant.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

#define ORKNN_AVX2 __attribute__((target("avx2")))

constexpr int64_t kOcBlock = 16;  // output channels per register block (two vectors of 8 int32)
constexpr int kPixBlock = 6;      // output pixels per register block (general case)
constexpr int kDwPixBlock = 4;    // output pixels per register block (depthwise)
constexpr int64_t kDwLanes = 8;   // channels per int32 vector (depthwise)
constexpr int64_t kBandPixels = 64;  // output rows per job: at least this many pixels (whole rows)

bool supports_conv_int8_avx2(const Graph& g, const Node& n) {
  return x86::cpu_avx2() && is_q8_conv2d(g, n, /*value_act=*/true);
}

struct Geometry {
  int64_t batch = 0, c = 0, oc = 0, group = 1, cg = 0, ocg = 0;  // cg, ocg: channels per group
  int64_t h = 0, w = 0, oh = 0, ow = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  int64_t hp = 0, wp = 0;  // padded input buffer: rows, pixels per row
  int64_t cgp = 0;         // channels of a group in the buffer (even: whole pairs; depthwise: 1)
  int64_t ctot = 0;        // channels per buffer pixel (depthwise: c rounded up to kDwLanes)
  bool depthwise = false;
};

Geometry geometry(const KernelContext& ctx) {
  const ConvShape s = read_conv_shape(ctx);
  Geometry g;
  g.batch = s.batch;
  g.c = s.in_ch;
  g.oc = s.out_ch;
  g.group = s.group;
  g.cg = g.c / g.group;
  g.ocg = g.oc / g.group;
  // 2-D: spatial slots 1 (H) and 2 (W) of SpatialGeometry.
  g.h = s.s.in[1];
  g.w = s.s.in[2];
  g.oh = s.s.out[1];
  g.ow = s.s.out[2];
  g.kh = s.s.kernel[1];
  g.kw = s.s.kernel[2];
  g.sh = s.s.stride[1];
  g.sw = s.s.stride[2];
  g.dh = s.s.dilation[1];
  g.dw = s.s.dilation[2];
  g.pt = s.s.pad_begin[1];
  g.pl = s.s.pad_begin[2];
  // Rows/columns the windows reach, from the top-left padding on (pads past the last window are
  // never read; an input larger than the windows reach is copied all the same).
  g.hp = std::max(g.pt + g.h, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1);
  g.wp = std::max(g.pl + g.w, (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1);
  g.depthwise = g.cg == 1 && g.ocg == 1;
  g.cgp = g.depthwise ? 1 : (g.cg + 1) / 2 * 2;
  g.ctot = g.depthwise ? (g.c + kDwLanes - 1) / kDwLanes * kDwLanes : g.group * g.cgp;
  return g;
}

// Channels [ch, ch + 8) x pixels [ix, ix + 16) of one input row (rows of stride `plane` from src)
// into the padded row: dst[pixel * ctot + channel] = x - zp, as a byte transpose (unpacks of
// rows, then pairs, then quads) and widenings to int16.
ORKNN_AVX2 void transpose_8x16(const int8_t* src, int64_t plane, int16_t* dst, int64_t ctot, __m128i zp) {
  __m128i r[8], a[8], b[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * plane));
  for (int i = 0; i < 4; ++i) {  // a[2i]: pixels 0-7, a[2i+1]: pixels 8-15 of channels 2i, 2i+1
    a[2 * i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {  // b[4h + q]: pixels 4q..4q+3 of channels 4h..4h+3
    b[4 * h + 0] = _mm_unpacklo_epi16(a[4 * h], a[4 * h + 2]);
    b[4 * h + 1] = _mm_unpackhi_epi16(a[4 * h], a[4 * h + 2]);
    b[4 * h + 2] = _mm_unpacklo_epi16(a[4 * h + 1], a[4 * h + 3]);
    b[4 * h + 3] = _mm_unpackhi_epi16(a[4 * h + 1], a[4 * h + 3]);
  }
  for (int q = 0; q < 4; ++q) {  // pixels 4q..4q+3, 8 channels each
    const __m128i lo = _mm_unpacklo_epi32(b[q], b[4 + q]), hi = _mm_unpackhi_epi32(b[q], b[4 + q]);
    const __m128i px[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
    for (int k = 0; k < 4; ++k)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (4 * q + k) * ctot),
                       _mm_sub_epi16(_mm_cvtepi8_epi16(px[k]), zp));
  }
}

// Pixels [0, n) of channels [0, c8) (a multiple of 8) from src (channel stride `plane`, pixels
// contiguous) into dst (pixel stride ctot): 16-pixel blocks, the last one overlapping its
// predecessor when n is not a multiple of 16 (it writes the same values again). n >= 16.
ORKNN_AVX2 void transpose_run(const int8_t* src, int64_t plane, int64_t n, int64_t c8, int16_t* dst, int64_t ctot,
                              __m128i zp) {
  for (int64_t ch = 0; ch < c8; ch += 8)
    for (int64_t ix = 0; ix < n; ix += 16) {
      const int64_t at = std::min(ix, n - 16);
      transpose_8x16(src + ch * plane + at, plane, dst + at * ctot + ch, ctot, zp);
    }
}

// One image, padded rows [r0, r1): xp[(row * wp + col) * ctot + group * cgp + ci] = x - zp_x, zero
// in the padding and in the channels past each group's (and past c).
// n int8 values minus zp as int16.
ORKNN_AVX2 void widen_run(const int8_t* src, int64_t n, int16_t* dst, int32_t zp) {
  const __m256i zpv = _mm256_set1_epi16(static_cast<int16_t>(zp));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))), zpv));
  for (; i < n; ++i) dst[i] = static_cast<int16_t>(src[i] - zp);
}

// `nhwc`: the input is channels-last (the runtime's INT8 blocked layout), else NCHW.
ORKNN_AVX2 void fill_padded_rows(const Geometry& g, const int8_t* x, bool nhwc, int32_t zp, int64_t r0, int64_t r1,
                                 int16_t* xp) {
  const int64_t row_elems = g.wp * g.ctot, plane = g.h * g.w;
  // Channel ch at buffer channel ch (one group, depthwise, or groups of whole pairs): 8x16 blocks.
  const bool contiguous = g.group == 1 || g.depthwise || g.cg == g.cgp;
  const int64_t vec_c = contiguous ? g.c / 8 * 8 : 0;
  const __m128i zpv = _mm_set1_epi16(static_cast<int16_t>(zp));
  // Rows of the input that are whole buffer rows (no left/right padding) are one pixel run.
  const bool rows_are_runs = g.pl == 0 && g.wp == g.w;
  const bool zero_whole_rows = !contiguous || g.ctot != g.c;  // channel padding inside pixels
  const int64_t in0 = std::max(r0, g.pt), in1 = std::min(r1, g.pt + g.h);  // rows holding input
  for (int64_t r = r0; r < r1; ++r) {
    int16_t* row = xp + r * row_elems;
    if (r < in0 || r >= in1 || zero_whole_rows) {
      std::memset(row, 0, static_cast<size_t>(row_elems) * sizeof(int16_t));
    } else {
      std::memset(row, 0, static_cast<size_t>(g.pl * g.ctot) * sizeof(int16_t));
      std::memset(row + (g.pl + g.w) * g.ctot, 0, static_cast<size_t>((g.wp - g.pl - g.w) * g.ctot) * sizeof(int16_t));
    }
  }
  if (in0 >= in1) return;
  auto fill = [&](int64_t iy, int64_t n) {  // n pixels from input row iy on
    if (nhwc) {  // pixels' channels are contiguous on both sides: a widening copy
      const int8_t* src = x + iy * g.w * g.c;
      int16_t* dst = xp + ((iy + g.pt) * g.wp + g.pl) * g.ctot;
      if (!contiguous) {
        for (int64_t ix = 0; ix < n; ++ix)
          for (int64_t ch = 0; ch < g.c; ++ch)
            dst[ix * g.ctot + (ch / g.cg) * g.cgp + ch % g.cg] = static_cast<int16_t>(src[ix * g.c + ch] - zp);
      } else if (g.ctot == g.c) {
        widen_run(src, n * g.c, dst, zp);
      } else {
        for (int64_t ix = 0; ix < n; ++ix) widen_run(src + ix * g.c, g.c, dst + ix * g.ctot, zp);
      }
      return;
    }
    const int8_t* src0 = x + iy * g.w;
    int16_t* dst0 = xp + ((iy + g.pt) * g.wp + g.pl) * g.ctot;
    const int64_t c8 = n >= 16 ? vec_c : 0;
    if (c8 > 0) transpose_run(src0, plane, n, c8, dst0, g.ctot, zpv);
    for (int64_t ch = c8; ch < g.c; ++ch) {
      const int8_t* src = src0 + ch * plane;
      int16_t* dst = dst0 + (ch / g.cg) * g.cgp + ch % g.cg;
      for (int64_t ix = 0; ix < n; ++ix) dst[ix * g.ctot] = static_cast<int16_t>(src[ix] - zp);
    }
  };
  if (rows_are_runs) {
    fill(in0 - g.pt, (in1 - in0) * g.w);
  } else {
    for (int64_t r = in0; r < in1; ++r) fill(r - g.pt, g.w);
  }
}

// The part of the window one pass of conv_block covers: taps [t0, t1), pairs [k0, k1) of each.
struct KChunk {
  int64_t t0, t1, k0, k1;
  bool first;  // the first chunk starts from 0, the others add to the stored accumulators
};

// General case, NP pixels of one output row x 16 output channels of one group, over one chunk of
// the window. x0: the first pixel's window origin in the padded buffer (group offset included),
// xstep: elements between neighbouring output pixels; w: the block's packed weights,
// [tap][pair][16][2] int16. acc: NP rows of 16 int32 (channels-last).
template <int NP>
ORKNN_AVX2 void conv_block(const Geometry& g, const int16_t* x0, int64_t xstep, const int16_t* w, const KChunk& kc,
                           int32_t* acc) {
  __m256i a[NP][2];
  for (int p = 0; p < NP; ++p)
    for (int h = 0; h < 2; ++h)
      a[p][h] = kc.first ? _mm256_setzero_si256()
                         : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + p * kOcBlock + 8 * h));
  const int64_t pairs = g.cgp / 2;
  for (int64_t t = kc.t0; t < kc.t1; ++t) {
    const int64_t ky = t / g.kw, kx = t % g.kw;
    const int16_t* xs = x0 + (ky * g.dh * g.wp + kx * g.dw) * g.ctot;
    const int16_t* wt = w + (t * pairs + kc.k0) * 2 * kOcBlock;
    for (int64_t k = kc.k0; k < kc.k1; ++k, wt += 2 * kOcBlock) {
      const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt));
      const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt + kOcBlock));
#pragma GCC unroll 6
      for (int p = 0; p < NP; ++p) {
        int32_t pair;
        std::memcpy(&pair, xs + p * xstep + 2 * k, sizeof(pair));
        const __m256i xb = _mm256_set1_epi32(pair);
        a[p][0] = _mm256_add_epi32(a[p][0], _mm256_madd_epi16(xb, w0));
        a[p][1] = _mm256_add_epi32(a[p][1], _mm256_madd_epi16(xb, w1));
      }
    }
  }
  for (int p = 0; p < NP; ++p) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + p * kOcBlock), a[p][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + p * kOcBlock + 8), a[p][1]);
  }
}

// Depthwise, NP pixels of one output row x 8 channels [c0, c0 + 8). w: [tap][ctot] int32.
// acc: NP rows of ctot int32 (channels-last), lanes c0..c0+7 written.
template <int NP>
ORKNN_AVX2 void dw_block(const Geometry& g, const int16_t* x0, int64_t xstep, const int32_t* w, int32_t* acc) {
  __m256i a[NP];
  for (int p = 0; p < NP; ++p) a[p] = _mm256_setzero_si256();
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int64_t kx = 0; kx < g.kw; ++kx, w += g.ctot) {
      const int16_t* xs = x0 + (ky * g.dh * g.wp + kx * g.dw) * g.ctot;
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
#pragma GCC unroll 4
      for (int p = 0; p < NP; ++p) {
        const __m256i xv = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xs + p * xstep)));
        a[p] = _mm256_add_epi32(a[p], _mm256_mullo_epi32(xv, wv));
      }
    }
  for (int p = 0; p < NP; ++p) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + p * g.ctot), a[p]);
}

// Calls fn.template operator()<NP>(ox) for register blocks of up to NMAX pixels covering [0, n).
template <int NMAX, class Fn>
void for_pixel_blocks(int64_t n, Fn&& fn) {
  int64_t ox = 0;
  for (; ox + NMAX <= n; ox += NMAX) fn(std::integral_constant<int, NMAX>(), ox);
  switch (n - ox) {
    case 5: if constexpr (NMAX > 5) fn(std::integral_constant<int, 5>(), ox); break;
    case 4: if constexpr (NMAX > 4) fn(std::integral_constant<int, 4>(), ox); break;
    case 3: fn(std::integral_constant<int, 3>(), ox); break;
    case 2: fn(std::integral_constant<int, 2>(), ox); break;
    case 1: fn(std::integral_constant<int, 1>(), ox); break;
    default: break;
  }
}

class ConvInt8Avx2 : public Kernel {
 public:
  // Input and output each NCHW or channels-last: a channels-last input is a widening copy instead
  // of a transpose, a channels-last output a row store instead of one.
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kEach; }

  Status prepare(const KernelContext& ctx) override {
    if (!supports_conv_int8_avx2(*ctx.graph, *ctx.node))
      return ORKNN_ERR(kFail, "Conv '%s': not a quantized 2-D convolution this kernel handles", ctx.node->name.c_str());
    g_ = geometry(ctx);
    in_nhwc_ = ctx.input_blocked(0);
    out_nhwc_ = ctx.output_blocked(0);
    const QuantScalar qx = per_tensor(ctx.in_tensor(0));
    zp_x_ = qx.zp;
    const Int8Output out = int8_output(qx.scale, ctx.in_tensor(1).quant, ctx.out_tensor(0), ctx.node->attrs, g_.oc);
    mult_ = out.mult;
    zp_y_ = out.zp_y;
    lo_ = out.clamp.lo;
    hi_ = out.clamp.hi;
    act_ = out.act;
    inv_s_y_ = out.inv_s_y;
    bias_.assign(static_cast<size_t>(g_.oc), 0);
    if (ctx.has_input(2)) std::copy(ctx.in<int32_t>(2), ctx.in<int32_t>(2) + g_.oc, bias_.begin());
    pack_weights(ctx.in<int8_t>(1));
    plan_chunks();
    slots_ = thread_slots(ctx.num_threads);
    // A job's output rows are contiguous in NCHW, so a band of them is one requantization over
    // band * ow pixels (vector blocks of 16 pixels; single rows of small images waste most lanes).
    band_ = std::min(g_.oh, (kBandPixels + g_.ow - 1) / g_.ow);
    bands_ = (g_.oh + band_ - 1) / band_;
    acc_row_ = band_ * g_.ow * (g_.depthwise ? g_.ctot : kOcBlock);
    // The padded image and the accumulator bands: from the executor's shared scratch when there is
    // one (every element is written in a run before it is read, so no content is expected).
    const size_t padded_bytes = (static_cast<size_t>(g_.hp * g_.wp * g_.ctot) * sizeof(int16_t) + 63) / 64 * 64;
    const size_t bytes = padded_bytes + static_cast<size_t>(slots_ * acc_row_) * sizeof(int32_t);
    auto bind = [this, padded_bytes](void* base) {
      padded_ = static_cast<int16_t*>(base);
      acc_ = reinterpret_cast<int32_t*>(static_cast<uint8_t*>(base) + padded_bytes);
    };
    request_scratch(ctx, bytes, bind, &own_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    const int nt = std::min(std::max(1, ctx.num_threads), slots_);
    const int64_t in_image = g_.c * g_.h * g_.w, out_plane = g_.oh * g_.ow, out_image = g_.oc * out_plane;
    const int64_t padded_elems = g_.hp * g_.wp * g_.ctot;
    for (int64_t b = 0; b < g_.batch; ++b) {
      const int8_t* xb = x + b * in_image;
      int8_t* yb = y + b * out_image;
      parallel_ranges(g_.hp, threads_for(padded_elems, kMinPassElementsPerThread, nt),
                      [&](int64_t r0, int64_t r1, int) { fill_padded_rows(g_, xb, in_nhwc_, zp_x_, r0, r1, padded_); });
      if (g_.depthwise) {
        parallel_ranges(bands_, nt, [&](int64_t j0, int64_t j1, int slot) {
          for (int64_t j = j0; j < j1; ++j) depthwise_band(j * band_, acc_ + slot * acc_row_, yb);
        });
      } else {
        // Jobs ordered (group, channel block, band): neighbouring jobs share the block's weights.
        const int64_t blocks = (g_.ocg + kOcBlock - 1) / kOcBlock;
        parallel_ranges(g_.group * blocks * bands_, nt, [&](int64_t j0, int64_t j1, int slot) {
          for (int64_t j = j0; j < j1; ++j)
            general_band(j / (blocks * bands_), (j / bands_) % blocks, (j % bands_) * band_,
                         acc_ + slot * acc_row_, yb);
        });
      }
    }
  }

 private:
  Geometry g_;
  int32_t zp_x_ = 0, zp_y_ = 0, lo_ = -128, hi_ = 127;
  FusedActivation act_;  // a value activation (docs/numerics.md), or none
  float inv_s_y_ = 1.f;
  std::vector<float> mult_;
  std::vector<int32_t> bias_;
  std::vector<int16_t> wpack_;   // general: [group][block][tap][pair][16][2]
  std::vector<int32_t> wdw_;     // depthwise: [tap][ctot]
  std::vector<ScratchLine> own_;        // the buffers below when the executor has no shared scratch
  int16_t* padded_ = nullptr;    // one image, padded, channels-last (fill_padded_rows)
  bool in_nhwc_ = false, out_nhwc_ = false;  // the runtime keeps that activation channels-last
  int32_t* acc_ = nullptr;       // per thread slot: one band of output rows of accumulators
  int64_t band_ = 1, bands_ = 1;  // output rows per job, jobs per image and channel block
  int64_t acc_row_ = 0;
  int slots_ = 1;

  std::vector<KChunk> chunks_;   // general case: the window in parts whose weights fit in L1

  int64_t block_elems() const { return g_.kh * g_.kw * g_.cgp * kOcBlock; }

  // A block's weights are 64 bytes per pair of input channels and tap. Whole, they outgrow L1 from
  // a few hundred pairs on (3x3 x 512 channels: 147 KB) and every 6-pixel block then streams them
  // from L2, which caps the products at L2's bandwidth. So the window is covered in chunks of at
  // most kChunkPairs pairs (whole taps while they fit), each over all pixels of the band.
  void plan_chunks() {
    constexpr int64_t kChunkPairs = 256;  // 16 KB of weights
    const int64_t taps = g_.kh * g_.kw, pairs = g_.cgp / 2;
    chunks_.clear();
    if (g_.depthwise) return;
    if (pairs <= kChunkPairs) {
      const int64_t per = std::max<int64_t>(1, kChunkPairs / pairs);
      for (int64_t t = 0; t < taps; t += per) chunks_.push_back({t, std::min(taps, t + per), 0, pairs, t == 0});
    } else {
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t k = 0; k < pairs; k += kChunkPairs)
          chunks_.push_back({t, t + 1, k, std::min(pairs, k + kChunkPairs), t == 0 && k == 0});
    }
  }

  void pack_weights(const int8_t* w) {
    const int64_t taps = g_.kh * g_.kw;
    if (g_.depthwise) {
      wdw_.assign(static_cast<size_t>(taps * g_.ctot), 0);
      for (int64_t c = 0; c < g_.c; ++c)
        for (int64_t t = 0; t < taps; ++t) wdw_[static_cast<size_t>(t * g_.ctot + c)] = w[c * taps + t];
      return;
    }
    // Element (o, ci, tap) of group gr goes to block o / 16, tap, pair ci / 2, lane o % 16, half ci % 2.
    const int64_t blocks = (g_.ocg + kOcBlock - 1) / kOcBlock;
    wpack_.assign(static_cast<size_t>(g_.group * blocks * block_elems()), 0);
    for (int64_t gr = 0; gr < g_.group; ++gr)
      for (int64_t o = 0; o < g_.ocg; ++o)
        for (int64_t ci = 0; ci < g_.cg; ++ci)
          for (int64_t t = 0; t < taps; ++t) {
            const int64_t dst = (gr * blocks + o / kOcBlock) * block_elems() +
                                ((t * g_.cgp / 2 + ci / 2) * kOcBlock + o % kOcBlock) * 2 + ci % 2;
            wpack_[static_cast<size_t>(dst)] = w[((gr * g_.ocg + o) * g_.cg + ci) * taps + t];
          }
  }

  x86::RequantParams requant_params(int64_t c0) const {
    x86::RequantParams p;
    p.comp = bias_.data() + c0;
    p.mult = mult_.data() + c0;
    p.zp = zp_y_;
    p.lo = lo_;
    p.hi = hi_;
    p.act = act_.act;
    p.alpha = act_.alpha;
    p.beta = act_.beta;
    p.inv_s_y = inv_s_y_;
    return p;
  }

  // Output rows [oy0, oy0 + band) of channel block blk of group gr.
  void general_band(int64_t gr, int64_t blk, int64_t oy0, int32_t* acc, int8_t* yb) const {
    const int64_t blocks = (g_.ocg + kOcBlock - 1) / kOcBlock;
    const int16_t* w = wpack_.data() + (gr * blocks + blk) * block_elems();
    const int64_t xstep = g_.sw * g_.ctot, rows = std::min(band_, g_.oh - oy0);
    for (const KChunk& kc : chunks_)
      for (int64_t r = 0; r < rows; ++r) {
        const int16_t* row = padded_ + (oy0 + r) * g_.sh * g_.wp * g_.ctot + gr * g_.cgp;
        int32_t* acc_row = acc + r * g_.ow * kOcBlock;
        for_pixel_blocks<kPixBlock>(g_.ow, [&](auto np, int64_t ox) {
          conv_block<decltype(np)::value>(g_, row + ox * xstep, xstep, w, kc, acc_row + ox * kOcBlock);
        });
      }
    const int64_t c0 = gr * g_.ocg + blk * kOcBlock;
    const int64_t nc = std::min(kOcBlock, g_.ocg - blk * kOcBlock);
    const int64_t plane = g_.oh * g_.ow;
    if (out_nhwc_)
      x86::requant_rows(acc, rows * g_.ow, nc, kOcBlock, yb + oy0 * g_.ow * g_.oc + c0, g_.oc, requant_params(c0));
    else
      x86::requant_to_planar(acc, rows * g_.ow, nc, kOcBlock, yb + c0 * plane + oy0 * g_.ow, plane, requant_params(c0));
  }

  void depthwise_band(int64_t oy0, int32_t* acc, int8_t* yb) const {
    const int64_t xstep = g_.sw * g_.ctot, rows = std::min(band_, g_.oh - oy0);
    for (int64_t r = 0; r < rows; ++r) {
      const int16_t* row = padded_ + (oy0 + r) * g_.sh * g_.wp * g_.ctot;
      int32_t* acc_row = acc + r * g_.ow * g_.ctot;
      // Channels innermost: a block's pixels stay in L1 over all channels.
      for_pixel_blocks<kDwPixBlock>(g_.ow, [&](auto np, int64_t ox) {
        for (int64_t c0 = 0; c0 < g_.c; c0 += kDwLanes)
          dw_block<decltype(np)::value>(g_, row + ox * xstep + c0, xstep, wdw_.data() + c0,
                                        acc_row + ox * g_.ctot + c0);
      });
    }
    const int64_t plane = g_.oh * g_.ow;
    if (out_nhwc_)
      x86::requant_rows(acc, rows * g_.ow, g_.c, g_.ctot, yb + oy0 * g_.ow * g_.c, g_.c, requant_params(0));
    else
      x86::requant_to_planar(acc, rows * g_.ow, g_.c, g_.ctot, yb + oy0 * g_.ow, plane, requant_params(0));
  }
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "x86_conv_int8_avx2", kPriorityFallback, supports_conv_int8_avx2, ConvInt8Avx2);

}  // namespace orknn
