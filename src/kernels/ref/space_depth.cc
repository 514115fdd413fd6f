// Reference DepthToSpace and SpaceToDepth (any dtype, elements copied by size).
//
// With block b and output element y[n, c, h, w]:
//   DepthToSpace DCR: y[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C_out + c, h, w]
//   DepthToSpace CRD: y[n, c, h*b + i, w*b + j] = x[n, c*b*b + i*b + j, h, w]
//   SpaceToDepth:     y[n, (i*b + j) * C_in + c, h, w] = x[n, c, h*b + i, w*b + j]
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/kernel.h"

namespace orknn {
namespace {

class DepthToSpaceRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& y = ctx.out_tensor(0).shape;
    n_ = y[0];
    c_ = y[1];
    h_ = ctx.in_tensor(0).shape[2];
    w_ = ctx.in_tensor(0).shape[3];
    b_ = ctx.node->attrs.get_int("blocksize", 1);
    crd_ = ctx.node->attrs.get_string("mode", "DCR") == "CRD";
    esize_ = dtype_size(ctx.in_tensor(0).dtype);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const uint8_t* x = ctx.in<uint8_t>(0);
    uint8_t* y = ctx.out<uint8_t>(0);
    const int64_t in_c = c_ * b_ * b_, out_h = h_ * b_, out_w = w_ * b_;
    for (int64_t n = 0; n < n_; ++n)
      for (int64_t c = 0; c < c_; ++c)
        for (int64_t oh = 0; oh < out_h; ++oh)
          for (int64_t ow = 0; ow < out_w; ++ow) {
            const int64_t i = oh % b_, j = ow % b_, h = oh / b_, w = ow / b_;
            const int64_t ic = crd_ ? c * b_ * b_ + i * b_ + j : (i * b_ + j) * c_ + c;
            const int64_t src = ((n * in_c + ic) * h_ + h) * w_ + w;
            const int64_t dst = ((n * c_ + c) * out_h + oh) * out_w + ow;
            std::memcpy(y + dst * esize_, x + src * esize_, esize_);
          }
  }

 private:
  int64_t n_ = 0, c_ = 0, h_ = 0, w_ = 0, b_ = 1;
  bool crd_ = false;
  size_t esize_ = 4;
};

class SpaceToDepthRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& x = ctx.in_tensor(0).shape;
    n_ = x[0];
    c_ = x[1];
    h_ = x[2];
    w_ = x[3];
    b_ = ctx.node->attrs.get_int("blocksize", 1);
    esize_ = dtype_size(ctx.in_tensor(0).dtype);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const uint8_t* x = ctx.in<uint8_t>(0);
    uint8_t* y = ctx.out<uint8_t>(0);
    const int64_t out_c = c_ * b_ * b_, out_h = h_ / b_, out_w = w_ / b_;
    for (int64_t n = 0; n < n_; ++n)
      for (int64_t oc = 0; oc < out_c; ++oc)
        for (int64_t oh = 0; oh < out_h; ++oh)
          for (int64_t ow = 0; ow < out_w; ++ow) {
            const int64_t block = oc / c_, c = oc % c_, i = block / b_, j = block % b_;
            const int64_t src = ((n * c_ + c) * h_ + oh * b_ + i) * w_ + ow * b_ + j;
            const int64_t dst = ((n * out_c + oc) * out_h + oh) * out_w + ow;
            std::memcpy(y + dst * esize_, x + src * esize_, esize_);
          }
  }

 private:
  int64_t n_ = 0, c_ = 0, h_ = 0, w_ = 0, b_ = 1;
  size_t esize_ = 4;
};

}  // namespace

ORKNN_REGISTER_KERNEL(DepthToSpace, "ref", 0, nullptr, DepthToSpaceRef);
ORKNN_REGISTER_KERNEL(SpaceToDepth, "ref", 0, nullptr, SpaceToDepthRef);

}  // namespace orknn
