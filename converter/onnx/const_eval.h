// Conversion-time evaluation of ONNX ops that have no IR op (internal to the ONNX importer).
// Exported graphs compute masks, paddings and indices from shapes with ops the runtime has no
// kernel for (Swin's attention masks: Mod). Once the input shapes are fixed every input
// of such a node is constant, so the node is computed here, with ONNX's semantics (opset 21), and
// its outputs become constants. The same op with an input computed at run time is refused, naming
// that input. docs/ops.md lists the ops.
#pragma once
#include <string>
#include <vector>

#include "common/status.h"
#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {

// The ONNX op types (default domain) evaluated here.
const std::vector<std::string>& const_eval_ops();
bool is_const_eval_op(const std::string& op_type);
// Computes the node and binds its outputs to constants, or refuses it (kUnimplemented naming the
// run-time input; kInvalidModel for inputs the op's definition forbids, e.g. an index out of range).
Status map_const_eval(MapContext& ctx);

}  // namespace orknn::onnx_import
