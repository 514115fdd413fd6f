// The conversion pipeline: parse -> import (infer + fold per node) -> I/O options -> passes ->
// [INT8: QDQ parameters, or prepare -> calibrate -> quantize] -> re-infer -> verify. See docs/convert.md.
#include "converter/convert.h"

#include <cerrno>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/log.h"
#include "converter/onnx/importer.h"
#include "converter/onnx/export_qdq.h"
#include "converter/onnx/model_edits.h"
#include "converter/quant/accuracy.h"
#include "converter/quant/bias_correction.h"
#include "converter/quant/calibrate.h"
#include "converter/quant/custom_op_lib.h"
#include "converter/quant/dataset.h"
#include "converter/quant/qdq_import.h"
#include "converter/quant/quantize.h"
#include "graph/verifier.h"
#include "kernels/kernel.h"
#include "runtime/platform.h"

namespace orknn {
namespace {

constexpr size_t kMaxCustomString = 1023;  // rknn_custom_string holds 1024 chars with the NUL

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (c == ',') { parts.push_back(trim(cur)); cur.clear(); }
    else cur += c;
  }
  parts.push_back(trim(cur));
  return parts;
}

std::string input_names(const Graph& g) {
  std::string r;
  for (const GraphInput& in : g.inputs) r += (r.empty() ? "'" : ", '") + g.tensor(in.tensor).name + "'";
  return r;
}

bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16; }

// mean/std for one input, from its own entry or the "" entry.
const std::vector<float>* lookup(const std::map<std::string, std::vector<float>>& m, const std::string& name,
                                 bool* shared) {
  auto it = m.find(name);
  if (it != m.end()) { *shared = false; return &it->second; }
  it = m.find("");
  if (it != m.end()) { *shared = true; return &it->second; }
  return nullptr;
}

Status check_norm_values(const char* what, const std::vector<float>& v, const Tensor& t) {
  if (v.empty()) return ORKNN_ERR(kInvalidParam, "%s for input '%s' is empty", what, t.name.c_str());
  for (float x : v)
    if (!std::isfinite(x)) return ORKNN_ERR(kInvalidParam, "%s for input '%s' holds a non-finite value", what, t.name.c_str());
  if (v.size() == 1) return Status::Ok();
  if (t.shape.size() == 4 && static_cast<int64_t>(v.size()) == t.shape[1]) return Status::Ok();
  if (t.shape.size() == 4)
    return ORKNN_ERR(kInvalidParam,
                     "%s for input '%s' has %zu values, but the input has %lld channels (dim 1 of %s); give one "
                     "value per channel, or one value for all", what, t.name.c_str(), v.size(),
                     static_cast<long long>(t.shape[1]), shape_str(t.shape).c_str());
  return ORKNN_ERR(kInvalidParam,
                   "%s for input '%s' has %zu values, but the input %s is not a 4-D NCHW image; only one value "
                   "(for all elements) applies", what, t.name.c_str(), v.size(), shape_str(t.shape).c_str());
}

template <typename V>
Status resolve_index_keys(const std::vector<std::string>& inputs, const char* what, std::map<std::string, V>* m) {
  std::map<std::string, V> named;
  // Named keys first, so that they win over "#i" for the same input.
  for (auto& kv : *m)
    if (kv.first.size() < 2 || kv.first[0] != '#') named[kv.first] = kv.second;
  for (auto& kv : *m) {
    if (kv.first.size() < 2 || kv.first[0] != '#') continue;
    char* end = nullptr;
    long i = std::strtol(kv.first.c_str() + 1, &end, 10);
    if (*end != '\0' || i < 0) { named[kv.first] = kv.second; continue; }
    if (static_cast<size_t>(i) >= inputs.size())
      return ORKNN_ERR(kInvalidParam, "%s given for input #%ld, but the model has %zu input(s)", what, i, inputs.size());
    named.emplace(inputs[static_cast<size_t>(i)], kv.second);  // an entry by name wins (emplace keeps it)
  }
  *m = std::move(named);
  return Status::Ok();
}

bool onnx_has_qdq(const onnx::ModelProto& model) {
  for (const auto& n : model.graph().node())
    if ((n.domain().empty() || n.domain() == "ai.onnx") &&
        (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear"))
      return true;
  return false;
}

// The quantization options that can be checked before anything is imported.
Status check_quant_options(const QuantOptions& q, bool qdq_model, QuantizeSettings* settings, CalibAlgorithm* alg) {
  ORKNN_RETURN_IF_ERROR(parse_calib_algorithm(q.algorithm, alg));
  if (q.method == "channel") settings->weights = WeightGranularity::kPerChannel;
  else if (q.method == "layer") settings->weights = WeightGranularity::kPerTensor;
  else return ORKNN_ERR(kInvalidParam, "quantization method '%s' is not one of channel, layer", q.method.c_str());
  settings->float_layers = q.float_layers;
  if (q.enabled && q.dataset.empty() && !qdq_model)
    return ORKNN_ERR(kInvalidParam,
                     "--quantize needs a calibration data set: --dataset LIST.txt (one sample per line; "
                     "see docs/convert.md), 'dataset:' in the config file, or build(dataset=...) in Python");
  if (!q.enabled && !qdq_model) {
    if (!q.float_layers.empty())
      return ORKNN_ERR(kInvalidParam, "--float-layers applies to quantized conversions; add --quantize --dataset LIST.txt");
    if (!q.dataset.empty())
      ORKNN_LOGW("calibration data set '%s' ignored: the model is converted in float (no --quantize)", q.dataset.c_str());
    if (!q.custom_op_libs.empty())
      ORKNN_LOGW("--custom-op-lib ignored: it serves INT8 calibration, and the model is converted in float (no "
                 "--quantize)");
  }
  return Status::Ok();
}

// The .rknn's record of a calibrated INT8 conversion (rknn_inspect info prints it). samples < 0:
// the ranges came from another conversion of the model (a shape set, batch 1).
std::string calibration_settings(const QuantOptions& q, int samples) {
  const std::string on =
      samples >= 0 ? strfmt("calibrated on %d samples", samples) : "calibration of the first conversion";
  std::string range_options;
  if (q.algorithm == "kl" && q.kl_keep_tails) range_options = "keep tails";
  if (q.clip_saturated) range_options += (range_options.empty() ? "" : ", ") + std::string("clip saturated");
  if (!range_options.empty()) range_options = " (" + range_options + ")";
  return strfmt("int8: %s, algorithm %s%s, weights per %s%s, bias correction %s", on.c_str(), q.algorithm.c_str(),
                range_options.c_str(), q.method.c_str(),
                q.adaptive_rounding ? " (adaptive rounding)" : "", q.bias_correction ? "on" : "off");
}

// What calibration chose, by name: how a dynamic-shape conversion hands set 0's calibration to the
// other sets (names are the same in every set; tensor ids need not be), and a batch-N or
// auto-hybrid conversion its first calibration to the later ones.
struct NamedCalibration {
  std::map<std::string, std::pair<float, float>> ranges;  // activation ranges by tensor name
  BiasDeltas bias_deltas;                                 // --bias-correction: by node name
  RoundedWeights rounded_weights;                         // --adaptive-rounding: by node name
  // requantize_onnx: a quantized graph's own parameters, by the float graph's tensor names; they
  // win over ranges (QuantizeSettings::given_activations / given_constants).
  std::map<std::string, QuantParams> activation_params;
  std::map<std::string, QuantizedConstant> constants;
};

// INT8 conversion of the graph the passes produced: the model's own parameters (QDQ models), or
// calibration on the data set. Dynamic shapes: `given` (sets >= 1) replaces calibration with set
// 0's ranges; `calibrated` (set 0) receives them.
Status quantize_converted(Graph& g, const QuantOptions& q, QuantizeSettings settings, CalibAlgorithm alg,
                          ConvertReport* report, const NamedCalibration* given = nullptr,
                          NamedCalibration* calibrated = nullptr) {
  std::vector<ConvertReport::LayerPrecision> table;
  int samples_used = 0;
  if (graph_has_qdq(g)) {
    if (!q.custom_op_libs.empty())
      ORKNN_LOGW("--custom-op-lib not used: the model is already quantized (QuantizeLinear/DequantizeLinear) and "
                 "needs no calibration");
    if (!q.dataset.empty())
      ORKNN_LOGW("calibration data set '%s' not used: the model is already quantized (QuantizeLinear/"
                 "DequantizeLinear); its own scales and zero points are kept", q.dataset.c_str());
    ORKNN_RETURN_IF_ERROR(quantize_qdq_graph(g, settings, &table));
  } else {
    if (q.dataset.empty())
      return ORKNN_ERR(kInvalidParam, "--quantize needs a calibration data set: --dataset LIST.txt");
    ORKNN_RETURN_IF_ERROR(prepare_for_quantization(g, [](const Node&) { return true; }));
    // Before the slow part; after the split, so that the names the accuracy report gives split
    // activations ("<conv>_HardSwish") are accepted.
    ORKNN_RETURN_IF_ERROR(check_float_layers(g, settings.float_layers));
    // Loaded for the sets that reuse set 0's ranges too: which custom outputs hold real ranges
    // decides what quantizes, and must be the same in every set.
    CustomOpLibraries custom_libs;
    ORKNN_RETURN_IF_ERROR(custom_libs.load(q.custom_op_libs));
    settings.calibrated_custom_types = custom_libs.types();
    std::map<int, std::pair<float, float>> ranges;
    if (given) {
      for (size_t i = 0; i < g.tensors.size(); ++i) {
        auto it = given->ranges.find(g.tensors[i].name);
        if (it != given->ranges.end()) ranges[static_cast<int>(i)] = it->second;
        auto p = given->activation_params.find(g.tensors[i].name);
        if (p != given->activation_params.end()) settings.given_activations[static_cast<int>(i)] = p->second;
        auto c = given->constants.find(g.tensors[i].name);
        if (c != given->constants.end() && g.tensors[i].is_const()) settings.given_constants[static_cast<int>(i)] = c->second;
      }
      ORKNN_RETURN_IF_ERROR(quantize_graph(g, ranges, settings, &table));
      if (q.adaptive_rounding) ORKNN_RETURN_IF_ERROR(apply_rounded_weights(g, given->rounded_weights));
      if (q.bias_correction) ORKNN_RETURN_IF_ERROR(apply_bias_deltas(g, given->bias_deltas));
      g.conversion_settings = calibration_settings(q, -1);
    } else {
      std::vector<CalibrationSample> samples;
      ORKNN_RETURN_IF_ERROR(load_calibration_set(q.dataset, g, &samples));
      if (samples.empty())
        return ORKNN_ERR(kInvalidParam, "calibration data set '%s' lists no samples", q.dataset.c_str());
      ORKNN_RETURN_IF_ERROR(calibrate(g, samples, alg, &ranges, custom_libs.ops(), q.kl_keep_tails));
      if (q.clip_saturated)
        ORKNN_LOGI("--clip-saturated: %d ranges end where their activations saturate", narrow_saturated_ranges(g, &ranges));
      samples_used = static_cast<int>(samples.size());
      if (calibrated)
        for (const auto& [id, range] : ranges) calibrated->ranges[g.tensor(id).name] = range;
      const Graph float_graph = g;  // constants are shared, not copied
      ORKNN_RETURN_IF_ERROR(quantize_graph(g, ranges, settings, &table));
      if (q.adaptive_rounding)  // before bias correction, which measures the weights it leaves
        ORKNN_RETURN_IF_ERROR(
            round_weights_adaptively(float_graph, g, samples, calibrated ? &calibrated->rounded_weights : nullptr));
      if (q.bias_correction)
        ORKNN_RETURN_IF_ERROR(correct_biases(float_graph, g, samples, calibrated ? &calibrated->bias_deltas : nullptr));
      g.conversion_settings = calibration_settings(q, samples_used);
    }
  }
  if (report) {
    report->layer_precision = std::move(table);
    report->calibration_samples = samples_used;
  }
  return Status::Ok();
}

// The model's real inputs (graph inputs that are not initializers), in order.
std::vector<std::string> onnx_input_names(const onnx::ModelProto& model) {
  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  std::vector<std::string> names;
  for (const auto& vi : model.graph().input())
    if (!inits.count(vi.name())) names.push_back(vi.name());
  return names;
}

Status convert_static(const onnx::ModelProto& model, const std::string& model_dir, const ConvertOptions& opts,
                      Graph* out, ConvertReport* report, const NamedCalibration* given_ranges = nullptr,
                      NamedCalibration* calibrated_ranges = nullptr) {
  if (!find_platform(opts.platform)) {
    std::string names;
    for (const auto& p : platform_names()) names += (names.empty() ? "" : ", ") + p;
    return ORKNN_ERR(kInvalidParam, "unknown target platform '%s' (supported: %s)", opts.platform.c_str(), names.c_str());
  }
  // "#i" keys -> the i-th model input's name.
  const std::vector<std::string> onnx_inputs = onnx_input_names(model);
  QuantizeSettings qsettings;
  CalibAlgorithm calib_alg = CalibAlgorithm::kNormal;
  const bool qdq = onnx_has_qdq(model);
  ORKNN_RETURN_IF_ERROR(check_quant_options(opts.quant, qdq, &qsettings, &calib_alg));
  ConvertOptions o = opts;
  ORKNN_RETURN_IF_ERROR(resolve_index_keys(onnx_inputs, "input shape", &o.input_shapes));
  ORKNN_RETURN_IF_ERROR(resolve_index_keys(onnx_inputs, "mean_values", &o.mean_values));
  ORKNN_RETURN_IF_ERROR(resolve_index_keys(onnx_inputs, "std_values", &o.std_values));

  Graph g;
  onnx_import::ImportOptions iopts;
  iopts.input_shapes = o.input_shapes;
  iopts.model_dir = model_dir;
  iopts.custom_op_types.insert(opts.custom_op_types.begin(), opts.custom_op_types.end());
  onnx_import::ImportStats stats;
  ORKNN_RETURN_IF_ERROR(onnx_import::import_model(model, iopts, &g, &stats));
  ORKNN_RETURN_IF_ERROR(apply_io_options(o, &g));

  PassOptions popts;
  popts.fusion = opts.run_passes;
  popts.precision = opts.precision;
  // Quantized conversions quantize the fp32 weights; float constants left afterwards take their
  // fp16 values then.
  const bool quantizing = opts.quant.enabled || qdq;
  if (quantizing) popts.precision = FloatPrecision::kFp32;
  popts.fuse_residual = !quantizing;
  std::vector<PassStat> pass_stats;
  ORKNN_RETURN_IF_ERROR(run_graph_passes(g, popts, &pass_stats));
  if (opts.quant.enabled || graph_has_qdq(g))
    ORKNN_RETURN_IF_ERROR(
        quantize_converted(g, opts.quant, qsettings, calib_alg, report, given_ranges, calibrated_ranges));
  if (quantizing && opts.precision == FloatPrecision::kFp16) {
    int changes = 0;
    ORKNN_RETURN_IF_ERROR(round_weights_fp16(g, &changes));
    pass_stats.push_back({"round_weights_fp16", changes});
  }
  ORKNN_RETURN_IF_ERROR(reinfer_graph(g));
  Status st = verify_graph(g);
  if (!st.ok())
    return Status(st.code(), "the converted graph failed verification (a converter bug; please report it "
                             "with the model): " + st.message());

  if (report) {
    report->opset = stats.opset;
    report->ir_version = stats.ir_version;
    report->producer = stats.producer;
    report->onnx_nodes = stats.onnx_nodes;
    report->nodes_folded_at_import = stats.nodes_folded;
    report->passes = pass_stats;
  }
  *out = std::move(g);
  return Status::Ok();
}


std::string shape_list_str(const std::vector<Shape>& shapes) {
  std::string r;
  for (const Shape& s : shapes) r += (r.empty() ? "" : "; ") + shape_dims_str(s);
  return r;
}

// --auto-hybrid (docs/convert.md "Auto hybrid"): the INT8 conversion, then, while some model output
// is below the target cosine against the fp32 conversion on the evaluation samples, the layer that
// helps most joins the float layers. The candidates are the accuracy analysis' first suggestions
// (the layers whose quantization alone costs the most, on sample 0); each is tried, quantizing the
// model again with the first calibration's ranges, and the one whose outputs' lowest cosine rises
// the most is kept: the layer that costs the most alone is not always the one whose float form
// helps the outputs most (rknn_inspect accuracy --try measures the same).
constexpr size_t kAutoHybridSamples = 4;     // the data set's first samples judge the outputs
constexpr size_t kAutoHybridCandidates = 4;  // suggestions tried per step
constexpr int kAutoHybridMaxSteps = 32;

Status convert_auto_hybrid(const onnx::ModelProto& model, const std::string& model_dir, const ConvertOptions& opts,
                           Graph* out, ConvertReport* report) {
  const double target = opts.quant.auto_hybrid_cos;
  if (!opts.quant.enabled || onnx_has_qdq(model))
    return ORKNN_ERR(kInvalidParam, "--auto-hybrid applies to models calibrated on a data set (--quantize --dataset "
                     "LIST.txt); this conversion calibrates nothing");
  if (!(target > 0.0 && target <= 1.0))
    return ORKNN_ERR(kInvalidParam, "--auto-hybrid: the target cosine must be in (0, 1], got %g", target);
  ConvertOptions qo = opts;
  NamedCalibration ranges;
  Graph q;
  ORKNN_RETURN_IF_ERROR(convert_static(model, model_dir, qo, &q, report, nullptr, &ranges));
  const int calibration_samples = report ? report->calibration_samples : 0;  // the later runs reuse the ranges
  ConvertOptions fo = opts;
  fo.quant = QuantOptions();
  fo.precision = FloatPrecision::kFp32;
  Graph f;
  ORKNN_RETURN_IF_ERROR(convert_static(model, model_dir, fo, &f, nullptr));
  std::vector<CalibrationSample> samples;
  ORKNN_RETURN_IF_ERROR(load_calibration_set(opts.quant.dataset, f, &samples));
  if (samples.size() > kAutoHybridSamples) samples.resize(kAutoHybridSamples);
  // compare_float_and_quantized takes the inputs in the quantized graph's order.
  std::vector<size_t> order;
  if (!inputs_by_name(q, f, &order).empty())
    return ORKNN_ERR(kFail, "--auto-hybrid: the float and INT8 graphs' inputs differ");
  std::set<std::string> outputs;
  for (int id : q.outputs) outputs.insert(q.tensor(id).name);
  // The outputs' lowest cosine over the samples; the report of sample 0 in *first if given.
  auto lowest_cosine = [&](const Graph& quantized, double* worst, AccuracyReport* first) -> Status {
    *worst = 1.0;
    for (size_t s = 0; s < samples.size(); ++s) {
      std::vector<std::vector<float>> inputs;
      for (size_t j : order) inputs.push_back(samples[s].inputs[j]);
      AccuracyReport rep;
      ORKNN_RETURN_IF_ERROR(compare_float_and_quantized(f, quantized, inputs, &rep));
      for (const AccuracyRow& row : rep.rows)
        if (outputs.count(row.tensor)) *worst = std::isnan(row.entire.cosine) ? -1.0 : std::min(*worst, row.entire.cosine);
      if (s == 0 && first) *first = std::move(rep);
    }
    return Status::Ok();
  };

  std::vector<std::string> chosen;
  std::set<std::string> floats(opts.quant.float_layers.begin(), opts.quant.float_layers.end());
  double worst = 1.0;
  AccuracyReport first;
  ORKNN_RETURN_IF_ERROR(lowest_cosine(q, &worst, &first));
  for (int step = 0;; ++step) {
    ORKNN_LOGI("--auto-hybrid: %zu layer(s) kept float, lowest output cosine %.6f (target %.6f)", chosen.size(),
               worst, target);
    if (worst >= target) break;
    std::vector<std::vector<std::string>> candidates;  // the first suggestions' nodes not float yet
    for (const AccuracySuggestion& sug : first.suggestions(q.nodes.size())) {
      std::vector<std::string> pick;
      for (const std::string& n : sug.nodes)
        if (!floats.count(n)) pick.push_back(n);
      if (!pick.empty()) candidates.push_back(pick);
      if (candidates.size() == kAutoHybridCandidates) break;
    }
    if (candidates.empty() || step >= kAutoHybridMaxSteps) {
      ORKNN_LOGW("--auto-hybrid: the outputs reach cosine %.6f, below the target %.6f, with %zu layer(s) kept float; "
                 "no further layer improves them on its own", worst, target, chosen.size());
      break;
    }
    double best = -2.0;
    Graph best_q;
    ConvertReport best_report;
    AccuracyReport best_first;
    std::vector<std::string> best_pick;
    for (const auto& pick : candidates) {
      std::set<std::string> trial = floats;
      trial.insert(pick.begin(), pick.end());
      qo.quant.float_layers.assign(trial.begin(), trial.end());
      Graph t;
      ConvertReport tr;
      ORKNN_RETURN_IF_ERROR(convert_static(model, model_dir, qo, &t, report ? &tr : nullptr, &ranges, nullptr));
      double cos = 0;
      AccuracyReport rep;
      ORKNN_RETURN_IF_ERROR(lowest_cosine(t, &cos, &rep));
      if (cos > best) best = cos, best_q = std::move(t), best_report = std::move(tr), best_first = std::move(rep), best_pick = pick;
    }
    if (report) *report = std::move(best_report);
    for (const std::string& n : best_pick)
      if (floats.insert(n).second) chosen.push_back(n);
    q = std::move(best_q);
    first = std::move(best_first);
    worst = best;
  }
  std::string names;
  for (const auto& n : chosen) names += (names.empty() ? "" : ", ") + n;
  // After the calibration's own record.
  q.conversion_settings += strfmt("%sauto-hybrid: lowest output cosine %.6f against fp32 (target %.6f) on %zu data "
                                  "set sample(s); layers kept float: %s",
                                  q.conversion_settings.empty() ? "" : "; ", worst, target, samples.size(),
                                  names.empty() ? "none" : names.c_str());
  if (report) {
    report->calibration_samples = calibration_samples;
    report->auto_hybrid_layers = chosen;
    report->auto_hybrid_cosine = worst;
  }
  *out = std::move(q);
  return Status::Ok();
}

// Dynamic shapes: one conversion per shape set, then the sets' differences (docs/convert.md).
Status convert_model(const onnx::ModelProto& model, const std::string& model_dir, const ConvertOptions& opts,
                     Graph* out, ConvertReport* report, DynamicShapes* dyn) {
  if (!opts.subgraph_inputs.empty() || !opts.subgraph_outputs.empty() || opts.batch_size > 0) {
    onnx::ModelProto cut = model;
    ORKNN_RETURN_IF_ERROR(onnx_import::cut_subgraph(&cut, opts.subgraph_inputs, opts.subgraph_outputs));
    ConvertOptions o = opts;
    o.subgraph_inputs.clear();
    o.subgraph_outputs.clear();
    o.batch_size = 0;
    if (opts.batch_size == 0) return convert_model(cut, model_dir, o, out, report, dyn);
    onnx::ModelProto batched = cut;
    ORKNN_RETURN_IF_ERROR(onnx_import::set_batch_size(&batched, opts.batch_size));
    ConvertOptions ob = o;
    for (auto& [name, shape] : ob.input_shapes)
      if (!shape.empty() && shape[0] == 1) shape[0] = opts.batch_size;  // per-sample shapes, as the vendor's
    if (opts.batch_size == 1 || !opts.quant.enabled || onnx_has_qdq(cut))
      return convert_model(batched, model_dir, ob, out, report, dyn);
    // INT8 at batch N: the data set's samples are single, so the model is calibrated at its own batch
    // and the batch-N model quantized with those ranges.
    if (!opts.dynamic_shapes.empty() || opts.quant.auto_hybrid_cos > 0.0)
      return ORKNN_ERR(kUnimplemented, "a batch size with dynamic shapes or --auto-hybrid is not supported in INT8");
    if (dyn) dyn->sets.clear();
    NamedCalibration ranges;
    Graph single;
    ConvertReport calibration;
    ORKNN_RETURN_IF_ERROR(convert_static(cut, model_dir, o, &single, &calibration, nullptr, &ranges));
    ORKNN_RETURN_IF_ERROR(convert_static(batched, model_dir, ob, out, report, &ranges, nullptr));
    if (report) report->calibration_samples = calibration.calibration_samples;
    return Status::Ok();
  }
  if (dyn) dyn->sets.clear();
  if (opts.quant.auto_hybrid_cos > 0.0) {
    if (!opts.dynamic_shapes.empty())
      return ORKNN_ERR(kUnimplemented, "--auto-hybrid with dynamic shapes is not supported; choose the float layers "
                       "on a static conversion and give them with --float-layers");
    return convert_auto_hybrid(model, model_dir, opts, out, report);
  }
  if (opts.dynamic_shapes.empty()) return convert_static(model, model_dir, opts, out, report);
  if (!dyn)
    return ORKNN_ERR(kInvalidParam, "dynamic shapes were given, but the caller takes no DynamicShapes output (a bug "
                     "of the calling tool)");
  const std::vector<std::string> inputs = onnx_input_names(model);
  std::map<std::string, std::vector<Shape>> sets = opts.dynamic_shapes;
  if (sets.count("")) {
    if (inputs.size() != 1)
      return ORKNN_ERR(kInvalidParam, "dynamic shapes given without an input name, but the model has %zu inputs; "
                       "write NAME=shape;shape per input", inputs.size());
    if (sets.count(inputs[0]))
      return ORKNN_ERR(kInvalidParam, "dynamic shapes given twice for input '%s'", inputs[0].c_str());
    sets[inputs[0]] = sets[""];
    sets.erase("");
  }
  ORKNN_RETURN_IF_ERROR(resolve_index_keys(inputs, "dynamic shapes", &sets));
  std::string input_list;
  for (const auto& n : inputs) input_list += (input_list.empty() ? "'" : ", '") + n + "'";
  size_t n_sets = 0;
  std::string first_name;
  for (const auto& [name, shapes] : sets) {
    if (std::find(inputs.begin(), inputs.end(), name) == inputs.end())
      return ORKNN_ERR(kInvalidParam, "dynamic shapes name '%s', which is not an input of the model (inputs: %s)",
                       name.c_str(), input_list.c_str());
    if (shapes.empty()) return ORKNN_ERR(kInvalidParam, "dynamic shapes for input '%s' list no shape", name.c_str());
    if (n_sets == 0) { n_sets = shapes.size(); first_name = name; }
    if (shapes.size() != n_sets)
      return ORKNN_ERR(kInvalidParam,
                       "dynamic shapes: input '%s' lists %zu shape sets (%s) but input '%s' lists %zu; every input "
                       "needs one shape per set",
                       name.c_str(), shapes.size(), shape_list_str(shapes).c_str(), first_name.c_str(), n_sets);
    for (const Shape& s : shapes)
      for (int64_t d : s)
        if (d <= 0)
          return ORKNN_ERR(kInvalidParam, "dynamic shapes for input '%s': %s has a non-positive dim", name.c_str(),
                           shape_dims_str(s).c_str());
  }
  if (n_sets > kMaxShapeSets)
    return ORKNN_ERR(kInvalidParam, "dynamic shapes: %zu shape sets; at most %zu are supported", n_sets, kMaxShapeSets);
  // A fixed input shape (--input-shape, input_size_list) pins one shape for every set; for an input
  // that also has dynamic shapes it must be one of them (vendor configs list set 0 there).
  std::map<std::string, Shape> fixed = opts.input_shapes;
  if (fixed.count("") && inputs.size() == 1) { fixed[inputs[0]] = fixed[""]; fixed.erase(""); }
  ORKNN_RETURN_IF_ERROR(resolve_index_keys(inputs, "input shape", &fixed));
  for (const auto& [name, shapes] : sets) {
    auto it = fixed.find(name);
    if (it == fixed.end()) continue;
    if (std::find(shapes.begin(), shapes.end(), it->second) == shapes.end())
      return ORKNN_ERR(kInvalidParam, "input '%s' has the fixed input shape %s and the dynamic shapes %s; give only one",
                       name.c_str(), shape_dims_str(it->second).c_str(), shape_list_str(shapes).c_str());
    fixed.erase(it);
  }

  std::vector<Graph> graphs(n_sets);
  NamedCalibration set0_ranges;
  for (size_t s = 0; s < n_sets; ++s) {
    ConvertOptions o = opts;
    o.dynamic_shapes.clear();
    o.input_shapes = fixed;
    for (const auto& [name, shapes] : sets) o.input_shapes[name] = shapes[s];
    // INT8: set 0 is calibrated on the data set (whose samples have set 0's shapes); the other sets
    // take its activation ranges, so every set gets the same per-tensor parameters.
    Status st = convert_static(model, model_dir, o, &graphs[s], s == 0 ? report : nullptr,
                               s == 0 ? nullptr : &set0_ranges, s == 0 ? &set0_ranges : nullptr);
    if (!st.ok()) {
      std::string label;
      for (const auto& [name, shapes] : sets) label += (label.empty() ? "" : ", ") + name + "=" + shape_dims_str(shapes[s]);
      return Status(st.code(), strfmt("shape set %zu (%s): ", s, label.c_str()) + st.message());
    }
  }
  ORKNN_RETURN_IF_ERROR(collect_dynamic_shapes(graphs, dyn));
  *out = std::move(graphs[0]);
  return Status::Ok();
}
}  // namespace

Status parse_dims(const std::string& text, Shape* out) {
  out->clear();
  for (const std::string& p : split_list(text)) {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || errno != 0 || v <= 0)
      return ORKNN_ERR(kInvalidParam, "'%s' is not a list of positive integers (d0,d1,...): bad item '%s'",
                       text.c_str(), p.c_str());
    out->push_back(v);
  }
  return Status::Ok();
}

Status parse_floats(const std::string& text, std::vector<float>* out) {
  out->clear();
  for (const std::string& p : split_list(text)) {
    errno = 0;
    char* end = nullptr;
    float v = std::strtof(p.c_str(), &end);
    if (p.empty() || *end != '\0' || errno != 0 || !std::isfinite(v))
      return ORKNN_ERR(kInvalidParam, "'%s' is not a list of numbers (v1,v2,...): bad item '%s'", text.c_str(), p.c_str());
    out->push_back(v);
  }
  return Status::Ok();
}

Status apply_io_options(const ConvertOptions& opts, Graph* g) {
  const PlatformInfo* p = find_platform(opts.platform);
  if (!p) {
    std::string names;
    for (const auto& n : platform_names()) names += (names.empty() ? "" : ", ") + n;
    return ORKNN_ERR(kInvalidParam, "unknown target platform '%s' (supported: %s)", opts.platform.c_str(), names.c_str());
  }
  g->platform = p->name;
  if (opts.custom_string.size() > kMaxCustomString)
    return ORKNN_ERR(kInvalidParam, "custom string is %zu bytes; at most %zu fit (rknn_custom_string)",
                     opts.custom_string.size(), kMaxCustomString);
  g->custom_string = opts.custom_string;
  g->precision = opts.precision;

  for (const auto* m : {&opts.mean_values, &opts.std_values}) {
    for (const auto& kv : *m) {
      if (kv.first.empty()) continue;
      bool found = false;
      for (const GraphInput& in : g->inputs) found |= g->tensor(in.tensor).name == kv.first;
      if (!found)
        return ORKNN_ERR(kInvalidParam, "%s names '%s', which is not an input of the model (inputs: %s)",
                         m == &opts.mean_values ? "mean_values" : "std_values", kv.first.c_str(), input_names(*g).c_str());
    }
  }
  for (GraphInput& in : g->inputs) {
    const Tensor& t = g->tensor(in.tensor);
    bool mean_shared = false, std_shared = false;
    const std::vector<float>* mean = lookup(opts.mean_values, t.name, &mean_shared);
    const std::vector<float>* stdv = lookup(opts.std_values, t.name, &std_shared);
    // Values given for "every input" skip inputs that are not float images (ids, masks, ...).
    if (!is_float(t.dtype)) {
      if ((mean && !mean_shared) || (stdv && !std_shared))
        return ORKNN_ERR(kInvalidParam, "mean/std values for input '%s' cannot apply: it is %s, not float",
                         t.name.c_str(), dtype_name(t.dtype));
      continue;
    }
    in.mean.clear();
    in.std.clear();
    if (mean) {
      ORKNN_RETURN_IF_ERROR(check_norm_values("mean_values", *mean, t));
      in.mean = *mean;
    }
    if (stdv) {
      ORKNN_RETURN_IF_ERROR(check_norm_values("std_values", *stdv, t));
      for (float s : *stdv)
        if (s == 0.f) return ORKNN_ERR(kInvalidParam, "std_values for input '%s' holds a 0", t.name.c_str());
      in.std = *stdv;
    }
    // The I/O contract always carries both when either is given.
    if (!in.mean.empty() && in.std.empty()) in.std = {1.f};
    if (!in.std.empty() && in.mean.empty()) in.mean = {0.f};
  }
  return Status::Ok();
}

Status convert_onnx_bytes(const void* data, size_t size, const ConvertOptions& opts, Graph* out,
                          ConvertReport* report) {
  return convert_onnx_bytes(data, size, opts, out, report, nullptr);
}

Status convert_onnx_bytes(const void* data, size_t size, const ConvertOptions& opts, Graph* out,
                          ConvertReport* report, DynamicShapes* dyn) {
  onnx::ModelProto model;
  ORKNN_RETURN_IF_ERROR(onnx_import::parse_model_proto(data, size, &model));
  return convert_model(model, "", opts, out, report, dyn);
}

Status convert_onnx_bytes(const void* data, size_t size, const ConvertOptions& opts, Graph* out) {
  return convert_onnx_bytes(data, size, opts, out, nullptr);
}

Status convert_onnx(const std::string& onnx_path, const ConvertOptions& opts, Graph* out, ConvertReport* report) {
  return convert_onnx(onnx_path, opts, out, report, nullptr);
}

namespace {

// Parses the ONNX file; *dir is its directory (where external data is read from).
Status read_onnx_file(const std::string& onnx_path, onnx::ModelProto* model, std::string* dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(onnx_path, ec))
    return ORKNN_ERR(kInvalidParam, "'%s' is a directory, not an ONNX file", onnx_path.c_str());
  std::ifstream f(onnx_path, std::ios::binary | std::ios::ate);
  if (!f) return ORKNN_ERR(kInvalidParam, "cannot open ONNX file '%s'", onnx_path.c_str());
  const std::streamoff size = f.tellg();
  if (size < 0) return ORKNN_ERR(kInvalidParam, "cannot read ONNX file '%s'", onnx_path.c_str());
  std::string bytes(static_cast<size_t>(size), '\0');
  f.seekg(0);
  if (size > 0 && !f.read(bytes.data(), size))
    return ORKNN_ERR(kInvalidParam, "cannot read ONNX file '%s'", onnx_path.c_str());
  f.close();
  Status st = onnx_import::parse_model_proto(bytes.data(), bytes.size(), model);
  if (!st.ok()) return Status(st.code(), onnx_path + ": " + st.message());
  std::filesystem::path d = std::filesystem::path(onnx_path).parent_path();
  *dir = d.empty() ? "." : d.string();
  return Status::Ok();
}

}  // namespace

Status convert_onnx(const std::string& onnx_path, const ConvertOptions& opts, Graph* out, ConvertReport* report,
                    DynamicShapes* dyn) {
  onnx::ModelProto model;
  std::string dir;
  ORKNN_RETURN_IF_ERROR(read_onnx_file(onnx_path, &model, &dir));
  return convert_model(model, dir, opts, out, report, dyn);
}

Status export_qdq_onnx(const std::string& onnx_path, const ConvertOptions& opts, const Graph& quantized,
                       const std::string& out_path) {
  onnx::ModelProto model;
  std::string dir;
  ORKNN_RETURN_IF_ERROR(read_onnx_file(onnx_path, &model, &dir));
  ORKNN_RETURN_IF_ERROR(onnx_import::cut_subgraph(&model, opts.subgraph_inputs, opts.subgraph_outputs));
  if (opts.batch_size > 0) ORKNN_RETURN_IF_ERROR(onnx_import::set_batch_size(&model, opts.batch_size));
  ORKNN_RETURN_IF_ERROR(onnx_import::export_qdq(quantized, &model));
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return ORKNN_ERR(kFail, "--export-qdq: the QDQ model cannot be serialised (larger than protobuf's 2 GiB?)");
  std::ofstream f(out_path, std::ios::binary | std::ios::trunc);
  if (!f || !f.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !f.flush())
    return ORKNN_ERR(kInvalidParam, "--export-qdq: cannot write '%s'", out_path.c_str());
  return Status::Ok();
}

Status convert_onnx(const std::string& onnx_path, const ConvertOptions& opts, Graph* out) {
  return convert_onnx(onnx_path, opts, out, nullptr);
}

Status requantize_onnx(const std::string& onnx_path, const ConvertOptions& opts, const Graph& quantized, Graph* out) {
  NamedCalibration given;
  auto per_tensor = [](const Tensor& t) { return t.dtype == DType::kI8 && t.quant.scale.size() == 1; };
  for (const Tensor& t : quantized.tensors) {
    if (t.quant.empty()) continue;
    const auto ends = [&](const std::string& suffix) {
      return t.name.size() > suffix.size() && t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    const std::string base = t.name.substr(0, t.name.rfind('_'));
    if (t.is_const()) {
      if ((ends("_int8") && t.dtype == DType::kI8) || (ends("_int32") && t.dtype == DType::kI32)) {
        QuantizedConstant c;
        c.dtype = t.dtype;
        c.bytes.assign(t.const_ptr<uint8_t>(), t.const_ptr<uint8_t>() + t.nbytes());
        c.params = t.quant;
        given.constants.emplace(base, std::move(c));
      }
    } else if (per_tensor(t)) {
      given.activation_params[t.name] = t.quant;                             // an int8 tensor
      if (ends("_quant")) given.activation_params.emplace(base, t.quant);  // a float one quantized for int8 readers
    }
  }
  ConvertOptions o = opts;
  // Nodes float in `quantized` stay float: their tensors may carry parameters for their int8 neighbours.
  std::set<std::string> floats(o.quant.float_layers.begin(), o.quant.float_layers.end());
  for (const Node& n : quantized.nodes)
    if (n.op != OpId::QuantizeLinear && n.op != OpId::DequantizeLinear && !is_quantized_node(quantized, n) &&
        floats.insert(n.name).second)
      o.quant.float_layers.push_back(n.name);
  o.quant.enabled = true;
  o.quant.dataset = "-";  // never read: the parameters are given
  o.quant.bias_correction = o.quant.adaptive_rounding = false;  // the constants are given as they are
  onnx::ModelProto model;
  std::string dir;
  ORKNN_RETURN_IF_ERROR(read_onnx_file(onnx_path, &model, &dir));
  ORKNN_RETURN_IF_ERROR(onnx_import::cut_subgraph(&model, o.subgraph_inputs, o.subgraph_outputs));
  o.subgraph_inputs.clear();
  o.subgraph_outputs.clear();
  return convert_static(model, dir, o, out, nullptr, &given, nullptr);
}

}  // namespace orknn
