// AVX-512 float Gemm with one row ("x86_gemv_f32"): the classifier layer of a CNN, Y[1,N] =
// act(alpha * A[1,K] * B + beta * C). It reads every weight once per run and does one multiply-add
// with it, so its time is the time to stream B from memory (mobilenet_v2's 1280 x 1000 fp32 weights:
// 5 MB, 200 us in oneDNN at one thread, 4% of the network).
//
// B is packed once as gemv_f32_blocks.h's 64-output blocks (fp16 in fp16 mode). Then, as the
// reference: alpha * acc, + beta * C, the fused activation, and in fp16 mode the rounding, in
// registers. Blocks are split over the node's threads (each streams its own part of B).
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
#include "kernels/ref/activation.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"
#include "kernels/x86/gemv_f32_blocks.h"

namespace orknn {
namespace {

constexpr int64_t kBlock = x86::kGemvBlock;
// Below this many weights per thread, waking another thread costs more than it saves.
constexpr int64_t kMinWeightsPerThread = 64 * 1024;

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
  if (!x86::cpu_avx512f()) return false;
  GemvGeometry geo;
  return gemv_geometry(g, n, &geo);
}

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
    weights_.set(std::move(packed), geo_.k, blocks_);
    return Status::Ok();
  }

  bool rounds_fp16_outputs() const override { return true; }

  void run(const KernelContext& ctx) override {
    const int nt = threads_for(blocks_ * geo_.k * kBlock, kMinWeightsPerThread, ctx.num_threads);
    parallel_ranges(blocks_, nt, [&](int64_t b0, int64_t b1, int) {
      for (int64_t blk = b0; blk < b1; ++blk) run_block(ctx, blk);
    });
  }

 private:
  __attribute__((target("avx512f"))) void run_block(const KernelContext& ctx, int64_t blk) const {
    const float* a = ctx.in<float>(0);
    const float* c = geo_.has_c ? ctx.in<float>(2) : nullptr;
    float* y = ctx.out<float>(0);
    __m512 acc[4];
    weights_.block_sums(a, blk, acc);
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
  x86::GemvWeights weights_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Gemm, "x86_gemv_f32", kPrioritySpecialized, supports_gemv, GemvF32);

}  // namespace orknn
