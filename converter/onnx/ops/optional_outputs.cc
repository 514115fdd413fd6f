// Ops whose extra ONNX outputs the IR does not produce: MaxPool's Indices and
// LayerNormalization's Mean/InvStdDev (training helpers). A node reading them gets a clear error.
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

Status map_LayerNormalization(MapContext& ctx) {
  return first_output_only(ctx, OpId::LayerNormalization,
                           "LayerNormalization's Mean/InvStdDev outputs are not supported");
}

}  // namespace orknn::onnx_import
