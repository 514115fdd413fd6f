#include "converter/accuracy_analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>

#include "converter/convert.h"
#include "converter/quant/dataset.h"
#include "runtime/executor.h"

namespace orknn {
namespace {

bool graph_is_quantized(const Graph& g) {
  for (const auto& t : g.tensors)
    if (!t.quant.empty()) return true;
  return false;
}

// One set of model inputs: real values in the quantized graph's input order.
using Inputs = std::vector<std::vector<float>>;

// Runs g on each input set (inputs matched to `order_graph`'s by name) and returns its outputs, by
// "<set>:<output name>": raw bytes (for bit-for-bit comparisons) and real values.
Status run_outputs(const Graph& g, const Graph& order_graph, const std::vector<Inputs>& sets, bool allow_fast,
                   std::map<std::string, std::vector<uint8_t>>* raw, std::map<std::string, std::vector<float>>* real) {
  std::vector<size_t> order;  // g's input i is order_graph's input order[i]
  const std::string missing = inputs_by_name(g, order_graph, &order);
  if (!missing.empty()) return ORKNN_ERR(kFail, "input '%s' of a re-quantized model is not the model's", missing.c_str());
  std::unique_ptr<Executor> ex;
  ORKNN_RETURN_IF_ERROR(Executor::create_keep_all(g, allow_fast, 1, &ex));
  for (size_t s = 0; s < sets.size(); ++s) {
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      std::vector<uint8_t> bytes;
      ORKNN_RETURN_IF_ERROR(graph_input_bytes(g.tensor(g.inputs[i].tensor), sets[s][order[i]], "model", &bytes));
      ORKNN_RETURN_IF_ERROR(ex->set_input(i, bytes.data(), bytes.size()));
    }
    ORKNN_RETURN_IF_ERROR(ex->run());
    for (int id : g.outputs) {
      const Tensor& t = g.tensor(id);
      const auto* p = static_cast<const uint8_t*>(ex->data(id));
      const std::string key = std::to_string(s) + ":" + t.name;
      if (raw) (*raw)[key].assign(p, p + t.nbytes());
      if (real) (*real)[key] = real_values(t, p);
    }
  }
  return Status::Ok();
}

// The least cosine and SQNR over the outputs of `x` against `ref` (NaN is the least).
OutputError output_error(const std::map<std::string, std::vector<float>>& ref,
                         const std::map<std::string, std::vector<float>>& x) {
  OutputError e;
  e.sqnr_db = std::numeric_limits<double>::infinity();
  auto least = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b); };
  for (const auto& [name, values] : x) {
    auto r = ref.find(name);
    const TensorError t = r == ref.end() ? TensorError{std::nan(""), std::nan(""), 0, 0} : tensor_error(r->second, values);
    e.cosine = least(e.cosine, t.cosine);
    e.sqnr_db = least(e.sqnr_db, t.sqnr_db);
  }
  return e;
}

// rknn_inspect accuracy --try: see AccuracyAnalysisRequest::try_count.
Status try_float_layers(const AccuracyAnalysisRequest& req, const ConvertOptions& float_opts, const Graph& fg,
                        const Graph& qg, const std::vector<Inputs>& inputs, const AccuracyReport& report,
                        FloatTrials* out) {
  *out = FloatTrials();
  std::map<std::string, std::vector<float>> ref, real;
  std::map<std::string, std::vector<uint8_t>> raw_q, raw;
  ORKNN_RETURN_IF_ERROR(run_outputs(fg, qg, inputs, req.allow_fast_kernels, nullptr, &ref));
  ORKNN_RETURN_IF_ERROR(run_outputs(qg, qg, inputs, req.allow_fast_kernels, &raw_q, &real));
  out->quantized = output_error(ref, real);

  ConvertOptions o = float_opts;
  o.precision = qg.precision;
  if (qg.conversion_settings.find("weights per layer") != std::string::npos) o.quant.method = "layer";
  // The outputs of the model quantized again with float_layers kept float.
  auto measure = [&](const std::vector<std::string>& float_layers, OutputError* e,
                     std::map<std::string, std::vector<uint8_t>>* bytes) -> Status {
    o.quant.float_layers = float_layers;
    Graph g;
    Status st = requantize_onnx(req.onnx_path, o, qg, &g);
    if (!st.ok()) return Status(st.code(), "quantizing the model again: " + st.message());
    std::map<std::string, std::vector<float>> values;
    ORKNN_RETURN_IF_ERROR(run_outputs(g, qg, inputs, req.allow_fast_kernels, bytes, &values));
    *e = output_error(ref, values);
    return Status::Ok();
  };
  ORKNN_RETURN_IF_ERROR(measure({}, &out->requantized, &raw));
  out->reproduced = raw == raw_q;

  const std::vector<AccuracySuggestion> sug = report.suggestions(req.try_count);
  for (size_t i = 0; i < sug.size(); ++i) {
    FloatTrial t;
    t.nodes = sug[i].nodes;
    t.tensor = sug[i].tensor;
    t.single_rank = i + 1;
    t.single_sqnr_db = sug[i].single_sqnr_db;
    ORKNN_RETURN_IF_ERROR(measure(t.nodes, &t.outputs, nullptr));
    t.cosine_gain = t.outputs.cosine - out->requantized.cosine;
    out->trials.push_back(std::move(t));
  }
  // Largest gain first; NaN last.
  std::stable_sort(out->trials.begin(), out->trials.end(), [](const FloatTrial& a, const FloatTrial& b) {
    if (std::isnan(b.cosine_gain)) return !std::isnan(a.cosine_gain);
    return a.cosine_gain > b.cosine_gain;
  });
  // Greedy: in gain order, a candidate joins the set when the set with it gains more than without
  // (gains do not add up: two layers' errors may have cancelled each other).
  out->kept = out->requantized;
  for (const FloatTrial& t : out->trials) {
    if (out->kept_trials == req.keep_count || !(t.cosine_gain > 0.0)) break;
    std::vector<std::string> set = out->keep;
    for (const std::string& n : t.nodes)
      if (std::find(set.begin(), set.end(), n) == set.end()) set.push_back(n);
    OutputError e = t.outputs;
    if (!out->keep.empty()) ORKNN_RETURN_IF_ERROR(measure(set, &e, nullptr));
    if (!(e.cosine > out->kept.cosine)) continue;
    out->keep = std::move(set);
    out->kept = e;
    ++out->kept_trials;
  }
  return Status::Ok();
}

std::string output_error_json(const OutputError& e) {
  return "{\"cosine\": " + json_number(e.cosine) + ", \"sqnr_db\": " + json_number(e.sqnr_db) + "}";
}

}  // namespace

std::string float_trials_json(const FloatTrials& t) {
  if (!t.error.empty()) return "{\"error\": " + json_quote(t.error) + "}";
  std::string j = "{\"quantized\": " + output_error_json(t.quantized) +
                  ", \"requantized\": " + output_error_json(t.requantized) +
                  ", \"reproduced\": " + (t.reproduced ? "true" : "false") +
                  ", \"samples\": " + std::to_string(t.samples) + ",\n    \"trials\": [";
  for (size_t i = 0; i < t.trials.size(); ++i) {
    const FloatTrial& f = t.trials[i];
    j += std::string(i ? "," : "") + "\n      {\"nodes\": " + json_names(f.nodes) + ", \"tensor\": " +
         json_quote(f.tensor) + ", \"single_rank\": " + std::to_string(f.single_rank) +
         ", \"single_sqnr_db\": " + json_number(f.single_sqnr_db) + ", \"outputs\": " + output_error_json(f.outputs) +
         ", \"cosine_gain\": " + json_number(f.cosine_gain) + "}";
  }
  j += t.trials.empty() ? "],\n" : "\n    ],\n";
  return j + "    \"keep\": " + json_names(t.keep) + ", \"kept_trials\": " + std::to_string(t.kept_trials) +
         ", \"kept\": " + output_error_json(t.kept) + "}";
}

Status analyze_accuracy(const AccuracyAnalysisRequest& req, const Graph& qg, AccuracyReport* report,
                        std::string* inputs_desc, FloatTrials* trials) {
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
  ORKNN_RETURN_IF_ERROR(compare_float_and_quantized(fg, qg, inputs, report, aopts));
  if (!trials || req.try_count == 0) return Status::Ok();
  *trials = FloatTrials();
  if (!graph_is_quantized(qg)) return Status::Ok();
  std::vector<Inputs> sets = {inputs};
  std::vector<size_t> order;  // qg's input i is fg's input order[i]
  if (!inputs_by_name(qg, fg, &order).empty()) {
    trials->error = "the float and quantized models' inputs differ";
    return Status::Ok();
  }
  if (!req.trial_dataset.empty()) {
    std::vector<CalibrationSample> samples;
    st = load_calibration_set(req.trial_dataset, fg, &samples);  // in fg's input order
    if (!st.ok()) return Status(st.code(), "trial data set: " + st.message());
    for (const CalibrationSample& sample : samples) {
      Inputs set;
      for (size_t j : order) set.push_back(sample.inputs[j]);
      sets.push_back(std::move(set));
    }
  }
  // A failed trial leaves the analysis standing: the error is reported beside it.
  st = try_float_layers(req, opts, fg, qg, sets, *report, trials);
  if (!st.ok()) {
    *trials = FloatTrials();
    trials->error = st.message();
  }
  trials->samples = sets.size() - 1;
  return Status::Ok();
}

}  // namespace orknn
