// Edits of an ONNX model before import: a subgraph cut (the vendor toolkit's load_onnx(inputs=...,
// outputs=...), its YAML config's subgraphs.inputs/outputs) and the batch size (build(rknn_batch_size)).
#pragma once
#include <cstdint>
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

// Gives every model input batch size n: dim 0 becomes n where it is 1 or symbolic. Shapes then
// follow through inference; a node that fixes the batch itself (a Reshape to [1, -1], say) fails
// there, naming the node. An input of rank 0 or with another fixed dim 0 is refused.
Status set_batch_size(onnx::ModelProto* model, int64_t n);

}  // namespace orknn::onnx_import
