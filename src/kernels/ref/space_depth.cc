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
#include "kernels/ref/quant_passthrough.h"

namespace orknn {
namespace {

// Both ops move elements between a "space" tensor [N, C, H*b, W*b] and a "depth" tensor
// [N, C*b*b, H, W]: space element (n, c, h*b + i, w*b + j) is depth element (n, k, h, w) with
// k = (i*b + j) * C + c (DCR, and SpaceToDepth) or c*b*b + i*b + j (CRD). DepthToSpace copies
// depth -> space, SpaceToDepth space -> depth.
template <bool kToSpace>
class BlockMoveRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& space = kToSpace ? ctx.out_tensor(0).shape : ctx.in_tensor(0).shape;
    const Shape& depth = kToSpace ? ctx.in_tensor(0).shape : ctx.out_tensor(0).shape;
    n_ = space[0];
    c_ = space[1];
    h_ = depth[2];
    w_ = depth[3];
    b_ = ctx.node->attrs.get_int("blocksize", 1);
    crd_ = kToSpace && ctx.node->attrs.get_string("mode", "DCR") == "CRD";
    esize_ = dtype_size(ctx.in_tensor(0).dtype);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const uint8_t* x = ctx.in<uint8_t>(0);
    uint8_t* y = ctx.out<uint8_t>(0);
    const int64_t depth_c = c_ * b_ * b_, space_h = h_ * b_, space_w = w_ * b_;
    for (int64_t n = 0; n < n_; ++n)
      for (int64_t c = 0; c < c_; ++c)
        for (int64_t sh = 0; sh < space_h; ++sh)
          for (int64_t sw = 0; sw < space_w; ++sw) {
            const int64_t i = sh % b_, j = sw % b_, h = sh / b_, w = sw / b_;
            const int64_t k = crd_ ? c * b_ * b_ + i * b_ + j : (i * b_ + j) * c_ + c;
            const int64_t depth = ((n * depth_c + k) * h_ + h) * w_ + w;
            const int64_t space = ((n * c_ + c) * space_h + sh) * space_w + sw;
            const int64_t src = kToSpace ? depth : space, dst = kToSpace ? space : depth;
            std::memcpy(y + dst * esize_, x + src * esize_, esize_);
          }
  }

 private:
  int64_t n_ = 0, c_ = 0, h_ = 0, w_ = 0, b_ = 1;  // C, H, W as in the comment above
  bool crd_ = false;
  size_t esize_ = 4;
};

}  // namespace

ORKNN_REGISTER_KERNEL(DepthToSpace, "ref", kPriorityReference, nullptr, BlockMoveRef<true>);
ORKNN_REGISTER_KERNEL(SpaceToDepth, "ref", kPriorityReference, nullptr, BlockMoveRef<false>);
// Quantized int8: the same element moves; the output must carry the input's parameters.
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(DepthToSpace, QuantPassthrough<BlockMoveRef<true>>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(SpaceToDepth, QuantPassthrough<BlockMoveRef<false>>);

}  // namespace orknn
