// oneDNN fp32 Gemm and MatMul, both on the matmul primitive.
//
// Gemm: Y = act(alpha * A' * B' + beta * C). Transposes are strided descriptors (no copies).
// oneDNN 2.6 applies the output scale (alpha) to the accumulator *including* the bias, and its
// fast matmul implementations accept only a per-column bias, so C is the bias only when alpha == 1
// and C is a row; otherwise run() writes beta*C into Y first and a sum post-op accumulates
// alpha*A*B onto it (see CMode). beta*C is computed as one product per element, as in the reference.
//
// MatMul: numpy semantics. With a constant 2-D B (a linear layer), A's leading dims are folded
// into M and B is reordered once into oneDNN's blocked layout. Otherwise batched matmul with
// broadcast batch dims on plain layouts.
#include <cmath>
#include <vector>

#include "kernels/onednn/onednn_common.h"

namespace orknn::onednn {
namespace {

using dnnl::memory;

memory::desc strided_2d(memory::dim rows, memory::dim cols, bool transposed_storage) {
  // Logical {rows, cols}; when transposed_storage the bytes are the [cols, rows] row-major matrix.
  if (transposed_storage) return memory::desc({rows, cols}, memory::data_type::f32, memory::dims{1, rows});
  return plain_f32({rows, cols});
}

// ---------------------------------------------------------------------------------------------- Gemm

// How C enters the matmul.
enum class CMode {
  kNone,     // no C, or beta == 0
  kBias,     // alpha == 1 and C is a row ([N] / [1,N]): the bias argument (oneDNN's fast paths
             // take only this bias broadcast; other bias shapes fall to its naive implementation)
  kPrefill,  // run() first writes beta*C, broadcast, into Y; a sum post-op then adds alpha*A*B
};

struct GemmSetup {
  memory::dim m = 0, k = 0, n = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.f, beta = 1.f;
  CMode c_mode = CMode::kNone;
  memory::dims c_dims;  // C seen as 2-D {1 or M, 1 or N}
  bool c_const = false;
  bool b_const = false;
  bool valid = false;
};

GemmSetup gemm_setup(const Graph& g, const Node& n) {
  GemmSetup s;
  const Tensor* a = g.input(n, 0);
  const Tensor* b = g.input(n, 1);
  const Tensor* c = g.input(n, 2);
  if (!a || !b || n.outputs.size() != 1 || n.outputs[0] < 0) return s;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (a->shape.size() != 2 || b->shape.size() != 2 || y.shape.size() != 2) return s;
  s.trans_a = n.attrs.get_int("transA", 0) != 0;
  s.trans_b = n.attrs.get_int("transB", 0) != 0;
  s.alpha = n.attrs.get_float("alpha", 1.f);
  s.beta = n.attrs.get_float("beta", 1.f);
  if (!std::isfinite(s.alpha) || !std::isfinite(s.beta)) return s;
  s.m = s.trans_a ? a->shape[1] : a->shape[0];
  s.k = s.trans_a ? a->shape[0] : a->shape[1];
  const int64_t kb = s.trans_b ? b->shape[1] : b->shape[0];
  s.n = s.trans_b ? b->shape[0] : b->shape[1];
  if (kb != s.k || y.shape[0] != s.m || y.shape[1] != s.n || s.m <= 0 || s.n <= 0 || s.k <= 0) return s;
  s.b_const = b->is_const();
  if (c && s.beta != 0.f) {
    if (c->shape.size() > 2) return s;
    memory::dims cd(c->shape.begin(), c->shape.end());
    while (cd.size() < 2) cd.insert(cd.begin(), 1);
    if ((cd[0] != 1 && cd[0] != s.m) || (cd[1] != 1 && cd[1] != s.n)) return s;
    s.c_dims = cd;
    s.c_const = c->is_const();
    const bool row = cd[0] == 1 && cd[1] == s.n;
    // As a bias, beta must be folded into a copy of C made at prepare, so C must be constant.
    s.c_mode = (s.alpha == 1.f && row && (s.beta == 1.f || s.c_const)) ? CMode::kBias : CMode::kPrefill;
  }
  s.valid = true;
  return s;
}

memory::desc gemm_weights_md(const GemmSetup& s) {
  return s.b_const ? memory::desc({s.k, s.n}, memory::data_type::f32, memory::format_tag::any)
                   : strided_2d(s.k, s.n, s.trans_b);
}

dnnl::matmul::primitive_desc gemm_pd(const Node& n, const GemmSetup& s) {
  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::post_ops ops;
  if (s.alpha != 1.f) attr.set_output_scales(0, {s.alpha});  // scales the accumulator (and a bias)
  if (s.c_mode == CMode::kPrefill) ops.append_sum(1.f);      // Y = alpha*A*B + Y(= beta*C)
  if (!append_fused_act(n, ops)) throw dnnl::error(dnnl_unimplemented, "fused activation not expressible");
  attr.set_post_ops(ops);
  const memory::desc src = strided_2d(s.m, s.k, s.trans_a);
  const memory::desc dst = plain_f32({s.m, s.n});
  if (s.c_mode == CMode::kBias)
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, gemm_weights_md(s), plain_f32(s.c_dims), dst), attr,
                                        cpu_engine());
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, gemm_weights_md(s), dst), attr, cpu_engine());
}

bool supports_gemm(const Graph& g, const Node& n) {
  if (!all_f32(g, n)) return false;
  GemmSetup s = gemm_setup(g, n);
  if (!s.valid) return false;
  return probe_ok([&] { return gemm_pd(n, s); });
}

class GemmF32 final : public OnednnKernel {
 protected:
  Status build(const KernelContext& ctx) override {
    s_ = gemm_setup(*ctx.graph, *ctx.node);
    if (!s_.valid)
      return ORKNN_ERR(kInvalidModel, "%s (Gemm): shapes/attributes not supported by the oneDNN kernel",
                       ctx.node->name.c_str());
    auto pd = gemm_pd(*ctx.node, s_);
    set_impl_name(pd);
    memory src = wrap(strided_2d(s_.m, s_.k, s_.trans_a), ctx.inputs[0]);
    memory user_b = wrap(strided_2d(s_.k, s_.n, s_.trans_b), ctx.inputs[1]);
    memory weights = s_.b_const ? convert_const(user_b, pd.weights_desc()) : user_b;
    memory dst = wrap(plain_f32({s_.m, s_.n}), ctx.outputs[0]);
    std::vector<std::pair<int, memory>> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (s_.c_mode != CMode::kNone && s_.c_const) {
      // beta*C once, rounded exactly as the reference rounds it (one product per element).
      const float* craw = ctx.in<float>(2);
      scaled_c_.resize(static_cast<size_t>(s_.c_dims[0] * s_.c_dims[1]));
      for (size_t i = 0; i < scaled_c_.size(); ++i) scaled_c_[i] = s_.beta * craw[i];
    }
    if (s_.c_mode == CMode::kBias) {
      const void* bias = s_.c_const ? static_cast<const void*>(scaled_c_.data()) : ctx.inputs[2];
      args.push_back({DNNL_ARG_BIAS, wrap(plain_f32(s_.c_dims), bias)});
    }
    add_step(dnnl::matmul(pd), pd, std::move(args));
    return Status::Ok();
  }

  void before_steps(const KernelContext& ctx) override {
    if (s_.c_mode != CMode::kPrefill) return;
    const bool scaled = s_.c_const;
    const float* c = scaled ? scaled_c_.data() : ctx.in<float>(2);
    float* y = ctx.out<float>(0);
    const memory::dim cm = s_.c_dims[0], cn = s_.c_dims[1];
    for (memory::dim i = 0; i < s_.m; ++i) {
      const float* crow = c + (cm == 1 ? 0 : i * cn);
      float* yrow = y + i * s_.n;
      if (cn == 1) {
        const float v = scaled ? crow[0] : s_.beta * crow[0];
        for (memory::dim j = 0; j < s_.n; ++j) yrow[j] = v;
      } else if (scaled) {
        for (memory::dim j = 0; j < s_.n; ++j) yrow[j] = crow[j];
      } else {
        for (memory::dim j = 0; j < s_.n; ++j) yrow[j] = s_.beta * crow[j];
      }
    }
  }

 private:
  GemmSetup s_;
  std::vector<float> scaled_c_;  // beta*C for a constant C
};

// -------------------------------------------------------------------------------------------- MatMul

struct MatMulSetup {
  memory::dims src, weights, dst;  // same rank, >= 2
  bool weights_any = false;        // constant 2-D B: reorder once to oneDNN's preferred layout
  bool valid = false;
};

MatMulSetup matmul_setup(const Graph& g, const Node& n) {
  MatMulSetup s;
  const Tensor* a = g.input(n, 0);
  const Tensor* b = g.input(n, 1);
  if (!a || !b || n.inputs.size() != 2 || n.outputs.size() != 1 || n.outputs[0] < 0) return s;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (a->shape.empty() || b->shape.empty()) return s;
  if (a->numel() == 0 || b->numel() == 0 || y.numel() == 0) return s;
  memory::dims ad(a->shape.begin(), a->shape.end());
  memory::dims bd(b->shape.begin(), b->shape.end());
  if (ad.size() == 1) ad.insert(ad.begin(), 1);  // [K] -> [1, K]
  if (bd.size() == 1) bd.push_back(1);           // [K] -> [K, 1]
  const memory::dim k = ad.back();
  if (bd[bd.size() - 2] != k) return s;
  const memory::dim nn = bd.back();
  if (bd.size() == 2 && b->is_const()) {
    // Linear layer: fold every leading dim of A into M.
    const memory::dim rows = a->numel() / k;
    if (y.numel() != rows * nn) return s;
    s.src = {rows, k};
    s.weights = {k, nn};
    s.dst = {rows, nn};
    s.weights_any = true;
    s.valid = true;
    return s;
  }
  const size_t rank = std::max(ad.size(), bd.size());
  if (rank > 12) return s;  // DNNL_MAX_NDIMS
  while (ad.size() < rank) ad.insert(ad.begin(), 1);
  while (bd.size() < rank) bd.insert(bd.begin(), 1);
  memory::dims dd(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) return s;
    dd[i] = std::max(ad[i], bd[i]);
  }
  dd[rank - 2] = ad[rank - 2];
  dd[rank - 1] = nn;
  int64_t numel = 1;
  for (auto d : dd) numel *= d;
  if (numel != y.numel()) return s;
  s.src = ad;
  s.weights = bd;
  s.dst = dd;
  s.valid = true;
  return s;
}

dnnl::matmul::primitive_desc matmul_pd(const Node& n, const MatMulSetup& s) {
  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::post_ops ops;
  if (!append_fused_act(n, ops)) throw dnnl::error(dnnl_unimplemented, "fused activation not expressible");
  attr.set_post_ops(ops);
  const memory::desc w = s.weights_any ? memory::desc(s.weights, memory::data_type::f32, memory::format_tag::any)
                                       : plain_f32(s.weights);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(plain_f32(s.src), w, plain_f32(s.dst)), attr, cpu_engine());
}

bool supports_matmul(const Graph& g, const Node& n) {
  if (!all_f32(g, n)) return false;
  MatMulSetup s = matmul_setup(g, n);
  if (!s.valid) return false;
  return probe_ok([&] { return matmul_pd(n, s); });
}

class MatMulF32 final : public OnednnKernel {
 protected:
  Status build(const KernelContext& ctx) override {
    const MatMulSetup s = matmul_setup(*ctx.graph, *ctx.node);
    if (!s.valid)
      return ORKNN_ERR(kInvalidModel, "%s (MatMul): shapes not supported by the oneDNN kernel", ctx.node->name.c_str());
    auto pd = matmul_pd(*ctx.node, s);
    set_impl_name(pd);
    memory user_w = wrap(plain_f32(s.weights), ctx.inputs[1]);
    memory weights = s.weights_any ? convert_const(user_w, pd.weights_desc()) : user_w;
    add_step(dnnl::matmul(pd), pd,
             {{DNNL_ARG_SRC, wrap(plain_f32(s.src), ctx.inputs[0])},
              {DNNL_ARG_WEIGHTS, weights},
              {DNNL_ARG_DST, wrap(plain_f32(s.dst), ctx.outputs[0])}});
    return Status::Ok();
  }
};

}  // namespace

ORKNN_REGISTER_KERNEL(Gemm, "onednn_gemm_f32", kPriorityGeneral, supports_gemm, GemmF32);
ORKNN_REGISTER_KERNEL(MatMul, "onednn_matmul_f32", kPriorityGeneral, supports_matmul, MatMulF32);

}  // namespace orknn::onednn
