// Custom-operator plugin libraries for INT8 calibration (--custom-op-lib, docs/custom_ops.md):
// each exports get_rknn_custom_op, the vendor SDK's plugin entry point (get_custom_op_func in
// rknn_custom_op.h), returning the rknn_custom_op the application registers at run time. The
// same plugin that serves the application on the board thus lets calibration compute the custom
// nodes, so that the nodes after them get calibration ranges.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "rknn_custom_op.h"

namespace orknn {

class CustomOpLibraries {
 public:
  CustomOpLibraries() = default;
  ~CustomOpLibraries();  // unloads the libraries: whatever ran their callbacks must be gone by then
  CustomOpLibraries(const CustomOpLibraries&) = delete;
  CustomOpLibraries& operator=(const CustomOpLibraries&) = delete;

  // Loads every library and takes its operator. Errors name the library and the remedy: it cannot
  // be loaded, it exports no get_rknn_custom_op, that returns NULL or an operator without a type
  // or compute, or two libraries give the same type.
  Status load(const std::vector<std::string>& paths);

  // The operators, in the order of the libraries (copies of the structs the plugins returned).
  const std::vector<rknn_custom_op>& ops() const { return ops_; }
  std::set<std::string> types() const;

 private:
  std::vector<void*> handles_;
  std::vector<rknn_custom_op> ops_;
};

}  // namespace orknn
