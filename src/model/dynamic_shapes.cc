// Shape sets of dynamic-shape models: building one set's graph, and (converter side) collecting
// the per-set differences from graphs converted once per set.
#include "model/dynamic_shapes.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace orknn {
namespace {

bool same_float(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool same_attrs(const Attrs& a, const Attrs& b) { return first_attr_difference(a, b).empty(); }

bool same_quant(const QuantParams& a, const QuantParams& b) {
  if (a.axis != b.axis || a.zero_point != b.zero_point || a.scale.size() != b.scale.size()) return false;
  for (size_t i = 0; i < a.scale.size(); ++i)
    if (!same_float(a.scale[i], b.scale[i])) return false;
  return true;
}

// The node that produces tensor `id` in g, or the first node that reads it, for messages.
std::string tensor_context(const Graph& g, int id) {
  for (const Node& n : g.nodes)
    for (int o : n.outputs)
      if (o == id) return strfmt(" (output of node '%s', %s)", n.name.c_str(), op_name(n.op));
  for (const Node& n : g.nodes)
    for (int i : n.inputs)
      if (i == id) return strfmt(" (input of node '%s', %s)", n.name.c_str(), op_name(n.op));
  return "";
}

constexpr char kRemedy[] =
    "the converted graph depends on the input shape (constant folding or a pass made different nodes for "
    "different shapes). Remedy: export the ONNX model so that its graph is the same for every shape (e.g. "
    "no shape-dependent branches or constants), or convert one model per shape";

std::string set_label(const Graph& g, size_t s) {
  std::string r;
  for (const GraphInput& in : g.inputs)
    r += (r.empty() ? "" : ", ") + g.tensor(in.tensor).name + "=" + shape_dims_str(g.tensor(in.tensor).shape);
  return strfmt("shape set %zu (%s)", s, r.c_str());
}

Status structure_error(const Graph& g0, const Graph& gs, size_t s, const std::string& what) {
  return ORKNN_ERR(kInvalidParam, "dynamic shapes: %s differs in structure from %s: %s; %s", set_label(gs, s).c_str(),
                   set_label(g0, 0).c_str(), what.c_str(), kRemedy);
}

}  // namespace

std::string shape_dims_str(const Shape& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r.empty() ? "scalar" : r;
}

Status make_shape_variant(const Graph& base, const DynamicShapes& dyn, size_t set, Graph* out) {
  if (set >= dyn.sets.size())
    return ORKNN_ERR(kInvalidParam, "shape set %zu does not exist (the model has %zu)", set, dyn.sets.size());
  const ShapeSetVariant& v = dyn.sets[set];
  if (v.tensor_shapes.size() != base.tensors.size())
    return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: %zu tensor shapes for %zu tensors", set,
                     v.tensor_shapes.size(), base.tensors.size());
  if (v.input_shapes.size() != base.inputs.size())
    return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: %zu input shapes for %zu inputs", set,
                     v.input_shapes.size(), base.inputs.size());
  Graph g = base;  // constants share their bytes (ConstData holds a shared owner)
  for (size_t i = 0; i < g.tensors.size(); ++i) g.tensors[i].shape = v.tensor_shapes[i];
  for (const auto& [node, attrs] : v.node_attrs) {
    if (node < 0 || static_cast<size_t>(node) >= g.nodes.size())
      return ORKNN_ERR(kInvalidModel, "dynamic shape set %zu: attribute override for node %d, out of range (%zu nodes)",
                       set, node, g.nodes.size());
    g.nodes[static_cast<size_t>(node)].attrs = attrs;
  }
  *out = std::move(g);
  return Status::Ok();
}

Status collect_dynamic_shapes(const std::vector<Graph>& graphs, DynamicShapes* out) {
  out->sets.clear();
  if (graphs.empty()) return Status::Ok();
  if (graphs.size() > kMaxShapeSets)
    return ORKNN_ERR(kInvalidParam, "dynamic shapes: %zu shape sets; at most %zu are supported", graphs.size(),
                     kMaxShapeSets);
  const Graph& g0 = graphs[0];
  DynamicShapes dyn;
  for (size_t s = 0; s < graphs.size(); ++s) {
    const Graph& gs = graphs[s];
    if (gs.tensors.size() != g0.tensors.size() || gs.nodes.size() != g0.nodes.size())
      return structure_error(g0, gs, s,
                             strfmt("it has %zu nodes and %zu tensors, set 0 has %zu nodes and %zu tensors",
                                    gs.nodes.size(), gs.tensors.size(), g0.nodes.size(), g0.tensors.size()) +
                                 [&]() -> std::string {
                                   size_t n = std::min(gs.nodes.size(), g0.nodes.size());
                                   for (size_t i = 0; i < n; ++i)
                                     if (gs.nodes[i].name != g0.nodes[i].name || gs.nodes[i].op != g0.nodes[i].op)
                                       return strfmt(" (first differing node: %zu, '%s' (%s) vs '%s' (%s))", i,
                                                     gs.nodes[i].name.c_str(), op_name(gs.nodes[i].op),
                                                     g0.nodes[i].name.c_str(), op_name(g0.nodes[i].op));
                                   return "";
                                 }());
    if (gs.inputs.size() != g0.inputs.size() || gs.outputs != g0.outputs)
      return structure_error(g0, gs, s, "its graph inputs or outputs differ");
    ShapeSetVariant v;
    for (size_t i = 0; i < gs.nodes.size(); ++i) {
      const Node& a = g0.nodes[i];
      const Node& b = gs.nodes[i];
      if (a.name != b.name || a.op != b.op || a.inputs != b.inputs || a.outputs != b.outputs)
        return structure_error(g0, gs, s,
                               strfmt("node %zu is '%s' (%s) there but '%s' (%s) in set 0, or its inputs/outputs "
                                      "differ",
                                      i, b.name.c_str(), op_name(b.op), a.name.c_str(), op_name(a.op)));
      if (!same_attrs(a.attrs, b.attrs)) v.node_attrs.emplace_back(static_cast<int>(i), b.attrs);
    }
    for (size_t i = 0; i < gs.tensors.size(); ++i) {
      const Tensor& a = g0.tensors[i];
      const Tensor& b = gs.tensors[i];
      const int id = static_cast<int>(i);
      if (a.name != b.name || a.dtype != b.dtype || !same_quant(a.quant, b.quant) || a.is_const() != b.is_const())
        return structure_error(g0, gs, s,
                               strfmt("tensor %zu '%s'%s differs (name, type, quantization or constness)", i,
                                      b.name.c_str(), tensor_context(gs, id).c_str()));
      if (a.is_const() &&
          (a.shape != b.shape || a.data.size != b.data.size || std::memcmp(a.data.ptr, b.data.ptr, a.data.size) != 0))
        return structure_error(g0, gs, s,
                               strfmt("constant tensor %zu '%s'%s has a different value (shape %s vs %s)", i,
                                      b.name.c_str(), tensor_context(gs, id).c_str(), shape_str(b.shape).c_str(),
                                      shape_str(a.shape).c_str()));
      if (a.shape.size() != b.shape.size())
        return structure_error(g0, gs, s,
                               strfmt("tensor %zu '%s'%s has rank %zu, %zu in set 0", i, b.name.c_str(),
                                      tensor_context(gs, id).c_str(), b.shape.size(), a.shape.size()));
      v.tensor_shapes.push_back(b.shape);
    }
    for (size_t k = 0; k < gs.inputs.size(); ++k) {
      const GraphInput& a = g0.inputs[k];
      const GraphInput& b = gs.inputs[k];
      if (a.tensor != b.tensor || a.mean != b.mean || a.std != b.std)
        return structure_error(g0, gs, s, strfmt("graph input %zu differs (tensor or mean/std)", k));
      v.input_shapes.push_back(gs.tensor(b.tensor).shape);
    }
    for (size_t p = 0; p < s; ++p)
      if (dyn.sets[p].input_shapes == v.input_shapes)
        return ORKNN_ERR(kInvalidParam, "dynamic shapes: %s repeats shape set %zu", set_label(gs, s).c_str(), p);
    dyn.sets.push_back(std::move(v));
  }
  *out = std::move(dyn);
  return Status::Ok();
}

}  // namespace orknn
