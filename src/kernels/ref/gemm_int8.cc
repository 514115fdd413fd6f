// Reference quantized Gemm and MatMul (docs/numerics.md, "Quantized (INT8) models").
//
// Gemm (transA = 0, alpha = beta = 1; B per tensor or per output column j):
//   acc[i, j] = C[i, j] + sum_k (a[i, k] - zp_a) * B(k, j)               (int32, exact)
// MatMul (numpy.matmul: 1-D operands, batch broadcasting), B constant weights (zero point 0, per
// tensor or per last-axis column j) or a second activation (per tensor):
//   acc[i, j] = sum_k (a[i, k] - zp_a) * (b[k, j] - zp_b)
// then y = sat8(rne(float(acc) * M[j]) + zp_y), M[j] = (s_a * s_b[j]) / s_y (float32, at prepare),
// clamped by a fused Relu/Clip (kernels/ref/int8_compute.h). C is the int32 bias, broadcast to
// [M, N] as in the float op. Integer sums are exact in any order; infer guarantees that |acc| fits
// in int32 (accumulated in int64 all the same, so no sum is ever undefined behaviour).
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/ref/matrix_product.h"

namespace orknn {
namespace {

// The loops and geometry are the float kernels' (kernels/ref/matrix_product.h).
class GemmInt8Ref : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    shape_ = read_gemm_shape(ctx);  // transA = 0 (infer)
    const QuantScalar qa = per_tensor(ctx.in_tensor(0));
    zp_a_ = qa.zp;
    out_ = int8_output(qa.scale, ctx.in_tensor(1).quant, ctx.out_tensor(0), ctx.node->attrs, shape_.mat.n);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int32_t* c = shape_.has_c ? ctx.in<int32_t>(2) : nullptr;
    matrix_product(
        shape_.mat, ctx.in<int8_t>(0), ctx.in<int8_t>(1), ctx.out<int8_t>(0),
        [&](int64_t i, int64_t j) -> int64_t { return c ? c[shape_.c_index(i, j)] : 0; },
        [this](int64_t& acc, int32_t a, int32_t b) { acc += (a - zp_a_) * b; },
        [this](int64_t, int64_t j, int64_t acc) { return out_(acc, j); });
  }

 private:
  GemmShape shape_;
  int32_t zp_a_ = 0;
  Int8Output out_;
};

class MatMulInt8Ref : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Tensor& bt = ctx.in_tensor(1);
    shape_ = read_matmul_shape(ctx);
    const QuantScalar qa = per_tensor(ctx.in_tensor(0));
    zp_a_ = qa.zp;
    // Weights have zero point 0; a second activation has one zero point.
    zp_b_ = bt.quant.zero_point.size() == 1 ? bt.quant.zero_point[0] : 0;
    out_ = int8_output(qa.scale, bt.quant, ctx.out_tensor(0), ctx.node->attrs, shape_.mat.n);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* a = ctx.in<int8_t>(0);
    const int8_t* b = ctx.in<int8_t>(1);
    int8_t* y = ctx.out<int8_t>(0);
    shape_.for_each_batch([&](int64_t a_offset, int64_t b_offset, int64_t y_offset) {
      matrix_product(
          shape_.mat, a + a_offset, b + b_offset, y + y_offset, [](int64_t, int64_t) -> int64_t { return 0; },
          [this](int64_t& acc, int32_t av, int32_t bv) { acc += (av - zp_a_) * (bv - zp_b_); },
          [this](int64_t, int64_t j, int64_t acc) { return out_(acc, j); });
    });
  }

 private:
  MatMulShape shape_;
  int32_t zp_a_ = 0, zp_b_ = 0;
  Int8Output out_;
};

}  // namespace

ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Gemm, GemmInt8Ref);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(MatMul, MatMulInt8Ref);

}  // namespace orknn
