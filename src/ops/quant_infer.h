// The infer-side rules for quantized nodes, in one place (docs/numerics.md, "Quantized (INT8)
// models", "Representation in the IR").
//
// The converter marks a quantized tensor by giving it quantization parameters (QuantParams); a
// node is quantized when one of its tensors carries them. Its infer accepts it only in the forms
// its quantized kernel handles and otherwise returns an error naming the node, so that the
// converter keeps that node in float. Infer never changes `quant`.
#pragma once
#include <cstddef>
#include <cstdint>

#include "graph/ir.h"
#include "ops/infer_util.h"

namespace orknn {

// ---- quantized tensors and nodes ----

// True when an input or output tensor of n carries quantization parameters. The kernel registry's
// is_quantized_node (kernels/kernel.h) is this same test.
bool node_has_quant(const Graph& g, const Node& n);

// Equal scales and zero points (bit-equal floats: the kernels compare them the same way).
bool same_quant(const QuantParams& a, const QuantParams& b);

// Checks the parameters of a quantized tensor: non-empty, finite positive scales, zero points in
// [-128, 127] (int32 tensors: 0); per-tensor unless `allow_per_axis`, then `axis` must index a dim
// of size scale.size(). `what` names it ("input 0", "output 0").
Status check_quant_params(const Node& n, const Tensor& t, const char* what, bool allow_per_axis);

// The dtype of output i: INT8 when that output carries quantization parameters, else `dtype`.
DType output_dtype(const Graph& g, const Node& n, size_t i, DType dtype);

// ---- activations (int8, per tensor) ----

// Error unless no tensor of n is quantized: for ops (or forms of an op) without an int8 kernel.
// `why` (may be null) is appended to the message.
Status check_not_quantized(const Graph& g, const Node& n, const char* why = nullptr);

// Input i is present, INT8 and quantized per tensor with valid parameters.
Status check_q8_input(const Graph& g, const Node& n, size_t i);
// Output i is present and carries valid per-tensor parameters (its dtype becomes INT8).
Status check_q8_output(const Graph& g, const Node& n, size_t i);

// ---- data movement (the int8 bytes move unchanged) ----

// Nothing to check when the node is not quantized. Otherwise input `data` must be a quantized
// int8 activation, every other present input plain (indices, parameters), and every present
// output must carry exactly the data input's parameters.
Status check_quant_passthrough(const Graph& g, const Node& n, size_t data = 0);

// ---- compute ops (Conv, ConvTranspose, Gemm, MatMul) ----
// int8 constant weights, symmetric, per tensor or per output channel; int32 constant biases; and
// the int32 accumulator range the kernels rely on. Activations and outputs use check_q8_input /
// check_q8_output.

// Input i must be a constant int8 tensor with symmetric parameters (every zero point 0), per tensor
// or, when `channel_axis` >= 0, per index along that axis, and values in [-127, 127]
// (docs/numerics.md). `axis_rule` says where per-channel parameters are allowed (for the message).
Status check_q8_weights(const Graph& g, const Node& n, size_t i, const char* role, int64_t channel_axis,
                        const char* axis_rule);

// Input i, if present, must be a constant int32 bias. Its parameters are optional (the kernels use
// the implied scale s_x * s_w[c]); present ones must have zero point 0. *max_abs gets max |bias|,
// 0 when absent.
Status check_i32_bias(const Graph& g, const Node& n, size_t i, const char* role, int64_t* max_abs);

// The fused activation of a quantized node: a clamp of the int8 result (none, Relu, Clip), or on a
// Conv a value activation applied before the output's quantization (LeakyRelu, HardSwish,
// HardSigmoid; docs/numerics.md).
Status check_q8_fused_act(const Node& n);

// The quantized Conv forms the hand-written INT8 kernels take, which are the ones the quantized
// reference kernel runs: per-tensor int8 input and output, int8 weights per tensor or per output
// channel (`out_channels` scales along `weight_axis`: 0 for Conv, 1 for ConvTranspose's
// [C][OC][k...] weights), an optional int32 bias, a fused none/Relu/Clip, and a fused value
// activation only for the kernels that apply it (`value_act`).
bool is_q8_conv_form(const Graph& g, const Node& n, int64_t out_channels, int64_t weight_axis = 0,
                     bool value_act = false);

// A quantized 2-D Conv (4-D input, constant 4-D weights, output) with consistent groups in
// is_q8_conv_form: the nodes the general INT8 convolution kernels take.
bool is_q8_conv2d(const Graph& g, const Node& n, bool value_act = false);

// The accumulator of one output, a bias of at most `max_bias` plus `terms` products each at most
// `max_product` in magnitude, must fit in int32 (the spec's int32 accumulation is then exact).
Status check_accumulator_range(const Node& n, int64_t terms, int64_t max_product, int64_t max_bias);

// Largest |(x - zp_x) * w| for an int8 activation (zero point in [-128, 127], so |x - zp_x| <= 255)
// and weights in [-127, 127]; and of two such activations.
constexpr int64_t kMaxActWeightProduct = 255 * 127;
constexpr int64_t kMaxActActProduct = 255 * 255;

}  // namespace orknn
