// Constant nodes hold weights in some exporters (paddle2onnx writes all of them that way): they
// become graph constants, exactly like initializers. ConstantOfShape's TENSOR "value" becomes the
// IR's "value" (float) + "dtype" (DType) attributes.
#include <cstring>

#include "converter/onnx/mapper.h"
#include "converter/onnx/tensor_proto.h"

namespace orknn::onnx_import {

Status map_Constant(MapContext& ctx) {
  if (ctx.num_outputs() != 1) return ctx.error("Constant has %zu outputs, expected 1", ctx.num_outputs());
  if (ctx.node().attribute_size() != 1)
    return ctx.error("Constant needs exactly one of value, value_float(s), value_int(s); it has %d attributes",
                     ctx.node().attribute_size());
  const onnx::AttributeProto& a = ctx.node().attribute(0);
  const std::string& k = a.name();
  if (k == "value") {
    TensorBytes tb;
    ORKNN_RETURN_IF_ERROR(read_tensor_proto(a.t(), ctx.model_dir(), "node '" + ctx.name() + "' (Constant) value", &tb));
    return ctx.output_const(0, tb.shape, tb.dtype, tb.bytes.data(), tb.bytes.size());
  }
  if (k == "value_float") {
    float v = a.f();
    return ctx.output_const(0, {}, DType::kF32, &v, sizeof v);
  }
  if (k == "value_floats") {
    std::vector<float> v(a.floats().begin(), a.floats().end());
    return ctx.output_const(0, {static_cast<int64_t>(v.size())}, DType::kF32, v.data(), v.size() * sizeof(float));
  }
  if (k == "value_int") {
    int64_t v = a.i();
    return ctx.output_const(0, {}, DType::kI64, &v, sizeof v);
  }
  if (k == "value_ints") {
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    return ctx.output_const(0, {static_cast<int64_t>(v.size())}, DType::kI64, v.data(), v.size() * sizeof(int64_t));
  }
  if (k == "value_string" || k == "value_strings")
    return ctx.unsupported("string constants are not supported");
  if (k == "sparse_value") return ctx.unsupported("sparse constants are not supported");
  return ctx.error("unknown attribute '%s'", k.c_str());
}

Status map_ConstantOfShape(MapContext& ctx) {
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, OpId::ConstantOfShape, &n, {"value"}));
  float value = 0.f;
  DType dtype = DType::kF32;
  if (const onnx::AttributeProto* a = ctx.attr("value")) {
    TensorBytes tb;
    ORKNN_RETURN_IF_ERROR(read_tensor_proto(a->t(), ctx.model_dir(), "node '" + ctx.name() + "' value", &tb));
    if (shape_numel(tb.shape) != 1) return ctx.error("'value' must hold one element, it has %lld",
                                                     static_cast<long long>(shape_numel(tb.shape)));
    dtype = tb.dtype;
    const uint8_t* p = tb.bytes.data();
    switch (dtype) {
      case DType::kF32: { float v; std::memcpy(&v, p, 4); value = v; break; }
      case DType::kI64: { int64_t v; std::memcpy(&v, p, 8); value = static_cast<float>(v); break; }
      case DType::kI32: { int32_t v; std::memcpy(&v, p, 4); value = static_cast<float>(v); break; }
      case DType::kU32: { uint32_t v; std::memcpy(&v, p, 4); value = static_cast<float>(v); break; }
      case DType::kI16: { int16_t v; std::memcpy(&v, p, 2); value = v; break; }
      case DType::kU16: { uint16_t v; std::memcpy(&v, p, 2); value = v; break; }
      case DType::kI8: value = static_cast<int8_t>(p[0]); break;
      case DType::kU8: case DType::kBool: value = p[0]; break;
      default: return ctx.unsupported("'value' of type %s is not supported", dtype_name(dtype));
    }
  }
  n.attrs.set_float("value", value);
  n.attrs.set_int("dtype", static_cast<int64_t>(dtype));
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
