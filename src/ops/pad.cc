// Pad: validation, normalisation of the parameter inputs, shape inference.
//
// Normalised form: "pads" (2 * rank, ONNX order: all begins then all ends; negative values
// crop), "value" (float, constant mode) and "mode" (constant, reflect, edge, wrap) explicit;
// inputs pads, constant_value and axes are moved into these attributes and set to -1.
// Pad only moves elements, so any dtype is accepted.
// Quantized int8 data (docs/numerics.md): the output carries the input's parameters and constant
// mode fills with quantize(value). "value" stays the real value: a constant_value input is float32
// or a quantized int8 scalar (then dequantized).
#include <string>
#include <vector>

#include "kernels/quant_util.h"
#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// Constant 1-D (or scalar) integer parameter input i.
Status read_int_list(const Graph& g, const Node& n, size_t i, const char* what, std::vector<int64_t>* out) {
  const Tensor* t = g.input(n, i);
  if (t->shape.size() > 1) return ORKNN_NODE_ERR(n, "input %s must be 1-D, got %s", what, shape_str(t->shape).c_str());
  return read_const_ints(g, n, i, what, out);
}

}  // namespace

Status infer_Pad(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 4, 1, 1, 1));
  const Tensor& x = *g.input(n, 0);
  const size_t rank = x.shape.size();

  const std::string mode = n.attrs.get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return ORKNN_NODE_ERR(n, "unknown mode '%s' (constant, reflect, edge, wrap)", mode.c_str());

  std::vector<int64_t> pads;
  if (has_input(n, 1)) {
    ORKNN_RETURN_IF_ERROR(read_int_list(g, n, 1, "pads", &pads));
  } else if (n.attrs.has("pads")) {
    pads = n.attrs.get_ints("pads");
  } else {
    return ORKNN_NODE_ERR(n, "pads are missing (neither input nor attribute)");
  }
  ORKNN_RETURN_IF_ERROR(check_values_in(n, "pads", pads, -kMaxDim, kMaxDim));

  const bool quantized = node_has_quant(g, n);
  float value = n.attrs.get_float("value", 0.f);
  if (const Tensor* t = g.input(n, 2); t && quantized) {
    const bool q8 = t->dtype == DType::kI8 && !t->quant.empty();
    if (t->dtype != DType::kF32 && !q8)
      return ORKNN_NODE_ERR(n, "quantized Pad: constant_value must be float32 or a quantized int8 scalar, got %s%s",
                            dtype_name(t->dtype), t->quant.empty() ? " without quantization parameters" : "");
    if (t->numel() != 1)
      return ORKNN_NODE_ERR(n, "input constant_value must hold one value, got shape %s", shape_str(t->shape).c_str());
    if (q8) {
      ORKNN_RETURN_IF_ERROR(check_quant_params(n, *t, "input constant_value", false));
      std::vector<int64_t> q;
      ORKNN_RETURN_IF_ERROR(read_const_ints(g, n, 2, "constant_value", &q));
      value = dequantize_value(static_cast<int32_t>(q[0]), t->quant.scale[0], t->quant.zero_point[0]);
    } else {
      std::vector<float> v;
      ORKNN_RETURN_IF_ERROR(read_const_floats(g, n, 2, "constant_value", &v));
      value = v[0];
    }
  } else if (t) {
    if (t->dtype != x.dtype)
      return ORKNN_NODE_ERR(n, "constant_value dtype %s differs from data dtype %s", dtype_name(t->dtype),
                            dtype_name(x.dtype));
    std::vector<float> v;
    ORKNN_RETURN_IF_ERROR(read_const_floats(g, n, 2, "constant_value", &v));
    if (v.size() != 1)
      return ORKNN_NODE_ERR(n, "input constant_value must hold one value, got shape %s", shape_str(t->shape).c_str());
    value = v[0];
  }

  if (has_input(n, 3)) {
    // pads are given for `axes` only: [begin per axis..., end per axis...].
    std::vector<int64_t> given, axes;
    ORKNN_RETURN_IF_ERROR(read_int_list(g, n, 3, "axes", &given));
    if (pads.size() != 2 * given.size())
      return ORKNN_NODE_ERR(n, "pads has %zu values, expected 2 * %zu axes", pads.size(), given.size());
    ORKNN_RETURN_IF_ERROR(resolve_axes(n, given, static_cast<int64_t>(rank), &axes));
    std::vector<int64_t> full(2 * rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t a = static_cast<size_t>(axes[i]);
      full[a] = pads[i];
      full[rank + a] = pads[axes.size() + i];
    }
    pads = full;
  }
  if (pads.size() != 2 * rank)
    return ORKNN_NODE_ERR(n, "pads has %zu values, expected %zu for rank %zu", pads.size(), 2 * rank, rank);

  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t begin = pads[i], end = pads[rank + i];
    // Negative pads crop first; the remaining (kept) extent is what the modes read from.
    const int64_t kept = x.shape[i] + (begin < 0 ? begin : 0) + (end < 0 ? end : 0);
    if (kept < 0)
      return ORKNN_NODE_ERR(n, "axis %zu: negative pads %lld, %lld remove more than the dim %lld", i, (long long)begin,
                            (long long)end, (long long)x.shape[i]);
    out[i] = x.shape[i] + begin + end;
    if (kept == 0 && out[i] > 0 && mode != "constant")
      return ORKNN_NODE_ERR(n, "axis %zu: mode '%s' needs at least one element to pad from", i, mode.c_str());
  }

  n.attrs.set_ints("pads", pads);
  n.attrs.set_float("value", value);
  n.attrs.set_string("mode", mode);
  for (size_t i = 1; i < n.inputs.size(); ++i) n.inputs[i] = -1;
  // After the parameter inputs are gone: only the data input may (and must) be quantized.
  if (quantized) ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  return set_output(g, n, 0, out, x.dtype);
}

}  // namespace orknn
