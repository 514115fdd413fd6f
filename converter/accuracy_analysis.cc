#include "converter/accuracy_analysis.h"

#include <random>

#include "converter/convert.h"
#include "converter/quant/dataset.h"

namespace orknn {
namespace {

bool graph_is_quantized(const Graph& g) {
  for (const auto& t : g.tensors)
    if (!t.quant.empty()) return true;
  return false;
}

}  // namespace

Status analyze_accuracy(const AccuracyAnalysisRequest& req, const Graph& qg, AccuracyReport* report,
                        std::string* inputs_desc) {
  // Custom nodes compute in the application's callbacks, which cannot be called here: every figure
  // from the first custom node on would describe the converter's stand-in, not the model.
  for (const Node& n : qg.nodes)
    if (n.op == OpId::Custom)
      return ORKNN_ERR(kInvalidParam,
                       "the model holds custom operator node '%s' (type %s), whose results only the application's "
                       "callbacks compute; per-layer accuracy needs a model without custom operators",
                       n.name.c_str(), n.attrs.get_string("custom_type", "?").c_str());

  // The float reference: the same ONNX model in fp32 with the quantized graph's input shapes and mean/std.
  ConvertOptions opts;
  opts.platform = qg.platform.empty() ? opts.platform : qg.platform;
  opts.precision = FloatPrecision::kFp32;
  opts.subgraph_inputs = req.subgraph_inputs;
  opts.subgraph_outputs = req.subgraph_outputs;
  for (const auto& in : qg.inputs) {
    const Tensor& t = qg.tensor(in.tensor);
    opts.input_shapes[t.name] = t.shape;
    if (!in.mean.empty()) opts.mean_values[t.name] = in.mean;
    if (!in.std.empty()) opts.std_values[t.name] = in.std;
  }
  Graph fg;
  Status st = convert_onnx(req.onnx_path, opts, &fg);
  if (!st.ok()) return Status(st.code(), "float conversion of '" + req.onnx_path + "': " + st.message());
  if (graph_is_quantized(fg))
    return ORKNN_ERR(kInvalidParam,
                     "'%s' holds QuantizeLinear/DequantizeLinear nodes, so its conversion is quantized and cannot "
                     "be the float reference; give the float ONNX model it was made from",
                     req.onnx_path.c_str());

  // Inputs, in the quantized graph's input order, loaded against the float graph's input of the same name.
  std::vector<std::vector<float>> inputs(qg.inputs.size());
  inputs_desc->clear();
  if (!req.input_files.empty()) {
    if (req.input_files.size() != qg.inputs.size()) {
      std::string names;
      for (size_t i = 0; i < qg.inputs.size(); ++i) names += (i ? ", '" : "'") + qg.tensor(qg.inputs[i].tensor).name + "'";
      return ORKNN_ERR(kInvalidParam, "%zu input file%s given, the model has %zu input%s (%s); give one per input, in "
                       "this order",
                       req.input_files.size(), req.input_files.size() == 1 ? "" : "s", qg.inputs.size(),
                       qg.inputs.size() == 1 ? "" : "s", names.c_str());
    }
    std::vector<size_t> order;
    const std::string missing = inputs_by_name(qg, fg, &order);
    if (!missing.empty())
      return ORKNN_ERR(kInvalidParam, "the quantized model's input '%s' is not an input of '%s'", missing.c_str(),
                       req.onnx_path.c_str());
    for (size_t i = 0; i < qg.inputs.size(); ++i) {
      ORKNN_RETURN_IF_ERROR(load_calibration_file(req.input_files[i], fg, order[i], &inputs[i]));
      *inputs_desc += (i ? " " : "") + req.input_files[i];
    }
  } else {
    std::mt19937 rng(req.seed);
    std::uniform_real_distribution<float> uniform(0.f, 1.f);
    for (size_t i = 0; i < qg.inputs.size(); ++i) {
      inputs[i].resize(static_cast<size_t>(qg.tensor(qg.inputs[i].tensor).numel()));
      for (float& v : inputs[i]) v = uniform(rng);
    }
    *inputs_desc = strfmt("random uniform [0,1) values, seed %u", req.seed);
  }

  AccuracyOptions aopts;
  aopts.allow_fast_kernels = req.allow_fast_kernels;
  return compare_float_and_quantized(fg, qg, inputs, report, aopts);
}

}  // namespace orknn
