// Data-driven corrections of a quantized graph's int8 Conv/Gemm constants, measured on the
// calibration samples (docs/convert.md "Bias correction" and "Adaptive weight rounding").
// Bias correction (docs/numerics.md "Bias correction"): rounding the weights to int8 and quantizing
// the activations shifts the mean of a compute layer's output per channel; the shift is
// systematic, so the layers after it add it up. It is measured and each int32 bias moved by the
// opposite amount. Adaptive rounding: each int8 weight may round to the other neighbour of w / s
// when that lowers the layer's output error on the calibration data. Only int32 bias and int8
// weight values change: the INT8 arithmetic is the one docs/numerics.md specifies.
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

// Per rounded node (by name): its int8 weights after adaptive rounding.
using RoundedWeights = std::map<std::string, std::vector<int8_t>>;

// Adaptive weight rounding (--adaptive-rounding; AdaRound-style, greedy). For the int8 Conv and Gemm
// nodes of quant_graph with an int8 input and int8 weights and a float original in float_graph (as
// correct_biases pairs them): X = up to kAdaptiveRoundingRows input patches (rows: output positions
// spread evenly over the samples; columns: the taps of one group) of the float node's input
// quantized with the int8 input's parameters and dequantized. For each output channel m with scale
// s, r = q - w / s (w: float weights, alpha included; q: int8 weights, nearest rounding to begin
// with) and the cost |X r|^2 (the channel's output error on those patches, in units of s). Sweeps over the weights in
// order flip q_j to the other integer next to w_j / s (kept in [-127, 127]) whenever that lowers the
// cost, until a sweep flips nothing or after kAdaptiveRoundingSweeps sweeps. Scales are unchanged.
// A channel whose rounded weights would let the worst-case accumulator pass INT32_MAX keeps its
// weights. Graphs with Custom nodes are left as they are. applied (may be nullptr) receives the
// rounded weights of every node that changed.
constexpr int kAdaptiveRoundingRows = 1024;
constexpr int kAdaptiveRoundingSweeps = 3;
Status round_weights_adaptively(const Graph& float_graph, Graph& quant_graph,
                                const std::vector<CalibrationSample>& samples, RoundedWeights* applied);

// Puts weights rounded on another conversion of the same model into the nodes of the same names
// (when the weight count matches and the accumulator bound holds), as apply_bias_deltas does for biases.
Status apply_rounded_weights(Graph& quant_graph, const RoundedWeights& weights);

}  // namespace orknn
