#include "graph/planner.h"

#include <algorithm>
#include <cstdint>

namespace orknn {

bool reshapes_in_place(const Graph& g, const Node& n) {
  switch (n.op) {
    case OpId::Reshape: case OpId::Flatten: case OpId::Squeeze: case OpId::Unsqueeze: case OpId::Identity: break;
    default: return false;
  }
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  if (x.is_const() || x.nbytes() != g.tensor(n.outputs[0]).nbytes()) return false;
  for (const GraphInput& in : g.inputs)
    if (in.tensor == n.inputs[0]) return false;
  return true;
}

bool may_block_padded(const Tensor& t) {
  return !t.is_const() && t.dtype == DType::kF32 && t.quant.empty() && t.shape.size() == 4 && t.shape[1] > 16 &&
         t.shape[1] % 16 != 0 && t.numel() > 0;
}

int64_t nchw16c_padded_numel(const Shape& s) { return s[0] * ((s[1] + 15) / 16 * 16) * s[2] * s[3]; }

ArenaPlan plan_arena(const Graph& g, const std::vector<ExtraRead>& extra) {
  const size_t nt = g.tensors.size();
  const int end = static_cast<int>(g.nodes.size());
  std::vector<int> first(nt, INT32_MAX), last(nt, -1);
  for (const GraphInput& in : g.inputs) { first[in.tensor] = -1; last[in.tensor] = std::max(last[in.tensor], -1); }
  for (int i = 0; i < end; ++i) {
    const Node& n = g.nodes[i];
    for (int t : n.outputs) { first[t] = std::min(first[t], i); last[t] = std::max(last[t], i); }
    for (int t : n.inputs)
      if (t >= 0) last[t] = std::max(last[t], i);
  }
  for (const ExtraRead& r : extra) last[r.tensor] = std::max(last[r.tensor], r.node);
  for (int t : g.outputs) last[t] = end;
  // Graph inputs stay intact to the end too: a client may call rknn_run again without setting
  // them again (benchmark loops do), as the vendor runtime allows.
  for (const GraphInput& in : g.inputs) last[in.tensor] = end;

  // A view's output shares its input's bytes (reshapes_in_place), and so does a Conv's output its
  // residual's when that Conv is the residual's last reader: one slot for both, alive while either
  // is. Nodes run in order, so an input's slot is known before its consumer's, and a reader of the
  // residual after the Conv (a view's too) is in last[] already.
  std::vector<int> slot(nt);
  for (size_t t = 0; t < nt; ++t) slot[t] = static_cast<int>(t);
  for (int k = 0; k < end; ++k) {
    const Node& n = g.nodes[static_cast<size_t>(k)];
    int from = -1;
    if (reshapes_in_place(g, n)) {
      from = n.inputs[0];
    } else if (const int r = conv_residual(n); r >= 0 && n.outputs.size() == 1 && n.outputs[0] >= 0) {
      const int s = slot[r];
      const Tensor& rt = g.tensor(r);
      // (A graph input or output lives to the end: never last read here.)
      if (!rt.is_const() && last[s] == k && slot[n.inputs[0]] != s &&
          rt.nbytes() == g.tensor(n.outputs[0]).nbytes())
        from = r;
    }
    if (from < 0) continue;
    const int s = slot[from], y = n.outputs[0];
    slot[y] = s;
    first[s] = std::min(first[s], first[y]);
    last[s] = std::max(last[s], last[y]);
  }

  // Bytes per slot: the most any of its tensors takes.
  std::vector<uint8_t> io(nt, 0);
  for (const GraphInput& in : g.inputs) io[static_cast<size_t>(in.tensor)] = 1;
  for (int t : g.outputs) io[static_cast<size_t>(t)] = 1;
  std::vector<size_t> bytes(nt, 0);
  for (size_t t = 0; t < nt; ++t) {
    const Tensor& x = g.tensors[t];
    if (x.is_const() || first[t] == INT32_MAX) continue;
    const size_t b = !io[t] && may_block_padded(x) ? static_cast<size_t>(nchw16c_padded_numel(x.shape)) * sizeof(float)
                                                   : x.nbytes();
    size_t& s = bytes[static_cast<size_t>(slot[t])];
    s = std::max(s, b);
  }
  struct Item { int tensor; size_t size; };
  std::vector<Item> items;
  for (size_t t = 0; t < nt; ++t) {
    if (g.tensors[t].is_const() || first[t] == INT32_MAX || slot[t] != static_cast<int>(t)) continue;
    size_t sz = (bytes[t] + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    items.push_back({static_cast<int>(t), std::max<size_t>(sz, kArenaAlign)});
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.size > b.size; });

  ArenaPlan plan;
  plan.offset.assign(nt, SIZE_MAX);
  struct Placed { size_t off, size; int first, last; };
  std::vector<Placed> placed;
  for (const Item& it : items) {
    const int f = first[it.tensor], l = last[it.tensor];
    // Collect the byte ranges of placed tensors whose lifetimes overlap, then first fit.
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Placed& p : placed)
      if (!(p.last < f || l < p.first)) busy.push_back({p.off, p.off + p.size});
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto& b : busy) {
      if (off + it.size <= b.first) break;
      off = std::max(off, b.second);
    }
    placed.push_back({off, it.size, f, l});
    plan.offset[it.tensor] = off;
    plan.arena_size = std::max(plan.arena_size, off + it.size);
  }
  for (size_t t = 0; t < nt; ++t)
    if (slot[t] != static_cast<int>(t)) plan.offset[t] = plan.offset[static_cast<size_t>(slot[t])];
  return plan;
}

}  // namespace orknn
