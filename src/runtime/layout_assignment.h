// The layout pass: which activation tensors an executor keeps blocked instead of NCHW (nChw16c or,
// where the build chose it, NHWC for float32 (kernels/kernel.h kFloatBlockedNhwc), NHWC for INT8;
// kernels/kernel.h BlockedIo, docs/kernels.md "Blocked activations"),
// decided once per plan, after the kernels are picked and before the arena is planned. The
// executor (runtime/executor.h) is its only user besides the tests.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn {

// The kernel picked for a node.
struct NodeKernel {
  std::unique_ptr<Kernel> kernel;
  std::string name;
  bool from_registry = false;  // the registry's pick (may be re-picked for NCHW), not a fusion's or a callback
};

// One flag per tensor of g (1 = blocked), given what the kernel chosen for each node can take
// (node_io[k] for g.nodes[k]). A tensor is blocked when it is a 4-D activation, INT8 or float32
// (in nChw16c with a channel count that is a multiple of 16, in NHWC with any), neither a graph
// input nor output, and every node touching it takes it (kEach, kEachPadded), or takes it together
// with all its other activations (kUniform); a float32 nChw16c one with more than 16 channels, not
// a multiple of 16, blocked padded only when every node touching it is kEachPadded; a Conv's
// residual input and its output are blocked both or neither.
std::vector<uint8_t> choose_blocked_tensors(const Graph& g, const std::vector<BlockedIo>& node_io);

// Decides the layouts for `kernels` (one per node) into *blocked; then every registry-picked node
// whose first output stays NCHW gets `nchw_kernel`'s pick for NCHW instead (the registry skips the
// kernels whose layout_fit() is kBlockedOnly there), and when that kernel takes other layouts than
// the one it replaces, the layouts are decided again. A node is replaced at most once (the NCHW
// pick stays), so this ends.
using NchwKernelFn = std::function<std::unique_ptr<Kernel>(const Node& n, std::string* name)>;
Status assign_layouts(const Graph& g, std::vector<NodeKernel>* kernels, const NchwKernelFn& nchw_kernel,
                      std::vector<uint8_t>* blocked);

// Elements of t as stored: NCHW's count, or in padded nChw16c (blocked float32 whose channel
// count is not a multiple of 16) N * ceil(C / 16) * 16 * H * W.
int64_t stored_numel(const Tensor& t, bool blocked);
size_t stored_bytes(const Tensor& t, bool blocked);

// The name of a blocked tensor's layout ("nChw16c" or "nhwc"), for reports.
const char* blocked_layout_name(DType dtype);

// A blocked tensor's stored data <-> dense NCHW.
void blocked_to_nchw(const Tensor& t, const void* blocked, void* nchw);
void nchw_to_blocked(const Tensor& t, const void* nchw, void* blocked);

}  // namespace orknn
