// Graph passes run by the converter between ONNX import and writing the model (one file per pass
// in this directory). Every pass keeps the graph valid: nodes stay in topological order, graph
// input and output tensors keep their names, and each node it creates or changes has been through
// its op's infer function. The driver, run_graph_passes, runs them in this fixed order:
//
//   1. fold_constants            nodes whose inputs are all constant become constants
//   2. remove_noop_nodes         Identity, Dropout, same-shape Reshape, same-dtype Cast, ...
//   3. fold_batchnorm_into_conv  Conv (+bias) -> BatchNormalization with constant parameters
//   4. fold_mul_add_into_conv    Conv -> Mul/Add/Sub by a per-channel or scalar constant
//   5. fuse_layernorm            the exported ReduceMean/Sub/Pow/.../Div (+Mul, +Add) chain
//   6. fuse_hardswish            x*HardSigmoid(x) and x*Clip(x+3,0,6)/6 -> HardSwish
//   7. fuse_conv_add             Conv -> Add of a same-shape activation (the Conv's residual input)
//   8. fuse_conv_activation      Conv/ConvTranspose/Gemm/MatMul -> Relu/Clip/..., x*Sigmoid(x)
//                                ("fused_act")
//   9. rewrite_channel_shuffle   Concat -> Reshape -> Transpose (ShuffleNet's channel shuffle)
//                                becomes one Concat of views
//  10. dead_code                 unused nodes and tensors are dropped (tensor ids are compacted)
//  11. round_weights_fp16        fp16 mode only: float constants take their fp16 values
//
// Steps 2-9 are the optional "fusion and cleanup" passes (PassOptions::fusion; step 7 also needs
// PassOptions::fuse_residual); 1, 10 and 11 always run because they change neither results nor
// numerics beyond what the runtime does anyway.
#pragma once
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

// ---- the passes; each adds the number of rewrites it made to *changes ----
Status fold_constants(Graph& g, int* changes);
Status remove_noop_nodes(Graph& g, int* changes);
Status fold_batchnorm_into_conv(Graph& g, int* changes);
Status fold_mul_add_into_conv(Graph& g, int* changes);
Status fuse_layernorm(Graph& g, int* changes);
Status fuse_hardswish(Graph& g, int* changes);
Status fuse_conv_add(Graph& g, int* changes);
Status fuse_conv_activation(Graph& g, int* changes);
Status rewrite_channel_shuffle(Graph& g, int* changes);
// Removes nodes none of whose outputs is used (by a node or as a graph output), then drops
// tensors nothing refers to and renumbers tensor ids (node/graph references are updated).
Status remove_dead_code(Graph& g, int* changes);
// Rounds every float32 constant to the nearest fp16 value (storage stays float32).
Status round_weights_fp16(Graph& g, int* changes);

struct PassOptions {
  bool fusion = true;  // run passes 2-9
  // Pass 7. False when the graph is quantized afterwards: INT8 convolutions take no residual input.
  bool fuse_residual = true;
  FloatPrecision precision = FloatPrecision::kFp16;  // kFp16 runs round_weights_fp16
};

struct PassStat {
  std::string name;
  int changes = 0;
};

// Runs the passes above in the documented order; appends one entry per pass run to *stats
// (may be nullptr).
Status run_graph_passes(Graph& g, const PassOptions& opts, std::vector<PassStat>* stats);

// ---- helpers shared by the passes and the ONNX importer ----

// If every present input of `n` is constant (or `n` is a Shape of a statically shaped tensor),
// computes its outputs with the reference kernel and stores them as constant data on n's output
// tensors; *folded tells whether that happened. `n` must have been through infer. The node is not
// removed from g.nodes (it need not be in it). A node without a reference kernel, or whose outputs
// would be unreasonably large, is left alone (not an error).
Status try_fold_node(Graph& g, const Node& n, bool* folded);

// For each tensor id: indices of the nodes that read it (a node reading it twice appears twice).
std::vector<std::vector<int>> tensor_consumers(const Graph& g);
// For each tensor id: index of the node producing it, or -1.
std::vector<int> tensor_producers(const Graph& g);
bool is_graph_output(const Graph& g, int tensor);
bool is_graph_input(const Graph& g, int tensor);
// `base`, or base_1, base_2, ...: the first that names no tensor of g yet.
std::string unique_name(const Graph& g, const std::string& base);
// Removes the nodes whose flag in `flagged` (one per node) is set; the others keep their order.
void erase_flagged_nodes(Graph& g, const std::vector<char>& flagged);
// Every node input equal to `from` becomes `to`.
void replace_tensor_uses(Graph& g, int from, int to);
// Drops tensors that no node, graph input or graph output refers to; renumbers the rest.
// Returns the number of tensors dropped.
int compact_tensors(Graph& g);
// Re-runs every node's infer function (in order) so that shapes follow any rewrite; errors name
// the node.
Status reinfer_graph(Graph& g);

}  // namespace orknn
