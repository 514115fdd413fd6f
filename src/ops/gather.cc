// Gather (ONNX Gather, not GatherElements/GatherND) and ScatterND.
#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {

// Normalised: "axis" non-negative. Output shape: data[:axis] + indices + data[axis+1:], so scalar
// indices remove the axis. Constant indices are range-checked here; at run time an out-of-range
// index yields zeros. Quantized int8 data is gathered unchanged: the output must carry the data's
// parameters and the indices stay plain integers.
Status infer_Gather(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 2, 2, 1, 1, 2));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 1, {DType::kI32, DType::kI64}));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n, 0));
  const Tensor& data = *g.input(n, 0);
  const Tensor& indices = *g.input(n, 1);
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) return ORKNN_NODE_ERR(n, "data '%s' is a scalar; Gather needs rank >= 1", data.name.c_str());
  int64_t axis = 0;
  ORKNN_RETURN_IF_ERROR(normalize_axis(n, n.attrs.get_int("axis", 0), rank, &axis));
  n.attrs.set_int("axis", axis);
  const int64_t dim = data.shape[static_cast<size_t>(axis)];
  if (indices.is_const()) {
    std::vector<int64_t> idx;
    ORKNN_RETURN_IF_ERROR(read_const_ints(g, n, 1, "indices", &idx));
    for (int64_t v : idx)
      if (v < -dim || v >= dim)
        return ORKNN_NODE_ERR(n, "index %lld is out of range for axis %lld of size %lld", (long long)v, (long long)axis,
                              (long long)dim);
  }
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  return set_output(g, n, 0, out, data.dtype);
}

// ScatterND (ONNX opsets 11-18): inputs data, indices (int32/int64, rank >= 1, last dim k in
// [1, rank(data)]: one index tuple per row), updates of shape indices[:-1] + data[k:], of data's
// dtype. Normalised: "reduction" explicit (none, add, mul, max, min). Output: data's shape and dtype.
// Constant indices are range-checked here; at run time a tuple out of range is skipped (the
// kernel, src/kernels/ref/gather.cc). No int8 kernel: the converter keeps the node float.
Status infer_ScatterND(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 3, 3, 1, 1, 3));
  ORKNN_RETURN_IF_ERROR(check_not_quantized(g, n, "this op has no int8 kernel"));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 1, {DType::kI32, DType::kI64}));
  const Tensor& data = *g.input(n, 0);
  const Tensor& indices = *g.input(n, 1);
  const Tensor& updates = *g.input(n, 2);
  if (updates.dtype != data.dtype)
    return ORKNN_NODE_ERR(n, "updates ('%s') are %s and data ('%s') %s; they must have one dtype",
                          updates.name.c_str(), dtype_name(updates.dtype), data.name.c_str(), dtype_name(data.dtype));
  const std::string reduction = n.attrs.get_string("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
    return ORKNN_NODE_ERR(n, "reduction '%s' is not one of none, add, mul, max, min", reduction.c_str());
  if (reduction != "none" && data.dtype == DType::kF16)
    return ORKNN_NODE_ERR(n, "reduction '%s' needs float32, integer or bool data, not %s", reduction.c_str(),
                          dtype_name(data.dtype));
  n.attrs.set_string("reduction", reduction);
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (indices.shape.empty())
    return ORKNN_NODE_ERR(n, "indices ('%s') are a scalar; ScatterND needs rank >= 1", indices.name.c_str());
  const int64_t k = indices.shape.back();
  if (k < 1 || k > rank)
    return ORKNN_NODE_ERR(n, "the last dim of indices %s is %lld; it must be in [1, %lld] (the rank of data %s)",
                          shape_str(indices.shape).c_str(), (long long)k, (long long)rank,
                          shape_str(data.shape).c_str());
  Shape want(indices.shape.begin(), indices.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + k, data.shape.end());
  if (updates.shape != want)
    return ORKNN_NODE_ERR(n, "updates ('%s') have shape %s; indices %s and data %s need %s", updates.name.c_str(),
                          shape_str(updates.shape).c_str(), shape_str(indices.shape).c_str(),
                          shape_str(data.shape).c_str(), shape_str(want).c_str());
  if (indices.is_const()) {
    std::vector<int64_t> idx;
    ORKNN_RETURN_IF_ERROR(read_const_ints(g, n, 1, "indices", &idx));
    for (size_t i = 0; i < idx.size(); ++i) {
      const int64_t dim = data.shape[i % static_cast<size_t>(k)];
      if (idx[i] < -dim || idx[i] >= dim)
        return ORKNN_NODE_ERR(n, "index %lld is out of range [%lld, %lld) for dim %lld of data %s", (long long)idx[i],
                              (long long)-dim, (long long)dim, (long long)(i % static_cast<size_t>(k)),
                              shape_str(data.shape).c_str());
    }
  }
  return set_output(g, n, 0, data.shape, data.dtype);
}

}  // namespace orknn
