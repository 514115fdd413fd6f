// LSTM, GRU and RNN: one to one, except the "activations" attribute, a list of strings, which the
// IR keeps as one comma-separated string (src/ops/recurrent.cc checks and normalises it).
#include "converter/onnx/mapper.h"
#include "kernels/ref/recurrent_activation.h"

namespace orknn::onnx_import {

Status map_Recurrent(MapContext& ctx) {
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, find_op(ctx.op_type())->id, &n, {"activations"}));
  if (const onnx::AttributeProto* a = ctx.attr("activations")) {
    if (a->type() != onnx::AttributeProto::STRINGS)
      return ctx.error("attribute 'activations' must be a list of strings");
    n.attrs.set_string("activations", join_rnn_activations({a->strings().begin(), a->strings().end()}));
  }
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
