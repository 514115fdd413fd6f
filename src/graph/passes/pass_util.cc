// Small graph queries and rewrites shared by the passes and the ONNX importer.
#include <algorithm>

#include "graph/passes/passes.h"

namespace orknn {

std::vector<std::vector<int>> tensor_consumers(const Graph& g) {
  std::vector<std::vector<int>> r(g.tensors.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int t : g.nodes[i].inputs)
      if (t >= 0 && static_cast<size_t>(t) < r.size()) r[static_cast<size_t>(t)].push_back(static_cast<int>(i));
  return r;
}

std::vector<int> tensor_producers(const Graph& g) {
  std::vector<int> r(g.tensors.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int t : g.nodes[i].outputs)
      if (t >= 0 && static_cast<size_t>(t) < r.size()) r[static_cast<size_t>(t)] = static_cast<int>(i);
  return r;
}

bool is_graph_output(const Graph& g, int tensor) {
  return std::find(g.outputs.begin(), g.outputs.end(), tensor) != g.outputs.end();
}

std::string unique_name(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int i = 1; g.find_tensor(name) >= 0; ++i) name = base + "_" + std::to_string(i);
  return name;
}

bool is_graph_input(const Graph& g, int tensor) {
  for (const GraphInput& in : g.inputs)
    if (in.tensor == tensor) return true;
  return false;
}

void erase_flagged_nodes(Graph& g, const std::vector<char>& flagged) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!flagged[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

void replace_tensor_uses(Graph& g, int from, int to) {
  for (Node& n : g.nodes)
    for (int& t : n.inputs)
      if (t == from) t = to;
}

int compact_tensors(Graph& g) {
  std::vector<char> used(g.tensors.size(), 0);
  auto mark = [&](int t) {
    if (t >= 0 && static_cast<size_t>(t) < used.size()) used[static_cast<size_t>(t)] = 1;
  };
  for (const Node& n : g.nodes) {
    for (int t : n.inputs) mark(t);
    for (int t : n.outputs) mark(t);
  }
  for (const GraphInput& in : g.inputs) mark(in.tensor);
  for (int t : g.outputs) mark(t);

  std::vector<int> remap(g.tensors.size(), -1);
  std::vector<Tensor> kept;
  kept.reserve(g.tensors.size());
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    if (!used[i]) continue;
    remap[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(g.tensors[i]));
  }
  int dropped = static_cast<int>(g.tensors.size() - kept.size());
  g.tensors = std::move(kept);
  auto re = [&](int& t) {
    if (t >= 0) t = remap[static_cast<size_t>(t)];
  };
  for (Node& n : g.nodes) {
    for (int& t : n.inputs) re(t);
    for (int& t : n.outputs) re(t);
  }
  for (GraphInput& in : g.inputs) re(in.tensor);
  for (int& t : g.outputs) re(t);
  return dropped;
}

Status reinfer_graph(Graph& g) {
  for (Node& n : g.nodes) {
    const OpDef* def = find_op(n.op);
    if (!def || !def->infer)
      return ORKNN_ERR(kInvalidModel, "node '%s' (%s): op has no shape inference yet", n.name.c_str(),
                       op_name(n.op));
    Status st = def->infer(g, n);
    if (!st.ok()) {
      if (st.message().find("'" + n.name + "'") != std::string::npos) return st;  // already names the node
      return Status(st.code(), strfmt("node '%s' (%s): %s", n.name.c_str(), op_name(n.op), st.message().c_str()));
    }
  }
  return Status::Ok();
}

}  // namespace orknn
