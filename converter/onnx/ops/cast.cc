// Cast keeps "to" as the ONNX enum. A cast to float16 stays one: its kernel rounds to fp16 values
// (kept in float32 storage), so pure-fp32 models see the precision loss the graph asks for.
// bfloat16 and double, which the IR computes as float32, become casts to float32; uint64 to int64.
#include "converter/onnx/mapper.h"
#include "converter/onnx/tensor_proto.h"

namespace orknn::onnx_import {

Status map_Cast(MapContext& ctx) {
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, OpId::Cast, &n));
  if (!n.attrs.has("to")) return ctx.error("attribute 'to' is missing");
  if (const auto* a = ctx.attr("to"); a && a->type() == onnx::AttributeProto::STRING) {
    // Cast-1..5 named the type ("FLOAT"); opset 6 made it the enum.
    onnx::TensorProto::DataType t;
    if (!onnx::TensorProto::DataType_Parse(a->s(), &t)) return ctx.error("'to' names no type: '%s'", a->s().c_str());
    n.attrs.set_int("to", t);
  }
  const int64_t to = n.attrs.get_int("to", 0);
  DType dt;
  if (!dtype_from_onnx(static_cast<int>(to), &dt))
    return ctx.unsupported("cast to %s is not supported", onnx_type_name(static_cast<int>(to)));
  switch (to) {
    case onnx::TensorProto::BFLOAT16: case onnx::TensorProto::DOUBLE:
      n.attrs.set_int("to", onnx::TensorProto::FLOAT);
      break;
    case onnx::TensorProto::UINT64:
      n.attrs.set_int("to", onnx::TensorProto::INT64);
      break;
    default:
      break;
  }
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
