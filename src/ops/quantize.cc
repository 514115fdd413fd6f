// QuantizeLinear and DequantizeLinear: validation and shape inference of their IR form.
//
// In the IR both ops have one input and one output; the scale and zero point live on the
// QuantParams of the int8 side (docs/numerics.md, "Representation in the IR"): the output of
// QuantizeLinear, the input of DequantizeLinear. The ONNX mapper (converter/onnx/ops/qdq.cc) moves
// ONNX's scale/zero-point inputs there. Neither op has attributes.
#include <string>

#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// One input and one output. ONNX's (x, scale, zero_point) form is refused, saying where the IR
// keeps the parameters: on the `params_on` tensor ("output" of QuantizeLinear, "input" of
// DequantizeLinear).
Status check_ir_form(const Graph& g, const Node& n, const char* params_on) {
  if (n.inputs.size() == 3)
    return ORKNN_NODE_ERR(n,
                          "has the ONNX form (x, scale, zero_point); in the IR the scale and zero point are the %s "
                          "tensor's quantization parameters and the node has one input",
                          params_on);
  return check_arity(g, n, 1, 1, 1, 1, 1);
}

}  // namespace

Status infer_QuantizeLinear(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_ir_form(g, n, "output"));
  const Tensor& x = *g.input(n, 0);
  if (x.dtype != DType::kF32)
    return ORKNN_NODE_ERR(n, "input x ('%s') must be float32, got %s", x.name.c_str(), dtype_name(x.dtype));
  const Tensor& y = g.tensor(n.outputs[0]);
  if (y.quant.empty())
    return ORKNN_NODE_ERR(n, "output '%s' has no quantization parameters (scale, zero point)", y.name.c_str());
  // Activations are quantized per tensor. Per-axis parameters occur on constant weights
  // (QuantizeLinear of float weights, folded by the converter), which the kernel also handles.
  // check_quant_params reads the axis against the tensor's shape, which is x's.
  Tensor shaped = y;
  shaped.shape = x.shape;
  ORKNN_RETURN_IF_ERROR(check_quant_params(n, shaped, "output 0", /*allow_per_axis=*/x.is_const()));
  return set_output(g, n, 0, x.shape, DType::kI8);
}

Status infer_DequantizeLinear(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_ir_form(g, n, "input"));
  const Tensor& x = *g.input(n, 0);
  // int8: activations and weights; int32: biases (zero point 0, checked by check_quant_params).
  if (x.dtype != DType::kI8 && x.dtype != DType::kI32)
    return ORKNN_NODE_ERR(n, "input x ('%s') must be int8 or int32, got %s", x.name.c_str(), dtype_name(x.dtype));
  ORKNN_RETURN_IF_ERROR(check_quant_params(n, x, "input 0", /*allow_per_axis=*/true));
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!y.quant.empty())
    return ORKNN_NODE_ERR(n, "output '%s' is float32 and must not carry quantization parameters", y.name.c_str());
  return set_output(g, n, 0, x.shape, DType::kF32);
}

}  // namespace orknn
