// AVX-512 kernels of the float element-wise ops that dominate mobile networks outside convolution
// (efficientnet's SiLU = Sigmoid then Mul, squeeze-and-excitation scaling, residual Add), run on all
// the node's threads:
//   * Sigmoid (float32): 1 / (1 + e^-x) with a vectorised e^x (below). Within the float tolerance
//     of the reference kernel (kernels/ref/elementwise.cc, std::exp), not bit-exact: e^x here is
//     within about 2 float ulps, so sigmoid differs from the reference by a few ulps at most.
//   * Erf and Gelu (float32, "x86_erf_f32"): a vectorised erf within 1 float ulp of std::erf.
//   * Tanh and Gelu's tanh approximation (float32, "x86_tanh_f32"): a vectorised tanh within 3
//     float ulps of std::tanh.
//   * Softmax (float32) along any axis.
//   * Add, Sub, Mul, Div (float32) when each input either has the output's shape or is constant
//     along a trailing block of the output (e.g. [N,C,1,1] or [C,1,1] against [N,C,H,W], or a
//     scalar); any other numpy broadcast (a bias row, SAM's relative-position terms
//     [B,h,w,h,1] + [B,h,w,1,w]) as runs of the output's innermost dims, each operand loaded or
//     splat per run. One IEEE operation per element, as the reference does: bit-identical to it.
//   * BatchNormalization (inference, float32): the reference's expression in its order per
//     element, bit-identical.
//   * the quantized (int8) unary ops: the reference kernel's 256-entry table (output code per input
//     code), looked up 64 codes at a time with AVX-512 VBMI byte permutes. The table is made by
//     running the reference kernel itself on all 256 codes, so the result is bit-exact by
//     construction.
//   * the fused kernels of the SiLU pairs and INT8 element-wise chains (fusions.h; their graph
//     finders are in fusions.cc).
// Everything else (other dtypes, operands that do not broadcast) stays on the other kernels.
// Compiled with function target attributes; supports() checks the CPU at run time.
#include <immintrin.h>

#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its intrinsics

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/broadcast_blocks.h"
#include "kernels/int8_table.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"
#include "kernels/x86/fusions.h"
#include "kernels/ref/strided_loop.h"

namespace orknn {
namespace {

// ------------------------------------------------------------------------------------ Sigmoid

// fp16 mode (KernelContext::round_fp16): the nearest fp16 value, as round_to_fp16 makes it; done
// before the store, which saves the runtime a second pass over the output.
__attribute__((target("avx512f"))) inline __m512 maybe_round_fp16(__m512 v, bool round_fp16) {
  return round_fp16 ? round_to_fp16_lanes(v) : v;
}

// The element functions of the unary kernels, 16 lanes at a time (UnaryF32Avx512's argument).
struct SigmoidLanes {
  __attribute__((target("avx512f"))) static __m512 apply(__m512 v) { return sigmoid_lanes(v); }
};

bool supports_unary_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) return false;
  return g.tensor(n.inputs[0]).dtype == DType::kF32 && g.tensor(n.outputs[0]).dtype == DType::kF32;
}

// Element-wise over the bytes: any layout, as long as input and output share it.
BlockedIo elementwise_blocked_io(const Graph&, const Node&) { return BlockedIo::kUniform; }

// y = F::apply(x) on x[begin, end), the tail masked; rounded to fp16 in fp16 mode.
template <typename F>
__attribute__((target("avx512f"))) void unary_range(const float* x, float* y, int64_t begin, int64_t end,
                                                    bool round_fp16) {
  for (int64_t i = begin; i < end; i += 16) {
    const __mmask16 m = end - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (end - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, maybe_round_fp16(F::apply(_mm512_maskz_loadu_ps(m, x + i)), round_fp16));
  }
}

// A float op of one input, element by element: F::apply over contiguous pieces of the elements on
// the node's threads.
template <typename F>
class UnaryF32Avx512 : public Kernel {
 public:
  bool rounds_fp16_outputs() const override { return true; }
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return elementwise_blocked_io(g, n); }
  void run(const KernelContext& ctx) override {
    const int64_t n = ctx.out_tensor(0).numel();
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    parallel_ranges(
        n, threads_for(n, kMinPassElementsPerThread, ctx.num_threads),
        [&](int64_t b, int64_t e, int) { unary_range<F>(x, y, b, e, ctx.round_fp16); }, 16);
  }
};

// ------------------------------------------------------------------------------------ Erf, Gelu

// "x86_erf_f32": GELU's Erf (x / sqrt(2) -> Erf -> + 1 -> * x -> * 0.5, every PyTorch GELU exported
// before opset 20) took 22-27 % of convnext_tiny's time on the reference kernel's std::erf.
// erf on 16 lanes (erf_lanes): for |x| < 1, x * P(x^2), P of degree 6; for |x| >= 1,
// sign(x) * (1 - e^(-a^2) * R(1/a - 0.625)), a = min(|x|, 4) (erf(4) is 1 in float), R of degree 10
// fitting erfc(a) e^(a^2), e^t the vectorised one of fused_act_avx512.h. Both polynomials are
// weighted least-squares fits on Chebyshev nodes (relative error 1.2e-9 and 1.9e-8 with float
// coefficients). Evaluated in float, erf_lanes is within 1 float ulp of glibc's std::erf (the
// reference kernel's) on every float in [0, 4.5], and odd by construction; NaN propagates (NaN
// lanes take the first branch), +-0 and +-inf give +-0 and +-1 as std::erf does.
// Gelu (approximate = "none"): the reference's 0.5f * x * (1.f + erf(x * 0.7071067811865476f)) in
// its order with this erf, so within 0.5 |x| erf-ulps (2^-24 |x|) plus its own rounding of the
// reference. Gelu with approximate = "tanh" is x86_tanh_f32's (below).
// Highest power first. P's constant term 1.128379166 is kSmallHi + kSmallLo: x * kSmallHi + x * (the
// rest) keeps erf(x) within an ulp for tiny x, and both products carry x's sign, so erf(-0) = -0.
constexpr float kSmall[6] = {7.847259146e-05f, -8.008189329e-04f, 5.188098890e-03f,
                             -2.685369110e-02f, 1.128358225e-01f, -3.761262557e-01f};
constexpr float kSmallHi = 1.128379107e+00f, kSmallLo = 5.947839354e-08f;
constexpr float kLarge[11] = {-3.821760458e-02f, 2.580260334e-02f,  6.329304673e-03f, -2.685410255e-02f,
                              4.301170117e-02f,  -4.695002410e-02f, 2.334105217e-02f, 4.376721227e-02f,
                              -1.723949523e-01f, 3.822837688e-01f,  3.059529928e-01f};

__attribute__((target("avx512f"))) inline __m512 erf_lanes(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.f);
  const __m512 u = _mm512_mul_ps(x, x);
  const __m512 rest = _mm512_fmadd_ps(horner(u, kSmall, 6), u, _mm512_set1_ps(kSmallLo));
  const __m512 small = _mm512_fmadd_ps(x, _mm512_set1_ps(kSmallHi), _mm512_mul_ps(x, rest));
  const __m512 ax = _mm512_abs_ps(x);
  const __mmask16 large = _mm512_cmp_ps_mask(ax, one, _CMP_GE_OQ);  // false for NaN
  if (!large) return small;
  const __m512 a = _mm512_min_ps(ax, _mm512_set1_ps(4.f));
  const __m512 r = horner(_mm512_sub_ps(_mm512_div_ps(one, a), _mm512_set1_ps(0.625f)), kLarge, 11);
  const __m512 e = exp_avx512(_mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), a), a));
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
  const __m512 big = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(_mm512_fnmadd_ps(e, r, one)), sign));
  return _mm512_mask_mov_ps(small, large, big);
}

struct ErfLanes {
  __attribute__((target("avx512f"))) static __m512 apply(__m512 v) { return erf_lanes(v); }
};
struct GeluErfLanes {
  __attribute__((target("avx512f"))) static __m512 apply(__m512 v) {
    const __m512 e = erf_lanes(_mm512_mul_ps(v, _mm512_set1_ps(0.7071067811865476f)));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.f), e));
  }
};

bool supports_gelu_f32(const Graph& g, const Node& n) {
  return supports_unary_f32(g, n) && n.attrs.get_string("approximate", "none") == "none";
}

// ------------------------------------------------------------------------------------ Tanh

// "x86_tanh_f32": Tanh, and Gelu with approximate = "tanh" (ViT-style GELUs exported as their
// tanh formula took 60 % of maxvit_t's time on the reference's std::tanh), with tanh_lanes
// (fused_act_avx512.h, within 3 float ulps of std::tanh).
// Gelu (approximate = "tanh"): the reference's 0.5f * x * (1.f + tanh(k * (x + 0.044715f * x * x * x)))
// in its order with this tanh.
struct TanhLanes {
  __attribute__((target("avx512f"))) static __m512 apply(__m512 v) { return tanh_lanes(v); }
};
struct GeluTanhLanes {
  __attribute__((target("avx512f"))) static __m512 apply(__m512 v) {
    const __m512 cube = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.044715f), v), v), v);
    const __m512 t = tanh_lanes(_mm512_mul_ps(_mm512_set1_ps(0.7978845608028654f), _mm512_add_ps(v, cube)));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.f), t));
  }
};

bool supports_gelu_tanh_f32(const Graph& g, const Node& n) {
  return supports_unary_f32(g, n) && n.attrs.get_string("approximate", "none") == "tanh";
}

// ------------------------------------------------------------------------------------ Softmax

// Softmax along any axis (the classifier and attention heads along the last; PP-OCRv4 rec's
// [1,40,6625] took 1.7 ms in the reference; detection heads' DFL and segmentation maps along an
// inner one). Contiguous slices (the axis innermost, or followed by dims of 1), per row: max;
// e = exp(x - max) (the vectorised e^x above, stored to y) summed in 16 lanes; y = e / sum.
// Strided slices (elements `inner` apart): up to 64 neighbouring slices side by side, one per lane
// of four vectors, each lane's max and sum running along the axis in index order as the
// reference's do. Rounded to fp16 in fp16 mode. The reference's operations with another exp (a few
// float ulps), and for contiguous slices another summation order: within the float tolerance
// (tests/ops/elementwise_x86_test.cc). A NaN in a slice makes the slice NaN, as in the reference.
bool supports_softmax_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  if (n.op != OpId::Softmax || n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0)
    return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  if (x.dtype != DType::kF32 || g.tensor(n.outputs[0]).dtype != DType::kF32 || x.shape.empty() || x.numel() <= 0)
    return false;
  const int64_t axis = n.attrs.get_int("axis", -1);
  return axis >= 0 && axis < static_cast<int64_t>(x.shape.size());  // infer made it non-negative
}

__attribute__((target("avx512f"))) void softmax_row(const float* x, float* y, int64_t len, bool round_fp16) {
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 vmax = neg_inf;
  for (int64_t i = 0; i < len; i += 16) {
    const __mmask16 m = len - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (len - i)) - 1);
    vmax = _mm512_max_ps(_mm512_mask_loadu_ps(neg_inf, m, x + i), vmax);  // a NaN x leaves vmax
  }
  const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512 vsum = _mm512_setzero_ps();
  for (int64_t i = 0; i < len; i += 16) {
    const __mmask16 m = len - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (len - i)) - 1);
    const __m512 e = _mm512_maskz_mov_ps(m, exp_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), mx)));
    _mm512_mask_storeu_ps(y + i, m, e);
    vsum = _mm512_add_ps(vsum, e);
  }
  const __m512 sum = _mm512_set1_ps(_mm512_reduce_add_ps(vsum));
  for (int64_t i = 0; i < len; i += 16) {
    const __mmask16 m = len - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (len - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, maybe_round_fp16(_mm512_div_ps(_mm512_maskz_loadu_ps(m, y + i), sum), round_fp16));
  }
}

// `lanes` (<= 16 V) slices of `len` elements `inner` apart, the first at x[0], the others following
// it (x[1], ...): one per lane of V vectors, so that each step along the axis reads V * 64
// contiguous bytes per slice row (fewer, longer streams for the prefetchers).
template <int V>
__attribute__((target("avx512f"))) void softmax_lanes(const float* x, float* y, int64_t len, int64_t inner,
                                                      int64_t lanes, bool round_fp16) {
  __mmask16 m[V];
  __m512 vmax[V], vsum[V];
  for (int v = 0; v < V; ++v) {
    const int64_t left = lanes - 16 * v;
    m[v] = left >= 16 ? __mmask16(0xFFFF) : (left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1));
    vmax[v] = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    vsum[v] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < len; ++j)
    for (int v = 0; v < V; ++v)  // a NaN x leaves vmax
      vmax[v] = _mm512_max_ps(_mm512_maskz_loadu_ps(m[v], x + j * inner + 16 * v), vmax[v]);
  for (int64_t j = 0; j < len; ++j)
    for (int v = 0; v < V; ++v) {
      const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m[v], x + j * inner + 16 * v), vmax[v]));
      _mm512_mask_storeu_ps(y + j * inner + 16 * v, m[v], e);
      vsum[v] = _mm512_add_ps(vsum[v], e);
    }
  for (int64_t j = 0; j < len; ++j)
    for (int v = 0; v < V; ++v) {
      float* yj = y + j * inner + 16 * v;
      const __m512 q = _mm512_div_ps(_mm512_maskz_loadu_ps(m[v], yj), vsum[v]);
      _mm512_mask_storeu_ps(yj, m[v], maybe_round_fp16(q, round_fp16));
    }
}

class SoftmaxF32Avx512 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& x = ctx.in_tensor(0).shape;
    const size_t axis = static_cast<size_t>(ctx.node->attrs.get_int("axis", -1));
    len_ = x[axis];
    inner_ = 1;
    for (size_t i = axis + 1; i < x.size(); ++i) inner_ *= x[i];
    outer_ = len_ > 0 ? ctx.in_tensor(0).numel() / (len_ * inner_) : 0;
    return Status::Ok();
  }
  bool rounds_fp16_outputs() const override { return true; }
  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const int nt = threads_for(outer_ * len_ * inner_, kMinPassElementsPerThread, ctx.num_threads);
    if (inner_ == 1) {
      parallel_ranges(outer_, nt, [&](int64_t r0, int64_t r1, int) {
        for (int64_t r = r0; r < r1; ++r) softmax_row(x + r * len_, y + r * len_, len_, ctx.round_fp16);
      });
      return;
    }
    // Jobs: (outer index, 64 slices).
    const int64_t groups = (inner_ + 63) / 64;
    parallel_ranges(outer_ * groups, nt, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t i0 = (j % groups) * 64, offset = (j / groups) * len_ * inner_ + i0;
        const int64_t lanes = std::min<int64_t>(64, inner_ - i0);
        if (lanes > 32) softmax_lanes<4>(x + offset, y + offset, len_, inner_, lanes, ctx.round_fp16);
        else softmax_lanes<2>(x + offset, y + offset, len_, inner_, lanes, ctx.round_fp16);
      }
    });
  }

 private:
  int64_t len_ = 1, inner_ = 1, outer_ = 0;
};

// ------------------------------------------------------------------------- SiLU (fused pair)

// s = sigmoid(x) (rounded to fp16 in fp16 mode, as the Sigmoid step's output would be), then
// y = x * s (rounded likewise): the operations of the Sigmoid kernel followed by the Mul kernel's.
__attribute__((target("avx512f"))) void silu_range(const float* x, float* y, int64_t begin, int64_t end,
                                                   bool round_fp16) {
  for (int64_t i = begin; i < end; i += 16) {
    const __mmask16 m = end - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (end - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    const __m512 sg = maybe_round_fp16(sigmoid_lanes(v), round_fp16);
    _mm512_mask_storeu_ps(y + i, m, maybe_round_fp16(_mm512_mul_ps(v, sg), round_fp16));
  }
}

// The Mul of a SiLU pair: inputs (x, s) in either order, s the Sigmoid's output.
class SiluMulF32Avx512 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Node& mul = *ctx.node;
    const Graph& g = *ctx.graph;
    // s is the input a Sigmoid of the other input produces.
    for (const Node& n : g.nodes)
      for (size_t i = 0; i < 2; ++i)
        if (n.op == OpId::Sigmoid && n.outputs.size() == 1 && n.outputs[0] == mul.inputs[i] && n.inputs.size() == 1 &&
            n.inputs[0] == mul.inputs[1 - i]) {
          s_index_ = i;
          return Status::Ok();
        }
    return ORKNN_ERR(kFail, "Mul '%s': not the Mul of a Sigmoid -> Mul SiLU pair", mul.name.c_str());
  }
  bool rounds_fp16_outputs() const override { return true; }
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return elementwise_blocked_io(g, n); }
  void run(const KernelContext& ctx) override {
    const int64_t n = ctx.out_tensor(0).numel();
    const float* x = ctx.in<float>(1 - s_index_);  // s itself is never written: this is its only reader
    float* y = ctx.out<float>(0);
    parallel_ranges(
        n, threads_for(n, kMinPassElementsPerThread, ctx.num_threads),
        [&](int64_t b, int64_t e, int) { silu_range(x, y, b, e, ctx.round_fp16); }, 16);
  }

 private:
  size_t s_index_ = 1;
};

// ------------------------------------------------------------------------- Add/Sub/Mul/Div

enum class BinOp { kAdd, kSub, kMul, kDiv };

bool supports_binary_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  if (n.inputs.size() != 2 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.inputs[1] < 0 || n.outputs[0] < 0)
    return false;
  const Tensor& a = g.tensor(n.inputs[0]);
  const Tensor& b = g.tensor(n.inputs[1]);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (a.dtype != DType::kF32 || b.dtype != DType::kF32 || y.dtype != DType::kF32) return false;
  auto broadcasts = [&](const Shape& in) {
    if (in.size() > y.shape.size()) return false;
    const size_t lead = y.shape.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] != 1 && in[d] != y.shape[lead + d]) return false;
    return true;
  };
  return broadcast_blocks(a.shape, b.shape, y.shape).ok || (broadcasts(a.shape) && broadcasts(b.shape));
}

template <BinOp kOp>
__attribute__((target("avx512f"))) inline __m512 apply(__m512 a, __m512 b) {
  if constexpr (kOp == BinOp::kAdd) return _mm512_add_ps(a, b);
  if constexpr (kOp == BinOp::kSub) return _mm512_sub_ps(a, b);
  if constexpr (kOp == BinOp::kMul) return _mm512_mul_ps(a, b);
  return _mm512_div_ps(a, b);
}

// Elements [begin, end) of block `o` (offsets inside the block); a_full / b_full say which
// operands advance per element (the other is the block's scalar).
template <BinOp kOp>
__attribute__((target("avx512f"))) void binary_block(const float* a, const float* b, float* y, int64_t o,
                                                     int64_t inner, int64_t begin, int64_t end, bool a_full,
                                                     bool b_full, bool round_fp16) {
  const float* pa = a_full ? a + o * inner : nullptr;
  const float* pb = b_full ? b + o * inner : nullptr;
  const __m512 sa = a_full ? _mm512_setzero_ps() : _mm512_set1_ps(a[o]);
  const __m512 sb = b_full ? _mm512_setzero_ps() : _mm512_set1_ps(b[o]);
  float* py = y + o * inner;
  for (int64_t i = begin; i < end; i += 16) {
    const __mmask16 m = end - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (end - i)) - 1);
    const __m512 va = a_full ? _mm512_maskz_loadu_ps(m, pa + i) : sa;
    const __m512 vb = b_full ? _mm512_maskz_loadu_ps(m, pb + i) : sb;
    _mm512_mask_storeu_ps(py + i, m, maybe_round_fp16(apply<kOp>(va, vb), round_fp16));
  }
}

// One run of a general broadcast: n outputs, each operand contiguous (stride 1) or one value
// (stride 0).
template <BinOp kOp>
__attribute__((target("avx512f"))) void binary_run(const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                                                   int64_t n, bool round_fp16) {
  const __m512 ka = _mm512_set1_ps(a[0]), kb = _mm512_set1_ps(b[0]);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    const __m512 va = sa ? _mm512_maskz_loadu_ps(m, a + i) : ka;
    const __m512 vb = sb ? _mm512_maskz_loadu_ps(m, b + i) : kb;
    _mm512_mask_storeu_ps(y + i, m, maybe_round_fp16(apply<kOp>(va, vb), round_fp16));
  }
}

// [N,C,1,1] (or [C,1,1] / [1,C,1,1] when N = 1) against a 4-D output [N,C,H,W] with C a multiple of
// 16: one value per (image, channel), the same bytes in NCHW and nChw16c.
bool per_channel_operand(const Shape& in, const Shape& y) {
  if (y.size() != 4 || y[1] % 16 != 0) return false;
  if (in == Shape{y[0], y[1], 1, 1}) return true;
  return y[0] == 1 && (in == Shape{y[1], 1, 1} || in == Shape{1, y[1], 1, 1});
}

// One (image, 16-channel) block of an nChw16c operand: `pixels` vectors of 16 channels, each
// combined with the block's 16 per-channel values. full_first: the full operand is the node's first.
template <BinOp kOp>
__attribute__((target("avx512f"))) void binary_channel_block(const float* full, const float* chan, float* y,
                                                             int64_t pixels, bool full_first, bool round_fp16) {
  const __m512 c = _mm512_loadu_ps(chan);
  for (int64_t p = 0; p < pixels; ++p) {
    const __m512 v = _mm512_loadu_ps(full + p * 16);
    _mm512_storeu_ps(y + p * 16, maybe_round_fp16(full_first ? apply<kOp>(v, c) : apply<kOp>(c, v), round_fp16));
  }
}

template <BinOp kOp>
class BinaryF32Avx512 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    geo_ = broadcast_blocks(ctx.in_tensor(0).shape, ctx.in_tensor(1).shape, ctx.out_tensor(0).shape);
    // A general broadcast (supports_binary_f32 checked it), or blocks too short for a vector (a
    // [T,C] position table against [1,T,C]: one element per "block"): runs of the strided loop.
    use_runs_ = !geo_.ok || (geo_.inner < 16 && !ctx.output_blocked(0));
    if (use_runs_) {
      const Shape& ys = ctx.out_tensor(0).shape;
      runs_.init(ys, {dense_strides(ys), broadcast_strides(ctx.in_tensor(0).shape, ys),
                      broadcast_strides(ctx.in_tensor(1).shape, ys)});
      return Status::Ok();
    }
    // A per-channel operand against an nChw16c one: the blocks are (image, 16 channels).
    const Shape& ys = ctx.out_tensor(0).shape;
    blocked_channels_ = ctx.output_blocked(0) && !(geo_.a_full && geo_.b_full) &&
                        per_channel_operand(geo_.a_full ? ctx.in_tensor(1).shape : ctx.in_tensor(0).shape, ys);
    if (blocked_channels_) {
      batch_ = ys[0];
      channels_ = ys[1];
      pixels_ = ys[2] * ys[3];
    }
    return Status::Ok();
  }
  bool rounds_fp16_outputs() const override { return true; }
  // Element-wise over the bytes, so any layout the operands share: same shapes (two activations),
  // or a scalar. A per-channel operand ([N,C,1,1], or [C,1,1] / [1,C,1,1] with N = 1: the same
  // bytes in either layout) against a 4-D one also, with run_blocked() when that one is nChw16c
  // (squeeze-and-excitation scales). Other broadcasts index NCHW blocks and stay NCHW.
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    const Tensor& a = g.tensor(n.inputs[0]);
    const Tensor& b = g.tensor(n.inputs[1]);
    const Shape& y = g.tensor(n.outputs[0]).shape;
    if (a.shape == y && b.shape == y) return !a.is_const() && !b.is_const() ? BlockedIo::kUniform : BlockedIo::kNone;
    const Tensor& full = a.shape == y ? a : b;
    const Tensor& other = a.shape == y ? b : a;
    if (full.shape != y || full.is_const()) return BlockedIo::kNone;
    if (other.numel() == 1) return BlockedIo::kUniform;
    return per_channel_operand(other.shape, y) ? BlockedIo::kUniform : BlockedIo::kNone;
  }
  void run(const KernelContext& ctx) override {
    if (blocked_channels_) return run_blocked(ctx);
    const float* a = ctx.in<float>(0);
    const float* b = ctx.in<float>(1);
    float* y = ctx.out<float>(0);
    if (use_runs_) {
      const int nt = threads_for(runs_.outer() * runs_.inner(), kMinPassElementsPerThread, ctx.num_threads);
      parallel_ranges(runs_.outer(), nt, [&](int64_t r0, int64_t r1, int) {
        runs_.run_range([&](const int64_t* off, const int64_t* st, int64_t n) {
          binary_run<kOp>(a + off[1], st[1], b + off[2], st[2], y + off[0], n, ctx.round_fp16);
        }, r0, r1);
      });
      return;
    }
    const BroadcastBlocks& g = geo_;
    const int nt = threads_for(g.outer * g.inner, kMinPassElementsPerThread, ctx.num_threads);
    if (g.outer >= nt) {  // whole blocks per thread
      parallel_ranges(g.outer, nt, [&](int64_t ob, int64_t oe, int) {
        for (int64_t o = ob; o < oe; ++o)
          binary_block<kOp>(a, b, y, o, g.inner, 0, g.inner, g.a_full, g.b_full, ctx.round_fp16);
      });
    } else {  // few large blocks: split each block
      parallel_ranges(
          g.inner, nt,
          [&](int64_t ib, int64_t ie, int) {
            for (int64_t o = 0; o < g.outer; ++o)
              binary_block<kOp>(a, b, y, o, g.inner, ib, ie, g.a_full, g.b_full, ctx.round_fp16);
          },
          16);
    }
  }

 private:
  BroadcastBlocks geo_;
  StridedLoop runs_;  // general broadcasts: operands y, a, b
  bool use_runs_ = false;
  bool blocked_channels_ = false;
  int64_t batch_ = 0, channels_ = 0, pixels_ = 0;

  // y (nChw16c) = op(full, per-channel), operands in the node's order.
  void run_blocked(const KernelContext& ctx) {
    const float* full = ctx.in<float>(geo_.a_full ? 0 : 1);
    const float* chan = ctx.in<float>(geo_.a_full ? 1 : 0);
    float* y = ctx.out<float>(0);
    const int64_t blocks = batch_ * (channels_ / 16);
    const int nt = threads_for(blocks * pixels_ * 16, kMinPassElementsPerThread, ctx.num_threads);
    parallel_ranges(blocks, nt, [&](int64_t b0, int64_t b1, int) {
      for (int64_t blk = b0; blk < b1; ++blk)
        binary_channel_block<kOp>(full + blk * pixels_ * 16, chan + blk * 16, y + blk * pixels_ * 16, pixels_,
                                  geo_.a_full, ctx.round_fp16);
    });
  }
};

// ------------------------------------------------------------------------- BatchNormalization

// Inference BatchNormalization, float: the reference's expression in its order, one IEEE operation
// at a time, y = scale[c] * (x - mean[c]) / sqrtf(var[c] + epsilon) + B[c]: bit-identical.
bool supports_batchnorm_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  if (n.inputs.size() != 5 || n.outputs.empty() || n.outputs[0] < 0) return false;
  for (int id : n.inputs)
    if (id < 0 || g.tensor(id).dtype != DType::kF32) return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (y.dtype != DType::kF32 || x.shape.size() < 2 || x.shape != y.shape) return false;
  for (size_t i = 1; i < 5; ++i)
    if (g.tensor(n.inputs[i]).numel() != x.shape[1]) return false;
  return true;
}

__attribute__((target("avx512f"))) void batchnorm_plane(const float* x, float* y, int64_t count, float scale,
                                                        float mean, float stddev, float bias, bool round_fp16) {
  const __m512 s = _mm512_set1_ps(scale), m = _mm512_set1_ps(mean), d = _mm512_set1_ps(stddev),
               b = _mm512_set1_ps(bias);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 k = count - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (count - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
    const __m512 r = _mm512_add_ps(_mm512_div_ps(_mm512_mul_ps(s, _mm512_sub_ps(v, m)), d), b);
    _mm512_mask_storeu_ps(y + i, k, maybe_round_fp16(r, round_fp16));
  }
}

class BatchNormF32Avx512 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& x = ctx.in_tensor(0).shape;
    batch_ = x[0];
    channels_ = x[1];
    plane_ = 1;
    for (size_t i = 2; i < x.size(); ++i) plane_ *= x[i];
    epsilon_ = ctx.node->attrs.get_float("epsilon", 1e-5f);
    return Status::Ok();
  }
  bool rounds_fp16_outputs() const override { return true; }
  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    const float* scale = ctx.in<float>(1);
    const float* bias = ctx.in<float>(2);
    const float* mean = ctx.in<float>(3);
    const float* var = ctx.in<float>(4);
    float* y = ctx.out<float>(0);
    const int64_t planes = batch_ * channels_;
    const int nt = threads_for(planes * plane_, kMinPassElementsPerThread, ctx.num_threads);
    parallel_ranges(planes, nt, [&](int64_t p0, int64_t p1, int) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t c = p % channels_;
        const float stddev = std::sqrt(var[c] + epsilon_);
        batchnorm_plane(x + p * plane_, y + p * plane_, plane_, scale[c], mean[c], stddev, bias[c], ctx.round_fp16);
      }
    });
  }

 private:
  int64_t batch_ = 0, channels_ = 0, plane_ = 1;
  float epsilon_ = 1e-5f;
};

// ------------------------------------------------------------- quantized unary ops: table lookup

bool supports_table_q8(const Graph& g, const Node& n) { return x86::cpu_avx512vbmi() && int8_table_node(g, n); }

// y[i] = table[uint8(x[i])] for i in [begin, end).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void lookup_range(const uint8_t* table, const uint8_t* x,
                                                                         uint8_t* y, int64_t begin, int64_t end) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  for (int64_t i = begin; i < end; i += 64) {
    const __mmask64 m = end - i >= 64 ? ~__mmask64(0) : (__mmask64(1) << (end - i)) - 1;
    const __m512i idx = _mm512_maskz_loadu_epi8(m, x + i);
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);  // entries 0..127 (index bits 0-6)
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);  // entries 128..255
    _mm512_mask_storeu_epi8(y + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
  }
}

// y = table[x] over n bytes, on the node's threads.
void lookup(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n, int num_threads) {
  const int nt = threads_for(n / 4, kMinPassElementsPerThread, num_threads);  // bytes, not floats: 4x more per thread
  parallel_ranges(n, nt, [&](int64_t b, int64_t e, int) { lookup_range(table, x, y, b, e); }, 64);
}

class TableQ8Avx512 : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return elementwise_blocked_io(g, n); }
  Status prepare(const KernelContext& ctx) override {
    return int8_node_table(*ctx.graph, *ctx.node, table_);
  }
  void run(const KernelContext& ctx) override {
    lookup(table_, ctx.in<uint8_t>(0), ctx.out<uint8_t>(0), ctx.out_tensor(0).numel(), ctx.num_threads);
  }

 private:
  alignas(64) uint8_t table_[256] = {};
};

// The chain's output as a function of one code: of x, or of the binary head's output (the table
// of the nodes after it), made by running the nodes' reference kernels node after node.
Status chain_table(const Graph& g, const Int8Chain& chain, uint8_t* table) {
  const size_t first = chain.binary_head ? 1 : 0;
  const int x = chain.binary_head ? g.nodes[static_cast<size_t>(chain.nodes[0])].outputs[0] : chain.inputs[0];
  std::vector<std::vector<uint8_t>> values(g.tensors.size());
  values[static_cast<size_t>(x)] = Int8Codes().values();
  for (size_t i = first; i < chain.nodes.size(); ++i) {
    const Node& n = g.nodes[static_cast<size_t>(chain.nodes[i])];
    std::vector<const uint8_t*> in;
    for (int t : n.inputs) in.push_back(g.tensor(t).is_const() ? nullptr : values[static_cast<size_t>(t)].data());
    std::vector<uint8_t>& out = values[static_cast<size_t>(n.outputs[0])];
    out.resize(256);
    ORKNN_RETURN_IF_ERROR(run_ref_on_codes(g, n, in, out.data()));
  }
  std::memcpy(table, values[static_cast<size_t>(g.nodes[static_cast<size_t>(chain.nodes.back())].outputs[0])].data(),
              256);
  return Status::Ok();
}

// The last node of an INT8 chain (fusions.h): y = table[x].
class Int8ChainTable : public Kernel {
 public:
  explicit Int8ChainTable(Int8Chain chain) : chain_(std::move(chain)) {}
  Status prepare(const KernelContext& ctx) override { return chain_table(*ctx.graph, chain_, table_); }
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return elementwise_blocked_io(g, n); }
  void run(const KernelContext& ctx) override {
    // x comes after the node's own inputs (fusions.h); the chain's other values are never written.
    const uint8_t* x = static_cast<const uint8_t*>(ctx.inputs[ctx.node->inputs.size()]);
    lookup(table_, x, ctx.out<uint8_t>(0), ctx.out_tensor(0).numel(), ctx.num_threads);
  }

 private:
  Int8Chain chain_;
  alignas(64) uint8_t table_[256] = {};
};

// The last node of an INT8 chain with a binary head: the head's avx512_int8 kernel on the head's
// operands (after the node's own inputs), writing this node's output through the table.
class Int8BinaryChain : public Kernel {
 public:
  explicit Int8BinaryChain(Int8Chain chain) : chain_(std::move(chain)) {}
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return elementwise_blocked_io(g, n); }
  Status prepare(const KernelContext& ctx) override {
    ORKNN_RETURN_IF_ERROR(chain_table(*ctx.graph, chain_, table_));
    const Node& head = ctx.graph->nodes[static_cast<size_t>(chain_.nodes[0])];
    head_ = make_q8_binary_kernel(head.op, table_);
    if (!head_) return ORKNN_ERR(kFail, "node '%s': not an Add, Sub or Mul", head.name.c_str());
    head_ctx_.graph = ctx.graph;
    head_ctx_.node = &head;
    head_ctx_.scratch = ctx.scratch;
    head_ctx_.out_blocked = ctx.out_blocked;  // the chain's tensors share one layout (kUniform)
    bind(ctx);
    return head_->prepare(head_ctx_);
  }
  void run(const KernelContext& ctx) override {
    bind(ctx);
    head_->run(head_ctx_);
  }

 private:
  Int8Chain chain_;
  alignas(64) uint8_t table_[256] = {};
  std::unique_ptr<Kernel> head_;
  KernelContext head_ctx_;

  // The head's operands and this node's output, as the context has them now (no allocation after
  // the first call: the sizes do not change).
  void bind(const KernelContext& ctx) {
    const size_t own = ctx.node->inputs.size();
    head_ctx_.inputs.resize(2);
    head_ctx_.inputs[0] = ctx.inputs[own];
    head_ctx_.inputs[1] = ctx.inputs[own + 1];
    head_ctx_.outputs.resize(1);
    head_ctx_.outputs[0] = ctx.outputs[0];
    head_ctx_.num_threads = ctx.num_threads;
  }
};

}  // namespace

std::unique_ptr<Kernel> make_int8_chain_kernel(const Int8Chain& chain) {
  if (chain.binary_head) return std::make_unique<Int8BinaryChain>(chain);
  return std::make_unique<Int8ChainTable>(chain);
}

void int8_lookup_range(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t begin, int64_t end) {
  lookup_range(table, x, y, begin, end);
}

std::unique_ptr<Kernel> make_silu_mul_kernel() { return std::make_unique<SiluMulF32Avx512>(); }

#define ORKNN_REGISTER_TABLE_Q8(OPNAME) \
  ORKNN_REGISTER_KERNEL(OPNAME, "avx512_int8_table", kPriorityGeneral, supports_table_q8, TableQ8Avx512);
ORKNN_INT8_TABLE_OPS(ORKNN_REGISTER_TABLE_Q8)
#undef ORKNN_REGISTER_TABLE_Q8

ORKNN_REGISTER_KERNEL(Sigmoid, "avx512_f32", kPriorityGeneral, supports_unary_f32, UnaryF32Avx512<SigmoidLanes>);
ORKNN_REGISTER_KERNEL(Erf, "x86_erf_f32", kPriorityGeneral, supports_unary_f32, UnaryF32Avx512<ErfLanes>);
ORKNN_REGISTER_KERNEL(Gelu, "x86_erf_f32", kPriorityGeneral, supports_gelu_f32, UnaryF32Avx512<GeluErfLanes>);
ORKNN_REGISTER_KERNEL(Tanh, "x86_tanh_f32", kPriorityGeneral, supports_unary_f32, UnaryF32Avx512<TanhLanes>);
ORKNN_REGISTER_KERNEL(Gelu, "x86_tanh_f32", kPriorityGeneral, supports_gelu_tanh_f32, UnaryF32Avx512<GeluTanhLanes>);
ORKNN_REGISTER_KERNEL(Softmax, "avx512_f32", kPriorityGeneral, supports_softmax_f32, SoftmaxF32Avx512);
ORKNN_REGISTER_KERNEL(BatchNormalization, "avx512_f32", kPriorityGeneral, supports_batchnorm_f32, BatchNormF32Avx512);
ORKNN_REGISTER_KERNEL(Add, "avx512_f32", kPriorityGeneral, supports_binary_f32, BinaryF32Avx512<BinOp::kAdd>);
ORKNN_REGISTER_KERNEL(Sub, "avx512_f32", kPriorityGeneral, supports_binary_f32, BinaryF32Avx512<BinOp::kSub>);
ORKNN_REGISTER_KERNEL(Mul, "avx512_f32", kPriorityGeneral, supports_binary_f32, BinaryF32Avx512<BinOp::kMul>);
ORKNN_REGISTER_KERNEL(Div, "avx512_f32", kPriorityGeneral, supports_binary_f32, BinaryF32Avx512<BinOp::kDiv>);

}  // namespace orknn
