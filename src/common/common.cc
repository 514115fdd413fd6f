#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "common/log.h"
#include "common/status.h"

namespace orknn {

std::string strfmt(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string s(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, fmt, ap2);
  va_end(ap2);
  return s;
}

int log_level() {
  static const int level = [] {
    const char* v = std::getenv("RKNN_LOG_LEVEL");
    if (!v || !*v) return 1;
    int l = std::atoi(v);
    return l < 0 ? 0 : (l > 5 ? 5 : l);
  }();
  return level;
}

bool log_enabled(LogLevel level) { return static_cast<int>(level) <= log_level(); }

void log(LogLevel level, const char* fmt, ...) {
  if (!log_enabled(level)) return;
  static const char kTag[] = "EWIDVT";
  static std::mutex mu;
  va_list ap;
  va_start(ap, fmt);
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "%c RKNN: ", kTag[static_cast<int>(level)]);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
}

}  // namespace orknn
