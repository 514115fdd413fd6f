// Custom: an operator the application implements itself (rknn_custom_op.h). The converter turns an
// ONNX node of a non-default domain into one; the runtime runs it by calling the callbacks the
// application registered for its type (src/runtime/custom_ops.h).
//
// Normalised form (docs/format.md, "Custom operators"):
//   "custom_type"   string, the ONNX op_type (what rknn_custom_op.op_type must name), required;
//   "custom_domain" string, the ONNX domain (informative);
//   every other attribute is the ONNX node's own, kept as it was.
// Output shapes and dtypes cannot be derived here (the computation is the application's): the
// converter sets them, and infer only checks them, leaving them unchanged (so it is idempotent).
// Every tensor of a Custom node is float32: the callbacks receive FP32 data (docs/api-contract.md §2.2), and
// quantized models keep Custom nodes in float with Dequantize/Quantize around them.
#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {

Status infer_Custom(Graph& g, Node& n) {
  if (n.inputs.empty()) return ORKNN_NODE_ERR(n, "needs at least one input");
  if (n.outputs.empty()) return ORKNN_NODE_ERR(n, "needs at least one output");
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, n.inputs.size(), 1, n.outputs.size(), n.inputs.size()));
  auto type_attr = n.attrs.all().find("custom_type");
  if (type_attr == n.attrs.all().end() || type_attr->second.kind != AttrValue::Kind::kString ||
      type_attr->second.s.empty())
    return ORKNN_NODE_ERR(n, "needs a non-empty string attribute \"custom_type\" (the operator type the application "
                          "registers callbacks for)");
  const std::string type = type_attr->second.s;
  if (n.attrs.has("custom_domain") && n.attrs.all().at("custom_domain").kind != AttrValue::Kind::kString)
    return ORKNN_NODE_ERR(n, "attribute \"custom_domain\" must be a string");
  ORKNN_RETURN_IF_ERROR(check_not_quantized(g, n, "custom operators run in float; the converter keeps them float"));
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Tensor& t = *g.input(n, i);
    if (t.dtype != DType::kF32)
      return ORKNN_NODE_ERR(n, "(type '%s'): input %zu ('%s') is %s; custom operators take float32 tensors only",
                            type.c_str(), i, t.name.c_str(), dtype_name(t.dtype));
    if (t.shape.size() > 16)
      return ORKNN_NODE_ERR(n, "(type '%s'): input %zu ('%s') has %zu dims; at most 16 (RKNN_MAX_DIMS)", type.c_str(), i,
                            t.name.c_str(), t.shape.size());
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] < 0) return ORKNN_NODE_ERR(n, "(type '%s'): output %zu is missing", type.c_str(), i);
    const Tensor& t = g.tensor(n.outputs[i]);
    if (t.dtype != DType::kF32)
      return ORKNN_NODE_ERR(n, "(type '%s'): output %zu ('%s') is %s; custom operators produce float32 tensors only",
                            type.c_str(), i, t.name.c_str(), dtype_name(t.dtype));
    const std::string what = strfmt("output %zu ('%s')", i, t.name.c_str());
    ORKNN_RETURN_IF_ERROR(check_shape(n, t.shape, what.c_str()));
    if (t.shape.size() > 16)
      return ORKNN_NODE_ERR(n, "(type '%s'): %s has %zu dims; at most 16 (RKNN_MAX_DIMS)", type.c_str(), what.c_str(),
                            t.shape.size());
  }
  return Status::Ok();
}

}  // namespace orknn
