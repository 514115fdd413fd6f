// Extra ONNX outputs the IR's op does not produce. MaxPool's Indices: a node reading them gets a
// clear error. LayerNormalization's Mean and InvStdDev (training helpers, rarely read at inference):
// computed beside the op by IR nodes when the model names them.
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {
namespace {

Status first_output_only(MapContext& ctx, OpId op, const char* why) {
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, op, &n, {}, 1));
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.mark_unavailable(i, why);
  return ctx.emit(std::move(n));
}

}  // namespace

Status map_MaxPool(MapContext& ctx) {
  return first_output_only(ctx, OpId::MaxPool, "MaxPool's Indices output is not supported");
}

// Mean = ReduceMean(X) and InvStdDev = 1 / sqrt(ReduceMean((X - Mean)^2) + epsilon) over the axes
// from `axis` on, dims kept, as ONNX defines them (in float32, the stash type).
Status map_LayerNormalization(MapContext& ctx) {
  const bool mean_out = ctx.num_outputs() > 1 && !ctx.node().output(1).empty();
  const bool inv_out = ctx.num_outputs() > 2 && !ctx.node().output(2).empty();
  const Tensor* x = ctx.input_tensor(0);
  if ((mean_out || inv_out) && x) {
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    int64_t axis = 0;
    if (const auto* a = ctx.attr("axis")) axis = a->i();
    else axis = -1;
    if (axis < -rank || axis >= rank)
      return ctx.error("axis %lld is out of range for rank %lld", static_cast<long long>(axis), static_cast<long long>(rank));
    if (axis < 0) axis += rank;
    std::vector<int64_t> axes;
    for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
    auto node = [&](OpId op, std::vector<int> ins, int out) {
      Node n;
      n.name = ctx.name() + "/" + op_name(op);
      n.op = op;
      n.inputs = std::move(ins);
      n.outputs = {out};
      if (op == OpId::ReduceMean) {
        n.attrs.set_ints("axes", axes);
        n.attrs.set_int("keepdims", 1);
      }
      return n;
    };
    int mean = -1, inv = -1;
    if (mean_out) ORKNN_RETURN_IF_ERROR(ctx.output(1, &mean));
    else mean = ctx.new_tensor("mean");
    ORKNN_RETURN_IF_ERROR(ctx.emit(node(OpId::ReduceMean, {ctx.input(0)}, mean)));
    if (inv_out) {
      const float eps = ctx.attr("epsilon") ? ctx.attr("epsilon")->f() : 1e-5f;
      const int diff = ctx.new_tensor("centered"), sq = ctx.new_tensor("squared"), var = ctx.new_tensor("variance");
      const int eps_t = ctx.new_const("epsilon", {}, DType::kF32, &eps, sizeof(eps));
      const int shifted = ctx.new_tensor("variance_eps"), sd = ctx.new_tensor("stddev");
      ORKNN_RETURN_IF_ERROR(ctx.output(2, &inv));
      ORKNN_RETURN_IF_ERROR(ctx.emit(node(OpId::Sub, {ctx.input(0), mean}, diff)));
      ORKNN_RETURN_IF_ERROR(ctx.emit(node(OpId::Mul, {diff, diff}, sq)));
      ORKNN_RETURN_IF_ERROR(ctx.emit(node(OpId::ReduceMean, {sq}, var)));
      ORKNN_RETURN_IF_ERROR(ctx.emit(node(OpId::Add, {var, eps_t}, shifted)));
      ORKNN_RETURN_IF_ERROR(ctx.emit(node(OpId::Sqrt, {shifted}, sd)));
      ORKNN_RETURN_IF_ERROR(ctx.emit(node(OpId::Reciprocal, {sd}, inv)));
    }
  }
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, OpId::LayerNormalization, &n, {}, 1));
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
