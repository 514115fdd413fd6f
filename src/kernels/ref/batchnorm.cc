// Reference BatchNormalization (inference, float32).
//
// Numerics: y = scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + B[c], evaluated in float32
// exactly in that order (sqrtf of the sum, one multiply, one divide, one add) for every element.
#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"

namespace orknn {
namespace {

class BatchNormRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& x = ctx.in_tensor(0).shape;
    batch_ = x[0];
    channels_ = x[1];
    inner_ = 1;
    for (size_t i = 2; i < x.size(); ++i) inner_ *= x[i];
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
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t c = 0; c < channels_; ++c) {
        const float stddev = std::sqrt(var[c] + epsilon_);
        const int64_t base = (n * channels_ + c) * inner_;
        for (int64_t i = 0; i < inner_; ++i) y[base + i] = scale[c] * (x[base + i] - mean[c]) / stddev + bias[c];
      }
    }
  }

 private:
  int64_t batch_ = 0, channels_ = 0, inner_ = 1;
  float epsilon_ = 1e-5f;
};

}  // namespace

ORKNN_REGISTER_KERNEL(BatchNormalization, "ref", 0, nullptr, BatchNormRef);

}  // namespace orknn
