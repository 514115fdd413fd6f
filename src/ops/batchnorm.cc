// BatchNormalization, inference form: Y = scale * (X - mean) / sqrt(var + epsilon) + B per channel.
//
// Normalised form: "epsilon" explicit. Training mode and the running-statistics outputs are
// not supported (a converted model is an inference graph).
#include <string>

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

}  // namespace

Status infer_BatchNormalization(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  if (n.inputs.size() != 5)
    return NODE_ERR(n, "expects 5 inputs (X, scale, B, input_mean, input_var), got %zu", n.inputs.size());
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) return NODE_ERR(n, "training outputs (running mean/var) are not supported, only Y");
  if (n.outputs.empty() || n.outputs[0] < 0) return NODE_ERR(n, "output Y is required");
  if (n.attrs.get_int("training_mode", 0) != 0) return NODE_ERR(n, "training_mode=1 is not supported");
  if (n.attrs.has("spatial") && n.attrs.get_int("spatial", 1) != 1)
    return NODE_ERR(n, "spatial=0 (per-activation statistics, opset < 9) is not supported");
  static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 0; i < 5; ++i) {
    const Tensor* t = g.input(n, i);
    if (!t) return NODE_ERR(n, "input %s is required", kNames[i]);
    if (t->dtype != DType::kF32) return NODE_ERR(n, "input %s must be float32, got %s", kNames[i], dtype_name(t->dtype));
  }
  const Shape& x = g.tensor(n.inputs[0]).shape;
  if (x.size() < 2) return NODE_ERR(n, "X must have rank >= 2 (N, C, ...), got %s", shape_str(x).c_str());
  for (size_t i = 1; i < 5; ++i) {
    const Shape& s = g.tensor(n.inputs[i]).shape;
    if (s.size() != 1 || s[0] != x[1])
      return NODE_ERR(n, "input %s must have shape [%lld], got %s", kNames[i], (long long)x[1], shape_str(s).c_str());
  }
  const float eps = n.attrs.get_float("epsilon", 1e-5f);
  if (!(eps >= 0.f)) return NODE_ERR(n, "epsilon must be >= 0, got %g", eps);
  n.attrs.set_float("epsilon", eps);
  n.attrs.erase("training_mode");
  n.attrs.erase("is_test");   // opset < 7
  n.attrs.erase("spatial");   // opset < 9, checked to be 1
  n.attrs.erase("momentum");  // training only
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = x;
  y.dtype = DType::kF32;
  return Status::Ok();
}

}  // namespace orknn
