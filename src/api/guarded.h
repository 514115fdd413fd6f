// The C API's one mapping from internal Status to RKNN_ERR_* codes, and the guard every extern "C"
// entry point of rknn_api.h and rknn_matmul_api.h runs its body in: one error log line per failure,
// naming the call, and no exception across the C ABI.
#pragma once
#include <new>
#include <string>

#include "common/log.h"
#include "common/status.h"
#include "rknn_api.h"

namespace orknn {

inline int to_rknn_error(StatusCode c) {
  switch (c) {
    case StatusCode::kOk: return RKNN_SUCC;
    case StatusCode::kInvalidParam: return RKNN_ERR_PARAM_INVALID;
    case StatusCode::kInvalidModel: return RKNN_ERR_MODEL_INVALID;
    case StatusCode::kInvalidContext: return RKNN_ERR_CTX_INVALID;
    case StatusCode::kInvalidInput: return RKNN_ERR_INPUT_INVALID;
    case StatusCode::kInvalidOutput: return RKNN_ERR_OUTPUT_INVALID;
    case StatusCode::kNoMemory: return RKNN_ERR_MALLOC_FAIL;
    case StatusCode::kPlatformMismatch: return RKNN_ERR_TARGET_PLATFORM_UNMATCH;
    case StatusCode::kUnimplemented:
    case StatusCode::kFail: return RKNN_ERR_FAIL;
  }
  return RKNN_ERR_FAIL;
}

// Logs a failed Status once, naming the API call, and returns its RKNN code.
inline int report(const char* fn, const Status& st) {
  if (st.ok()) return RKNN_SUCC;
  const std::string& m = st.message();
  if (m.rfind("rknn_", 0) == 0) ORKNN_LOGE("%s", m.c_str());
  else ORKNN_LOGE("%s: %s", fn, m.c_str());
  return to_rknn_error(st.code());
}

// Runs `body` (returning Status) with exceptions turned into errors.
template <typename F>
int guarded(const char* fn, F&& body) {
  try {
    return report(fn, body());
  } catch (const std::bad_alloc&) {
    return report(fn, ORKNN_ERR(kNoMemory, "out of memory"));
  } catch (const std::exception& e) {
    return report(fn, ORKNN_ERR(kFail, "internal error: %s", e.what()));
  } catch (...) {
    return report(fn, ORKNN_ERR(kFail, "internal error"));
  }
}

}  // namespace orknn
