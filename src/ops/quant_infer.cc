#include "ops/quant_infer.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/ref/int8_compute.h"

namespace orknn {
namespace {

std::string params_str(const QuantParams& q) {
  if (q.empty()) return "no quantization parameters";
  if (q.scale.size() == 1)
    return strfmt("scale %.9g zero point %d", q.scale[0], q.zero_point.empty() ? 0 : q.zero_point[0]);
  return strfmt("%zu per-axis scales", q.scale.size());
}

}  // namespace

// ---- quantized tensors and nodes ----

bool node_has_quant(const Graph& g, const Node& n) {
  for (int id : n.inputs)
    if (id >= 0 && static_cast<size_t>(id) < g.tensors.size() && !g.tensor(id).quant.empty()) return true;
  for (int id : n.outputs)
    if (id >= 0 && static_cast<size_t>(id) < g.tensors.size() && !g.tensor(id).quant.empty()) return true;
  return false;
}

bool same_quant(const QuantParams& a, const QuantParams& b) {
  if (a.scale.size() != b.scale.size() || a.zero_point.size() != b.zero_point.size()) return false;
  for (size_t i = 0; i < a.scale.size(); ++i)
    if (std::memcmp(&a.scale[i], &b.scale[i], sizeof(float)) != 0) return false;
  if (a.zero_point != b.zero_point) return false;
  return a.scale.size() <= 1 || a.axis == b.axis;
}

Status check_quant_params(const Node& n, const Tensor& t, const char* what, bool allow_per_axis) {
  const QuantParams& q = t.quant;
  if (q.scale.empty())
    return ORKNN_NODE_ERR(n, "%s ('%s') is %s but has no quantization parameters", what, t.name.c_str(), dtype_name(t.dtype));
  if (q.zero_point.size() != q.scale.size())
    return ORKNN_NODE_ERR(n, "%s ('%s'): %zu scales but %zu zero points", what, t.name.c_str(), q.scale.size(),
                          q.zero_point.size());
  if (q.scale.size() > 1) {
    if (!allow_per_axis)
      return ORKNN_NODE_ERR(n, "%s ('%s') must be quantized per tensor, has %zu scales", what, t.name.c_str(),
                            q.scale.size());
    if (q.axis < 0 || static_cast<size_t>(q.axis) >= t.shape.size() ||
        t.shape[static_cast<size_t>(q.axis)] != static_cast<int64_t>(q.scale.size()))
      return ORKNN_NODE_ERR(n, "%s ('%s' %s): %zu scales do not match axis %d", what, t.name.c_str(),
                            shape_str(t.shape).c_str(), q.scale.size(), q.axis);
  }
  for (size_t i = 0; i < q.scale.size(); ++i) {
    if (!(q.scale[i] > 0.f) || !std::isfinite(q.scale[i]))
      return ORKNN_NODE_ERR(n, "%s ('%s'): scale %g is not a finite positive number", what, t.name.c_str(), q.scale[i]);
    const bool int32_data = t.dtype == DType::kI32;  // bias: zero point 0, any int32
    if (int32_data ? q.zero_point[i] != 0 : (q.zero_point[i] < -128 || q.zero_point[i] > 127))
      return ORKNN_NODE_ERR(n, "%s ('%s'): zero point %d is out of range for %s", what, t.name.c_str(),
                            q.zero_point[i], dtype_name(t.dtype));
  }
  return Status::Ok();
}

DType output_dtype(const Graph& g, const Node& n, size_t i, DType dtype) {
  if (!has_output(n, i)) return dtype;
  return g.tensor(n.outputs[i]).quant.empty() ? dtype : DType::kI8;
}

// ---- activations (int8, per tensor) ----

Status check_not_quantized(const Graph& g, const Node& n, const char* why) {
  if (!node_has_quant(g, n)) return Status::Ok();
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Tensor* t = g.input(n, i);
    if (t && !t->quant.empty())
      return ORKNN_NODE_ERR(n, "quantized input %zu ('%s') is not supported%s%s", i, t->name.c_str(), why ? ": " : "",
                            why ? why : "");
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (!has_output(n, i)) continue;
    const Tensor& t = g.tensor(n.outputs[i]);
    if (!t.quant.empty())
      return ORKNN_NODE_ERR(n, "quantized output %zu ('%s') is not supported%s%s", i, t.name.c_str(), why ? ": " : "",
                            why ? why : "");
  }
  return Status::Ok();
}

Status check_q8_input(const Graph& g, const Node& n, size_t i) {
  const Tensor* t = g.input(n, i);
  if (!t) return ORKNN_NODE_ERR(n, "input %zu is missing", i);
  if (t->dtype != DType::kI8 || t->quant.empty())
    return ORKNN_NODE_ERR(n, "quantized node: input %zu ('%s') must be a quantized int8 tensor, got %s with %s", i,
                          t->name.c_str(), dtype_name(t->dtype), params_str(t->quant).c_str());
  const std::string what = strfmt("input %zu", i);
  return check_quant_params(n, *t, what.c_str(), false);
}

Status check_q8_output(const Graph& g, const Node& n, size_t i) {
  if (!has_output(n, i)) return ORKNN_NODE_ERR(n, "output %zu is missing", i);
  const Tensor& t = g.tensor(n.outputs[i]);
  if (t.quant.empty())
    return ORKNN_NODE_ERR(n, "quantized node: output %zu ('%s') has no quantization parameters", i, t.name.c_str());
  const std::string what = strfmt("output %zu", i);
  return check_quant_params(n, t, what.c_str(), false);
}

// ---- data movement ----

Status check_quant_passthrough(const Graph& g, const Node& n, size_t data) {
  if (!node_has_quant(g, n)) return Status::Ok();
  ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, data));
  const Tensor& x = *g.input(n, data);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Tensor* t = g.input(n, i);
    if (i != data && t && !t->quant.empty())
      return ORKNN_NODE_ERR(n, "input %zu ('%s') must not be quantized (only the data input is)", i, t->name.c_str());
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (!has_output(n, i)) continue;
    const Tensor& y = g.tensor(n.outputs[i]);
    if (!same_quant(x.quant, y.quant))
      return ORKNN_NODE_ERR(n,
                            "output %zu ('%s') has %s but input '%s' has %s; this op moves int8 values unchanged, "
                            "so they must be equal",
                            i, y.name.c_str(), params_str(y.quant).c_str(), x.name.c_str(),
                            params_str(x.quant).c_str());
  }
  return Status::Ok();
}

// ---- compute ops ----

Status check_q8_weights(const Graph& g, const Node& n, size_t i, const char* role, int64_t channel_axis,
                        const char* axis_rule) {
  const Tensor* t = g.input(n, i);
  if (!t) return ORKNN_NODE_ERR(n, "quantized node: weights %s are missing", role);
  if (t->dtype != DType::kI8 || !t->is_const())
    return ORKNN_NODE_ERR(n, "quantized node: weights %s ('%s') must be an int8 constant, got a %s %s tensor", role,
                          t->name.c_str(), t->is_const() ? "constant" : "non-constant", dtype_name(t->dtype));
  const std::string what = strfmt("weights %s", role);
  ORKNN_RETURN_IF_ERROR(check_quant_params(n, *t, what.c_str(), /*allow_per_axis=*/true));
  const QuantParams& q = t->quant;
  if (q.scale.size() > 1 && q.axis != channel_axis)
    return ORKNN_NODE_ERR(n, "weights %s ('%s' %s) have per-axis parameters on axis %d; %s", role, t->name.c_str(),
                          shape_str(t->shape).c_str(), q.axis, axis_rule);
  for (int32_t zp : q.zero_point)
    if (zp != 0)
      return ORKNN_NODE_ERR(n, "weights %s ('%s') have zero point %d; quantized weights are symmetric (zero point 0)",
                            role, t->name.c_str(), zp);
  if (t->data.size < t->nbytes())
    return ORKNN_NODE_ERR(n, "weights %s ('%s'): %zu bytes of data for %lld elements", role, t->name.c_str(),
                          t->data.size, (long long)t->numel());
  // memchr: this scan runs at every init, for every kernel that considers the node (resnet50: 25 M
  // weights), and a byte loop with an early exit is not vectorised.
  const void* bad = std::memchr(t->data.ptr, 0x80, static_cast<size_t>(t->numel()));
  if (bad)
    return ORKNN_NODE_ERR(n, "weights %s ('%s') hold -128 at element %lld; quantized weights lie in [-127, 127]",
                          role, t->name.c_str(),
                          (long long)(static_cast<const uint8_t*>(bad) - static_cast<const uint8_t*>(t->data.ptr)));
  return Status::Ok();
}

bool is_q8_conv_form(const Graph& g, const Node& n, int64_t out_channels, int64_t weight_axis, bool value_act) {
  if (!check_q8_input(g, n, 0).ok() || !check_q8_output(g, n, 0).ok()) return false;
  if (!check_q8_weights(g, n, 1, "weights", weight_axis, weight_axis == 0 ? "axis 0" : "axis 1").ok()) return false;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
    int64_t max_bias = 0;
    if (!check_i32_bias(g, n, 2, "bias", &max_bias).ok()) return false;
  }
  if (!check_q8_fused_act(n).ok()) return false;
  if (!value_act && is_int8_value_act(read_fused_act(n.attrs).act)) return false;
  const size_t scales = g.input(n, 1)->quant.scale.size();
  return scales == 1 || static_cast<int64_t>(scales) == out_channels;
}

bool is_q8_conv2d(const Graph& g, const Node& n, bool value_act) {
  if (n.op != OpId::Conv || !node_has_quant(g, n)) return false;
  if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  const Tensor *x = g.input(n, 0), *w = g.input(n, 1);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!x || !w || !w->is_const() || x->shape.size() != 4 || w->shape.size() != 4 || y.shape.size() != 4) return false;
  const int64_t group = n.attrs.get_int("group", 1);
  if (group < 1 || x->shape[1] % group != 0 || w->shape[0] % group != 0 || w->shape[1] * group != x->shape[1])
    return false;
  return is_q8_conv_form(g, n, w->shape[0], 0, value_act);
}

Status check_i32_bias(const Graph& g, const Node& n, size_t i, const char* role, int64_t* max_abs) {
  *max_abs = 0;
  const Tensor* t = g.input(n, i);
  if (!t) return Status::Ok();
  if (t->dtype != DType::kI32 || !t->is_const())
    return ORKNN_NODE_ERR(n, "quantized node: bias %s ('%s') must be an int32 constant, got a %s %s tensor", role,
                          t->name.c_str(), t->is_const() ? "constant" : "non-constant", dtype_name(t->dtype));
  if (!t->quant.empty()) {
    const std::string what = strfmt("bias %s", role);
    ORKNN_RETURN_IF_ERROR(check_quant_params(n, *t, what.c_str(), /*allow_per_axis=*/true));
  }
  if (t->data.size < t->nbytes())
    return ORKNN_NODE_ERR(n, "bias %s ('%s'): %zu bytes of data for %lld elements", role, t->name.c_str(),
                          t->data.size, (long long)t->numel());
  const int32_t* b = t->const_ptr<int32_t>();
  for (int64_t k = 0, count = t->numel(); k < count; ++k) {
    const int64_t v = std::llabs(static_cast<int64_t>(b[k]));
    if (v > *max_abs) *max_abs = v;
  }
  return Status::Ok();
}

Status check_q8_fused_act(const Node& n) {
  const std::string act = n.attrs.get_string("fused_act", "");
  if (act.empty() || act == "Relu" || act == "Clip") return Status::Ok();
  if (n.op == OpId::Conv && is_int8_value_act(parse_fused_act(act))) return Status::Ok();
  return ORKNN_NODE_ERR(n,
                        "fused_act '%s' is not allowed on a quantized %s node (Relu and Clip clamp the int8 result; a "
                        "quantized Conv also applies LeakyRelu, HardSwish, HardSigmoid; other activations run as their "
                        "own node)",
                        act.c_str(), op_name(n.op));
}

Status check_accumulator_range(const Node& n, int64_t terms, int64_t max_product, int64_t max_bias) {
  // terms <= kMaxElements (2^31), max_product < 2^16, max_bias <= 2^31: no int64 overflow.
  const int64_t worst = terms * max_product + max_bias;
  if (worst > INT32_MAX)
    return ORKNN_NODE_ERR(n,
                          "quantized node: the int32 accumulator could overflow (%lld products of up to %lld plus a "
                          "bias of up to %lld)",
                          (long long)terms, (long long)max_product, (long long)max_bias);
  return Status::Ok();
}

}  // namespace orknn
