// BatchNormalization, inference form: Y = scale * (X - mean) / sqrt(var + epsilon) + B per channel.
//
// Normalised form: "epsilon" explicit. Training mode and the running-statistics outputs are
// not supported (a converted model is an inference graph).
#include "ops/infer_util.h"

namespace orknn {

Status infer_BatchNormalization(Graph& g, Node& n) {
  // Up to 5 outputs: Y and the training outputs (running mean/var; saved mean/var before opset 9).
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 5, 5, 1, 5, 5));
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (has_output(n, i)) return ORKNN_NODE_ERR(n, "training outputs (running mean/var) are not supported, only Y");
  if (n.attrs.get_int("training_mode", 0) != 0) return ORKNN_NODE_ERR(n, "training_mode=1 is not supported");
  if (n.attrs.has("spatial") && n.attrs.get_int("spatial", 1) != 1)
    return ORKNN_NODE_ERR(n, "spatial=0 (per-activation statistics, opset < 9) is not supported");
  static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 0; i < 5; ++i) ORKNN_RETURN_IF_ERROR(check_f32(g, n, i, kNames[i]));
  const Shape& x = g.input(n, 0)->shape;
  if (x.size() < 2) return ORKNN_NODE_ERR(n, "X must have rank >= 2 (N, C, ...), got %s", shape_str(x).c_str());
  for (size_t i = 1; i < 5; ++i) {
    const Shape& s = g.input(n, i)->shape;
    if (s.size() != 1 || s[0] != x[1])
      return ORKNN_NODE_ERR(n, "input %s must have shape [%lld], got %s", kNames[i], (long long)x[1],
                            shape_str(s).c_str());
  }
  ORKNN_RETURN_IF_ERROR(normalise_epsilon(n));
  n.attrs.erase("training_mode");
  n.attrs.erase("is_test");   // opset < 7
  n.attrs.erase("spatial");   // opset < 9, checked to be 1
  n.attrs.erase("momentum");  // training only
  return set_output(g, n, 0, x, DType::kF32);
}

}  // namespace orknn
