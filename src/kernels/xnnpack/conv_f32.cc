// Float 1-D and 2-D convolution on XNNPACK's f32 operator (NEON; depthwise on its dwconv
// microkernels, the rest on its GEMM / indirect GEMM ones): any group, depthwise multiplier,
// stride, dilation and padding, constant weights and bias, Conv's residual input, every fused
// activation.
//
// Numerics: the same real-number expression as the reference (kernels/ref/conv.cc), summed in
// another order (XNNPACK starts from the bias, blocks channels and uses FMA), within
// docs/kernels.md's float tolerance. Relu and Clip (min < max) are XNNPACK's output clamp; with a
// residual, or for the other activations, the kernel adds the residual and applies the reference's
// own apply_fused_act in a pass of its own. fp16 mode computes in float32 too: the executor rounds
// the outputs, as after every kernel that does not round them itself.
//
// Layout: XNNPACK computes channels-last, which is the runtime's float blocked layout in the builds
// that have this backend (kernels/kernel.h kFloatBlockedNhwc), so consecutive convolutions pass
// NHWC between them untouched. An NCHW input (a graph input, a 1-D convolution, a producer that
// takes no blocked input) is transposed into the shared scratch first, an NCHW output out of it
// afterwards; so is the raw output when a residual is added (the output may share the residual's
// bytes: graph/planner.h). Threads: XNNPACK's pool of ctx.num_threads (xnnpack::thread_pool); the
// passes of this file run on the calling thread.
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/nchw.h"
#include "kernels/xnnpack/xnnpack_common.h"

namespace orknn {
namespace {

static_assert(kFloatBlockedNhwc, "the XNNPACK float kernels take the float blocked layout as NHWC");

bool supports_conv_f32(const Graph& g, const Node& n) {
  if (n.op != OpId::Conv || n.outputs.size() != 1 || n.outputs[0] < 0 || is_quantized_node(g, n)) return false;
  const Tensor* x = g.input(n, 0);
  const Tensor* w = g.input(n, 1);
  const Tensor* b = g.input(n, 2);
  const Tensor* r = g.input(n, 3);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!is_f32(x) || !is_f32(w) || !is_f32(&y) || !w->is_const()) return false;
  if ((b && (!is_f32(b) || !b->is_const())) || (r && !is_f32(r))) return false;
  if (x->shape.size() != 3 && x->shape.size() != 4) return false;  // 1-D and 2-D
  return xnnpack::available();
}

// 1-D convolutions have 3-D activations, which are never blocked.
class ConvF32Xnnpack : public xnnpack::ImageKernel<float> {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!supports_conv_f32(*ctx.graph, *ctx.node))
      return ORKNN_ERR(kFail, "Conv '%s': not a float 1-D or 2-D convolution XNNPACK takes", ctx.node->name.c_str());
    const ConvShape cs = read_conv_shape(ctx);
    const SpatialGeometry& s = cs.s;
    residual_ = ctx.has_input(3);
    act_ = read_fused_act(ctx.node->attrs);
    const xnnpack::FloatClamp clamp = xnnpack::float_clamp_of_fused_act(ctx.node->attrs);
    // With a residual the activation comes after the addition, so it is never the clamp.
    const bool clamp_is_act = clamp.clamp && !residual_;
    post_act_ = !clamp_is_act && act_.act != FusedAct::kNone;

    const Tensor& wt = ctx.in_tensor(1);
    const int64_t icg = wt.shape[1], kh = s.kernel[1], kw = s.kernel[2];
    const std::vector<float> ohwi = xnnpack::weights_to_ohwi(ctx.in<float>(1), cs.out_ch, icg, kh * kw);
    const xnn_status st = xnn_create_convolution2d_nhwc_f32(
        static_cast<uint32_t>(s.pad_begin[1]), static_cast<uint32_t>(s.pad_end[2]),
        static_cast<uint32_t>(s.pad_end[1]), static_cast<uint32_t>(s.pad_begin[2]),
        static_cast<uint32_t>(kh), static_cast<uint32_t>(kw),
        static_cast<uint32_t>(s.stride[1]), static_cast<uint32_t>(s.stride[2]),
        static_cast<uint32_t>(s.dilation[1]), static_cast<uint32_t>(s.dilation[2]),
        static_cast<uint32_t>(cs.group), static_cast<size_t>(icg), static_cast<size_t>(cs.out_ch / cs.group),
        static_cast<size_t>(cs.in_ch), static_cast<size_t>(cs.out_ch), ohwi.data(),
        ctx.has_input(2) ? ctx.in<float>(2) : nullptr, clamp_is_act ? clamp.lo : -INFINITY,
        clamp_is_act ? clamp.hi : INFINITY, XNN_FLAG_YIELD_WORKERS, op_.out());
    if (st != xnn_status_success)
      return ORKNN_ERR(kFail, "Conv '%s': XNNPACK refused the convolution (status %d)", ctx.node->name.c_str(),
                       int(st));
    pool_ = xnnpack::thread_pool(ctx.num_threads);
    const size_t batch = static_cast<size_t>(cs.batch);
    const size_t h = static_cast<size_t>(s.in[1]), w = static_cast<size_t>(s.in[2]);
    // With a residual XNNPACK writes the scratch: the output may share the residual's bytes.
    io_.prepare(ctx, {cs.batch, cs.in_ch, s.in[1] * s.in[2], cs.out_ch, s.out[1] * s.out[2]}, residual_, &own_,
                [this, batch, h, w](const float* in, float* out) {
                  // The first call (at plan time) sizes XNNPACK's indirection buffer; later ones,
                  // same shape, keep it and allocate nothing. Setup checks only what create()
                  // checked (non-null, non-zero sizes), so it cannot fail on a created operator.
                  xnn_setup_convolution2d_nhwc_f32(op_.get(), batch, h, w, in, out, pool_);
                });
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    io_.stage(ctx);
    xnn_run_operator(op_.get(), pool_);
    float* y = ctx.out<float>(0);
    if (residual_) {  // y = raw + r in y's layout (the residual's: runtime/layout_assignment.h)
      const float* raw = io_.staged_out();
      const float* r = ctx.in<float>(3);
      const xnnpack::ChannelsLastIo<float>::Dims& d = io_.dims();
      if (io_.out_nhwc()) {
        for (size_t i = 0; i < io_.out_count(); ++i) y[i] = raw[i] + r[i];
      } else {
        for (int64_t b = 0; b < d.batch; ++b)
          for (int64_t p = 0; p < d.out_pixels; ++p)
            for (int64_t c = 0; c < d.out_channels; ++c) {
              const int64_t planar = (b * d.out_channels + c) * d.out_pixels + p;
              y[planar] = raw[(b * d.out_pixels + p) * d.out_channels + c] + r[planar];
            }
      }
    } else {
      io_.finish(ctx);
    }
    if (post_act_) apply_fused_act(y, io_.out_count(), act_.act, act_.alpha, act_.beta);
  }

 private:
  bool residual_ = false;
  bool post_act_ = false;  // the activation is a pass over the output
  FusedActivation act_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "xnnpack_conv_f32", kPriorityGeneral, supports_conv_f32, ConvF32Xnnpack);

}  // namespace orknn
