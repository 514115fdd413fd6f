// DepthToSpace and SpaceToDepth (rank-4 NCHW): validation, normalisation, shapes.
//
// Normalised form: "blocksize"; DepthToSpace also "mode" ("DCR" or "CRD") explicit. These ops
// only move elements, so any dtype is accepted (the output has the input's dtype).
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

Status check_io(const Graph& g, const Node& n, int64_t* block) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  if (n.inputs.size() != 1 || n.inputs[0] < 0) return NODE_ERR(n, "expects 1 input, got %zu", n.inputs.size());
  if (n.outputs.size() != 1 || n.outputs[0] < 0) return NODE_ERR(n, "expects 1 output, got %zu", n.outputs.size());
  const Shape& x = g.tensor(n.inputs[0]).shape;
  if (x.size() != 4) return NODE_ERR(n, "input must be 4-D (N, C, H, W), got %s", shape_str(x).c_str());
  if (!n.attrs.has("blocksize")) return NODE_ERR(n, "attribute blocksize is required");
  *block = n.attrs.get_int("blocksize", 0);
  if (*block < 1) return NODE_ERR(n, "blocksize must be >= 1, got %lld", (long long)*block);
  return Status::Ok();
}

}  // namespace

Status infer_DepthToSpace(Graph& g, Node& n) {
  int64_t b = 0;
  ORKNN_RETURN_IF_ERROR(check_io(g, n, &b));
  const Tensor& x = g.tensor(n.inputs[0]);
  const std::string mode = n.attrs.get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return NODE_ERR(n, "mode must be DCR or CRD, got '%s'", mode.c_str());
  if (x.shape[1] % (b * b) != 0)
    return NODE_ERR(n, "channels %lld not divisible by blocksize^2 = %lld", (long long)x.shape[1], (long long)(b * b));
  n.attrs.set_string("mode", mode);
  const Shape out = {x.shape[0], x.shape[1] / (b * b), x.shape[2] * b, x.shape[3] * b};
  const DType dt = x.dtype;
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = out;
  y.dtype = dt;
  return Status::Ok();
}

Status infer_SpaceToDepth(Graph& g, Node& n) {
  int64_t b = 0;
  ORKNN_RETURN_IF_ERROR(check_io(g, n, &b));
  const Tensor& x = g.tensor(n.inputs[0]);
  if (x.shape[2] % b != 0 || x.shape[3] % b != 0)
    return NODE_ERR(n, "H and W of %s must be divisible by blocksize %lld", shape_str(x.shape).c_str(), (long long)b);
  const Shape out = {x.shape[0], x.shape[1] * b * b, x.shape[2] / b, x.shape[3] / b};
  const DType dt = x.dtype;
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = out;
  y.dtype = dt;
  return Status::Ok();
}

}  // namespace orknn
