#pragma once
#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

// Structural and semantic checks of a graph before the runtime touches it: tensor indices in
// range, every non-constant input produced before use (topological order), known op ids, dtypes,
// constant buffer sizes equal to shape x dtype, graph inputs/outputs valid, and each node's
// shapes/dtypes consistent with its op's infer function. Returns kInvalidModel naming the node.
Status verify_graph(const Graph& g);

}  // namespace orknn
