// Infer-side rules for quantized nodes of the ops whose int8 kernels are the data-movement,
// pooling and element-wise binary kernels (docs/numerics.md, "Quantized (INT8) models").
//
// A node is quantized when one of its tensors carries quantization parameters. Its infer accepts
// it only in the forms its quantized kernel handles and otherwise returns an error naming the
// node, so that the converter keeps that node in float. Infer never changes `quant`.
#pragma once
#include <cstddef>

#include "graph/ir.h"
#include "ops/infer_util.h"

namespace orknn {

// True when an input or output tensor of n carries quantization parameters (the infer-side twin
// of the kernel registry's is_quantized_node).
bool node_has_quant(const Graph& g, const Node& n);

// Equal scales and zero points (bit-equal floats: the kernels compare them the same way).
bool same_quant(const QuantParams& a, const QuantParams& b);

// Error unless no tensor of n is quantized: for ops (or forms of an op) without an int8 kernel.
// `why` (may be null) is appended to the message.
Status check_not_quantized(const Graph& g, const Node& n, const char* why = nullptr);

// Input i is present, INT8 and quantized per tensor with valid parameters.
Status check_q8_input(const Graph& g, const Node& n, size_t i);
// Output i is present and carries valid per-tensor parameters (its dtype becomes INT8).
Status check_q8_output(const Graph& g, const Node& n, size_t i);

// Data movement (the bytes move unchanged, so the output must have the input's parameters).
// Nothing to check when the node is not quantized. Otherwise input `data` must be a quantized
// int8 activation, every other present input plain (indices, parameters), and every present
// output must carry exactly the data input's parameters.
Status check_quant_passthrough(const Graph& g, const Node& n, size_t data = 0);

}  // namespace orknn
