// Reference Conv and ConvTranspose (float32, NCHW, 1 to 3 spatial dims, any group).
//
// Numerics (the contract fast kernels are compared against): for each output element the
// products are accumulated in a float32 accumulator starting at 0, in this order: input channel
// of the group ascending, then kernel taps in row-major order (depth, height, width); taps that
// fall into the padding are skipped. The bias is added after the sum, then Conv's residual input
// (ops/conv.cc), then the fused activation. The output may share the residual's bytes (the arena
// planner gives them when the residual has no later reader): each output reads only its own
// residual element, just before it is written.
//
// 1-D and 2-D convolutions run as 3-D ones whose leading spatial dims are 1.
#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/nchw.h"

namespace orknn {
namespace {

// The loop is conv_loop (kernels/ref/nchw.h), shared with the int8 kernel (conv_int8.cc):
//   y[n, m, o] = act(B[m] + sum over input channels ic of m's group, then taps t (row-major),
//                    of x[n, ic, source(o, t)] * W(m, ic, t))
template <class Taps>
class ConvRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    shape_ = read_conv_shape(ctx);
    act_ = read_fused_act(ctx.node->attrs);
    return Status::Ok();
  }
  void run(const KernelContext& ctx) override {
    const float* bias = ctx.has_input(2) ? ctx.in<float>(2) : nullptr;
    // conv_loop writes the outputs in order, so the k-th call of finish is output element k.
    const float* residual = ctx.has_input(3) ? ctx.in<float>(3) : nullptr;
    int64_t k = 0;
    conv_loop<Taps>(
        shape_, ctx.in<float>(0), ctx.in<float>(1), ctx.out<float>(0), [](int64_t) { return 0.f; },
        [](float& acc, float x, float w) { acc += x * w; },
        [&](int64_t m, float acc) {
          if (bias) acc += bias[m];
          if (residual) acc += residual[k++];
          return act_(acc);
        });
  }

 private:
  ConvShape shape_;
  FusedActivation act_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "ref", kPriorityReference, nullptr, ConvRef<ConvTaps>);
ORKNN_REGISTER_KERNEL(ConvTranspose, "ref", kPriorityReference, nullptr, ConvRef<ConvTransposeTaps>);

}  // namespace orknn
