// Gather (ONNX Gather, not GatherElements/GatherND).
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

}  // namespace orknn
