// Split. Opset < 13: "split" attribute (the IR's form); 13+: "split" input (infer moves it);
// 18+: "num_outputs" instead of "split" (chunks of ceil(dim / n), the last one smaller). Without
// either, the dim is split evenly into one chunk per output. The mapper makes the sizes explicit
// whenever they are not given, because they depend on the input shape known only here.
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {

Status map_Split(MapContext& ctx) {
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, OpId::Split, &n, {"num_outputs"}));
  // Every output gets a tensor, named or not: the output count defines the split.
  n.outputs.clear();
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    int id;
    ORKNN_RETURN_IF_ERROR(ctx.output(i, &id));
    n.outputs.push_back(id);
  }
  const bool has_split = n.attrs.has("split") || ctx.input(1) >= 0;
  if (has_split) return ctx.emit(std::move(n));

  const Tensor* x = ctx.input_tensor(0);
  if (!x) return ctx.error("input 0 is missing");
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = n.attrs.get_int("axis", 0);
  if (axis < -rank || axis >= rank)
    return ctx.error("axis %lld is out of range for rank %lld", static_cast<long long>(axis), static_cast<long long>(rank));
  if (axis < 0) axis += rank;
  const int64_t dim = x->shape[static_cast<size_t>(axis)];
  int64_t parts = static_cast<int64_t>(n.outputs.size());
  if (const auto* a = ctx.attr("num_outputs")) {
    if (a->i() != parts)
      return ctx.error("num_outputs is %lld but the node has %lld outputs", static_cast<long long>(a->i()),
                       static_cast<long long>(parts));
  }
  if (parts <= 0) return ctx.error("Split has no outputs");
  if (ctx.opset() < 18 && dim % parts != 0)
    return ctx.error("dim %lld of size %lld cannot be split evenly into %lld outputs", static_cast<long long>(axis),
                     static_cast<long long>(dim), static_cast<long long>(parts));
  const int64_t chunk = (dim + parts - 1) / parts;
  std::vector<int64_t> sizes;
  int64_t left = dim;
  for (int64_t i = 0; i < parts; ++i) {
    int64_t s = std::min(chunk, left);
    sizes.push_back(s);
    left -= s;
  }
  n.attrs.set_ints("split", sizes);
  n.attrs.set_int("axis", axis);
  n.inputs.resize(1);
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
