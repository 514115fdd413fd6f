// Reference quantized Conv and ConvTranspose (docs/numerics.md, "Quantized (INT8) models"; NCHW,
// 1 to 3 spatial dims, any group, stride, dilation and padding).
//
// For output channel c of a quantized node (infer has checked the form):
//   acc = bias_q[c] + sum over the taps that fall inside the input of (x - zp_x) * w     (int32, exact)
//   y   = sat8(rne(float(acc) * M[c]) + zp_y),   M[c] = (s_x * s_w[c]) / s_y   (float32, at prepare)
// then the fused activation clamps y (Relu, Clip: kernels/ref/int8_compute.h). Padding taps are
// skipped, which equals padding with zp_x. Integer sums are exact, so their order does not
// matter; infer guarantees that |acc| fits in int32 (the kernel accumulates in int64 all the same,
// so no sum is ever undefined behaviour).
//
// The loop is the float reference kernel's (conv_loop, kernels/ref/nchw.h): 1-D and 2-D
// convolutions run as 3-D ones whose leading spatial dims are 1, and ConvTranspose is written in
// gather form.
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/ref/nchw.h"

namespace orknn {
namespace {

template <class Taps>
class ConvInt8Ref : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    shape_ = read_conv_shape(ctx);
    const QuantScalar qx = per_tensor(ctx.in_tensor(0));
    zp_x_ = qx.zp;
    // With per-channel ConvTranspose weights (group 1) axis 1 has M entries: one per output channel.
    out_ = int8_output(qx.scale, ctx.in_tensor(1).quant, ctx.out_tensor(0), ctx.node->attrs, shape_.out_ch);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int32_t* bias = ctx.has_input(2) ? ctx.in<int32_t>(2) : nullptr;
    conv_loop<Taps>(
        shape_, ctx.in<int8_t>(0), ctx.in<int8_t>(1), ctx.out<int8_t>(0),
        [bias](int64_t m) -> int64_t { return bias ? bias[m] : 0; },
        [this](int64_t& acc, int32_t x, int32_t w) { acc += (x - zp_x_) * w; },
        [this](int64_t m, int64_t acc) { return out_(acc, m); });
  }

 private:
  ConvShape shape_;
  int32_t zp_x_ = 0;
  Int8Output out_;
};

}  // namespace

ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Conv, ConvInt8Ref<ConvTaps>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(ConvTranspose, ConvInt8Ref<ConvTransposeTaps>);

}  // namespace orknn
