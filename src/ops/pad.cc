// Pad: validation, normalisation of the parameter inputs, shape inference.
//
// Normalised form: "pads" (2 * rank, ONNX order: all begins then all ends; negative values
// crop), "value" (float, constant mode) and "mode" (constant, reflect, edge, wrap) explicit;
// inputs pads, constant_value and axes are moved into these attributes and set to -1.
// Pad only moves elements, so any dtype is accepted.
#include <cstring>
#include <string>
#include <vector>

#include "common/fp16.h"
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

// Reads a constant integer tensor (int64 or int32) as int64 values.
Status read_const_ints(const Node& n, const Tensor& t, const char* what, std::vector<int64_t>* out) {
  if (!t.is_const()) return NODE_ERR(n, "input %s must be a constant", what);
  if (t.shape.size() > 1) return NODE_ERR(n, "input %s must be 1-D, got %s", what, shape_str(t.shape).c_str());
  const size_t count = static_cast<size_t>(t.numel());
  out->resize(count);
  if (t.dtype == DType::kI64) {
    std::memcpy(out->data(), t.data.ptr, count * sizeof(int64_t));
  } else if (t.dtype == DType::kI32) {
    for (size_t i = 0; i < count; ++i) (*out)[i] = t.const_ptr<int32_t>()[i];
  } else {
    return NODE_ERR(n, "input %s must be int64, got %s", what, dtype_name(t.dtype));
  }
  return Status::Ok();
}

// The single element of a constant tensor, converted to float.
Status read_const_scalar(const Node& n, const Tensor& t, const char* what, float* out) {
  if (!t.is_const()) return NODE_ERR(n, "input %s must be a constant", what);
  if (t.numel() != 1) return NODE_ERR(n, "input %s must hold one value, got shape %s", what, shape_str(t.shape).c_str());
  const uint8_t* p = t.data.ptr;
  switch (t.dtype) {
    case DType::kF32: { float v; std::memcpy(&v, p, 4); *out = v; break; }
    case DType::kF16: { uint16_t v; std::memcpy(&v, p, 2); *out = fp16_to_fp32(v); break; }
    case DType::kI8: *out = static_cast<float>(*reinterpret_cast<const int8_t*>(p)); break;
    case DType::kU8: *out = static_cast<float>(*p); break;
    case DType::kBool: *out = *p ? 1.f : 0.f; break;
    case DType::kI16: { int16_t v; std::memcpy(&v, p, 2); *out = static_cast<float>(v); break; }
    case DType::kU16: { uint16_t v; std::memcpy(&v, p, 2); *out = static_cast<float>(v); break; }
    case DType::kI32: { int32_t v; std::memcpy(&v, p, 4); *out = static_cast<float>(v); break; }
    case DType::kU32: { uint32_t v; std::memcpy(&v, p, 4); *out = static_cast<float>(v); break; }
    case DType::kI64: { int64_t v; std::memcpy(&v, p, 8); *out = static_cast<float>(v); break; }
  }
  return Status::Ok();
}

}  // namespace

Status infer_Pad(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_tensor_ids(g, n));
  if (n.inputs.empty() || n.inputs.size() > 4 || n.inputs[0] < 0)
    return NODE_ERR(n, "expects 1 to 4 inputs (data[, pads, constant_value, axes]), got %zu", n.inputs.size());
  if (n.outputs.size() != 1 || n.outputs[0] < 0) return NODE_ERR(n, "expects 1 output, got %zu", n.outputs.size());
  const Tensor& x = g.tensor(n.inputs[0]);
  const size_t rank = x.shape.size();

  const std::string mode = n.attrs.get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return NODE_ERR(n, "unknown mode '%s' (constant, reflect, edge, wrap)", mode.c_str());

  std::vector<int64_t> pads;
  if (const Tensor* t = g.input(n, 1)) {
    ORKNN_RETURN_IF_ERROR(read_const_ints(n, *t, "pads", &pads));
  } else if (n.attrs.has("pads")) {
    pads = n.attrs.get_ints("pads");
  } else {
    return NODE_ERR(n, "pads are missing (neither input nor attribute)");
  }

  float value = n.attrs.get_float("value", 0.f);
  if (const Tensor* t = g.input(n, 2)) {
    if (t->dtype != x.dtype)
      return NODE_ERR(n, "constant_value dtype %s differs from data dtype %s", dtype_name(t->dtype), dtype_name(x.dtype));
    ORKNN_RETURN_IF_ERROR(read_const_scalar(n, *t, "constant_value", &value));
  }

  if (const Tensor* t = g.input(n, 3)) {
    // pads are given for `axes` only: [begin per axis..., end per axis...].
    std::vector<int64_t> axes;
    ORKNN_RETURN_IF_ERROR(read_const_ints(n, *t, "axes", &axes));
    if (pads.size() != 2 * axes.size())
      return NODE_ERR(n, "pads has %zu values, expected 2 * %zu axes", pads.size(), axes.size());
    std::vector<int64_t> full(2 * rank, 0);
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      if (a < -static_cast<int64_t>(rank) || a >= static_cast<int64_t>(rank))
        return NODE_ERR(n, "axis %lld out of range for rank %zu", (long long)a, rank);
      if (a < 0) a += static_cast<int64_t>(rank);
      if (seen[static_cast<size_t>(a)]) return NODE_ERR(n, "axis %lld is repeated", (long long)axes[i]);
      seen[static_cast<size_t>(a)] = true;
      full[static_cast<size_t>(a)] = pads[i];
      full[rank + static_cast<size_t>(a)] = pads[axes.size() + i];
    }
    pads = full;
  }
  if (pads.size() != 2 * rank)
    return NODE_ERR(n, "pads has %zu values, expected %zu for rank %zu", pads.size(), 2 * rank, rank);

  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t begin = pads[i], end = pads[rank + i];
    // Negative pads crop first; the remaining (kept) extent is what the modes read from.
    const int64_t kept = x.shape[i] + (begin < 0 ? begin : 0) + (end < 0 ? end : 0);
    if (kept < 0)
      return NODE_ERR(n, "axis %zu: negative pads %lld, %lld remove more than the dim %lld", i, (long long)begin,
                      (long long)end, (long long)x.shape[i]);
    out[i] = x.shape[i] + begin + end;
    if (kept == 0 && out[i] > 0 && mode != "constant")
      return NODE_ERR(n, "axis %zu: mode '%s' needs at least one element to pad from", i, mode.c_str());
  }

  n.attrs.set_ints("pads", pads);
  n.attrs.set_float("value", value);
  n.attrs.set_string("mode", mode);
  for (size_t i = 1; i < n.inputs.size(); ++i) n.inputs[i] = -1;
  const DType dt = x.dtype;
  Tensor& y = g.tensor(n.outputs[0]);
  y.shape = out;
  y.dtype = dt;
  return Status::Ok();
}

}  // namespace orknn
