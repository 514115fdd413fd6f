// verify_graph: each structural rule has a graph that breaks exactly it, and the error names the
// node or tensor concerned. Graphs here are built by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "graph/verifier.h"

namespace orknn {
namespace {

bool has_infer(OpId op) { return find_op(op) && find_op(op)->infer; }

#define REQUIRE_INFER(...)                                                               \
  for (OpId op_ : {__VA_ARGS__})                                                         \
    if (!has_infer(op_)) GTEST_SKIP() << op_name(op_) << " has no infer function yet"

Node make_node(const std::string& name, OpId op, std::vector<int> in, std::vector<int> out) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// x[1,2,2,2] -> Relu "relu" -> r ; r + k(const [1,2,1,1]) -> Add "add" -> y (output).
// Tensor ids: x 0, k 1, r 2, y 3.
Graph relu_add_graph() {
  Graph g;
  int x = g.add_tensor("x", {1, 2, 2, 2}, DType::kF32);
  float kv[2] = {1.f, 2.f};
  int k = g.add_const("k", {1, 2, 1, 1}, DType::kF32, kv, sizeof kv);
  int r = g.add_tensor("r", {1, 2, 2, 2}, DType::kF32);
  int y = g.add_tensor("y", {1, 2, 2, 2}, DType::kF32);
  g.inputs.push_back({x, {}, {}});
  g.nodes.push_back(make_node("relu", OpId::Relu, {x}, {r}));
  g.nodes.push_back(make_node("add", OpId::Add, {r, k}, {y}));
  g.outputs = {y};
  return g;
}

// A graph without nodes, valid whatever infer functions exist: input x is also the output.
Graph no_node_graph() {
  Graph g;
  int x = g.add_tensor("x", {1, 3, 2, 2}, DType::kF32);
  g.inputs.push_back({x, {}, {}});
  g.outputs = {x};
  return g;
}

void expect_invalid(const Graph& g, const std::vector<std::string>& words) {
  Status st = verify_graph(g);
  ASSERT_EQ(st.code(), StatusCode::kInvalidModel) << "expected a rejection mentioning " << words[0];
  for (const std::string& w : words) EXPECT_NE(st.message().find(w), std::string::npos) << "'" << w << "' not in: " << st.message();
}

TEST(Verifier, ValidGraphsPass) {
  Status st = verify_graph(no_node_graph());
  EXPECT_TRUE(st.ok()) << st.message();
  REQUIRE_INFER(OpId::Relu, OpId::Add);
  st = verify_graph(relu_add_graph());
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(Verifier, InputIndexOutOfRange) {
  REQUIRE_INFER(OpId::Relu, OpId::Add);
  Graph g = relu_add_graph();
  g.nodes[1].inputs[1] = 99;
  expect_invalid(g, {"'add'", "Add", "99", "out of range"});
  g = relu_add_graph();
  g.nodes[0].inputs[0] = -7;
  expect_invalid(g, {"'relu'", "-7"});
}

TEST(Verifier, StructureIsCheckedBeforeInfer) {
  // No infer function is needed to see these are wrong (they would index out of bounds in one).
  Graph g = no_node_graph();
  int y = g.add_tensor("y", {1}, DType::kF32);
  g.nodes.push_back(make_node("bad", OpId::Relu, {12345}, {y}));
  g.outputs = {y};
  expect_invalid(g, {"'bad'", "12345"});
  g.nodes[0] = make_node("bad", OpId::Relu, {0}, {77});
  expect_invalid(g, {"'bad'", "77"});
}

TEST(Verifier, UseBeforeDefinition) {
  REQUIRE_INFER(OpId::Relu, OpId::Add);
  Graph g = relu_add_graph();
  std::swap(g.nodes[0], g.nodes[1]);  // add reads r before relu produces it
  expect_invalid(g, {"'add'", "'r'", "before"});
  // A node reading its own output.
  g = relu_add_graph();
  g.nodes[0].inputs = {2};
  expect_invalid(g, {"'relu'", "'r'"});
}

TEST(Verifier, OutputWrittenTwiceOrOverConstantOrInput) {
  REQUIRE_INFER(OpId::Relu, OpId::Add);
  Graph g = relu_add_graph();
  g.nodes[1].outputs = {2};  // r again
  expect_invalid(g, {"'add'", "'r'", "already produced", "'relu'"});
  g = relu_add_graph();
  g.nodes[0].outputs = {1};
  expect_invalid(g, {"'relu'", "constant"});
  g = relu_add_graph();
  g.nodes[0].outputs = {0};
  expect_invalid(g, {"'relu'", "graph input"});
  g = relu_add_graph();
  g.nodes[0].outputs = {};
  expect_invalid(g, {"'relu'", "no outputs"});
}

TEST(Verifier, WrongConstantSize) {
  Graph g = no_node_graph();
  float v[3] = {1, 2, 3};
  int c = g.add_const("c", {2, 2}, DType::kF32, v, sizeof v);  // needs 16 bytes, holds 12
  g.outputs.push_back(c);
  expect_invalid(g, {"'c'", "12", "16"});
}

TEST(Verifier, UnknownOpId) {
  Graph g = no_node_graph();
  int y = g.add_tensor("y", {1, 3, 2, 2}, DType::kF32);
  g.nodes.push_back(make_node("mystery", static_cast<OpId>(60000), {0}, {y}));
  g.outputs = {y};
  expect_invalid(g, {"'mystery'", "unknown op id 60000"});
}

// The verifier refuses a node whose op has no shape inference; no op may be without one (the
// check replaces a test of that refusal, which skipped while every op had its function).
TEST(Verifier, EveryOpHasAnInferFunction) {
  for (int i = 0; i < op_count(); ++i) EXPECT_NE(op_at(i)->infer, nullptr) << op_at(i)->name;
}

TEST(Verifier, StoredShapeOrDtypeDisagreesWithInfer) {
  REQUIRE_INFER(OpId::Relu, OpId::Add);
  Graph g = relu_add_graph();
  g.tensors[2].shape = {1, 2, 2, 3};
  expect_invalid(g, {"'relu'", "'r'", "[1,2,2,3]", "[1,2,2,2]"});
  g = relu_add_graph();
  g.tensors[3].dtype = DType::kI32;
  expect_invalid(g, {"'add'", "'y'", "int32", "float32"});
}

TEST(Verifier, InferRejectionIsReportedWithTheNode) {
  REQUIRE_INFER(OpId::Add);
  Graph g = relu_add_graph();
  g.nodes[1].inputs = {2};  // Add with one input
  expect_invalid(g, {"'add'", "Add"});
}

TEST(Verifier, NonNormalisedNodeIsRejected) {
  REQUIRE_INFER(OpId::Dropout);
  // Dropout's ratio as a constant input: infer moves it into the "ratio" attribute and marks the
  // input absent, so a stored node in this form has not been normalised.
  Graph g = no_node_graph();
  float ratio = 0.25f;
  int r = g.add_const("ratio", {}, DType::kF32, &ratio, sizeof ratio);
  int y = g.add_tensor("y", {1, 3, 2, 2}, DType::kF32);
  g.nodes.push_back(make_node("drop", OpId::Dropout, {0, r}, {y}));
  g.outputs = {y};
  expect_invalid(g, {"'drop'", "not normalised"});
  // After running infer (what the converter does) the same node passes.
  Status st = find_op(OpId::Dropout)->infer(g, g.nodes[0]);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<int>{0, -1}));
  st = verify_graph(g);
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(Verifier, TensorRules) {
  {
    Graph g = no_node_graph();
    g.tensors[0].dtype = static_cast<DType>(42);
    expect_invalid(g, {"'x'", "dtype 42"});
  }
  {
    Graph g = no_node_graph();
    g.tensors[0].shape = {1, -3, 2, 2};
    expect_invalid(g, {"'x'", "[1,-3,2,2]"});
  }
  {
    Graph g = no_node_graph();
    g.tensors[0].shape = {int64_t{1} << 30, int64_t{1} << 30, 4};  // 2^62 elements
    expect_invalid(g, {"'x'", "2^40"});
  }
  {
    Graph g = no_node_graph();
    g.tensors[0].shape = {INT64_MAX, INT64_MAX, 0};  // empty, however large
    EXPECT_TRUE(verify_graph(g).ok());
  }
  {
    Graph g = no_node_graph();
    g.tensors[0].shape = Shape(17, 1);
    expect_invalid(g, {"'x'", "rank 17"});
  }
}

TEST(Verifier, QuantRules) {
  auto quantized = [] {
    Graph g = no_node_graph();
    g.tensors[0].dtype = DType::kI8;
    g.tensors[0].quant.scale = {0.5f};
    g.tensors[0].quant.zero_point = {-3};
    return g;
  };
  EXPECT_TRUE(verify_graph(quantized()).ok());
  {
    Graph g = quantized();
    g.tensors[0].quant.zero_point = {};
    expect_invalid(g, {"'x'", "zero points"});
  }
  {
    Graph g = quantized();
    g.tensors[0].quant.scale = {0.f};
    expect_invalid(g, {"'x'", "scale"});
  }
  {
    Graph g = quantized();
    g.tensors[0].quant.scale = {NAN};
    expect_invalid(g, {"'x'", "scale"});
  }
  {
    Graph g = quantized();
    g.tensors[0].quant.zero_point = {200};  // int8
    expect_invalid(g, {"'x'", "200", "int8"});
  }
  {
    Graph g = quantized();  // per channel along dim 1 (3 channels)
    g.tensors[0].quant.axis = 1;
    g.tensors[0].quant.scale = {0.5f, 0.25f, 1.f};
    g.tensors[0].quant.zero_point = {0, 0, 0};
    EXPECT_TRUE(verify_graph(g).ok());
    g.tensors[0].quant.axis = 2;  // dim 2 is 2, not 3
    expect_invalid(g, {"'x'", "3 quantization scales"});
    g.tensors[0].quant.axis = 4;
    expect_invalid(g, {"'x'", "axis 4"});
    g.tensors[0].quant.axis = -1;
    expect_invalid(g, {"'x'", "per-tensor"});
  }
}

TEST(Verifier, GraphInputAndOutputRules) {
  {
    Graph g = no_node_graph();
    g.inputs[0].mean = {1.f, 2.f, 3.f};
    g.inputs[0].std = {1.f};
    EXPECT_TRUE(verify_graph(g).ok());
    g.inputs[0].mean = {1.f, 2.f};  // 3 channels
    expect_invalid(g, {"graph input 0", "'x'", "2 mean values"});
  }
  {
    Graph g = no_node_graph();
    g.inputs[0].std = {1.f, 0.f, 1.f};
    expect_invalid(g, {"graph input 0", "std"});
  }
  {
    Graph g = no_node_graph();
    g.inputs[0].mean = {INFINITY};
    expect_invalid(g, {"graph input 0", "finite"});
  }
  {
    Graph g = no_node_graph();
    g.inputs.push_back(g.inputs[0]);
    expect_invalid(g, {"graph input 1", "twice"});
  }
  {
    Graph g = no_node_graph();
    g.inputs[0].tensor = 5;
    expect_invalid(g, {"graph input 0", "5", "out of range"});
  }
  {
    Graph g = no_node_graph();
    float v = 1.f;
    int c = g.add_const("c", {}, DType::kF32, &v, sizeof v);
    g.inputs.push_back({c, {}, {}});
    expect_invalid(g, {"graph input 1", "'c'", "constant"});
  }
  {
    Graph g = no_node_graph();
    g.outputs = {};
    expect_invalid(g, {"no outputs"});
  }
  {
    Graph g = no_node_graph();
    g.add_tensor("dangling", {1}, DType::kF32);
    g.outputs = {1};
    expect_invalid(g, {"graph output 0", "'dangling'", "never produced"});
  }
  {
    Graph g = no_node_graph();
    g.outputs = {-1};
    expect_invalid(g, {"graph output 0", "-1"});
  }
}

TEST(Verifier, AbsentOptionalOutputIsAllowed) {
  REQUIRE_INFER(OpId::Dropout);
  // Dropout's second output (the mask) is optional: -1 marks it absent.
  Graph g = no_node_graph();
  int y = g.add_tensor("y", {1, 3, 2, 2}, DType::kF32);
  g.nodes.push_back(make_node("drop", OpId::Dropout, {0}, {y, -1}));
  g.outputs = {y};
  Status st = verify_graph(g);
  EXPECT_TRUE(st.ok()) << st.message();
  g.nodes[0].outputs = {y, -2};
  expect_invalid(g, {"'drop'", "-2"});
}

}  // namespace
}  // namespace orknn
