// Which activation tensors an executor keeps in nChw16c instead of NCHW (kernels/kernel.h,
// BlockedIo; docs/kernels.md "Blocked activations").
#pragma once
#include <cstdint>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn {

// One flag per tensor of g (1 = nChw16c), given what the kernel chosen for each node can take
// (node_io[k] for g.nodes[k]). A tensor is blocked when it is a 4-D float activation with a channel
// count that is a multiple of 16, neither a graph input nor output, every node touching it takes it
// (kEach), or takes it together with all its other activations (kUniform).
std::vector<uint8_t> choose_blocked_tensors(const Graph& g, const std::vector<BlockedIo>& node_io);

// OPENRKNN_DISABLE_BLOCKED_LAYOUT=1 keeps every tensor NCHW (A/B measurements).
bool blocked_layout_disabled();

}  // namespace orknn
