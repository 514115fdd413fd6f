// Reference Softmax and LogSoftmax (float32) along one axis.
//
// Numerics, per slice along the axis (elements in index order):
//   max = largest element; sum = float32 sum of expf(x - max) starting at 0;
//   Softmax: y = expf(x - max) / sum;   LogSoftmax: y = (x - max) - logf(sum).
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/kernel.h"

namespace orknn {
namespace {

class SoftmaxRef : public Kernel {
 public:
  explicit SoftmaxRef(bool log) : log_(log) {}

  Status prepare(const KernelContext& ctx) override {
    const Shape& x = ctx.in_tensor(0).shape;
    const size_t axis = static_cast<size_t>(ctx.node->attrs.get_int("axis", 0));
    outer_ = inner_ = 1;
    for (size_t i = 0; i < axis; ++i) outer_ *= x[i];
    for (size_t i = axis + 1; i < x.size(); ++i) inner_ *= x[i];
    len_ = x[axis];
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        // Slice elements are inner_ apart.
        const float* xs = x + o * len_ * inner_ + i;
        float* ys = y + o * len_ * inner_ + i;
        float max = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < len_; ++j)
          if (xs[j * inner_] > max) max = xs[j * inner_];
        float sum = 0.f;
        for (int64_t j = 0; j < len_; ++j) sum += std::exp(xs[j * inner_] - max);
        if (log_) {
          const float log_sum = std::log(sum);
          for (int64_t j = 0; j < len_; ++j) ys[j * inner_] = (xs[j * inner_] - max) - log_sum;
        } else {
          for (int64_t j = 0; j < len_; ++j) ys[j * inner_] = std::exp(xs[j * inner_] - max) / sum;
        }
      }
    }
  }

 private:
  bool log_;
  int64_t outer_ = 1, inner_ = 1, len_ = 1;
};

class SoftmaxKernel : public SoftmaxRef {
 public:
  SoftmaxKernel() : SoftmaxRef(false) {}
};
class LogSoftmaxKernel : public SoftmaxRef {
 public:
  LogSoftmaxKernel() : SoftmaxRef(true) {}
};

}  // namespace

ORKNN_REGISTER_KERNEL(Softmax, "ref", kPriorityReference, nullptr, SoftmaxKernel);
ORKNN_REGISTER_KERNEL(LogSoftmax, "ref", kPriorityReference, nullptr, LogSoftmaxKernel);

}  // namespace orknn
