// Upsample (opset 1-9) and Resize. The IR's Resize has opset-21 semantics with explicit "scales".
// Upsample and Resize-10 compute x_in = x_out / scale (asymmetric); their "nearest" takes the
// floor when upsampling and the ceiling when downsampling (ONNX Runtime's behaviour for these
// opsets), which opset 11+ expresses as nearest_mode floor/ceil.
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {
namespace {

Status read_scales(MapContext& ctx, size_t input, std::vector<float>* scales) {
  const Tensor* t = ctx.const_input(input);
  if (!t)
    return ctx.unsupported("scales (input %zu) must be constant (or computable from constants and input shapes)",
                           input);
  if (t->dtype != DType::kF32) return ctx.error("scales must be float, got %s", dtype_name(t->dtype));
  scales->assign(t->const_ptr<float>(), t->const_ptr<float>() + t->numel());
  return Status::Ok();
}

// Upsample-7..9 / Resize-10 -> Resize with explicit attributes.
Status emit_legacy(MapContext& ctx, const std::vector<float>& scales) {
  Node n;
  n.name = ctx.name();
  n.op = OpId::Resize;
  std::string mode = "nearest";
  if (const auto* a = ctx.attr("mode")) mode = a->s();
  if (mode == "bilinear") mode = "linear";  // spelling used by some old exporters
  if (mode != "nearest" && mode != "linear") return ctx.unsupported("mode '%s' is not supported", mode.c_str());
  bool down = false;
  for (float s : scales) {
    if (!(s > 0.f)) return ctx.error("scales must be positive");
    down |= s < 1.f;
  }
  n.attrs.set_string("mode", mode);
  n.attrs.set_string("coordinate_transformation_mode", "asymmetric");
  n.attrs.set_string("nearest_mode", down ? "ceil" : "floor");
  n.attrs.set_floats("scales", scales);
  n.inputs = {ctx.input(0)};
  int out;
  ORKNN_RETURN_IF_ERROR(ctx.output(0, &out));
  n.outputs = {out};
  return ctx.emit(std::move(n));
}

}  // namespace

Status map_Upsample(MapContext& ctx) {
  std::vector<float> scales;
  if (ctx.opset() < 7) {  // Upsample-1: NCHW only, the two spatial scales
    const auto* h = ctx.attr("height_scale");
    const auto* w = ctx.attr("width_scale");
    if (!h || !w) return ctx.error("attributes 'height_scale' and 'width_scale' are required");
    scales = {1.f, 1.f, h->f(), w->f()};
  } else if (ctx.opset() < 9) {
    const auto* a = ctx.attr("scales");
    if (!a) return ctx.error("attribute 'scales' is missing");
    scales.assign(a->floats().begin(), a->floats().end());
  } else {
    ORKNN_RETURN_IF_ERROR(read_scales(ctx, 1, &scales));
  }
  return emit_legacy(ctx, scales);
}

Status map_Resize(MapContext& ctx) {
  if (ctx.opset() < 11) {
    std::vector<float> scales;
    ORKNN_RETURN_IF_ERROR(read_scales(ctx, 1, &scales));
    return emit_legacy(ctx, scales);
  }
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, OpId::Resize, &n));
  n.inputs.resize(4, -1);
  // roi only matters for tf_crop_and_resize; empty scales/sizes mean "not given".
  if (n.attrs.get_string("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize") n.inputs[1] = -1;
  for (size_t i = 1; i < 4; ++i) {
    const Tensor* t = ctx.const_input(i);
    if (n.inputs[i] >= 0 && t && t->numel() == 0) n.inputs[i] = -1;
  }
  while (n.inputs.size() > 1 && n.inputs.back() < 0) n.inputs.pop_back();
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
