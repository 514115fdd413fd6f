// libopenrknn_convert.so: include/openrknn_convert.h over converter/convert.h.
#include "openrknn_convert.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "api/guarded.h"
#include "converter/accuracy_analysis.h"
#include "converter/convert.h"
#include "model/model_io.h"
#include "runtime/platform.h"

namespace {

thread_local std::string g_last_error;

// Runs the body with exceptions turned into errors; a failure's message is kept for
// orknn_last_error() and not logged (the caller reports it in its own words).
template <typename F>
int run(F&& body) {
  orknn::Status st;
  try {
    st = body();
  } catch (const std::bad_alloc&) {
    st = ORKNN_ERR(kNoMemory, "out of memory");
  } catch (const std::exception& e) {
    st = ORKNN_ERR(kFail, "internal error: %s", e.what());
  } catch (...) {
    st = ORKNN_ERR(kFail, "internal error");
  }
  g_last_error = st.ok() ? std::string() : st.message();
  return orknn::to_rknn_error(st.code());
}

// A malloc'd copy of `bytes` in *out (released by orknn_free).
orknn::Status hand_out(const void* bytes, size_t size, void** out) {
  void* buf = std::malloc(size ? size : 1);
  if (!buf) return ORKNN_ERR(kNoMemory, "cannot allocate %zu bytes", size);
  if (size) std::memcpy(buf, bytes, size);
  *out = buf;
  return orknn::Status::Ok();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int orknn_convert_onnx(const char* onnx_path, const void* onnx_data,
                                                                          size_t onnx_size, const char* config,
                                                                          const char* base_dir, void** model,
                                                                          size_t* model_size) {
  return run([&]() -> orknn::Status {
    if (!model || !model_size) return ORKNN_ERR(kInvalidParam, "model and model_size must not be NULL");
    *model = nullptr;
    *model_size = 0;
    if (!onnx_path && (!onnx_data || onnx_size == 0))
      return ORKNN_ERR(kInvalidParam, "give an ONNX file path or a non-empty ONNX buffer");
    orknn::ConvertOptions opts;
    opts.platform.clear();
    if (config && *config)
      ORKNN_RETURN_IF_ERROR(orknn::load_config_yaml_text(config, base_dir ? base_dir : ".", &opts));
    if (opts.platform.empty()) {
      std::string names;
      for (const auto& p : orknn::platform_names()) names += (names.empty() ? "" : ", ") + p;
      return ORKNN_ERR(kInvalidParam, "no target platform: set target_platform (one of %s)", names.c_str());
    }
    orknn::Graph g;
    orknn::DynamicShapes dyn;
    ORKNN_RETURN_IF_ERROR(onnx_path ? orknn::convert_onnx(onnx_path, opts, &g, nullptr, &dyn)
                                    : orknn::convert_onnx_bytes(onnx_data, onnx_size, opts, &g, nullptr, &dyn));
    std::vector<uint8_t> bytes;
    ORKNN_RETURN_IF_ERROR(orknn::write_model(g, dyn, &bytes));
    ORKNN_RETURN_IF_ERROR(hand_out(bytes.data(), bytes.size(), model));
    *model_size = bytes.size();
    return orknn::Status::Ok();
  });
}

extern "C" __attribute__((visibility("default"))) int orknn_accuracy_analysis(
    const char* onnx_path, const char* config, const void* model, size_t model_size, const char* const* input_files,
    size_t n_input_files, char** report_json) {
  return run([&]() -> orknn::Status {
    if (!onnx_path || !model || model_size == 0 || !report_json || (n_input_files && !input_files))
      return ORKNN_ERR(kInvalidParam, "onnx_path, model (non-empty) and report_json must be given");
    *report_json = nullptr;
    orknn::ConvertOptions cut;  // only the subgraph cut is read from the config
    if (config && *config) ORKNN_RETURN_IF_ERROR(orknn::load_config_yaml_text(config, ".", &cut));
    // The loader wants 64-byte aligned bytes; the graph's constants point into them.
    std::shared_ptr<uint8_t> buf(static_cast<uint8_t*>(::operator new[](model_size, std::align_val_t(64))),
                                 [](uint8_t* p) { ::operator delete[](p, std::align_val_t(64)); });
    std::memcpy(buf.get(), model, model_size);
    orknn::Graph qg;
    ORKNN_RETURN_IF_ERROR(orknn::load_model(buf, buf.get(), model_size, &qg));
    orknn::AccuracyAnalysisRequest req;
    req.onnx_path = onnx_path;
    req.subgraph_inputs = cut.subgraph_inputs;
    req.subgraph_outputs = cut.subgraph_outputs;
    for (size_t i = 0; i < n_input_files; ++i) {
      if (!input_files[i]) return ORKNN_ERR(kInvalidParam, "input file %zu is NULL", i);
      req.input_files.push_back(input_files[i]);
    }
    orknn::AccuracyReport rep;
    std::string inputs_desc;
    ORKNN_RETURN_IF_ERROR(orknn::analyze_accuracy(req, qg, &rep, &inputs_desc));
    const std::string json = orknn::accuracy_report_json(rep, 30.0, 3, {{"float_model", onnx_path},
                                                                        {"inputs", inputs_desc}});
    void* out = nullptr;
    ORKNN_RETURN_IF_ERROR(hand_out(json.c_str(), json.size() + 1, &out));
    *report_json = static_cast<char*>(out);
    return orknn::Status::Ok();
  });
}

extern "C" __attribute__((visibility("default"))) const char* orknn_last_error(void) { return g_last_error.c_str(); }

extern "C" __attribute__((visibility("default"))) void orknn_free(void* p) { std::free(p); }
