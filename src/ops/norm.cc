// LayerNormalization and InstanceNormalization: validation, normalisation, shapes.
//
// LayerNormalization normalised form: "axis" explicit and non-negative, "epsilon", "stash_type"
// = 1. Only output Y is supported (Mean and InvStdDev are training outputs). Scale and B are
// unidirectionally broadcastable to X.shape[axis:].
// InstanceNormalization normalised form: "epsilon" explicit.
#include "ops/infer_util.h"

namespace orknn {

Status infer_LayerNormalization(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 2, 3, 1, 3, 2));
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (has_output(n, i)) return ORKNN_NODE_ERR(n, "outputs Mean and InvStdDev are not supported, only Y");
  ORKNN_RETURN_IF_ERROR(check_f32(g, n, 0, "X"));
  ORKNN_RETURN_IF_ERROR(check_f32(g, n, 1, "Scale"));
  ORKNN_RETURN_IF_ERROR(check_f32(g, n, 2, "B"));
  const Shape& x = g.input(n, 0)->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 1) return ORKNN_NODE_ERR(n, "X must have rank >= 1");
  int64_t axis = 0;
  ORKNN_RETURN_IF_ERROR(normalize_axis(n, n.attrs.get_int("axis", -1), rank, &axis));
  const int64_t stash_type = n.attrs.get_int("stash_type", 1);
  if (stash_type != 1)
    return ORKNN_NODE_ERR(n, "stash_type %lld is not supported (only 1: float32 statistics)", (long long)stash_type);
  const Shape normalized(x.begin() + axis, x.end());
  for (size_t i = 1; i < 3; ++i) {
    const Tensor* t = g.input(n, i);
    if (t && !broadcasts_to(t->shape, normalized))
      return ORKNN_NODE_ERR(n, "%s %s does not broadcast to the normalized shape %s", i == 1 ? "Scale" : "B",
                            shape_str(t->shape).c_str(), shape_str(normalized).c_str());
  }
  ORKNN_RETURN_IF_ERROR(normalise_epsilon(n));
  n.attrs.set_int("axis", axis);
  n.attrs.set_int("stash_type", 1);
  return set_output(g, n, 0, x, DType::kF32);
}

Status infer_InstanceNormalization(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 3, 3, 1, 1, 3));
  ORKNN_RETURN_IF_ERROR(check_f32(g, n, 0, "input"));
  ORKNN_RETURN_IF_ERROR(check_f32(g, n, 1, "scale"));
  ORKNN_RETURN_IF_ERROR(check_f32(g, n, 2, "B"));
  const Shape& x = g.input(n, 0)->shape;
  if (x.size() < 3)
    return ORKNN_NODE_ERR(n, "input must have rank >= 3 (N, C, spatial...), got %s", shape_str(x).c_str());
  for (size_t i = 1; i < 3; ++i) {
    const Shape& s = g.input(n, i)->shape;
    if (s.size() != 1 || s[0] != x[1])
      return ORKNN_NODE_ERR(n, "%s must have shape [%lld], got %s", i == 1 ? "scale" : "B", (long long)x[1],
                            shape_str(s).c_str());
  }
  ORKNN_RETURN_IF_ERROR(normalise_epsilon(n));
  return set_output(g, n, 0, x, DType::kF32);
}

}  // namespace orknn
