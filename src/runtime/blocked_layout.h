// Which activation tensors an executor keeps blocked instead of NCHW: nChw16c for float32, NHWC
// for INT8 (kernels/kernel.h, BlockedIo; docs/kernels.md "Blocked activations").
#pragma once
#include <cstdint>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn {

// One flag per tensor of g (1 = blocked), given what the kernel chosen for each node can take
// (node_io[k] for g.nodes[k]). A tensor is blocked when it is a 4-D activation, float32 with a
// channel count that is a multiple of 16 or INT8, neither a graph input nor output, and every node
// touching it takes it (kEach, kEachPadded), or takes it together with all its other activations
// (kUniform); a float32 one that would be padded (graph/planner.h may_block_padded) only when every
// node touching it is kEachPadded; a Conv's residual input and its output are blocked both or
// neither.
std::vector<uint8_t> choose_blocked_tensors(const Graph& g, const std::vector<BlockedIo>& node_io);

// The name of a blocked tensor's layout ("nChw16c" or "nhwc"), for reports.
const char* blocked_layout_name(DType dtype);

// OPENRKNN_DISABLE_BLOCKED_LAYOUT=1 keeps every tensor NCHW (A/B measurements).
bool blocked_layout_disabled();

}  // namespace orknn
