// The .rknn model format (ours): see docs/format.md and schema/model.fbs.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"
#include "model/dynamic_shapes.h"

namespace orknn {

// Serialises a converted graph. Constant buffers are placed at 64-byte aligned file offsets.
Status write_model(const Graph& g, std::vector<uint8_t>* out);
Status write_model_file(const Graph& g, const std::string& path);
// Dynamic-shape models: also writes the shape sets (dyn.sets[0] describes g itself); verified
// with verify_dynamic_shapes first. An empty `dyn` writes a static model.
Status write_model(const Graph& g, const DynamicShapes& dyn, std::vector<uint8_t>* out);
Status write_model_file(const Graph& g, const DynamicShapes& dyn, const std::string& path);

// Parses `size` bytes at `data` (64-byte aligned; `owner` keeps them alive and is shared by the
// returned graph's constants, which point into the buffer without copying). Verifies the buffer
// with the FlatBuffers verifier and then the graph verifier; a vendor-compiled .rknn is refused
// with kInvalidModel and a message telling the user to convert with rknn_convert.
Status load_model(std::shared_ptr<const void> owner, const uint8_t* data, size_t size, Graph* out);
// Same, also returning the shape sets of a dynamic-shape model (empty for a static one), checked
// with verify_dynamic_shapes. The overload above checks them as well and drops them.
Status load_model(std::shared_ptr<const void> owner, const uint8_t* data, size_t size, Graph* out,
                  DynamicShapes* dyn);

}  // namespace orknn
