// The fully-connected form of a Gemm or MatMul node, shared by the backends' INT8 kernels for it:
// rows M times a constant 2-D B.
//   Gemm: Y = A * B' + C with transA = 0, alpha = 1 (beta = 1 when C is present), A [M, K], B
//         [K, N] (transB = 0) or [N, K] (transB = 1), C absent, [N] or [1, N] (one bias per column).
//   MatMul: A of any rank >= 1 times a 2-D B [K, N]; A's leading dims fold into the rows.
#pragma once
#include <cstdint>

#include "graph/ir.h"

namespace orknn {

struct FcShape {
  int64_t m = 0, k = 0, n = 0;
  bool trans_b = false;  // B bytes are [N, K]
  bool ok = false;       // the node has this form
};

inline FcShape fc_shape(const Graph& g, const Node& n) {
  FcShape p;
  if (n.outputs.size() != 1 || n.outputs[0] < 0) return p;
  const Tensor* a = g.input(n, 0);
  const Tensor* b = g.input(n, 1);
  if (!a || !b || b->shape.size() != 2) return p;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (n.op == OpId::Gemm) {
    if (n.inputs.size() < 2 || n.inputs.size() > 3 || a->shape.size() != 2 || y.shape.size() != 2) return p;
    if (n.attrs.get_int("transA", 0) != 0) return p;
    if (n.attrs.get_float("alpha", 1.f) != 1.f) return p;
    if (g.input(n, 2) && n.attrs.get_float("beta", 1.f) != 1.f) return p;
    p.trans_b = n.attrs.get_int("transB", 0) != 0;
    p.m = a->shape[0];
    p.k = a->shape[1];
    const int64_t kb = p.trans_b ? b->shape[1] : b->shape[0];
    p.n = p.trans_b ? b->shape[0] : b->shape[1];
    if (kb != p.k || y.shape[0] != p.m || y.shape[1] != p.n) return p;
    const Tensor* c = g.input(n, 2);
    if (c && !(c->shape == Shape{p.n} || c->shape == Shape{1, p.n})) return p;
  } else if (n.op == OpId::MatMul) {
    if (n.inputs.size() != 2 || a->shape.empty()) return p;
    p.k = a->shape.back();
    if (b->shape[0] != p.k) return p;
    p.n = b->shape[1];
    p.m = p.k > 0 ? a->numel() / p.k : 0;
    if (y.numel() != p.m * p.n) return p;
  } else {
    return p;
  }
  p.ok = p.m > 0 && p.k > 0 && p.n > 0;
  return p;
}

}  // namespace orknn
