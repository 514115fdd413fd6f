// The graph verifier: the gate every graph passes before the runtime plans it (and before the
// writer serialises it). It must never crash, whatever the graph holds: structural facts that op
// infer functions rely on (indices in range, inputs defined, constant sizes) are checked before
// any infer function runs, and infer functions run on a scratch copy of the graph.
#include "graph/verifier.h"

#include "model/dynamic_shapes.h"

#include <climits>
#include <cmath>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace orknn {
namespace {

// Limits that keep every later size computation (bytes = numel * 8, arena sums) far from overflow.
// A tensor of 2^40 elements is 4 TiB of fp32: nothing real comes close.
constexpr int64_t kMaxElements = int64_t{1} << 40;
constexpr uint64_t kMaxTotalBytes = uint64_t{1} << 50;
// The C API reports at most RKNN_MAX_DIMS (16) dims per tensor.
constexpr size_t kMaxRank = 16;

// Where a tensor's value comes from, for use-before-definition checks and messages.
constexpr int kUndefined = -1;
constexpr int kFromConst = -2;
constexpr int kFromGraphInput = -3;

std::string tensor_label(const Graph& g, int id) {
  return strfmt("%d '%s'", id, g.tensors[static_cast<size_t>(id)].name.c_str());
}

std::string node_label(const Graph& g, size_t index) {
  const Node& n = g.nodes[index];
  const OpDef* def = find_op(n.op);
  std::string op = def ? def->name : strfmt("op id %u", static_cast<unsigned>(n.op));
  return strfmt("node %zu '%s' (%s)", index, n.name.c_str(), op.c_str());
}

// numel of a shape, or -1 when a dim is negative or the count exceeds kMaxElements.
int64_t checked_numel(const Shape& s) {
  for (int64_t d : s)
    if (d < 0) return -1;
  for (int64_t d : s)
    if (d == 0) return 0;  // empty, however large the other dims are
  int64_t n = 1;
  for (int64_t d : s) {
    if (n > kMaxElements / d) return -1;
    n *= d;
  }
  return n;
}

bool zero_point_fits(DType t, int32_t zp) {
  switch (t) {
    case DType::kI8: return zp >= -128 && zp <= 127;
    case DType::kU8: return zp >= 0 && zp <= 255;
    case DType::kI16: return zp >= -32768 && zp <= 32767;
    case DType::kU16: return zp >= 0 && zp <= 65535;
    default: return true;
  }
}

Status check_quant(const Graph& g, int id) {
  const Tensor& t = g.tensors[static_cast<size_t>(id)];
  const QuantParams& q = t.quant;
  if (q.scale.empty() && q.zero_point.empty()) return Status::Ok();
  if (q.scale.size() != q.zero_point.size())
    return ORKNN_ERR(kInvalidModel, "tensor %s: %zu quantization scales but %zu zero points",
                     tensor_label(g, id).c_str(), q.scale.size(), q.zero_point.size());
  if (q.axis == -1) {
    if (q.scale.size() != 1)
      return ORKNN_ERR(kInvalidModel, "tensor %s: %zu quantization scales for a per-tensor quantization (axis -1)",
                       tensor_label(g, id).c_str(), q.scale.size());
  } else {
    if (q.axis < 0 || static_cast<size_t>(q.axis) >= t.shape.size())
      return ORKNN_ERR(kInvalidModel, "tensor %s: quantization axis %d out of range for shape %s",
                       tensor_label(g, id).c_str(), q.axis, shape_str(t.shape).c_str());
    if (static_cast<int64_t>(q.scale.size()) != t.shape[static_cast<size_t>(q.axis)])
      return ORKNN_ERR(kInvalidModel, "tensor %s: %zu quantization scales, but dim %d of shape %s is %lld",
                       tensor_label(g, id).c_str(), q.scale.size(), q.axis, shape_str(t.shape).c_str(),
                       static_cast<long long>(t.shape[static_cast<size_t>(q.axis)]));
  }
  for (size_t c = 0; c < q.scale.size(); ++c) {
    if (!std::isfinite(q.scale[c]) || !(q.scale[c] > 0.f))
      return ORKNN_ERR(kInvalidModel, "tensor %s: quantization scale[%zu] = %g is not a positive finite number",
                       tensor_label(g, id).c_str(), c, static_cast<double>(q.scale[c]));
    if (!zero_point_fits(t.dtype, q.zero_point[c]))
      return ORKNN_ERR(kInvalidModel, "tensor %s: zero point[%zu] = %d is out of range for %s",
                       tensor_label(g, id).c_str(), c, q.zero_point[c], dtype_name(t.dtype));
  }
  return Status::Ok();
}

Status check_tensors(const Graph& g) {
  if (g.tensors.size() > static_cast<size_t>(INT_MAX))
    return ORKNN_ERR(kInvalidModel, "graph has %zu tensors, more than an index can address", g.tensors.size());
  uint64_t total_bytes = 0;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    int id = static_cast<int>(i);
    if (!dtype_valid(static_cast<int>(t.dtype)))
      return ORKNN_ERR(kInvalidModel, "tensor %s: invalid dtype %d", tensor_label(g, id).c_str(),
                       static_cast<int>(t.dtype));
    if (t.shape.size() > kMaxRank)
      return ORKNN_ERR(kInvalidModel, "tensor %s: rank %zu exceeds the maximum of %zu",
                       tensor_label(g, id).c_str(), t.shape.size(), kMaxRank);
    int64_t numel = checked_numel(t.shape);
    if (numel < 0)
      return ORKNN_ERR(kInvalidModel, "tensor %s: invalid shape %s (negative dim or more than 2^40 elements)",
                       tensor_label(g, id).c_str(), shape_str(t.shape).c_str());
    uint64_t nbytes = static_cast<uint64_t>(numel) * dtype_size(t.dtype);
    total_bytes += nbytes;
    if (total_bytes > kMaxTotalBytes)
      return ORKNN_ERR(kInvalidModel, "tensor %s: the graph's tensors add up to more than 2^50 bytes",
                       tensor_label(g, id).c_str());
    if (t.is_const() && t.data.size != nbytes)
      return ORKNN_ERR(kInvalidModel, "tensor %s: constant holds %zu bytes, but shape %s x %s needs %llu",
                       tensor_label(g, id).c_str(), t.data.size, shape_str(t.shape).c_str(),
                       dtype_name(t.dtype), static_cast<unsigned long long>(nbytes));
    ORKNN_RETURN_IF_ERROR(check_quant(g, id));
  }
  return Status::Ok();
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

Status check_inputs(const Graph& g, std::vector<int>* source) {
  const int n_tensors = static_cast<int>(g.tensors.size());
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const GraphInput& in = g.inputs[k];
    if (in.tensor < 0 || in.tensor >= n_tensors)
      return ORKNN_ERR(kInvalidModel, "graph input %zu: tensor index %d out of range (%d tensors)", k, in.tensor,
                       n_tensors);
    const Tensor& t = g.tensors[static_cast<size_t>(in.tensor)];
    if (t.is_const())
      return ORKNN_ERR(kInvalidModel, "graph input %zu: tensor %s is a constant", k,
                       tensor_label(g, in.tensor).c_str());
    if ((*source)[static_cast<size_t>(in.tensor)] != kUndefined)
      return ORKNN_ERR(kInvalidModel, "graph input %zu: tensor %s is listed twice", k,
                       tensor_label(g, in.tensor).c_str());
    (*source)[static_cast<size_t>(in.tensor)] = kFromGraphInput;
    // mean/std are per channel (dim 1 of the NCHW input) or one value for all channels.
    size_t channels = t.shape.size() >= 2 ? static_cast<size_t>(t.shape[1]) : 1;
    for (const auto* v : {&in.mean, &in.std}) {
      const char* what = v == &in.mean ? "mean" : "std";
      if (v->size() > 1 && v->size() != channels)
        return ORKNN_ERR(kInvalidModel, "graph input %zu (tensor %s): %zu %s values for %zu channels", k,
                         tensor_label(g, in.tensor).c_str(), v->size(), what, channels);
      if (!all_finite(*v))
        return ORKNN_ERR(kInvalidModel, "graph input %zu (tensor %s): %s values must be finite", k,
                         tensor_label(g, in.tensor).c_str(), what);
    }
    for (float s : in.std)
      if (s == 0.f)
        return ORKNN_ERR(kInvalidModel, "graph input %zu (tensor %s): std value 0 (division by zero)", k,
                         tensor_label(g, in.tensor).c_str());
  }
  return Status::Ok();
}

// Structure of one node, checked before its infer function may look at it.
Status check_node_structure(const Graph& g, size_t index, std::vector<int>* source) {
  const Node& n = g.nodes[index];
  const int n_tensors = static_cast<int>(g.tensors.size());
  const OpDef* def = find_op(n.op);
  if (!def)
    return ORKNN_ERR(kInvalidModel, "%s: unknown op id %u", node_label(g, index).c_str(),
                     static_cast<unsigned>(n.op));
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    int id = n.inputs[k];
    if (id == -1) continue;
    if (id < -1 || id >= n_tensors)
      return ORKNN_ERR(kInvalidModel, "%s: input %zu has tensor index %d out of range (%d tensors)",
                       node_label(g, index).c_str(), k, id, n_tensors);
    if ((*source)[static_cast<size_t>(id)] == kUndefined)
      return ORKNN_ERR(kInvalidModel,
                       "%s: input %zu, tensor %s, is used before it is produced (not a constant, graph input "
                       "or output of an earlier node)",
                       node_label(g, index).c_str(), k, tensor_label(g, id).c_str());
  }
  if (n.outputs.empty())
    return ORKNN_ERR(kInvalidModel, "%s: node has no outputs", node_label(g, index).c_str());
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    int id = n.outputs[k];
    if (id == -1) continue;  // absent optional output
    if (id < -1 || id >= n_tensors)
      return ORKNN_ERR(kInvalidModel, "%s: output %zu has tensor index %d out of range (%d tensors)",
                       node_label(g, index).c_str(), k, id, n_tensors);
    int src = (*source)[static_cast<size_t>(id)];
    if (src != kUndefined) {
      std::string by = src == kFromConst ? "it is a constant"
                       : src == kFromGraphInput ? "it is a graph input"
                       : strfmt("it is already produced by %s", node_label(g, static_cast<size_t>(src)).c_str());
      return ORKNN_ERR(kInvalidModel, "%s: output %zu, tensor %s, cannot be written: %s",
                       node_label(g, index).c_str(), k, tensor_label(g, id).c_str(), by.c_str());
    }
    (*source)[static_cast<size_t>(id)] = static_cast<int>(index);
  }
  return Status::Ok();
}

// Re-runs the op's infer function on a copy of the node, against `scratch` (a copy of the graph's
// tensors), and requires that it reproduces the stored output shapes/dtypes and leaves the node as
// it is: a stored node must already be normalised, since kernels read only the normalised form.
Status check_node_infer(const Graph& g, size_t index, Graph* scratch) {
  const Node& n = g.nodes[index];
  const OpDef* def = find_op(n.op);
  if (!def->infer)
    return ORKNN_ERR(kInvalidModel, "%s: op %s has no shape inference in this build", node_label(g, index).c_str(),
                     def->name);
  const size_t n_tensors = g.tensors.size();
  Node copy = n;
  Status st;
  try {
    st = def->infer(*scratch, copy);
  } catch (const std::exception& e) {
    st = ORKNN_ERR(kInvalidModel, "exception: %s", e.what());
  } catch (...) {
    st = ORKNN_ERR(kInvalidModel, "unknown exception");
  }
  if (!st.ok())
    return ORKNN_ERR(kInvalidModel, "%s: shape inference failed: %s", node_label(g, index).c_str(),
                     st.message().c_str());
  if (scratch->tensors.size() != n_tensors)
    return ORKNN_ERR(kInvalidModel, "%s: node is not normalised (shape inference added tensors)",
                     node_label(g, index).c_str());
  if (copy.inputs != n.inputs || copy.outputs != n.outputs)
    return ORKNN_ERR(kInvalidModel, "%s: node is not normalised (shape inference changed its inputs/outputs)",
                     node_label(g, index).c_str());
  std::string changed = first_attr_difference(n.attrs, copy.attrs);
  if (!changed.empty())
    return ORKNN_ERR(kInvalidModel, "%s: node is not normalised (shape inference changed attribute '%s')",
                     node_label(g, index).c_str(), changed.c_str());
  for (int id : n.outputs) {
    if (id < 0) continue;
    const Tensor& stored = g.tensors[static_cast<size_t>(id)];
    Tensor& inferred = scratch->tensors[static_cast<size_t>(id)];
    if (inferred.shape != stored.shape || inferred.dtype != stored.dtype) {
      return ORKNN_ERR(kInvalidModel, "%s: output tensor %s is stored as %s %s, but the op infers %s %s",
                       node_label(g, index).c_str(), tensor_label(g, id).c_str(), shape_str(stored.shape).c_str(),
                       dtype_name(stored.dtype), shape_str(inferred.shape).c_str(),
                       dtype_valid(static_cast<int>(inferred.dtype)) ? dtype_name(inferred.dtype) : "?");
    }
    // Later nodes must see exactly the stored tensor, whatever else infer touched.
    inferred.shape = stored.shape;
    inferred.dtype = stored.dtype;
  }
  return Status::Ok();
}

Status verify_graph_impl(const Graph& g) {
  ORKNN_RETURN_IF_ERROR(check_tensors(g));

  std::vector<int> source(g.tensors.size(), kUndefined);
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (g.tensors[i].is_const()) source[i] = kFromConst;
  ORKNN_RETURN_IF_ERROR(check_inputs(g, &source));

  // Infer functions see the tensors only (nodes are not theirs to look at); one copy for the
  // whole graph keeps the verifier O(graph). Constants share their bytes with g.
  Graph scratch;
  scratch.tensors = g.tensors;
  scratch.inputs = g.inputs;
  scratch.outputs = g.outputs;
  scratch.platform = g.platform;
  scratch.custom_string = g.custom_string;
  scratch.precision = g.precision;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    ORKNN_RETURN_IF_ERROR(check_node_structure(g, i, &source));
    ORKNN_RETURN_IF_ERROR(check_node_infer(g, i, &scratch));
  }

  if (g.outputs.empty()) return ORKNN_ERR(kInvalidModel, "graph has no outputs");
  const int n_tensors = static_cast<int>(g.tensors.size());
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    int id = g.outputs[k];
    if (id < 0 || id >= n_tensors)
      return ORKNN_ERR(kInvalidModel, "graph output %zu: tensor index %d out of range (%d tensors)", k, id,
                       n_tensors);
    if (source[static_cast<size_t>(id)] == kUndefined)
      return ORKNN_ERR(kInvalidModel, "graph output %zu: tensor %s is never produced", k,
                       tensor_label(g, id).c_str());
  }
  return Status::Ok();
}

}  // namespace

Status verify_graph(const Graph& g) {
  try {
    return verify_graph_impl(g);
  } catch (const std::bad_alloc&) {
    return ORKNN_ERR(kNoMemory, "out of memory while verifying the graph");
  }
}

namespace {

Status verify_dynamic_shapes_impl(const Graph& g, const DynamicShapes& dyn) {
  if (dyn.sets.empty()) return Status::Ok();
  if (dyn.sets.size() > kMaxShapeSets)
    return ORKNN_ERR(kInvalidModel, "dynamic shapes: %zu shape sets, more than the maximum of %zu", dyn.sets.size(),
                     kMaxShapeSets);
  for (size_t s = 0; s < dyn.sets.size(); ++s) {
    const ShapeSetVariant& v = dyn.sets[s];
    if (v.input_shapes.size() != g.inputs.size())
      return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: %zu input shapes, but the graph has %zu inputs", s,
                       v.input_shapes.size(), g.inputs.size());
    if (v.tensor_shapes.size() != g.tensors.size())
      return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: %zu tensor shapes, but the graph has %zu tensors", s,
                       v.tensor_shapes.size(), g.tensors.size());
    for (size_t i = 0; i < g.tensors.size(); ++i) {
      const Tensor& t = g.tensors[i];
      const Shape& shape = v.tensor_shapes[i];
      if (shape.size() != t.shape.size())
        return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: tensor %s has rank %zu, the stored graph %zu", s,
                         tensor_label(g, static_cast<int>(i)).c_str(), shape.size(), t.shape.size());
      if ((t.is_const() || s == 0) && shape != t.shape)
        return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: tensor %s is %s, the stored graph has %s%s", s,
                         tensor_label(g, static_cast<int>(i)).c_str(), shape_str(shape).c_str(),
                         shape_str(t.shape).c_str(), t.is_const() ? " (a constant cannot change shape)" : "");
    }
    for (size_t k = 0; k < g.inputs.size(); ++k)
      if (v.input_shapes[k] != v.tensor_shapes[static_cast<size_t>(g.inputs[k].tensor)])
        return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: input %zu is listed as %s but its tensor is %s", s, k,
                         shape_str(v.input_shapes[k]).c_str(),
                         shape_str(v.tensor_shapes[static_cast<size_t>(g.inputs[k].tensor)]).c_str());
    std::vector<bool> seen(g.nodes.size(), false);
    for (const auto& [node, attrs] : v.node_attrs) {
      if (node < 0 || static_cast<size_t>(node) >= g.nodes.size())
        return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: attribute override for node %d, out of range (%zu nodes)",
                         s, node, g.nodes.size());
      if (seen[static_cast<size_t>(node)])
        return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: two attribute overrides for %s", s,
                         node_label(g, static_cast<size_t>(node)).c_str());
      seen[static_cast<size_t>(node)] = true;
      if (s == 0 && !first_attr_difference(g.nodes[static_cast<size_t>(node)].attrs, attrs).empty())
        return ORKNN_ERR(kInvalidModel, "dynamic shape set 0 changes the attributes of %s (set 0 is the stored graph)",
                         node_label(g, static_cast<size_t>(node)).c_str());
    }
    for (size_t p = 0; p < s; ++p)
      if (dyn.sets[p].input_shapes == v.input_shapes)
        return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu repeats the input shapes of set %zu", s, p);
    if (s == 0) continue;  // the stored graph itself, verified already
    Graph variant;
    ORKNN_RETURN_IF_ERROR(make_shape_variant(g, dyn, s, &variant));
    Status st = verify_graph(variant);
    if (!st.ok()) return Status(st.code(), strfmt("dynamic shape set %zu: ", s) + st.message());
  }
  return Status::Ok();
}

}  // namespace

Status verify_dynamic_shapes(const Graph& g, const DynamicShapes& dyn) {
  try {
    return verify_dynamic_shapes_impl(g, dyn);
  } catch (const std::bad_alloc&) {
    return ORKNN_ERR(kNoMemory, "out of memory while verifying the dynamic shape sets");
  }
}

}  // namespace orknn
