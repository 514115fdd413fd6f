// Softmax and LogSoftmax with opset-13 semantics: normalised along one axis.
//
// Normalised form: "axis" explicit and non-negative. (Opsets < 13 flatten the input to 2-D at
// `axis`; the ONNX importer rewrites those nodes, they never reach this definition.)
#include "graph/ir.h"
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

Status infer_softmax_like(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  if (n.inputs.size() != 1 || n.inputs[0] < 0) return NODE_ERR(n, "expects 1 input, got %zu", n.inputs.size());
  if (n.outputs.size() != 1 || n.outputs[0] < 0) return NODE_ERR(n, "expects 1 output, got %zu", n.outputs.size());
  const Tensor& x = g.tensor(n.inputs[0]);
  if (x.dtype != DType::kF32) return NODE_ERR(n, "input must be float32, got %s", dtype_name(x.dtype));
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank < 1) return NODE_ERR(n, "input must have rank >= 1");
  int64_t axis = n.attrs.get_int("axis", -1);
  if (axis < -rank || axis >= rank) return NODE_ERR(n, "axis %lld out of range for rank %lld", (long long)axis, (long long)rank);
  if (axis < 0) axis += rank;
  n.attrs.set_int("axis", axis);
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = x.shape;
  y.dtype = DType::kF32;
  return Status::Ok();
}

}  // namespace

Status infer_Softmax(Graph& g, Node& n) { return infer_softmax_like(g, n); }
Status infer_LogSoftmax(Graph& g, Node& n) { return infer_softmax_like(g, n); }

}  // namespace orknn
