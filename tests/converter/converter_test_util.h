// Shared by tests/converter/*_test.cc: convert an in-memory model and run it with reference kernels.
#pragma once
#include <gtest/gtest.h>

#include "converter/convert.h"
#include "converter/graph_runner.h"
#include "converter/onnx_builder.h"
#include "testutil/status_assert.h"

namespace orknn::test {

// fp32, no fusion: what the ONNX file says, computed exactly.
inline ConvertOptions exact_options() {
  ConvertOptions o;
  o.precision = FloatPrecision::kFp32;
  return o;
}

inline Status convert(const OnnxBuilder& b, Graph* g, const ConvertOptions& opts = exact_options()) {
  std::string bytes = b.bytes();
  return convert_onnx_bytes(bytes.data(), bytes.size(), opts, g);
}

// Runs a converted graph on float inputs and returns output `which` as floats.
inline std::vector<float> run_f32(const Graph& g, const std::vector<std::vector<float>>& inputs, size_t which = 0) {
  std::vector<std::vector<uint8_t>> in, out;
  for (const auto& v : inputs) in.push_back(to_bytes(v));
  Status st = run_graph(g, in, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok() || which >= out.size()) return {};
  return from_bytes<float>(out[which]);
}

inline int count_op(const Graph& g, OpId op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op == op;
  return n;
}

inline const Tensor& output_tensor(const Graph& g, size_t i = 0) { return g.tensor(g.outputs.at(i)); }

}  // namespace orknn::test
