// INT8 pointwise (1x1) Conv with AVX-512 VNNI, requantization fused, on NCHW or on NHWC tensors
// (the runtime's channels-last INT8 activations; NhwcPw below).
//
// NCHW. Why: a 1x1 convolution is the product W[OC][C] x X[C][P] (P = H*W pixels), and in NCHW the
// pixels of a channel are contiguous, so it needs no channels-last layout. The oneDNN kernel
// (onednn_conv_int8) transposes the input into a channels-last u8 buffer, writes 4-byte int32
// accumulators and transposes them back while requantizing; for the cheap pointwise layers of
// mobile networks those passes cost several times the product itself. Here:
//   * a tile of 64 pixels of the input is packed per group of 4 channels into [C/4][64][4] u8
//     (x + 128, the sign-bit flip): the operand layout of vpdpbusd, 64 bytes per pixel vector;
//   * each vpdpbusd adds, for 16 pixels, 4 products u8 x s8 into int32 lanes (wrap-around, no
//     saturation); weights are 4 channels of one output row broadcast as one dword;
//   * 4 output rows x 64 pixels of accumulators stay in registers over all of C and are
//     requantized there and stored as 16-byte rows of the NCHW output.
//
// Numerics (bit-exact with ref_int8, docs/numerics.md): sum(x_u8 * w) + comp[oc] with
// comp[oc] = bias_q[oc] - (zp_x + 128) * sum(w[oc]) is the exact accumulator
// sum((x - zp_x) * w) + bias_q modulo 2^32, and the true value fits in int32 (infer bounds it), so
// the wrapped sum is exact. Then the operations of x86::requant_one in its order:
// float(acc) * M[oc], clamp to [-512, 512], round half to even (vcvtps2dq, default MXCSR), + zp_y,
// then the Relu/Clip bounds.
//
// Handles: quantized 2-D Conv, 1x1 kernel, stride 1, no padding, group 1, per-tensor or
// per-output-channel weights; the NCHW path from g_min_pixels pixels per image (LayoutFit): vectors
// of 16 pixels waste the lanes past the last pixel (a 7x7 image fills 49 of 64); measured on
// mobilenet_v2 (docs/kernels.md, "INT8 pointwise"), that path wins over oneDNN at 28x28 and up,
// ties at 14x14 and loses ~40% at 7x7. The NHWC path vectorises over output channels and takes
// every size. Needs AVX-512 F/BW/VL and VNNI.
// OPENRKNN_DISABLE_X86_PW=1 leaves every node to the other kernels (A/B measurements).
// GCC 12 reports the _mm512_undefined_*() placeholders inside its own AVX-512 intrinsics as "may
// be" or, once inlined into the NHWC tile, "is used uninitialized" (false positives); the pragmas
// must precede the header to cover them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/env.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/x86/int8_requant.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

constexpr int64_t kTilePixels = 64;  // 4 vectors of 16 pixels
constexpr int kRows = 4;             // output rows per register block
int64_t g_min_pixels = 256;          // see the file comment; tests lower it

bool cpu_has_vnni() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  return ok;
}

bool disabled_by_env() { return env_flag("OPENRKNN_DISABLE_X86_PW"); }

struct PwGeometry {
  int64_t batch = 0, c = 0, oc = 0, pixels = 0;  // pixels: of one output image
  int64_t h = 0, w = 0, ow = 0, sh = 1, sw = 1;  // input H, W; output W; strides (NHWC path only)
  bool strided() const { return sh != 1 || sw != 1; }
};

bool pw_geometry(const Graph& g, const Node& n, PwGeometry* geo) {
  if (n.op != OpId::Conv || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1 || n.outputs[0] < 0)
    return false;
  const Tensor* x = g.input(n, 0);
  const Tensor* w = g.input(n, 1);
  if (!x || !w || !w->is_const()) return false;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x->shape.size() != 4 || w->shape.size() != 4 || y.shape.size() != 4) return false;
  if (n.attrs.get_int("group", 1) != 1) return false;
  if (w->shape[2] != 1 || w->shape[3] != 1 || w->shape[1] != x->shape[1]) return false;
  const std::vector<int64_t> st = n.attrs.get_ints("strides", {1, 1});
  if (st.size() != 2 || st[0] < 1 || st[0] > 2 || st[1] < 1 || st[1] > 2) return false;
  for (int64_t p : n.attrs.get_ints("pads", {0, 0, 0, 0}))
    if (p != 0) return false;
  const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  // A 1x1 window without padding: output pixel (i, j) reads input pixel (i * sh, j * sw).
  if (y.shape[0] != x->shape[0] || y.shape[1] != w->shape[0] || y.shape[2] != (x->shape[2] - 1) / st[0] + 1 ||
      y.shape[3] != (x->shape[3] - 1) / st[1] + 1)
    return false;
  geo->batch = x->shape[0];
  geo->c = x->shape[1];
  geo->oc = w->shape[0];
  geo->pixels = y.shape[2] * y.shape[3];
  geo->h = x->shape[2];
  geo->w = x->shape[3];
  geo->ow = y.shape[3];
  geo->sh = st[0];
  geo->sw = st[1];
  return geo->batch > 0 && geo->c > 0 && geo->oc > 0;
}

bool supports_pw_int8(const Graph& g, const Node& n) {
  if (!cpu_has_vnni() || disabled_by_env() || !is_quantized_node(g, n)) return false;
  PwGeometry geo;
  return pw_geometry(g, n, &geo) && is_q8_conv_form(g, n, geo.oc);
}

#define ORKNN_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

// Packs pixels [p0, p0 + np) of channels [0, c) of one NCHW image into dst[c4][64][4] u8
// (x ^ 0x80), channels past c and pixels past np as 0x80 (their weights are 0 / they are not
// stored).
ORKNN_VNNI void pack_tile(const int8_t* x, int64_t c, int64_t pixels, int64_t p0, int64_t np, uint8_t* dst) {
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
    uint8_t* d = dst + k * kTilePixels * 4;
    _mm512_storeu_si512(d, _mm512_shuffle_i32x4(s0, s1, 0x88));        // pixels 0-15
    _mm512_storeu_si512(d + 64, _mm512_shuffle_i32x4(s0, s1, 0xDD));   // 16-31
    _mm512_storeu_si512(d + 128, _mm512_shuffle_i32x4(s2, s3, 0x88));  // 32-47
    _mm512_storeu_si512(d + 192, _mm512_shuffle_i32x4(s2, s3, 0xDD));  // 48-63
  }
}

struct Epilogue {
  const int32_t* comp;
  const float* mult;
  int32_t zp, lo, hi;
};

// Output rows [r0, r0 + kRows) (weights block `wb`: [c4][kRows] dwords) x the packed tile:
// accumulate, requantize and store np pixels of each row that exists (< oc).
ORKNN_VNNI void row_block(const uint8_t* tile, int64_t c4, const int32_t* wb, int64_t r0, int64_t oc, int64_t np,
                          const Epilogue& e, int8_t* y, int64_t pixels) {
  __m512i acc[kRows][4];
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < 4; ++v) acc[r][v] = _mm512_setzero_si512();
  for (int64_t k = 0; k < c4; ++k) {
    const uint8_t* t = tile + k * kTilePixels * 4;
    const __m512i x0 = _mm512_loadu_si512(t), x1 = _mm512_loadu_si512(t + 64);
    const __m512i x2 = _mm512_loadu_si512(t + 128), x3 = _mm512_loadu_si512(t + 192);
    const int32_t* w = wb + k * kRows;
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m512i wr = _mm512_set1_epi32(w[r]);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], x0, wr);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], x1, wr);
      acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], x2, wr);
      acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], x3, wr);
    }
  }
  const __m512 vmin = _mm512_set1_ps(-512.f), vmax = _mm512_set1_ps(512.f);
  const __m512i zp = _mm512_set1_epi32(e.zp), lo = _mm512_set1_epi32(e.lo), hi = _mm512_set1_epi32(e.hi);
  for (int r = 0; r < kRows && r0 + r < oc; ++r) {
    const int64_t o = r0 + r;
    const __m512i comp = _mm512_set1_epi32(e.comp[o]);
    const __m512 mult = _mm512_set1_ps(e.mult[o]);
    int8_t* out = y + o * pixels;
    for (int v = 0; v < 4 && v * 16 < np; ++v) {
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[r][v], comp)), mult);
      f = _mm512_min_ps(_mm512_max_ps(f, vmin), vmax);
      __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), zp);
      q = _mm512_min_epi32(_mm512_max_epi32(q, lo), hi);
      const __m128i b = _mm512_cvtepi32_epi8(q);  // in [-128, 127]: truncation is exact
      const int64_t left = np - v * 16;
      if (left >= 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + v * 16), b);
      else _mm_mask_storeu_epi8(out + v * 16, static_cast<__mmask16>((1u << left) - 1u), b);
    }
  }
}


// ---- NHWC activations: Y[P][OC] = X[P][C] x W, P = all pixels of all images ----
// The product of channels-last rows: for 4 channels of a pixel (one dword of its row, broadcast)
// and 16 output channels (one 64-byte vector of weights packed [c4][16 oc][4 channels]), one
// vpdpbusd adds 64 products. A register tile of kNhwcRows pixels x kNhwcVecs x 16 output channels
// runs over all of C, then is requantized in registers and stored as rows of the NHWC output. The
// tile's input rows are first flipped to u8 (x ^ 0x80) into a per-thread buffer. Same numerics as
// the NCHW path (comp, requant_one's operations); the bounds are applied in float as in the NHWC
// depthwise kernel (integers: clamping before round-to-nearest equals clamping after).

constexpr int kNhwcRows = 6;  // pixels per register tile
constexpr int kNhwcVecs = 4;  // 16-channel output vectors per register tile (64 channels)
constexpr int64_t kNhwcPixelsPerJob = 8 * kNhwcRows;

struct NhwcPw {
  int64_t c = 0, c4 = 0, oc = 0, ocv = 0;  // ocv: 16-channel output vectors (last one padded)
  std::vector<int8_t> w;      // [ocv][c4][16][4], zero past oc and c
  std::vector<int32_t> comp;  // [ocv * 16]
  std::vector<float> mult;    // [ocv * 16]
  int32_t zp_y = 0;
  float lo = -128.f, hi = 127.f;  // output bounds minus zp_y

  // Pixels xu[0..R) (u8 rows of c bytes) x output vectors [v0, v0 + V) -> y rows (stride oc),
  // R <= 6, V <= 4. The 24 accumulators are named variables updated by inline assembly: given the
  // intrinsic (or an array) in the loop over the channels, GCC 12 copies every accumulator to a
  // new register, or keeps them on the stack, on each step; the "+v" operands keep each one in
  // its register.
  template <int R, int V>
  ORKNN_VNNI void tile(const uint8_t* xu, int64_t v0, int8_t* y) const {
    static_assert(R >= 1 && R <= 6 && V >= 1 && V <= 4, "register tile of at most 6 x 4 vectors");
    const __m512i z = _mm512_setzero_si512();
    __m512i a00 = z, a01 = z, a02 = z, a03 = z, a10 = z, a11 = z, a12 = z, a13 = z;
    __m512i a20 = z, a21 = z, a22 = z, a23 = z, a30 = z, a31 = z, a32 = z, a33 = z;
    __m512i a40 = z, a41 = z, a42 = z, a43 = z, a50 = z, a51 = z, a52 = z, a53 = z;
    const int8_t* wp = w.data() + v0 * c4 * 64;
    const int64_t wstep = c4 * 64;
    for (int64_t k = 0; k < c4; ++k, wp += 64) {
      const __m512i w0 = _mm512_loadu_si512(wp);
      const __m512i w1 = V > 1 ? _mm512_loadu_si512(wp + wstep) : z;
      const __m512i w2 = V > 2 ? _mm512_loadu_si512(wp + 2 * wstep) : z;
      const __m512i w3 = V > 3 ? _mm512_loadu_si512(wp + 3 * wstep) : z;
// acc += the products of x (u8) and w (s8), AT&T operand order.
#define ORKNN_DPBUSD(acc, x, w) asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w))
#define ORKNN_PW_ROW(r)                                        \
  if constexpr (R > r) {                                       \
    int32_t d;                                                 \
    std::memcpy(&d, xu + r * c + 4 * k, 4);                    \
    const __m512i x = _mm512_set1_epi32(d);                    \
    ORKNN_DPBUSD(a##r##0, x, w0);                              \
    if constexpr (V > 1) ORKNN_DPBUSD(a##r##1, x, w1);         \
    if constexpr (V > 2) ORKNN_DPBUSD(a##r##2, x, w2);         \
    if constexpr (V > 3) ORKNN_DPBUSD(a##r##3, x, w3);         \
  }
      ORKNN_PW_ROW(0) ORKNN_PW_ROW(1) ORKNN_PW_ROW(2) ORKNN_PW_ROW(3) ORKNN_PW_ROW(4) ORKNN_PW_ROW(5)
#undef ORKNN_PW_ROW
#undef ORKNN_DPBUSD
    }
    const __m512i acc[6][4] = {{a00, a01, a02, a03}, {a10, a11, a12, a13}, {a20, a21, a22, a23},
                               {a30, a31, a32, a33}, {a40, a41, a42, a43}, {a50, a51, a52, a53}};
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const __m512i zp = _mm512_set1_epi32(zp_y);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t o = (v0 + v) * 16;
      const __m512i cv = _mm512_loadu_si512(comp.data() + o);
      const __m512 mv = _mm512_loadu_ps(mult.data() + o);
      const int64_t left = oc - o;
      const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[r][v], cv)), mv);
        f = _mm512_min_ps(_mm512_max_ps(f, vlo), vhi);
        const __m128i b = _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), zp));
        _mm_mask_storeu_epi8(y + r * oc + o, m, b);
      }
    }
  }

  // Pixels [p0, p0 + np) of the flipped rows xu (row p at xu + (p - p0) * c) x output vectors
  // [v0, v1): full tiles, then the tails.
  template <int R>
  ORKNN_VNNI void rows(const uint8_t* xu, int64_t v0, int64_t v1, int8_t* y) const {
    int64_t v = v0;
    for (; v + kNhwcVecs <= v1; v += kNhwcVecs) tile<R, kNhwcVecs>(xu, v, y);
    switch (v1 - v) {
      case 3: tile<R, 3>(xu, v, y); break;
      case 2: tile<R, 2>(xu, v, y); break;
      case 1: tile<R, 1>(xu, v, y); break;
      default: break;
    }
  }

  void run_rows(const uint8_t* xu, int64_t np, int64_t v0, int64_t v1, int8_t* y) const {
    int64_t p = 0;
    for (; p + kNhwcRows <= np; p += kNhwcRows) rows<kNhwcRows>(xu + p * c, v0, v1, y + p * oc);
    switch (np - p) {
      case 5: rows<5>(xu + p * c, v0, v1, y + p * oc); break;
      case 4: rows<4>(xu + p * c, v0, v1, y + p * oc); break;
      case 3: rows<3>(xu + p * c, v0, v1, y + p * oc); break;
      case 2: rows<2>(xu + p * c, v0, v1, y + p * oc); break;
      case 1: rows<1>(xu + p * c, v0, v1, y + p * oc); break;
      default: break;
    }
  }
};

class PointwiseInt8 : public Kernel {
 public:
  // Input and output NCHW (pixel tiles) or both NHWC (NhwcPw); the NCHW path only unstrided and
  // from g_min_pixels up.
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kUniform; }
  LayoutFit layout_fit(const Graph& g, const Node& n) const override {
    PwGeometry geo;
    const bool nchw = pw_geometry(g, n, &geo) && !geo.strided() && geo.pixels >= g_min_pixels;
    return nchw ? LayoutFit::kAny : LayoutFit::kBlockedOnly;
  }

  Status prepare(const KernelContext& ctx) override {
    if (!pw_geometry(*ctx.graph, *ctx.node, &geo_))
      return ORKNN_ERR(kFail, "Conv '%s': not a pointwise convolution this kernel handles", ctx.node->name.c_str());
    const QuantScalar qx = per_tensor(ctx.in_tensor(0));
    const Int8Output out = int8_output(qx.scale, ctx.in_tensor(1).quant, ctx.out_tensor(0), ctx.node->attrs, geo_.oc);
    blocked_ = ctx.input_blocked(0);
    if (blocked_ != ctx.output_blocked(0))
      return ORKNN_ERR(kFail, "Conv '%s': input and output must share their layout", ctx.node->name.c_str());
    if (!blocked_ && geo_.strided())
      return ORKNN_ERR(kFail, "Conv '%s': strides on NCHW activations are not handled", ctx.node->name.c_str());
    c4_ = (geo_.c + 3) / 4;
    blocks_ = (geo_.oc + kRows - 1) / kRows;
    // NCHW path: weights as [block][c4][row] dwords of 4 channels; missing rows/channels are 0.
    const int8_t* w = ctx.in<int8_t>(1);
    if (!blocked_) weights_.assign(static_cast<size_t>(blocks_ * c4_ * kRows), 0);
    comp_.resize(static_cast<size_t>(geo_.oc));
    const int32_t* bias = ctx.has_input(2) ? ctx.in<int32_t>(2) : nullptr;
    const int64_t zp_u8 = static_cast<int64_t>(qx.zp) + 128;
    for (int64_t o = 0; o < geo_.oc; ++o) {
      int64_t sum = 0;
      for (int64_t ch = 0; ch < geo_.c; ++ch) {
        const int8_t v = w[o * geo_.c + ch];
        sum += v;
        if (blocked_) continue;
        const size_t dw = static_cast<size_t>(((o / kRows) * c4_ + ch / 4) * kRows + o % kRows);
        reinterpret_cast<int8_t*>(&weights_[dw])[ch % 4] = v;
      }
      const int64_t comp = (bias ? static_cast<int64_t>(bias[o]) : 0) - zp_u8 * sum;
      comp_[static_cast<size_t>(o)] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(comp)));
    }
    mult_ = out.mult;
    zp_y_ = out.zp_y;
    lo_ = out.clamp.lo;
    hi_ = out.clamp.hi;
    slots_ = thread_slots(ctx.num_threads);
    if (blocked_) {
      prepare_nhwc(w, out);
      return Status::Ok();
    }
    tiles_.assign(static_cast<size_t>(slots_) * static_cast<size_t>(c4_ * kTilePixels * 4), 0);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    if (blocked_) return run_nhwc(ctx);
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    const int64_t tiles_per_image = (geo_.pixels + kTilePixels - 1) / kTilePixels;
    const int64_t tiles = geo_.batch * tiles_per_image;
    const int nt = std::min(std::max(1, ctx.num_threads), slots_);
    // Jobs are (pixel tile, range of row blocks); with few tiles (7x7 layers) the rows are split
    // too, so that every thread gets work. Each job packs its tile (cheap next to the product).
    const int64_t row_parts = std::min<int64_t>(blocks_, std::max<int64_t>(1, (4 * nt + tiles - 1) / tiles));
    const int64_t jobs = tiles * row_parts;
    const Epilogue e{comp_.data(), mult_.data(), zp_y_, lo_, hi_};
    // Claimed a few consecutive jobs at a time: neighbouring tiles (whose output rows share cache
    // lines when the image is not a multiple of 64 pixels) mostly stay on one thread.
    parallel_claimed(jobs, nt, jobs / (8 * nt), [&](int64_t j, int slot) {
      uint8_t* tile = tiles_.data() + static_cast<size_t>(slot) * static_cast<size_t>(c4_ * kTilePixels * 4);
      const int64_t t = j / row_parts, part = j % row_parts;
      const int64_t b = t / tiles_per_image, p0 = (t % tiles_per_image) * kTilePixels;
      const int64_t np = std::min(kTilePixels, geo_.pixels - p0);
      const int8_t* xb = x + b * geo_.c * geo_.pixels;
      int8_t* yb = y + b * geo_.oc * geo_.pixels + p0;
      pack_tile(xb, geo_.c, geo_.pixels, p0, np, tile);
      const int64_t blk0 = blocks_ * part / row_parts, blk1 = blocks_ * (part + 1) / row_parts;
      for (int64_t blk = blk0; blk < blk1; ++blk)
        row_block(tile, c4_, weights_.data() + blk * c4_ * kRows, blk * kRows, geo_.oc, np, e, yb, geo_.pixels);
    });
  }

 private:
  PwGeometry geo_;
  int64_t c4_ = 0, blocks_ = 0;
  std::vector<int32_t> weights_;
  std::vector<int32_t> comp_;
  std::vector<float> mult_;
  int32_t zp_y_ = 0, lo_ = -128, hi_ = 127;
  int slots_ = 1;
  std::vector<uint8_t> tiles_;  // one packed tile per thread slot
  // NHWC activations (NhwcPw).
  bool blocked_ = false;
  NhwcPw nhwc_;
  std::vector<uint8_t> rows_;  // per thread slot: one job's input rows flipped to u8

  void prepare_nhwc(const int8_t* w, const Int8Output& out) {
    NhwcPw& d = nhwc_;
    d.c = geo_.c;
    d.c4 = c4_;
    d.oc = geo_.oc;
    d.ocv = (geo_.oc + 15) / 16;
    d.w.assign(static_cast<size_t>(d.ocv * d.c4 * 64), 0);
    for (int64_t o = 0; o < geo_.oc; ++o)
      for (int64_t ch = 0; ch < geo_.c; ++ch)
        d.w[static_cast<size_t>(((o / 16) * d.c4 + ch / 4) * 64 + (o % 16) * 4 + ch % 4)] = w[o * geo_.c + ch];
    d.comp.assign(static_cast<size_t>(d.ocv * 16), 0);
    d.mult.assign(static_cast<size_t>(d.ocv * 16), 0.f);
    std::copy(comp_.begin(), comp_.end(), d.comp.begin());
    std::copy(out.mult.begin(), out.mult.end(), d.mult.begin());
    d.zp_y = out.zp_y;
    d.lo = static_cast<float>(out.clamp.lo - out.zp_y);
    d.hi = static_cast<float>(out.clamp.hi - out.zp_y);
    rows_.assign(static_cast<size_t>(slots_) * nhwc_row_bytes() + 64, 0);  // + alignment
  }

  // Output pixels [p0, p0 + np) of all images: their input rows (x ^ 0x80) into xu.
  void flip_rows(const int8_t* x, int64_t p0, int64_t np, uint8_t* xu) const {
    const int64_t c = geo_.c;
    if (!geo_.strided()) return x86::int8_to_u8(x + p0 * c, np * c, xu);
    for (int64_t p = p0; p < p0 + np; ++p, xu += c) {
      const int64_t b = p / geo_.pixels, i = (p % geo_.pixels) / geo_.ow, j = p % geo_.ow;
      x86::int8_to_u8(x + ((b * geo_.h + i * geo_.sh) * geo_.w + j * geo_.sw) * c, c, xu);
    }
  }

  // One slot's flipped rows: +4 because the last pixel's last 4-channel group may read past its
  // row (those weights are 0); whole cache lines, so that the threads' slots share none.
  size_t nhwc_row_bytes() const { return static_cast<size_t>((kNhwcPixelsPerJob * geo_.c + 4 + 63) / 64 * 64); }

  void run_nhwc(const KernelContext& ctx) {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    const NhwcPw& d = nhwc_;
    const int64_t pixels = geo_.batch * geo_.pixels;  // the output pixels of all images, as rows
    const int64_t blocks = (pixels + kNhwcPixelsPerJob - 1) / kNhwcPixelsPerJob;
    const int64_t macs = pixels * geo_.c * geo_.oc;
    const int nt = std::min(threads_for(macs, int64_t{1} << 20, ctx.num_threads), slots_);
    // Jobs are pixel blocks; with fewer than two per thread, the output channels are split too
    // (in 64-channel tiles). Parts of one pixel row written by different threads share cache
    // lines, so only then.
    const int64_t vec_tiles = (d.ocv + kNhwcVecs - 1) / kNhwcVecs;
    const int64_t parts = blocks >= 2 * nt ? 1 : std::min(vec_tiles, (2 * nt + blocks - 1) / blocks);
    const size_t row_bytes = nhwc_row_bytes();
    uint8_t* rows_base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(rows_.data()) + 63) & ~uintptr_t{63});
    // A contiguous range of jobs per thread: measured faster here than claiming jobs (mobilenet_v2
    // int8, 2 threads: 112x112 16 -> 96 channels 134 -> 98-106 us, 56x56 144 -> 24 33 -> 25 us).
    parallel_ranges(blocks * parts, nt, [&](int64_t j0, int64_t j1, int slot) {
      uint8_t* xu = rows_base + static_cast<size_t>(slot) * row_bytes;
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t b = j / parts, part = j % parts;
        const int64_t p0 = b * kNhwcPixelsPerJob, np = std::min(kNhwcPixelsPerJob, pixels - p0);
        const int64_t v0 = vec_tiles * part / parts * kNhwcVecs;
        const int64_t v1 = std::min(d.ocv, vec_tiles * (part + 1) / parts * kNhwcVecs);
        if (part == 0 || j == j0) flip_rows(x, p0, np, xu);
        d.run_rows(xu, np, v0, v1, y + p0 * geo_.oc);
      }
    });
  }
};

}  // namespace

// Tests: the smallest image (pixels) the NCHW path is chosen for (LayoutFit); < 16 restores the
// default. Returns the previous value. Call before kernels are selected.
int64_t x86_pointwise_int8_set_min_pixels(int64_t pixels) {
  const int64_t previous = g_min_pixels;
  g_min_pixels = pixels < 16 ? 256 : pixels;
  return previous;
}

ORKNN_REGISTER_KERNEL(Conv, "x86_pw_int8", 20, supports_pw_int8, PointwiseInt8);

}  // namespace orknn
