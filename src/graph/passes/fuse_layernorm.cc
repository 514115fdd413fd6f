// Recognises layer normalisation as exporters without LayerNormalization (opset < 17) write it:
//   m = ReduceMean(x, axes=[last], keepdims=1)
//   d = Sub(x, m)
//   v = ReduceMean(Pow(d, 2) | Mul(d, d), axes=[last], keepdims=1)
//   n = Div(d, Sqrt(Add(v, eps)))
//   y = Add(Mul(n, scale), bias)        (Mul and Add optional; constant operands on either side)
// and replaces it with one LayerNormalization(x, scale, bias, axis=-1, epsilon=eps). Every
// intermediate must be read only inside the pattern and must not be a graph output.
#include <algorithm>
#include <vector>

#include "graph/passes/passes.h"

namespace orknn {
namespace {

struct Ctx {
  Graph& g;
  std::vector<std::vector<int>> consumers;
  std::vector<int> producers;
};

// The only reader of tensor t, when it has exactly one and is not a graph output.
int sole_consumer(const Ctx& c, int t) {
  if (t < 0 || is_graph_output(c.g, t)) return -1;
  const auto& cs = c.consumers[static_cast<size_t>(t)];
  return cs.size() == 1 ? cs[0] : -1;
}

const Node* node_at(const Ctx& c, int i) { return i < 0 ? nullptr : &c.g.nodes[static_cast<size_t>(i)]; }

bool is_last_axis_mean(const Graph& g, const Node& n) {
  if (n.op != OpId::ReduceMean || n.inputs.empty() || n.inputs[0] < 0) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0) return false;
  if (n.attrs.get_int("keepdims", 1) != 1) return false;
  const int64_t rank = static_cast<int64_t>(g.tensor(n.inputs[0]).shape.size());
  std::vector<int64_t> axes = n.attrs.get_ints("axes");
  return rank >= 1 && axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

// Scalar float constant value of t.
bool scalar_const(const Graph& g, int t, float* v) {
  if (t < 0) return false;
  const Tensor& c = g.tensor(t);
  if (!c.is_const() || c.dtype != DType::kF32 || c.numel() != 1) return false;
  *v = c.const_ptr<float>()[0];
  return true;
}

// A float constant that broadcasts along the last axis only (numel == D, leading dims 1).
bool last_axis_const(const Graph& g, int t, int64_t d) {
  if (t < 0) return false;
  const Tensor& c = g.tensor(t);
  if (!c.is_const() || c.dtype != DType::kF32 || c.shape.empty() || c.shape.back() != d) return false;
  return c.numel() == d;
}

// For a binary node with exactly one constant operand: index of the other operand.
int variable_operand(const Graph& g, const Node& n) {
  if (n.inputs.size() != 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return -1;
  bool c0 = g.tensor(n.inputs[0]).is_const(), c1 = g.tensor(n.inputs[1]).is_const();
  if (c0 == c1) return -1;
  return c0 ? 1 : 0;
}

// Tries to match the pattern starting at ReduceMean node mi. On success fills the nodes to remove
// (`chain`), the index of the last one, and the fused node.
bool match(Ctx& c, int mi, std::vector<int>* chain, int* last, Node* fused) {
  const Graph& g = c.g;
  const Node& mean1 = g.nodes[static_cast<size_t>(mi)];
  if (!is_last_axis_mean(g, mean1)) return false;
  const int x = mean1.inputs[0];
  const Tensor& xt = g.tensor(x);
  if (xt.dtype != DType::kF32 || xt.is_const()) return false;
  const int64_t d = xt.shape.back();

  const Node* sub = node_at(c, sole_consumer(c, mean1.outputs[0]));
  int sub_i = sole_consumer(c, mean1.outputs[0]);
  if (!sub || sub->op != OpId::Sub || sub->inputs.size() != 2 || sub->inputs[0] != x || sub->inputs[1] != mean1.outputs[0])
    return false;
  const int diff = sub->outputs[0];
  if (is_graph_output(g, diff)) return false;
  const auto& diff_users = c.consumers[static_cast<size_t>(diff)];
  // Pow(d,2) + Div(d,.), or Mul(d,d) (reads d twice) + Div(d,.)
  int sq_i = -1, div_i = -1;
  for (int u : diff_users) {
    const Node& un = g.nodes[static_cast<size_t>(u)];
    if (un.op == OpId::Div && un.inputs.size() == 2 && un.inputs[0] == diff) div_i = u;
    else if (un.op == OpId::Pow || un.op == OpId::Mul) sq_i = u;
    else return false;
  }
  if (sq_i < 0 || div_i < 0) return false;
  const Node& sq = g.nodes[static_cast<size_t>(sq_i)];
  float two;
  if (sq.op == OpId::Pow) {
    if (diff_users.size() != 2 || sq.inputs.size() != 2 || sq.inputs[0] != diff || !scalar_const(g, sq.inputs[1], &two) || two != 2.f)
      return false;
  } else {
    if (diff_users.size() != 3 || sq.inputs.size() != 2 || sq.inputs[0] != diff || sq.inputs[1] != diff) return false;
  }
  int mean2_i = sole_consumer(c, sq.outputs[0]);
  const Node* mean2 = node_at(c, mean2_i);
  if (!mean2 || !is_last_axis_mean(g, *mean2)) return false;
  int add_eps_i = sole_consumer(c, mean2->outputs[0]);
  const Node* add_eps = node_at(c, add_eps_i);
  if (!add_eps || add_eps->op != OpId::Add) return false;
  int v_idx = variable_operand(g, *add_eps);
  float eps;
  if (v_idx < 0 || add_eps->inputs[static_cast<size_t>(v_idx)] != mean2->outputs[0] ||
      !scalar_const(g, add_eps->inputs[static_cast<size_t>(1 - v_idx)], &eps))
    return false;
  int sqrt_i = sole_consumer(c, add_eps->outputs[0]);
  const Node* sqrt_n = node_at(c, sqrt_i);
  if (!sqrt_n || sqrt_n->op != OpId::Sqrt) return false;
  const Node& div = g.nodes[static_cast<size_t>(div_i)];
  if (sole_consumer(c, sqrt_n->outputs[0]) != div_i || div.inputs[1] != sqrt_n->outputs[0]) return false;

  *chain = {mi, sub_i, sq_i, mean2_i, add_eps_i, sqrt_i, div_i};
  int out = div.outputs[0];
  int scale = -1, bias = -1;
  // optional Mul(scale), then optional Add(bias)
  int mul_i = sole_consumer(c, out);
  const Node* mul = node_at(c, mul_i);
  if (mul && mul->op == OpId::Mul) {
    int vi = variable_operand(g, *mul);
    if (vi >= 0 && mul->inputs[static_cast<size_t>(vi)] == out && last_axis_const(g, mul->inputs[static_cast<size_t>(1 - vi)], d)) {
      scale = mul->inputs[static_cast<size_t>(1 - vi)];
      out = mul->outputs[0];
      chain->push_back(mul_i);
    }
  }
  int add_i = sole_consumer(c, out);
  const Node* add = node_at(c, add_i);
  if (add && add->op == OpId::Add) {
    int vi = variable_operand(g, *add);
    if (vi >= 0 && add->inputs[static_cast<size_t>(vi)] == out && last_axis_const(g, add->inputs[static_cast<size_t>(1 - vi)], d)) {
      bias = add->inputs[static_cast<size_t>(1 - vi)];
      out = add->outputs[0];
      chain->push_back(add_i);
    }
  }
  // The fused output must have x's shape (no broadcasting beyond it by scale/bias).
  if (g.tensor(out).shape != xt.shape) return false;

  *last = *std::max_element(chain->begin(), chain->end());
  fused->name = g.nodes[static_cast<size_t>(*last)].name + "_layernorm";
  fused->op = OpId::LayerNormalization;
  fused->inputs = {x, scale, bias};
  fused->outputs = {out};
  fused->attrs.set_int("axis", -1);
  fused->attrs.set_float("epsilon", eps);
  return true;
}

// LayerNormalization takes 1-D [D] scale/bias; makes one from `t` (or ones/none when absent).
int as_vector_const(Graph& g, int t, int64_t d, float fill, const std::string& name) {
  if (t >= 0 && g.tensor(t).shape.size() == 1) return t;
  std::vector<float> v(static_cast<size_t>(d), fill);
  if (t >= 0) std::copy(g.tensor(t).const_ptr<float>(), g.tensor(t).const_ptr<float>() + d, v.begin());
  return g.add_const(unique_name(g, name), {d}, DType::kF32, v.data(), v.size() * sizeof(float));
}

}  // namespace

Status fuse_layernorm(Graph& g, int* changes) {
  int fused_count = 0;
  for (long start = 0; start < static_cast<long>(g.nodes.size()); ++start) {
    if (g.nodes[static_cast<size_t>(start)].op != OpId::ReduceMean) continue;
    Ctx c{g, tensor_consumers(g), tensor_producers(g)};
    std::vector<int> chain;
    int last = -1;
    Node fused;
    if (!match(c, static_cast<int>(start), &chain, &last, &fused)) continue;
    const int64_t d = g.tensor(fused.inputs[0]).shape.back();
    const std::string base = fused.name;
    fused.inputs[1] = as_vector_const(g, fused.inputs[1], d, 1.f, base + "_scale");
    if (fused.inputs[2] >= 0) fused.inputs[2] = as_vector_const(g, fused.inputs[2], d, 0.f, base + "_bias");
    else fused.inputs.resize(2);
    const OpDef* def = find_op(OpId::LayerNormalization);
    if (!def || !def->infer) return Status::Ok();  // the op is not available: leave the pattern
    Status st = def->infer(g, fused);
    if (!st.ok())
      return Status(st.code(), strfmt("fuse_layernorm at node '%s': %s", base.c_str(), st.message().c_str()));
    // The fused node takes the place of the pattern's last node; the others go.
    g.nodes[static_cast<size_t>(last)] = std::move(fused);
    std::sort(chain.begin(), chain.end());
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      if (*it != last) g.nodes.erase(g.nodes.begin() + *it);
    ++fused_count;
    start = chain.front() - 1;  // nodes before the pattern were already checked
  }
  if (changes) *changes += fused_count;
  return Status::Ok();
}

}  // namespace orknn
