// libopenrknn_convert.so: include/openrknn_convert.h over converter/convert.h.
#include "openrknn_convert.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "api/guarded.h"
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
    void* buf = std::malloc(bytes.size());
    if (!buf) return ORKNN_ERR(kNoMemory, "cannot allocate %zu bytes for the model", bytes.size());
    std::memcpy(buf, bytes.data(), bytes.size());
    *model = buf;
    *model_size = bytes.size();
    return orknn::Status::Ok();
  });
}

extern "C" __attribute__((visibility("default"))) const char* orknn_last_error(void) { return g_last_error.c_str(); }

extern "C" __attribute__((visibility("default"))) void orknn_free(void* p) { std::free(p); }
