// Test helper: runs a whole graph with the reference kernels (or the best kernels) through the
// executor, standing in for the runtime so converter and pass tests can compare numbers.
#pragma once
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "graph/ir.h"
#include "runtime/executor.h"

namespace orknn::test {

// inputs: bytes per graph input, in g.inputs order. Outputs: bytes per graph output.
inline Status run_graph(const Graph& g, const std::vector<std::vector<uint8_t>>& inputs,
                        std::vector<std::vector<uint8_t>>* outputs, bool ref_only = true) {
  if (inputs.size() != g.inputs.size())
    return ORKNN_ERR(kInvalidParam, "run_graph: %zu inputs given, graph has %zu", inputs.size(), g.inputs.size());
  std::unique_ptr<Executor> runner;
  ORKNN_RETURN_IF_ERROR(Executor::create_keep_all(g, !ref_only, 1, &runner));
  for (size_t i = 0; i < inputs.size(); ++i) ORKNN_RETURN_IF_ERROR(runner->set_input(i, inputs[i].data(), inputs[i].size()));
  ORKNN_RETURN_IF_ERROR(runner->run());
  outputs->clear();
  for (int id : g.outputs) {
    const uint8_t* p = runner->data_as<uint8_t>(id);
    outputs->emplace_back(p, p + g.tensor(id).nbytes());
  }
  return Status::Ok();
}

template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> from_bytes(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace orknn::test
