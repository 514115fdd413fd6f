// Ops that only change the shape (Reshape Flatten Squeeze Unsqueeze; any dtype, data unchanged)
// and Shape. Quantized int8 data moves unchanged, so the output must carry the input's parameters.
#include <algorithm>

#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {

// Normalised: "shape" as given by the model (0 and -1 kept, so the attribute stays valid if the
// input shape is re-pinned) and "allowzero".
Status infer_Reshape(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 2, 1, 1, 1));
  std::vector<int64_t> spec;
  ORKNN_RETURN_IF_ERROR(read_ints_param(g, n, 1, "shape", &spec));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const int64_t allowzero = n.attrs.get_int("allowzero", 0);
  n.attrs.set_int("allowzero", allowzero);
  const Tensor& x = *g.input(n, 0);

  Shape out(spec.size());
  int infer_at = -1;
  bool has_zero = false;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (infer_at >= 0) return ORKNN_NODE_ERR(n, "target shape %s has more than one -1", shape_str(spec).c_str());
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < -1) return ORKNN_NODE_ERR(n, "target shape %s has a negative dimension", shape_str(spec).c_str());
    if (d > kMaxDim)
      return ORKNN_NODE_ERR(n, "target shape %s has a dimension above %lld", shape_str(spec).c_str(),
                            (long long)kMaxDim);
    if (d == 0) {
      has_zero = true;
      if (!allowzero) {
        if (i >= x.shape.size())
          return ORKNN_NODE_ERR(n, "target shape %s copies dimension %zu (0) but the input %s has rank %zu",
                                shape_str(spec).c_str(), i, shape_str(x.shape).c_str(), x.shape.size());
        d = x.shape[i];
      }
    }
    out[i] = d;
    known *= d;  // known <= kMaxElements (checked below) and d <= kMaxDim: no overflow
    if (known > kMaxElements)
      return ORKNN_NODE_ERR(n, "target shape %s has more than %lld elements", shape_str(spec).c_str(),
                            (long long)kMaxElements);
  }
  if (allowzero && has_zero && infer_at >= 0)
    return ORKNN_NODE_ERR(n, "target shape %s has both 0 and -1 with allowzero=1", shape_str(spec).c_str());
  const int64_t total = x.numel();
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      return ORKNN_NODE_ERR(n, "cannot reshape %s to %s", shape_str(x.shape).c_str(), shape_str(spec).c_str());
    out[static_cast<size_t>(infer_at)] = total / known;
  } else if (known != total) {
    return ORKNN_NODE_ERR(n, "cannot reshape %s (%lld elements) to %s", shape_str(x.shape).c_str(),
                          static_cast<long long>(total), shape_str(spec).c_str());
  }
  return set_output(g, n, 0, out, x.dtype);
}

// Normalised: "axis" in [0, rank].
Status infer_Flatten(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 1));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const Tensor& x = *g.input(n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.attrs.get_int("axis", 1);
  if (axis < -rank || axis > rank)
    return ORKNN_NODE_ERR(n, "axis %lld is out of range for rank %lld", (long long)axis, (long long)rank);
  if (axis < 0) axis += rank;
  n.attrs.set_int("axis", axis);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= x.shape[static_cast<size_t>(d)];
  return set_output(g, n, 0, {outer, inner}, x.dtype);
}

// Normalised: "axes" explicit (sorted, non-negative); without axes every size-1 dimension goes.
Status infer_Squeeze(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 2, 1, 1, 1));
  ORKNN_RETURN_IF_ERROR(move_ints_input_to_attr(g, n, 1, "axes"));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const Tensor& x = *g.input(n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> axes;
  ORKNN_RETURN_IF_ERROR(normalize_axes(n, n.attrs.get_ints("axes"), rank, &axes));
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d)
      if (x.shape[static_cast<size_t>(d)] == 1) axes.push_back(d);
  }
  for (int64_t a : axes)
    if (x.shape[static_cast<size_t>(a)] != 1)
      return ORKNN_NODE_ERR(n, "cannot squeeze axis %lld of shape %s: its size is not 1", (long long)a,
                            shape_str(x.shape).c_str());
  n.attrs.set_ints("axes", axes);
  Shape out;
  for (int64_t d = 0; d < rank; ++d)
    if (!std::binary_search(axes.begin(), axes.end(), d)) out.push_back(x.shape[static_cast<size_t>(d)]);
  return set_output(g, n, 0, out, x.dtype);
}

// Normalised: "axes" sorted, non-negative, relative to the output rank.
Status infer_Unsqueeze(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 2, 1, 1, 1));
  std::vector<int64_t> given;
  ORKNN_RETURN_IF_ERROR(read_ints_param(g, n, 1, "axes", &given));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const Tensor& x = *g.input(n, 0);
  const int64_t out_rank = static_cast<int64_t>(x.shape.size() + given.size());
  std::vector<int64_t> axes;
  ORKNN_RETURN_IF_ERROR(normalize_axes(n, given, out_rank, &axes));
  n.attrs.set_ints("axes", axes);
  Shape out;
  size_t next_in = 0;
  for (int64_t d = 0; d < out_rank; ++d) {
    if (std::binary_search(axes.begin(), axes.end(), d))
      out.push_back(1);
    else
      out.push_back(x.shape[next_in++]);
  }
  return set_output(g, n, 0, out, x.dtype);
}

// Normalised: "start" and "end" explicit, clamped to [0, rank] (opset 15 semantics).
// Only the input's shape is read, so a quantized input is fine; the int64 output is never quantized.
Status infer_Shape(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 1));
  if (has_output(n, 0) && !g.tensor(n.outputs[0]).quant.empty())
    return ORKNN_NODE_ERR(n, "the int64 output '%s' cannot be quantized", g.tensor(n.outputs[0]).name.c_str());
  const Tensor& x = *g.input(n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto resolve = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  const int64_t start = resolve(n.attrs.get_int("start", 0));
  const int64_t end = resolve(n.attrs.get_int("end", rank));
  n.attrs.set_int("start", start);
  n.attrs.set_int("end", end);
  return set_output(g, n, 0, {std::max<int64_t>(end - start, 0)}, DType::kI64);
}

}  // namespace orknn
