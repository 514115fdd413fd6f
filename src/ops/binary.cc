// Broadcasting element-wise ops of several inputs: arithmetic (Add Sub Mul Div Pow), the variadic
// Min/Max, comparisons (Equal Less Greater -> bool), Where, and PRelu (unidirectional slope).
//
// Quantized int8 (docs/numerics.md): Add, Sub and Mul, with both inputs and the output per-tensor
// quantized int8 activations (an input may be a constant with its own parameters). Plain int8
// tensors are not arithmetic types here; the other ops refuse quantized tensors (the converter
// keeps them in float).
#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// Add/Sub/Mul on quantized int8: output = numpy broadcast of the inputs, dtype INT8.
Status infer_quantized_arith(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 2, 2, 1, 1, 2));
  ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, 0));
  ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, 1));
  ORKNN_RETURN_IF_ERROR(check_q8_output(g, n, 0));
  Shape out;
  ORKNN_RETURN_IF_ERROR(broadcast_shapes(n, {g.input(n, 0)->shape, g.input(n, 1)->shape}, &out));
  return set_output(g, n, 0, out, output_dtype(g, n, 0, DType::kI8));
}

// All inputs share one dtype from `allowed`; the output is their numpy broadcast.
Status infer_broadcast(Graph& g, Node& n, size_t min_in, size_t max_in, std::initializer_list<DType> allowed,
                       bool bool_output) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, min_in, max_in, 1, 1, n.inputs.size()));
  ORKNN_RETURN_IF_ERROR(check_not_quantized(g, n, "this op has no int8 kernel"));
  const DType t = g.input(n, 0)->dtype;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    ORKNN_RETURN_IF_ERROR(check_dtype(g, n, i, allowed));
    const Tensor& in = *g.input(n, i);
    if (in.dtype != t)
      return ORKNN_NODE_ERR(n, "input %zu ('%s') has dtype %s but input 0 has %s; inputs must have one dtype", i,
                            in.name.c_str(), dtype_name(in.dtype), dtype_name(t));
    shapes.push_back(in.shape);
  }
  Shape out;
  ORKNN_RETURN_IF_ERROR(broadcast_shapes(n, shapes, &out));
  return set_output(g, n, 0, out, bool_output ? DType::kBool : t);
}

const std::initializer_list<DType> kArith = {DType::kF32, DType::kI32, DType::kI64};

}  // namespace

Status infer_Add(Graph& g, Node& n) {
  return node_has_quant(g, n) ? infer_quantized_arith(g, n) : infer_broadcast(g, n, 2, 2, kArith, false);
}
Status infer_Sub(Graph& g, Node& n) {
  return node_has_quant(g, n) ? infer_quantized_arith(g, n) : infer_broadcast(g, n, 2, 2, kArith, false);
}
Status infer_Mul(Graph& g, Node& n) {
  return node_has_quant(g, n) ? infer_quantized_arith(g, n) : infer_broadcast(g, n, 2, 2, kArith, false);
}
Status infer_Div(Graph& g, Node& n) { return infer_broadcast(g, n, 2, 2, kArith, false); }
Status infer_Min(Graph& g, Node& n) { return infer_broadcast(g, n, 1, 1 << 16, kArith, false); }
Status infer_Max(Graph& g, Node& n) { return infer_broadcast(g, n, 1, 1 << 16, kArith, false); }
Status infer_Less(Graph& g, Node& n) { return infer_broadcast(g, n, 2, 2, kArith, true); }
Status infer_Greater(Graph& g, Node& n) { return infer_broadcast(g, n, 2, 2, kArith, true); }
Status infer_Equal(Graph& g, Node& n) {
  return infer_broadcast(g, n, 2, 2, {DType::kF32, DType::kI32, DType::kI64, DType::kBool}, true);
}

// The exponent may have a different numeric dtype than the base (ONNX T1/T2); the output has the
// base's dtype.
Status infer_Pow(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 2, 2, 1, 1, 2));
  ORKNN_RETURN_IF_ERROR(check_not_quantized(g, n, "this op has no int8 kernel"));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 0, kArith));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 1, kArith));
  Shape out;
  ORKNN_RETURN_IF_ERROR(broadcast_shapes(n, {g.input(n, 0)->shape, g.input(n, 1)->shape}, &out));
  return set_output(g, n, 0, out, g.input(n, 0)->dtype);
}

Status infer_Where(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 3, 3, 1, 1, 3));
  ORKNN_RETURN_IF_ERROR(check_not_quantized(g, n, "this op has no int8 kernel"));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 0, {DType::kBool}));
  const Tensor& x = *g.input(n, 1);
  const Tensor& y = *g.input(n, 2);
  if (x.dtype != y.dtype)
    return ORKNN_NODE_ERR(n, "inputs X ('%s', %s) and Y ('%s', %s) must have one dtype", x.name.c_str(),
                          dtype_name(x.dtype), y.name.c_str(), dtype_name(y.dtype));
  if (dtype_size(x.dtype) == 0) return ORKNN_NODE_ERR(n, "unsupported dtype %s", dtype_name(x.dtype));
  Shape out;
  ORKNN_RETURN_IF_ERROR(broadcast_shapes(n, {g.input(n, 0)->shape, x.shape, y.shape}, &out));
  return set_output(g, n, 0, out, x.dtype);
}

// slope broadcasts to X (unidirectional): the output always has X's shape.
//
// Opset < 7 (and PyTorch's export of nn.PReLU(num_parameters=C)) gives a slope of shape [C] for an
// N x C x ... input, meaning one slope per channel. Where such a slope is not numpy-broadcastable
// to X, infer records the per-channel reading as "slope_shape" = [C, 1, ..., 1] (rank - 1 dims)
// and the kernel broadcasts the slope with that shape. Absent: the slope's own shape.
Status infer_PRelu(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 2, 2, 1, 1, 2));
  ORKNN_RETURN_IF_ERROR(check_not_quantized(g, n, "this op has no int8 kernel"));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 0, {DType::kF32}));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 1, {DType::kF32}));
  const Tensor& x = *g.input(n, 0);
  const Tensor& slope = *g.input(n, 1);
  Shape slope_shape = slope.shape;
  const bool per_channel = x.shape.size() > 2 && slope.shape.size() == 1 && slope.shape[0] == x.shape[1] &&
                           !broadcasts_to(slope.shape, x.shape);
  if (per_channel) {
    slope_shape.assign(x.shape.size() - 1, 1);
    slope_shape[0] = x.shape[1];
    n.attrs.set_ints("slope_shape", slope_shape);
  } else {
    n.attrs.erase("slope_shape");
  }
  if (!broadcasts_to(slope_shape, x.shape))
    return ORKNN_NODE_ERR(n, "slope shape %s does not broadcast to input shape %s", shape_str(slope.shape).c_str(),
                          shape_str(x.shape).c_str());
  return set_output(g, n, 0, x.shape, x.dtype);
}

}  // namespace orknn
