// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: validation, normalisation, shapes.
//
// Normalised form of MaxPool/AveragePool: "kernel_shape", "strides", "dilations" (one per
// spatial dim), "pads" (begin..., end...), "ceil_mode", "auto_pad" = "NOTSET"; AveragePool also
// "count_include_pad". auto_pad is resolved into pads with ceil_mode = 0 (ONNX defines the
// auto_pad output sizes without ceil_mode).
#include <string>
#include <vector>

#include "graph/ir.h"
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

// Single float32 input X of rank 3 to max_rank (N, C, spatial dims), one output.
Status check_pool_io(const Graph& g, const Node& n, size_t max_rank) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  if (n.inputs.size() != 1 || n.inputs[0] < 0) return NODE_ERR(n, "expects 1 input, got %zu", n.inputs.size());
  if (n.outputs.empty() || n.outputs[0] < 0) return NODE_ERR(n, "output Y is required");
  if (n.op == OpId::MaxPool && n.outputs.size() == 2) {
    if (n.outputs[1] >= 0) return NODE_ERR(n, "the Indices output is not supported");
  } else if (n.outputs.size() != 1) {
    return NODE_ERR(n, "expects 1 output, got %zu", n.outputs.size());
  }
  const Tensor& x = g.tensor(n.inputs[0]);
  if (x.dtype != DType::kF32) return NODE_ERR(n, "input X must be float32, got %s", dtype_name(x.dtype));
  if (x.shape.size() < 3 || x.shape.size() > max_rank)
    return NODE_ERR(n, "X must be N x C x (1 to %zu spatial dims), got %s", max_rank - 2, shape_str(x.shape).c_str());
  for (int64_t d : x.shape)
    if (d < 1) return NODE_ERR(n, "X has an empty dimension: %s", shape_str(x.shape).c_str());
  return Status::Ok();
}

// Shared by MaxPool and AveragePool.
Status infer_window_pool(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_pool_io(g, n, 5));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const size_t k = x.size() - 2;
  if (!n.attrs.has("kernel_shape")) return NODE_ERR(n, "attribute kernel_shape is required");
  std::vector<int64_t> kernel, strides, dilations, pads;
  ORKNN_RETURN_IF_ERROR(spatial_ints(n, "kernel_shape", k, 1, 1, &kernel));
  ORKNN_RETURN_IF_ERROR(spatial_ints(n, "strides", k, 1, 1, &strides));
  ORKNN_RETURN_IF_ERROR(spatial_ints(n, "dilations", k, 1, 1, &dilations));
  int64_t ceil_mode = n.attrs.get_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1) return NODE_ERR(n, "ceil_mode must be 0 or 1, got %lld", (long long)ceil_mode);
  const int64_t count_include_pad = n.attrs.get_int("count_include_pad", 0);
  if (count_include_pad != 0 && count_include_pad != 1)
    return NODE_ERR(n, "count_include_pad must be 0 or 1, got %lld", (long long)count_include_pad);
  const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    ORKNN_RETURN_IF_ERROR(spatial_ints(n, "pads", 2 * k, 0, 0, &pads));
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" || auto_pad == "VALID") {
    pads.assign(2 * k, 0);
    ceil_mode = 0;
  } else {
    return NODE_ERR(n, "unknown auto_pad '%s'", auto_pad.c_str());
  }

  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < k; ++i) {
    const int64_t in = x[2 + i], s = strides[i];
    const int64_t eff = (kernel[i] - 1) * dilations[i] + 1;  // dilated window extent
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Output ceil(in / s); the odd padding pixel goes to the end (UPPER) or beginning (LOWER).
      const int64_t o = (in + s - 1) / s;
      int64_t total = (o - 1) * s + eff - in;
      if (total < 0) total = 0;
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[k + i] = total - pads[i];
    }
    const int64_t span = in + pads[i] + pads[k + i] - eff;
    if (span < 0)
      return NODE_ERR(n, "spatial dim %zu: input %lld with pads %lld+%lld is smaller than the dilated kernel %lld",
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
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = out;
  y.dtype = DType::kF32;
  return Status::Ok();
}

Status infer_global_pool(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_pool_io(g, n, 64));
  Shape out = g.tensor(n.inputs[0]).shape;
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = out;
  y.dtype = DType::kF32;
  return Status::Ok();
}

}  // namespace

Status infer_MaxPool(Graph& g, Node& n) { return infer_window_pool(g, n); }
Status infer_AveragePool(Graph& g, Node& n) { return infer_window_pool(g, n); }
Status infer_GlobalAveragePool(Graph& g, Node& n) { return infer_global_pool(g, n); }
Status infer_GlobalMaxPool(Graph& g, Node& n) { return infer_global_pool(g, n); }

}  // namespace orknn
