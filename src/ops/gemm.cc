// Gemm and MatMul: validation, attribute normalisation and shape inference.
//
// Gemm normalised form: "transA", "transB" (0/1), "alpha", "beta" explicit; C (optional) is
// unidirectionally broadcastable to [M, N]. MatMul follows numpy.matmul (1-D operands, batch
// broadcasting). Both accept the fused activation attributes.
#include <limits>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "kernels/ref/activation.h"
#include "ops/op.h"

namespace orknn {
namespace {

#define NODE_ERR(n, fmt, ...) \
  ORKNN_ERR(kInvalidModel, "%s node '%s': " fmt, op_name((n).op), (n).name.c_str(), ##__VA_ARGS__)

// Every tensor id of the node must exist (-1 marks an absent optional input or output).
Status check_tensor_ids(const Graph& g, const Node& n) {
  const int count = static_cast<int>(g.tensors.size());
  for (int id : n.inputs)
    if (id < -1 || id >= count) return NODE_ERR(n, "input refers to tensor %d, which does not exist", id);
  for (int id : n.outputs)
    if (id < -1 || id >= count) return NODE_ERR(n, "output refers to tensor %d, which does not exist", id);
  return Status::Ok();
}

Status require_f32(const Graph& g, const Node& n, size_t i, const char* what) {
  const Tensor* t = g.input(n, i);
  if (t && t->dtype != DType::kF32)
    return NODE_ERR(n, "input %s must be float32, got %s", what, dtype_name(t->dtype));
  return Status::Ok();
}

// Checks "fused_act" and writes its parameters explicitly (ONNX defaults of the fused op).
Status normalise_fused_act(Node& n) {
  if (!n.attrs.has("fused_act")) return Status::Ok();
  std::string act = n.attrs.get_string("fused_act", "");
  if (act.empty()) {
    n.attrs.erase("fused_act");
    return Status::Ok();
  }
  FusedAct a = parse_fused_act(act);
  if (a == FusedAct::kNone) return NODE_ERR(n, "unsupported fused_act '%s'", act.c_str());
  float alpha = 0.f, beta = 0.f;
  switch (a) {
    case FusedAct::kLeakyRelu: alpha = 0.01f; break;
    case FusedAct::kClip: alpha = -std::numeric_limits<float>::infinity(); beta = std::numeric_limits<float>::infinity(); break;
    case FusedAct::kHardSigmoid: alpha = 0.2f; beta = 0.5f; break;
    default: break;
  }
  n.attrs.set_float("fused_alpha", n.attrs.get_float("fused_alpha", alpha));
  n.attrs.set_float("fused_beta", n.attrs.get_float("fused_beta", beta));
  return Status::Ok();
}

}  // namespace

Status infer_Gemm(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  if (n.inputs.size() < 2 || n.inputs.size() > 3)
    return NODE_ERR(n, "expects 2 or 3 inputs (A, B[, C]), got %zu", n.inputs.size());
  if (n.inputs[0] < 0 || n.inputs[1] < 0) return NODE_ERR(n, "inputs A and B are required");
  if (n.outputs.size() != 1 || n.outputs[0] < 0) return NODE_ERR(n, "expects exactly 1 output, got %zu", n.outputs.size());
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 0, "A"));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 1, "B"));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 2, "C"));
  const Shape& a = g.tensor(n.inputs[0]).shape;
  const Shape& b = g.tensor(n.inputs[1]).shape;
  if (a.size() != 2 || b.size() != 2)
    return NODE_ERR(n, "A and B must be 2-D, got %s and %s", shape_str(a).c_str(), shape_str(b).c_str());
  const int64_t trans_a = n.attrs.get_int("transA", 0), trans_b = n.attrs.get_int("transB", 0);
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1))
    return NODE_ERR(n, "transA/transB must be 0 or 1, got %lld/%lld", (long long)trans_a, (long long)trans_b);
  const int64_t m = trans_a ? a[1] : a[0], k = trans_a ? a[0] : a[1];
  const int64_t kb = trans_b ? b[1] : b[0], nn = trans_b ? b[0] : b[1];
  if (k != kb)
    return NODE_ERR(n, "inner dims differ: A %s (transA=%lld) and B %s (transB=%lld)", shape_str(a).c_str(),
                    (long long)trans_a, shape_str(b).c_str(), (long long)trans_b);
  if (const Tensor* c = g.input(n, 2)) {
    // Unidirectional broadcast to [M, N]: right-aligned, each dim 1 or equal.
    const Shape& cs = c->shape;
    const Shape target = {m, nn};
    bool ok = cs.size() <= 2;
    for (size_t i = 0; ok && i < cs.size(); ++i) {
      const int64_t d = cs[cs.size() - 1 - i], t = target[1 - i];
      ok = d == 1 || d == t;
    }
    if (!ok) return NODE_ERR(n, "C %s is not broadcastable to [%lld,%lld]", shape_str(cs).c_str(), (long long)m, (long long)nn);
  }
  ORKNN_RETURN_IF_ERROR(normalise_fused_act(n));
  n.attrs.set_int("transA", trans_a);
  n.attrs.set_int("transB", trans_b);
  n.attrs.set_float("alpha", n.attrs.get_float("alpha", 1.f));
  n.attrs.set_float("beta", n.attrs.get_float("beta", 1.f));
  n.attrs.erase("broadcast");  // opset < 7: broadcasting is always on since
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = {m, nn};
  y.dtype = DType::kF32;
  return Status::Ok();
}

Status infer_MatMul(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  if (n.inputs.size() != 2 || n.inputs[0] < 0 || n.inputs[1] < 0)
    return NODE_ERR(n, "expects 2 inputs (A, B), got %zu", n.inputs.size());
  if (n.outputs.size() != 1 || n.outputs[0] < 0) return NODE_ERR(n, "expects exactly 1 output, got %zu", n.outputs.size());
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 0, "A"));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 1, "B"));
  const Shape& a = g.tensor(n.inputs[0]).shape;
  const Shape& b = g.tensor(n.inputs[1]).shape;
  if (a.empty() || b.empty()) return NODE_ERR(n, "operands must have rank >= 1, got %s and %s", shape_str(a).c_str(), shape_str(b).c_str());
  // numpy: a 1-D A is a row [1, K] and a 1-D B a column [K, 1]; the added dim is dropped again.
  const int64_t k = a.back();
  const int64_t kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (k != kb) return NODE_ERR(n, "inner dims differ: A %s, B %s", shape_str(a).c_str(), shape_str(b).c_str());
  const size_t a_batch = a.size() > 2 ? a.size() - 2 : 0, b_batch = b.size() > 2 ? b.size() - 2 : 0;
  const size_t batch_rank = a_batch > b_batch ? a_batch : b_batch;
  Shape out;
  for (size_t i = 0; i < batch_rank; ++i) {
    // Right-aligned bidirectional broadcast of the batch dims.
    const int64_t da = i + a_batch >= batch_rank ? a[i + a_batch - batch_rank] : 1;
    const int64_t db = i + b_batch >= batch_rank ? b[i + b_batch - batch_rank] : 1;
    if (da != db && da != 1 && db != 1)
      return NODE_ERR(n, "batch dims of A %s and B %s do not broadcast", shape_str(a).c_str(), shape_str(b).c_str());
    out.push_back(da == 1 ? db : da);
  }
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  ORKNN_RETURN_IF_ERROR(normalise_fused_act(n));
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = out;
  y.dtype = DType::kF32;
  return Status::Ok();
}

}  // namespace orknn
