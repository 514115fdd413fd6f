// A loaded model (runtime/model.cc): the verified graph and what the contexts made from it share.
// Immutable after load; shared by contexts made from it (rknn_dup_context, SHARE_WEIGHT_MEM).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"
#include "model/dynamic_shapes.h"

namespace orknn {

struct PlatformInfo;

struct Model {
  Graph graph;
  const PlatformInfo* platform = nullptr;
  size_t weight_bytes = 0;
  // Dynamic-shape models (docs/decisions.md "Dynamic shapes"): the shape sets, and per set s >= 1
  // a Model holding that set's graph (constants shared with this one); shape_set_models[0] is null
  // (set 0 is this model). Both empty for static models.
  DynamicShapes dynamic;
  std::vector<std::shared_ptr<const Model>> shape_set_models;
  int64_t macs = 0;  // multiply-accumulates of one run (ops/op.h node_macs)
};

// Loads and verifies a model from bytes (copied into 64-byte aligned storage first, so the caller
// may free its buffer) or from a file path.
Status load_model_from_buffer(const void* data, size_t size, std::shared_ptr<const Model>* out);
Status load_model_from_file(const std::string& path, std::shared_ptr<const Model>* out);
// RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: parses the model in place (no copy). `data` must be 64-byte
// aligned and stay alive and unchanged while any context uses the model.
Status load_model_in_place(const void* data, size_t size, std::shared_ptr<const Model>* out);

// SHARE_WEIGHT_MEM: `candidate` may use `owner`'s Model only if it is the same network (same
// inputs, outputs, nodes and tensors by name, shape and type). Error names the first difference.
Status check_same_network(const Model& candidate, const Model& owner);

}  // namespace orknn
