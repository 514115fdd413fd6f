// Empirical bias correction of a quantized graph (docs/numerics.md "Bias correction", docs/convert.md
// "--bias-correction"). Rounding the weights to int8 and quantizing the activations shifts the mean of
// a compute layer's output per channel; the shift is systematic, so the layers after it add it up.
// This step measures it on the calibration samples and moves each int32 bias by the opposite amount.
// Only the int32 bias values change: the INT8 arithmetic is the one docs/numerics.md specifies.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "converter/quant/dataset.h"
#include "graph/ir.h"

namespace orknn {

// Per corrected node (by name): what was added to its int32 bias, per output channel.
using BiasDeltas = std::map<std::string, std::vector<int32_t>>;

// float_graph: the graph quantize_graph received (run in fp32); quant_graph: its result (node names
// are kept by the rewrite). Corrected are the int8 Conv and Gemm nodes of quant_graph with an int8
// input, int8 weights and an int32 bias, and a float node of the same name and op in float_graph.
// Each is corrected for its own error, as if everything before it were exact: over every sample
// and output position, with x the float node's input in the float graph,
//   mean_f[m] = the mean of the float node's output channel m before its activation (W, b, x)
//   mean_q[m] = the same for the int8 node: dequantized int8 weights, the int32 bias times its
//               scale (s_x * s_w[m]), and x quantized with the int8 input's parameters and
//               dequantized (rounding and clipping included)
// Both are linear in the input, so they are computed from the mean input value each weight tap
// sees (padding taps read 0 in both, as the int8 kernel skips them). Then
//   bias_q[m] -= rne((mean_q[m] - mean_f[m]) / (s_x * s_w[m]))
// unless the result would leave int32 or let the worst-case accumulator (255 * sum|w_q[m]| +
// |bias_q[m]|) pass INT32_MAX (that channel keeps its bias). One run of the float graph per
// sample; the quantized graph is not run. Graphs with Custom nodes are left as they are.
// applied (may be nullptr) receives the int32 change per corrected node and channel.
Status correct_biases(const Graph& float_graph, Graph& quant_graph, const std::vector<CalibrationSample>& samples,
                      BiasDeltas* applied);

// Adds deltas measured on another conversion of the same model (the other shape sets of a
// dynamic-shape model, a batch-N model calibrated at batch 1) to the int32 biases of the nodes of
// the same names, with the same int32 and accumulator checks as correct_biases. A node whose bias has
// a different channel count is left alone.
Status apply_bias_deltas(Graph& quant_graph, const BiasDeltas& deltas);

}  // namespace orknn
