// Geometry and loops of the reference Gemm and MatMul kernels, shared by the float (gemm.cc) and
// the int8 (gemm_int8.cc) kernels so that they differ only in their arithmetic: what an
// accumulator starts from, how a product is added, and how the result is made.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"

namespace orknn {

// One [M, K] x [K, N] product. A is [M, K] ([K, M] when trans_a), B is [K, N] ([N, K] when
// trans_b); Y is [M, N], row-major.
struct MatrixProductShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
};

// For each output (i, j) in row-major order: acc = start(i, j); mac(acc, A(i, p), B(p, j)) for
// p ascending; y[i * n + j] = finish(i, j, acc).
template <class A, class B, class Out, class Start, class Mac, class Finish>
void matrix_product(const MatrixProductShape& s, const A* a, const B* b, Out* y, Start&& start, Mac&& mac,
                    Finish&& finish) {
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      auto acc = start(i, j);
      for (int64_t p = 0; p < s.k; ++p)
        mac(acc, s.trans_a ? a[p * s.m + i] : a[i * s.k + p], s.trans_b ? b[j * s.k + p] : b[p * s.n + j]);
      y[i * s.n + j] = finish(i, j, acc);
    }
  }
}

// Gemm: Y = A' x B' (+ C). C is [M|1, N|1], [N|1] or a scalar: a dim of 1 is broadcast (stride 0).
struct GemmShape {
  MatrixProductShape mat;
  bool has_c = false;
  int64_t c_row_stride = 0, c_col_stride = 0;

  int64_t c_index(int64_t i, int64_t j) const { return i * c_row_stride + j * c_col_stride; }
};

inline GemmShape read_gemm_shape(const KernelContext& ctx) {
  GemmShape g;
  const Attrs& at = ctx.node->attrs;
  const Shape& a = ctx.in_tensor(0).shape;
  g.mat.trans_a = at.get_int("transA", 0) != 0;
  g.mat.trans_b = at.get_int("transB", 0) != 0;
  g.mat.m = ctx.out_tensor(0).shape[0];
  g.mat.n = ctx.out_tensor(0).shape[1];
  g.mat.k = g.mat.trans_a ? a[0] : a[1];
  g.has_c = ctx.has_input(2);
  if (g.has_c) {
    const Shape& c = ctx.in_tensor(2).shape;
    const int64_t c_rows = c.size() == 2 ? c[0] : 1;
    const int64_t c_cols = c.empty() ? 1 : c.back();
    g.c_row_stride = c_rows == 1 ? 0 : c_cols;
    g.c_col_stride = c_cols == 1 ? 0 : 1;
  }
  return g;
}

// numpy.matmul: a 1-D A is a [1, K] row, a 1-D B a [K, 1] column; batch dims broadcast.
struct MatMulShape {
  MatrixProductShape mat;
  int64_t batches = 1;
  std::vector<int64_t> a_batch_dims, b_batch_dims, out_batch_dims;  // right-aligned to one rank

  // Calls f(a_offset, b_offset, y_offset) for every output batch in order: the element offsets
  // of the A and B matrices it multiplies (broadcast dims contribute 0) and of its Y matrix.
  template <class F>
  void for_each_batch(F&& f) const {
    for (int64_t batch = 0; batch < batches; ++batch) {
      int64_t rem = batch, a_index = 0, b_index = 0, a_stride = 1, b_stride = 1;
      for (size_t d = out_batch_dims.size(); d-- > 0;) {
        const int64_t coord = rem % out_batch_dims[d];
        rem /= out_batch_dims[d];
        if (a_batch_dims[d] != 1) a_index += coord * a_stride;
        if (b_batch_dims[d] != 1) b_index += coord * b_stride;
        a_stride *= a_batch_dims[d];
        b_stride *= b_batch_dims[d];
      }
      f(a_index * mat.m * mat.k, b_index * mat.k * mat.n, batch * mat.m * mat.n);
    }
  }
};

inline MatMulShape read_matmul_shape(const KernelContext& ctx) {
  MatMulShape s;
  const Shape& a = ctx.in_tensor(0).shape;
  const Shape& b = ctx.in_tensor(1).shape;
  s.mat.k = a.back();
  s.mat.m = a.size() >= 2 ? a[a.size() - 2] : 1;
  s.mat.n = b.size() >= 2 ? b.back() : 1;
  const size_t a_batch = a.size() > 2 ? a.size() - 2 : 0, b_batch = b.size() > 2 ? b.size() - 2 : 0;
  const size_t rank = a_batch > b_batch ? a_batch : b_batch;
  s.a_batch_dims.assign(rank, 1);
  s.b_batch_dims.assign(rank, 1);
  s.out_batch_dims.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    if (i + a_batch >= rank) s.a_batch_dims[i] = a[i + a_batch - rank];
    if (i + b_batch >= rank) s.b_batch_dims[i] = b[i + b_batch - rank];
    s.out_batch_dims[i] = s.a_batch_dims[i] == 1 ? s.b_batch_dims[i] : s.a_batch_dims[i];
  }
  s.batches = 1;
  for (int64_t d : s.out_batch_dims) s.batches *= d;
  return s;
}

}  // namespace orknn
