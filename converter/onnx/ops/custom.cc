// A node of any domain other than "" / "ai.onnx" is an operator the application implements
// (rknn_custom_op.h): it becomes an IR Custom node carrying the ONNX op type and domain
// ("custom_type", "custom_domain") and the node's own attributes. The converter cannot compute
// it, so its output shapes come from the model (docs/custom_ops.md):
//   1. the ONNX graph's value_info or graph output entry for that value, when it gives a shape;
//   2. otherwise the shape of the node's first input.
// Every output is float32 (the callbacks see FP32 tensors).
#include "converter/onnx/mapper.h"
#include "converter/onnx/tensor_proto.h"

namespace orknn::onnx_import {

Status map_custom(MapContext& ctx) {
  const std::string& domain = ctx.node().domain();
  Node n;
  n.op = OpId::Custom;
  n.name = ctx.name();
  for (const auto& a : ctx.node().attribute()) {
    if (a.name() == "custom_type" || a.name() == "custom_domain")
      return ctx.unsupported("custom operator (domain '%s'): attribute name '%s' is reserved by OpenRKNN for the "
                             "operator's type and domain; rename the attribute", domain.c_str(), a.name().c_str());
    if (a.type() == onnx::AttributeProto::TENSOR || a.type() == onnx::AttributeProto::SPARSE_TENSOR ||
        a.type() == onnx::AttributeProto::TENSORS)
      return ctx.unsupported("custom operator (domain '%s'): attribute '%s' is a tensor; custom operators take int, "
                             "float, string, ints and floats attributes only (pass the tensor as a constant input "
                             "instead)", domain.c_str(), a.name().c_str());
  }
  Status st = ctx.copy_attrs(&n.attrs);
  if (!st.ok())
    return Status(st.code(), st.message() + " (custom operators take int, float, string, ints and floats attributes)");
  n.attrs.set_string("custom_type", ctx.op_type());
  n.attrs.set_string("custom_domain", domain);

  if (ctx.num_inputs() == 0) return ctx.unsupported("custom operator (domain '%s') has no inputs; at least one is needed",
                                                    domain.c_str());
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const int id = ctx.input(i);
    if (id < 0)
      return ctx.unsupported("custom operator (domain '%s'): input %zu is empty; every input of a custom operator "
                             "must be present", domain.c_str(), i);
    if (ctx.graph().tensor(id).dtype != DType::kF32)
      return ctx.unsupported("custom operator (domain '%s'): input %zu ('%s') is %s; custom operators take float32 "
                             "tensors only (insert a Cast to float before it)", domain.c_str(), i,
                             ctx.graph().tensor(id).name.c_str(), dtype_name(ctx.graph().tensor(id).dtype));
    n.inputs.push_back(id);
  }
  const Shape first_shape = ctx.graph().tensor(n.inputs[0]).shape;

  if (ctx.num_outputs() == 0)
    return ctx.unsupported("custom operator (domain '%s') has no outputs", domain.c_str());
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const std::string& value = ctx.node().output(static_cast<int>(i));
    Shape shape = first_shape;
    if (const onnx::ValueInfoProto* vi = value.empty() ? nullptr : ctx.value_info(value)) {
      if (vi->type().has_tensor_type()) {
        const auto& tt = vi->type().tensor_type();
        if (tt.elem_type() != onnx::TensorProto::UNDEFINED && tt.elem_type() != onnx::TensorProto::FLOAT)
          return ctx.unsupported("custom operator (domain '%s'): output %zu ('%s') is declared %s; custom operators "
                                 "produce float32 only (declare it FLOAT in the model's value_info and cast after "
                                 "the operator if needed)", domain.c_str(), i, value.c_str(),
                                 onnx_type_name(tt.elem_type()));
        if (tt.has_shape()) {
          shape.clear();
          for (int d = 0; d < tt.shape().dim_size(); ++d) {
            const auto& dim = tt.shape().dim(d);
            if (!dim.has_dim_value() || dim.dim_value() < 0)
              return ctx.unsupported("custom operator (domain '%s'): output %zu ('%s') has dynamic dim %d in the "
                                     "model's value_info; give every dim of a custom operator's outputs a fixed "
                                     "value", domain.c_str(), i, value.c_str(), d);
            shape.push_back(dim.dim_value());
          }
        }
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
