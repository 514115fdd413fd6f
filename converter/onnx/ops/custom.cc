// A node of any domain other than "" / "ai.onnx", or of a type listed with --custom-op in any
// domain, is an operator the application implements (rknn_custom_op.h): it becomes an IR Custom
// node carrying the ONNX op type and domain ("custom_type", "custom_domain") and the node's own
// attributes. The converter cannot compute it, so its output shapes come from the model
// (docs/custom_ops.md):
//   1. the ONNX graph's value_info or graph output entry for that value, when it gives a shape
//      whose every dim is a fixed number;
//   2. otherwise the shape of the node's first input, as the vendor's default shape inference for
//      custom operators does (a declaration with symbolic dims must agree with it where it says
//      anything: same rank, same fixed dims).
// Every output is float32 (the callbacks see FP32 tensors).
#include <algorithm>

#include "converter/onnx/mapper.h"
#include "converter/onnx/tensor_proto.h"

namespace orknn::onnx_import {

Status map_custom(MapContext& ctx) {
  // How messages call the node: the domain says where it came from, when it has one.
  const std::string& domain = ctx.node().domain();
  const std::string what_s = domain.empty() ? "custom operator" : "custom operator (domain '" + domain + "')";
  const char* what = what_s.c_str();
  Node n;
  n.op = OpId::Custom;
  n.name = ctx.name();
  for (const auto& a : ctx.node().attribute()) {
    if (a.name() == "custom_type" || a.name() == "custom_domain")
      return ctx.unsupported("%s: attribute name '%s' is reserved by OpenRKNN for the operator's type and domain; "
                             "rename the attribute", what, a.name().c_str());
    if (a.type() == onnx::AttributeProto::TENSOR || a.type() == onnx::AttributeProto::SPARSE_TENSOR ||
        a.type() == onnx::AttributeProto::TENSORS)
      return ctx.unsupported("%s: attribute '%s' is a tensor; custom operators take int, float, string, ints and "
                             "floats attributes only (pass the tensor as a constant input instead)", what,
                             a.name().c_str());
  }
  Status st = ctx.copy_attrs(&n.attrs);
  if (!st.ok())
    return Status(st.code(), st.message() + " (custom operators take int, float, string, ints and floats attributes)");
  n.attrs.set_string("custom_type", ctx.op_type());
  n.attrs.set_string("custom_domain", domain);

  if (ctx.num_inputs() == 0) return ctx.unsupported("%s has no inputs; at least one is needed", what);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const int id = ctx.input(i);
    if (id < 0)
      return ctx.unsupported("%s: input %zu is empty; every input of a custom operator must be present", what, i);
    if (ctx.graph().tensor(id).dtype != DType::kF32)
      return ctx.unsupported("%s: input %zu ('%s') is %s; custom operators take float32 tensors only (insert a "
                             "Cast to float before it)", what, i,
                             ctx.graph().tensor(id).name.c_str(), dtype_name(ctx.graph().tensor(id).dtype));
    n.inputs.push_back(id);
  }
  const Shape first_shape = ctx.graph().tensor(n.inputs[0]).shape;

  if (ctx.num_outputs() == 0)
    return ctx.unsupported("%s has no outputs", what);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const std::string& value = ctx.node().output(static_cast<int>(i));
    Shape shape = first_shape;
    const onnx::ValueInfoProto* vi = value.empty() ? nullptr : ctx.value_info(value);
    if (vi && vi->type().has_tensor_type()) {
      const auto& tt = vi->type().tensor_type();
      if (tt.elem_type() != onnx::TensorProto::UNDEFINED && tt.elem_type() != onnx::TensorProto::FLOAT)
        return ctx.unsupported("%s: output %zu ('%s') is declared %s; custom operators produce float32 only "
                               "(declare it FLOAT in the model's value_info and cast after the operator if "
                               "needed)", what, i, value.c_str(), onnx_type_name(tt.elem_type()));
      if (tt.has_shape()) {
        Shape declared;  // -1: a symbolic or missing dim
        for (const auto& dim : tt.shape().dim())
          declared.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : -1);
        const bool fixed = std::find(declared.begin(), declared.end(), -1) == declared.end();
        bool agrees = declared.size() == first_shape.size();
        for (size_t d = 0; agrees && d < declared.size(); ++d) agrees = declared[d] < 0 || declared[d] == first_shape[d];
        if (fixed)
          shape = declared;
        else if (!agrees)
          return ctx.unsupported("%s: output %zu ('%s') is declared %s (-1: symbolic), which does not fit the "
                                 "first input's shape %s that the converter infers for it; declare every dim of the "
                                 "output with a fixed value in the model's value_info", what, i, value.c_str(),
                                 shape_str(declared).c_str(), shape_str(first_shape).c_str());
      }
    }
    int id;
    ORKNN_RETURN_IF_ERROR(ctx.output(i, &id));
    Tensor& t = ctx.graph().tensor(id);
    t.shape = shape;
    t.dtype = DType::kF32;
    n.outputs.push_back(id);
  }
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
