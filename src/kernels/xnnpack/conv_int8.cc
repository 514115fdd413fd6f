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
// channels-last graph input copied there, see prepare()). Threads:
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

class ConvInt8Xnnpack : public Kernel {
 public:
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kEach; }

  Status prepare(const KernelContext& ctx) override {
    if (!supports_conv_int8(*ctx.graph, *ctx.node))
      return ORKNN_ERR(kFail, "Conv '%s': not a quantized 2-D convolution XNNPACK takes", ctx.node->name.c_str());
    const ConvShape cs = read_conv_shape(ctx);
    const SpatialGeometry& s = cs.s;
    batch_ = cs.batch;
    c_ = cs.in_ch;
    oc_ = cs.out_ch;
    h_ = s.in[1];
    w_ = s.in[2];
    oh_ = s.out[1];
    ow_ = s.out[2];
    in_nhwc_ = ctx.input_blocked(0);
    out_nhwc_ = ctx.output_blocked(0);

    const Tensor& wt = ctx.in_tensor(1);
    const QuantScalar qx = per_tensor(ctx.in_tensor(0)), qy = per_tensor(ctx.out_tensor(0));
    const Int8Clamp clamp = int8_clamp_of_fused_act(ctx.node->attrs, qy.scale, qy.zp);
    const std::vector<float> kernel_scale = xnnpack::qc8_kernel_scales(wt.quant, oc_);
    // ONNX weights [OC][C/group][kh][kw] -> XNNPACK's [group][OC/group][kh][kw][C/group] (the same
    // output channel order); XNNPACK packs them again, so this copy lives only until then.
    const int64_t icg = wt.shape[1], kh = wt.shape[2], kw = wt.shape[3];
    const int8_t* wsrc = ctx.in<int8_t>(1);
    std::vector<int8_t> ohwi(static_cast<size_t>(oc_ * kh * kw * icg) + XNN_EXTRA_BYTES);
    for (int64_t o = 0; o < oc_; ++o)
      for (int64_t i = 0; i < icg; ++i)
        for (int64_t t = 0; t < kh * kw; ++t)
          ohwi[static_cast<size_t>((o * kh * kw + t) * icg + i)] = wsrc[(o * icg + i) * kh * kw + t];
    std::vector<int32_t> bias(static_cast<size_t>(oc_), 0);
    if (ctx.has_input(2)) std::memcpy(bias.data(), ctx.in<int32_t>(2), bias.size() * sizeof(int32_t));

    const xnn_status st = xnn_create_convolution2d_nhwc_qc8(
        static_cast<uint32_t>(s.pad_begin[1]), static_cast<uint32_t>(s.pad_end[2]),
        static_cast<uint32_t>(s.pad_end[1]), static_cast<uint32_t>(s.pad_begin[2]),
        static_cast<uint32_t>(kh), static_cast<uint32_t>(kw),
        static_cast<uint32_t>(s.stride[1]), static_cast<uint32_t>(s.stride[2]),
        static_cast<uint32_t>(s.dilation[1]), static_cast<uint32_t>(s.dilation[2]),
        static_cast<uint32_t>(cs.group), static_cast<size_t>(icg), static_cast<size_t>(oc_ / cs.group),
        static_cast<size_t>(c_), static_cast<size_t>(oc_),
        static_cast<int8_t>(qx.zp), qx.scale, kernel_scale.data(), ohwi.data(), bias.data(),
        static_cast<int8_t>(qy.zp), qy.scale, static_cast<int8_t>(clamp.lo), static_cast<int8_t>(clamp.hi),
        XNN_FLAG_YIELD_WORKERS, op_.out());
    if (st != xnn_status_success)
      return ORKNN_ERR(kFail, "Conv '%s': XNNPACK refused the convolution (status %d)", ctx.node->name.c_str(),
                       int(st));

    // Channels-last copies of an NCHW input and output, in the executor's shared scratch (written
    // before they are read in every run). XNNPACK may read XNN_EXTRA_BYTES past its input: the
    // arena has them, client memory (a graph input bound with rknn_set_io_mem) need not, so a
    // channels-last graph input is copied too.
    bool graph_input = false;
    for (const GraphInput& in : ctx.graph->inputs) graph_input |= in.tensor == ctx.node->inputs[0];
    stage_in_ = !in_nhwc_ || graph_input;
    const size_t in_bytes =
        stage_in_ ? (static_cast<size_t>(batch_ * h_ * w_ * c_) + XNN_EXTRA_BYTES + 63) / 64 * 64 : 0;
    const size_t out_bytes = out_nhwc_ ? 0 : static_cast<size_t>(batch_ * oh_ * ow_ * oc_);
    pool_ = xnnpack::thread_pool(ctx.num_threads);
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    if (in_bytes + out_bytes == 0) {
      setup(x, y);
      return Status::Ok();
    }
    auto bind = [this, in_bytes, out_bytes, x, y](void* base) {
      nhwc_in_ = in_bytes ? static_cast<int8_t*>(base) : nullptr;
      nhwc_out_ = out_bytes ? static_cast<int8_t*>(base) + in_bytes : nullptr;
      setup(stage_in_ ? nhwc_in_ : x, out_nhwc_ ? y : nhwc_out_);
    };
    request_scratch(ctx, in_bytes + out_bytes, bind, &own_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    const int8_t* xin = stage_in_ ? nhwc_in_ : x;
    int8_t* yout = out_nhwc_ ? y : nhwc_out_;
    if (!in_nhwc_)
      nchw_to_nhwc(x, nhwc_in_, c_, h_ * w_);
    else if (stage_in_)
      std::memcpy(nhwc_in_, x, static_cast<size_t>(batch_ * h_ * w_ * c_));
    // A tensor in client memory (rknn_set_io_mem) moves the buffers: bind them again (same shape,
    // so XNNPACK keeps its indirection buffer and allocates nothing).
    if (xin != bound_in_ || yout != bound_out_) setup(xin, yout);
    xnn_run_operator(op_.get(), pool_);
    if (!out_nhwc_) nhwc_to_nchw(nhwc_out_, y, oc_, oh_ * ow_);
  }

 private:
  // Binds the operator to its channels-last buffers; the first call (at plan time) sizes
  // XNNPACK's indirection buffer. XNNPACK's setup checks only what create() already checked
  // (non-null, non-zero sizes), so it cannot fail on an operator that was created.
  void setup(const int8_t* xin, int8_t* yout) {
    xnn_setup_convolution2d_nhwc_qc8(op_.get(), static_cast<size_t>(batch_), static_cast<size_t>(h_),
                                     static_cast<size_t>(w_), xin, yout, pool_);
    bound_in_ = xin;
    bound_out_ = yout;
  }
  void nchw_to_nhwc(const int8_t* src, int8_t* dst, int64_t channels, int64_t pixels) const {
    for (int64_t b = 0; b < batch_; ++b, src += channels * pixels, dst += channels * pixels)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t p = 0; p < pixels; ++p) dst[p * channels + c] = src[c * pixels + p];
  }
  void nhwc_to_nchw(const int8_t* src, int8_t* dst, int64_t channels, int64_t pixels) const {
    for (int64_t b = 0; b < batch_; ++b, src += channels * pixels, dst += channels * pixels)
      for (int64_t p = 0; p < pixels; ++p)
        for (int64_t c = 0; c < channels; ++c) dst[c * pixels + p] = src[p * channels + c];
  }

  xnnpack::Operator op_;
  pthreadpool_t pool_ = nullptr;  // shared, not owned (xnnpack::thread_pool)
  int64_t batch_ = 0, c_ = 0, oc_ = 0, h_ = 0, w_ = 0, oh_ = 0, ow_ = 0;
  bool in_nhwc_ = false, out_nhwc_ = false;
  bool stage_in_ = false;    // the input goes through nhwc_in_ (transposed, or copied)
  std::vector<ScratchLine> own_;  // the channels-last copies when the executor has no shared scratch
  int8_t* nhwc_in_ = nullptr;
  int8_t* nhwc_out_ = nullptr;
  const int8_t* bound_in_ = nullptr;
  int8_t* bound_out_ = nullptr;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "xnnpack_conv_int8", kPriorityGeneral, supports_conv_int8, ConvInt8Xnnpack);

}  // namespace orknn
