// Ops that create a tensor from constant parameters: ConstantOfShape and Range.
#include <cmath>

#include "ops/infer_util.h"

namespace orknn {

// Normalised: "shape" (from input 0, which must be constant), "value" (float) and "dtype" (an IR
// DType value; the ONNX importer converts the ONNX "value" tensor into these two).
Status infer_ConstantOfShape(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 0));
  std::vector<int64_t> shape;
  ORKNN_RETURN_IF_ERROR(read_ints_param(g, n, 0, "shape", &shape));
  for (int64_t d : shape)
    if (d < 0) return ORKNN_NODE_ERR(n, "shape %s has a negative dimension", shape_str(shape).c_str());
  ORKNN_RETURN_IF_ERROR(check_shape(n, shape, "shape"));
  const int64_t dtype = n.attrs.get_int("dtype", static_cast<int64_t>(DType::kF32));
  if (!dtype_valid(static_cast<int>(dtype)) || dtype == static_cast<int64_t>(DType::kF16))
    return ORKNN_NODE_ERR(n, "dtype %lld is not a supported IR dtype", (long long)dtype);
  n.attrs.set_int("dtype", dtype);
  n.attrs.set_float("value", n.attrs.get_float("value", 0.f));
  return set_output(g, n, 0, shape, static_cast<DType>(dtype));
}

// start, limit and delta are scalars of one dtype and must be constant, since they decide the
// output length: max(ceil((limit - start) / delta), 0).
Status infer_Range(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 3, 3, 1, 1, 3));
  const char* names[3] = {"start", "limit", "delta"};
  const DType t = g.input(n, 0)->dtype;
  for (size_t i = 0; i < 3; ++i) {
    ORKNN_RETURN_IF_ERROR(check_dtype(g, n, i, {DType::kF32, DType::kI32, DType::kI64}));
    const Tensor& in = *g.input(n, i);
    if (in.dtype != t)
      return ORKNN_NODE_ERR(n, "input %zu (%s) has dtype %s but start has %s", i, names[i], dtype_name(in.dtype),
                            dtype_name(t));
    if (in.numel() != 1)
      return ORKNN_NODE_ERR(n, "input %zu (%s) must be a scalar, has shape %s", i, names[i],
                            shape_str(in.shape).c_str());
  }
  int64_t count = 0;
  if (t == DType::kF32) {
    std::vector<float> v[3];
    for (size_t i = 0; i < 3; ++i) ORKNN_RETURN_IF_ERROR(read_const_floats(g, n, i, names[i], &v[i]));
    const double start = v[0][0], limit = v[1][0], delta = v[2][0];
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
      return ORKNN_NODE_ERR(n, "delta must be non-zero and start/limit/delta finite");
    const double length = std::max(std::ceil((limit - start) / delta), 0.0);
    if (length > static_cast<double>(kMaxElements))
      return ORKNN_NODE_ERR(n, "start %g, limit %g, delta %g give %g elements, more than %lld", start, limit, delta,
                            length, (long long)kMaxElements);
    count = static_cast<int64_t>(length);
  } else {
    std::vector<int64_t> v[3];
    for (size_t i = 0; i < 3; ++i) ORKNN_RETURN_IF_ERROR(read_const_ints(g, n, i, names[i], &v[i]));
    const int64_t start = v[0][0], limit = v[1][0], delta = v[2][0];
    if (delta == 0) return ORKNN_NODE_ERR(n, "delta must be non-zero");
    if ((limit > start && delta > 0) || (limit < start && delta < 0)) {
      // ceil(|limit - start| / |delta|) in uint64: exact for any int64 values, where the signed
      // difference or -delta could overflow.
      const uint64_t span = limit > start ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                          : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
      const uint64_t step = delta > 0 ? static_cast<uint64_t>(delta) : uint64_t{0} - static_cast<uint64_t>(delta);
      const uint64_t length = span / step + (span % step != 0 ? 1 : 0);
      if (length > static_cast<uint64_t>(kMaxElements))
        return ORKNN_NODE_ERR(n, "start %lld, limit %lld, delta %lld give %llu elements, more than %lld",
                              (long long)start, (long long)limit, (long long)delta, (unsigned long long)length,
                              (long long)kMaxElements);
      count = static_cast<int64_t>(length);
    }
  }
  return set_output(g, n, 0, {count}, t);
}

}  // namespace orknn
