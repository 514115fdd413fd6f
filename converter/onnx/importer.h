// ONNX ModelProto -> graph IR (internal to the converter; the public API is converter/convert.h).
#pragma once
#include <map>
#include <set>
#include <string>

#include <onnx/onnx_pb.h>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn::onnx_import {

struct ImportOptions {
  // Pins for graph inputs' dims, by input name. Key "" pins the only input of a one-input model.
  std::map<std::string, Shape> input_shapes;
  std::string model_dir;  // directory external data is read from; empty: external data refused
  std::set<std::string> custom_op_types;  // op types mapped to Custom nodes in any domain (--custom-op)
};

struct ImportStats {
  int opset = 0;
  int ir_version = 0;
  std::string producer;  // producer_name and version, as the file says
  int onnx_nodes = 0;
  int nodes_folded = 0;  // IR nodes computed at import (constant folding)
  int constant_nodes = 0;
};

// Parses a serialised ModelProto (any size protobuf can hold: up to 2 GiB).
Status parse_model_proto(const void* data, size_t size, onnx::ModelProto* model);

// Builds *out from the model: constants, graph inputs (shapes pinned), nodes in topological order
// (each inferred and, when its inputs are constant, folded), graph outputs. Unused constants are
// dropped. No other graph pass runs here.
Status import_model(const onnx::ModelProto& model, const ImportOptions& opts, Graph* out, ImportStats* stats);

}  // namespace orknn::onnx_import
