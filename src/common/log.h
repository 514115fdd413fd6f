// Logging to stderr, filtered by RKNN_LOG_LEVEL (read once):
//   0 errors only, 1 + warnings (default), 2 + info, 3 + debug, 4 + verbose, 5 + per-layer trace.
#pragma once

namespace orknn {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kVerbose = 4, kTrace = 5 };

int log_level();
bool log_enabled(LogLevel level);
void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define ORKNN_LOGE(...) ::orknn::log(::orknn::LogLevel::kError, __VA_ARGS__)
#define ORKNN_LOGW(...) ::orknn::log(::orknn::LogLevel::kWarn, __VA_ARGS__)
#define ORKNN_LOGI(...) ::orknn::log(::orknn::LogLevel::kInfo, __VA_ARGS__)
#define ORKNN_LOGD(...) ::orknn::log(::orknn::LogLevel::kDebug, __VA_ARGS__)

}  // namespace orknn
