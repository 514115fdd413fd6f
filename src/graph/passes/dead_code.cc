// Dead-code elimination: a node none of whose outputs is read by another node or named as a graph
// output computes nothing observable. Scanning backwards removes whole dead chains in one sweep.
// Then tensors nothing refers to (constants moved into attributes by infer, folded
// intermediates) are dropped and ids compacted.
#include "graph/passes/passes.h"

namespace orknn {

Status remove_dead_code(Graph& g, int* changes) {
  std::vector<int> readers(g.tensors.size(), 0);
  for (const Node& n : g.nodes)
    for (int t : n.inputs)
      if (t >= 0) ++readers[static_cast<size_t>(t)];
  for (int t : g.outputs)
    if (t >= 0) ++readers[static_cast<size_t>(t)];

  std::vector<char> dead(g.nodes.size(), 0);
  int removed = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    bool used = false;
    for (int t : n.outputs)
      if (t >= 0 && readers[static_cast<size_t>(t)] > 0) used = true;
    if (used) continue;
    dead[i] = 1;
    ++removed;
    for (int t : n.inputs)
      if (t >= 0) --readers[static_cast<size_t>(t)];
  }
  if (removed) erase_flagged_nodes(g, dead);
  compact_tensors(g);
  if (changes) *changes += removed;
  return Status::Ok();
}

}  // namespace orknn
