// Removes nodes that pass their data input through unchanged: Identity, Dropout (inference),
// Reshape/Flatten/Squeeze/Unsqueeze/Expand to the same shape, Cast to the same dtype, a Slice
// taking everything, an identity Transpose, Pad with all-zero pads, Resize/Tile by 1, a one-input
// Concat, a one-output Split, x+0, x-0, x*1, x/1. Graph input and output tensors keep their names.
#include <cmath>

#include "graph/passes/passes.h"

namespace orknn {
namespace {

bool same_type_and_shape(const Graph& g, int a, int b) {
  const Tensor& x = g.tensor(a);
  const Tensor& y = g.tensor(b);
  return x.shape == y.shape && x.dtype == y.dtype;
}

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v)
    if (e != x) return false;
  return true;
}

// True when constant tensor t holds only `value` (float or integer types).
bool const_all(const Graph& g, int t, double value) {
  if (t < 0) return false;
  const Tensor& c = g.tensor(t);
  if (!c.is_const() || c.numel() == 0) return false;
  for (int64_t i = 0, count = c.numel(); i < count; ++i) {
    double v;
    switch (c.dtype) {
      case DType::kF32: v = c.const_ptr<float>()[i]; break;
      case DType::kI32: v = c.const_ptr<int32_t>()[i]; break;
      case DType::kI64: v = static_cast<double>(c.const_ptr<int64_t>()[i]); break;
      default: return false;
    }
    if (v != value) return false;
  }
  return true;
}

// Index of the data input when node n is a no-op, else -1.
int noop_data_input(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] < 0) return -1;
  const int in = n.inputs[0], out = n.outputs[0];
  const bool same = same_type_and_shape(g, in, out);
  switch (n.op) {
    case OpId::Identity:
    case OpId::Dropout:
      return same ? 0 : -1;
    case OpId::Reshape: case OpId::Flatten: case OpId::Squeeze: case OpId::Unsqueeze: case OpId::Expand:
    case OpId::Cast:
      return same ? 0 : -1;
    case OpId::Slice:
      return same && all_equal(n.attrs.get_ints("steps"), 1) ? 0 : -1;
    case OpId::Transpose: {
      if (!same) return -1;
      std::vector<int64_t> perm = n.attrs.get_ints("perm");
      if (perm.empty()) return g.tensor(in).shape.size() <= 1 ? 0 : -1;
      for (size_t i = 0; i < perm.size(); ++i)
        if (perm[i] != static_cast<int64_t>(i)) return -1;
      return 0;
    }
    case OpId::Pad:
      return same && all_equal(n.attrs.get_ints("pads"), 0) ? 0 : -1;
    case OpId::Resize: {
      if (!same) return -1;
      for (float s : n.attrs.get_floats("scales"))
        if (s != 1.f) return -1;
      return 0;
    }
    case OpId::Tile:
      return same && all_equal(n.attrs.get_ints("repeats"), 1) ? 0 : -1;
    case OpId::Concat: {
      int present = 0;
      for (int t : n.inputs) present += t >= 0;
      return same && present == 1 ? 0 : -1;
    }
    case OpId::Split:
      return same ? 0 : -1;
    case OpId::Add: case OpId::Mul: case OpId::Sub: case OpId::Div: {
      if (n.inputs.size() != 2 || n.inputs[1] < 0) return -1;
      const double neutral = (n.op == OpId::Add || n.op == OpId::Sub) ? 0.0 : 1.0;
      // The data operand must already have the output's shape, so dropping the op changes nothing.
      if (same_type_and_shape(g, n.inputs[0], out) && const_all(g, n.inputs[1], neutral) &&
          !g.tensor(n.inputs[0]).is_const())
        return 0;
      if ((n.op == OpId::Add || n.op == OpId::Mul) && same_type_and_shape(g, n.inputs[1], out) &&
          const_all(g, n.inputs[0], neutral) && !g.tensor(n.inputs[1]).is_const())
        return 1;
      return -1;
    }
    default:
      return -1;
  }
}

}  // namespace

Status remove_noop_nodes(Graph& g, int* changes) {
  int removed = 0;
  for (size_t i = 0; i < g.nodes.size();) {
    const Node& n = g.nodes[i];
    int k = noop_data_input(g, n);
    if (k < 0) { ++i; continue; }
    const int in = n.inputs[static_cast<size_t>(k)], out = n.outputs[0];
    if (!is_graph_output(g, out)) {
      replace_tensor_uses(g, out, in);
    } else {
      // The output name must survive. Rename the data tensor to it instead, unless the data tensor
      // itself is named by the graph's interface (or is a constant, which has no producer).
      if (is_graph_input(g, in) || is_graph_output(g, in) || g.tensor(in).is_const()) { ++i; continue; }
      for (Node& m : g.nodes) {
        for (int& t : m.inputs) if (t == in) t = out;
        for (int& t : m.outputs) if (t == in) t = out;
      }
    }
    g.nodes.erase(g.nodes.begin() + static_cast<long>(i));
    ++removed;
  }
  if (changes) *changes += removed;
  return Status::Ok();
}

}  // namespace orknn
