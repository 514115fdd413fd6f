// AVX-512 float Gemm with one row ("x86_gemv_f32"): the classifier layer of a CNN, Y[1,N] =
// act(alpha * A[1,K] * B + beta * C). It reads every weight once per run and does one multiply-add
// with it, so its time is the time to stream B from memory (mobilenet_v2's 1280 x 1000 fp32 weights:
// 5 MB, 200 us in oneDNN at one thread, 4% of the network).
//
// In fp16 mode the converter has already rounded the weights to fp16 values, so they are stored
// here as fp16 (half the bytes to stream) and widened exactly in registers (vcvtph2ps). Weights
// that are not all fp16 values (pure fp32 models) stay fp32. Layout, prepared once: blocks of 64
// outputs, each [K][64], so that one block streams contiguously; per block four 16-lane
// accumulators run over k ascending with fused multiply-adds (the reference's order, one rounding
// less per step: the float tolerance of docs/kernels.md). Then, as the reference: alpha * acc,
// + beta * C, the fused activation, and in fp16 mode the rounding, in registers.
// Blocks are split over the node's threads (each streams its own part of B).
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

constexpr int64_t kBlock = 64;  // outputs per block: 4 vectors of 16
// Below this many weights per thread, waking another thread costs more than it saves.
constexpr int64_t kMinWeightsPerThread = 64 * 1024;

// OPENRKNN_DISABLE_X86_GEMV=1 leaves every node to the other kernels (A/B measurements).
bool disabled_by_env() { return env_flag("OPENRKNN_DISABLE_X86_GEMV"); }

struct GemvGeometry {
  int64_t k = 0, n = 0;
  bool trans_b = false;
  float alpha = 1.f, beta = 1.f;
  bool has_c = false, c_scalar = false;  // C: one value, or N values (a row)
};

// A is one row ([1,K], or [K,1] with transA: the same bytes); B a constant [K,N] ([N,K] with
// transB); C, when it counts (beta != 0), one value or a row of N.
bool gemv_geometry(const Graph& g, const Node& n, GemvGeometry* geo) {
  if (n.op != OpId::Gemm || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1 || n.outputs[0] < 0)
    return false;
  const Tensor* a = g.input(n, 0);
  const Tensor* b = g.input(n, 1);
  const Tensor* c = g.input(n, 2);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!is_f32(a) || !is_f32(b) || (c && !is_f32(c)) || !is_f32(&y)) return false;
  if (!b->is_const() || a->shape.size() != 2 || b->shape.size() != 2 || y.shape.size() != 2) return false;
  const bool trans_a = n.attrs.get_int("transA", 0) != 0;
  geo->trans_b = n.attrs.get_int("transB", 0) != 0;
  geo->alpha = n.attrs.get_float("alpha", 1.f);
  geo->beta = n.attrs.get_float("beta", 1.f);
  if (!std::isfinite(geo->alpha) || !std::isfinite(geo->beta)) return false;
  if ((trans_a ? a->shape[1] : a->shape[0]) != 1) return false;
  geo->k = trans_a ? a->shape[0] : a->shape[1];
  geo->n = geo->trans_b ? b->shape[0] : b->shape[1];
  if ((geo->trans_b ? b->shape[1] : b->shape[0]) != geo->k || geo->k <= 0 || geo->n <= 0) return false;
  if (y.shape != Shape{1, geo->n} || b->data.size < b->nbytes()) return false;
  geo->has_c = c && geo->beta != 0.f;
  if (geo->has_c) {
    const Shape& cs = c->shape;
    if (cs.size() > 2 || (cs.size() == 2 && cs[0] != 1)) return false;
    const int64_t last = cs.empty() ? 1 : cs.back();
    if (last != 1 && last != geo->n) return false;
    geo->c_scalar = last == 1;
  }
  return true;
}

bool supports_gemv(const Graph& g, const Node& n) {
  if (disabled_by_env() || !x86::cpu_avx512f()) return false;
  GemvGeometry geo;
  return gemv_geometry(g, n, &geo);
}

// dst = src as fp16 (nearest), n a multiple of 16; false unless every value comes back equal (a
// NaN never does).
__attribute__((target("avx512f"))) bool to_fp16_if_exact(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    const __m512 v = _mm512_loadu_ps(src + i);
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    if (_mm512_cmp_ps_mask(_mm512_cvtph_ps(h), v, _CMP_EQ_OQ) != 0xFFFF) return false;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), h);
  }
  return true;
}

// 16 weights as floats: fp16 storage widened exactly, or fp32.
__attribute__((target("avx512f"))) inline __m512 load_weights(const uint16_t* w) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
}
__attribute__((target("avx512f"))) inline __m512 load_weights(const float* w) { return _mm512_loadu_ps(w); }

class GemvF32 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!gemv_geometry(*ctx.graph, *ctx.node, &geo_))
      return ORKNN_ERR(kFail, "Gemm '%s': not a one-row product this kernel handles", ctx.node->name.c_str());
    act_ = read_act_vec(ctx.node->attrs);
    // B(k, j) at [block j / 64][k][j % 64], zeros past N.
    const float* b = ctx.in<float>(1);
    blocks_ = (geo_.n + kBlock - 1) / kBlock;
    // Written in order, each block's columns of B read side by side.
    std::vector<float> packed(static_cast<size_t>(blocks_ * geo_.k * kBlock), 0.f);
    for (int64_t blk = 0; blk < blocks_; ++blk)
      for (int64_t k = 0; k < geo_.k; ++k) {
        float* dst = packed.data() + (blk * geo_.k + k) * kBlock;
        for (int64_t j = blk * kBlock; j < std::min(geo_.n, (blk + 1) * kBlock); ++j)
          dst[j - blk * kBlock] = geo_.trans_b ? b[j * geo_.k + k] : b[k * geo_.n + j];
      }
    w32_.clear();
    w16_.assign(packed.size(), 0);  // packed.size() is a multiple of kBlock
    if (!to_fp16_if_exact(packed.data(), w16_.data(), packed.size())) {
      w16_.clear();
      w32_ = std::move(packed);
    }
    return Status::Ok();
  }

  bool rounds_fp16_outputs() const override { return true; }

  void run(const KernelContext& ctx) override {
    const int nt = threads_for(blocks_ * geo_.k * kBlock, kMinWeightsPerThread, ctx.num_threads);
    parallel_ranges(blocks_, nt, [&](int64_t b0, int64_t b1, int) {
      for (int64_t blk = b0; blk < b1; ++blk) {
        if (w16_.empty())
          run_block(ctx, w32_.data(), blk);
        else
          run_block(ctx, w16_.data(), blk);
      }
    });
  }

 private:
  template <class W>
  __attribute__((target("avx512f"))) void run_block(const KernelContext& ctx, const W* w, int64_t blk) const {
    const float* a = ctx.in<float>(0);
    const float* c = geo_.has_c ? ctx.in<float>(2) : nullptr;
    float* y = ctx.out<float>(0);
    const W* wb = w + blk * geo_.k * kBlock;
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int64_t k = 0; k < geo_.k; ++k) {
      const __m512 av = _mm512_set1_ps(a[k]);
      const W* wk = wb + k * kBlock;
      for (int v = 0; v < 4; ++v) acc[v] = _mm512_fmadd_ps(av, load_weights(wk + 16 * v), acc[v]);
    }
    const __m512 alpha = _mm512_set1_ps(geo_.alpha), beta = _mm512_set1_ps(geo_.beta);
    for (int v = 0; v < 4; ++v) {
      const int64_t j0 = blk * kBlock + 16 * v;
      if (j0 >= geo_.n) break;
      const __mmask16 m = geo_.n - j0 >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (geo_.n - j0)) - 1);
      __m512 out = _mm512_mul_ps(alpha, acc[v]);
      if (c) {
        const __m512 cv = geo_.c_scalar ? _mm512_set1_ps(c[0]) : _mm512_maskz_loadu_ps(m, c + j0);
        out = _mm512_add_ps(out, _mm512_mul_ps(beta, cv));
      }
      out = apply_act(out, act_);
      if (ctx.round_fp16) out = round_to_fp16_lanes(out);
      _mm512_mask_storeu_ps(y + j0, m, out);
    }
  }

  GemvGeometry geo_;
  ActVec act_;
  int64_t blocks_ = 0;
  std::vector<uint16_t> w16_;  // fp16 weights (all of B is fp16 values), or
  std::vector<float> w32_;     // fp32 weights
};

}  // namespace

ORKNN_REGISTER_KERNEL(Gemm, "x86_gemv_f32", 20, supports_gemv, GemvF32);

}  // namespace orknn
