// Cutting a subgraph out of an ONNX model before import: the vendor toolkit's
// load_onnx(inputs=..., outputs=...) and its YAML config's subgraphs.inputs/outputs.
#pragma once
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "common/status.h"

namespace orknn::onnx_import {

// Makes `inputs` the graph's inputs (in that order) and `outputs` its outputs, and drops every
// node the outputs do not need. An empty list keeps the model's own. A new input takes its type
// and shape from the model's value_info when it has them (else float32 with no shape: pin it with
// an input shape). Fails, naming the tensor, when a name is not a tensor of the model or an
// output needs a model input the list leaves out.
Status cut_subgraph(onnx::ModelProto* model, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& outputs);

}  // namespace orknn::onnx_import
