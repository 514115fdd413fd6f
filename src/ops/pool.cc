// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: validation, normalisation, shapes.
//
// Normalised form of MaxPool/AveragePool: "kernel_shape", "strides", "dilations" (one per
// spatial dim), "pads" (begin..., end...), "ceil_mode", "auto_pad" = "NOTSET"; AveragePool also
// "count_include_pad". auto_pad is resolved into pads with ceil_mode = 0 (ONNX defines the
// auto_pad output sizes without ceil_mode).
//
// Quantized int8 (docs/numerics.md): X and Y are per-tensor quantized int8 activations (their
// parameters may differ; the kernels requantize). MaxPool's Indices output is never supported.
#include <string>
#include <vector>

#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// Single input X of rank 3 to max_rank (N, C, spatial dims), one output; X float32, or X and Y
// quantized int8.
Status check_pool_io(const Graph& g, const Node& n, size_t max_rank) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, n.op == OpId::MaxPool ? 2 : 1, 1));
  if (has_output(n, 1)) return ORKNN_NODE_ERR(n, "the Indices output is not supported");
  if (node_has_quant(g, n)) {
    ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, 0));
    ORKNN_RETURN_IF_ERROR(check_q8_output(g, n, 0));
  } else {
    ORKNN_RETURN_IF_ERROR(check_f32(g, n, 0, "X"));
  }
  const Tensor& x = *g.input(n, 0);
  if (x.shape.size() < 3 || x.shape.size() > max_rank)
    return ORKNN_NODE_ERR(n, "X must be N x C x (1 to %zu spatial dims), got %s", max_rank - 2,
                          shape_str(x.shape).c_str());
  for (int64_t d : x.shape)
    if (d < 1) return ORKNN_NODE_ERR(n, "X has an empty dimension: %s", shape_str(x.shape).c_str());
  return Status::Ok();
}

// Shared by MaxPool and AveragePool.
Status infer_window_pool(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_pool_io(g, n, 5));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const size_t k = x.size() - 2;
  if (!n.attrs.has("kernel_shape")) return ORKNN_NODE_ERR(n, "attribute kernel_shape is required");
  std::vector<int64_t> kernel, strides, dilations, pads;
  ORKNN_RETURN_IF_ERROR(read_dims_attr(n, "kernel_shape", k, 1, 1, &kernel));
  ORKNN_RETURN_IF_ERROR(read_dims_attr(n, "strides", k, 1, 1, &strides));
  ORKNN_RETURN_IF_ERROR(read_dims_attr(n, "dilations", k, 1, 1, &dilations));
  int64_t ceil_mode = n.attrs.get_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1)
    return ORKNN_NODE_ERR(n, "ceil_mode must be 0 or 1, got %lld", (long long)ceil_mode);
  const int64_t count_include_pad = n.attrs.get_int("count_include_pad", 0);
  if (count_include_pad != 0 && count_include_pad != 1)
    return ORKNN_NODE_ERR(n, "count_include_pad must be 0 or 1, got %lld", (long long)count_include_pad);
  const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    ORKNN_RETURN_IF_ERROR(read_dims_attr(n, "pads", 2 * k, 0, 0, &pads));
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" || auto_pad == "VALID") {
    pads.assign(2 * k, 0);
    ceil_mode = 0;
  } else {
    return ORKNN_NODE_ERR(n, "unknown auto_pad '%s'", auto_pad.c_str());
  }

  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < k; ++i) {
    const int64_t in = x[2 + i], s = strides[i];
    const int64_t eff = (kernel[i] - 1) * dilations[i] + 1;  // dilated window extent
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
      same_padding(auto_pad, in, s, eff, &pads[i], &pads[k + i]);
    const int64_t span = in + pads[i] + pads[k + i] - eff;
    if (span < 0)
      return ORKNN_NODE_ERR(n,
                            "spatial dim %zu: input %lld with pads %lld+%lld is smaller than the dilated kernel %lld",
                            i, (long long)in, (long long)pads[i], (long long)pads[k + i], (long long)eff);
    int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // ceil_mode: a window that would start in the end padding (or beyond) is dropped.
    if (ceil_mode && (o - 1) * s >= in + pads[i]) --o;
    out.push_back(o);
  }
  n.attrs.set_ints("kernel_shape", kernel);
  n.attrs.set_ints("strides", strides);
  n.attrs.set_ints("dilations", dilations);
  n.attrs.set_ints("pads", pads);
  n.attrs.set_int("ceil_mode", ceil_mode);
  n.attrs.set_string("auto_pad", "NOTSET");
  if (n.op == OpId::AveragePool) n.attrs.set_int("count_include_pad", count_include_pad);
  return set_output(g, n, 0, out, output_dtype(g, n, 0, DType::kF32));
}

Status infer_global_pool(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_pool_io(g, n, 64));
  Shape out = g.tensor(n.inputs[0]).shape;
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  return set_output(g, n, 0, out, output_dtype(g, n, 0, DType::kF32));
}

}  // namespace

Status infer_MaxPool(Graph& g, Node& n) { return infer_window_pool(g, n); }
Status infer_AveragePool(Graph& g, Node& n) { return infer_window_pool(g, n); }
Status infer_GlobalAveragePool(Graph& g, Node& n) { return infer_global_pool(g, n); }
Status infer_GlobalMaxPool(Graph& g, Node& n) { return infer_global_pool(g, n); }

}  // namespace orknn
