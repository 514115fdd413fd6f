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
    for (int64_t n = 0; n < p_.batch; ++n) {
      for (int64_t c = 0; c < p_.channels; ++c) {
        const float stddev = std::sqrt(var[c] + epsilon_);
        const int64_t base = (n * p_.channels + c) * p_.plane;
        for (int64_t i = 0; i < p_.plane; ++i) y[base + i] = scale[c] * (x[base + i] - mean[c]) / stddev + bias[c];
      }
    }
  }

 private:
  ChannelPlanes p_;
  float epsilon_ = 1e-5f;
};

}  // namespace

ORKNN_REGISTER_KERNEL(BatchNormalization, "ref", 0, nullptr, BatchNormRef);

}  // namespace orknn
