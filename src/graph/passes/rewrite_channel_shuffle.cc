// Rewrites the channel shuffle as ShuffleNet exports it after a Concat of g equal parts,
//   c = Concat(x_0 .. x_{g-1}, axis a)             each x_j: S with m at axis a
//   r = Reshape(c, S[:a] + [g, m] + S[a+1:])
//   y = Transpose(r, perm swapping axes a and a+1)  S[:a] + [m, g] + S[a+1:]
// into one copy that writes y directly:
//   u_j = Unsqueeze(x_j, axes=[a+1])               S[:a] + [m, 1] + S[a+1:]  (a view)
//   y   = Concat(u_0 .. u_{g-1}, axis a+1)
// y[.., i, j, ..] = x_j[.., i, ..] either way: the same values moved once instead of twice (the
// Transpose's whole-tensor permutation was shufflenet_v2's costliest data movement, and at 2 threads
// it read half its input from the other core's cache). c and r must be read only inside the pattern
// and not be graph outputs; quantized tensors (QDQ imports) are left alone (the Concat would need
// their parameters checked again).
#include "graph/passes/passes.h"

namespace orknn {
namespace {

struct Shuffle {
  int concat = -1, reshape = -1, transpose = -1;
  int64_t axis = 0;
};

bool plain_float(const Tensor& t) { return !t.is_const() && t.dtype == DType::kF32 && t.quant.empty(); }

// Matches the pattern ending at Transpose node ti.
bool match(const Graph& g, const std::vector<std::vector<int>>& consumers, const std::vector<int>& producers, int ti,
           Shuffle* m) {
  auto sole_reader = [&](int t, int reader) {
    return t >= 0 && !is_graph_output(g, t) && consumers[static_cast<size_t>(t)].size() == 1 &&
           consumers[static_cast<size_t>(t)][0] == reader;
  };
  const Node& tr = g.nodes[static_cast<size_t>(ti)];
  if (tr.inputs.size() != 1 || tr.outputs.size() != 1 || tr.inputs[0] < 0 || tr.outputs[0] < 0) return false;
  const int r = tr.inputs[0];
  const int ri = producers[static_cast<size_t>(r)];
  if (ri < 0 || !sole_reader(r, ti)) return false;
  const Node& rs = g.nodes[static_cast<size_t>(ri)];
  if (rs.op != OpId::Reshape || rs.outputs.size() != 1 || rs.inputs.empty() || rs.inputs[0] < 0) return false;
  const int c = rs.inputs[0];
  const int ci = producers[static_cast<size_t>(c)];
  if (ci < 0 || !sole_reader(c, ri)) return false;
  const Node& cc = g.nodes[static_cast<size_t>(ci)];
  if (cc.op != OpId::Concat || cc.outputs.size() != 1 || cc.inputs.size() < 2) return false;

  const Shape& cs = g.tensor(c).shape;
  const Shape& rshape = g.tensor(r).shape;
  const int64_t a = cc.attrs.get_int("axis", 0);  // normalised by infer
  const int64_t parts = static_cast<int64_t>(cc.inputs.size());
  if (a < 0 || a >= static_cast<int64_t>(cs.size()) || rshape.size() != cs.size() + 1) return false;
  if (!plain_float(g.tensor(c)) || !plain_float(g.tensor(r)) || !plain_float(g.tensor(tr.outputs[0]))) return false;
  const size_t ua = static_cast<size_t>(a);
  if (cs[ua] % parts != 0) return false;
  const int64_t per = cs[ua] / parts;
  for (int x : cc.inputs) {
    if (x < 0 || !plain_float(g.tensor(x)) || g.tensor(x).shape.size() != cs.size() || g.tensor(x).shape[ua] != per)
      return false;
  }
  // r splits axis a of c into (parts, per) and keeps every other dimension.
  for (size_t d = 0; d < cs.size(); ++d) {
    if (d == ua) continue;
    if (rshape[d < ua ? d : d + 1] != cs[d]) return false;
  }
  if (rshape[ua] != parts || rshape[ua + 1] != per) return false;
  // The Transpose swaps exactly axes a and a+1.
  const std::vector<int64_t> perm = tr.attrs.get_ints("perm");
  if (perm.size() != rshape.size()) return false;
  for (size_t d = 0; d < perm.size(); ++d) {
    const int64_t want = d == ua ? a + 1 : d == ua + 1 ? a : static_cast<int64_t>(d);
    if (perm[d] != want) return false;
  }
  *m = Shuffle{ci, ri, ti, a};
  return true;
}

}  // namespace

Status rewrite_channel_shuffle(Graph& g, int* changes) {
  const OpDef* unsq = find_op(OpId::Unsqueeze);
  const OpDef* concat = find_op(OpId::Concat);
  if (!unsq || !unsq->infer || !concat || !concat->infer) return Status::Ok();
  int rewritten = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != OpId::Transpose) continue;
    Shuffle m;
    if (!match(g, tensor_consumers(g), tensor_producers(g), static_cast<int>(i), &m)) continue;
    const Node old_concat = g.nodes[static_cast<size_t>(m.concat)];
    const int y = g.nodes[static_cast<size_t>(m.transpose)].outputs[0];

    // The new nodes take the old Concat's place: its inputs exist there, and y's readers all come
    // after the Transpose.
    std::vector<Node> fresh;
    Node joined;
    joined.name = old_concat.name + "_shuffled";
    joined.op = OpId::Concat;
    joined.attrs.set_int("axis", m.axis + 1);
    joined.outputs = {y};
    for (size_t j = 0; j < old_concat.inputs.size(); ++j) {
      const int x = old_concat.inputs[j];
      Node u;
      u.name = old_concat.name + "_part" + std::to_string(j);
      u.op = OpId::Unsqueeze;
      u.attrs.set_ints("axes", {m.axis + 1});
      u.inputs = {x};
      u.outputs = {g.add_tensor(unique_name(g, g.tensor(x).name + "_unsqueezed"), {}, DType::kF32)};
      Status st = unsq->infer(g, u);
      if (!st.ok()) return Status(st.code(), strfmt("at node '%s': %s", u.name.c_str(), st.message().c_str()));
      joined.inputs.push_back(u.outputs[0]);
      fresh.push_back(std::move(u));
    }
    const Shape want = g.tensor(y).shape;
    Status st = concat->infer(g, joined);
    if (!st.ok()) return Status(st.code(), strfmt("at node '%s': %s", joined.name.c_str(), st.message().c_str()));
    if (g.tensor(y).shape != want)
      return ORKNN_ERR(kFail, "node '%s': rewritten shuffle gives %s instead of %s", joined.name.c_str(),
                       shape_str(g.tensor(y).shape).c_str(), shape_str(want).c_str());
    fresh.push_back(std::move(joined));

    // Erase the Transpose and the Reshape (both after the Concat), then replace the Concat.
    g.nodes.erase(g.nodes.begin() + m.transpose);
    g.nodes.erase(g.nodes.begin() + m.reshape);
    g.nodes.erase(g.nodes.begin() + m.concat);
    g.nodes.insert(g.nodes.begin() + m.concat, std::make_move_iterator(fresh.begin()),
                   std::make_move_iterator(fresh.end()));
    ++rewritten;
    i = static_cast<size_t>(m.concat) + fresh.size() - 1;
  }
  if (changes) *changes += rewritten;
  return Status::Ok();
}

}  // namespace orknn
