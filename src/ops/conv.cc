// Conv and ConvTranspose: validation, attribute normalisation and shape inference.
//
// Normalised form (what kernels read): "kernel_shape", "strides", "dilations" (one per spatial
// dim), "pads" (begin..., end...), "group", "auto_pad" = "NOTSET"; ConvTranspose also
// "output_padding" (one per spatial dim) and never "output_shape" (it is turned into pads and
// output_padding). Fused activation attributes are validated and completed.
//
// Fused residual (Conv only, float only): an optional fourth input R of the output's shape, added
// after the bias and before the fused activation, y = act(conv(X, W) + B + R), with one fp16
// rounding of y in fp16 mode (docs/numerics.md). The converter writes it for Conv -> Add
// (graph/passes/fuse_conv_add.cc).
//
// Quantized form (docs/numerics.md, "Quantized (INT8) models"): X an int8 activation quantized per
// tensor, W int8 constant symmetric weights quantized per tensor or per output channel (Conv:
// axis 0; ConvTranspose: axis 1, only with group 1), B an int32 constant, the output quantized per
// tensor, and a fused activation that is absent, Relu or Clip. Mixed forms are refused.
//
// Every size-like attribute is bounded by kMaxDim before any arithmetic (see infer_util.h), so
// the output size formulas below cannot overflow whatever the model file holds.
#include <string>
#include <vector>

#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// Attributes common to Conv and ConvTranspose, checked against X and W.
struct ConvAttrs {
  size_t k = 0;  // spatial rank
  int64_t group = 1;
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
  bool same() const { return auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"; }
};

// Inputs X, W[, B] (all float32, or the quantized form: check_quantized_conv once the shapes are
// known), Conv's residual R (`max_inputs` 4) and the attributes shared by both ops.
Status read_conv(const Graph& g, const Node& n, size_t max_inputs, ConvAttrs* a) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 2, max_inputs, 1, 1, 2));
  if (has_input(n, 3)) {
    if (node_has_quant(g, n))
      return ORKNN_NODE_ERR(n, "a residual input (4th) is only supported on float convolutions, not quantized ones");
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 3, "R"));
  }
  if (!node_has_quant(g, n)) {
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 0, "X"));
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 1, "W"));
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 2, "B"));
  }
  const Tensor& x = *g.input(n, 0);
  const Tensor& w = *g.input(n, 1);
  if (x.shape.size() < 3)
    return ORKNN_NODE_ERR(n, "X must have rank >= 3 (N, C, spatial...), got %s", shape_str(x.shape).c_str());
  if (w.shape.size() != x.shape.size())
    return ORKNN_NODE_ERR(n, "W rank %zu differs from X rank %zu", w.shape.size(), x.shape.size());
  a->k = x.shape.size() - 2;
  if (a->k > 3) return ORKNN_NODE_ERR(n, "only 1 to 3 spatial dims are supported, X is %s", shape_str(x.shape).c_str());
  a->group = n.attrs.get_int("group", 1);
  if (a->group < 1 || a->group > kMaxDim)
    return ORKNN_NODE_ERR(n, "group must be in [1, %lld], got %lld", (long long)kMaxDim, (long long)a->group);
  for (int64_t d : w.shape)
    if (d < 1) return ORKNN_NODE_ERR(n, "W has an empty dimension: %s", shape_str(w.shape).c_str());
  const Shape wk(w.shape.begin() + 2, w.shape.end());
  if (n.attrs.has("kernel_shape") && n.attrs.get_ints("kernel_shape") != wk)
    return ORKNN_NODE_ERR(n, "kernel_shape %s does not match W %s", shape_str(n.attrs.get_ints("kernel_shape")).c_str(),
                          shape_str(w.shape).c_str());
  a->kernel = wk;
  ORKNN_RETURN_IF_ERROR(read_dims_attr(n, "strides", a->k, 1, 1, &a->strides));
  ORKNN_RETURN_IF_ERROR(read_dims_attr(n, "dilations", a->k, 1, 1, &a->dilations));
  a->auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (a->auto_pad != "NOTSET" && !a->same() && a->auto_pad != "VALID")
    return ORKNN_NODE_ERR(n, "unknown auto_pad '%s'", a->auto_pad.c_str());
  if (a->auto_pad == "NOTSET") {
    ORKNN_RETURN_IF_ERROR(read_dims_attr(n, "pads", 2 * a->k, 0, 0, &a->pads));
  } else {
    a->pads.assign(2 * a->k, 0);  // resolved by the caller; ONNX forbids pads together with auto_pad
  }
  return Status::Ok();
}

Status check_bias(const Graph& g, const Node& n, int64_t m) {
  const Tensor* b = g.input(n, 2);
  if (b && (b->shape.size() != 1 || b->shape[0] != m))
    return ORKNN_NODE_ERR(n, "bias B must have shape [%lld], got %s", (long long)m, shape_str(b->shape).c_str());
  return Status::Ok();
}

// The quantized form (see the file comment). `w_axis` is the output-channel axis of W on which
// per-channel parameters are allowed (-1: none), `axis_rule` says so in messages; `terms` is the
// number of products summed into one output.
Status check_quantized_conv(const Graph& g, const Node& n, int64_t w_axis, const char* axis_rule, int64_t terms) {
  if (!node_has_quant(g, n)) return Status::Ok();
  ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, 0));
  ORKNN_RETURN_IF_ERROR(check_q8_weights(g, n, 1, "W", w_axis, axis_rule));
  int64_t max_bias = 0;
  ORKNN_RETURN_IF_ERROR(check_i32_bias(g, n, 2, "B", &max_bias));
  ORKNN_RETURN_IF_ERROR(check_q8_output(g, n, 0));
  ORKNN_RETURN_IF_ERROR(check_q8_fused_act(n));
  return check_accumulator_range(n, terms, kMaxActWeightProduct, max_bias);
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

// Writes the normalised attributes and the output (int8 when quantized, else float32).
Status finish(Graph& g, Node& n, const ConvAttrs& a, const Shape& out) {
  ORKNN_RETURN_IF_ERROR(normalise_fused_act(n));
  n.attrs.set_ints("kernel_shape", a.kernel);
  n.attrs.set_ints("strides", a.strides);
  n.attrs.set_ints("dilations", a.dilations);
  n.attrs.set_ints("pads", a.pads);
  n.attrs.set_int("group", a.group);
  n.attrs.set_string("auto_pad", "NOTSET");
  return set_output(g, n, 0, out, output_dtype(g, n, 0, DType::kF32));
}

}  // namespace

Status infer_Conv(Graph& g, Node& n) {
  ConvAttrs a;
  ORKNN_RETURN_IF_ERROR(read_conv(g, n, 4, &a));
  const Shape& x = g.input(n, 0)->shape;
  const Shape& w = g.input(n, 1)->shape;
  const int64_t c = x[1], m = w[0];
  if (c % a.group != 0 || w[1] * a.group != c)
    return ORKNN_NODE_ERR(n, "X has %lld channels but W %s with group %lld expects %lld", (long long)c,
                          shape_str(w).c_str(), (long long)a.group, (long long)(w[1] * a.group));
  if (m % a.group != 0)
    return ORKNN_NODE_ERR(n, "output channels %lld not divisible by group %lld", (long long)m, (long long)a.group);
  ORKNN_RETURN_IF_ERROR(check_bias(g, n, m));
  // W holds at most kMaxElements values: w[1] times the taps cannot overflow.
  ORKNN_RETURN_IF_ERROR(check_quantized_conv(g, n, 0, "Conv weights are quantized per output channel along axis 0",
                                             w[1] * product(a.kernel)));

  Shape out = {x[0], m};
  for (size_t i = 0; i < a.k; ++i) {
    const int64_t in = x[2 + i], s = a.strides[i];
    const int64_t eff = (a.kernel[i] - 1) * a.dilations[i] + 1;  // dilated kernel extent
    if (a.same()) same_padding(a.auto_pad, in, s, eff, &a.pads[i], &a.pads[a.k + i]);
    const int64_t span = in + a.pads[i] + a.pads[a.k + i] - eff;
    if (in < 1 || span < 0)
      return ORKNN_NODE_ERR(n,
                            "spatial dim %zu: input %lld with pads %lld+%lld is smaller than the dilated kernel %lld",
                            i, (long long)in, (long long)a.pads[i], (long long)a.pads[a.k + i], (long long)eff);
    out.push_back(span / s + 1);
  }
  if (has_input(n, 3) && g.input(n, 3)->shape != out)
    return ORKNN_NODE_ERR(n, "residual R must have the output's shape %s, got %s", shape_str(out).c_str(),
                          shape_str(g.input(n, 3)->shape).c_str());
  return finish(g, n, a, out);
}

Status infer_ConvTranspose(Graph& g, Node& n) {
  ConvAttrs a;
  ORKNN_RETURN_IF_ERROR(read_conv(g, n, 3, &a));
  const Shape& x = g.input(n, 0)->shape;
  const Shape& w = g.input(n, 1)->shape;
  // W is [C, M / group, k...].
  const int64_t c = x[1];
  if (w[0] != c)
    return ORKNN_NODE_ERR(n, "X has %lld channels but W %s expects %lld", (long long)c, shape_str(w).c_str(),
                          (long long)w[0]);
  if (c % a.group != 0)
    return ORKNN_NODE_ERR(n, "input channels %lld not divisible by group %lld", (long long)c, (long long)a.group);
  const int64_t m = w[1] * a.group;
  ORKNN_RETURN_IF_ERROR(check_bias(g, n, m));
  // Axis 1 of W holds M / group channels: one scale per output channel only when group is 1.
  ORKNN_RETURN_IF_ERROR(check_quantized_conv(
      g, n, a.group == 1 ? 1 : -1,
      "ConvTranspose weights are quantized per output channel along axis 1 when group is 1, else per tensor",
      (c / a.group) * product(a.kernel)));

  std::vector<int64_t> out_pad;
  ORKNN_RETURN_IF_ERROR(read_dims_attr(n, "output_padding", a.k, 0, 0, &out_pad));
  std::vector<int64_t> target;  // requested spatial output size, empty = from pads
  if (n.attrs.has("output_shape")) {
    target = n.attrs.get_ints("output_shape");
    if (target.size() == a.k + 2) target.erase(target.begin(), target.begin() + 2);  // full N,C,... form
    if (target.size() != a.k)
      return ORKNN_NODE_ERR(n, "output_shape has %zu values, expected %zu", n.attrs.get_ints("output_shape").size(),
                            a.k);
    ORKNN_RETURN_IF_ERROR(check_values_in(n, "output_shape", target, 1, kMaxDim));
  } else if (a.same()) {
    for (size_t i = 0; i < a.k; ++i) target.push_back(x[2 + i] * a.strides[i]);
  }

  Shape out = {x[0], m};
  for (size_t i = 0; i < a.k; ++i) {
    const int64_t in = x[2 + i], s = a.strides[i];
    if (in < 1) return ORKNN_NODE_ERR(n, "spatial dim %zu of X is empty", i);
    const int64_t eff = (a.kernel[i] - 1) * a.dilations[i] + 1;
    // Each term is below 2^62 (bounded factors), but their sum could reach 2^63: check first.
    if (s * (in - 1) > kMaxElements || eff > kMaxElements)
      return ORKNN_NODE_ERR(n,
                            "spatial dim %zu: stride %lld x (input %lld - 1) or the dilated kernel %lld exceeds %lld",
                            i, (long long)s, (long long)in, (long long)eff, (long long)kMaxElements);
    int64_t full = s * (in - 1) + out_pad[i] + eff;  // output size before removing pads
    if (!target.empty()) {
      int64_t total = full - target[i];
      if (total < 0) {
        // A larger output than the full one: ORT keeps pads at 0 and extends at the end, which
        // is what extra output_padding does.
        out_pad[i] += -total;
        full = target[i];
        total = 0;
      }
      // ONNX: SAME_UPPER puts the odd pixel at the end, everything else at the beginning.
      split_padding(a.auto_pad, total, &a.pads[i], &a.pads[a.k + i]);
    }
    const int64_t o = full - a.pads[i] - a.pads[a.k + i];
    if (o < 1)
      return ORKNN_NODE_ERR(n, "spatial dim %zu: pads %lld+%lld remove the whole output (%lld)", i,
                            (long long)a.pads[i], (long long)a.pads[a.k + i], (long long)full);
    out.push_back(o);
  }
  n.attrs.set_ints("output_padding", out_pad);
  n.attrs.erase("output_shape");
  return finish(g, n, a, out);
}

}  // namespace orknn
