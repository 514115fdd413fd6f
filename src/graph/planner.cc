#include "graph/planner.h"

#include <algorithm>
#include <cstdint>

namespace orknn {

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

  struct Item { int tensor; size_t size; };
  std::vector<Item> items;
  for (size_t t = 0; t < nt; ++t) {
    if (g.tensors[t].is_const() || first[t] == INT32_MAX) continue;
    size_t sz = (g.tensors[t].nbytes() + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
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
  return plan;
}

}  // namespace orknn
