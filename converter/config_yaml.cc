// The vendor toolkit's YAML conversion config, where its keys apply to this converter.
// Accepted layouts (keys may sit at the top level, under "configs", or under "models" and its
// "configs"/"subgraphs", as rknn-toolkit2's rknn_convert writes them):
//   models:
//     platform: onnx
//     model_file_path: ./model.onnx
//     subgraphs: { inputs: [x], input_size_list: ["1,3,224,224"] }
//     quantize: false
//     configs:
//       mean_values: [[123.675, 116.28, 103.53]]   # one list per input (a flat list: all inputs)
//       std_values: [[58.395, 57.12, 57.375]]
//       target_platform: rk3588
//       custom_string: "..."
//       float_dtype: float16
//       quantized_dtype: w8a8                       # or asymmetric_quantized-8; with quantize: true (or alone): INT8
//       quantized_algorithm: normal                 # normal | kl_divergence (kl) | mmse
//       quantized_method: channel                   # channel | layer
//       bias_correction: true                       # ours: --[no-]bias-correction (docs/convert.md)
//       kl_keep_tails: true                         # ours: --[no-]kl-keep-tails (docs/convert.md)
//       adaptive_rounding: true                     # ours: --[no-]adaptive-rounding (docs/convert.md)
//       clip_saturated: true                        # ours: --[no-]clip-saturated (docs/convert.md)
//       dataset: ./dataset.txt                      # relative to this file
//       float_layers: [conv_12, head/Mul]           # hybrid quantization: nodes kept in float
//       rknn_batch_size: 4                          # every input's batch (--batch-size)
//       auto_hybrid: true                           # choose the float layers (--auto-hybrid)
//       auto_hybrid_cos_thresh: 0.98                # ... until the outputs reach this cosine
//       custom_ops: [cstSigmoid]                    # op types imported as custom operators in any domain
//       custom_op_libs: [./librkcst_sigmoid.so]     # their callbacks, for INT8 calibration; relative to this file
//       dynamic_input: [[[1,3,224,224]], [[1,3,320,320]]]  # shape sets, one shape per input each
// Keys that only matter to the vendor's compiler are accepted and ignored.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>

#include "common/log.h"
#include "converter/convert.h"
#include "runtime/platform.h"

namespace orknn {
namespace {

Status bad(const std::string& path, const std::string& key, const std::string& why) {
  return ORKNN_ERR(kInvalidParam, "%s: '%s' %s", path.c_str(), key.c_str(), why.c_str());
}

// A number list from [1, 2, 3], "1,2,3" or a single number.
Status float_list(const std::string& path, const std::string& key, const YAML::Node& n, std::vector<float>* out) {
  out->clear();
  try {
    if (n.IsScalar()) {
      Status st = parse_floats(n.as<std::string>(), out);
      if (!st.ok()) return bad(path, key, "is not a number list: " + st.message());
      return Status::Ok();
    }
    if (!n.IsSequence()) return bad(path, key, "must be a list of numbers");
    for (const auto& e : n) {
      if (!e.IsScalar()) return bad(path, key, "must be a list of numbers");
      out->push_back(e.as<float>());
    }
  } catch (const YAML::Exception& e) {
    return bad(path, key, std::string("is not a number list: ") + e.what());
  }
  return Status::Ok();
}

// mean_values/std_values: a list of lists (one per input, in input order) or one flat list for
// every input. Keys "#i" name the i-th input, "" all inputs (see ConvertOptions).
Status per_input_values(const std::string& path, const std::string& key, const YAML::Node& n,
                        const std::vector<std::string>& input_names, std::map<std::string, std::vector<float>>* out) {
  if (!out->empty()) return Status::Ok();  // set on the command line: it wins as a whole
  std::map<std::string, std::vector<float>> values;
  bool nested = n.IsSequence() && n.size() > 0 && n[0].IsSequence();
  if (nested) {
    for (size_t i = 0; i < n.size(); ++i) {
      std::vector<float> v;
      ORKNN_RETURN_IF_ERROR(float_list(path, key + "[" + std::to_string(i) + "]", n[i], &v));
      values[i < input_names.size() ? input_names[i] : "#" + std::to_string(i)] = v;
    }
  } else {
    std::vector<float> v;
    ORKNN_RETURN_IF_ERROR(float_list(path, key, n, &v));
    values[""] = v;
  }
  *out = std::move(values);
  return Status::Ok();
}

std::string scalar(const YAML::Node& n) {
  if (n.IsSequence() && n.size() > 0) return n[0].as<std::string>();  // e.g. target_platform: [rk3588]
  return n.as<std::string>();
}

bool truthy(const YAML::Node& n) {
  std::string v = n.as<std::string>();
  for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v == "true" || v == "1" || v == "yes" || v == "on";
}

// dynamic_input (the vendor toolkit's layout): a list of shape sets, each a list with one shape
// per input, e.g. [[[1,3,224,224]], [[1,3,320,320]]]. A shape is [d0, d1, ...] or "d0,d1,...".
// --dynamic-shape on the command line wins as a whole.
Status dynamic_input(const std::string& path, const YAML::Node& n, const std::vector<std::string>& input_names,
                     ConvertOptions* opts) {
  if (!opts->dynamic_shapes.empty() || n.IsNull()) return Status::Ok();
  const std::string key = "dynamic_input";
  if (!n.IsSequence() || n.size() == 0)
    return bad(path, key, "must be a list of shape sets, each a list with one shape per input ([[[1,3,224,224]], ...])");
  std::map<std::string, std::vector<Shape>> sets;
  size_t n_inputs = 0;
  for (size_t s = 0; s < n.size(); ++s) {
    const YAML::Node& set = n[s];
    const std::string where = key + "[" + std::to_string(s) + "]";
    if (!set.IsSequence() || set.size() == 0)
      return bad(path, where, "must be a list with one shape per input");
    if (s == 0) n_inputs = set.size();
    if (set.size() != n_inputs)
      return bad(path, where, "lists " + std::to_string(set.size()) + " input shapes, but dynamic_input[0] lists " +
                                  std::to_string(n_inputs) + "; every set needs one shape per input");
    for (size_t i = 0; i < set.size(); ++i) {
      Shape shape;
      if (set[i].IsSequence()) {
        for (const auto& d : set[i]) {
          if (!d.IsScalar()) return bad(path, where, "a shape must be a list of integers");
          shape.push_back(d.as<int64_t>());
        }
      } else if (set[i].IsScalar()) {
        Status st = parse_dims(set[i].as<std::string>(), &shape);
        if (!st.ok()) return bad(path, where, st.message());
      } else {
        return bad(path, where, "a shape must be a list of integers");
      }
      if (shape.empty()) return bad(path, where, "has an empty shape");
      for (int64_t d : shape)
        if (d <= 0) return bad(path, where, "dims must be positive");
      sets[i < input_names.size() ? input_names[i] : "#" + std::to_string(i)].push_back(shape);
    }
  }
  opts->dynamic_shapes = std::move(sets);
  return Status::Ok();
}

// A list of names from [a, b] or "a,b" (blanks around each name dropped).
std::vector<std::string> name_list(const YAML::Node& v) {
  std::vector<std::string> names;
  if (v.IsSequence()) {
    for (const auto& e : v) names.push_back(e.as<std::string>());
    return names;
  }
  std::string cur;
  for (char c : v.as<std::string>() + ",") {
    if (c != ',') { cur += c; continue; }
    size_t b = cur.find_first_not_of(" \t"), e = cur.find_last_not_of(" \t");
    if (b != std::string::npos) names.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  }
  return names;
}

// The settings of a parsed config. `path` names the config in messages; a relative dataset path
// is resolved against base_dir.
Status apply_config(const YAML::Node& root, const std::string& path, const std::filesystem::path& base_dir,
                    ConvertOptions* opts) {
  if (!root.IsMap()) return ORKNN_ERR(kInvalidParam, "%s: expected a mapping of conversion settings", path.c_str());

  // Gather the maps the settings may live in, most specific last.
  std::vector<YAML::Node> scopes{root};
  try {
    YAML::Node models = root["models"];
    if (models) {
      if (models.IsSequence()) {
        if (models.size() != 1)
          return ORKNN_ERR(kInvalidParam, "%s: 'models' lists %zu models; convert one model per config", path.c_str(),
                           static_cast<size_t>(models.size()));
        models = models[0];
      }
      if (!models.IsMap()) return bad(path, "models", "must be a mapping");
      scopes.push_back(models);
      if (models["subgraphs"] && models["subgraphs"].IsMap()) scopes.push_back(models["subgraphs"]);
      if (models["configs"] && models["configs"].IsMap()) scopes.push_back(models["configs"]);
    }
    if (root["configs"] && root["configs"].IsMap()) scopes.push_back(root["configs"]);
    if (root["subgraphs"] && root["subgraphs"].IsMap()) scopes.push_back(root["subgraphs"]);

    static const std::set<std::string> kIgnored = {
        "name", "model_file_path", "model_name", "quantized_hybrid_level", "quant_img_RGB2BGR", "optimization_level",
        "compress_weight", "single_core_mode", "model_pruning", "remove_weight", "remove_reshape",
        "sparse_infer", "op_target", "inputs_yuv_fmt", "configs", "subgraphs", "models",
        "RK_device_id", "pre_compile", "proposal", "proposal_dataset_size", "do_sparse_network",
        "enable_flash_attention", "verbose", "input_shapes_yml"};

    std::vector<std::string> input_names;  // subgraphs.inputs: names for per-input lists
    for (const auto& s : scopes)
      if (s["inputs"] && s["inputs"].IsSequence())
        for (const auto& e : s["inputs"]) input_names.push_back(e.as<std::string>());

    // Quantization: "quantize: true" or a quantized_dtype enables it unless "quantize: false" is
    // given; --quantize on the command line (already in opts) always wins.
    bool quantize_key = false, quantize_value = false;
    bool auto_hybrid = false;         // auto_hybrid: true (the vendor's build(auto_hybrid=True))
    double auto_hybrid_cos = 0.98;    // auto_hybrid_cos_thresh, the vendor's default
    std::string quant_dtype;
    for (const auto& s : scopes) {
      for (const auto& kv : s) {
        const std::string key = kv.first.as<std::string>();
        const YAML::Node& v = kv.second;
        if (key == "mean_values") {
          ORKNN_RETURN_IF_ERROR(per_input_values(path, key, v, input_names, &opts->mean_values));
        } else if (key == "std_values") {
          ORKNN_RETURN_IF_ERROR(per_input_values(path, key, v, input_names, &opts->std_values));
        } else if (key == "target_platform" || key == "RK_device_platform") {
          opts->platform = scalar(v);
        } else if (key == "custom_string") {
          if (opts->custom_string.empty() && !v.IsNull()) opts->custom_string = v.as<std::string>();
        } else if (key == "float_dtype") {
          std::string t = v.as<std::string>();
          if (t == "float16") opts->precision = FloatPrecision::kFp16;
          else if (t == "float32") opts->precision = FloatPrecision::kFp32;
          else return bad(path, key, "must be float16 or float32, not '" + t + "'");
        } else if (key == "input_size_list") {
          if (!v.IsSequence()) return bad(path, key, "must be a list with one shape per input");
          for (size_t i = 0; i < v.size(); ++i) {
            Shape shape;
            if (v[i].IsSequence()) {
              for (const auto& d : v[i]) shape.push_back(d.as<int64_t>());
            } else {
              Status st = parse_dims(v[i].as<std::string>(), &shape);
              if (!st.ok()) return bad(path, key, st.message());
            }
            for (int64_t d : shape)
              if (d <= 0) return bad(path, key, "dims must be positive");
            std::string k = i < input_names.size() ? input_names[i] : "#" + std::to_string(i);
            // --input-shape wins: per input, or entirely when it pinned "the only input"
            if (!opts->input_shapes.count("")) opts->input_shapes.emplace(k, shape);
          }
        } else if (key == "dynamic_input") {
          ORKNN_RETURN_IF_ERROR(dynamic_input(path, v, input_names, opts));
        } else if (key == "platform" || key == "model_platform") {
          // the source framework in the vendor's layout; a target platform name is taken as one
          std::string fw = v.as<std::string>();
          if (find_platform(fw)) opts->platform = fw;
          else if (fw != "onnx") return bad(path, key, "is '" + fw + "': rknn_convert converts ONNX models only");
        } else if (key == "quantize" || key == "do_quantization") {
          quantize_key = true;
          quantize_value = truthy(v);
        } else if (key == "quantized_dtype") {
          quant_dtype = scalar(v);
        } else if (key == "quantized_algorithm") {
          std::string a = scalar(v);
          if (a == "kl_divergence") a = "kl";
          if (a != "normal" && a != "kl" && a != "mmse")
            return bad(path, key, "must be normal, kl_divergence or mmse, not '" + a + "'");
          opts->quant.algorithm = a;
        } else if (key == "rknn_batch_size") {
          if (opts->batch_size == 0 && !v.IsNull()) {
            opts->batch_size = v.as<int64_t>();
            if (opts->batch_size < 1) return bad(path, key, "must be a positive integer");
          }
        } else if (key == "auto_hybrid") {
          auto_hybrid = truthy(v);
        } else if (key == "auto_hybrid_euc_thresh") {
          if (!v.IsNull())
            ORKNN_LOGW("%s: 'auto_hybrid_euc_thresh' ignored: auto hybrid judges the outputs by cosine only "
                       "(auto_hybrid_cos_thresh)", path.c_str());
        } else if (key == "auto_hybrid_cos_thresh") {
          if (!v.IsNull()) auto_hybrid_cos = v.as<double>();
          if (!(auto_hybrid_cos > 0.0 && auto_hybrid_cos <= 1.0)) return bad(path, key, "must be in (0, 1]");
        } else if (key == "bias_correction") {
          opts->quant.bias_correction = truthy(v);  // ours (docs/convert.md); the command line wins
        } else if (key == "kl_keep_tails") {
          opts->quant.kl_keep_tails = truthy(v);  // ours (docs/convert.md); the command line wins
        } else if (key == "adaptive_rounding") {
          opts->quant.adaptive_rounding = truthy(v);  // ours (docs/convert.md); the command line wins
        } else if (key == "clip_saturated") {
          opts->quant.clip_saturated = truthy(v);  // ours (docs/convert.md); the command line wins
        } else if (key == "quantized_method") {
          const std::string m = scalar(v);
          if (m != "channel" && m != "layer") return bad(path, key, "must be channel or layer, not '" + m + "'");
          opts->quant.method = m;
        } else if (key == "dataset") {
          if (opts->quant.dataset.empty() && !v.IsNull()) {
            std::filesystem::path d = scalar(v);
            if (d.is_relative()) d = base_dir / d;
            opts->quant.dataset = d.lexically_normal().string();
          }
        } else if (key == "float_layers") {
          if (opts->quant.float_layers.empty() && !v.IsNull()) opts->quant.float_layers = name_list(v);
        } else if (key == "custom_ops") {
          if (opts->custom_op_types.empty() && !v.IsNull()) opts->custom_op_types = name_list(v);
        } else if (key == "custom_op_libs") {
          if (opts->quant.custom_op_libs.empty() && !v.IsNull())
            for (const std::string& lib : name_list(v)) {
              std::filesystem::path p = lib;
              if (p.is_relative()) p = base_dir / p;
              opts->quant.custom_op_libs.push_back(p.lexically_normal().string());
            }
        } else if (key == "inputs" || key == "outputs") {
          // subgraphs.inputs/outputs: the tensors the converted model starts and ends at; the
          // command line's --inputs/--outputs win
          std::vector<std::string>* names = key == "inputs" ? &opts->subgraph_inputs : &opts->subgraph_outputs;
          if (names->empty() && v.IsSequence())
            for (const auto& e : v) names->push_back(e.as<std::string>());
        } else if (kIgnored.count(key)) {
          // not applicable to this converter
        } else {
          ORKNN_LOGW("%s: unknown key '%s' ignored", path.c_str(), key.c_str());
        }
      }
    }
    const bool wanted = quantize_key ? quantize_value : !quant_dtype.empty();
    if (!quant_dtype.empty() && quant_dtype != "asymmetric_quantized-8" && quant_dtype != "w8a8" &&
        (wanted || opts->quant.enabled))
      return bad(path, "quantized_dtype",
                 "is '" + quant_dtype + "': only w8a8 (asymmetric_quantized-8; INT8: asymmetric activations, "
                 "symmetric per-channel weights) is supported");
    if (wanted) opts->quant.enabled = true;
    if (auto_hybrid && opts->quant.auto_hybrid_cos == 0.0) opts->quant.auto_hybrid_cos = auto_hybrid_cos;
  } catch (const YAML::Exception& e) {
    return ORKNN_ERR(kInvalidParam, "%s: bad value: %s", path.c_str(), e.what());
  }
  return Status::Ok();
}

}  // namespace

Status load_config_yaml(const std::string& path, ConvertOptions* opts) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return ORKNN_ERR(kInvalidParam, "cannot open config file '%s'", path.c_str());
  } catch (const YAML::Exception& e) {
    return ORKNN_ERR(kInvalidParam, "%s: YAML syntax error: %s", path.c_str(), e.what());
  }
  return apply_config(root, path, std::filesystem::path(path).parent_path(), opts);
}

Status load_config_yaml_text(const std::string& text, const std::string& base_dir, ConvertOptions* opts) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return ORKNN_ERR(kInvalidParam, "config: YAML syntax error: %s", e.what());
  }
  return apply_config(root, "config", base_dir, opts);
}

}  // namespace orknn
