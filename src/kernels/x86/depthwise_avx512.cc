// Hand-written AVX-512 depthwise Conv in NCHW, float32 and INT8 (docs/kernels.md: depthwise
// convolution reaches under 10% of peak in the libraries, and mobile networks are dominated by it).
//
// Handles: 2-D Conv with group == C_in == C_out (channel multiplier 1), kernel 3x3, 3x5, 5x3 or
// 5x5, strides 1 or 2 per axis, any non-negative pads, dilation 1, constant weights (and bias),
// output width >= 24 (narrower planes are faster on oneDNN: see g_min_output_width) or, float,
// a channel count that is not a multiple of 16.
// Float: fused activation none/Relu/Clip/LeakyRelu/HardSwish/HardSigmoid (Sigmoid stays on
// oneDNN). INT8: the quantized forms the reference accepts (fused none/Relu/Clip, or a value
// activation applied before the requantization's rounding, docs/numerics.md).
//
// Layout of the work. One (n, c) plane at a time, planes split over the OpenMP threads
// (ctx.num_threads). Each plane is first copied into a per-thread scratch holding the padded
// input (padding materialised as zeros) split into sh * sw "phase planes":
//   phase (rp, cp)[i][j] = padded[i * sh + rp][j * sw + cp],   each R rows of P columns,
// with P = OW + (KW - 1) / sw and R = OH + (KH - 1) / sh. Tap (kh, kw) of output (oh, ow) is then
// phase (kh % sh, kw % sw) at [oh + kh / sh][ow + kw / sw]: for the flat index o = oh * P + ow
// every tap is the same plain load at o + off[tap]. So the kernel computes 16 consecutive flat
// outputs per vector over the whole plane (4 vectors in flight), whatever the plane's width: no
// per-row tails. The P - OW columns of each
// flat row past the output width are computed and dropped: each vector's valid lanes are
// compressed together and stored contiguously (flat order is y's row-major order).
// The scratch is zeroed once at prepare; each plane's copy writes the same input positions, so
// the padding stays zero. Each thread has two scratch buffers: the next plane is copied before
// the current one is computed.
//
// Numerics.
// Float: bit-identical to the reference kernel (kernels/ref/conv.cc): the accumulator starts at
//   +0, taps are added in row-major order with a separate multiply and add (no FMA; the build
//   uses -ffp-contract=off). The reference skips padding taps; here they add 0 * w = +-0, which
//   leaves any sum unchanged (an accumulator starting at +0 never becomes -0, and w is required
//   finite). Then + bias, then the activation with the reference's comparisons in the same order.
// INT8: the scratch holds float(x - zp_x) (exact, |.| <= 255) and the weights float(w). Every
//   product is exact (< 2^16) and every partial sum of at most 25 such products is an integer
//   below 2^24, so the float accumulation (fused multiply-adds here) IS the exact integer sum, in
//   any order. Then
//   acc = sum + bias_q[c] in int32 and y = clamp(sat8(rne(float(acc) * M[c]) + zp_y)) exactly as
//   docs/numerics.md and x86::requant_one (kernels/x86/int8_requant.h) specify, NaN -> zp_y and v
//   clamped to [-512, 512] before the conversion as rne_add_zp_sat8 does. Bit-exact against
//   ref_int8 (tests/ops/depthwise_x86_test.cc).
//
// Compiled with function target attributes (the library targets baseline x86-64); supports()
// checks the CPU at run time. Registered at priority 20, above the oneDNN kernels (10), which
// keep every depthwise form declined here.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

// GCC 12 reports the _mm512_undefined_*() placeholders inside its own intrinsics as
// "may be used uninitialized" (a known false positive of those headers).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"
#include "kernels/x86/int8_requant.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

constexpr int64_t kLanes = 16;
constexpr int kMaxBlocks = 4;  // output vectors computed together (independent add chains)

// Geometry of a depthwise node after infer (explicit kernel_shape, strides, pads, dilations).
struct DwGeometry {
  int64_t batch = 0, channels = 0, h = 0, w = 0, oh = 0, ow = 0;
  int kh = 0, kw = 0, sh = 1, sw = 1;
  int64_t pad_t = 0, pad_l = 0;
  // Phase planes of the scratch (see the top of the file): P columns, R rows; `plane` is the
  // distance between planes, R * P plus a gap that takes the unmasked stores of the copy.
  int64_t p = 0, r = 0, plane = 0;
  int64_t flat = 0;                 // OH * P flat outputs
  int64_t flat_vecs = 0;            // ceil(flat / 16)
  int64_t scratch_floats = 0;       // sh * sw planes + slack for the last vector's reads
  int64_t off[25] = {};             // tap (row-major) -> offset of its load from the flat index
};

// The node is a depthwise 2-D Conv of the handled class; fills *geo. Dtypes are checked by the
// float / int8 supports().
bool dw_geometry(const Graph& g, const Node& n, DwGeometry* geo) {
  if (n.op != OpId::Conv || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1 || n.outputs[0] < 0)
    return false;
  const Tensor* x = g.input(n, 0);
  const Tensor* w = g.input(n, 1);
  if (!x || !w || !w->is_const()) return false;
  if (w->data.size < w->nbytes()) return false;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x->shape.size() != 4 || w->shape.size() != 4 || y.shape.size() != 4) return false;
  const int64_t c = x->shape[1];
  const int64_t group = n.attrs.get_int("group", 1);
  if (group != c || y.shape[1] != c || w->shape[0] != c || w->shape[1] != 1) return false;  // multiplier 1
  if (x->shape[0] != y.shape[0]) return false;
  const int64_t kh = w->shape[2], kw = w->shape[3];
  if ((kh != 3 && kh != 5) || (kw != 3 && kw != 5)) return false;
  const std::vector<int64_t> ks = n.attrs.get_ints("kernel_shape", {kh, kw});
  const std::vector<int64_t> st = n.attrs.get_ints("strides", {1, 1});
  const std::vector<int64_t> dil = n.attrs.get_ints("dilations", {1, 1});
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", {0, 0, 0, 0});
  if (ks.size() != 2 || ks[0] != kh || ks[1] != kw) return false;
  if (st.size() != 2 || dil.size() != 2 || pads.size() != 4) return false;
  if (dil[0] != 1 || dil[1] != 1) return false;
  for (int64_t s : st)
    if (s != 1 && s != 2) return false;
  for (int64_t p : pads)
    if (p < 0 || p > (int64_t{1} << 20)) return false;
  if (n.attrs.has("auto_pad") && n.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return false;
  // Output size as ONNX defines it from the explicit pads (infer computed the same).
  const int64_t oh = (x->shape[2] + pads[0] + pads[2] - kh) / st[0] + 1;
  const int64_t ow = (x->shape[3] + pads[1] + pads[3] - kw) / st[1] + 1;
  if (x->shape[2] + pads[0] + pads[2] < kh || x->shape[3] + pads[1] + pads[3] < kw) return false;
  if (y.shape[2] != oh || y.shape[3] != ow || oh < 1 || ow < 1) return false;
  if (x->shape[0] < 1 || c < 1 || x->shape[2] < 1 || x->shape[3] < 1) return false;
  if (const Tensor* b = g.input(n, 2)) {
    if (!b->is_const() || b->shape.size() != 1 || b->shape[0] != c || b->data.size < b->nbytes()) return false;
  }

  geo->batch = x->shape[0];
  geo->channels = c;
  geo->h = x->shape[2];
  geo->w = x->shape[3];
  geo->oh = oh;
  geo->ow = ow;
  geo->kh = static_cast<int>(kh);
  geo->kw = static_cast<int>(kw);
  geo->sh = static_cast<int>(st[0]);
  geo->sw = static_cast<int>(st[1]);
  geo->pad_t = pads[0];
  geo->pad_l = pads[1];
  geo->p = ow + (kw - 1) / geo->sw;
  geo->r = oh + (kh - 1) / geo->sh;
  geo->plane = geo->r * geo->p + 2 * kLanes;
  geo->flat = oh * geo->p;
  geo->flat_vecs = (geo->flat + kLanes - 1) / kLanes;
  // The last vector reads up to 15 flat positions past the end, at most (KW - 1) / sw beyond the
  // last plane; 64 more floats cover the unmasked stores of the copy too.
  geo->scratch_floats = geo->sh * geo->sw * geo->plane + kw + 2 * kLanes + 64;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      geo->off[i * kw + j] = ((i % geo->sh) * geo->sw + (j % geo->sw)) * geo->plane + (i / geo->sh) * geo->p + j / geo->sw;
  // Keep the scratch of one plane within reason (a very large plane stays on oneDNN).
  if (geo->scratch_floats > (int64_t{1} << 24)) return false;
  return true;
}

// ---- loading one input row into the scratch ----

// 16 values of the input as float32: float data as is; int8 as float(x - zp_x). Lanes past
// `count` are 0 (the copy stores whole vectors: they land in padding or are overwritten later).
struct F32Source {
  using T = float;
  __attribute__((target("avx512f"))) __m512 load(const float* p, int64_t count) const {
    if (count >= kLanes) return _mm512_loadu_ps(p);
    return _mm512_maskz_loadu_ps(__mmask16((1u << count) - 1), p);
  }
};

struct I8Source {
  using T = int8_t;
  int32_t zp = 0;
  __attribute__((target("avx512f,avx512bw,avx512vl"))) __m512 load(const int8_t* p, int64_t count) const {
    if (count >= kLanes) {
      const __m512i v = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      return _mm512_cvtepi32_ps(_mm512_sub_epi32(v, _mm512_set1_epi32(zp)));
    }
    const __mmask16 m = __mmask16((1u << count) - 1);
    const __m512i v = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, p));
    return _mm512_maskz_mov_ps(m, _mm512_cvtepi32_ps(_mm512_sub_epi32(v, _mm512_set1_epi32(zp))));
  }
};

inline __mmask16 lanes_mask(int64_t count) {
  return count >= kLanes ? __mmask16(0xFFFF) : (count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1));
}

// The low popcount(m) lanes.
inline __mmask16 prefix_mask(__mmask16 m) { return lanes_mask(__builtin_popcount(static_cast<unsigned>(m))); }

// Stride 1: row[pad_l + i] = x[i].
template <class Src>
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline void copy_row_s1(const typename Src::T* x, int64_t w,
                                                                       float* row, int64_t pad_l, const Src& src) {
  for (int64_t i = 0; i < w; i += kLanes) {
    const int64_t cnt = std::min<int64_t>(kLanes, w - i);
    _mm512_storeu_ps(row + pad_l + i, src.load(x + i, cnt));
  }
}

// Stride 2: padded column p = pad_l + i goes to phase p % 2 at index p / 2.
template <class Src>
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline void copy_row_s2(const typename Src::T* x, int64_t w,
                                                                       float* row, int64_t phase_len,
                                                                       int64_t pad_l, const Src& src) {
  const __m512i even_idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd_idx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int64_t i = 0; i < w; i += 2 * kLanes) {
    const int64_t rem = std::min<int64_t>(2 * kLanes, w - i);
    const __m512 a = src.load(x + i, std::min<int64_t>(kLanes, rem));
    const __m512 b = rem > kLanes ? src.load(x + i + kLanes, rem - kLanes) : _mm512_setzero_ps();
    const __m512 ev = _mm512_permutex2var_ps(a, even_idx, b);  // x[i], x[i+2], ...
    const __m512 od = _mm512_permutex2var_ps(a, odd_idx, b);   // x[i+1], x[i+3], ...
    const int64_t p_ev = pad_l + i, p_od = pad_l + i + 1;
    _mm512_storeu_ps(row + (p_ev & 1) * phase_len + (p_ev >> 1), ev);
    _mm512_storeu_ps(row + (p_od & 1) * phase_len + (p_od >> 1), od);
  }
}

// ---- the flat output vectors ----

// NB vectors of flat outputs starting at o: acc[b] = sum over taps (row-major) of
// s[o + 16 b + off[t]] * w[t]. kFused: one fused multiply-add per tap (the INT8 kernel, where
// every product and partial sum is an exact integer); otherwise a separate multiply and add, the
// reference's float operations.
template <int KH, int KW, int NB, bool kFused>
__attribute__((target("avx512f,fma"), always_inline)) inline void accumulate(const float* s, const int64_t* off,
                                                                             const __m512* wv, int64_t o,
                                                                             __m512* acc) {
  for (int b = 0; b < NB; ++b) acc[b] = _mm512_setzero_ps();
  for (int t = 0; t < KH * KW; ++t) {
    const float* base = s + o + off[t];
    for (int b = 0; b < NB; ++b) {
      const __m512 x = _mm512_loadu_ps(base + b * kLanes);
      acc[b] = kFused ? _mm512_fmadd_ps(x, wv[t], acc[b]) : _mm512_add_ps(acc[b], _mm512_mul_ps(x, wv[t]));
    }
  }
}

// Float epilogue: + bias, activation, store 16 floats.
// Act: the activation as a type (fused_act_avx512.h), so that the plane's loop has no switch on it.
template <class Act>
struct F32Sink {
  using Out = float;
  static constexpr bool kFused = false;
  float bias = 0.f;
  bool has_bias = false;
  bool round_fp16 = false;  // KernelContext::round_fp16
  ActVec act;
  template <bool kMasked>
  __attribute__((target("avx512f"))) void store(__m512 acc, __mmask16 valid, float* out) const {
    if (has_bias) acc = _mm512_add_ps(acc, _mm512_set1_ps(bias));
    acc = Act::apply(acc, act);
    if (round_fp16) acc = round_to_fp16_lanes(acc);
    acc = _mm512_maskz_compress_ps(valid, acc);
    if (kMasked) _mm512_mask_storeu_ps(out, prefix_mask(valid), acc);
    else _mm512_storeu_ps(out, acc);
  }
};

// INT8 epilogue: exact integer sum + bias_q, requantize, clamp, store 16 bytes.
struct I8Sink {
  using Out = int8_t;
  static constexpr bool kFused = true;
  int32_t bias = 0;
  float mult = 0.f;
  int32_t zp_y = 0;
  int8_t lo = -128, hi = 127;
  FusedActivation act;  // a value activation (docs/numerics.md), or none
  float inv_s_y = 1.f;
  template <bool kMasked>
  __attribute__((target("avx512f,avx512bw,avx512vl"))) void store(__m512 acc, __mmask16 valid, int8_t* out) const {
    const __m512i sum = _mm512_add_epi32(_mm512_cvtps_epi32(acc), _mm512_set1_epi32(bias));  // exact integers
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(sum), _mm512_set1_ps(mult));
    if (act.act != FusedAct::kNone) v = x86::value_act16(v, x86::value_act16_of(act.act, act.alpha, act.beta, inv_s_y));
    v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0, so y = zp_y
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-512.f)), _mm512_set1_ps(512.f));
    __m512i r = _mm512_add_epi32(_mm512_cvtps_epi32(v), _mm512_set1_epi32(zp_y));  // rne (MXCSR default)
    r = _mm512_maskz_compress_epi32(valid, r);
    __m128i y = _mm512_cvtsepi32_epi8(r);  // sat8
    y = _mm_min_epi8(_mm_max_epi8(y, _mm_set1_epi8(lo)), _mm_set1_epi8(hi));
    if (kMasked) _mm_mask_storeu_epi8(out, prefix_mask(valid), y);
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(out), y);
  }
};

// Where the 16 flat outputs of each vector go: the lanes with ow < OW (and inside the plane),
// written contiguously from y + dst (flat order is row-major, as y's order). Same for every plane.
struct StorePlan {
  std::vector<__mmask16> valid;
  std::vector<int64_t> dst;
  std::vector<uint8_t> masked;  // 1 where a full 16-lane store would pass the plane's last output
};

StorePlan make_store_plan(const DwGeometry& geo) {
  StorePlan sp;
  int64_t written = 0;
  for (int64_t v = 0; v < geo.flat_vecs; ++v) {
    unsigned m = 0;
    sp.dst.push_back(written);
    for (int64_t l = 0; l < kLanes; ++l) {
      const int64_t o = v * kLanes + l;
      if (o < geo.flat && o % geo.p < geo.ow) {
        m |= 1u << l;
        ++written;
      }
    }
    sp.valid.push_back(static_cast<__mmask16>(m));
  }
  for (int64_t v = 0; v < geo.flat_vecs; ++v) sp.masked.push_back(sp.dst[static_cast<size_t>(v)] + kLanes > written);
  return sp;
}

template <int KH, int KW, int NB, class Sink>
__attribute__((target("avx512f,avx512bw,avx512vl,fma"), always_inline)) inline void flat_blocks(
    const float* s, const int64_t* off, const __m512* wv, int64_t v, const uint8_t* masked, const __mmask16* valid,
    const int64_t* dst, typename Sink::Out* y, const Sink& sink) {
  __m512 acc[NB];
  accumulate<KH, KW, NB, Sink::kFused>(s, off, wv, v * kLanes, acc);
  // An unmasked store writes the compressed vector's unused lanes past its outputs, where the
  // following vectors' outputs go (they are stored later, contiguously). Only stores that would
  // pass the plane's last output (into another plane, maybe another thread's, or another tensor)
  // are masked.
  for (int b = 0; b < NB; ++b) {
    if (masked[v + b]) sink.template store<true>(acc[b], valid[v + b], y + dst[v + b]);
    else sink.template store<false>(acc[b], valid[v + b], y + dst[v + b]);
  }
}

// Every output of one plane. The tap offsets and weights are copied into locals first: the
// vector stores may alias anything, and would otherwise force them to be reloaded per block.
template <int KH, int KW, class Sink>
__attribute__((target("avx512f,avx512bw,avx512vl,fma"))) void dw_plane(const float* s, const int64_t* off_in,
                                                                        const float* w, int64_t flat_vecs,
                                                                        const StorePlan& sp,
                                                                        typename Sink::Out* y, const Sink& sink) {
  constexpr int kTaps = KH * KW;
  int64_t off[kTaps];
  __m512 wv[kTaps];
  for (int t = 0; t < kTaps; ++t) {
    off[t] = off_in[t];
    wv[t] = _mm512_set1_ps(w[t]);
  }
  const __mmask16* valid = sp.valid.data();
  const int64_t* dst = sp.dst.data();
  const Sink local_sink = sink;
  const uint8_t* masked = sp.masked.data();
  int64_t v = 0;
  for (; v + kMaxBlocks <= flat_vecs; v += kMaxBlocks)
    flat_blocks<KH, KW, kMaxBlocks>(s, off, wv, v, masked, valid, dst, y, local_sink);
  switch (flat_vecs - v) {
    case 3: flat_blocks<KH, KW, 3>(s, off, wv, v, masked, valid, dst, y, local_sink); break;
    case 2: flat_blocks<KH, KW, 2>(s, off, wv, v, masked, valid, dst, y, local_sink); break;
    case 1: flat_blocks<KH, KW, 1>(s, off, wv, v, masked, valid, dst, y, local_sink); break;
    default: break;
  }
}

template <class Sink>
using PlaneFn = void (*)(const float*, const int64_t*, const float*, int64_t, const StorePlan&,
                         typename Sink::Out*, const Sink&);

template <class Sink>
PlaneFn<Sink> pick_plane_fn(int kh, int kw) {
  if (kh == 3) return kw == 3 ? dw_plane<3, 3, Sink> : dw_plane<3, 5, Sink>;
  return kw == 3 ? dw_plane<5, 3, Sink> : dw_plane<5, 5, Sink>;
}

// Per-thread scratch (padded input phase planes, zeroed once) and the copy into it.
template <class Src>
class DwScratch {
 public:
  void init(const DwGeometry& geo, int threads) {
    geo_ = geo;
    slots_ = std::max(1, threads);
    in_.assign(static_cast<size_t>(2 * slots_ * geo_.scratch_floats), 0.f);  // two buffers per thread
    // Input row ih lands in phase plane (pr % sh, 0) at row pr / sh, pr = ih + pad_t; rows from
    // the first one past R are never read. Only the padded columns the outputs read are copied:
    // index < P (stride 1), < 2P (stride 2).
    row_dst_.clear();
    for (int64_t ih = 0; ih < geo_.h; ++ih) {
      const int64_t pr = ih + geo_.pad_t;
      if (pr / geo_.sh >= geo_.r) break;
      row_dst_.push_back((pr % geo_.sh) * geo_.sw * geo_.plane + (pr / geo_.sh) * geo_.p);
    }
    cols_ = std::min(geo_.w, geo_.sw * geo_.p - geo_.pad_l);
  }
  int slots() const { return slots_; }

  float* buffer(int i) { return in_.data() + static_cast<size_t>(i) * geo_.scratch_floats; }

  // Copies one (n, c) plane of the input into buffer i's phase planes; returns them.
  __attribute__((target("avx512f,avx512bw,avx512vl"))) float* load_plane(const typename Src::T* x, int i,
                                                                          const Src& src) {
    float* s = buffer(i);
    if (cols_ <= 0) return s;
    const int64_t rows = static_cast<int64_t>(row_dst_.size());
    for (int64_t ih = 0; ih < rows; ++ih) {
      const typename Src::T* xr = x + ih * geo_.w;
      float* dst = s + row_dst_[static_cast<size_t>(ih)];
      if (geo_.sw == 1) copy_row_s1(xr, cols_, dst, geo_.pad_l, src);
      else copy_row_s2(xr, cols_, dst, geo_.plane, geo_.pad_l, src);
    }
    return s;
  }

 private:
  DwGeometry geo_;
  int slots_ = 1;
  std::vector<float> in_;
  std::vector<int64_t> row_dst_;  // per input row: offset of its copy in the scratch
  int64_t cols_ = 0;              // input columns copied per row
};

// Splits the planes over nt threads (contiguous ranges) and pipelines each range: plane p + 1 is
// copied into the thread's other buffer before plane p is computed, so that the loads of the
// compute never hit the stores just made by the copy (store-forwarding stalls, which dominate
// small planes otherwise).
template <class Src, class ComputeFn>
void run_planes(DwScratch<Src>& scratch, const typename Src::T* x, int64_t in_plane, int64_t planes, int nt,
                const Src& src, ComputeFn&& compute) {
  parallel_ranges(planes, nt, [&](int64_t p0, int64_t p1, int tid) {
    if (p0 >= p1) return;
    scratch.load_plane(x + p0 * in_plane, 2 * tid, src);
    for (int64_t p = p0; p < p1; ++p) {
      if (p + 1 < p1) scratch.load_plane(x + (p + 1) * in_plane, 2 * tid + static_cast<int>((p + 1 - p0) & 1), src);
      compute(p, scratch.buffer(2 * tid + static_cast<int>((p - p0) & 1)));
    }
  });
}

// Output width below which the NCHW paths leave the node to oneDNN. The W-vectorised NCHW kernel pays a
// per-plane cost (copy into the scratch, setup, 16 lanes per vector over rows of few outputs)
// that oneDNN's channel-blocked kernel (16 channels per vector, plus a reorder either side) does
// not: measured on the mobilenet_v2 / efficientnet_b0 layers (docs/kernels.md, "Depthwise"),
// the kernel wins from output width 28 up and loses at 14 and 7.
int g_min_output_width = 24;

bool wide_enough(const Graph& g, const Node& n) {
  return g.tensor(n.outputs[0]).shape[3] >= g_min_output_width;
}

// ---- float kernel, blocked activations (nChw16c, kernel.h BlockedIo) ----
// 16 channels per vector, so no scratch: each output vector is
//   acc = +0; acc = acc + x[ih][iw] * w[kh][kw] over the taps inside the image in row-major order
// (the reference skips padding taps too), then + bias, the activation and the fp16 rounding: per
// lane exactly the reference's operations in its order, so bit-identical to it as the NCHW path.
// The interior of a row computes 8 outputs at a time (docs/kernels.md, "Float on nChw16c").

struct BlockedDwRow {
  const DwGeometry* g;
  const float* w;     // the block's taps, row-major, 16 floats each
  const float* bias;  // 16 floats, or nullptr
  bool round_fp16;
  ActVec act;

  __attribute__((target("avx512f"), always_inline)) inline void store(__m512 acc, float* out) const {
    if (bias) acc = _mm512_add_ps(acc, _mm512_loadu_ps(bias));
    acc = apply_act(acc, act);
    if (round_fp16) acc = round_to_fp16_lanes(acc);
    _mm512_storeu_ps(out, acc);
  }

  // One output whose taps may fall outside the row (the borders).
  __attribute__((target("avx512f"))) void edge(const float* x, float* y, int64_t ih0, int kh_lo, int kh_hi,
                                               int64_t ow) const {
    const DwGeometry& G = *g;
    const int64_t iw0 = ow * G.sw - G.pad_l;
    __m512 acc = _mm512_setzero_ps();
    for (int kh = kh_lo; kh < kh_hi; ++kh)
      for (int kw = 0; kw < G.kw; ++kw) {
        const int64_t iw = iw0 + kw;
        if (iw < 0 || iw >= G.w) continue;
        const __m512 wv = _mm512_loadu_ps(w + (kh * G.kw + kw) * kLanes);
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_loadu_ps(x + ((ih0 + kh) * G.w + iw) * kLanes), wv));
      }
    store(acc, y + ow * kLanes);
  }

  // Output row oh of one channel block: x = the block's input image, y = its output row.
  __attribute__((target("avx512f"))) void run(const float* x, float* y, int64_t oh) const {
    const DwGeometry& G = *g;
    const int64_t ih0 = oh * G.sh - G.pad_t;
    const int kh_lo = static_cast<int>(std::max<int64_t>(0, -ih0));
    const int kh_hi = static_cast<int>(std::min<int64_t>(G.kh, G.h - ih0));
    // Outputs whose taps are all inside the row: ow * sw - pad_l >= 0 and + kw - 1 < W.
    int64_t ow_lo = (G.pad_l + G.sw - 1) / G.sw;
    int64_t ow_hi = G.w - G.kw + G.pad_l >= 0 ? (G.w - G.kw + G.pad_l) / G.sw + 1 : 0;
    ow_lo = std::min(ow_lo, G.ow);
    ow_hi = std::max(ow_lo, std::min(ow_hi, G.ow));
    for (int64_t ow = 0; ow < ow_lo; ++ow) edge(x, y, ih0, kh_lo, kh_hi, ow);
    // The finishing as a type for the common activations of fp16 mode, so that the interior's
    // loop has no branch on it (with store(), a switch on the activation per vector, mobilenet_v2
    // fp16's six such layers took 488 against 432 us, one thread).
    if (!round_fp16) interior<AnyFinish>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi);
    else if (act.act == FusedAct::kNone) interior<Rounded<ActKind<FusedAct::kNone>>>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi);
    else if (act.act == FusedAct::kRelu) interior<Rounded<ActKind<FusedAct::kRelu>>>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi);
    else if (act.act == FusedAct::kClip) interior<Rounded<ActKind<FusedAct::kClip>>>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi);
    else if (act.act == FusedAct::kHardSwish)
      interior<Rounded<ActKind<FusedAct::kHardSwish>>>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi);
    else interior<AnyFinish>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi);
    for (int64_t ow = ow_hi; ow < G.ow; ++ow) edge(x, y, ih0, kh_lo, kh_hi, ow);  // the right border
  }

  // store()'s operations (+ bias, the activation, the fp16 rounding) with the activation as a type
  // (Act: fused_act_avx512.h); AnyFinish is store() itself (fp32 mode).
  template <class Act>
  struct Rounded {
    const BlockedDwRow* r;
    __attribute__((target("avx512f"), always_inline)) inline void operator()(__m512 acc, float* out) const {
      if (r->bias) acc = _mm512_add_ps(acc, _mm512_loadu_ps(r->bias));
      _mm512_storeu_ps(out, round_to_fp16_lanes(Act::apply(acc, r->act)));
    }
  };
  struct AnyFinish {
    const BlockedDwRow* r;
    __attribute__((target("avx512f"), always_inline)) inline void operator()(__m512 acc, float* out) const {
      r->store(acc, out);
    }
  };

  template <class Finish>
  __attribute__((target("avx512f"), always_inline)) inline void interior(const float* x, float* y, int64_t ih0, int kh_lo,
                                                                         int kh_hi, int64_t ow_lo, int64_t ow_hi) const {
    const Finish fin{this};
    if (g->kw == 3 && g->sw == 1) interior<3, 1>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi, fin);
    else if (g->kw == 3) interior<3, 2>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi, fin);
    else if (g->sw == 1) interior<5, 1>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi, fin);
    else interior<5, 2>(x, y, ih0, kh_lo, kh_hi, ow_lo, ow_hi, fin);
  }

  // Outputs [ow_lo, ow_hi), all taps inside the row: groups of 8 outputs (8 independent add
  // chains), then single ones, each adding its taps in row-major order; per tap the weight vector
  // is loaded once per group.
  template <int KW, int SW, class Finish>
  __attribute__((target("avx512f"), always_inline)) inline void interior(const float* x, float* y, int64_t ih0, int kh_lo,
                                                                         int kh_hi, int64_t ow_lo, int64_t ow_hi,
                                                                         const Finish& fin) const {
    int64_t ow = ow_lo;
    for (; ow + 8 <= ow_hi; ow += 8) outputs<8, KW, SW>(x, y, ih0, kh_lo, kh_hi, ow, fin);
    for (; ow < ow_hi; ++ow) outputs<1, KW, SW>(x, y, ih0, kh_lo, kh_hi, ow, fin);
  }

  template <int N, int KW, int SW, class Finish>
  __attribute__((target("avx512f"), always_inline)) inline void outputs(const float* x, float* y, int64_t ih0, int kh_lo,
                                                                        int kh_hi, int64_t ow, const Finish& fin) const {
    const DwGeometry& G = *g;
    __m512 acc[N];
#pragma GCC unroll 8
    for (int i = 0; i < N; ++i) acc[i] = _mm512_setzero_ps();
    for (int kh = kh_lo; kh < kh_hi; ++kh) {
      const float* row = x + ((ih0 + kh) * G.w + ow * SW - G.pad_l) * kLanes;
      // Opaque to the optimiser, so that the loads below address row + a constant. Otherwise GCC
      // 12 kept one offset register per input vector across the window rows and spilled them
      // (mobilenet_v2 fp16's 112x112 and 56x56 layers: 398 against 339 us, one thread).
      asm("" : "+r"(row));
      const float* wr = w + kh * KW * kLanes;
#pragma GCC unroll 5
      for (int kw = 0; kw < KW; ++kw) {
        const __m512 wv = _mm512_loadu_ps(wr + kw * kLanes);
#pragma GCC unroll 8
        for (int i = 0; i < N; ++i)
          acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(_mm512_loadu_ps(row + (i * SW + kw) * kLanes), wv));
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < N; ++i) fin(acc[i], y + (ow + i) * kLanes);
  }
};

// ---- float kernel ----

bool supports_dw_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512bwvl() || is_quantized_node(g, n)) return false;
  DwGeometry geo;
  if (!dw_geometry(g, n, &geo)) return false;
  const Tensor* x = g.input(n, 0);
  const Tensor* w = g.input(n, 1);
  const Tensor* b = g.input(n, 2);
  if (!is_f32(x) || !is_f32(w) || (b && !is_f32(b)) || !is_f32(&g.tensor(n.outputs[0]))) return false;
  // Padding columns contribute 0 * w, which must be +-0 (the reference skips those taps).
  const float* wp = w->const_ptr<float>();
  for (int64_t i = 0, count = w->numel(); i < count; ++i)
    if (!std::isfinite(wp[i])) return false;
  // A channel count that is not a multiple of 16 never runs blocked, and oneDNN then pads it to
  // nChw16c with a reorder either side: the kernel wins at every width there (shufflenet_v2's
  // 116 channels at 14x14: 16-17 against 26-29 us at one thread, 14-16 against 38-40 at two).
  return wide_enough(g, n) || geo.channels % kLanes != 0;
}

class DepthwiseF32 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!dw_geometry(*ctx.graph, *ctx.node, &geo_))
      return ORKNN_ERR(kFail, "Conv '%s': not a depthwise convolution this kernel handles", ctx.node->name.c_str());
    act_ = read_act_vec(ctx.node->attrs);
    const float* w = ctx.in<float>(1);
    weights_.assign(w, w + geo_.channels * geo_.kh * geo_.kw);
    if (ctx.has_input(2)) {
      const float* b = ctx.in<float>(2);
      bias_.assign(b, b + geo_.channels);
    }
    blocked_ = ctx.input_blocked(0);
    if (blocked_ != ctx.output_blocked(0))
      return ORKNN_ERR(kFail, "Conv '%s': input and output must share their layout", ctx.node->name.c_str());
    if (blocked_ && geo_.channels % kLanes != 0)
      return ORKNN_ERR(kFail, "Conv '%s': nChw16c activations need a multiple of 16 channels, not %lld",
                       ctx.node->name.c_str(), static_cast<long long>(geo_.channels));
    if (blocked_) {  // taps as 16-channel vectors, [block][tap][lane]; bias [block][lane]
      const int64_t blocks = geo_.channels / kLanes, taps = geo_.kh * geo_.kw;
      block_w_.resize(static_cast<size_t>(blocks * taps * kLanes));
      for (int64_t b = 0; b < blocks; ++b)
        for (int64_t t = 0; t < taps; ++t)
          for (int64_t l = 0; l < kLanes; ++l)
            block_w_[static_cast<size_t>((b * taps + t) * kLanes + l)] = weights_[static_cast<size_t>((b * kLanes + l) * taps + t)];
      return Status::Ok();
    }
    scratch_.init(geo_, thread_slots(ctx.num_threads));
    store_ = make_store_plan(geo_);
    return Status::Ok();
  }

  bool rounds_fp16_outputs() const override { return true; }
  // Input and output in the same layout (channels are both C): NCHW planes or nChw16c blocks.
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kUniform; }

  void run(const KernelContext& ctx) override {
    if (blocked_) return run_blocked(ctx);
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const int64_t planes = geo_.batch * geo_.channels;
    const int nt = std::min(std::max(1, ctx.num_threads), scratch_.slots());
    const int64_t in_plane = geo_.h * geo_.w, out_plane = geo_.oh * geo_.ow, taps = geo_.kh * geo_.kw;
    with_act_type(act_.act, [&](auto act) {
      using Sink = F32Sink<decltype(act)>;
      const PlaneFn<Sink> plane_fn = pick_plane_fn<Sink>(geo_.kh, geo_.kw);
      run_planes(scratch_, x, in_plane, planes, nt, F32Source{}, [&](int64_t p, const float* s) {
        const int64_t c = p % geo_.channels;
        Sink sink;
        sink.has_bias = !bias_.empty();
        sink.bias = sink.has_bias ? bias_[static_cast<size_t>(c)] : 0.f;
        sink.act = act_;
        sink.round_fp16 = ctx.round_fp16;
        plane_fn(s, geo_.off, weights_.data() + c * taps, geo_.flat_vecs, store_, y + p * out_plane, sink);
      });
    });
  }

 private:
  DwGeometry geo_;
  ActVec act_;
  std::vector<float> weights_, bias_;
  DwScratch<F32Source> scratch_;
  StorePlan store_;
  // Blocked activations (BlockedDwRow): taps [block][tap][lane].
  bool blocked_ = false;
  std::vector<float> block_w_;

  void run_blocked(const KernelContext& ctx) {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const int64_t blocks = geo_.channels / kLanes, taps = geo_.kh * geo_.kw;
    const int64_t rows = geo_.batch * blocks * geo_.oh;  // (image, channel block, output row)
    const int64_t in_block = geo_.h * geo_.w * kLanes, out_row = geo_.ow * kLanes;
    parallel_ranges(rows, ctx.num_threads, [&](int64_t r0, int64_t r1, int) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t nb = r / geo_.oh, oh = r % geo_.oh, b = nb % blocks;
        const BlockedDwRow row{&geo_, block_w_.data() + b * taps * kLanes,
                               bias_.empty() ? nullptr : bias_.data() + b * kLanes, ctx.round_fp16, act_};
        row.run(x + nb * in_block, y + r * out_row, oh);
      }
    });
  }
};

// ---- INT8 kernel, channels-last activations (NHWC, kernel.h BlockedIo) ----
// 64 channels per block, one 64-byte vector per pixel and tap. vpdpbusd adds the 4 byte products
// of each int32 lane; the weight vector of phase j (0..3) holds channel 4k + j's tap in byte 4k + j
// of lane k and zeros in the lane's other bytes, so one vpdpbusd of the input vector adds the
// products of channels 4k + j only. Four accumulators (j = 0..3) cover the 64 channels without
// shuffling the input: per tap and 64 channels one load, one sign flip and 4 vpdpbusd.
// Numerics, bit-exact with ref_int8: input bytes are flipped to u8 (x + 128, vpdpbusd's unsigned
// operand), and comp[c] = bias_q[c] - (zp_x + 128) * sum_t w[c][t] turns the sum into the exact
// accumulator modulo 2^32 (the true value fits in int32). Padding taps read bytes equal to zp_x
// (x - zp_x = 0), so the borders need no other compensation. Requantization:
// x86::requant16_float_bounds (int8_requant.h), equal to requant_one. The four int32 results of a
// lane go back to bytes 4k + j by shifts and byte blends.

constexpr int64_t kI8Block = 64;  // channels per block

#define ORKNN_DW_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) inline

// Loads 64 channel bytes as u8 (x + 128). kFull: all 64 are channels; else the bytes of mask m,
// the others read as 0 (masked off, so never past the tensor) and become 128, times weight 0.
template <bool kFull>
ORKNN_DW_VNNI __m512i load_u8(const int8_t* p, __mmask64 m) {
  const __m512i v = kFull ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi8(m, p);
  return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
}

// Prepared parameters of the NHWC path.
struct NhwcI8Dw {
  DwGeometry geo;
  int64_t blocks = 0;
  // Pixel groups: with 16 or 32 channels and horizontal stride 1, one 64-byte vector holds
  // `group` = 64 / C consecutive pixels, whose taps are again consecutive pixels, so the interior
  // of a row computes `group` outputs per vector instead of a vector a quarter or half filled
  // (the weights, comp and mult repeat over the vector's pixels). 1 otherwise.
  int64_t group = 1;
  std::vector<int8_t> w;      // [block][tap][j][64 bytes]
  std::vector<int32_t> comp;  // [block][j][16 lanes]
  std::vector<float> mult;    // [block][j][16 lanes]
  std::vector<int8_t> pad;    // one input row of zp_x bytes (W * C, at least one block): padding taps
  __mmask64 tail = ~__mmask64{0};  // the channel bytes of the last block
  float lo = -128.f, hi = 127.f;   // the output bounds minus zp_y
  int32_t zp_y = 0;
  FusedActivation act;  // a value activation (docs/numerics.md), or none
  float inv_s_y = 1.f;

  // Requantizes acc[0..3] (block b) and stores the block's output bytes at y.
  template <bool kFull>
  ORKNN_DW_VNNI void store(const __m512i* acc, int64_t b, int8_t* y) const {
    const int32_t* cp = comp.data() + b * kI8Block;
    const float* mp = mult.data() + b * kI8Block;
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const __m512i zp = _mm512_set1_epi32(zp_y);
    const x86::ValueAct16 va = x86::value_act16_of(act.act, act.alpha, act.beta, inv_s_y);
    __m512i r[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
      r[j] = x86::requant16_float_bounds(acc[j], _mm512_loadu_si512(cp + 16 * j), _mm512_loadu_ps(mp + 16 * j), vlo,
                                         vhi, zp, &va);
    __m512i out = _mm512_mask_blend_epi8(0x2222222222222222ull, r[0], _mm512_slli_epi32(r[1], 8));
    out = _mm512_mask_blend_epi8(0x4444444444444444ull, out, _mm512_slli_epi32(r[2], 16));
    out = _mm512_mask_blend_epi8(0x8888888888888888ull, out, _mm512_slli_epi32(r[3], 24));
    if (kFull) _mm512_storeu_si512(y, out);
    else _mm512_mask_storeu_epi8(y, tail, out);
  }

  // NP consecutive outputs of one row, block b; addr(p, kh, kw) is the first byte of block b of
  // pixel p's tap (kh, kw), inside the image or in `pad`. Fully unrolled: the accumulators and
  // the tap's four weight vectors stay in registers.
  template <int NP, int KH, int KW, bool kFull, class Addr>
  ORKNN_DW_VNNI void pixels(const Addr& addr, int64_t b, int8_t* y, int64_t y_step) const {
    const int8_t* wt = w.data() + b * KH * KW * 4 * kI8Block;
    __m512i acc[NP][4];
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p)
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[p][j] = _mm512_setzero_si512();
#pragma GCC unroll 5
    for (int kh = 0; kh < KH; ++kh)
#pragma GCC unroll 5
      for (int kw = 0; kw < KW; ++kw, wt += 4 * kI8Block) {
        const __m512i w0 = _mm512_loadu_si512(wt), w1 = _mm512_loadu_si512(wt + kI8Block);
        const __m512i w2 = _mm512_loadu_si512(wt + 2 * kI8Block), w3 = _mm512_loadu_si512(wt + 3 * kI8Block);
#pragma GCC unroll 4
        for (int p = 0; p < NP; ++p) {
          const __m512i x = load_u8<kFull>(addr(p, kh, kw), tail);
          acc[p][0] = _mm512_dpbusd_epi32(acc[p][0], x, w0);
          acc[p][1] = _mm512_dpbusd_epi32(acc[p][1], x, w1);
          acc[p][2] = _mm512_dpbusd_epi32(acc[p][2], x, w2);
          acc[p][3] = _mm512_dpbusd_epi32(acc[p][3], x, w3);
        }
      }
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) store<kFull>(acc[p], b, y + p * y_step);
  }

  // Output row oh of one image: x = the image (H x W x C), y = the output row (OW x C).
  template <int KH, int KW>
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void row(const int8_t* x, int8_t* y,
                                                                            int64_t oh) const {
    const int64_t ih0 = oh * geo.sh - geo.pad_t;
    const int8_t* rows[KH];  // input rows of the taps; nullptr outside the image
    for (int kh = 0; kh < KH; ++kh) {
      const int64_t ih = ih0 + kh;
      rows[kh] = ih >= 0 && ih < geo.h ? x + ih * geo.w * geo.channels : nullptr;
    }
    if (group > 1) return group_row<KH, KW>(rows, y);
    const bool last_full = tail == ~__mmask64{0};
    for (int64_t b = 0; b + 1 < blocks; ++b) block_row<KH, KW, true>(rows, b, y);
    if (last_full) block_row<KH, KW, true>(rows, blocks - 1, y);
    else block_row<KH, KW, false>(rows, blocks - 1, y);
  }

  // Block b of one output row (rows as in row()).
  template <int KH, int KW, bool kFull>
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void block_row(const int8_t* const* rows,
                                                                                  int64_t b, int8_t* y) const {
    const int64_t C = geo.channels, c0 = b * kI8Block;
    // Outputs whose taps are all inside the row (as BlockedDwRow).
    const int64_t ow_lo = std::min((geo.pad_l + geo.sw - 1) / geo.sw, geo.ow);
    int64_t ow_hi = geo.w - geo.kw + geo.pad_l >= 0 ? (geo.w - geo.kw + geo.pad_l) / geo.sw + 1 : 0;
    ow_hi = std::max(ow_lo, std::min(ow_hi, geo.ow));
    const int8_t* prow = pad.data();
    // Interior outputs: rows outside the image read the padding row (zp_x everywhere, W * C bytes).
    const int8_t* rbase[KH];
    for (int kh = 0; kh < KH; ++kh) rbase[kh] = (rows[kh] ? rows[kh] : prow) + c0;
    for (int64_t ow = 0; ow < ow_lo; ++ow) edge<KH, KW, kFull>(rows, ow, b, y);
    const int64_t step = geo.sw * C;
    int64_t ow = ow_lo;
    for (; ow + 4 <= ow_hi; ow += 4) {
      const int64_t col = (ow * geo.sw - geo.pad_l) * C;
      auto addr = [&](int p, int kh, int kw) -> const int8_t* { return rbase[kh] + col + p * step + kw * C; };
      pixels<4, KH, KW, kFull>(addr, b, y + ow * C + c0, C);
    }
    for (; ow < geo.ow; ++ow) edge<KH, KW, kFull>(rows, ow, b, y);
  }

  // One output row in pixel groups (one block, stride 1 across): interior outputs `group` per
  // vector, 4 vectors at a time, then single vectors; borders and the leftover outputs one at a
  // time (edge, masked to the C channels).
  template <int KH, int KW>
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void group_row(const int8_t* const* rows,
                                                                                  int8_t* y) const {
    const int64_t C = geo.channels, span = group * C;  // span: 64 bytes
    const int64_t ow_lo = std::min(geo.pad_l, geo.ow);
    int64_t ow_hi = geo.w - geo.kw + geo.pad_l >= 0 ? geo.w - geo.kw + geo.pad_l + 1 : 0;
    ow_hi = std::max(ow_lo, std::min(ow_hi, geo.ow));
    const int8_t* rbase[KH];
    for (int kh = 0; kh < KH; ++kh) rbase[kh] = rows[kh] ? rows[kh] : pad.data();
    for (int64_t ow = 0; ow < ow_lo; ++ow) edge<KH, KW, false>(rows, ow, 0, y);
    int64_t ow = ow_lo;
    auto at = [&](int64_t o) {
      const int64_t col = (o - geo.pad_l) * C;
      return [&rbase, col, span, C](int p, int kh, int kw) -> const int8_t* {
        return rbase[kh] + col + p * span + kw * C;
      };
    };
    for (; ow + 4 * group <= ow_hi; ow += 4 * group) pixels<4, KH, KW, true>(at(ow), 0, y + ow * C, span);
    for (; ow + group <= ow_hi; ow += group) pixels<1, KH, KW, true>(at(ow), 0, y + ow * C, span);
    for (; ow < geo.ow; ++ow) edge<KH, KW, false>(rows, ow, 0, y);
  }

  // A border output (ow, block b): every tap outside the image reads the padding row.
  template <int KH, int KW, bool kFull>
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void edge(const int8_t* const* rows, int64_t ow,
                                                                             int64_t b, int8_t* y) const {
    const int64_t C = geo.channels, c0 = b * kI8Block, iw0 = ow * geo.sw - geo.pad_l;
    const int8_t* prow = pad.data();
    auto addr = [&](int, int kh, int kw) -> const int8_t* {
      const int64_t iw = iw0 + kw;
      return rows[kh] && iw >= 0 && iw < geo.w ? rows[kh] + iw * C + c0 : prow + c0;
    };
    pixels<1, KH, KW, kFull>(addr, b, y + ow * C + c0, C);
  }
};

using NhwcRowFn = void (NhwcI8Dw::*)(const int8_t*, int8_t*, int64_t) const;

NhwcRowFn pick_nhwc_row(int kh, int kw) {
  if (kh == 3) return kw == 3 ? &NhwcI8Dw::row<3, 3> : &NhwcI8Dw::row<3, 5>;
  return kw == 3 ? &NhwcI8Dw::row<5, 3> : &NhwcI8Dw::row<5, 5>;
}

// ---- INT8 kernel ----

// With VNNI the NHWC path takes every width (it is faster than oneDNN on narrow planes too); the
// NCHW path only wide ones (DepthwiseInt8::layout_fit).
bool supports_dw_int8(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512bwvl() || !is_quantized_node(g, n)) return false;
  DwGeometry geo;
  return dw_geometry(g, n, &geo) && is_q8_conv_form(g, n, geo.channels, 0, /*value_act=*/true) &&
         (x86::cpu_avx512vnni() || wide_enough(g, n));
}

class DepthwiseInt8 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!dw_geometry(*ctx.graph, *ctx.node, &geo_))
      return ORKNN_ERR(kFail, "Conv '%s': not a depthwise convolution this kernel handles", ctx.node->name.c_str());
    const QuantScalar qx = per_tensor(ctx.in_tensor(0));
    zp_x_ = qx.zp;
    out_ = int8_output(qx.scale, ctx.in_tensor(1).quant, ctx.out_tensor(0), ctx.node->attrs, geo_.channels);
    const int8_t* w = ctx.in<int8_t>(1);
    const int64_t n = geo_.channels * geo_.kh * geo_.kw;
    weights_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) weights_[static_cast<size_t>(i)] = static_cast<float>(w[i]);  // exact
    bias_.assign(static_cast<size_t>(geo_.channels), 0);
    if (ctx.has_input(2)) {
      const int32_t* b = ctx.in<int32_t>(2);
      bias_.assign(b, b + geo_.channels);
    }
    blocked_ = ctx.input_blocked(0);
    if (blocked_ != ctx.output_blocked(0))
      return ORKNN_ERR(kFail, "Conv '%s': input and output must share their layout", ctx.node->name.c_str());
    if (blocked_) {
      prepare_nhwc(qx.zp);
      return Status::Ok();
    }
    scratch_.init(geo_, thread_slots(ctx.num_threads));
    store_ = make_store_plan(geo_);
    plane_fn_ = pick_plane_fn<I8Sink>(geo_.kh, geo_.kw);
    return Status::Ok();
  }

  // Input and output in the same layout: NCHW planes, or NHWC (with VNNI).
  BlockedIo blocked_io(const Graph&, const Node&) const override {
    return x86::cpu_avx512vnni() ? BlockedIo::kUniform : BlockedIo::kNone;
  }
  LayoutFit layout_fit(const Graph& g, const Node& n) const override {
    return wide_enough(g, n) ? LayoutFit::kAny : LayoutFit::kBlockedOnly;
  }

  void run(const KernelContext& ctx) override {
    if (blocked_) return run_nhwc(ctx);
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    const int64_t planes = geo_.batch * geo_.channels;
    const int nt = std::min(std::max(1, ctx.num_threads), scratch_.slots());
    const int64_t in_plane = geo_.h * geo_.w, out_plane = geo_.oh * geo_.ow, taps = geo_.kh * geo_.kw;
    const I8Source src{zp_x_};
    run_planes(scratch_, x, in_plane, planes, nt, src, [&](int64_t p, const float* s) {
      const int64_t c = p % geo_.channels;
      I8Sink sink;
      sink.bias = bias_[static_cast<size_t>(c)];
      sink.mult = out_.mult[static_cast<size_t>(c)];
      sink.zp_y = out_.zp_y;
      sink.lo = static_cast<int8_t>(out_.clamp.lo);
      sink.hi = static_cast<int8_t>(out_.clamp.hi);
      sink.act = out_.act;
      sink.inv_s_y = out_.inv_s_y;
      plane_fn_(s, geo_.off, weights_.data() + c * taps, geo_.flat_vecs, store_, y + p * out_plane, sink);
    });
  }

 private:
  DwGeometry geo_;
  int32_t zp_x_ = 0;
  Int8Output out_;
  std::vector<float> weights_;
  std::vector<int32_t> bias_;
  DwScratch<I8Source> scratch_;
  StorePlan store_;
  PlaneFn<I8Sink> plane_fn_ = nullptr;
  // NHWC activations (NhwcI8Dw).
  bool blocked_ = false;
  NhwcI8Dw nhwc_;
  NhwcRowFn nhwc_row_ = nullptr;

  void prepare_nhwc(int32_t zp_x) {
    NhwcI8Dw& d = nhwc_;
    d.geo = geo_;
    const int64_t C = geo_.channels, taps = geo_.kh * geo_.kw;
    d.blocks = (C + kI8Block - 1) / kI8Block;
    const int64_t tail = C - (d.blocks - 1) * kI8Block;
    d.tail = tail == kI8Block ? ~__mmask64{0} : (__mmask64{1} << tail) - 1;
    d.group = (C == 16 || C == 32) && geo_.sw == 1 ? kI8Block / C : 1;
    d.w.assign(static_cast<size_t>(d.blocks * taps * 4 * kI8Block), 0);
    d.comp.assign(static_cast<size_t>(d.blocks * kI8Block), 0);
    d.mult.assign(static_cast<size_t>(d.blocks * kI8Block), 0.f);
    // Byte k of a block is channel k of the block, or, in pixel groups, channel k % C.
    for (int64_t k = 0; k < d.blocks * kI8Block; ++k) {
      const int64_t c = d.group > 1 ? k % C : k;
      if (c >= C) break;
      const int64_t b = k / kI8Block, byte = k % kI8Block, j = byte % 4, lane = byte / 4;
      int64_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        const int8_t v = static_cast<int8_t>(weights_[static_cast<size_t>(c * taps + t)]);
        d.w[static_cast<size_t>(((b * taps + t) * 4 + j) * kI8Block + byte)] = v;
        sum += v;
      }
      const size_t at = static_cast<size_t>(b * kI8Block + j * 16 + lane);
      d.comp[at] = x86::u8_compensation(bias_[static_cast<size_t>(c)], sum, zp_x);
      d.mult[at] = out_.mult[static_cast<size_t>(c)];
    }
    d.pad.assign(static_cast<size_t>(std::max(geo_.w * C, d.blocks * kI8Block)), static_cast<int8_t>(zp_x));
    d.zp_y = out_.zp_y;
    d.lo = static_cast<float>(out_.clamp.lo - out_.zp_y);
    d.hi = static_cast<float>(out_.clamp.hi - out_.zp_y);
    d.act = out_.act;
    d.inv_s_y = out_.inv_s_y;
    nhwc_row_ = pick_nhwc_row(geo_.kh, geo_.kw);
  }

  void run_nhwc(const KernelContext& ctx) {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    const int64_t C = geo_.channels, in_image = geo_.h * geo_.w * C, out_row = geo_.ow * C;
    parallel_ranges(geo_.batch * geo_.oh, ctx.num_threads, [&](int64_t r0, int64_t r1, int) {
      for (int64_t r = r0; r < r1; ++r) (nhwc_.*nhwc_row_)(x + (r / geo_.oh) * in_image, y + r * out_row, r % geo_.oh);
    });
  }
};

}  // namespace

// Tests: lets the kernels take every output width (1), or restores the default (< 1); returns
// the previous setting. Not thread-safe: call before kernels are selected.
int x86_depthwise_set_min_output_width(int width) {
  const int previous = g_min_output_width;
  g_min_output_width = width < 1 ? 24 : width;
  return previous;
}

ORKNN_REGISTER_KERNEL(Conv, "x86_dw_f32", kPrioritySpecialized, supports_dw_f32, DepthwiseF32);
ORKNN_REGISTER_KERNEL(Conv, "x86_dw_int8", kPrioritySpecialized, supports_dw_int8, DepthwiseInt8);

}  // namespace orknn
