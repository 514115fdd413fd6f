// Sum and Mean (variadic) as a chain of binary Adds (Mean: then times 1/n).
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {

Status map_Sum(MapContext& ctx) {
  const bool mean = ctx.op_type() == "Mean";
  std::vector<int> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i) < 0) return ctx.error("input %zu is missing", i);
    ins.push_back(ctx.input(i));
  }
  if (ins.empty()) return ctx.error("needs at least one input");
  int out;
  ORKNN_RETURN_IF_ERROR(ctx.output(0, &out));
  if (ins.size() == 1) {
    Node n;
    n.op = OpId::Identity;
    n.inputs = {ins[0]};
    n.outputs = {out};
    return ctx.emit(std::move(n));
  }
  int acc = ins[0];
  for (size_t i = 1; i < ins.size(); ++i) {
    const bool last = i + 1 == ins.size() && !mean;
    Node add;
    add.name = ctx.name() + (last ? "" : "/add" + std::to_string(i));
    add.op = OpId::Add;
    add.inputs = {acc, ins[i]};
    add.outputs = {last ? out : ctx.new_tensor("sum" + std::to_string(i))};
    acc = add.outputs[0];
    ORKNN_RETURN_IF_ERROR(ctx.emit(std::move(add)));
  }
  if (!mean) return Status::Ok();
  float inv = 1.f / static_cast<float>(ins.size());
  Node mul;
  mul.op = OpId::Mul;
  mul.inputs = {acc, ctx.new_const("inv_count", {}, DType::kF32, &inv, sizeof inv)};
  mul.outputs = {out};
  return ctx.emit(std::move(mul));
}

}  // namespace orknn::onnx_import
