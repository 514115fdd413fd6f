// Test helper: runs a whole graph node by node with the reference kernels (or the best kernels),
// standing in for the runtime so converter and pass tests can compare numbers. In fp16 mode every
// float op output is rounded to fp16, as the runtime does.
#pragma once
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn::test {

// inputs: bytes per graph input, in g.inputs order. Outputs: bytes per graph output.
inline Status run_graph(const Graph& g, const std::vector<std::vector<uint8_t>>& inputs,
                        std::vector<std::vector<uint8_t>>* outputs, bool ref_only = true) {
  std::map<int, std::vector<uint8_t>> buf;
  if (inputs.size() != g.inputs.size()) return ORKNN_ERR(kInvalidParam, "run_graph: %zu inputs given, graph has %zu",
                                                         inputs.size(), g.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = g.tensor(g.inputs[i].tensor);
    if (inputs[i].size() != t.nbytes())
      return ORKNN_ERR(kInvalidParam, "run_graph: input %zu has %zu bytes, needs %zu", i, inputs[i].size(), t.nbytes());
    buf[g.inputs[i].tensor] = inputs[i];
    buf[g.inputs[i].tensor].resize(t.nbytes() + 64);
  }
  auto ptr = [&](int id) -> const void* {
    const Tensor& t = g.tensor(id);
    if (t.is_const()) return t.data.ptr;
    auto it = buf.find(id);
    return it == buf.end() ? nullptr : it->second.data();
  };
  for (const Node& n : g.nodes) {
    std::string chosen;
    std::unique_ptr<Kernel> k = create_kernel(g, n, !ref_only, &chosen);
    if (!k) return ORKNN_ERR(kFail, "run_graph: no kernel for node '%s' (%s)", n.name.c_str(), op_name(n.op));
    KernelContext ctx;
    ctx.graph = &g;
    ctx.node = &n;
    for (int id : n.inputs) {
      if (id < 0) { ctx.inputs.push_back(nullptr); continue; }
      const void* p = ptr(id);
      if (!p) return ORKNN_ERR(kFail, "run_graph: node '%s' reads '%s' before it is computed", n.name.c_str(),
                               g.tensor(id).name.c_str());
      ctx.inputs.push_back(p);
    }
    for (int id : n.outputs) {
      auto& b = buf[id];
      b.assign(g.tensor(id).nbytes() + 64, 0);
      ctx.outputs.push_back(b.data());
    }
    ORKNN_RETURN_IF_ERROR(k->prepare(ctx));
    k->run(ctx);
    if (g.precision == FloatPrecision::kFp16)
      for (int id : n.outputs)
        if (g.tensor(id).dtype == DType::kF32)
          round_to_fp16(reinterpret_cast<float*>(buf[id].data()), static_cast<size_t>(g.tensor(id).numel()));
  }
  outputs->clear();
  for (int id : g.outputs) {
    const Tensor& t = g.tensor(id);
    const uint8_t* p = static_cast<const uint8_t*>(ptr(id));
    if (!p) return ORKNN_ERR(kFail, "run_graph: output '%s' was not computed", t.name.c_str());
    outputs->emplace_back(p, p + t.nbytes());
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
