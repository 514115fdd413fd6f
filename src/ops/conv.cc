// Conv and ConvTranspose: validation, attribute normalisation and shape inference.
//
// Normalised form (what kernels read): "kernel_shape", "strides", "dilations" (one per spatial
// dim), "pads" (begin..., end...), "group", "auto_pad" = "NOTSET"; ConvTranspose also
// "output_padding" (one per spatial dim) and never "output_shape" (it is turned into pads and
// output_padding). Fused activation attributes are validated and completed.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "kernels/ref/activation.h"
#include "ops/op.h"

namespace orknn {
namespace {

#define NODE_ERR(n, fmt, ...) \
  ORKNN_ERR(kInvalidModel, "%s node '%s': " fmt, op_name((n).op), (n).name.c_str(), ##__VA_ARGS__)

// Every tensor id of the node must exist (-1 marks an absent optional input or output).
Status check_tensor_ids(const Graph& g, const Node& n) {
  const int count = static_cast<int>(g.tensors.size());
  for (int id : n.inputs)
    if (id < -1 || id >= count) return NODE_ERR(n, "input refers to tensor %d, which does not exist", id);
  for (int id : n.outputs)
    if (id < -1 || id >= count) return NODE_ERR(n, "output refers to tensor %d, which does not exist", id);
  return Status::Ok();
}

// Reads an ints attribute that must have `len` entries, each >= min_value; absent -> def repeated.
Status spatial_ints(const Node& n, const char* name, size_t len, int64_t def, int64_t min_value,
                    std::vector<int64_t>* out) {
  if (!n.attrs.has(name)) {
    out->assign(len, def);
    return Status::Ok();
  }
  *out = n.attrs.get_ints(name);
  if (out->size() != len)
    return NODE_ERR(n, "attribute %s has %zu values, expected %zu", name, out->size(), len);
  for (int64_t v : *out)
    if (v < min_value) return NODE_ERR(n, "attribute %s has value %lld, must be >= %lld", name, (long long)v, (long long)min_value);
  return Status::Ok();
}

Status require_f32(const Graph& g, const Node& n, size_t i, const char* what) {
  const Tensor* t = g.input(n, i);
  if (t && t->dtype != DType::kF32)
    return NODE_ERR(n, "input %s must be float32, got %s", what, dtype_name(t->dtype));
  return Status::Ok();
}

// Checks "fused_act" and writes its parameters explicitly (ONNX defaults of the fused op).
Status normalise_fused_act(Node& n) {
  if (!n.attrs.has("fused_act")) return Status::Ok();
  std::string act = n.attrs.get_string("fused_act", "");
  if (act.empty()) {
    n.attrs.erase("fused_act");
    return Status::Ok();
  }
  FusedAct a = parse_fused_act(act);
  if (a == FusedAct::kNone) return NODE_ERR(n, "unsupported fused_act '%s'", act.c_str());
  float alpha = 0.f, beta = 0.f;
  switch (a) {
    case FusedAct::kLeakyRelu: alpha = 0.01f; break;
    case FusedAct::kClip: alpha = -std::numeric_limits<float>::infinity(); beta = std::numeric_limits<float>::infinity(); break;
    case FusedAct::kHardSigmoid: alpha = 0.2f; beta = 0.5f; break;
    default: break;
  }
  n.attrs.set_float("fused_alpha", n.attrs.get_float("fused_alpha", alpha));
  n.attrs.set_float("fused_beta", n.attrs.get_float("fused_beta", beta));
  return Status::Ok();
}

Status check_io_counts(const Node& n) {
  if (n.inputs.size() < 2 || n.inputs.size() > 3)
    return NODE_ERR(n, "expects 2 or 3 inputs (X, W[, B]), got %zu", n.inputs.size());
  if (n.inputs[0] < 0 || n.inputs[1] < 0) return NODE_ERR(n, "inputs X and W are required");
  if (n.outputs.size() != 1 || n.outputs[0] < 0) return NODE_ERR(n, "expects exactly 1 output, got %zu", n.outputs.size());
  return Status::Ok();
}

// Attributes common to Conv and ConvTranspose, checked against X and W.
struct ConvAttrs {
  size_t k = 0;  // spatial rank
  int64_t group = 1;
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
};

Status read_conv_attrs(const Node& n, const Tensor& x, const Tensor& w, ConvAttrs* a) {
  if (x.shape.size() < 3) return NODE_ERR(n, "X must have rank >= 3 (N, C, spatial...), got %s", shape_str(x.shape).c_str());
  if (w.shape.size() != x.shape.size())
    return NODE_ERR(n, "W rank %zu differs from X rank %zu", w.shape.size(), x.shape.size());
  a->k = x.shape.size() - 2;
  if (a->k > 3) return NODE_ERR(n, "only 1 to 3 spatial dims are supported, X is %s", shape_str(x.shape).c_str());
  a->group = n.attrs.get_int("group", 1);
  if (a->group < 1) return NODE_ERR(n, "group must be >= 1, got %lld", (long long)a->group);
  Shape wk(w.shape.begin() + 2, w.shape.end());
  for (int64_t d : w.shape)
    if (d < 1) return NODE_ERR(n, "W has an empty dimension: %s", shape_str(w.shape).c_str());
  if (n.attrs.has("kernel_shape") && n.attrs.get_ints("kernel_shape") != wk)
    return NODE_ERR(n, "kernel_shape %s does not match W %s", shape_str(n.attrs.get_ints("kernel_shape")).c_str(), shape_str(w.shape).c_str());
  a->kernel = wk;
  ORKNN_RETURN_IF_ERROR(spatial_ints(n, "strides", a->k, 1, 1, &a->strides));
  ORKNN_RETURN_IF_ERROR(spatial_ints(n, "dilations", a->k, 1, 1, &a->dilations));
  a->auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (a->auto_pad != "NOTSET" && a->auto_pad != "SAME_UPPER" && a->auto_pad != "SAME_LOWER" && a->auto_pad != "VALID")
    return NODE_ERR(n, "unknown auto_pad '%s'", a->auto_pad.c_str());
  if (a->auto_pad == "NOTSET") {
    ORKNN_RETURN_IF_ERROR(spatial_ints(n, "pads", 2 * a->k, 0, 0, &a->pads));
  } else {
    a->pads.assign(2 * a->k, 0);  // resolved by the caller; ONNX forbids pads together with auto_pad
  }
  return Status::Ok();
}

Status check_bias(const Graph& g, const Node& n, int64_t m) {
  const Tensor* b = g.input(n, 2);
  if (b && (b->shape.size() != 1 || b->shape[0] != m))
    return NODE_ERR(n, "bias B must have shape [%lld], got %s", (long long)m, shape_str(b->shape).c_str());
  return require_f32(g, n, 2, "B");
}

void write_common_attrs(Node& n, const ConvAttrs& a) {
  n.attrs.set_ints("kernel_shape", a.kernel);
  n.attrs.set_ints("strides", a.strides);
  n.attrs.set_ints("dilations", a.dilations);
  n.attrs.set_ints("pads", a.pads);
  n.attrs.set_int("group", a.group);
  n.attrs.set_string("auto_pad", "NOTSET");
}

}  // namespace

Status infer_Conv(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  ORKNN_RETURN_IF_ERROR(check_io_counts(n));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 0, "X"));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 1, "W"));
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& w = g.tensor(n.inputs[1]);
  ConvAttrs a;
  ORKNN_RETURN_IF_ERROR(read_conv_attrs(n, x, w, &a));
  const int64_t c = x.shape[1], m = w.shape[0];
  if (c % a.group != 0 || w.shape[1] * a.group != c)
    return NODE_ERR(n, "X has %lld channels but W %s with group %lld expects %lld", (long long)c,
                    shape_str(w.shape).c_str(), (long long)a.group, (long long)(w.shape[1] * a.group));
  if (m % a.group != 0)
    return NODE_ERR(n, "output channels %lld not divisible by group %lld", (long long)m, (long long)a.group);
  ORKNN_RETURN_IF_ERROR(check_bias(g, n, m));

  Shape out = {x.shape[0], m};
  for (size_t i = 0; i < a.k; ++i) {
    const int64_t in = x.shape[2 + i], s = a.strides[i];
    const int64_t eff = (a.kernel[i] - 1) * a.dilations[i] + 1;  // dilated kernel extent
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      // Output ceil(in / s); the needed padding is split evenly, the odd one at the end (UPPER)
      // or the beginning (LOWER).
      const int64_t o = (in + s - 1) / s;
      int64_t total = (o - 1) * s + eff - in;
      if (total < 0) total = 0;
      const int64_t small = total / 2, big = total - total / 2;
      a.pads[i] = a.auto_pad == "SAME_UPPER" ? small : big;
      a.pads[a.k + i] = a.auto_pad == "SAME_UPPER" ? big : small;
    }
    const int64_t span = in + a.pads[i] + a.pads[a.k + i] - eff;
    if (in < 1 || span < 0)
      return NODE_ERR(n, "spatial dim %zu: input %lld with pads %lld+%lld is smaller than the dilated kernel %lld",
                      i, (long long)in, (long long)a.pads[i], (long long)a.pads[a.k + i], (long long)eff);
    out.push_back(span / s + 1);
  }
  ORKNN_RETURN_IF_ERROR(normalise_fused_act(n));
  write_common_attrs(n, a);
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = out;
  y.dtype = DType::kF32;
  return Status::Ok();
}

Status infer_ConvTranspose(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  ORKNN_RETURN_IF_ERROR(check_io_counts(n));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 0, "X"));
  ORKNN_RETURN_IF_ERROR(require_f32(g, n, 1, "W"));
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& w = g.tensor(n.inputs[1]);
  ConvAttrs a;
  ORKNN_RETURN_IF_ERROR(read_conv_attrs(n, x, w, &a));
  // W is [C, M / group, k...].
  const int64_t c = x.shape[1];
  if (w.shape[0] != c)
    return NODE_ERR(n, "X has %lld channels but W %s expects %lld", (long long)c, shape_str(w.shape).c_str(), (long long)w.shape[0]);
  if (c % a.group != 0)
    return NODE_ERR(n, "input channels %lld not divisible by group %lld", (long long)c, (long long)a.group);
  const int64_t m = w.shape[1] * a.group;
  ORKNN_RETURN_IF_ERROR(check_bias(g, n, m));

  std::vector<int64_t> out_pad;
  ORKNN_RETURN_IF_ERROR(spatial_ints(n, "output_padding", a.k, 0, 0, &out_pad));
  std::vector<int64_t> target;  // requested spatial output size, empty = from pads
  if (n.attrs.has("output_shape")) {
    target = n.attrs.get_ints("output_shape");
    if (target.size() == a.k + 2) target.erase(target.begin(), target.begin() + 2);  // full N,C,... form
    if (target.size() != a.k)
      return NODE_ERR(n, "output_shape has %zu values, expected %zu", n.attrs.get_ints("output_shape").size(), a.k);
    for (int64_t v : target)
      if (v < 1) return NODE_ERR(n, "output_shape values must be >= 1");
  } else if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < a.k; ++i) target.push_back(x.shape[2 + i] * a.strides[i]);
  }

  Shape out = {x.shape[0], m};
  for (size_t i = 0; i < a.k; ++i) {
    const int64_t in = x.shape[2 + i], s = a.strides[i];
    if (in < 1) return NODE_ERR(n, "spatial dim %zu of X is empty", i);
    const int64_t eff = (a.kernel[i] - 1) * a.dilations[i] + 1;
    const int64_t full = s * (in - 1) + out_pad[i] + eff;  // output size before removing pads
    if (!target.empty()) {
      int64_t total = full - target[i];
      if (total < 0) {
        // A larger output than the full one: ORT keeps pads at 0 and extends at the end, which
        // is what extra output_padding does.
        out_pad[i] += -total;
        total = 0;
      }
      // ONNX: SAME_UPPER puts the odd pixel at the end, everything else at the beginning.
      const int64_t small = total / 2, big = total - total / 2;
      a.pads[i] = a.auto_pad == "SAME_UPPER" ? small : big;
      a.pads[a.k + i] = a.auto_pad == "SAME_UPPER" ? big : small;
    }
    const int64_t o = s * (in - 1) + out_pad[i] + eff - a.pads[i] - a.pads[a.k + i];
    if (o < 1)
      return NODE_ERR(n, "spatial dim %zu: pads %lld+%lld remove the whole output (%lld)", i,
                      (long long)a.pads[i], (long long)a.pads[a.k + i], (long long)(o + a.pads[i] + a.pads[a.k + i]));
    out.push_back(o);
  }
  ORKNN_RETURN_IF_ERROR(normalise_fused_act(n));
  write_common_attrs(n, a);
  n.attrs.set_ints("output_padding", out_pad);
  n.attrs.erase("output_shape");
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = out;
  y.dtype = DType::kF32;
  return Status::Ok();
}

}  // namespace orknn
