#include "converter/quant/custom_op_lib.h"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>

#include "common/log.h"

namespace orknn {

CustomOpLibraries::~CustomOpLibraries() {
  for (void* h : handles_) dlclose(h);
}

Status CustomOpLibraries::load(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    // A file given as "lib.so" is the one in the current directory, not one dlopen would search
    // the library path for.
    std::error_code ec;
    const std::string file = std::filesystem::exists(path, ec) ? std::filesystem::absolute(path, ec).string() : path;
    void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return ORKNN_ERR(kInvalidParam, "--custom-op-lib '%s': cannot load it: %s", path.c_str(), dlerror());
    handles_.push_back(h);
    auto get = reinterpret_cast<get_custom_op_func>(dlsym(h, "get_rknn_custom_op"));
    if (!get)
      return ORKNN_ERR(kInvalidParam, "--custom-op-lib '%s' exports no get_rknn_custom_op; a custom operator plugin "
                       "defines RKNN_CUSTOM_OP_EXPORT rknn_custom_op* get_rknn_custom_op(void) (rknn_custom_op.h, "
                       "docs/custom_ops.md)", path.c_str());
    const rknn_custom_op* op = get();
    if (!op) return ORKNN_ERR(kInvalidParam, "--custom-op-lib '%s': get_rknn_custom_op returned NULL", path.c_str());
    if (!std::memchr(op->op_type, '\0', sizeof op->op_type) || op->op_type[0] == '\0' || !op->compute)
      return ORKNN_ERR(kInvalidParam, "--custom-op-lib '%s': get_rknn_custom_op returned an operator without an "
                       "op_type or a compute callback", path.c_str());
    for (const rknn_custom_op& other : ops_)
      if (std::strcmp(other.op_type, op->op_type) == 0)
        return ORKNN_ERR(kInvalidParam, "--custom-op-lib '%s': operator type '%s' is given by an earlier library too",
                         path.c_str(), op->op_type);
    ops_.push_back(*op);
    ORKNN_LOGI("--custom-op-lib '%s': custom operator type '%s' (version %u) for calibration", path.c_str(),
               op->op_type, op->version);
  }
  return Status::Ok();
}

std::set<std::string> CustomOpLibraries::types() const {
  std::set<std::string> t;
  for (const rknn_custom_op& op : ops_) t.insert(op.op_type);
  return t;
}

}  // namespace orknn
