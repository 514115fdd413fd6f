// Reference Gemm and MatMul (float32).
//
// Numerics: each output element accumulates A(m, k) * B(k, n) in a float32 accumulator starting
// at 0, k ascending. Gemm then computes alpha * acc + beta * C(m, n) (the beta term only when C
// is present); both ops apply the fused activation last.
#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/matrix_product.h"

namespace orknn {
namespace {

// The loops and geometry are kernels/ref/matrix_product.h's, shared with gemm_int8.cc.
class GemmRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Attrs& at = ctx.node->attrs;
    shape_ = read_gemm_shape(ctx);
    alpha_ = at.get_float("alpha", 1.f);
    beta_ = at.get_float("beta", 1.f);
    act_ = read_fused_act(at);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* c = shape_.has_c ? ctx.in<float>(2) : nullptr;
    matrix_product(
        shape_.mat, ctx.in<float>(0), ctx.in<float>(1), ctx.out<float>(0), [](int64_t, int64_t) { return 0.f; },
        [](float& acc, float a, float b) { acc += a * b; },
        [&](int64_t i, int64_t j, float acc) {
          float v = alpha_ * acc;
          if (c) v += beta_ * c[shape_.c_index(i, j)];
          return act_(v);
        });
  }

 private:
  GemmShape shape_;
  float alpha_ = 1.f, beta_ = 1.f;
  FusedActivation act_;
};

class MatMulRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    shape_ = read_matmul_shape(ctx);
    act_ = read_fused_act(ctx.node->attrs);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* a = ctx.in<float>(0);
    const float* b = ctx.in<float>(1);
    float* y = ctx.out<float>(0);
    shape_.for_each_batch([&](int64_t a_offset, int64_t b_offset, int64_t y_offset) {
      matrix_product(
          shape_.mat, a + a_offset, b + b_offset, y + y_offset, [](int64_t, int64_t) { return 0.f; },
          [](float& acc, float av, float bv) { acc += av * bv; },
          [&](int64_t, int64_t, float acc) { return act_(acc); });
    });
  }

 private:
  MatMulShape shape_;
  FusedActivation act_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Gemm, "ref", kPriorityReference, nullptr, GemmRef);
ORKNN_REGISTER_KERNEL(MatMul, "ref", kPriorityReference, nullptr, MatMulRef);

}  // namespace orknn
