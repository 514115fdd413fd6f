// rknn_inspect: looks into converted models. See docs/inspect.md.
//   info MODEL.rknn                          what the model holds
//   accuracy MODEL.onnx MODEL.rknn [...]     quantization error per tensor (converter/quant/accuracy.h)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "converter/accuracy_analysis.h"
#include "converter/convert.h"
#include "kernels/kernel.h"
#include "model/model_io.h"

namespace {

using orknn::Status;
using orknn::strfmt;

int fail(const Status& st) {
  std::fprintf(stderr, "rknn_inspect: error: %s\n", st.message().c_str());
  return 1;
}

Status load_rknn(const std::string& path, orknn::Graph* g) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return ORKNN_ERR(kInvalidParam, "'%s': cannot open the file", path.c_str());
  const std::streamoff size = f.tellg();
  if (size <= 0) return ORKNN_ERR(kInvalidModel, "'%s': empty file", path.c_str());
  f.seekg(0);
  // The loader wants 64-byte aligned bytes; the graph's constants point into them.
  std::shared_ptr<uint8_t> buf(static_cast<uint8_t*>(::operator new[](static_cast<size_t>(size), std::align_val_t(64))),
                               [](uint8_t* p) { ::operator delete[](p, std::align_val_t(64)); });
  if (!f.read(reinterpret_cast<char*>(buf.get()), size))
    return ORKNN_ERR(kInvalidModel, "'%s': cannot read the file", path.c_str());
  Status st = orknn::load_model(buf, buf.get(), static_cast<size_t>(size), g);
  if (!st.ok()) return Status(st.code(), "'" + path + "': " + st.message());
  return Status::Ok();
}

std::string floats_str(const std::vector<float>& v) {
  std::string r = "[";
  for (size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + strfmt("%g", static_cast<double>(v[i]));
  return r + "]";
}

std::string quant_str(const orknn::Tensor& t) {
  const orknn::QuantParams& q = t.quant;
  if (q.empty()) return "";
  if (q.scale.size() == 1)
    return strfmt("scale %g zp %d", static_cast<double>(q.scale[0]), q.zero_point.empty() ? 0 : q.zero_point[0]);
  auto mm = std::minmax_element(q.scale.begin(), q.scale.end());
  return strfmt("%zu scales along axis %d in [%g, %g]", q.scale.size(), q.axis, static_cast<double>(*mm.first),
                static_cast<double>(*mm.second));
}

bool is_qdq(orknn::OpId op) { return op == orknn::OpId::QuantizeLinear || op == orknn::OpId::DequantizeLinear; }

bool graph_is_quantized(const orknn::Graph& g) {
  for (const auto& t : g.tensors)
    if (!t.quant.empty()) return true;
  return false;
}

// ---- info ----

// Prints a line without the padding its last column left.
void print_line(std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::printf("%s\n", line.c_str());
}

int run_info(const std::string& path) {
  orknn::Graph g;
  Status st = load_rknn(path, &g);
  if (!st.ok()) return fail(st);
  const bool quantized = graph_is_quantized(g);
  const char* floats = g.precision == orknn::FloatPrecision::kFp16 ? "float16" : "float32";
  std::printf("model: %s\n", path.c_str());
  std::printf("platform: %s\n", g.platform.c_str());
  if (quantized) std::printf("precision: int8 quantized (float parts in %s)\n", floats);
  else std::printf("precision: %s\n", floats);
  if (!g.custom_string.empty()) std::printf("custom string: %s\n", g.custom_string.c_str());
  if (!g.conversion_settings.empty()) std::printf("conversion: %s\n", g.conversion_settings.c_str());
  std::printf("inputs:\n");
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const auto& in = g.inputs[i];
    const orknn::Tensor& t = g.tensor(in.tensor);
    std::string line = strfmt("  %zu %-24s %-7s %-18s", i, t.name.c_str(), orknn::dtype_name(t.dtype),
                              orknn::shape_str(t.shape).c_str());
    if (!t.quant.empty()) line += " " + quant_str(t);
    if (!in.mean.empty() || !in.std.empty()) line += " mean " + floats_str(in.mean) + " std " + floats_str(in.std);
    print_line(line);
  }
  std::printf("outputs:\n");
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const orknn::Tensor& t = g.tensor(g.outputs[i]);
    std::string line = strfmt("  %zu %-24s %-7s %-18s", i, t.name.c_str(), orknn::dtype_name(t.dtype),
                              orknn::shape_str(t.shape).c_str());
    if (!t.quant.empty()) line += " " + quant_str(t);
    if (t.is_const()) line += " (constant)";
    print_line(line);
  }
  struct Count {
    int total = 0, int8 = 0;
  };
  std::map<std::string, Count> per_op;
  int n_int8 = 0, n_float = 0, n_qdq = 0;
  for (const auto& n : g.nodes) {
    const bool q = orknn::is_quantized_node(g, n);
    Count& c = per_op[orknn::op_name(n.op)];
    ++c.total;
    if (is_qdq(n.op)) ++n_qdq;
    else if (q) ++n_int8;
    else ++n_float;
    if (q && !is_qdq(n.op)) ++c.int8;
  }
  std::printf("nodes: %zu (int8 %d, float %d, quantize/dequantize %d)\n", g.nodes.size(), n_int8, n_float, n_qdq);
  std::vector<std::pair<std::string, Count>> ops(per_op.begin(), per_op.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  size_t w = 2;
  for (const auto& kv : ops) w = std::max(w, kv.first.size());
  std::printf("  %-*s %6s %6s %6s\n", static_cast<int>(w), "op", "count", "int8", "float");
  for (const auto& kv : ops) {
    const bool qdq = kv.first == "QuantizeLinear" || kv.first == "DequantizeLinear";
    std::printf("  %-*s %6d %6s %6s\n", static_cast<int>(w), kv.first.c_str(), kv.second.total,
                qdq ? "-" : std::to_string(kv.second.int8).c_str(),
                qdq ? "-" : std::to_string(kv.second.total - kv.second.int8).c_str());
  }
  // Custom nodes run in the application's callbacks (docs/custom_ops.md): list the types to register.
  bool custom_header = false;
  for (const auto& n : g.nodes) {
    if (n.op != orknn::OpId::Custom) continue;
    if (!custom_header) std::printf("custom operators (register with rknn_register_custom_ops):\n");
    custom_header = true;
    const std::string domain = n.attrs.get_string("custom_domain", "");
    print_line(strfmt("  %-24s type %s%s%s", n.name.c_str(), n.attrs.get_string("custom_type", "?").c_str(),
                      domain.empty() ? "" : " domain ", domain.c_str()));
  }
  size_t const_bytes = 0, n_const = 0;
  for (const auto& t : g.tensors)
    if (t.is_const()) {
      const_bytes += t.data.size;
      ++n_const;
    }
  std::printf("constants: %zu tensors, %zu bytes\n", n_const, const_bytes);
  return 0;
}

// ---- accuracy ----

std::string fit(const std::string& s, size_t w) {
  if (s.size() <= w) return s;
  return ".." + s.substr(s.size() - (w - 2));  // the end of a long name is what tells nodes apart
}

std::string num(double v, const char* fmt) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return strfmt(fmt, v);
}

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_-./=,:+@%", c))) plain = false;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string dims_str(const orknn::Shape& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r;
}

// The rknn_convert command line that converts again with `nodes` kept in float.
std::string reconvert_command(const std::string& onnx_path, const std::string& rknn_path, const orknn::Graph& qg,
                              const std::vector<std::string>& nodes) {
  std::string cmd = "rknn_convert " + shell_quote(onnx_path) + " -t " + shell_quote(qg.platform);
  for (const auto& in : qg.inputs) {
    const orknn::Tensor& t = qg.tensor(in.tensor);
    cmd += " --input-shape " + shell_quote(t.name + "=" + dims_str(t.shape));
    bool default_norm = true;
    for (float m : in.mean) default_norm = default_norm && m == 0.f;
    for (float s : in.std) default_norm = default_norm && s == 1.f;
    if (!default_norm) {
      std::string mean, sd;
      for (size_t i = 0; i < in.mean.size(); ++i) mean += (i ? "," : "") + strfmt("%g", static_cast<double>(in.mean[i]));
      for (size_t i = 0; i < in.std.size(); ++i) sd += (i ? "," : "") + strfmt("%g", static_cast<double>(in.std[i]));
      if (!mean.empty()) cmd += " --mean " + shell_quote(t.name + "=" + mean);
      if (!sd.empty()) cmd += " --std " + shell_quote(t.name + "=" + sd);
    }
  }
  if (qg.precision == orknn::FloatPrecision::kFp32) cmd += " --float-precision fp32";
  std::string names;
  for (size_t i = 0; i < nodes.size(); ++i) names += (i ? "," : "") + nodes[i];
  std::string out = std::filesystem::path(rknn_path).replace_extension().string() + "_hybrid.rknn";
  cmd += " --quantize --dataset DATASET.txt --float-layers " + shell_quote(names) + " -o " + shell_quote(out);
  return cmd;
}

struct AccuracyArgs {
  std::string onnx_path, rknn_path, json_path, trial_dataset;
  std::vector<std::string> input_files;
  double threshold_db = 30.0;
  size_t top = 3;
  size_t tries = 8;
  unsigned seed = 0;
  bool ref_kernels = false;
};

// The float trials (--try): the candidates by measured gain, and the command for the best ones.
void print_trials(const AccuracyArgs& a, const orknn::Graph& qg, const orknn::FloatTrials& t) {
  const std::string on = t.samples ? strfmt("these inputs and the %zu samples of %s", t.samples, a.trial_dataset.c_str())
                                   : std::string("these inputs");
  std::printf("the %zu int8 layers that lose the most on their own (lowest single SQNR), each tried in float in the "
              "model quantized again with the .rknn's parameters; outputs against fp32 on %s (least over the "
              "outputs), the .rknn: cosine %s, SQNR %s dB\n",
              t.trials.size(), on.c_str(), num(t.quantized.cosine, "%.6f").c_str(),
              num(t.quantized.sqnr_db, "%.2f").c_str());
  if (!t.reproduced)
    std::printf("note: quantized again with its own parameters, the model does not give the .rknn's outputs bit for "
                "bit (cosine %s, SQNR %s dB); the gains are measured from that model\n",
                num(t.requantized.cosine, "%.6f").c_str(), num(t.requantized.sqnr_db, "%.2f").c_str());
  std::printf("  %4s %6s  %13s %10s %14s %14s  %s\n", "gain", "single", "output cosine", "gain", "output SQNR dB",
              "single SQNR dB", "nodes (tensor)");
  for (size_t i = 0; i < t.trials.size(); ++i) {
    const orknn::FloatTrial& f = t.trials[i];
    std::string nodes;
    for (const auto& n : f.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
    print_line(strfmt("  %4zu %6zu  %13s %10s %14s %14s  %s (tensor '%s')", i + 1, f.single_rank,
                      num(f.outputs.cosine, "%.6f").c_str(), num(f.cosine_gain, "%+.6f").c_str(),
                      num(f.outputs.sqnr_db, "%.2f").c_str(), num(f.single_sqnr_db, "%.2f").c_str(), nodes.c_str(),
                      f.tensor.c_str()));
  }
  if (t.keep.empty()) {
    std::printf("none of them raises the outputs' cosine on %s: nothing to keep in float\n", on.c_str());
    return;
  }
  std::printf("chosen in gain order while each one raised the outputs' cosine further, %zu of them (at most --top) "
              "together in float: output cosine %s, SQNR %s dB; to keep them in float, convert again with "
              "(DATASET.txt: your calibration list; add the --algorithm, --method and --float-layers you used "
              "before):\n  %s\n",
              t.kept_trials, num(t.kept.cosine, "%.6f").c_str(), num(t.kept.sqnr_db, "%.2f").c_str(),
              reconvert_command(a.onnx_path, a.rknn_path, qg, t.keep).c_str());
}

int run_accuracy(const AccuracyArgs& a) {
  orknn::Graph qg;
  Status st = load_rknn(a.rknn_path, &qg);
  if (!st.ok()) return fail(st);
  orknn::AccuracyAnalysisRequest req;
  req.onnx_path = a.onnx_path;
  req.input_files = a.input_files;
  req.seed = a.seed;
  req.allow_fast_kernels = !a.ref_kernels;
  req.try_count = a.top == 0 ? 0 : a.tries;
  req.keep_count = a.top;
  req.trial_dataset = a.trial_dataset;
  orknn::AccuracyReport rep;
  orknn::FloatTrials trials;
  std::string inputs_desc;
  st = orknn::analyze_accuracy(req, qg, &rep, &inputs_desc, &trials);
  if (!st.ok()) return fail(Status(st.code(), "'" + a.rknn_path + "': " + st.message()));

  std::printf("float: %s (fp32)   quantized: %s\n", a.onnx_path.c_str(), a.rknn_path.c_str());
  if (a.input_files.empty())
    std::printf("inputs: no --input given: %s (results on real data differ; give --input FILE per input)\n",
                inputs_desc.c_str());
  else
    std::printf("inputs: %s\n", inputs_desc.c_str());
  if (!graph_is_quantized(qg)) std::printf("note: the .rknn model is not quantized; its float computation is compared\n");

  // Table.
  size_t wn = 4, wo = 2, wt = 6;
  for (const auto& r : rep.rows) {
    wn = std::max(wn, r.node.size());
    wo = std::max(wo, r.op.size());
    wt = std::max(wt, r.tensor.size());
  }
  wn = std::min<size_t>(wn, 32);
  wo = std::min<size_t>(wo, 18);
  wt = std::min<size_t>(wt, 32);
  const int n_w = static_cast<int>(wn), o_w = static_cast<int>(wo), t_w = static_cast<int>(wt);
  std::printf("\n");
  print_line(strfmt("%4s  %-*s  %-*s  %-5s  %-*s | %-40s | %-40s", "#", n_w, "node", o_w, "op", "prec", t_w, "tensor",
                    "entire (from the inputs)", "single (this layer alone)"));
  std::printf("%4s  %-*s  %-*s  %-5s  %-*s | %9s %10s %8s %10s | %9s %10s %8s %10s\n", "", n_w, "", o_w, "", "", t_w, "",
              "cosine", "euclidean", "SQNR dB", "max abs", "cosine", "euclidean", "SQNR dB", "max abs");
  for (size_t i = 0; i < rep.rows.size(); ++i) {
    const auto& r = rep.rows[i];
    const bool below = std::isnan(r.entire.sqnr_db) || r.entire.sqnr_db < a.threshold_db;
    std::printf("%4zu  %-*s  %-*s  %-5s  %-*s | %9s %10s %8s %10s | %9s %10s %8s %10s%s\n", i, n_w,
                fit(r.node, wn).c_str(), o_w, fit(r.op, wo).c_str(), r.precision.c_str(), t_w, fit(r.tensor, wt).c_str(),
                num(r.entire.cosine, "%.6f").c_str(), num(r.entire.euclidean, "%.4g").c_str(),
                num(r.entire.sqnr_db, "%.2f").c_str(), num(r.entire.max_abs, "%.4g").c_str(),
                num(r.single.cosine, "%.6f").c_str(), num(r.single.euclidean, "%.4g").c_str(),
                num(r.single.sqnr_db, "%.2f").c_str(), num(r.single.max_abs, "%.4g").c_str(), below ? "  <" : "");
  }
  for (const auto& n : rep.notes) std::printf("note: %s\n", n.c_str());

  // Summary.
  std::printf("\n");
  const orknn::AccuracyRow* first = rep.first_below(a.threshold_db);
  if (first) {
    if (first->node.empty())
      std::printf("first below %g dB (entire): graph input '%s' (%s): %s dB\n", a.threshold_db, first->tensor.c_str(),
                  first->precision.c_str(), num(first->entire.sqnr_db, "%.2f").c_str());
    else
      std::printf("first below %g dB (entire): node '%s' (%s, %s), tensor '%s': %s dB\n", a.threshold_db,
                  first->node.c_str(), first->op.c_str(), first->precision.c_str(), first->tensor.c_str(),
                  num(first->entire.sqnr_db, "%.2f").c_str());
  } else {
    std::printf("every compared tensor is at or above %g dB (entire)\n", a.threshold_db);
  }
  const auto sug = rep.suggestions(a.top);
  if (a.top == 0) {
    // --top 0: no suggestions wanted.
  } else if (sug.empty()) {
    std::printf("no int8 layer loses accuracy on its own on these inputs: nothing to keep in float\n");
  } else if (req.try_count > 0 && trials.error.empty()) {
    print_trials(a, qg, trials);
  } else {
    if (req.try_count > 0) std::printf("note: the float trials (--try) failed: %s\n", trials.error.c_str());
    std::printf("int8 layers that lose the most on their own (lowest single SQNR):\n");
    std::vector<std::string> names;
    for (size_t i = 0; i < sug.size(); ++i) {
      std::string nodes;
      for (const auto& n : sug[i].nodes) {
        nodes += (nodes.empty() ? "" : ", ") + n;
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
      }
      std::printf("  %zu. %s (tensor '%s'): single SQNR %s dB\n", i + 1, nodes.c_str(), sug[i].tensor.c_str(),
                  num(sug[i].single_sqnr_db, "%.2f").c_str());
    }
    std::printf("to keep them in float, convert again with (DATASET.txt: your calibration list; add the --algorithm, "
                "--method and --float-layers you used before):\n  %s\n",
                reconvert_command(a.onnx_path, a.rknn_path, qg, names).c_str());
  }

  if (!a.json_path.empty()) {
    std::string members;
    if (req.try_count > 0 && (!trials.trials.empty() || !trials.error.empty()))
      members = "  \"float_trials\": " + orknn::float_trials_json(trials) + ",\n  \"float_trials_command\": " +
                orknn::json_quote(trials.keep.empty() ? ""
                                                      : reconvert_command(a.onnx_path, a.rknn_path, qg, trials.keep));
    const std::string json = orknn::accuracy_report_json(
        rep, a.threshold_db, a.top,
        {{"float_model", a.onnx_path}, {"quantized_model", a.rknn_path}, {"inputs", inputs_desc}}, members);
    std::ofstream f(a.json_path, std::ios::binary);
    if (!f || !(f << json) || !f.flush())
      return fail(ORKNN_ERR(kInvalidParam, "--json '%s': cannot write the file", a.json_path.c_str()));
    std::printf("JSON report: %s\n", a.json_path.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rknn_inspect: looks into OpenRKNN .rknn models (docs/inspect.md)"};
  app.require_subcommand(1);

  std::string info_path;
  CLI::App* info = app.add_subcommand("info", "platform, precision, inputs/outputs and nodes of a .rknn model");
  info->add_option("model", info_path, ".rknn model")->required();

  AccuracyArgs acc;
  CLI::App* accuracy = app.add_subcommand(
      "accuracy", "per-tensor error of a quantized .rknn model against its float ONNX model (fp32)");
  accuracy->add_option("onnx", acc.onnx_path, "the float ONNX model the .rknn was converted from")->required();
  accuracy->add_option("rknn", acc.rknn_path, "the quantized .rknn model")->required();
  accuracy->add_option("--input", acc.input_files,
                       "input file (.npy or image, as in a calibration list), one per model input in order; "
                       "without it: seeded uniform [0,1) values")
      ->allow_extra_args(false);
  accuracy->add_option("--threshold", acc.threshold_db, "SQNR in dB below which a tensor is flagged (default 30)");
  accuracy->add_option("--json", acc.json_path, "also write the report as JSON to this file");
  accuracy->add_option("--top", acc.top, "how many layers to suggest keeping in float (default 3)");
  accuracy->add_option("--try", acc.tries,
                       "how many candidates (by single error) to try in float, ranking them by the measured gain of "
                       "the outputs' cosine (default 8; 0: rank by single error only)");
  accuracy->add_option("--try-dataset", acc.trial_dataset,
                       "a list of samples (as for calibration) on which the --try trials judge the outputs too");
  accuracy->add_option("--seed", acc.seed, "seed of the random inputs used without --input (default 0)");
  accuracy->add_flag("--ref-kernels", acc.ref_kernels, "reference kernels only (default: the runtime's fast kernels)");

  CLI11_PARSE(app, argc, argv);
  if (info->parsed()) return run_info(info_path);
  if (!std::isfinite(acc.threshold_db)) return fail(ORKNN_ERR(kInvalidParam, "--threshold must be a finite number"));
  return run_accuracy(acc);
}
