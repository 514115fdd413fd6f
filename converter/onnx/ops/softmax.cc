// Softmax / LogSoftmax. Before opset 13 the input is coerced to 2-D at `axis` (default 1): rows =
// prod(dims[:axis]), the softmax runs over prod(dims[axis:]). When axis is the last dim that is
// opset 13's per-axis softmax; otherwise we emit Reshape([rows, cols]) -> Softmax(axis=-1) ->
// Reshape(original shape).
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {

Status map_Softmax(MapContext& ctx) {
  const OpId op = ctx.op_type() == "LogSoftmax" ? OpId::LogSoftmax : OpId::Softmax;
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, op, &n));
  if (ctx.opset() >= 13) return ctx.emit(std::move(n));

  const Tensor* x = ctx.input_tensor(0);
  if (!x) return ctx.error("input 0 is missing");
  const Shape shape = x->shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = n.attrs.get_int("axis", 1);
  if (axis < -rank || axis > rank - (rank > 0 ? 1 : 0))
    return ctx.error("axis %lld is out of range for rank %lld", static_cast<long long>(axis), static_cast<long long>(rank));
  if (axis < 0) axis += rank;
  if (rank <= 1 || axis == rank - 1) {
    n.attrs.set_int("axis", rank <= 1 ? -1 : axis);
    return ctx.emit(std::move(n));
  }
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : cols) *= shape[static_cast<size_t>(d)];

  Node flat;
  flat.name = ctx.name() + "/flatten_2d";
  flat.op = OpId::Reshape;
  flat.inputs = {n.inputs[0], -1};
  flat.outputs = {ctx.new_tensor("flat")};
  flat.attrs.set_ints("shape", {rows, cols});
  flat.attrs.set_int("allowzero", 0);
  const int flat_out = flat.outputs[0];
  ORKNN_RETURN_IF_ERROR(ctx.emit(std::move(flat)));

  Node sm;
  sm.name = ctx.name();
  sm.op = op;
  sm.inputs = {flat_out};
  sm.outputs = {ctx.new_tensor("softmax_2d")};
  sm.attrs.set_int("axis", 1);
  const int sm_out = sm.outputs[0];
  ORKNN_RETURN_IF_ERROR(ctx.emit(std::move(sm)));

  Node back;
  back.name = ctx.name() + "/restore_shape";
  back.op = OpId::Reshape;
  back.inputs = {sm_out, -1};
  back.outputs = n.outputs;
  back.attrs.set_ints("shape", shape);
  back.attrs.set_int("allowzero", 0);
  return ctx.emit(std::move(back));
}

}  // namespace orknn::onnx_import
