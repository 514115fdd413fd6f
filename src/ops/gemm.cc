// Gemm and MatMul: validation, attribute normalisation and shape inference.
//
// Gemm normalised form: "transA", "transB" (0/1), "alpha", "beta" explicit; C (optional) is
// unidirectionally broadcastable to [M, N]. MatMul follows numpy.matmul (1-D operands, batch
// broadcasting). Both accept the fused activation attributes.
//
// Quantized forms (docs/numerics.md, "Quantized (INT8) models"), output quantized per tensor and
// fused activation absent, Relu or Clip:
//  - Gemm: A an int8 activation (per tensor), transA = 0, B int8 constant symmetric weights per
//    tensor or per output channel (axis 1 with transB = 0, axis 0 with transB = 1), C an optional
//    int32 constant, alpha = beta = 1.
//  - MatMul: A an int8 activation; B either int8 constant symmetric weights per tensor or per
//    output channel (the last axis, rank >= 2), or a second int8 activation (per tensor).
#include <vector>

#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {

namespace {

// The quantized Gemm (see the file comment); `k` is the reduction length.
Status check_quantized_gemm(const Graph& g, const Node& n, int64_t trans_a, int64_t trans_b, int64_t k) {
  if (trans_a != 0) return ORKNN_NODE_ERR(n, "quantized Gemm needs transA = 0, got %lld", (long long)trans_a);
  const float alpha = n.attrs.get_float("alpha", 1.f), beta = n.attrs.get_float("beta", 1.f);
  if (alpha != 1.f || (beta != 1.f && has_input(n, 2)))
    return ORKNN_NODE_ERR(n, "quantized Gemm needs alpha = beta = 1 (folded into the weights and bias), got %g and %g",
                          alpha, beta);
  ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, 0));
  ORKNN_RETURN_IF_ERROR(check_q8_weights(g, n, 1, "B", trans_b ? 0 : 1,
                                         "Gemm weights are quantized per output channel along axis 1 (transB = 0) "
                                         "or 0 (transB = 1)"));
  int64_t max_bias = 0;
  ORKNN_RETURN_IF_ERROR(check_i32_bias(g, n, 2, "C", &max_bias));
  ORKNN_RETURN_IF_ERROR(check_q8_output(g, n, 0));
  ORKNN_RETURN_IF_ERROR(check_q8_fused_act(n));
  return check_accumulator_range(n, k, kMaxActWeightProduct, max_bias);
}

// The quantized MatMul (see the file comment); `k` is the reduction length.
Status check_quantized_matmul(const Graph& g, const Node& n, int64_t k) {
  ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, 0));
  const Tensor& b = *g.input(n, 1);
  int64_t max_product = kMaxActActProduct;
  if (b.is_const()) {
    const int64_t last_axis = b.shape.size() >= 2 ? static_cast<int64_t>(b.shape.size()) - 1 : -1;
    ORKNN_RETURN_IF_ERROR(check_q8_weights(
        g, n, 1, "B", last_axis, "MatMul weights are quantized per output channel along the last axis (rank >= 2)"));
    max_product = kMaxActWeightProduct;
  } else {
    ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, 1));
  }
  ORKNN_RETURN_IF_ERROR(check_q8_output(g, n, 0));
  ORKNN_RETURN_IF_ERROR(check_q8_fused_act(n));
  return check_accumulator_range(n, k, max_product, 0);
}

}  // namespace

Status infer_Gemm(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 2, 3, 1, 1, 2));
  const bool quantized = node_has_quant(g, n);
  if (!quantized) {
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 0, "A"));
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 1, "B"));
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 2, "C"));
  }
  const Shape& a = g.tensor(n.inputs[0]).shape;
  const Shape& b = g.tensor(n.inputs[1]).shape;
  if (a.size() != 2 || b.size() != 2)
    return ORKNN_NODE_ERR(n, "A and B must be 2-D, got %s and %s", shape_str(a).c_str(), shape_str(b).c_str());
  const int64_t trans_a = n.attrs.get_int("transA", 0), trans_b = n.attrs.get_int("transB", 0);
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1))
    return ORKNN_NODE_ERR(n, "transA/transB must be 0 or 1, got %lld/%lld", (long long)trans_a, (long long)trans_b);
  const int64_t m = trans_a ? a[1] : a[0], k = trans_a ? a[0] : a[1];
  const int64_t kb = trans_b ? b[1] : b[0], nn = trans_b ? b[0] : b[1];
  if (k != kb)
    return ORKNN_NODE_ERR(n, "inner dims differ: A %s (transA=%lld) and B %s (transB=%lld)", shape_str(a).c_str(),
                          (long long)trans_a, shape_str(b).c_str(), (long long)trans_b);
  const Tensor* c = g.input(n, 2);
  if (c && !broadcasts_to(c->shape, {m, nn}))
    return ORKNN_NODE_ERR(n, "C %s is not broadcastable to [%lld,%lld]", shape_str(c->shape).c_str(), (long long)m,
                          (long long)nn);
  if (quantized) ORKNN_RETURN_IF_ERROR(check_quantized_gemm(g, n, trans_a, trans_b, k));
  ORKNN_RETURN_IF_ERROR(normalise_fused_act(n));
  n.attrs.set_int("transA", trans_a);
  n.attrs.set_int("transB", trans_b);
  n.attrs.set_float("alpha", n.attrs.get_float("alpha", 1.f));
  n.attrs.set_float("beta", n.attrs.get_float("beta", 1.f));
  n.attrs.erase("broadcast");  // opset < 7: broadcasting is always on since
  return set_output(g, n, 0, {m, nn}, output_dtype(g, n, 0, DType::kF32));
}

Status infer_MatMul(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 2, 2, 1, 1, 2));
  const bool quantized = node_has_quant(g, n);
  if (!quantized) {
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 0, "A"));
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 1, "B"));
  }
  const Shape& a = g.tensor(n.inputs[0]).shape;
  const Shape& b = g.tensor(n.inputs[1]).shape;
  if (a.empty() || b.empty())
    return ORKNN_NODE_ERR(n, "operands must have rank >= 1, got %s and %s", shape_str(a).c_str(), shape_str(b).c_str());
  // numpy: a 1-D A is a row [1, K] and a 1-D B a column [K, 1]; the added dim is dropped again.
  const int64_t k = a.back();
  const int64_t kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (k != kb) return ORKNN_NODE_ERR(n, "inner dims differ: A %s, B %s", shape_str(a).c_str(), shape_str(b).c_str());
  const size_t a_batch = a.size() > 2 ? a.size() - 2 : 0, b_batch = b.size() > 2 ? b.size() - 2 : 0;
  const size_t batch_rank = a_batch > b_batch ? a_batch : b_batch;
  Shape out;
  for (size_t i = 0; i < batch_rank; ++i) {
    // Right-aligned bidirectional broadcast of the batch dims.
    const int64_t da = i + a_batch >= batch_rank ? a[i + a_batch - batch_rank] : 1;
    const int64_t db = i + b_batch >= batch_rank ? b[i + b_batch - batch_rank] : 1;
    if (da != db && da != 1 && db != 1)
      return ORKNN_NODE_ERR(n, "batch dims of A %s and B %s do not broadcast", shape_str(a).c_str(),
                            shape_str(b).c_str());
    out.push_back(da == 1 ? db : da);
  }
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  if (quantized) ORKNN_RETURN_IF_ERROR(check_quantized_matmul(g, n, k));
  ORKNN_RETURN_IF_ERROR(normalise_fused_act(n));
  return set_output(g, n, 0, out, output_dtype(g, n, 0, DType::kF32));
}

}  // namespace orknn
