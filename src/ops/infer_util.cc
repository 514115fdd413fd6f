#include "ops/infer_util.h"

#include <cmath>

#include <algorithm>
#include <cstring>

#include "common/fp16.h"
#include "kernels/ref/activation.h"

namespace orknn {

bool has_input(const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i] >= 0; }
bool has_output(const Node& n, size_t i) { return i < n.outputs.size() && n.outputs[i] >= 0; }

Status check_shape(const Node& n, const Shape& shape, const char* what) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxDim)
      return ORKNN_NODE_ERR(n, "%s has shape %s: dimension %lld is outside [0, %lld]", what, shape_str(shape).c_str(),
                            (long long)d, (long long)kMaxDim);
    // count <= kMaxElements and d <= kMaxDim: the product fits in int64.
    if (count <= kMaxElements) count *= d;
  }
  for (int64_t d : shape)
    if (d == 0) count = 0;
  if (count > kMaxElements)
    return ORKNN_NODE_ERR(n, "%s has shape %s: more than %lld elements", what, shape_str(shape).c_str(),
                          (long long)kMaxElements);
  return Status::Ok();
}

Status check_values_in(const Node& n, const char* what, const std::vector<int64_t>& values, int64_t lo, int64_t hi) {
  for (int64_t v : values)
    if (v < lo || v > hi)
      return ORKNN_NODE_ERR(n, "%s %s: value %lld is outside [%lld, %lld]", what, shape_str(values).c_str(),
                            (long long)v, (long long)lo, (long long)hi);
  return Status::Ok();
}

Status check_arity(const Graph& g, const Node& n, size_t min_in, size_t max_in, size_t min_out, size_t max_out,
                   size_t required_in) {
  if (n.inputs.size() < min_in || n.inputs.size() > max_in) {
    if (min_in == max_in) return ORKNN_NODE_ERR(n, "expects %zu inputs, got %zu", min_in, n.inputs.size());
    return ORKNN_NODE_ERR(n, "expects %zu to %zu inputs, got %zu", min_in, max_in, n.inputs.size());
  }
  if (n.outputs.size() < min_out || n.outputs.size() > max_out) {
    if (min_out == max_out) return ORKNN_NODE_ERR(n, "expects %zu outputs, got %zu", min_out, n.outputs.size());
    return ORKNN_NODE_ERR(n, "expects %zu to %zu outputs, got %zu", min_out, max_out, n.outputs.size());
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    int id = n.inputs[i];
    if (id >= static_cast<int>(g.tensors.size()) || id < -1)
      return ORKNN_NODE_ERR(n, "input %zu refers to tensor %d, which does not exist", i, id);
    if (i < required_in && id < 0) return ORKNN_NODE_ERR(n, "required input %zu is missing", i);
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    int id = n.outputs[i];
    if (id >= static_cast<int>(g.tensors.size()) || id < -1)
      return ORKNN_NODE_ERR(n, "output %zu refers to tensor %d, which does not exist", i, id);
  }
  if (min_out > 0 && n.outputs[0] < 0) return ORKNN_NODE_ERR(n, "output 0 is missing");
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Tensor* t = g.input(n, i);
    if (!t) continue;
    const std::string what = strfmt("input %zu ('%s')", i, t->name.c_str());
    ORKNN_RETURN_IF_ERROR(check_shape(n, t->shape, what.c_str()));
  }
  return Status::Ok();
}

Status set_output(Graph& g, const Node& n, size_t i, const Shape& shape, DType dtype) {
  if (!has_output(n, i)) return Status::Ok();
  const std::string what = strfmt("output %zu", i);
  ORKNN_RETURN_IF_ERROR(check_shape(n, shape, what.c_str()));
  Tensor& t = g.tensor(n.outputs[i]);
  t.shape = shape;
  t.dtype = dtype;
  return Status::Ok();
}

bool is_float_dtype(DType t) { return t == DType::kF32; }

bool is_int_dtype(DType t) {
  switch (t) {
    case DType::kI8:
    case DType::kU8:
    case DType::kI16:
    case DType::kU16:
    case DType::kI32:
    case DType::kU32:
    case DType::kI64: return true;
    default: return false;
  }
}

bool dtype_in(DType t, std::initializer_list<DType> allowed) {
  return std::find(allowed.begin(), allowed.end(), t) != allowed.end();
}

Status check_dtype(const Graph& g, const Node& n, size_t i, std::initializer_list<DType> allowed) {
  const Tensor* t = g.input(n, i);
  if (!t) return Status::Ok();
  if (dtype_in(t->dtype, allowed)) return Status::Ok();
  std::string names;
  for (DType a : allowed) {
    if (!names.empty()) names += ", ";
    names += dtype_name(a);
  }
  return ORKNN_NODE_ERR(n, "input %zu ('%s') has dtype %s; supported: %s", i, t->name.c_str(), dtype_name(t->dtype),
                        names.c_str());
}

Status check_f32(const Graph& g, const Node& n, size_t i, const char* role) {
  const Tensor* t = g.input(n, i);
  if (t && t->dtype != DType::kF32)
    return ORKNN_NODE_ERR(n, "input %s must be float32, got %s", role, dtype_name(t->dtype));
  return Status::Ok();
}

Status read_dims_attr(const Node& n, const char* name, size_t len, int64_t def, int64_t min_value,
                      std::vector<int64_t>* out) {
  if (!n.attrs.has(name)) {
    out->assign(len, def);
    return Status::Ok();
  }
  *out = n.attrs.get_ints(name);
  if (out->size() != len) return ORKNN_NODE_ERR(n, "attribute %s has %zu values, expected %zu", name, out->size(), len);
  for (int64_t v : *out) {
    if (v < min_value)
      return ORKNN_NODE_ERR(n, "attribute %s has value %lld, must be >= %lld", name, (long long)v,
                            (long long)min_value);
    if (v > kMaxDim)
      return ORKNN_NODE_ERR(n, "attribute %s has value %lld, must be <= %lld", name, (long long)v, (long long)kMaxDim);
  }
  return Status::Ok();
}

namespace {

Status require_const(const Graph& g, const Node& n, size_t i, const char* what, const Tensor** out) {
  const Tensor* t = g.input(n, i);
  if (!t) return ORKNN_NODE_ERR(n, "input %zu (%s) is missing", i, what);
  if (!t->is_const())
    return ORKNN_NODE_ERR(n,
                          "input %zu (%s, tensor '%s') must be a constant, but it is computed at run time. "
                          "It usually depends on a dynamic input dimension: pin the input shapes with "
                          "--input-shape so that it can be folded",
                          i, what, t->name.c_str());
  if (t->data.size < t->nbytes())
    return ORKNN_NODE_ERR(n, "constant input %zu (%s, tensor '%s') holds %zu bytes, expected %zu", i, what,
                          t->name.c_str(), t->data.size, t->nbytes());
  *out = t;
  return Status::Ok();
}

template <typename T>
T load(const uint8_t* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

}  // namespace

Status read_const_ints(const Graph& g, const Node& n, size_t i, const char* what, std::vector<int64_t>* out) {
  const Tensor* t = nullptr;
  ORKNN_RETURN_IF_ERROR(require_const(g, n, i, what, &t));
  const int64_t count = t->numel();
  out->resize(static_cast<size_t>(count));
  const uint8_t* p = t->data.ptr;
  for (int64_t k = 0; k < count; ++k) {
    int64_t v = 0;
    switch (t->dtype) {
      case DType::kI64: v = load<int64_t>(p, k); break;
      case DType::kI32: v = load<int32_t>(p, k); break;
      case DType::kU32: v = load<uint32_t>(p, k); break;
      case DType::kI16: v = load<int16_t>(p, k); break;
      case DType::kU16: v = load<uint16_t>(p, k); break;
      case DType::kI8: v = load<int8_t>(p, k); break;
      case DType::kU8:
      case DType::kBool: v = load<uint8_t>(p, k); break;
      default:
        return ORKNN_NODE_ERR(n, "input %zu (%s, tensor '%s') must be an integer tensor, got %s", i, what,
                              t->name.c_str(), dtype_name(t->dtype));
    }
    (*out)[static_cast<size_t>(k)] = v;
  }
  return Status::Ok();
}

Status read_const_floats(const Graph& g, const Node& n, size_t i, const char* what, std::vector<float>* out) {
  const Tensor* t = nullptr;
  ORKNN_RETURN_IF_ERROR(require_const(g, n, i, what, &t));
  const int64_t count = t->numel();
  out->resize(static_cast<size_t>(count));
  if (t->dtype == DType::kF32) {
    for (int64_t k = 0; k < count; ++k) (*out)[static_cast<size_t>(k)] = load<float>(t->data.ptr, k);
    return Status::Ok();
  }
  if (t->dtype == DType::kF16) {
    for (int64_t k = 0; k < count; ++k) (*out)[static_cast<size_t>(k)] = fp16_to_fp32(load<uint16_t>(t->data.ptr, k));
    return Status::Ok();
  }
  std::vector<int64_t> ints;
  ORKNN_RETURN_IF_ERROR(read_const_ints(g, n, i, what, &ints));
  for (size_t k = 0; k < ints.size(); ++k) (*out)[k] = static_cast<float>(ints[k]);
  return Status::Ok();
}

Status move_ints_input_to_attr(Graph& g, Node& n, size_t i, const char* attr) {
  if (!has_input(n, i)) return Status::Ok();
  std::vector<int64_t> v;
  ORKNN_RETURN_IF_ERROR(read_const_ints(g, n, i, attr, &v));
  n.attrs.set_ints(attr, v);
  n.inputs[i] = -1;
  return Status::Ok();
}

Status read_ints_param(Graph& g, Node& n, size_t i, const char* attr, std::vector<int64_t>* out) {
  ORKNN_RETURN_IF_ERROR(move_ints_input_to_attr(g, n, i, attr));
  if (!n.attrs.has(attr))
    return ORKNN_NODE_ERR(n, "%s is missing (neither input %zu nor attribute '%s')", attr, i, attr);
  *out = n.attrs.get_ints(attr);
  return Status::Ok();
}

Status normalize_axis(const Node& n, int64_t axis, int64_t rank, int64_t* out) {
  if (axis < -rank || axis >= rank)
    return ORKNN_NODE_ERR(n, "axis %lld is out of range for rank %lld", static_cast<long long>(axis),
                          static_cast<long long>(rank));
  *out = axis < 0 ? axis + rank : axis;
  return Status::Ok();
}

Status resolve_axes(const Node& n, const std::vector<int64_t>& axes, int64_t rank, std::vector<int64_t>* out) {
  std::vector<int64_t> r;
  r.reserve(axes.size());
  for (int64_t a : axes) {
    int64_t v = 0;
    ORKNN_RETURN_IF_ERROR(normalize_axis(n, a, rank, &v));
    if (std::find(r.begin(), r.end(), v) != r.end())
      return ORKNN_NODE_ERR(n, "axis %lld is repeated (listed twice)", static_cast<long long>(v));
    r.push_back(v);
  }
  *out = std::move(r);
  return Status::Ok();
}

Status normalize_axes(const Node& n, const std::vector<int64_t>& axes, int64_t rank, std::vector<int64_t>* out) {
  ORKNN_RETURN_IF_ERROR(resolve_axes(n, axes, rank, out));
  std::sort(out->begin(), out->end());
  return Status::Ok();
}

Status broadcast_shapes(const Node& n, const std::vector<Shape>& shapes, Shape* out) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape r(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    // d counts from the right: numpy aligns trailing dimensions.
    int64_t dim = 1;
    for (const Shape& s : shapes) {
      if (d >= s.size()) continue;
      int64_t v = s[s.size() - 1 - d];
      if (v == 1) continue;
      if (dim == 1) {
        dim = v;
      } else if (v != dim) {
        std::string all;
        for (const Shape& t : shapes) all += (all.empty() ? "" : " and ") + shape_str(t);
        return ORKNN_NODE_ERR(n, "shapes %s cannot be broadcast together", all.c_str());
      }
    }
    r[rank - 1 - d] = dim;
  }
  *out = std::move(r);
  return Status::Ok();
}

bool broadcasts_to(const Shape& s, const Shape& target) {
  if (s.size() > target.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t d = s[s.size() - 1 - i], t = target[target.size() - 1 - i];
    if (d != 1 && d != t) return false;
  }
  return true;
}

void split_padding(const std::string& auto_pad, int64_t total, int64_t* begin, int64_t* end) {
  const int64_t small = total / 2, big = total - total / 2;
  *begin = auto_pad == "SAME_UPPER" ? small : big;
  *end = auto_pad == "SAME_UPPER" ? big : small;
}

void same_padding(const std::string& auto_pad, int64_t in, int64_t stride, int64_t extent, int64_t* begin,
                  int64_t* end) {
  const int64_t out = (in + stride - 1) / stride;
  split_padding(auto_pad, std::max<int64_t>((out - 1) * stride + extent - in, 0), begin, end);
}

Status normalise_fused_act(Node& n) {
  if (!n.attrs.has("fused_act")) return Status::Ok();
  const std::string act = n.attrs.get_string("fused_act", "");
  if (act.empty()) {
    n.attrs.erase("fused_act");
    return Status::Ok();
  }
  const FusedAct a = parse_fused_act(act);
  if (a == FusedAct::kNone) return ORKNN_NODE_ERR(n, "unsupported fused_act '%s'", act.c_str());
  const ActParams def = default_act_params(a);
  n.attrs.set_float("fused_alpha", n.attrs.get_float("fused_alpha", def.alpha));
  n.attrs.set_float("fused_beta", n.attrs.get_float("fused_beta", def.beta));
  return Status::Ok();
}

Status normalise_epsilon(Node& n) {
  const float eps = n.attrs.get_float("epsilon", 1e-5f);
  if (!(eps >= 0.f)) return ORKNN_NODE_ERR(n, "epsilon must be >= 0, got %g", eps);
  n.attrs.set_float("epsilon", eps);
  return Status::Ok();
}

}  // namespace orknn
