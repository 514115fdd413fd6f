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

namespace orknn {
namespace {

class GemmInt8Ref : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Attrs& at = ctx.node->attrs;
    trans_b_ = at.get_int("transB", 0) != 0;
    m_ = ctx.out_tensor(0).shape[0];
    n_ = ctx.out_tensor(0).shape[1];
    k_ = ctx.in_tensor(0).shape[1];  // transA = 0
    has_c_ = ctx.has_input(2);
    if (has_c_) {
      // C is [M|1, N|1], [N|1] or a scalar: a dim of 1 is broadcast (stride 0).
      const Shape& c = ctx.in_tensor(2).shape;
      const int64_t c_rows = c.size() == 2 ? c[0] : 1;
      const int64_t c_cols = c.empty() ? 1 : c.back();
      c_row_stride_ = c_rows == 1 ? 0 : c_cols;
      c_col_stride_ = c_cols == 1 ? 0 : 1;
    }
    const QuantScalar qa = per_tensor(ctx.in_tensor(0)), qy = per_tensor(ctx.out_tensor(0));
    zp_a_ = qa.zp;
    zp_y_ = qy.zp;
    mult_ = requant_multipliers(qa.scale, ctx.in_tensor(1).quant, qy.scale, n_);
    clamp_ = int8_clamp_of_fused_act(at, qy.scale, qy.zp);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* a = ctx.in<int8_t>(0);
    const int8_t* b = ctx.in<int8_t>(1);
    const int32_t* c = has_c_ ? ctx.in<int32_t>(2) : nullptr;
    int8_t* y = ctx.out<int8_t>(0);
    for (int64_t i = 0; i < m_; ++i) {
      for (int64_t j = 0; j < n_; ++j) {
        int64_t acc = c ? c[i * c_row_stride_ + j * c_col_stride_] : 0;
        for (int64_t p = 0; p < k_; ++p) {
          const int32_t av = a[i * k_ + p];
          const int32_t bv = trans_b_ ? b[j * k_ + p] : b[p * n_ + j];
          acc += (av - zp_a_) * bv;
        }
        y[i * n_ + j] = clamp_(requantize(static_cast<int32_t>(acc), mult_[static_cast<size_t>(j)], zp_y_));
      }
    }
  }

 private:
  bool trans_b_ = false, has_c_ = false;
  int64_t m_ = 0, n_ = 0, k_ = 0, c_row_stride_ = 0, c_col_stride_ = 0;
  int32_t zp_a_ = 0, zp_y_ = 0;
  std::vector<float> mult_;
  Int8Clamp clamp_;
};

// numpy.matmul: a 1-D A is a [1, K] row, a 1-D B a [K, 1] column; batch dims broadcast.
class MatMulInt8Ref : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Tensor& at = ctx.in_tensor(0);
    const Tensor& bt = ctx.in_tensor(1);
    const Shape& a = at.shape;
    const Shape& b = bt.shape;
    k_ = a.back();
    m_ = a.size() >= 2 ? a[a.size() - 2] : 1;
    n_ = b.size() >= 2 ? b.back() : 1;
    const size_t a_batch = a.size() > 2 ? a.size() - 2 : 0, b_batch = b.size() > 2 ? b.size() - 2 : 0;
    const size_t rank = a_batch > b_batch ? a_batch : b_batch;
    a_batch_dims_.assign(rank, 1);
    b_batch_dims_.assign(rank, 1);
    out_batch_dims_.assign(rank, 1);
    for (size_t i = 0; i < rank; ++i) {
      if (i + a_batch >= rank) a_batch_dims_[i] = a[i + a_batch - rank];
      if (i + b_batch >= rank) b_batch_dims_[i] = b[i + b_batch - rank];
      out_batch_dims_[i] = a_batch_dims_[i] == 1 ? b_batch_dims_[i] : a_batch_dims_[i];
    }
    batches_ = 1;
    for (int64_t d : out_batch_dims_) batches_ *= d;
    const QuantScalar qa = per_tensor(at), qy = per_tensor(ctx.out_tensor(0));
    zp_a_ = qa.zp;
    // Weights have zero point 0; a second activation has one zero point.
    zp_b_ = bt.quant.zero_point.size() == 1 ? bt.quant.zero_point[0] : 0;
    zp_y_ = qy.zp;
    mult_ = requant_multipliers(qa.scale, bt.quant, qy.scale, n_);
    clamp_ = int8_clamp_of_fused_act(ctx.node->attrs, qy.scale, qy.zp);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* a = ctx.in<int8_t>(0);
    const int8_t* b = ctx.in<int8_t>(1);
    int8_t* y = ctx.out<int8_t>(0);
    for (int64_t batch = 0; batch < batches_; ++batch) {
      // Matrix index inside A and B of this output batch (broadcast dims contribute 0).
      int64_t rem = batch, a_index = 0, b_index = 0, a_stride = 1, b_stride = 1;
      for (size_t d = out_batch_dims_.size(); d-- > 0;) {
        const int64_t coord = rem % out_batch_dims_[d];
        rem /= out_batch_dims_[d];
        if (a_batch_dims_[d] != 1) a_index += coord * a_stride;
        if (b_batch_dims_[d] != 1) b_index += coord * b_stride;
        a_stride *= a_batch_dims_[d];
        b_stride *= b_batch_dims_[d];
      }
      const int8_t* am = a + a_index * m_ * k_;
      const int8_t* bm = b + b_index * k_ * n_;
      int8_t* ym = y + batch * m_ * n_;
      for (int64_t i = 0; i < m_; ++i) {
        for (int64_t j = 0; j < n_; ++j) {
          int64_t acc = 0;
          for (int64_t p = 0; p < k_; ++p) {
            const int32_t av = am[i * k_ + p], bv = bm[p * n_ + j];
            acc += (av - zp_a_) * (bv - zp_b_);
          }
          ym[i * n_ + j] = clamp_(requantize(static_cast<int32_t>(acc), mult_[static_cast<size_t>(j)], zp_y_));
        }
      }
    }
  }

 private:
  int64_t m_ = 0, n_ = 0, k_ = 0, batches_ = 1;
  std::vector<int64_t> a_batch_dims_, b_batch_dims_, out_batch_dims_;
  int32_t zp_a_ = 0, zp_b_ = 0, zp_y_ = 0;
  std::vector<float> mult_;
  Int8Clamp clamp_;
};

}  // namespace

ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Gemm, GemmInt8Ref);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(MatMul, MatMulInt8Ref);

}  // namespace orknn
