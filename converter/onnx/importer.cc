#include "converter/onnx/importer.h"

#include <climits>
#include <queue>
#include <set>
#include <unordered_set>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "common/log.h"
#include "converter/onnx/mapper.h"
#include "converter/onnx/tensor_proto.h"
#include "graph/passes/passes.h"

namespace orknn::onnx_import {
namespace {

constexpr int kMinOpset = 1;  // opsets 1-6 through converter/onnx/ops/legacy.cc
constexpr int kMaxOpset = 21;

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// Standard operator sets other than ai.onnx (ONNX-ML, training, ONNX Runtime's contrib ops,
// PyTorch ATen fallbacks): not custom operators, refused.
bool is_foreign_standard_domain(const std::string& d) {
  for (const char* known : {"ai.onnx.ml", "ai.onnx.preview.training", "com.microsoft", "com.microsoft.nchwc",
                            "com.microsoft.experimental", "com.ms.internal.nhwc", "org.pytorch.aten"})
    if (d == known) return true;
  return false;
}

std::string dims_str(const std::vector<std::string>& dims) {
  std::string r;
  for (size_t i = 0; i < dims.size(); ++i) r += (i ? "," : "") + dims[i];
  return r;
}

class Importer {
 public:
  Importer(const onnx::ModelProto& model, const ImportOptions& opts, Graph* g, ImportStats* stats)
      : model_(model), opts_(opts), g_(*g), stats_(*stats) {
    st_.graph = g;
    st_.model_dir = opts.model_dir;
  }

  Status run() {
    ORKNN_RETURN_IF_ERROR(check_versions());
    const onnx::GraphProto& graph = model_.graph();
    for (const auto& vi : graph.value_info()) st_.value_info.emplace(vi.name(), &vi);
    for (const auto& vi : graph.output()) st_.value_info.emplace(vi.name(), &vi);
    ORKNN_RETURN_IF_ERROR(read_initializers(graph));
    ORKNN_RETURN_IF_ERROR(read_inputs(graph));
    std::vector<int> order;
    ORKNN_RETURN_IF_ERROR(topological_order(graph, &order));
    for (int i : order) ORKNN_RETURN_IF_ERROR(import_node(graph.node(i), i));
    ORKNN_RETURN_IF_ERROR(read_outputs(graph));
    compact_tensors(g_);  // constants moved into attributes or folded away are no longer referenced
    stats_.nodes_folded = st_.nodes_folded;
    stats_.onnx_nodes = graph.node_size();
    return Status::Ok();
  }

 private:
  Status check_versions() {
    stats_.ir_version = static_cast<int>(model_.ir_version());
    stats_.producer = model_.producer_name() + (model_.producer_version().empty() ? "" : " " + model_.producer_version());
    if (!model_.has_graph()) return ORKNN_ERR(kInvalidModel, "the ONNX model has no graph (is this an ONNX file?)");
    if (model_.ir_version() < 3)
      return ORKNN_ERR(kInvalidModel,
                       "ONNX IR version %lld is too old (3 or newer needed); re-export the model with a current "
                       "exporter or upgrade it with onnx.version_converter",
                       static_cast<long long>(model_.ir_version()));
    int opset = -1;
    for (const auto& o : model_.opset_import())
      if (is_default_domain(o.domain())) opset = static_cast<int>(o.version());
    if (opset < 0) return ORKNN_ERR(kInvalidModel, "the ONNX model imports no opset of the default (ai.onnx) domain");
    if (opset < kMinOpset || opset > kMaxOpset)
      return ORKNN_ERR(kInvalidModel,
                       "ONNX opset %d is not supported (opsets %d to %d are); convert the model with "
                       "onnx.version_converter.convert_version(model, 13)", opset, kMinOpset, kMaxOpset);
    st_.opset = opset;
    stats_.opset = opset;
    return Status::Ok();
  }

  Status read_initializers(const onnx::GraphProto& graph) {
    if (graph.sparse_initializer_size() > 0)
      return ORKNN_ERR(kUnimplemented, "sparse initializers ('%s', ...) are not supported; densify them with onnx tools",
                       graph.sparse_initializer(0).values().name().c_str());
    for (const auto& t : graph.initializer()) {
      if (t.name().empty()) return ORKNN_ERR(kInvalidModel, "an initializer has no name");
      if (st_.names.count(t.name())) return ORKNN_ERR(kInvalidModel, "initializer '%s' is defined twice", t.name().c_str());
      onnx_import::TensorBytes tb;
      ORKNN_RETURN_IF_ERROR(read_tensor_proto(t, opts_.model_dir, "initializer '" + t.name() + "'", &tb));
      st_.names[t.name()] = g_.add_const(t.name(), tb.shape, tb.dtype, tb.bytes.data(), tb.bytes.size());
    }
    return Status::Ok();
  }

  // Graph inputs that are not initializers are the model's inputs; their dynamic dims must be
  // pinned by the caller.
  Status read_inputs(const onnx::GraphProto& graph) {
    std::vector<const onnx::ValueInfoProto*> inputs;
    for (const auto& vi : graph.input())
      if (!st_.names.count(vi.name())) inputs.push_back(&vi);

    std::set<std::string> unknown_pins;
    for (const auto& kv : opts_.input_shapes) unknown_pins.insert(kv.first);
    if (unknown_pins.count("")) {
      if (inputs.size() != 1)
        return ORKNN_ERR(kInvalidParam, "an input shape without a name needs a one-input model; this one has %zu inputs "
                         "(use --input-shape NAME=d0,d1,...)", inputs.size());
      unknown_pins.erase("");
    }
    for (const auto* vi : inputs) unknown_pins.erase(vi->name());
    if (!unknown_pins.empty()) {
      std::string names;
      for (const auto* vi : inputs) names += (names.empty() ? "'" : ", '") + vi->name() + "'";
      return ORKNN_ERR(kInvalidParam, "--input-shape names '%s', which is not an input of the model (inputs: %s)",
                       unknown_pins.begin()->c_str(), names.c_str());
    }

    std::string unpinned;  // one message for every input with dynamic dims left
    for (const auto* vi : inputs) {
      const std::string& name = vi->name();
      if (!vi->type().has_tensor_type())
        return ORKNN_ERR(kUnimplemented, "input '%s' is not a tensor (sequence/map/optional inputs are not supported)",
                         name.c_str());
      const auto& tt = vi->type().tensor_type();
      DType dtype;
      bool widened = false;
      if (!dtype_from_onnx(tt.elem_type(), &dtype, &widened))
        return ORKNN_ERR(kUnimplemented, "input '%s' has element type %s, which is not supported", name.c_str(),
                         onnx_type_name(tt.elem_type()));
      if (widened)
        ORKNN_LOGW("input '%s' is %s in the model; OpenRKNN takes it as float32", name.c_str(),
                   onnx_type_name(tt.elem_type()));

      Shape shape;
      std::vector<std::string> dim_text;  // for messages: the value, or the symbolic name
      std::vector<size_t> dynamic;
      const bool has_shape = tt.has_shape();
      if (has_shape) {
        for (int d = 0; d < tt.shape().dim_size(); ++d) {
          const auto& dim = tt.shape().dim(d);
          if (dim.has_dim_value() && dim.dim_value() >= 0) {
            shape.push_back(dim.dim_value());
            dim_text.push_back(std::to_string(dim.dim_value()));
          } else {
            shape.push_back(-1);
            dynamic.push_back(static_cast<size_t>(d));
            dim_text.push_back(dim.has_dim_param() && !dim.dim_param().empty() ? "'" + dim.dim_param() + "'" : "?");
          }
        }
      }
      auto pin = opts_.input_shapes.find(name);
      if (pin == opts_.input_shapes.end() && inputs.size() == 1) pin = opts_.input_shapes.find("");
      if (pin != opts_.input_shapes.end()) {
        const Shape& p = pin->second;
        if (has_shape && p.size() != shape.size())
          return ORKNN_ERR(kInvalidParam, "--input-shape for '%s' has %zu dims, the model's input has %zu (%s)",
                           name.c_str(), p.size(), shape.size(), dims_str(dim_text).c_str());
        for (size_t d = 0; d < p.size(); ++d) {
          if (p[d] <= 0)
            return ORKNN_ERR(kInvalidParam, "--input-shape for '%s': dim %zu is %lld; dims must be positive",
                             name.c_str(), d, static_cast<long long>(p[d]));
          if (has_shape && shape[d] >= 0 && shape[d] != p[d])
            ORKNN_LOGW("input '%s': --input-shape sets dim %zu to %lld, the model says %lld", name.c_str(), d,
                       static_cast<long long>(p[d]), static_cast<long long>(shape[d]));
        }
        shape = p;
      } else if (!has_shape) {
        unpinned += strfmt("%sinput '%s' has no shape in the model; pin it with --input-shape %s=d0,d1,...",
                           unpinned.empty() ? "" : "; ", name.c_str(), name.c_str());
      } else if (!dynamic.empty()) {
        std::string what, example;
        for (size_t k = 0; k < dynamic.size(); ++k) {
          size_t d = dynamic[k];
          what += strfmt("%s%zu (%s)", k ? ", " : "", d, d == 0 ? "batch" : dim_text[d].c_str());
        }
        for (size_t d = 0; d < shape.size(); ++d)
          example += (d ? "," : "") + (shape[d] >= 0 ? std::to_string(shape[d]) : (d == 0 ? std::string("1") : "N"));
        unpinned += strfmt("%sinput '%s' has dynamic dim%s %s; pin %s with --input-shape %s=%s%s",
                           unpinned.empty() ? "" : "; ", name.c_str(), dynamic.size() > 1 ? "s" : "", what.c_str(),
                           dynamic.size() > 1 ? "them" : "it", name.c_str(), example.c_str(),
                           example.find('N') != std::string::npos ? " (N: the size you will run)" : "");
      }
      int id = g_.add_tensor(name, shape, dtype);
      st_.names[name] = id;
      GraphInput gi;
      gi.tensor = id;
      g_.inputs.push_back(gi);
    }
    if (!unpinned.empty()) return Status(StatusCode::kInvalidParam, unpinned);
    return Status::Ok();
  }

  // ONNX requires nodes in topological order, but some tools write them otherwise. Kahn's
  // algorithm, preferring file order, so a sorted graph keeps its order exactly.
  Status topological_order(const onnx::GraphProto& graph, std::vector<int>* order) {
    const int n = graph.node_size();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < n; ++i)
      for (const auto& o : graph.node(i).output())
        if (!o.empty()) producer.emplace(o, i);
    std::vector<int> pending(static_cast<size_t>(n), 0);
    std::vector<std::vector<int>> users(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      std::unordered_set<int> deps;
      for (const auto& in : graph.node(i).input()) {
        if (in.empty() || st_.names.count(in)) continue;
        auto it = producer.find(in);
        if (it == producer.end()) {
          const auto& node = graph.node(i);
          return ORKNN_ERR(kInvalidModel,
                           "node '%s' (%s): input '%s' is not produced by any node, initializer or graph input",
                           node.name().c_str(), node.op_type().c_str(), in.c_str());
        }
        if (it->second != i) deps.insert(it->second);
      }
      pending[static_cast<size_t>(i)] = static_cast<int>(deps.size());
      for (int d : deps) users[static_cast<size_t>(d)].push_back(i);
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n; ++i)
      if (pending[static_cast<size_t>(i)] == 0) ready.push(i);
    while (!ready.empty()) {
      int i = ready.top();
      ready.pop();
      order->push_back(i);
      for (int u : users[static_cast<size_t>(i)])
        if (--pending[static_cast<size_t>(u)] == 0) ready.push(u);
    }
    if (static_cast<int>(order->size()) != n) {
      for (int i = 0; i < n; ++i)
        if (pending[static_cast<size_t>(i)] > 0)
          return ORKNN_ERR(kInvalidModel, "node '%s' (%s) is part of a cycle; the graph cannot be ordered",
                           graph.node(i).name().c_str(), graph.node(i).op_type().c_str());
    }
    return Status::Ok();
  }

  Status import_node(const onnx::NodeProto& node, int index) {
    std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
    if (!node_names_.insert(name).second) {
      std::string base = name;
      for (int k = 1; !node_names_.insert(name).second; ++k) name = base + "_" + std::to_string(k);
    }
    for (const auto& in : node.input()) {
      if (in.empty() || st_.names.count(in)) continue;
      auto un = st_.unavailable.find(in);
      if (un != st_.unavailable.end())
        return ORKNN_ERR(kUnimplemented, "node '%s' (%s) reads %s", name.c_str(), node.op_type().c_str(),
                         un->second.c_str());
      return ORKNN_ERR(kInvalidModel, "node '%s' (%s): input '%s' is not produced before use", name.c_str(),
                       node.op_type().c_str(), in.c_str());
    }
    if (node.op_type() == "Constant") ++stats_.constant_nodes;
    MapContext ctx(&st_, &node, name);
    // Types the user listed (--custom-op) are the application's operators whatever their domain,
    // default included (the vendor finds custom nodes by type). Operator sets of other runtimes
    // have their own semantics, which nobody registers callbacks for; every other domain holds
    // operators the application implements (docs/custom_ops.md).
    if (opts_.custom_op_types.count(node.op_type())) return map_custom(ctx);
    if (is_foreign_standard_domain(node.domain()))
      return ORKNN_ERR(kUnimplemented, "node '%s' (%s): op domain '%s' is not supported (only the default ai.onnx "
                       "domain is, plus custom operator domains of the application's own); see docs/ops.md",
                       name.c_str(), node.op_type().c_str(), node.domain().c_str());
    if (!is_default_domain(node.domain())) return map_custom(ctx);
    MapperFn fn = find_mapper(node.op_type());
    return fn ? fn(ctx) : map_default(ctx);
  }

  Status read_outputs(const onnx::GraphProto& graph) {
    if (graph.output_size() == 0) return ORKNN_ERR(kInvalidModel, "the ONNX graph has no outputs");
    for (const auto& vi : graph.output()) {
      auto it = st_.names.find(vi.name());
      if (it == st_.names.end()) {
        auto un = st_.unavailable.find(vi.name());
        if (un != st_.unavailable.end())
          return ORKNN_ERR(kUnimplemented, "graph output '%s' is %s", vi.name().c_str(), un->second.c_str());
        return ORKNN_ERR(kInvalidModel, "graph output '%s' is not produced by any node", vi.name().c_str());
      }
      g_.outputs.push_back(it->second);
    }
    return Status::Ok();
  }

  const onnx::ModelProto& model_;
  const ImportOptions& opts_;
  Graph& g_;
  ImportStats& stats_;
  ImportState st_;
  std::unordered_set<std::string> node_names_;
};

}  // namespace

Status parse_model_proto(const void* data, size_t size, onnx::ModelProto* model) {
  if (size > static_cast<size_t>(INT_MAX))
    return ORKNN_ERR(kInvalidModel, "the ONNX file is %zu bytes; protobuf cannot hold more than 2 GiB, save the "
                     "weights as external data (onnx.save(..., save_as_external_data=True))", size);
  google::protobuf::io::ArrayInputStream array(data, static_cast<int>(size));
  google::protobuf::io::CodedInputStream coded(&array);
  coded.SetTotalBytesLimit(INT_MAX);  // older protobuf defaults to 64 MiB, too small for big models
  if (!model->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    return ORKNN_ERR(kInvalidModel, "not a valid ONNX model: protobuf parsing failed");
  return Status::Ok();
}

Status import_model(const onnx::ModelProto& model, const ImportOptions& opts, Graph* out, ImportStats* stats) {
  ImportStats local;
  Importer imp(model, opts, out, stats ? stats : &local);
  return imp.run();
}

}  // namespace orknn::onnx_import
