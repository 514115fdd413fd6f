#include "graph/planner.h"

#include <algorithm>
#include <cstdint>

namespace orknn {

namespace {

// Byte offset of a Slice's output in its input when it is one contiguous range, else -1.
int64_t contiguous_slice_offset(const Node& n, const Tensor& x, const Tensor& y) {
  const std::vector<int64_t> starts = n.attrs.get_ints("starts"), steps = n.attrs.get_ints("steps");
  const size_t rank = x.shape.size();
  if (y.shape.size() != rank || starts.size() != rank || steps.size() != rank || y.numel() == 0) return -1;
  size_t first = rank;  // the first dimension not taken whole
  for (size_t d = 0; d < rank && first == rank; ++d)
    if (y.shape[d] != x.shape[d] || (steps[d] != 1 && y.shape[d] > 1)) first = d;
  if (first == rank) return 0;  // everything: the same bytes
  int64_t offset = 0, stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (y.shape[d] > 1 && steps[d] != 1) return -1;
    if (d > first && y.shape[d] != x.shape[d]) return -1;  // after the sliced dimension: whole
    if (d < first && x.shape[d] != 1) return -1;           // before it: of size 1
    offset += starts[d] * stride;
    stride *= x.shape[d];
  }
  return offset * static_cast<int64_t>(dtype_size(x.dtype));
}

}  // namespace

int64_t view_offset(const Graph& g, const Node& n) {
  switch (n.op) {
    case OpId::Reshape: case OpId::Flatten: case OpId::Squeeze: case OpId::Unsqueeze: case OpId::Identity:
    case OpId::Slice: break;
    default: return -1;
  }
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1 || n.outputs[0] < 0) return -1;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x.is_const()) return -1;
  for (const GraphInput& in : g.inputs)
    if (in.tensor == n.inputs[0]) return -1;
  if (n.op != OpId::Slice) return x.nbytes() == y.nbytes() ? 0 : -1;
  const int64_t offset = contiguous_slice_offset(n, x, y);
  return offset >= 0 && offset % static_cast<int64_t>(kArenaAlign) == 0 ? offset : -1;
}

ArenaPlan plan_arena(const Graph& g, const ArenaOptions& options) {
  const size_t nt = g.tensors.size();
  const int end = static_cast<int>(g.nodes.size());
  auto tensor_bytes = [&](size_t t) { return options.bytes.empty() ? g.tensors[t].nbytes() : options.bytes[t]; };
  std::vector<int> first(nt, INT32_MAX), last(nt, -1);
  for (const GraphInput& in : g.inputs) { first[in.tensor] = -1; last[in.tensor] = std::max(last[in.tensor], -1); }
  for (int i = 0; i < end; ++i) {
    const Node& n = g.nodes[i];
    for (int t : n.outputs) { first[t] = std::min(first[t], i); last[t] = std::max(last[t], i); }
    for (int t : n.inputs)
      if (t >= 0) last[t] = std::max(last[t], i);
  }
  for (const ExtraRead& r : options.extra) last[r.tensor] = std::max(last[r.tensor], r.node);
  for (int t : g.outputs) last[t] = end;
  if (options.keep_all)
    for (size_t t = 0; t < nt; ++t)
      if (first[t] != INT32_MAX) last[t] = end;
  // Graph inputs stay intact to the end too: a client may call rknn_run again without setting
  // them again (benchmark loops do), as the vendor runtime allows.
  for (const GraphInput& in : g.inputs) last[in.tensor] = end;

  // A view's output lies in its input's bytes (view_offset), and a Conv's output takes its
  // residual's bytes when that Conv is the residual's last reader: one slot for all of them, alive
  // while any is, each tensor at its own offset in it (in_slot). Nodes run in order, so an input's
  // slot is known before its consumer's, and a reader of the residual's slot after the Conv (a
  // view's too) is in last[] already.
  std::vector<int> slot(nt);
  std::vector<size_t> in_slot(nt, 0);
  for (size_t t = 0; t < nt; ++t) slot[t] = static_cast<int>(t);
  for (int k = 0; k < end; ++k) {
    const Node& n = g.nodes[static_cast<size_t>(k)];
    int from = -1;
    size_t at = 0;
    if (const int64_t v = view_offset(g, n); v >= 0) {
      from = n.inputs[0];
      at = in_slot[static_cast<size_t>(from)] + static_cast<size_t>(v);
    } else if (const int r = conv_residual(n); r >= 0 && n.outputs.size() == 1 && n.outputs[0] >= 0) {
      const int s = slot[r];
      const Tensor& rt = g.tensor(r);
      // (A graph input or output lives to the end: never last read here.)
      if (!rt.is_const() && last[s] == k && slot[n.inputs[0]] != s &&
          tensor_bytes(static_cast<size_t>(r)) == tensor_bytes(static_cast<size_t>(n.outputs[0])))
        from = r;
      at = in_slot[static_cast<size_t>(r)];
    }
    if (from < 0) continue;
    const int s = slot[from], y = n.outputs[0];
    slot[y] = s;
    in_slot[static_cast<size_t>(y)] = at;
    first[s] = std::min(first[s], first[y]);
    last[s] = std::max(last[s], last[y]);
  }

  // Bytes per slot: the most any of its tensors reaches.
  std::vector<size_t> bytes(nt, 0);
  for (size_t t = 0; t < nt; ++t) {
    const Tensor& x = g.tensors[t];
    if (x.is_const() || first[t] == INT32_MAX) continue;
    size_t& s = bytes[static_cast<size_t>(slot[t])];
    s = std::max(s, in_slot[t] + tensor_bytes(t));
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
    if (slot[t] != static_cast<int>(t)) plan.offset[t] = plan.offset[static_cast<size_t>(slot[t])] + in_slot[t];
  return plan;
}

}  // namespace orknn
