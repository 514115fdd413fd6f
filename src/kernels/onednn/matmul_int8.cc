// oneDNN INT8 Gemm and MatMul with constant int8 weights (a fully-connected layer), bit-exact with
// the quantized reference kernels (docs/numerics.md; the arithmetic argument is in int8_common.h).
//
// Per run: A (int8) -> u8 copy (x + 128); oneDNN matmul u8 x s8 -> s32 (weights reordered once at
// prepare); requantization of each row straight into the int8 output.
//
// The nodes: the fully-connected form of kernels/fc_shape.h (the converter folds alpha and beta),
// B constant, per tensor or per column (channel axis 1 of [K, N], 0 of transB's [N, K]). MatMul of
// two activations stays on the reference kernel.
#include <algorithm>
#include <vector>

#include "kernels/fc_shape.h"
#include "kernels/onednn/int8_common.h"
#include "kernels/onednn/onednn_common.h"
#include "kernels/parallel.h"

namespace orknn::onednn {
namespace {

using dnnl::memory;

struct FcInt8Plan {
  memory::dim m = 0, k = 0, n = 0;
  bool trans_b = false;  // B bytes are [N, K]
  Int8Quant quant;
  WeightSums sums;
  bool ok = false;
};

FcInt8Plan fc_int8_plan(const Graph& g, const Node& n) {
  FcInt8Plan p;
  const FcShape fc = fc_shape(g, n);
  if (!fc.ok) return p;
  p.m = fc.m;
  p.k = fc.k;
  p.n = fc.n;
  p.trans_b = fc.trans_b;
  if (!read_int8_quant(g, n, p.n, p.trans_b ? 0 : 1, &p.quant)) return p;
  if (n.op == OpId::Gemm && !int8_bias_ok(g, n, 2, p.n)) return p;
  const int8_t* w = g.input(n, 1)->const_ptr<int8_t>();
  p.sums = p.trans_b ? int8_weight_sums(w, p.n, p.k, p.k, 1) : int8_weight_sums(w, p.n, p.k, 1, p.n);
  p.ok = true;
  return p;
}

memory::desc fc_weights_user(const FcInt8Plan& p) {
  // Logical {K, N}; transB bytes [N, K] are the column-major view.
  return memory::desc({p.k, p.n}, memory::data_type::s8, p.trans_b ? memory::dims{1, p.k} : memory::dims{p.n, 1});
}

dnnl::matmul::primitive_desc fc_int8_pd(const FcInt8Plan& p) {
  const memory::desc src({p.m, p.k}, memory::data_type::u8, memory::format_tag::ab);
  const memory::desc w({p.k, p.n}, memory::data_type::s8, memory::format_tag::any);
  const memory::desc dst({p.m, p.n}, memory::data_type::s32, memory::format_tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, w, dst), user_scratchpad_attr(), cpu_engine());
  if (!select_exact_int8_impl(pd, p.sums.worst_u8_acc))
    throw dnnl::error(dnnl_unimplemented, "no oneDNN implementation with exact int32 accumulators");
  return pd;
}

bool supports_fc_int8(const Graph& g, const Node& n) {
  if (!is_quantized_node(g, n)) return false;
  const FcInt8Plan p = fc_int8_plan(g, n);
  if (!p.ok) return false;
  try {
    fc_int8_pd(p);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

class FcInt8 final : public OnednnKernel {
 protected:
  Status build(const KernelContext& ctx) override {
    FcInt8Plan plan = fc_int8_plan(*ctx.graph, *ctx.node);
    if (!plan.ok)
      return ORKNN_ERR(kInvalidModel, "%s (%s): not a quantized node the oneDNN INT8 kernel handles",
                       ctx.node->name.c_str(), op_name(ctx.node->op));
    m_ = plan.m;
    k_ = plan.k;
    n_ = plan.n;
    quant_ = std::move(plan.quant);
    auto pd = fc_int8_pd(plan);
    set_impl_name(pd);
    const int32_t* bias = ctx.node->op == OpId::Gemm && ctx.has_input(2) ? ctx.in<int32_t>(2) : nullptr;
    comp_ = int8_compensation(plan.sums.sum, bias, quant_.zp_x);
    requant_ = int8_requant_params(quant_, comp_);
    weights_ = convert_const(wrap(fc_weights_user(plan), ctx.inputs[1]), pd.weights_desc());
    // Both written and read within one run: from the executor's shared scratch.
    src_ = transient(pd.src_desc());
    dst_ = transient(pd.dst_desc());
    add_step(dnnl::matmul(pd), pd, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst_}});
    return Status::Ok();
  }

  void before_steps(const KernelContext& ctx) override {
    const int8_t* a = ctx.in<int8_t>(0);
    uint8_t* buf = static_cast<uint8_t*>(src_.get_data_handle());
    const int64_t total = m_ * k_;
    const int nt = ctx.num_threads > 0 ? ctx.num_threads : 1;
    const int64_t chunk = std::max<int64_t>(1 << 16, (total + nt - 1) / nt);
    const int64_t jobs = (total + chunk - 1) / chunk;
    parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t b = j * chunk;
        x86::int8_to_u8(a + b, std::min(chunk, total - b), buf + b);
      }
    });
  }

  void after_steps(const KernelContext& ctx) override {
    const int32_t* acc = static_cast<const int32_t*>(dst_.get_data_handle());
    int8_t* y = ctx.out<int8_t>(0);
    const int nt = ctx.num_threads > 0 ? ctx.num_threads : 1;
    const int64_t rows = std::max<int64_t>(1, (1 << 14) / n_);  // about 16K outputs per job
    const int64_t jobs = (m_ + rows - 1) / rows;
    parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t r0 = j * rows;
        x86::requant_rows(acc + r0 * n_, std::min(rows, m_ - r0), n_, n_, y + r0 * n_, n_, requant_);
      }
    });
  }

 private:
  int64_t m_ = 0, k_ = 0, n_ = 0;
  Int8Quant quant_;
  std::vector<int32_t> comp_;
  x86::RequantParams requant_;
  memory weights_, src_, dst_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Gemm, "onednn_gemm_int8", kPriorityGeneral, supports_fc_int8, FcInt8);
ORKNN_REGISTER_KERNEL(MatMul, "onednn_matmul_int8", kPriorityGeneral, supports_fc_int8, FcInt8);

}  // namespace orknn::onednn
