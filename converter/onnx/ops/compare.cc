// GreaterOrEqual(a, b) = Not(Less(a, b)); LessOrEqual(a, b) = Not(Greater(a, b)).
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {

Status map_OrEqual(MapContext& ctx) {
  const bool ge = ctx.op_type() == "GreaterOrEqual";
  if (ctx.input(0) < 0 || ctx.input(1) < 0) return ctx.error("needs two inputs");
  Node cmp;
  cmp.name = ctx.name() + (ge ? "/less" : "/greater");
  cmp.op = ge ? OpId::Less : OpId::Greater;
  cmp.inputs = {ctx.input(0), ctx.input(1)};
  cmp.outputs = {ctx.new_tensor(ge ? "less" : "greater")};
  const int t = cmp.outputs[0];
  ORKNN_RETURN_IF_ERROR(ctx.emit(std::move(cmp)));
  Node inv;
  inv.op = OpId::Not;
  inv.inputs = {t};
  int out;
  ORKNN_RETURN_IF_ERROR(ctx.output(0, &out));
  inv.outputs = {out};
  return ctx.emit(std::move(inv));
}

}  // namespace orknn::onnx_import
