// AVX-512 ConvTranspose with a 2x2 kernel and stride 2: the upsampling layers of segmentation and
// detection heads (PP-OCRv4 det's two, 24 -> 24 and 24 -> 1 channels, took 1.6 and 2.9 ms in
// oneDNN's float deconvolution and 3.3-3.7 ms each in its INT8 one, whose kernels are slow for few
// channels). Float: "x86_deconv2x2_f32"; quantized: "x86_deconv2x2_int8" (VNNI, below).
//
// With kernel 2, stride 2, no padding, each input pixel (i, j) makes the 2x2 output block
// (2i + a, 2j + b) alone: y[oc][2i+a][2j+b] = act(bias[oc] + sum over ic of x[ic][i][j] * w[ic][oc][a][b]).
// Per input row i, output row parity a and up to 4 output channels, 16 input pixels at a time:
// one load of x per input channel feeds 2 x 4 fused multiply-adds (b = 0, 1; 4 channels) with the
// weights broadcast from memory; the two parities of b are interleaved into 32 output columns.
// Numerics: the float tolerance of docs/kernels.md (the sum runs over ic in the reference's order,
// with fused multiply-adds). In fp16 mode the output is rounded in registers (rounds_fp16_outputs).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its AVX-512 headers
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"
#include "kernels/x86/int8_pack.h"
#include "kernels/x86/int8_requant.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

constexpr int kMaxOc = 4;  // output channels per register block

struct Deconv2x2Geometry {
  int64_t batch = 0, ic = 0, oc = 0, h = 0, w = 0;
};

// `quantized`: x, w, y int8 and the bias int32 (their parameters are checked by is_q8_conv_form),
// else all float32.
bool deconv_geometry(const Graph& g, const Node& n, Deconv2x2Geometry* geo, bool quantized = false) {
  if (n.op != OpId::ConvTranspose || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1 ||
      n.outputs[0] < 0)
    return false;
  const Tensor* x = g.input(n, 0);
  const Tensor* w = g.input(n, 1);
  const Tensor* b = g.input(n, 2);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!x || !w) return false;
  if (quantized) {
    if (x->dtype != DType::kI8 || w->dtype != DType::kI8 || (b && b->dtype != DType::kI32) || y.dtype != DType::kI8)
      return false;
  } else if (!is_f32(x) || !is_f32(w) || (b && !is_f32(b)) || !is_f32(&y)) {
    return false;
  }
  if (!w->is_const() || (b && !b->is_const())) return false;
  if (x->shape.size() != 4 || w->shape.size() != 4 || y.shape.size() != 4) return false;
  if (n.attrs.get_int("group", 1) != 1) return false;
  if (n.attrs.get_ints("kernel_shape", {w->shape[2], w->shape[3]}) != std::vector<int64_t>{2, 2}) return false;
  if (n.attrs.get_ints("strides", {1, 1}) != std::vector<int64_t>{2, 2}) return false;
  if (n.attrs.get_ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1}) return false;
  if (n.attrs.get_ints("pads", {0, 0, 0, 0}) != std::vector<int64_t>{0, 0, 0, 0}) return false;
  if (n.attrs.get_ints("output_padding", {0, 0}) != std::vector<int64_t>{0, 0}) return false;
  const int64_t ic = x->shape[1], oc = y.shape[1];
  if (w->shape != Shape{ic, oc, 2, 2} || w->data.size < w->nbytes()) return false;
  if (b && (b->shape != Shape{oc} || b->data.size < b->nbytes())) return false;
  if (y.shape != Shape{x->shape[0], oc, 2 * x->shape[2], 2 * x->shape[3]} || x->numel() <= 0) return false;
  geo->batch = x->shape[0];
  geo->ic = ic;
  geo->oc = oc;
  geo->h = x->shape[2];
  geo->w = x->shape[3];
  return true;
}

bool supports_deconv2x2(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f()) return false;
  Deconv2x2Geometry geo;
  return deconv_geometry(g, n, &geo);
}

// Output rows 2i + a of channels oc0 .. oc0 + NB - 1 from input row i of one image. wt: weights as
// [oc][a][b][ic]; x: the image's input; y: the image's output.
template <int NB>
__attribute__((target("avx512f,fma"))) void deconv_row(const float* x, const float* wt, const float* bias,
                                                        const ActVec& act, bool round_fp16, const Deconv2x2Geometry& g,
                                                        int64_t oc0, int64_t i, float* y) {
  const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi_idx = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const int64_t plane = g.h * g.w, oplane = 4 * plane, ow = 2 * g.w;
  for (int a = 0; a < 2; ++a) {
    for (int64_t j = 0; j < g.w; j += 16) {
      const int64_t n = std::min<int64_t>(16, g.w - j);
      const __mmask16 m = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
      __m512 acc[NB][2];  // kept in registers: the loops over o are unrolled
#pragma GCC unroll 4
      for (int o = 0; o < NB; ++o) acc[o][0] = acc[o][1] = _mm512_setzero_ps();
      const float* xp = x + i * g.w + j;
      for (int64_t c = 0; c < g.ic; ++c) {
        const __m512 xv = _mm512_maskz_loadu_ps(m, xp + c * plane);
#pragma GCC unroll 4
        for (int o = 0; o < NB; ++o) {
          const float* wp = wt + (((oc0 + o) * 2 + a) * 2) * g.ic + c;  // b = 0; b = 1 is g.ic further
          acc[o][0] = _mm512_fmadd_ps(xv, _mm512_set1_ps(wp[0]), acc[o][0]);
          acc[o][1] = _mm512_fmadd_ps(xv, _mm512_set1_ps(wp[g.ic]), acc[o][1]);
        }
      }
#pragma GCC unroll 4
      for (int o = 0; o < NB; ++o) {
        const __m512 bv = _mm512_set1_ps(bias ? bias[oc0 + o] : 0.f);
        __m512 e = apply_act(_mm512_add_ps(acc[o][0], bv), act);  // columns 2j, 2j + 2, ...
        __m512 d = apply_act(_mm512_add_ps(acc[o][1], bv), act);  // columns 2j + 1, ...
        if (round_fp16) {
          e = round_to_fp16_lanes(e);
          d = round_to_fp16_lanes(d);
        }
        float* out = y + (oc0 + o) * oplane + (2 * i + a) * ow + 2 * j;
        const int64_t cols = 2 * n;
        const __mmask16 m_lo = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
        const __mmask16 m_hi = cols >= 32 ? __mmask16(0xFFFF) : (cols > 16 ? __mmask16((1u << (cols - 16)) - 1) : 0);
        _mm512_mask_storeu_ps(out, m_lo, _mm512_permutex2var_ps(e, lo_idx, d));
        if (m_hi) _mm512_mask_storeu_ps(out + 16, m_hi, _mm512_permutex2var_ps(e, hi_idx, d));
      }
    }
  }
}

class Deconv2x2F32 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!deconv_geometry(*ctx.graph, *ctx.node, &geo_))
      return ORKNN_ERR(kFail, "ConvTranspose '%s': not a 2x2 stride-2 deconvolution this kernel handles",
                       ctx.node->name.c_str());
    act_ = read_act_vec(ctx.node->attrs);
    // ONNX weights [ic][oc][a][b] -> [oc][a][b][ic]: the input channels of one tap are contiguous.
    const float* w = ctx.in<float>(1);
    wt_.resize(static_cast<size_t>(geo_.oc * 4 * geo_.ic));
    for (int64_t c = 0; c < geo_.ic; ++c)
      for (int64_t o = 0; o < geo_.oc; ++o)
        for (int t = 0; t < 4; ++t) wt_[static_cast<size_t>((o * 4 + t) * geo_.ic + c)] = w[(c * geo_.oc + o) * 4 + t];
    if (ctx.has_input(2)) bias_.assign(ctx.in<float>(2), ctx.in<float>(2) + geo_.oc);
    return Status::Ok();
  }

  bool rounds_fp16_outputs() const override { return true; }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const int64_t oc_blocks = (geo_.oc + kMaxOc - 1) / kMaxOc;
    // Jobs are (image, input row); every channel block of a row runs while the row is in L1.
    const int64_t jobs = geo_.batch * geo_.h;
    parallel_ranges(jobs, ctx.num_threads, [&](int64_t j0, int64_t j1, int) {
      for (int64_t job = j0; job < j1; ++job) {
        const int64_t i = job % geo_.h, b = job / geo_.h;
        const float* xb = x + b * geo_.ic * geo_.h * geo_.w;
        float* yb = y + b * geo_.oc * 4 * geo_.h * geo_.w;
        const float* bias = bias_.empty() ? nullptr : bias_.data();
        for (int64_t blk = 0; blk < oc_blocks; ++blk) {
          const int64_t oc0 = blk * kMaxOc;
          switch (std::min<int64_t>(kMaxOc, geo_.oc - oc0)) {
            case 4: deconv_row<4>(xb, wt_.data(), bias, act_, ctx.round_fp16, geo_, oc0, i, yb); break;
            case 3: deconv_row<3>(xb, wt_.data(), bias, act_, ctx.round_fp16, geo_, oc0, i, yb); break;
            case 2: deconv_row<2>(xb, wt_.data(), bias, act_, ctx.round_fp16, geo_, oc0, i, yb); break;
            default: deconv_row<1>(xb, wt_.data(), bias, act_, ctx.round_fp16, geo_, oc0, i, yb); break;
          }
        }
      }
    });
  }

 private:
  Deconv2x2Geometry geo_;
  ActVec act_;
  std::vector<float> wt_, bias_;
};

// ---- INT8: "x86_deconv2x2_int8" ----
// y[o][2i+a][2j+b] = requant(bias_q[o] + sum over c of (x[c][i][j] - zp_x) * w[c][o][a][b]): each
// output takes one tap, so this is a 1x1 product with 4 outputs (a, b) per channel, stored with
// the depth-to-space interleave. Per job (image, input row i): the row is packed per 4 channels
// into the vpdpbusd operand layout (x86::pack_tile: tiles of 64 pixels, [c4][64 pixels][4
// channels] u8, x ^ 0x80, i.e. x + 128), then per output channel and 16 pixels 4 int32
// accumulators (a, b) run over c4 with
// the 4 taps' weights broadcast as dwords. As in the pointwise kernel, comp[o][a][b] = bias_q[o] -
// (zp_x + 128) * sum_c w[c][o][a][b] makes the wrapped sum the exact accumulator, and
// x86::requant16_float_bounds is requant_one's operations in its order: bit-exact with ref_int8
// (Int8FastVsRef.Deconv2x2Vnni). b = 0 and b = 1 bytes are interleaved into 32 output columns.
// NCHW in and out. Needs AVX-512 F/BW/VL and VNNI.

#define ORKNN_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

bool supports_deconv2x2_int8(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512vnni() || !is_quantized_node(g, n)) return false;
  Deconv2x2Geometry geo;
  return deconv_geometry(g, n, &geo, /*quantized=*/true) && is_q8_conv_form(g, n, geo.oc, /*weight_axis=*/1);
}

class Deconv2x2Int8 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!deconv_geometry(*ctx.graph, *ctx.node, &geo_, /*quantized=*/true))
      return ORKNN_ERR(kFail, "ConvTranspose '%s': not a 2x2 stride-2 deconvolution this kernel handles",
                       ctx.node->name.c_str());
    const QuantScalar qx = per_tensor(ctx.in_tensor(0));
    const Int8Output out = int8_output(qx.scale, ctx.in_tensor(1).quant, ctx.out_tensor(0), ctx.node->attrs, geo_.oc);
    c4_ = (geo_.ic + 3) / 4;
    tiles_ = (geo_.w + x86::kPackTilePixels - 1) / x86::kPackTilePixels;
    // ONNX weights [ic][oc][a][b] -> dwords [oc][tap][c4] of 4 input channels; comp per (oc, tap).
    const int8_t* w = ctx.in<int8_t>(1);
    const int32_t* bias = ctx.has_input(2) ? ctx.in<int32_t>(2) : nullptr;
    weights_.assign(static_cast<size_t>(geo_.oc * 4 * c4_), 0);
    comp_.assign(static_cast<size_t>(geo_.oc * 4), 0);
    for (int64_t o = 0; o < geo_.oc; ++o)
      for (int t = 0; t < 4; ++t) {
        int64_t sum = 0;
        for (int64_t c = 0; c < geo_.ic; ++c) {
          const int8_t v = w[(c * geo_.oc + o) * 4 + t];
          reinterpret_cast<int8_t*>(&weights_[static_cast<size_t>((o * 4 + t) * c4_ + c / 4)])[c % 4] = v;
          sum += v;
        }
        comp_[static_cast<size_t>(o * 4 + t)] = x86::u8_compensation(bias ? bias[o] : 0, sum, qx.zp);
      }
    mult_ = out.mult;
    zp_y_ = out.zp_y;
    lo_ = static_cast<float>(out.clamp.lo - out.zp_y);
    hi_ = static_cast<float>(out.clamp.hi - out.zp_y);
    slots_ = thread_slots(ctx.num_threads);
    packs_.assign(static_cast<size_t>(slots_ * row_bytes()), 0);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    const int64_t jobs = geo_.batch * geo_.h;  // (image, input row)
    const int nt = std::min(threads_for(jobs * geo_.w * geo_.ic * geo_.oc, int64_t{1} << 18, ctx.num_threads), slots_);
    parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int slot) {
      uint8_t* pack = packs_.data() + static_cast<size_t>(slot * row_bytes());
      const int64_t plane = geo_.h * geo_.w;
      for (int64_t job = j0; job < j1; ++job) {
        const int64_t i = job % geo_.h, b = job / geo_.h;
        for (int64_t t = 0; t < tiles_; ++t) {
          const int64_t j = t * x86::kPackTilePixels;
          x86::pack_tile(x + b * geo_.ic * plane, geo_.ic, plane, i * geo_.w + j,
                         std::min(x86::kPackTilePixels, geo_.w - j), pack + t * tile_bytes());
        }
        row(pack, i, y + b * geo_.oc * 4 * plane);
      }
    });
  }

 private:
  Deconv2x2Geometry geo_;
  int64_t c4_ = 0, tiles_ = 0;  // tiles of 64 pixels per input row
  std::vector<int32_t> weights_, comp_;
  std::vector<float> mult_;
  int32_t zp_y_ = 0;
  float lo_ = -128.f, hi_ = 127.f;
  int slots_ = 1;
  std::vector<uint8_t> packs_;  // one packed input row per thread slot

  int64_t tile_bytes() const { return c4_ * x86::kPackTilePixels * 4; }
  int64_t row_bytes() const { return tiles_ * tile_bytes(); }

  // Output rows 2i, 2i + 1 of every channel of one image (yb) from the packed input row i.
  ORKNN_VNNI void row(const uint8_t* pack, int64_t i, int8_t* yb) const {
    const int64_t ow = 2 * geo_.w, oplane = 4 * geo_.h * geo_.w;
    const __m512 vlo = _mm512_set1_ps(lo_), vhi = _mm512_set1_ps(hi_);
    const __m512i zp = _mm512_set1_epi32(zp_y_);
    for (int64_t o = 0; o < geo_.oc; ++o) {
      const int32_t* wo = weights_.data() + o * 4 * c4_;
      const __m512 mv = _mm512_set1_ps(mult_[static_cast<size_t>(o)]);
      for (int64_t gi = 0; 16 * gi < geo_.w; ++gi) {  // 16 pixels: a quarter of a packed tile
        const uint8_t* px = pack + (gi / 4) * tile_bytes() + (gi % 4) * 64;
        __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                          _mm512_setzero_si512()};
        for (int64_t k = 0; k < c4_; ++k) {
          const __m512i xv = _mm512_loadu_si512(px + k * x86::kPackTilePixels * 4);
#pragma GCC unroll 4
          for (int t = 0; t < 4; ++t) acc[t] = _mm512_dpbusd_epi32(acc[t], xv, _mm512_set1_epi32(wo[t * c4_ + k]));
        }
        const int64_t j = 16 * gi, cols = 2 * std::min<int64_t>(16, geo_.w - j);
        const __mmask32 m = cols >= 32 ? ~__mmask32{0} : ((__mmask32{1} << cols) - 1);
        for (int a = 0; a < 2; ++a) {
          __m128i q[2];
          for (int bb = 0; bb < 2; ++bb) {
            const int t = 2 * a + bb;
            q[bb] = _mm512_cvtepi32_epi8(x86::requant16_float_bounds(
                acc[t], _mm512_set1_epi32(comp_[static_cast<size_t>(o * 4 + t)]), mv, vlo, vhi, zp));
          }
          // Columns 2j + 2p + b: the b = 0 and b = 1 bytes alternate.
          const __m256i cols32 = _mm256_set_m128i(_mm_unpackhi_epi8(q[0], q[1]), _mm_unpacklo_epi8(q[0], q[1]));
          _mm256_mask_storeu_epi8(yb + o * oplane + (2 * i + a) * ow + 2 * j, m, cols32);
        }
      }
    }
  }
};

}  // namespace

ORKNN_REGISTER_KERNEL(ConvTranspose, "x86_deconv2x2_f32", kPrioritySpecialized, supports_deconv2x2, Deconv2x2F32);
ORKNN_REGISTER_KERNEL(ConvTranspose, "x86_deconv2x2_int8", kPrioritySpecialized, supports_deconv2x2_int8, Deconv2x2Int8);

}  // namespace orknn
