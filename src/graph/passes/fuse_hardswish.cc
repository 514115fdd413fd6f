// Recognises hard-swish as exporters write it without the HardSwish op (opset < 14):
//   PyTorch:      y = Mul(x, HardSigmoid(x, alpha=1/6, beta=0.5))
//   paddle2onnx:  y = Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)    (or Mul by 1/6 at the end)
// and replaces it with HardSwish(x), which fuse_conv_activation can then fold into a Conv.
// Every intermediate must be read only inside the pattern and must not be a graph output.
#include <algorithm>
#include <cmath>

#include "graph/passes/passes.h"

namespace orknn {
namespace {

bool scalar_is(const Graph& g, int t, float want, float tol) {
  if (t < 0) return false;
  const Tensor& c = g.tensor(t);
  if (!c.is_const() || c.dtype != DType::kF32 || c.numel() != 1) return false;
  return std::fabs(c.const_ptr<float>()[0] - want) <= tol;
}

// Operand of binary node n that is not `t` (when exactly one operand is t).
int other_operand(const Node& n, int t) {
  if (n.inputs.size() != 2) return -1;
  if (n.inputs[0] == t && n.inputs[1] != t) return n.inputs[1];
  if (n.inputs[1] == t && n.inputs[0] != t) return n.inputs[0];
  return -1;
}

struct Match {
  int x = -1, y = -1;
  std::vector<int> nodes;  // node indices of the pattern
};

class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g), consumers_(tensor_consumers(g)), producers_(tensor_producers(g)) {}

  // Pattern ending... starting at node i (the HardSigmoid or the Add).
  bool match(int i, Match* m) {
    const Node& n = g_.nodes[static_cast<size_t>(i)];
    if (n.op == OpId::HardSigmoid) return match_torch(i, m);
    if (n.op == OpId::Add) return match_paddle(i, m);
    return false;
  }

 private:
  int sole(int t) const {
    if (t < 0 || is_graph_output(g_, t)) return -1;
    const auto& c = consumers_[static_cast<size_t>(t)];
    return c.size() == 1 ? c[0] : -1;
  }
  const Node& at(int i) const { return g_.nodes[static_cast<size_t>(i)]; }
  bool float_same_shape(int a, int b) const {
    return g_.tensor(a).dtype == DType::kF32 && g_.tensor(b).dtype == DType::kF32 && g_.tensor(a).shape == g_.tensor(b).shape;
  }

  bool match_torch(int hi, Match* m) {
    const Node& hs = at(hi);
    if (hs.inputs.size() != 1 || hs.inputs[0] < 0 || hs.outputs.size() != 1) return false;
    if (std::fabs(hs.attrs.get_float("alpha", 0.2f) - 1.f / 6.f) > 1e-6f || hs.attrs.get_float("beta", 0.5f) != 0.5f)
      return false;
    const int x = hs.inputs[0];
    int mi = sole(hs.outputs[0]);
    if (mi < 0 || at(mi).op != OpId::Mul || other_operand(at(mi), hs.outputs[0]) != x) return false;
    const int y = at(mi).outputs[0];
    if (!float_same_shape(x, y)) return false;
    *m = Match{x, y, {hi, mi}};
    return true;
  }

  bool match_paddle(int ai, Match* m) {
    const Node& add = at(ai);
    if (add.inputs.size() != 2) return false;
    int x = -1;
    if (scalar_is(g_, add.inputs[1], 3.f, 0.f)) x = add.inputs[0];
    else if (scalar_is(g_, add.inputs[0], 3.f, 0.f)) x = add.inputs[1];
    if (x < 0 || g_.tensor(x).is_const()) return false;
    int ci = sole(add.outputs[0]);
    if (ci < 0) return false;
    const Node& clip = at(ci);
    if (clip.op != OpId::Clip || clip.inputs.empty() || clip.inputs[0] != add.outputs[0]) return false;
    for (size_t k = 1; k < clip.inputs.size(); ++k)
      if (clip.inputs[k] >= 0) return false;  // min/max still run-time inputs
    if (clip.attrs.get_float("min", -INFINITY) != 0.f || clip.attrs.get_float("max", INFINITY) != 6.f) return false;
    int mi = sole(clip.outputs[0]);
    if (mi < 0 || at(mi).op != OpId::Mul || other_operand(at(mi), clip.outputs[0]) != x) return false;
    int di = sole(at(mi).outputs[0]);
    if (di < 0) return false;
    const Node& last = at(di);
    const int mo = at(mi).outputs[0];
    bool ok = false;
    if (last.op == OpId::Div && last.inputs.size() == 2 && last.inputs[0] == mo) ok = scalar_is(g_, last.inputs[1], 6.f, 0.f);
    if (last.op == OpId::Mul) ok = scalar_is(g_, other_operand(last, mo), 1.f / 6.f, 1e-7f);
    if (!ok) return false;
    const int y = last.outputs[0];
    if (!float_same_shape(x, y)) return false;
    *m = Match{x, y, {ai, ci, mi, di}};
    return true;
  }

  const Graph& g_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> producers_;
};

}  // namespace

Status fuse_hardswish(Graph& g, int* changes) {
  int fused = 0;
  for (long i = 0; i < static_cast<long>(g.nodes.size()); ++i) {
    OpId op = g.nodes[static_cast<size_t>(i)].op;
    if (op != OpId::HardSigmoid && op != OpId::Add) continue;
    Match m;
    if (!Matcher(g).match(static_cast<int>(i), &m)) continue;
    const OpDef* def = find_op(OpId::HardSwish);
    if (!def || !def->infer) return Status::Ok();  // op not available: leave the pattern
    Node hs;
    const int last = *std::max_element(m.nodes.begin(), m.nodes.end());
    hs.name = g.nodes[static_cast<size_t>(last)].name + "_hardswish";
    hs.op = OpId::HardSwish;
    hs.inputs = {m.x};
    hs.outputs = {m.y};
    Status st = def->infer(g, hs);
    if (!st.ok()) return Status(st.code(), strfmt("fuse_hardswish at node '%s': %s", hs.name.c_str(), st.message().c_str()));
    g.nodes[static_cast<size_t>(last)] = std::move(hs);
    std::sort(m.nodes.begin(), m.nodes.end());
    for (auto it = m.nodes.rbegin(); it != m.nodes.rend(); ++it)
      if (*it != last) g.nodes.erase(g.nodes.begin() + *it);
    ++fused;
    i = m.nodes.front() - 1;
  }
  if (changes) *changes += fused;
  return Status::Ok();
}

}  // namespace orknn
