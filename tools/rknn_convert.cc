// rknn_convert: ONNX -> .rknn (ours). A thin command line over converter/convert.h; see
// docs/convert.md for the options, the YAML config and what the conversion does.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "model/model_io.h"
#include "runtime/custom_ops.h"
#include "runtime/platform.h"
#include "rknn_custom_op.h"

// The callbacks of --custom-op-lib plugins call rknn_custom_op_get_op_attr during calibration. This
// executable exports it (CMakeLists.txt) so that those calls reach the op contexts calibration made
// in this process, also from a plugin linked against librknnrt.so, whose own copy knows none of them.
extern "C" RKNN_API void rknn_custom_op_get_op_attr(rknn_custom_op_context* op_ctx, const char* attr_name,
                                                    rknn_custom_op_attr* op_attr) {
  orknn::custom_op_get_attr(op_ctx, attr_name, op_attr);
}

namespace {

using orknn::Status;

// "NAME=rest" -> {NAME, rest}; text without '=' -> {"", text}.
std::pair<std::string, std::string> split_named(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos) return {"", text};
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::string floats_str(const std::vector<float>& v) {
  std::string r = "[";
  for (size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + orknn::strfmt("%g", static_cast<double>(v[i]));
  return r + "]";
}

int fail(const Status& st) {
  std::fprintf(stderr, "rknn_convert: error: %s\n", st.message().c_str());
  return 1;
}

void print_summary(const std::string& model_path, const std::string& out_path, const orknn::Graph& g,
                   const orknn::ConvertReport& rep, size_t file_bytes) {
  std::printf("%s (ONNX opset %d%s%s) -> %s\n", model_path.c_str(), rep.opset, rep.producer.empty() ? "" : ", ",
              rep.producer.c_str(), out_path.c_str());
  std::printf("target %s, %s%s, %zu bytes\n", g.platform.c_str(),
              rep.layer_precision.empty() ? "" : "int8 quantized, float parts ",
              g.precision == orknn::FloatPrecision::kFp16 ? "float16 (fp32 compute, fp16 storage)" : "float32",
              file_bytes);
  std::printf("inputs:\n");
  for (const auto& in : g.inputs) {
    const orknn::Tensor& t = g.tensor(in.tensor);
    std::printf("  %-24s %-8s %s", t.name.c_str(), orknn::dtype_name(t.dtype), orknn::shape_str(t.shape).c_str());
    if (!in.mean.empty()) std::printf("  mean %s std %s", floats_str(in.mean).c_str(), floats_str(in.std).c_str());
    std::printf("\n");
  }
  std::printf("outputs:\n");
  for (int id : g.outputs) {
    const orknn::Tensor& t = g.tensor(id);
    std::printf("  %-24s %-8s %s%s\n", t.name.c_str(), orknn::dtype_name(t.dtype), orknn::shape_str(t.shape).c_str(),
                t.is_const() ? "  (constant)" : "");
  }
  std::map<std::string, int> per_op;
  for (const auto& n : g.nodes) ++per_op[orknn::op_name(n.op)];
  std::vector<std::pair<std::string, int>> ops(per_op.begin(), per_op.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("nodes: %zu (ONNX: %d, folded at import: %d):", g.nodes.size(), rep.onnx_nodes,
              rep.nodes_folded_at_import);
  for (const auto& kv : ops) std::printf(" %s %d", kv.first.c_str(), kv.second);
  std::printf("\npasses:");
  for (const auto& p : rep.passes) std::printf(" %s %d", p.name.c_str(), p.changes);
  size_t const_bytes = 0, n_const = 0;
  for (const auto& t : g.tensors)
    if (t.is_const()) { const_bytes += t.data.size; ++n_const; }
  std::printf("\nconstants: %zu tensors, %.2f MB\n", n_const, static_cast<double>(const_bytes) / (1024.0 * 1024.0));
}

// Quantized conversions: the final precision of every node and a one-line summary.
void print_precision_table(const orknn::Graph& g, const orknn::ConvertReport& rep) {
  if (rep.layer_precision.empty()) return;
  size_t wn = 4, wo = 2;
  for (const auto& r : rep.layer_precision) {
    wn = std::max(wn, r.node.size());
    wo = std::max(wo, r.op.size());
  }
  wn = std::min<size_t>(wn, 48);
  std::printf("per-layer precision:\n  %-*s  %-*s  %-9s %s\n", static_cast<int>(wn), "node", static_cast<int>(wo), "op",
              "precision", "why");
  int n_int8 = 0, n_float = 0;
  for (const auto& r : rep.layer_precision) {
    std::printf("  %-*s  %-*s  %-9s %s\n", static_cast<int>(wn), r.node.c_str(), static_cast<int>(wo), r.op.c_str(),
                r.precision.c_str(), r.why.c_str());
    (r.precision == "int8" ? n_int8 : n_float)++;
  }
  int n_edges = 0;
  for (const auto& n : g.nodes)
    n_edges += n.op == orknn::OpId::QuantizeLinear || n.op == orknn::OpId::DequantizeLinear;
  std::printf("quantized: %d int8 / %d float nodes, %d quantize/dequantize nodes at int8/float edges", n_int8, n_float,
              n_edges);
  if (rep.calibration_samples > 0) std::printf(", calibrated on %d samples", rep.calibration_samples);
  else std::printf(", parameters from the model (QuantizeLinear/DequantizeLinear)");
  std::printf("\n");
  if (!g.conversion_settings.empty()) std::printf("%s\n", g.conversion_settings.c_str());
}

// Dynamic-shape models: the input shapes of every set.
void print_shape_sets(const orknn::Graph& g, const orknn::DynamicShapes& dyn) {
  if (dyn.empty()) return;
  std::printf("dynamic shapes: %zu sets\n", dyn.sets.size());
  for (size_t s = 0; s < dyn.sets.size(); ++s) {
    std::printf("  set %zu:", s);
    for (size_t i = 0; i < g.inputs.size(); ++i)
      std::printf(" %s=%s", g.tensor(g.inputs[i].tensor).name.c_str(),
                  orknn::shape_dims_str(dyn.sets[s].input_shapes[i]).c_str());
    size_t n_out = g.outputs.size();
    std::printf("  ->");
    for (size_t o = 0; o < n_out; ++o)
      std::printf(" %s", orknn::shape_dims_str(dyn.sets[s].tensor_shapes[static_cast<size_t>(g.outputs[o])]).c_str());
    std::printf("\n");
  }
}

// "a,b" "c" -> {a, b, c}
std::vector<std::string> split_names(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const auto& a : args) {
    std::string cur;
    for (char c : a + ",") {
      if (c != ',') { cur += c; continue; }
      size_t b = cur.find_first_not_of(" \t"), e = cur.find_last_not_of(" \t");
      if (b != std::string::npos) names.push_back(cur.substr(b, e - b + 1));
      cur.clear();
    }
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rknn_convert: converts an ONNX model into an OpenRKNN .rknn model"};
  std::string model_path, out_path, platform, custom_string, config_path, precision;
  std::vector<std::string> shape_args, mean_args, std_args, float_layer_args, dynamic_args, input_args, output_args;
  std::vector<std::string> custom_op_args, custom_op_libs;
  std::string dataset, algorithm, method, export_qdq_path;
  bool no_passes = false, quiet = false, quantize = false, bias_correction = false, kl_keep_tails = false,
       adaptive_rounding = false, clip_saturated = false;
  std::string auto_hybrid_arg;
  int64_t batch_size = 0;

  std::string platforms;
  for (const auto& p : orknn::platform_names()) platforms += (platforms.empty() ? "" : ", ") + p;

  app.add_option("model", model_path, "ONNX model file (external data files next to it are read)")->required();
  app.add_option("-o,--output", out_path, "output .rknn file")->required();
  app.add_option("-t,--target-platform", platform, "target platform: " + platforms);
  app.add_option("--input-shape", shape_args,
                 "NAME=d0,d1,...: fixes input NAME's shape (required for dynamic dims; repeat per input)")
      ->allow_extra_args(false);
  app.add_option("--dynamic-shape", dynamic_args,
                 "[NAME=]d0,d1,..;d0,d1,..: the shapes input NAME takes, one per shape set (ONNX NCHW dims; repeat "
                 "per input, every input listing the same number of sets); makes a dynamic-shape model")
      ->allow_extra_args(false);
  app.add_option("--inputs", input_args,
                 "NAME,...: tensors that become the model's inputs, in this order (a subgraph cut; the nodes before "
                 "them are dropped)")
      ->allow_extra_args(false);
  app.add_option("--outputs", output_args,
                 "NAME,...: tensors that become the model's outputs (a subgraph cut; nodes they do not need are "
                 "dropped)")
      ->allow_extra_args(false);
  app.add_option("--batch-size", batch_size,
                 "N: every input's batch dim becomes N (1 or dynamic in the model; --input-shape sizes with batch 1 "
                 "too), the vendor's rknn_batch_size")
      ->check(CLI::PositiveNumber);
  app.add_option("--mean", mean_args,
                 "[NAME=]v1,v2,v3: mean per channel, subtracted by the runtime from UINT8 inputs (without NAME: "
                 "every input; repeat per input)")
      ->allow_extra_args(false);
  app.add_option("--std", std_args, "[NAME=]v1,v2,v3: std per channel, divides after the mean (like --mean)")
      ->allow_extra_args(false);
  app.add_option("--custom-string", custom_string, "text stored in the model (RKNN_QUERY_CUSTOM_STRING)");
  app.add_option("--config", config_path,
                 "vendor-style YAML conversion config (mean_values, std_values, target_platform, custom_string, "
                 "input_size_list, float_dtype, ...); command-line options win");
  app.add_option("--float-precision", precision,
                 "fp16 (default: float tensors rounded to fp16 as on the NPU) or fp32 (pure fp32)")
      ->check(CLI::IsMember({"fp16", "fp32"}));
  app.add_flag("--quantize", quantize,
               "INT8 quantization (calibrated on --dataset); models holding QuantizeLinear/DequantizeLinear are "
               "quantized with their own parameters without this flag");
  app.add_option("--export-qdq", export_qdq_path,
                 "OUT.onnx: also write the INT8 model as a QDQ ONNX model (our calibration as QuantizeLinear/"
                 "DequantizeLinear pairs, per-channel int8 weights) that other toolkits build without calibrating; "
                 "needs --quantize; see docs/convert.md");
  app.add_option("--dataset", dataset,
                 "calibration list: one sample per line (an image or .npy file per model input, paths relative to "
                 "the list)");
  app.add_option("--algorithm", algorithm, "calibration: normal (min/max, default), kl, mmse")
      ->check(CLI::IsMember({"normal", "kl", "kl_divergence", "mmse"}));
  app.add_option("--method", method, "weight scales: channel (per output channel, default) or layer (per tensor)")
      ->check(CLI::IsMember({"channel", "layer"}));
  CLI::Option* bias_correction_opt = app.add_flag(
      "--bias-correction,!--no-bias-correction", bias_correction,
      "after calibration, move each INT8 Conv/Gemm bias so that its output's mean per channel on the data set is "
      "the float model's (default off; docs/convert.md)");
  CLI::Option* kl_keep_tails_opt = app.add_flag(
      "--kl-keep-tails,!--no-kl-keep-tails", kl_keep_tails,
      "kl calibration: never clip more than 1e-4 of a tensor's energy, except isolated outliers (default off; "
      "docs/convert.md)");
  CLI::Option* adaptive_rounding_opt = app.add_flag(
      "--adaptive-rounding,!--no-adaptive-rounding", adaptive_rounding,
      "after calibration, round each INT8 Conv/Gemm weight up or down, whichever lowers the layer's output error "
      "on the data set (default off; docs/convert.md)");
  CLI::Option* clip_saturated_opt = app.add_flag(
      "--clip-saturated,!--no-clip-saturated", clip_saturated,
      "after calibration, end the range of a tensor only HardSwish/HardSigmoid/Relu read where they saturate "
      "(default off; docs/convert.md)");
  app.add_option("--float-layers", float_layer_args, "NAME,...: nodes kept in float in a quantized model")
      ->allow_extra_args(false);
  app.add_option("--custom-op", custom_op_args,
                 "TYPE,...: ONNX op types that are custom operators of the application (rknn_register_custom_ops), "
                 "in any domain, the default one included; repeatable")
      ->allow_extra_args(false);
  app.add_option("--custom-op-lib", custom_op_libs,
                 "PATH: plugin library exporting get_rknn_custom_op (an rknn_custom_op, the runtime's callbacks), run "
                 "by INT8 calibration so that the nodes after that custom operator are quantized; repeatable")
      ->allow_extra_args(false);
  CLI::Option* auto_hybrid_opt =
      app.add_option("--auto-hybrid", auto_hybrid_arg,
                     "[=COS]: keep the fewest INT8 layers float (the costliest first, by the accuracy analysis) "
                     "until every output reaches cosine COS (default 0.98) against fp32 on the first data set samples")
          ->expected(0, 1);
  app.add_flag("--no-passes", no_passes, "skip the fusion/cleanup passes (constant folding still runs)");
  app.add_flag("-q,--quiet", quiet, "print nothing on success");
  CLI11_PARSE(app, argc, argv);

  orknn::ConvertOptions opts;
  // Command-line values go in first; load_config_yaml fills only what they left unset.
  for (const auto& a : shape_args) {
    auto [name, dims] = split_named(a);
    orknn::Shape shape;
    Status st = orknn::parse_dims(dims, &shape);
    if (!st.ok()) return fail(Status(st.code(), "--input-shape " + a + ": " + st.message()));
    if (opts.input_shapes.count(name)) return fail(ORKNN_ERR(kInvalidParam, "--input-shape given twice for '%s'", name.c_str()));
    opts.input_shapes[name] = shape;
  }
  for (const auto& a : dynamic_args) {
    auto [name, text] = split_named(a);
    std::vector<orknn::Shape> shapes;
    size_t start = 0;
    while (true) {
      const size_t semi = text.find(';', start);
      const std::string one = text.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
      orknn::Shape shape;
      Status st = orknn::parse_dims(one, &shape);
      if (!st.ok()) return fail(Status(st.code(), "--dynamic-shape " + a + ": " + st.message()));
      shapes.push_back(shape);
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
    if (opts.dynamic_shapes.count(name))
      return fail(ORKNN_ERR(kInvalidParam, "--dynamic-shape given twice for %s",
                            name.empty() ? "the only input" : ("'" + name + "'").c_str()));
    opts.dynamic_shapes[name] = shapes;
  }
  for (auto* pair : {&mean_args, &std_args}) {
    auto& dst = pair == &mean_args ? opts.mean_values : opts.std_values;
    const char* flag = pair == &mean_args ? "--mean" : "--std";
    for (const auto& a : *pair) {
      auto [name, vals] = split_named(a);
      std::vector<float> v;
      Status st = orknn::parse_floats(vals, &v);
      if (!st.ok()) return fail(Status(st.code(), std::string(flag) + " " + a + ": " + st.message()));
      if (dst.count(name))
        return fail(ORKNN_ERR(kInvalidParam, "%s given twice for %s", flag,
                              name.empty() ? "all inputs" : ("'" + name + "'").c_str()));
      dst[name] = v;
    }
  }
  opts.custom_string = custom_string;
  opts.subgraph_inputs = split_names(input_args);
  opts.subgraph_outputs = split_names(output_args);
  opts.batch_size = batch_size;
  // Quantization: --quantize, --dataset and --float-layers go in before the config (which fills
  // what they left unset); --algorithm, --method, --[no-]bias-correction, --[no-]kl-keep-tails,
  // --[no-]adaptive-rounding and --[no-]clip-saturated
  // replace the config's values after it.
  opts.quant.enabled = quantize;
  opts.quant.dataset = dataset;
  opts.quant.float_layers = split_names(float_layer_args);
  if (auto_hybrid_opt->count() > 0) {
    opts.quant.auto_hybrid_cos = 0.98;  // the vendor's auto_hybrid_cos_thresh default
    if (!auto_hybrid_arg.empty()) {
      std::vector<float> v;
      Status st = orknn::parse_floats(auto_hybrid_arg, &v);
      if (!st.ok() || v.size() != 1 || !(v[0] > 0.f && v[0] <= 1.f))
        return fail(ORKNN_ERR(kInvalidParam, "--auto-hybrid=%s: give a cosine in (0, 1], e.g. --auto-hybrid=0.99",
                              auto_hybrid_arg.c_str()));
      opts.quant.auto_hybrid_cos = v[0];
    }
  }
  opts.custom_op_types = split_names(custom_op_args);
  opts.quant.custom_op_libs = custom_op_libs;
  bool have_platform = !platform.empty();
  if (!config_path.empty()) {
    std::string before = opts.platform;
    opts.platform.clear();
    Status st = orknn::load_config_yaml(config_path, &opts);
    if (!st.ok()) return fail(st);
    if (!opts.platform.empty()) have_platform = true;
    else opts.platform = before;
  }
  if (!platform.empty()) opts.platform = platform;
  if (!algorithm.empty()) opts.quant.algorithm = algorithm == "kl_divergence" ? "kl" : algorithm;
  if (!method.empty()) opts.quant.method = method;
  if (bias_correction_opt->count() > 0) opts.quant.bias_correction = bias_correction;
  if (kl_keep_tails_opt->count() > 0) opts.quant.kl_keep_tails = kl_keep_tails;
  if (adaptive_rounding_opt->count() > 0) opts.quant.adaptive_rounding = adaptive_rounding;
  if (clip_saturated_opt->count() > 0) opts.quant.clip_saturated = clip_saturated;
  if (!have_platform)
    return fail(ORKNN_ERR(kInvalidParam, "no target platform: give -t PLATFORM (one of %s)", platforms.c_str()));
  if (!orknn::find_platform(opts.platform))
    return fail(ORKNN_ERR(kInvalidParam, "unknown target platform '%s' (supported: %s)", opts.platform.c_str(),
                          platforms.c_str()));
  if (precision == "fp32") opts.precision = orknn::FloatPrecision::kFp32;
  else if (precision == "fp16") opts.precision = orknn::FloatPrecision::kFp16;
  opts.run_passes = !no_passes;

  if (!export_qdq_path.empty() && !opts.quant.enabled)
    return fail(ORKNN_ERR(kInvalidParam, "--export-qdq writes an INT8 model: give --quantize with a --dataset (or the "
                          "config's quantized_dtype)"));

  orknn::Graph g;
  orknn::ConvertReport report;
  orknn::DynamicShapes dyn;
  Status st = orknn::convert_onnx(model_path, opts, &g, &report, &dyn);
  if (!st.ok()) return fail(st);
  st = orknn::write_model_file(g, dyn, out_path);
  if (!st.ok()) return fail(st);
  if (!export_qdq_path.empty()) {
    st = orknn::export_qdq_onnx(model_path, opts, g, export_qdq_path);
    if (!st.ok()) return fail(st);
  }
  std::error_code ec;
  const auto file_bytes = std::filesystem::file_size(out_path, ec);
  if (!quiet) {
    print_summary(model_path, out_path, g, report, ec ? 0 : static_cast<size_t>(file_bytes));
    print_precision_table(g, report);
    print_shape_sets(g, dyn);
  }
  return 0;
}
