// Ops computed from what the converter already knows: Size (the element count of a statically
// shaped tensor) becomes a constant; CastLike becomes Cast to the second input's type;
// ReduceSumSquare becomes Mul(x, x) -> ReduceSum.
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {
namespace {

int onnx_type_of(DType t) {
  switch (t) {
    case DType::kF32: case DType::kF16: return onnx::TensorProto::FLOAT;  // float16 is computed as float32
    case DType::kU8: return onnx::TensorProto::UINT8;
    case DType::kI8: return onnx::TensorProto::INT8;
    case DType::kU16: return onnx::TensorProto::UINT16;
    case DType::kI16: return onnx::TensorProto::INT16;
    case DType::kI32: return onnx::TensorProto::INT32;
    case DType::kU32: return onnx::TensorProto::UINT32;
    case DType::kI64: return onnx::TensorProto::INT64;
    case DType::kBool: return onnx::TensorProto::BOOL;
  }
  return onnx::TensorProto::UNDEFINED;
}

}  // namespace

Status map_Size(MapContext& ctx) {
  const Tensor* x = ctx.input_tensor(0);
  if (!x) return ctx.error("input 0 is missing");
  int64_t n = x->numel();
  return ctx.output_const(0, {}, DType::kI64, &n, sizeof n);
}

Status map_CastLike(MapContext& ctx) {
  const Tensor* like = ctx.input_tensor(1);
  if (!like) return ctx.error("input 1 (target_type) is missing");
  Node n;
  n.op = OpId::Cast;
  ORKNN_RETURN_IF_ERROR(ctx.copy_attrs(&n.attrs));
  n.attrs.set_int("to", onnx_type_of(like->dtype));
  n.inputs = {ctx.input(0)};
  int out;
  ORKNN_RETURN_IF_ERROR(ctx.output(0, &out));
  n.outputs = {out};
  return ctx.emit(std::move(n));
}

Status map_ReduceSumSquare(MapContext& ctx) {
  Node sum;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, OpId::ReduceSum, &sum));
  if (sum.inputs.empty() || sum.inputs[0] < 0) return ctx.error("input 0 is missing");
  Node sq;
  sq.name = ctx.name() + "/square";
  sq.op = OpId::Mul;
  sq.inputs = {sum.inputs[0], sum.inputs[0]};
  sq.outputs = {ctx.new_tensor("square")};
  sum.inputs[0] = sq.outputs[0];
  ORKNN_RETURN_IF_ERROR(ctx.emit(std::move(sq)));
  return ctx.emit(std::move(sum));
}

}  // namespace orknn::onnx_import
