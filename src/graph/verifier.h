#pragma once
#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

// Structural and semantic checks of a graph before the runtime touches it: tensor indices in
// range, every non-constant input produced before use (topological order), known op ids, dtypes,
// constant buffer sizes equal to shape x dtype, graph inputs/outputs valid, and each node's
// shapes/dtypes consistent with its op's infer function. Returns kInvalidModel naming the node.
Status verify_graph(const Graph& g);

struct DynamicShapes;  // model/dynamic_shapes.h

// Dynamic-shape models: checks every shape set against the stored graph `g` (already verified):
// counts (one shape per input and per tensor, at most kMaxShapeSets sets), node indices, set 0
// equal to the stored graph, constants and ranks unchanged, each set's input shapes equal to its
// input tensors' shapes and distinct from the other sets'; then verifies the graph of each set
// with verify_graph (re-running shape inference). Returns kInvalidModel naming the set.
Status verify_dynamic_shapes(const Graph& g, const DynamicShapes& dyn);

}  // namespace orknn
