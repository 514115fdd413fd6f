// ONNX node -> IR node(s). Each ONNX op type may have a mapper (converter/onnx/ops/*.cc, listed in
// ops/mapper_list.inc); op types without one use map_default, which copies attributes verbatim.
// Mappers absorb opset differences that the IR's opset-21 semantics cannot express by attributes
// alone (Softmax < 13, Upsample, Resize 10, ...). Every node a mapper emits goes through its op's
// infer function immediately and is constant-folded when all its inputs are constant, so later
// nodes see static shapes and constant parameter inputs.
#pragma once
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn::onnx_import {

// Importer state shared by the mappers of one model.
struct ImportState {
  Graph* graph = nullptr;
  int opset = 0;                                     // default-domain opset of the model
  std::string model_dir;                             // for external data; empty for in-memory models
  std::unordered_map<std::string, int> names;        // ONNX value name -> tensor id
  std::unordered_map<std::string, std::string> unavailable;  // ONNX value name -> why it cannot be used
  std::unordered_set<std::string> internal_names;    // names of tensors the importer made up
  int nodes_folded = 0;                              // nodes turned into constants while importing
  int nodes_emitted = 0;
  // Declared types of values (graph.value_info, then graph.output): the output shapes of custom
  // operators, which no shape inference knows (converter/onnx/ops/custom.cc).
  std::unordered_map<std::string, const onnx::ValueInfoProto*> value_info;
};

class MapContext {
 public:
  MapContext(ImportState* state, const onnx::NodeProto* node, std::string name)
      : st_(state), node_(node), name_(std::move(name)) {}

  const onnx::NodeProto& node() const { return *node_; }
  const std::string& op_type() const { return node_->op_type(); }
  const std::string& name() const { return name_; }  // ONNX node name, or a generated one
  int opset() const { return st_->opset; }
  Graph& graph() { return *st_->graph; }
  const Graph& graph() const { return *st_->graph; }
  const std::string& model_dir() const { return st_->model_dir; }
  // The declared type of ONNX value `name` (graph value_info or output), or nullptr.
  const onnx::ValueInfoProto* value_info(const std::string& name) const {
    auto it = st_->value_info.find(name);
    return it == st_->value_info.end() ? nullptr : it->second;
  }

  size_t num_inputs() const { return static_cast<size_t>(node_->input_size()); }
  // Tensor id of input i; -1 when absent (empty name or beyond the list).
  int input(size_t i) const;
  const Tensor* input_tensor(size_t i) const;
  // Input i when it is present and constant, else nullptr.
  const Tensor* const_input(size_t i) const;

  size_t num_outputs() const { return static_cast<size_t>(node_->output_size()); }
  // Tensor for ONNX output i, created on first call (an unnamed output gets an internal tensor).
  Status output(size_t i, int* id);
  // Declares ONNX output i unusable: a node reading it gets an error giving `reason`.
  void mark_unavailable(size_t i, const std::string& reason);
  // Binds ONNX output i to a new constant.
  Status output_const(size_t i, const Shape& shape, DType dtype, const void* bytes, size_t nbytes);
  // A fresh intermediate tensor named after the node.
  int new_tensor(const std::string& suffix);
  int new_const(const std::string& suffix, const Shape& shape, DType dtype, const void* bytes, size_t nbytes);

  // Runs n through its op's infer function, then folds it (all inputs constant) or appends it to
  // the graph. An empty n.name gets the node's name.
  Status emit(Node n);
  // Counts the node as folded when a mapper bound all its outputs to constants itself.
  void count_folded() { ++st_->nodes_folded; }

  const onnx::AttributeProto* attr(const std::string& name) const;
  // Copies INT, FLOAT, STRING, INTS and FLOATS attributes into *out, except those in `skip`.
  // Other kinds (TENSOR, GRAPH, STRINGS, ...) not in `skip` are an error naming the attribute.
  Status copy_attrs(Attrs* out, const std::vector<std::string>& skip = {}) const;

  // kInvalidModel: "node 'name' (OpType): <message>".
  Status error(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  // kUnimplemented: "node 'name' (OpType): <message>".
  Status unsupported(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));

 private:
  ImportState* st_;
  const onnx::NodeProto* node_;
  std::string name_;
  std::vector<int> bound_;  // tensor ids of the outputs bound so far (-1: not yet)
};

using MapperFn = Status (*)(MapContext& ctx);

// The op-specific mapper for an ONNX op type (default domain), or nullptr.
MapperFn find_mapper(const std::string& op_type);
// Maps an ONNX op with the same name in the IR: attributes copied, inputs/outputs one to one.
Status map_default(MapContext& ctx);
// Maps a node of a non-default domain onto an IR Custom node (converter/onnx/ops/custom.cc).
Status map_custom(MapContext& ctx);
// Mapper helper: the node as map_default would build it, without emitting it: attributes except
// `skip_attrs`, inputs (trailing absent ones dropped), the first `max_outputs` outputs (trailing
// unnamed ones dropped).
Status default_node(MapContext& ctx, OpId op, Node* n, const std::vector<std::string>& skip_attrs = {},
                    size_t max_outputs = static_cast<size_t>(-1));

#define ORKNN_ONNX_MAPPER(op_type, fn) Status fn(MapContext& ctx);
#include "converter/onnx/ops/mapper_list.inc"
#undef ORKNN_ONNX_MAPPER

}  // namespace orknn::onnx_import
