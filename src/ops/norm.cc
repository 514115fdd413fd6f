// LayerNormalization and InstanceNormalization: validation, normalisation, shapes.
//
// LayerNormalization normalised form: "axis" explicit and non-negative, "epsilon", "stash_type"
// = 1. Only output Y is supported (Mean and InvStdDev are training outputs). Scale and B are
// unidirectionally broadcastable to X.shape[axis:].
// InstanceNormalization normalised form: "epsilon" explicit.
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

Status require_f32(const Graph& g, const Node& n, size_t i, const char* what) {
  const Tensor* t = g.input(n, i);
  if (t && t->dtype != DType::kF32)
    return NODE_ERR(n, "input %s must be float32, got %s", what, dtype_name(t->dtype));
  return Status::Ok();
}

// True when `s` broadcasts to `target` in one direction (right-aligned, each dim 1 or equal).
bool broadcasts_to(const Shape& s, const Shape& target) {
  if (s.size() > target.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t d = s[s.size() - 1 - i], t = target[target.size() - 1 - i];
    if (d != 1 && d != t) return false;
  }
  return true;
}

Status read_epsilon(Node& n) {
  const float eps = n.attrs.get_float("epsilon", 1e-5f);
  if (!(eps >= 0.f)) return NODE_ERR(n, "epsilon must be >= 0, got %g", eps);
  n.attrs.set_float("epsilon", eps);
  return Status::Ok();
}

}  // namespace

Status infer_LayerNormalization(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.inputs[0] < 0 || n.inputs[1] < 0)
    return NODE_ERR(n, "expects 2 or 3 inputs (X, Scale[, B]), got %zu", n.inputs.size());
  if (n.outputs.empty() || n.outputs[0] < 0) return NODE_ERR(n, "output Y is required");
  if (n.outputs.size() > 3) return NODE_ERR(n, "expects at most 3 outputs, got %zu", n.outputs.size());
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) return NODE_ERR(n, "outputs Mean and InvStdDev are not supported, only Y");
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 0, "X"));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 1, "Scale"));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 2, "B"));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 1) return NODE_ERR(n, "X must have rank >= 1");
  int64_t axis = n.attrs.get_int("axis", -1);
  if (axis < -rank || axis >= rank) return NODE_ERR(n, "axis %lld out of range for rank %lld", (long long)axis, (long long)rank);
  if (axis < 0) axis += rank;
  if (n.attrs.get_int("stash_type", 1) != 1)
    return NODE_ERR(n, "stash_type %lld is not supported (only 1: float32 statistics)", (long long)n.attrs.get_int("stash_type", 1));
  const Shape normalized(x.begin() + axis, x.end());
  for (size_t i = 1; i < 3; ++i) {
    const Tensor* t = g.input(n, i);
    if (t && !broadcasts_to(t->shape, normalized))
      return NODE_ERR(n, "%s %s does not broadcast to the normalized shape %s", i == 1 ? "Scale" : "B",
                      shape_str(t->shape).c_str(), shape_str(normalized).c_str());
  }
  ORKNN_RETURN_IF_ERROR(read_epsilon(n));
  n.attrs.set_int("axis", axis);
  n.attrs.set_int("stash_type", 1);
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = x;
  y.dtype = DType::kF32;
  return Status::Ok();
}

Status infer_InstanceNormalization(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  if (n.inputs.size() != 3 || n.inputs[0] < 0 || n.inputs[1] < 0 || n.inputs[2] < 0)
    return NODE_ERR(n, "expects 3 inputs (input, scale, B), got %zu", n.inputs.size());
  if (n.outputs.size() != 1 || n.outputs[0] < 0) return NODE_ERR(n, "expects 1 output, got %zu", n.outputs.size());
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 0, "input"));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 1, "scale"));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 2, "B"));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  if (x.size() < 3) return NODE_ERR(n, "input must have rank >= 3 (N, C, spatial...), got %s", shape_str(x).c_str());
  for (size_t i = 1; i < 3; ++i) {
    const Shape& s = g.tensor(n.inputs[i]).shape;
    if (s.size() != 1 || s[0] != x[1])
      return NODE_ERR(n, "%s must have shape [%lld], got %s", i == 1 ? "scale" : "B", (long long)x[1], shape_str(s).c_str());
  }
  ORKNN_RETURN_IF_ERROR(read_epsilon(n));
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = x;
  y.dtype = DType::kF32;
  return Status::Ok();
}

}  // namespace orknn
