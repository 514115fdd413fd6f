// Reference BatchNormalization (inference, float32).
//
// Numerics: y = scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + B[c], evaluated in float32
// exactly in that order (sqrtf of the sum, one multiply, one divide, one add) for every element.
#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/ref/nchw.h"

namespace orknn {
namespace {

class BatchNormRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    p_ = channel_planes(ctx.in_tensor(0).shape);
    epsilon_ = ctx.node->attrs.get_float("epsilon", 1e-5f);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    const float* scale = ctx.in<float>(1);
    const float* bias = ctx.in<float>(2);
    const float* mean = ctx.in<float>(3);
    const float* var = ctx.in<float>(4);
    float* y = ctx.out<float>(0);
    for_each_plane(p_, [&](int64_t c, int64_t first) {
      const float stddev = std::sqrt(var[c] + epsilon_);
      for (int64_t i = first; i < first + p_.plane; ++i) y[i] = scale[c] * (x[i] - mean[c]) / stddev + bias[c];
    });
  }

 private:
  ChannelPlanes p_;
  float epsilon_ = 1e-5f;
};

}  // namespace

ORKNN_REGISTER_KERNEL(BatchNormalization, "ref", kPriorityReference, nullptr, BatchNormRef);

}  // namespace orknn
