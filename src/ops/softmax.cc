// Softmax and LogSoftmax with opset-13 semantics: normalised along one axis.
//
// Normalised form: "axis" explicit and non-negative. (Opsets < 13 flatten the input to 2-D at
// `axis`; the ONNX importer rewrites those nodes, they never reach this definition.)
#include "ops/infer_util.h"

namespace orknn {
namespace {

Status infer_softmax_like(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 1));
  const Tensor& x = *g.input(n, 0);
  if (x.dtype != DType::kF32) return ORKNN_NODE_ERR(n, "input must be float32, got %s", dtype_name(x.dtype));
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank < 1) return ORKNN_NODE_ERR(n, "input must have rank >= 1");
  int64_t axis = 0;
  ORKNN_RETURN_IF_ERROR(normalize_axis(n, n.attrs.get_int("axis", -1), rank, &axis));
  n.attrs.set_int("axis", axis);
  return set_output(g, n, 0, x.shape, DType::kF32);
}

}  // namespace

Status infer_Softmax(Graph& g, Node& n) { return infer_softmax_like(g, n); }
Status infer_LogSoftmax(Graph& g, Node& n) { return infer_softmax_like(g, n); }

}  // namespace orknn
