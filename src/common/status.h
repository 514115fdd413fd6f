// The one internal error type. Only src/api maps it to RKNN_ERR_* codes.
#pragma once
#include <string>
#include <utility>

namespace orknn {

enum class StatusCode {
  kOk = 0,
  kFail,            // internal error
  kInvalidParam,    // bad argument (null pointer, wrong size, out of range)
  kInvalidModel,    // corrupt, foreign or unsupported model
  kInvalidContext,  // bad handle
  kInvalidInput,    // input tensor data/attributes do not match the model
  kInvalidOutput,   // output tensor request does not match the model
  kNoMemory,
  kUnimplemented,   // API or feature not implemented yet
  kPlatformMismatch,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string msg) : code_(code), msg_(std::move(msg)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return msg_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string msg_;
};

// printf-style message builder.
std::string strfmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#define ORKNN_ERR(code, ...) ::orknn::Status(::orknn::StatusCode::code, ::orknn::strfmt(__VA_ARGS__))

#define ORKNN_RETURN_IF_ERROR(expr)          \
  do {                                       \
    ::orknn::Status _st = (expr);            \
    if (!_st.ok()) return _st;               \
  } while (0)

}  // namespace orknn
