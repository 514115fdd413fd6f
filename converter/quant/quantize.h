// INT8 quantization of a float graph (docs/convert.md "Quantization", docs/numerics.md "Quantized
// (INT8) models"): decides per node int8 or float, gives every int8 tensor its parameters,
// quantizes weights and biases and puts QuantizeLinear/DequantizeLinear on the edges between the
// int8 and the float parts.
//
// The converter runs, on the graph that the graph passes produced:
//   prepare_for_quantization(g, ...)   split activations the int8 compute ops cannot apply
//   calibrate(g, samples, ...)         tensor id -> observed [lo, hi] (converter/quant/calibrate.h)
//   quantize_graph(g, ranges, ...)     the rewrite
// Models that already hold QuantizeLinear/DequantizeLinear pairs take the qdq_import.h path, which
// ends in quantize_graph with the model's own parameters instead of ranges.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "converter/convert.h"
#include "graph/ir.h"

namespace orknn {

// A constant in its quantized form, as an already-quantized model gives it: the values (int8 for
// weights and operands, int32 for biases) and their parameters.
struct QuantizedConstant {
  DType dtype = DType::kI8;    // kI8 or kI32
  std::vector<uint8_t> bytes;  // numel * dtype_size bytes, the shape of the float constant
  QuantParams params;
};

enum class WeightGranularity { kPerChannel, kPerTensor };

struct QuantizeSettings {
  // --method channel (one scale per output channel) or layer (one scale per weight tensor).
  WeightGranularity weights = WeightGranularity::kPerChannel;
  // --float-layers: node names (or the name of a tensor a node writes) kept in float. A name that
  // matches nothing is an error.
  std::vector<std::string> float_layers;

  // ---- parameters given by an already-quantized (QDQ) model; they win over ranges ----
  // Per-tensor parameters of float activation tensors (tensor id).
  std::map<int, QuantParams> given_activations;
  // Quantized forms of float constant tensors (tensor id): used as they are when they fit the
  // numerics (symmetric int8 weights in [-127, 127], a bias whose scale is s_x * s_w[c]);
  // otherwise the float values are quantized again, with a warning.
  std::map<int, QuantizedConstant> given_constants;
  // Concat inputs adopt the Concat output's parameters (when safe) unless their parameters were
  // given. True for calibrated models.
  bool share_concat_params = true;
  // Custom operator types whose nodes calibration computed with the application's callbacks
  // (--custom-op-lib): the nodes after them may be int8. After a Custom node of another type
  // calibration ran a stand-in, so every node computed from its outputs stays float.
  std::set<std::string> calibrated_custom_types;
};

// Runs on the float graph before calibration: a Conv/ConvTranspose/Gemm/MatMul with a fused
// activation the int8 op cannot apply gets the activation back as its own node (the activation
// becomes a table op), so that calibration observes the pre-activation tensor. The activation's
// output keeps its tensor (and name); the compute node writes a new tensor "<name>_preact". Nodes
// are re-inferred. Int8 compute ops clamp for Relu and Clip; a Conv also applies LeakyRelu,
// HardSwish and HardSigmoid before quantizing its output (docs/numerics.md), which keeps one
// rounding where the split form has two: those stay fused on the Convs `keep_value_act` accepts
// (calibrated conversions: all; QDQ models: those whose pre-activation the model does not quantize).
Status prepare_for_quantization(Graph& g, const std::function<bool(const Node&)>& keep_value_act);

// Error unless every name in `float_layers` names a node of g, or a tensor a node of g writes (the
// message lists the nearest node names). quantize_graph checks this too; the converter calls it
// before calibrating so that a typo fails fast.
Status check_float_layers(const Graph& g, const std::vector<std::string>& float_layers);

// Quantizes g in place. ranges: tensor id (of g) -> [lo, hi] observed on the float graph (tensors
// without a range and without given parameters keep their nodes in float). table (may be nullptr)
// receives the precision of every node of the result except the inserted QuantizeLinear/
// DequantizeLinear, in graph order. Afterwards the graph is re-inferred and dead code removed (so
// tensor ids change).
Status quantize_graph(Graph& g, const std::map<int, std::pair<float, float>>& ranges, const QuantizeSettings& s,
                      std::vector<ConvertReport::LayerPrecision>* table);

}  // namespace orknn
