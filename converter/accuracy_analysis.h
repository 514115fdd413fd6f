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
  // Float trials (rknn_inspect accuracy --try): the first `try_count` suggestions by single SQNR
  // are each kept float in a model quantized again with the quantized graph's own parameters
  // (requantize_onnx), whose outputs are measured on the same inputs; then up to `keep_count`
  // of them together (FloatTrials::keep). 0: no trials.
  size_t try_count = 0;
  size_t keep_count = 3;
  // A data set list (one sample per line, as for calibration) whose samples the trials judge the
  // outputs on as well, beside the analysed inputs: the least cosine and SQNR over all of them.
  std::string trial_dataset;
};

// The model outputs against fp32 on the analysed inputs (and the trial data set's samples): the
// least cosine and least SQNR over the outputs (and samples).
struct OutputError {
  double cosine = 1.0;
  double sqnr_db = 0.0;
};

// One candidate tried in float.
struct FloatTrial {
  std::vector<std::string> nodes;  // the suggestion's nodes, kept float
  std::string tensor;              // the row that suggested them
  size_t single_rank = 0;          // 1-based place among the suggestions (lowest single SQNR first)
  double single_sqnr_db = 0.0;
  OutputError outputs;             // with these nodes float
  double cosine_gain = 0.0;        // outputs.cosine - FloatTrials::requantized.cosine
};

struct FloatTrials {
  OutputError quantized;    // the quantized graph as given
  // requantize_onnx without new float layers: the reference the gains are measured from. It is
  // the quantized graph again (reproduced: its outputs are bit for bit the same) unless that graph
  // came from elsewhere.
  OutputError requantized;
  bool reproduced = false;
  size_t samples = 0;              // the trial data set's samples judged beside the analysed inputs
  std::string error;               // not empty: the trials failed (why); the rest is empty
  std::vector<FloatTrial> trials;  // by cosine gain, largest first (ties: single rank)
  // The set to keep float, chosen greedily: in gain order, each trial with a positive gain joins
  // when the outputs with the set and it float beat those with the set alone (measured), until
  // keep_count trials joined. keep: their nodes; kept: the outputs with them float.
  std::vector<std::string> keep;
  size_t kept_trials = 0;
  OutputError kept;
};

// Converts the ONNX model again in fp32 with the quantized graph's input shapes, mean/std and
// platform (the float reference), loads the inputs, and compares the two graphs tensor by tensor
// (compare_float_and_quantized). *inputs_desc says where the inputs came from. Refused: a model
// with custom operators (their callbacks cannot be called here) and an ONNX model holding
// QuantizeLinear/DequantizeLinear (its conversion is no float reference).
// trials (with req.try_count > 0): the float trials, on the same inputs.
Status analyze_accuracy(const AccuracyAnalysisRequest& req, const Graph& quant_graph, AccuracyReport* report,
                        std::string* inputs_desc, FloatTrials* trials = nullptr);

// The trials as the JSON object rknn_inspect writes under "float_trials" (docs/inspect.md).
std::string float_trials_json(const FloatTrials& t);

}  // namespace orknn
