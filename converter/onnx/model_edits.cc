#include "converter/onnx/model_edits.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace orknn::onnx_import {
namespace {

// Names a node reads, including the outer-scope names its If/Loop/Scan bodies read.
void collect_reads(const onnx::NodeProto& node, std::vector<std::string>* out) {
  for (const auto& in : node.input())
    if (!in.empty()) out->push_back(in);
  for (const auto& attr : node.attribute()) {
    if (attr.has_g())
      for (const auto& n : attr.g().node()) collect_reads(n, out);
    for (const auto& g : attr.graphs())
      for (const auto& n : g.node()) collect_reads(n, out);
  }
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string r;
  for (const auto& n : names) r += (r.empty() ? "'" : ", '") + n + "'";
  return r;
}

}  // namespace

Status cut_subgraph(onnx::ModelProto* model, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& outputs) {
  if (inputs.empty() && outputs.empty()) return Status::Ok();
  onnx::GraphProto* g = model->mutable_graph();
  std::set<std::string> inits;
  for (const auto& t : g->initializer()) inits.insert(t.name());
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < g->node_size(); ++i)
    for (const auto& o : g->node(i).output())
      if (!o.empty()) producer.emplace(o, i);
  std::map<std::string, const onnx::ValueInfoProto*> info;  // what the model says about each tensor
  for (const auto& vi : g->value_info()) info.emplace(vi.name(), &vi);
  for (const auto& vi : g->output()) info[vi.name()] = &vi;
  std::vector<std::string> model_inputs;
  for (const auto& vi : g->input()) {
    info[vi.name()] = &vi;
    if (!inits.count(vi.name())) model_inputs.push_back(vi.name());
  }
  auto is_tensor = [&](const std::string& n) {
    return producer.count(n) || std::find(model_inputs.begin(), model_inputs.end(), n) != model_inputs.end();
  };
  for (const auto& n : inputs)
    if (!is_tensor(n))
      return ORKNN_ERR(kInvalidParam, "subgraph input '%s' is not a tensor of the model (a graph input or a node "
                       "output; initializers cannot be inputs)", n.c_str());
  std::vector<std::string> outs;
  if (outputs.empty()) {
    for (const auto& vi : g->output()) outs.push_back(vi.name());
  } else {
    outs = outputs;
  }
  for (const auto& n : outs)
    if (!is_tensor(n))
      return ORKNN_ERR(kInvalidParam, "subgraph output '%s' is not a tensor of the model (a graph input or a node "
                       "output)", n.c_str());
  const std::vector<std::string>& new_inputs = inputs.empty() ? model_inputs : inputs;
  const std::set<std::string> input_set(new_inputs.begin(), new_inputs.end());

  // Walk back from the outputs to the new inputs.
  std::vector<bool> keep(static_cast<size_t>(g->node_size()), false);
  std::vector<std::string> todo(outs.begin(), outs.end());
  std::set<std::string> seen;
  while (!todo.empty()) {
    const std::string t = todo.back();
    todo.pop_back();
    if (!seen.insert(t).second || input_set.count(t) || inits.count(t)) continue;
    auto p = producer.find(t);
    if (p == producer.end()) {
      if (std::find(model_inputs.begin(), model_inputs.end(), t) != model_inputs.end())
        return ORKNN_ERR(kInvalidParam, "the subgraph's outputs need the model input '%s', which the subgraph inputs "
                         "(%s) leave out; add it to the inputs", t.c_str(), quoted_list(new_inputs).c_str());
      continue;  // a name defined inside a subgraph body
    }
    keep[static_cast<size_t>(p->second)] = true;
    collect_reads(g->node(p->second), &todo);
  }

  onnx::GraphProto cut;
  for (int i = 0; i < g->node_size(); ++i)
    if (keep[static_cast<size_t>(i)]) *cut.add_node() = g->node(i);
  auto value_info = [&](const std::string& name) {
    onnx::ValueInfoProto vi;
    auto it = info.find(name);
    if (it != info.end()) vi = *it->second;
    vi.set_name(name);
    if (!vi.has_type()) vi.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    return vi;
  };
  for (const auto& n : new_inputs) *cut.add_input() = value_info(n);
  for (const auto& vi : g->input())
    if (inits.count(vi.name())) *cut.add_input() = vi;
  for (const auto& n : outs) *cut.add_output() = value_info(n);
  g->clear_node();
  g->mutable_node()->Swap(cut.mutable_node());
  g->clear_input();
  g->mutable_input()->Swap(cut.mutable_input());
  g->clear_output();
  g->mutable_output()->Swap(cut.mutable_output());
  return Status::Ok();
}

Status set_batch_size(onnx::ModelProto* model, int64_t n) {
  if (n < 1) return ORKNN_ERR(kInvalidParam, "batch size %lld: give a positive batch size", static_cast<long long>(n));
  onnx::GraphProto* g = model->mutable_graph();
  std::set<std::string> inits;
  for (const auto& t : g->initializer()) inits.insert(t.name());
  for (auto& vi : *g->mutable_input()) {
    if (inits.count(vi.name())) continue;
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() == 0)
      return ORKNN_ERR(kInvalidParam, "batch size %lld: input '%s' has no dims to batch (a scalar or no shape in "
                       "the model)", static_cast<long long>(n), vi.name().c_str());
    auto* d0 = shape->mutable_dim(0);
    if (d0->has_dim_value() && d0->dim_value() != 1 && d0->dim_value() != n)
      return ORKNN_ERR(kInvalidParam, "batch size %lld: input '%s' has batch %lld in the model; export it with batch "
                       "1 or a dynamic batch", static_cast<long long>(n), vi.name().c_str(),
                       static_cast<long long>(d0->dim_value()));
    d0->set_dim_value(n);
  }
  return Status::Ok();
}

}  // namespace orknn::onnx_import
