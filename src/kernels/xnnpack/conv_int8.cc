// INT8 2-D convolution on XNNPACK's QC8 operator (per-channel int8 weights, fp32 requantization):
// NEON dot-product microkernels (sdot) where the CPU has them, NEON otherwise, depthwise on its
// dwconv microkernels.
//
// Bit-exact with ref_int8 (docs/numerics.md): XNNPACK sums the same int32 accumulator (it folds
// -zp_x * sum(w) into the bias; integer sums are exact), computes the per-channel multiplier as
// (s_x * s_w[c]) / s_y in float, as requant_multipliers() does, and requantizes as the reference:
// float(acc) * M, rounded to nearest even, + zp_y, saturated, clamped to [lo, hi] (Relu, Clip).
// Its padding reads zp_x, which the reference's skipped taps equal. supports() declines what
// XNNPACK refuses (xnnpack::qc8_params_ok), so prepare() never fails on a node it accepted.
//
// Layout: XNNPACK computes channels-last; input and output each NCHW or channels-last (the
// runtime's INT8 blocked layout), NCHW ones transposed through the shared scratch (and a
// channels-last graph input copied there: xnnpack::ChannelsLastIo). Threads:
// XNNPACK's pool of ctx.num_threads (xnnpack::thread_pool); integer results do not depend on the
// split.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/ref/nchw.h"
#include "kernels/xnnpack/xnnpack_common.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

bool supports_conv_int8(const Graph& g, const Node& n) {
  if (!is_q8_conv2d(g, n) || !xnnpack::available()) return false;
  const Tensor* w = g.input(n, 1);
  return xnnpack::qc8_params_ok(*g.input(n, 0), w->quant, g.tensor(n.outputs[0]), n.attrs, w->shape[0]);
}

class ConvInt8Xnnpack : public xnnpack::ImageKernel<int8_t> {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!supports_conv_int8(*ctx.graph, *ctx.node))
      return ORKNN_ERR(kFail, "Conv '%s': not a quantized 2-D convolution XNNPACK takes", ctx.node->name.c_str());
    const ConvShape cs = read_conv_shape(ctx);
    const SpatialGeometry& s = cs.s;
    const int64_t oc = cs.out_ch;

    const Tensor& wt = ctx.in_tensor(1);
    const QuantScalar qx = per_tensor(ctx.in_tensor(0)), qy = per_tensor(ctx.out_tensor(0));
    const Int8Clamp clamp = int8_clamp_of_fused_act(ctx.node->attrs, qy.scale, qy.zp);
    const std::vector<float> kernel_scale = xnnpack::qc8_kernel_scales(wt.quant, oc);
    // ONNX weights [OC][C/group][kh][kw] -> XNNPACK's [group][OC/group][kh][kw][C/group] (the same
    // output channel order); XNNPACK packs them again, so this copy lives only until then.
    const int64_t icg = wt.shape[1], kh = wt.shape[2], kw = wt.shape[3];
    const std::vector<int8_t> ohwi = xnnpack::weights_to_ohwi(ctx.in<int8_t>(1), oc, icg, kh * kw);
    std::vector<int32_t> bias(static_cast<size_t>(oc), 0);
    if (ctx.has_input(2)) std::memcpy(bias.data(), ctx.in<int32_t>(2), bias.size() * sizeof(int32_t));

    const xnn_status st = xnn_create_convolution2d_nhwc_qc8(
        static_cast<uint32_t>(s.pad_begin[1]), static_cast<uint32_t>(s.pad_end[2]),
        static_cast<uint32_t>(s.pad_end[1]), static_cast<uint32_t>(s.pad_begin[2]),
        static_cast<uint32_t>(kh), static_cast<uint32_t>(kw),
        static_cast<uint32_t>(s.stride[1]), static_cast<uint32_t>(s.stride[2]),
        static_cast<uint32_t>(s.dilation[1]), static_cast<uint32_t>(s.dilation[2]),
        static_cast<uint32_t>(cs.group), static_cast<size_t>(icg), static_cast<size_t>(oc / cs.group),
        static_cast<size_t>(cs.in_ch), static_cast<size_t>(oc),
        static_cast<int8_t>(qx.zp), qx.scale, kernel_scale.data(), ohwi.data(), bias.data(),
        static_cast<int8_t>(qy.zp), qy.scale, static_cast<int8_t>(clamp.lo), static_cast<int8_t>(clamp.hi),
        XNN_FLAG_YIELD_WORKERS, op_.out());
    if (st != xnn_status_success)
      return ORKNN_ERR(kFail, "Conv '%s': XNNPACK refused the convolution (status %d)", ctx.node->name.c_str(),
                       int(st));

    pool_ = xnnpack::thread_pool(ctx.num_threads);
    const size_t batch = static_cast<size_t>(cs.batch);
    const size_t h = static_cast<size_t>(s.in[1]), w = static_cast<size_t>(s.in[2]);
    io_.prepare(ctx, {cs.batch, cs.in_ch, s.in[1] * s.in[2], oc, s.out[1] * s.out[2]}, false, &own_,
                [this, batch, h, w](const int8_t* in, int8_t* out) {
                  // The first call (at plan time) sizes XNNPACK's indirection buffer; later ones,
                  // same shape, keep it and allocate nothing. Setup checks only what create()
                  // checked (non-null, non-zero sizes), so it cannot fail on a created operator.
                  xnn_setup_convolution2d_nhwc_qc8(op_.get(), batch, h, w, in, out, pool_);
                });
    return Status::Ok();
  }
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "xnnpack_conv_int8", kPriorityGeneral, supports_conv_int8, ConvInt8Xnnpack);

}  // namespace orknn
