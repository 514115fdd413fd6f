// BatchNormalization, inference form only. Opsets 1-8's "spatial" (1 = per channel, the only
// layout the IR has) and "momentum" (training only) are dropped; the running-statistics outputs
// exist only in training mode.
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {

Status map_BatchNormalization(MapContext& ctx) {
  if (const auto* a = ctx.attr("spatial"); a && a->i() == 0)
    return ctx.unsupported("spatial=0 (statistics per element, not per channel) is not supported");
  if (const auto* a = ctx.attr("is_test"); a && a->i() == 0 && ctx.opset() < 7)
    return ctx.unsupported("is_test=0 (training) is not supported; export the model in eval mode");
  if (const auto* a = ctx.attr("training_mode"); a && a->i() != 0)
    return ctx.unsupported("training_mode=1 is not supported; export the model in eval mode");
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, OpId::BatchNormalization, &n, {"spatial", "momentum", "training_mode", "is_test"}, 1));
  for (size_t i = 1; i < ctx.num_outputs(); ++i)
    ctx.mark_unavailable(i, "training-mode statistics of BatchNormalization are not supported");
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
