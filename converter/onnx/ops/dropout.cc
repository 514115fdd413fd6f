// Dropout at inference is the identity. The mask output (all true at inference) becomes a constant.
// So is training-mode Dropout with ratio 0, which keeps every element (torchvision's Swin exports
// its attention dropout that way).
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {

Status map_Dropout(MapContext& ctx) {
  if (ctx.input(2) >= 0) {
    const Tensor* training = ctx.const_input(2);
    if (!training)
      return ctx.unsupported("training_mode must be a constant (false); a run-time training flag is not supported");
    const Tensor* ratio = ctx.const_input(1);
    const bool zero_ratio = ratio && ratio->dtype == DType::kF32 && ratio->numel() == 1 && ratio->const_ptr<float>()[0] == 0.f;
    if (training->numel() >= 1 && training->data.ptr[0] != 0 && !zero_ratio)
      return ctx.unsupported("training_mode is true; export the model in eval mode");
  }
  if (const auto* a = ctx.attr("is_test"); a && a->i() == 0 && ctx.opset() < 7)
    return ctx.unsupported("is_test=0 (training) is not supported");
  Node n;
  n.name = ctx.name();
  n.op = OpId::Identity;
  n.inputs = {ctx.input(0)};
  int out;
  ORKNN_RETURN_IF_ERROR(ctx.output(0, &out));
  n.outputs = {out};
  const Tensor* x = ctx.input_tensor(0);
  if (!x) return ctx.error("input 0 is missing");
  if (ctx.num_outputs() > 1 && !ctx.node().output(1).empty()) {
    const Shape shape = x->shape;  // copied: adding the mask tensor may move the tensor array
    std::vector<uint8_t> ones(static_cast<size_t>(shape_numel(shape)), 1);
    ORKNN_RETURN_IF_ERROR(ctx.output_const(1, shape, DType::kBool, ones.data(), ones.size()));
  }
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
