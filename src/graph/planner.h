// The activation arena of a graph: where each tensor lies (docs/architecture.md, "Running a model").
#pragma once
#include <cstddef>
#include <vector>

#include "graph/ir.h"

namespace orknn {

struct ArenaPlan {
  std::vector<size_t> offset;  // per tensor id; SIZE_MAX for constants and unused tensors
  size_t arena_size = 0;       // bytes
};

constexpr size_t kArenaAlign = 64;

// A read the graph does not show: node `node` also reads tensor `tensor` (a fused kernel reading
// its group's inputs at the group's last node, kernels/kernel.h FusedGroup).
struct ExtraRead {
  int tensor = -1;
  int node = -1;
};

struct ArenaOptions {
  std::vector<ExtraRead> extra;  // reads the graph does not show
  // Per tensor id, its bytes in the arena (the layout pass decides them: a padded layout takes
  // more than NCHW); empty: Tensor::nbytes().
  std::vector<size_t> bytes;
  // Every tensor keeps its own bytes to the end of a run (views still share their input's): an
  // executor whose tensors are all read after the run.
  bool keep_all = false;
};

// Where n's output lies inside its input 0 when it is a view of it, in bytes; -1 when it is not.
// Views: a Reshape, Flatten, Squeeze, Unsqueeze or Identity (offset 0: the same bytes in the same
// order), and a Slice that takes one contiguous range (steps 1 wherever more than one element is
// taken, every dimension before the first sliced one of size 1, every one after it whole:
// shufflenet_v2's channel halves of a batch of one) starting at a multiple of kArenaAlign (kernels
// may assume aligned tensors); only of an activation that is not a graph input (a client may set
// that again before reading the outputs). plan_arena places the output there, and the kernel's
// copy finds its destination already holding the data (source + offset == destination).
int64_t view_offset(const Graph& g, const Node& n);

// Lifetime-based placement: every non-constant tensor lives from the node that produces it (graph
// inputs: from the start) to its last consumer, `extra` reads included (graph inputs and outputs:
// to the end, so inputs survive a run for the next one); tensors whose lifetimes overlap never
// share bytes, except a view and its input (view_offset), and a Conv's output and its
// residual input (ops/conv.cc) when the Conv is the residual's last reader, the residual is not a
// graph input and X does not share its bytes: each pair shares one slot alive while either is
// (the Conv kernels add the residual where they write the output). Greedy: largest first, lowest
// offset that fits.
ArenaPlan plan_arena(const Graph& g, const ArenaOptions& options = {});

}  // namespace orknn
