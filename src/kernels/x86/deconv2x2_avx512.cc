// AVX-512 float ConvTranspose with a 2x2 kernel and stride 2 ("x86_deconv2x2_f32"): the upsampling
// layers of segmentation and detection heads (PP-OCRv4 det's two, 24 -> 24 and 24 -> 1 channels,
// took 1.6 and 2.9 ms in oneDNN's deconvolution, whose kernels are slow for few channels).
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

#include "common/env.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/ref/activation.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"

namespace orknn {
namespace {

constexpr int kMaxOc = 4;  // output channels per register block

// OPENRKNN_DISABLE_X86_DECONV=1 leaves every node to the other kernels (A/B measurements).
bool disabled_by_env() { return env_flag("OPENRKNN_DISABLE_X86_DECONV"); }

struct Deconv2x2Geometry {
  int64_t batch = 0, ic = 0, oc = 0, h = 0, w = 0;
};

bool deconv_geometry(const Graph& g, const Node& n, Deconv2x2Geometry* geo) {
  if (n.op != OpId::ConvTranspose || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1 ||
      n.outputs[0] < 0)
    return false;
  const Tensor* x = g.input(n, 0);
  const Tensor* w = g.input(n, 1);
  const Tensor* b = g.input(n, 2);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!is_f32(x) || !is_f32(w) || (b && !is_f32(b)) || !is_f32(&y)) return false;
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
  if (disabled_by_env() || !x86::cpu_avx512f()) return false;
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

}  // namespace

ORKNN_REGISTER_KERNEL(ConvTranspose, "x86_deconv2x2_f32", 20, supports_deconv2x2, Deconv2x2F32);

}  // namespace orknn
