// Opsets 1-6: the forms that opset 7 and later changed, rewritten into the IR's (opset-21) forms.
// Everything else in those opsets means what it means today (ONNX kept the op versions), apart
// from "consumed_inputs" (opsets 1-5), a memory-reuse hint that copy_attrs drops.
#include "converter/onnx/mapper.h"
#include "ops/op.h"

namespace orknn::onnx_import {

// Add, Sub, Mul, Div, Pow, Equal, Greater, Less. Before opset 7 a binary op broadcast only with
// broadcast=1, lining B's dims up with A's from `axis` on (default: B's trailing dims, as numpy
// does); without it the shapes must be equal. B is reshaped with trailing 1s so that numpy
// broadcasting lines it up the same way.
Status map_LegacyBroadcast(MapContext& ctx) {
  if (ctx.opset() >= 7) return map_default(ctx);
  const OpDef* def = find_op(ctx.op_type());
  if (!def) return ctx.unsupported("op not supported by OpenRKNN yet; see docs/ops.md");
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, def->id, &n, {"broadcast", "axis"}));
  const Tensor* a = ctx.input_tensor(0);
  const Tensor* b = ctx.input_tensor(1);
  if (!a || !b) return ctx.error("two inputs are required");
  const Shape as = a->shape, bs = b->shape;  // copies: adding tensors may move the tensor array
  const auto* bc = ctx.attr("broadcast");
  if (!bc || bc->i() == 0) {
    if (as != bs)
      return ctx.error("inputs %s and %s differ in shape without broadcast=1 (opset %d)", shape_str(as).c_str(),
                       shape_str(bs).c_str(), ctx.opset());
    return ctx.emit(std::move(n));
  }
  const int64_t ra = static_cast<int64_t>(as.size()), rb = static_cast<int64_t>(bs.size());
  int64_t axis = ra - rb;
  if (const auto* ax = ctx.attr("axis")) axis = ax->i() < 0 ? ax->i() + ra : ax->i();
  if (axis < 0 || axis + rb > ra)
    return ctx.error("axis %lld does not fit B %s into A %s", static_cast<long long>(axis), shape_str(bs).c_str(),
                     shape_str(as).c_str());
  if (axis + rb < ra) {
    Node r;
    r.name = ctx.name() + "/legacy_broadcast";
    r.op = OpId::Reshape;
    Shape dims = bs;
    dims.resize(static_cast<size_t>(ra - axis), 1);
    r.attrs.set_ints("shape", dims);
    r.inputs = {n.inputs[1]};
    r.outputs = {ctx.new_tensor("legacy_broadcast")};
    n.inputs[1] = r.outputs[0];
    ORKNN_RETURN_IF_ERROR(ctx.emit(std::move(r)));
  }
  return ctx.emit(std::move(n));
}

// Concat before opset 4: "axis" was optional, default 1.
Status map_Concat(MapContext& ctx) {
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, OpId::Concat, &n));
  if (ctx.opset() < 4 && !n.attrs.has("axis")) n.attrs.set_int("axis", 1);
  return ctx.emit(std::move(n));
}

// Pad-1 named its pads "paddings".
Status map_Pad(MapContext& ctx) {
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, OpId::Pad, &n, {"paddings"}));
  if (const auto* p = ctx.attr("paddings"); p && ctx.opset() < 2)
    n.attrs.set_ints("pads", {p->ints().begin(), p->ints().end()});
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
