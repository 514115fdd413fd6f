// Float-vs-INT8 analysis of a converted model against the ONNX model it came from: what
// `rknn_inspect accuracy` prints and Python's RKNN.accuracy_analysis writes (docs/inspect.md).
#pragma once
#include <string>
#include <vector>

#include "common/status.h"
#include "converter/quant/accuracy.h"
#include "graph/ir.h"

namespace orknn {

struct AccuracyAnalysisRequest {
  std::string onnx_path;                 // the float ONNX model the quantized graph was converted from
  std::vector<std::string> subgraph_inputs, subgraph_outputs;  // the cut it was converted with, if any
  std::vector<std::string> input_files;  // one image / .npy per model input; empty: random values
  unsigned seed = 0;                     // of the random [0,1) inputs
  bool allow_fast_kernels = true;
};

// Converts the ONNX model again in fp32 with the quantized graph's input shapes, mean/std and
// platform (the float reference), loads the inputs, and compares the two graphs tensor by tensor
// (compare_float_and_quantized). *inputs_desc says where the inputs came from. Refused: a model
// with custom operators (their callbacks cannot be called here) and an ONNX model holding
// QuantizeLinear/DequantizeLinear (its conversion is no float reference).
Status analyze_accuracy(const AccuracyAnalysisRequest& req, const Graph& quant_graph, AccuracyReport* report,
                        std::string* inputs_desc);

}  // namespace orknn
