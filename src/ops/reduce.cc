// ReduceMean/Sum/Max/Min/Prod/L2 and ArgMax.
#include "ops/infer_util.h"

namespace orknn {
namespace {

// Normalised form: "axes" (sorted, non-negative, explicit: every axis when the op reduces all),
// "keepdims", "noop_with_empty_axes". Axes come from the attribute (ReduceSum before opset 13,
// the others before opset 18) or from the optional constant input 1.
Status infer_reduce(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 2, 1, 1, 1));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 0, {DType::kF32, DType::kI32, DType::kI64}));
  const Tensor& x = *g.input(n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  ORKNN_RETURN_IF_ERROR(move_ints_input_to_attr(g, n, 1, "axes"));
  const int64_t keepdims = n.attrs.get_int("keepdims", 1);
  const int64_t noop = n.attrs.get_int("noop_with_empty_axes", 0);
  if (keepdims != 0 && keepdims != 1)
    return ORKNN_NODE_ERR(n, "keepdims must be 0 or 1, got %lld", (long long)keepdims);
  if (noop != 0 && noop != 1)
    return ORKNN_NODE_ERR(n, "noop_with_empty_axes must be 0 or 1, got %lld", (long long)noop);
  std::vector<int64_t> axes;
  ORKNN_RETURN_IF_ERROR(normalize_axes(n, n.attrs.get_ints("axes"), rank, &axes));
  if (axes.empty() && !noop)
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  n.attrs.set_ints("axes", axes);
  n.attrs.set_int("keepdims", keepdims);
  n.attrs.set_int("noop_with_empty_axes", noop);

  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const bool reduced = next < axes.size() && axes[next] == d;
    if (reduced) ++next;
    if (!reduced)
      out.push_back(x.shape[static_cast<size_t>(d)]);
    else if (keepdims)
      out.push_back(1);
  }
  return set_output(g, n, 0, out, x.dtype);
}

}  // namespace

Status infer_ReduceMean(Graph& g, Node& n) { return infer_reduce(g, n); }
Status infer_ReduceSum(Graph& g, Node& n) { return infer_reduce(g, n); }
Status infer_ReduceMax(Graph& g, Node& n) { return infer_reduce(g, n); }
Status infer_ReduceMin(Graph& g, Node& n) { return infer_reduce(g, n); }
Status infer_ReduceProd(Graph& g, Node& n) { return infer_reduce(g, n); }
Status infer_ReduceL2(Graph& g, Node& n) { return infer_reduce(g, n); }

// Normalised: "axis" non-negative, "keepdims", "select_last_index". Output int64.
Status infer_ArgMax(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 1));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 0, {DType::kF32, DType::kI32, DType::kI64}));
  const Tensor& x = *g.input(n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return ORKNN_NODE_ERR(n, "input '%s' is a scalar; ArgMax needs rank >= 1", x.name.c_str());
  int64_t axis = 0;
  ORKNN_RETURN_IF_ERROR(normalize_axis(n, n.attrs.get_int("axis", 0), rank, &axis));
  const int64_t keepdims = n.attrs.get_int("keepdims", 1);
  const int64_t last = n.attrs.get_int("select_last_index", 0);
  if (keepdims != 0 && keepdims != 1)
    return ORKNN_NODE_ERR(n, "keepdims must be 0 or 1, got %lld", (long long)keepdims);
  if (last != 0 && last != 1) return ORKNN_NODE_ERR(n, "select_last_index must be 0 or 1, got %lld", (long long)last);
  if (x.shape[static_cast<size_t>(axis)] == 0) return ORKNN_NODE_ERR(n, "axis %lld has size 0", (long long)axis);
  n.attrs.set_int("axis", axis);
  n.attrs.set_int("keepdims", keepdims);
  n.attrs.set_int("select_last_index", last);
  Shape out = x.shape;
  if (keepdims)
    out[static_cast<size_t>(axis)] = 1;
  else
    out.erase(out.begin() + axis);
  return set_output(g, n, 0, out, DType::kI64);
}

}  // namespace orknn
