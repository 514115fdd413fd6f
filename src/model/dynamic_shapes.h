// Dynamic-shape models (docs/format.md "Dynamic shapes"): a model converted for several
// combinations of input shapes ("shape sets"). The stored graph is the graph of set 0; every set
// has the same nodes, tensors and constants, and differs only in its tensors' shapes and in the
// attributes of some nodes (e.g. a folded Reshape "shape"). This header holds those differences
// and builds the graph of one set from them.
#pragma once
#include <utility>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

// The vendor's RKNN_MAX_DYNAMIC_SHAPE_NUM: rknn_input_range holds at most this many shapes.
constexpr size_t kMaxShapeSets = 512;

struct ShapeSetVariant {
  std::vector<Shape> input_shapes;   // one per graph input (ONNX layout, NCHW)
  std::vector<Shape> tensor_shapes;  // one per graph tensor, in tensor order
  // Nodes whose attributes differ from the stored graph's: node index -> its complete attributes.
  std::vector<std::pair<int, Attrs>> node_attrs;
};

struct DynamicShapes {
  std::vector<ShapeSetVariant> sets;  // empty: a static model; else set 0 is the stored graph
  bool empty() const { return sets.empty(); }
};

// The graph of shape set `set`: `base` with that set's tensor shapes and node attributes.
// Constants share their bytes with `base` (no weight copy). Checks indices and counts only;
// verify_dynamic_shapes (graph/verifier.h) checks the result.
Status make_shape_variant(const Graph& base, const DynamicShapes& dyn, size_t set, Graph* out);

// Converter side: `graphs[s]` is the model converted with shape set s. Requires every graph to
// have the structure of graphs[0] (same tensors by name/dtype/quantization, same constants, same
// nodes with the same inputs/outputs) and records what differs (shapes, attributes). On a
// structural difference, returns kInvalidParam naming the first differing node or tensor.
Status collect_dynamic_shapes(const std::vector<Graph>& graphs, DynamicShapes* out);

// "1x3x224x224" for messages.
std::string shape_dims_str(const Shape& s);

}  // namespace orknn
