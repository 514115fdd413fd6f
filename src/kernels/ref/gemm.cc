// Reference Gemm and MatMul (float32).
//
// Numerics: each output element accumulates A(m, k) * B(k, n) in a float32 accumulator starting
// at 0, k ascending. Gemm then computes alpha * acc + beta * C(m, n) (the beta term only when C
// is present); both ops apply the fused activation last.
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/ref/activation.h"

namespace orknn {
namespace {

class GemmRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Attrs& at = ctx.node->attrs;
    const Shape& a = ctx.in_tensor(0).shape;
    trans_a_ = at.get_int("transA", 0) != 0;
    trans_b_ = at.get_int("transB", 0) != 0;
    alpha_ = at.get_float("alpha", 1.f);
    beta_ = at.get_float("beta", 1.f);
    m_ = ctx.out_tensor(0).shape[0];
    n_ = ctx.out_tensor(0).shape[1];
    k_ = trans_a_ ? a[0] : a[1];
    has_c_ = ctx.has_input(2);
    if (has_c_) {
      // C is [M|1, N|1], [N|1] or a scalar: a dim of 1 is broadcast (stride 0).
      const Shape& c = ctx.in_tensor(2).shape;
      const int64_t c_rows = c.size() == 2 ? c[0] : 1;
      const int64_t c_cols = c.empty() ? 1 : c.back();
      c_row_stride_ = c_rows == 1 ? 0 : c_cols;
      c_col_stride_ = c_cols == 1 ? 0 : 1;
    }
    act_ = read_fused_act(at);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* a = ctx.in<float>(0);
    const float* b = ctx.in<float>(1);
    const float* c = has_c_ ? ctx.in<float>(2) : nullptr;
    float* y = ctx.out<float>(0);
    for (int64_t i = 0; i < m_; ++i) {
      for (int64_t j = 0; j < n_; ++j) {
        float acc = 0.f;
        for (int64_t p = 0; p < k_; ++p) {
          const float av = trans_a_ ? a[p * m_ + i] : a[i * k_ + p];
          const float bv = trans_b_ ? b[j * k_ + p] : b[p * n_ + j];
          acc += av * bv;
        }
        float v = alpha_ * acc;
        if (c) v += beta_ * c[i * c_row_stride_ + j * c_col_stride_];
        y[i * n_ + j] = act_(v);
      }
    }
  }

 private:
  bool trans_a_ = false, trans_b_ = false, has_c_ = false;
  float alpha_ = 1.f, beta_ = 1.f;
  int64_t m_ = 0, n_ = 0, k_ = 0, c_row_stride_ = 0, c_col_stride_ = 0;
  FusedActivation act_;
};

// numpy.matmul: a 1-D A is a [1, K] row, a 1-D B a [K, 1] column; batch dims broadcast.
class MatMulRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& a = ctx.in_tensor(0).shape;
    const Shape& b = ctx.in_tensor(1).shape;
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
    act_ = read_fused_act(ctx.node->attrs);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* a = ctx.in<float>(0);
    const float* b = ctx.in<float>(1);
    float* y = ctx.out<float>(0);
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
      const float* am = a + a_index * m_ * k_;
      const float* bm = b + b_index * k_ * n_;
      float* ym = y + batch * m_ * n_;
      for (int64_t i = 0; i < m_; ++i) {
        for (int64_t j = 0; j < n_; ++j) {
          float acc = 0.f;
          for (int64_t p = 0; p < k_; ++p) acc += am[i * k_ + p] * bm[p * n_ + j];
          ym[i * n_ + j] = act_(acc);
        }
      }
    }
  }

 private:
  int64_t m_ = 0, n_ = 0, k_ = 0, batches_ = 1;
  std::vector<int64_t> a_batch_dims_, b_batch_dims_, out_batch_dims_;
  FusedActivation act_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Gemm, "ref", 0, nullptr, GemmRef);
ORKNN_REGISTER_KERNEL(MatMul, "ref", 0, nullptr, MatMulRef);

}  // namespace orknn
