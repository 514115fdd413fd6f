// Float Gemm and MatMul with constant weights (a fully-connected layer; kernels/fc_shape.h) on
// XNNPACK's f32 fully-connected operator: Y [M, N] = A [M, K] * B + C, B constant [K, N] (or
// [N, K] with transB, XNNPACK's own order), C absent or one constant bias per column. A is read
// where it is, unless it is a graph input (client memory may end right after it, and XNNPACK reads
// up to XNN_EXTRA_BYTES past its input: xnnpack::is_graph_input), which is copied into the shared
// scratch first. MatMul of two activations, and the other Gemm forms, stay on the reference.
//
// Numerics: the reference's sum of products in another order (XNNPACK starts from the bias and
// uses FMA), within docs/kernels.md's float tolerance; Relu and Clip (min < max) are XNNPACK's
// output clamp, the other fused activations a pass of the reference's apply_fused_act.
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/fc_shape.h"
#include "kernels/kernel.h"
#include "kernels/ref/activation.h"
#include "kernels/xnnpack/xnnpack_common.h"
#include "ops/op.h"

namespace orknn {
namespace {

bool supports_fc_f32(const Graph& g, const Node& n) {
  if (is_quantized_node(g, n) || !fc_shape(g, n).ok) return false;
  const Tensor* a = g.input(n, 0);
  const Tensor* b = g.input(n, 1);
  const Tensor* c = n.op == OpId::Gemm ? g.input(n, 2) : nullptr;
  if (!is_f32(a) || !is_f32(b) || !b->is_const() || !is_f32(&g.tensor(n.outputs[0]))) return false;
  if (c && (!is_f32(c) || !c->is_const())) return false;
  return xnnpack::available();
}

class FcF32Xnnpack : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!supports_fc_f32(*ctx.graph, *ctx.node))
      return ORKNN_ERR(kFail, "%s '%s': not a float fully-connected node XNNPACK takes", op_name(ctx.node->op),
                       ctx.node->name.c_str());
    const FcShape fc = fc_shape(*ctx.graph, *ctx.node);
    m_ = fc.m;
    count_ = static_cast<size_t>(fc.m * fc.n);
    act_ = read_fused_act(ctx.node->attrs);
    const xnnpack::FloatClamp clamp = xnnpack::float_clamp_of_fused_act(ctx.node->attrs);
    post_act_ = !clamp.clamp;
    const float* bias = ctx.node->op == OpId::Gemm && ctx.has_input(2) ? ctx.in<float>(2) : nullptr;
    const xnn_status st = xnn_create_fully_connected_nc_f32(
        static_cast<size_t>(fc.k), static_cast<size_t>(fc.n), static_cast<size_t>(fc.k), static_cast<size_t>(fc.n),
        ctx.in<float>(1), bias, clamp.clamp ? clamp.lo : -INFINITY, clamp.clamp ? clamp.hi : INFINITY,
        (fc.trans_b ? 0u : XNN_FLAG_TRANSPOSE_WEIGHTS) | XNN_FLAG_YIELD_WORKERS, op_.out());
    if (st != xnn_status_success)
      return ORKNN_ERR(kFail, "%s '%s': XNNPACK refused the layer (status %d)", op_name(ctx.node->op),
                       ctx.node->name.c_str(), int(st));
    pool_ = xnnpack::thread_pool(ctx.num_threads);
    const float* a = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    if (!xnnpack::is_graph_input(*ctx.graph, ctx.node->inputs[0])) {
      setup(a, y);
      return Status::Ok();
    }
    a_bytes_ = sizeof(float) * static_cast<size_t>(fc.m * fc.k);
    auto bind = [this, y](void* base) {
      a_copy_ = static_cast<float*>(base);
      setup(a_copy_, y);
    };
    request_scratch(ctx, xnnpack::staged_bytes(a_bytes_), bind, &own_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* a = ctx.in<float>(0);
    if (a_copy_) {
      std::memcpy(a_copy_, a, a_bytes_);
      a = a_copy_;
    }
    float* y = ctx.out<float>(0);
    if (a != bound_a_ || y != bound_y_) setup(a, y);
    xnn_run_operator(op_.get(), pool_);
    if (post_act_) apply_fused_act(y, count_, act_.act, act_.alpha, act_.beta);
  }

 private:
  // M rows; the fully-connected setup keeps no buffer of its own, so it allocates nothing and
  // cannot fail on a created operator.
  void setup(const float* a, float* y) {
    xnn_setup_fully_connected_nc_f32(op_.get(), static_cast<size_t>(m_), a, y, pool_);
    bound_a_ = a;
    bound_y_ = y;
  }

  xnnpack::Operator op_;
  pthreadpool_t pool_ = nullptr;  // shared, not owned (xnnpack::thread_pool)
  int64_t m_ = 0;
  size_t count_ = 0;     // outputs
  size_t a_bytes_ = 0;
  bool post_act_ = false;  // the activation is a pass over the output
  FusedActivation act_;
  std::vector<ScratchLine> own_;  // A's copy when the executor has no shared scratch
  float* a_copy_ = nullptr;       // A, when it is a graph input
  const float* bound_a_ = nullptr;
  float* bound_y_ = nullptr;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Gemm, "xnnpack_gemm_f32", kPriorityGeneral, supports_fc_f32, FcF32Xnnpack);
ORKNN_REGISTER_KERNEL(MatMul, "xnnpack_matmul_f32", kPriorityGeneral, supports_fc_f32, FcF32Xnnpack);

}  // namespace orknn
