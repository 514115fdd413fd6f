// Already-quantized ONNX models (QuantizeLinear/DequantizeLinear pairs, "QDQ"): their scales and
// zero points are kept and no calibration data is needed (docs/convert.md, "Already-quantized
// models"). In the imported IR a Q/DQ node has one input and one output and the int8 side
// carries the parameters; DequantizeLinear of an int8/int32 constant is kept (not folded), and
// uint8 values arrive mapped to int8 (q - 128, zp - 128).
#pragma once
#include <vector>

#include "common/status.h"
#include "converter/convert.h"
#include "converter/quant/quantize.h"
#include "graph/ir.h"

namespace orknn {

// True when g holds a QuantizeLinear or DequantizeLinear node.
bool graph_has_qdq(const Graph& g);

// Turns a QDQ graph into a float graph plus the model's parameters: removes the Q/DQ pairs
// (activations: the float tensor before QuantizeLinear gets that node's parameters; constants:
// DequantizeLinear(int8/int32 constant) becomes the float constant it computes, its quantized
// values kept in s->given_constants), fuses Relu/Clip into the compute ops again and splits other
// activations off (prepare_for_quantization). Q/DQ nodes it cannot place (an int8 graph output
// that would need renaming an input, per-axis activation parameters) stay as they are.
// Fills s->given_activations and s->given_constants (tensor ids of the result); other fields of
// *s are left as they are.
Status strip_qdq(Graph& g, QuantizeSettings* s);

// strip_qdq, then quantize_graph with the model's parameters (no ranges: tensors without given
// or propagated parameters keep their nodes in float).
Status quantize_qdq_graph(Graph& g, const QuantizeSettings& settings, std::vector<ConvertReport::LayerPrecision>* table);

}  // namespace orknn
