// INT8 Gemm and MatMul with constant weights (a fully-connected layer; kernels/fc_shape.h) on
// XNNPACK's QC8 convolution as a 1x1 convolution over M pixels: A [M, K] is M pixels of K
// channels, Y [M, N] M pixels of N channels, both row-major already. (This XNNPACK has no
// per-channel fully-connected operator; its QS8 one takes one weight scale.) A is copied into the
// shared scratch first: XNNPACK reads up to XNN_EXTRA_BYTES past its input, and A may be client
// memory (a graph input bound with rknn_set_io_mem) that ends right there.
//
// Bit-exact with ref_int8 for the reasons of conv_int8.cc: the same int32 accumulator (C, the
// Gemm's bias, one value per column), the same multiplier (s_a * s_b[j]) / s_y, rounding,
// saturation and clamp. MatMul of two activations stays on the reference kernel.
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/fc_shape.h"
#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/xnnpack/xnnpack_common.h"
#include "ops/op.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

bool supports_fc_int8(const Graph& g, const Node& n) {
  if (!is_quantized_node(g, n) || !xnnpack::available()) return false;
  const FcShape fc = fc_shape(g, n);
  if (!fc.ok) return false;
  const Tensor* b = g.input(n, 1);
  if (!b->is_const() || b->dtype != DType::kI8) return false;
  const int64_t axis = fc.trans_b ? 0 : 1;
  if (!check_q8_input(g, n, 0).ok() || !check_q8_output(g, n, 0).ok() ||
      !check_q8_weights(g, n, 1, "B", axis, fc.trans_b ? "axis 0" : "axis 1").ok() || !check_q8_fused_act(n).ok())
    return false;
  if (b->quant.scale.size() != 1 && static_cast<int64_t>(b->quant.scale.size()) != fc.n) return false;
  if (n.op == OpId::Gemm && g.input(n, 2)) {
    int64_t max_bias = 0;
    if (!check_i32_bias(g, n, 2, "C", &max_bias).ok()) return false;
  }
  return xnnpack::qc8_params_ok(*g.input(n, 0), b->quant, g.tensor(n.outputs[0]), n.attrs, fc.n);
}

class FcInt8Xnnpack : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!supports_fc_int8(*ctx.graph, *ctx.node))
      return ORKNN_ERR(kFail, "%s '%s': not a quantized fully-connected node XNNPACK takes", op_name(ctx.node->op),
                       ctx.node->name.c_str());
    const FcShape fc = fc_shape(*ctx.graph, *ctx.node);
    m_ = fc.m;
    const Tensor& bt = ctx.in_tensor(1);
    const QuantScalar qa = per_tensor(ctx.in_tensor(0)), qy = per_tensor(ctx.out_tensor(0));
    const Int8Clamp clamp = int8_clamp_of_fused_act(ctx.node->attrs, qy.scale, qy.zp);
    const std::vector<float> kernel_scale = xnnpack::qc8_kernel_scales(bt.quant, fc.n);
    // XNNPACK's weights are [N][K] (output channels first): transB's bytes as they are, else B^T.
    const int8_t* b = ctx.in<int8_t>(1);
    std::vector<int8_t> nk(static_cast<size_t>(fc.n * fc.k) + XNN_EXTRA_BYTES);
    for (int64_t j = 0; j < fc.n; ++j)
      for (int64_t p = 0; p < fc.k; ++p)
        nk[static_cast<size_t>(j * fc.k + p)] = fc.trans_b ? b[j * fc.k + p] : b[p * fc.n + j];
    std::vector<int32_t> bias(static_cast<size_t>(fc.n), 0);
    if (ctx.node->op == OpId::Gemm && ctx.has_input(2))
      std::memcpy(bias.data(), ctx.in<int32_t>(2), bias.size() * sizeof(int32_t));

    const xnn_status st = xnn_create_convolution2d_nhwc_qc8(
        0, 0, 0, 0, /*kernel=*/1, 1, /*subsampling=*/1, 1, /*dilation=*/1, 1, /*groups=*/1,
        static_cast<size_t>(fc.k), static_cast<size_t>(fc.n), static_cast<size_t>(fc.k), static_cast<size_t>(fc.n),
        static_cast<int8_t>(qa.zp), qa.scale, kernel_scale.data(), nk.data(), bias.data(), static_cast<int8_t>(qy.zp),
        qy.scale, static_cast<int8_t>(clamp.lo), static_cast<int8_t>(clamp.hi), XNN_FLAG_YIELD_WORKERS, op_.out());
    if (st != xnn_status_success)
      return ORKNN_ERR(kFail, "%s '%s': XNNPACK refused the layer (status %d)", op_name(ctx.node->op),
                       ctx.node->name.c_str(), int(st));
    pool_ = xnnpack::thread_pool(ctx.num_threads);
    a_bytes_ = static_cast<size_t>(fc.m * fc.k);
    const size_t bytes = a_bytes_ + XNN_EXTRA_BYTES;
    int8_t* y = ctx.out<int8_t>(0);
    auto bind = [this, y](void* base) {
      a_copy_ = static_cast<int8_t*>(base);
      setup(y);
    };
    request_scratch(ctx, bytes, bind, &own_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    std::memcpy(a_copy_, ctx.in<int8_t>(0), a_bytes_);
    int8_t* y = ctx.out<int8_t>(0);
    if (y != bound_y_) setup(y);
    xnn_run_operator(op_.get(), pool_);
  }

 private:
  // M pixels of one row each; a 1x1 convolution has no indirection buffer, so setup allocates
  // nothing and cannot fail on a created operator.
  void setup(int8_t* y) {
    xnn_setup_convolution2d_nhwc_qc8(op_.get(), static_cast<size_t>(m_), 1, 1, a_copy_, y, pool_);
    bound_y_ = y;
  }

  xnnpack::Operator op_;
  pthreadpool_t pool_ = nullptr;  // shared, not owned (xnnpack::thread_pool)
  int64_t m_ = 0;
  size_t a_bytes_ = 0;
  std::vector<ScratchLine> own_;  // A's copy when the executor has no shared scratch
  int8_t* a_copy_ = nullptr;     // A, then XNN_EXTRA_BYTES readable bytes
  int8_t* bound_y_ = nullptr;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Gemm, "xnnpack_gemm_int8", kPriorityGeneral, supports_fc_int8, FcInt8Xnnpack);
ORKNN_REGISTER_KERNEL(MatMul, "xnnpack_matmul_int8", kPriorityGeneral, supports_fc_int8, FcInt8Xnnpack);

}  // namespace orknn
