// Data movement on any dtype: Concat, Split, Slice, Transpose, Expand, Tile.
// Quantized int8 (docs/numerics.md): Concat requantizes inputs whose parameters differ from the
// output's; the others move bytes, so their output must carry the input's parameters.
#include <algorithm>
#include <limits>

#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {

// Normalised: "axis" non-negative.
Status infer_Concat(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1 << 16, 1, 1, n.inputs.size()));
  if (!n.attrs.has("axis")) return ORKNN_NODE_ERR(n, "attribute 'axis' is required");
  const Tensor& first = *g.input(n, 0);
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  if (rank == 0) return ORKNN_NODE_ERR(n, "cannot concatenate scalars");
  int64_t axis = 0;
  ORKNN_RETURN_IF_ERROR(normalize_axis(n, n.attrs.get_int("axis", 0), rank, &axis));
  n.attrs.set_int("axis", axis);
  if (node_has_quant(g, n)) {
    // Every input is requantized (or copied) into the output's parameters.
    for (size_t i = 0; i < n.inputs.size(); ++i) ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, i));
    ORKNN_RETURN_IF_ERROR(check_q8_output(g, n, 0));
  }
  Shape out = first.shape;
  out[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Tensor& t = *g.input(n, i);
    if (t.dtype != first.dtype)
      return ORKNN_NODE_ERR(n, "input %zu ('%s') has dtype %s, input 0 has %s", i, t.name.c_str(), dtype_name(t.dtype),
                            dtype_name(first.dtype));
    bool same = t.shape.size() == first.shape.size();
    for (size_t d = 0; same && d < t.shape.size(); ++d)
      same = static_cast<int64_t>(d) == axis || t.shape[d] == first.shape[d];
    if (!same)
      return ORKNN_NODE_ERR(n, "input %zu ('%s') has shape %s, incompatible with input 0 %s along axis %lld", i,
                            t.name.c_str(), shape_str(t.shape).c_str(), shape_str(first.shape).c_str(),
                            (long long)axis);
    out[static_cast<size_t>(axis)] += t.shape[static_cast<size_t>(axis)];
  }
  return set_output(g, n, 0, out, first.dtype);
}

// Normalised: "axis" non-negative and "split" with one explicit size per output. The sizes come
// from input 1 (opset 13+), the attribute (older), num_outputs (opset 18: ceil-sized chunks, the
// last one smaller) or an even split over the outputs.
Status infer_Split(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 2, 1, 1 << 16, 1));
  ORKNN_RETURN_IF_ERROR(move_ints_input_to_attr(g, n, 1, "split"));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const Tensor& x = *g.input(n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return ORKNN_NODE_ERR(n, "cannot split a scalar");
  int64_t axis = 0;
  ORKNN_RETURN_IF_ERROR(normalize_axis(n, n.attrs.get_int("axis", 0), rank, &axis));
  const int64_t dim = x.shape[static_cast<size_t>(axis)];
  const int64_t n_out = static_cast<int64_t>(n.outputs.size());
  std::vector<int64_t> split = n.attrs.get_ints("split");
  if (!split.empty()) {
    if (static_cast<int64_t>(split.size()) != n_out)
      return ORKNN_NODE_ERR(n, "split %s has %zu entries for %lld outputs", shape_str(split).c_str(), split.size(),
                            (long long)n_out);
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) return ORKNN_NODE_ERR(n, "split %s has a negative size", shape_str(split).c_str());
      if (s > kMaxDim)
        return ORKNN_NODE_ERR(n, "split %s has a size above %lld", shape_str(split).c_str(), (long long)kMaxDim);
      sum += s;  // at most 65536 sizes of at most kMaxDim: no overflow
    }
    if (sum != dim)
      return ORKNN_NODE_ERR(n, "split %s sums to %lld but axis %lld has size %lld", shape_str(split).c_str(),
                            (long long)sum, (long long)axis, (long long)dim);
  } else if (n.attrs.has("num_outputs")) {
    const int64_t num = n.attrs.get_int("num_outputs", 0);
    if (num != n_out)
      return ORKNN_NODE_ERR(n, "num_outputs=%lld but the node has %lld outputs", (long long)num, (long long)n_out);
    const int64_t chunk = (dim + num - 1) / num;
    const int64_t last = dim - chunk * (num - 1);
    if (last < 0)
      return ORKNN_NODE_ERR(n, "axis %lld of size %lld cannot be split into %lld chunks of %lld", (long long)axis,
                            (long long)dim, (long long)num, (long long)chunk);
    split.assign(static_cast<size_t>(num), chunk);
    split.back() = last;
  } else {
    if (dim % n_out != 0)
      return ORKNN_NODE_ERR(n, "axis %lld of size %lld does not split evenly into %lld outputs", (long long)axis,
                            (long long)dim, (long long)n_out);
    split.assign(static_cast<size_t>(n_out), dim / n_out);
  }
  n.attrs.set_int("axis", axis);
  n.attrs.set_ints("split", split);
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    Shape s = x.shape;
    s[static_cast<size_t>(axis)] = split[i];
    ORKNN_RETURN_IF_ERROR(set_output(g, n, i, s, x.dtype));
  }
  return Status::Ok();
}

// Normalised to one entry per dimension: "axes" = 0..rank-1, "starts"/"ends" clamped as ONNX
// specifies and "steps". With a negative step, an end before element 0 is stored as -dim-1
// (it re-normalises to the same value; -1 would mean the last element).
Status infer_Slice(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 5, 1, 1, 1));
  const char* names[5] = {"", "starts", "ends", "axes", "steps"};
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    if (!has_input(n, i)) continue;
    ORKNN_RETURN_IF_ERROR(move_ints_input_to_attr(g, n, i, names[i]));
  }
  if (!n.attrs.has("starts") || !n.attrs.has("ends")) return ORKNN_NODE_ERR(n, "starts and ends are required");
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const Tensor& x = *g.input(n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const std::vector<int64_t> starts = n.attrs.get_ints("starts");
  const std::vector<int64_t> ends = n.attrs.get_ints("ends");
  std::vector<int64_t> axes = n.attrs.get_ints("axes");
  std::vector<int64_t> steps = n.attrs.get_ints("steps");
  if (!n.attrs.has("axes"))
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (!n.attrs.has("steps")) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return ORKNN_NODE_ERR(n, "starts, ends, axes and steps have different lengths (%zu, %zu, %zu, %zu)", starts.size(),
                          ends.size(), axes.size(), steps.size());

  std::vector<int64_t> full_starts(static_cast<size_t>(rank), 0), full_ends = x.shape,
                                                                  full_steps(static_cast<size_t>(rank), 1);
  Shape out = x.shape;
  ORKNN_RETURN_IF_ERROR(resolve_axes(n, axes, rank, &axes));
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = axes[i];
    const size_t a = static_cast<size_t>(axis);
    const int64_t dim = x.shape[a];
    int64_t step = steps[i];
    if (step == 0) return ORKNN_NODE_ERR(n, "step for axis %lld is 0", (long long)axis);
    // A step longer than the dim takes one element at most, exactly as a step of the dim's length
    // does; storing that keeps the kernel's stride arithmetic (step * element stride) in range.
    const int64_t longest = std::max<int64_t>(dim, 1);
    if (step > longest) step = longest;
    if (step < -longest) step = -longest;
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t len = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start) len = (end - start + step - 1) / step;
    } else {
      start = std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
      end = std::clamp<int64_t>(end, -1, dim - 1);
      if (dim > 0 && start > end) len = (start - end + (-step) - 1) / (-step);
      if (end == -1) end = -dim - 1;
    }
    full_starts[a] = start;
    full_ends[a] = end;
    full_steps[a] = step;
    out[a] = len;
  }
  std::vector<int64_t> all_axes(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) all_axes[static_cast<size_t>(d)] = d;
  n.attrs.set_ints("starts", full_starts);
  n.attrs.set_ints("ends", full_ends);
  n.attrs.set_ints("axes", all_axes);
  n.attrs.set_ints("steps", full_steps);
  return set_output(g, n, 0, out, x.dtype);
}

// Normalised: "perm" explicit (default: reversed dimensions).
Status infer_Transpose(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 1));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const Tensor& x = *g.input(n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> perm = n.attrs.get_ints("perm");
  if (!n.attrs.has("perm"))
    for (int64_t d = rank; d-- > 0;) perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != rank)
    return ORKNN_NODE_ERR(n, "perm %s has %zu entries for an input of rank %lld", shape_str(perm).c_str(), perm.size(),
                          (long long)rank);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  Shape out(static_cast<size_t>(rank));
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= rank || seen[static_cast<size_t>(perm[i])])
      return ORKNN_NODE_ERR(n, "perm %s is not a permutation of 0..%lld", shape_str(perm).c_str(),
                            (long long)(rank - 1));
    seen[static_cast<size_t>(perm[i])] = true;
    out[i] = x.shape[static_cast<size_t>(perm[i])];
  }
  n.attrs.set_ints("perm", perm);
  return set_output(g, n, 0, out, x.dtype);
}

// Normalised: "shape" (from input 1). The output is the bidirectional broadcast of the input
// shape and "shape".
Status infer_Expand(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 2, 1, 1, 1));
  std::vector<int64_t> shape;
  ORKNN_RETURN_IF_ERROR(read_ints_param(g, n, 1, "shape", &shape));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const Tensor& x = *g.input(n, 0);
  for (int64_t d : shape)
    if (d < 0) return ORKNN_NODE_ERR(n, "shape %s has a negative dimension", shape_str(shape).c_str());
  ORKNN_RETURN_IF_ERROR(check_shape(n, shape, "target shape"));
  Shape out;
  ORKNN_RETURN_IF_ERROR(broadcast_shapes(n, {x.shape, shape}, &out));
  return set_output(g, n, 0, out, x.dtype);
}

// Normalised: "repeats" (from input 1), one per dimension.
Status infer_Tile(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 2, 1, 1, 1));
  std::vector<int64_t> repeats;
  ORKNN_RETURN_IF_ERROR(read_ints_param(g, n, 1, "repeats", &repeats));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const Tensor& x = *g.input(n, 0);
  if (repeats.size() != x.shape.size())
    return ORKNN_NODE_ERR(n, "repeats %s has %zu entries for an input of rank %zu", shape_str(repeats).c_str(),
                          repeats.size(), x.shape.size());
  for (int64_t r : repeats)
    if (r < 0) return ORKNN_NODE_ERR(n, "repeats %s has a negative entry", shape_str(repeats).c_str());
  ORKNN_RETURN_IF_ERROR(check_values_in(n, "repeats", repeats, 0, kMaxDim));
  Shape out = x.shape;
  for (size_t d = 0; d < out.size(); ++d) out[d] *= repeats[d];  // both <= kMaxDim: no overflow
  return set_output(g, n, 0, out, x.dtype);
}

}  // namespace orknn
