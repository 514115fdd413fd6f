// Validation of the quantized form of the compute ops (Conv, ConvTranspose, Gemm, MatMul), shared
// by their infer functions (docs/numerics.md, "Representation in the IR"): int8 constant weights,
// symmetric, per tensor or per output channel; int32 constant biases; and the int32 accumulator
// range the kernels rely on. Activations and outputs use check_q8_input / check_q8_output
// (ops/quant_infer.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include "graph/ir.h"
#include "ops/infer_util.h"

namespace orknn {

// Input i must be a constant int8 tensor with symmetric parameters (every zero point 0), per tensor
// or, when `channel_axis` >= 0, per index along that axis, and values in [-127, 127]
// (docs/numerics.md). `axis_rule` says where per-channel parameters are allowed (for the message).
Status check_q8_weights(const Graph& g, const Node& n, size_t i, const char* role, int64_t channel_axis,
                        const char* axis_rule);

// Input i, if present, must be a constant int32 bias. Its parameters are optional (the kernels use
// the implied scale s_x * s_w[c]); present ones must have zero point 0. *max_abs gets max |bias|,
// 0 when absent.
Status check_i32_bias(const Graph& g, const Node& n, size_t i, const char* role, int64_t* max_abs);

// The fused activation of a quantized node must be a clamp of the int8 result: none, Relu or Clip.
Status check_q8_fused_act(const Node& n);

// The accumulator of one output, a bias of at most `max_bias` plus `terms` products each at most
// `max_product` in magnitude, must fit in int32 (the spec's int32 accumulation is then exact).
Status check_accumulator_range(const Node& n, int64_t terms, int64_t max_product, int64_t max_bias);

// Largest |(x - zp_x) * w| for an int8 activation (zero point in [-128, 127], so |x - zp_x| <= 255)
// and weights in [-127, 127]; and of two such activations.
constexpr int64_t kMaxActWeightProduct = 255 * 127;
constexpr int64_t kMaxActActProduct = 255 * 255;

}  // namespace orknn
