// ONNX model edits before import (converter/onnx/model_edits.h): subgraph cuts
// (ConvertOptions::subgraph_inputs/outputs: rknn_convert --inputs/--outputs, YAML inputs/outputs,
// Python load_onnx(inputs=, outputs=)) and the batch size (ConvertOptions::batch_size).
#include <cmath>

#include "converter/converter_test_util.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;

// x -> Relu -> r -> Sigmoid -> s -> NotAnOp -> t   (outputs s and t; NotAnOp has no kernel)
B chain(bool with_value_info) {
  B b(13);
  b.input("x", {1, 3, 2, 2});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Sigmoid", {"r"}, {"s"}, "sigmoid");
  b.node("NotAnOp", {"s"}, {"t"}, "tail");
  b.output("s");
  b.output("t");
  if (with_value_info) {
    auto* vi = b.graph().add_value_info();
    vi->set_name("r");
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {1, 3, 2, 2}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return b;
}

const std::vector<float> kX = {-2, -1, 0, 1, 2, 3, -3, 4, 0.5f, -0.5f, 5, -5};

TEST(SubgraphCut, OutputsDropTheNodesAfterThem) {
  B b = chain(false);
  Graph g;
  Status st = convert(b, &g);
  ASSERT_FALSE(st.ok());  // the whole model reaches the op without a kernel
  EXPECT_NE(st.message().find("NotAnOp"), std::string::npos) << st.message();

  ConvertOptions o = exact_options();
  o.subgraph_outputs = {"s", "r"};
  ASSERT_OK(convert(b, &g, o));
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(output_tensor(g, 0).name, "s");
  EXPECT_EQ(output_tensor(g, 1).name, "r");
  const std::vector<float> s = run_f32(g, {kX}, 0), r = run_f32(g, {kX}, 1);
  ASSERT_EQ(s.size(), kX.size());
  for (size_t i = 0; i < kX.size(); ++i) {
    const float relu = kX[i] > 0 ? kX[i] : 0.f;
    EXPECT_EQ(r[i], relu);
    EXPECT_NEAR(s[i], 1.f / (1.f + std::exp(-relu)), 1e-6f);
  }
}

TEST(SubgraphCut, InputsStartAtAnInnerTensor) {
  B b = chain(true);
  Graph g;
  ConvertOptions o = exact_options();
  o.subgraph_inputs = {"r"};
  o.subgraph_outputs = {"s"};
  ASSERT_OK(convert(b, &g, o));
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.tensor(g.inputs[0].tensor).name, "r");
  EXPECT_EQ(g.tensor(g.inputs[0].tensor).shape, (Shape{1, 3, 2, 2}));  // from value_info
  EXPECT_EQ(count_op(g, OpId::Relu), 0);
  const std::vector<float> s = run_f32(g, {kX});
  ASSERT_EQ(s.size(), kX.size());
  for (size_t i = 0; i < kX.size(); ++i) EXPECT_NEAR(s[i], 1.f / (1.f + std::exp(-kX[i])), 1e-6f);
}

TEST(SubgraphCut, AnInputWithoutShapeIsPinnedByInputShapes) {
  B b = chain(false);
  Graph g;
  ConvertOptions o = exact_options();
  o.subgraph_inputs = {"r"};
  o.subgraph_outputs = {"s"};
  Status st = convert(b, &g, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'r' has no shape in the model"), std::string::npos) << st.message();
  o.input_shapes["#0"] = {1, 12};  // input_size_list names inputs by position
  ASSERT_OK(convert(b, &g, o));
  EXPECT_EQ(g.tensor(g.inputs[0].tensor).shape, (Shape{1, 12}));
}

TEST(SubgraphCut, BadNamesAndMissingInputsAreErrors) {
  B b = chain(true);
  Graph g;
  ConvertOptions o = exact_options();
  o.subgraph_outputs = {"nope"};
  Status st = convert(b, &g, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("subgraph output 'nope' is not a tensor of the model"), std::string::npos)
      << st.message();

  o = exact_options();
  o.subgraph_inputs = {"missing"};
  st = convert(b, &g, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("subgraph input 'missing'"), std::string::npos) << st.message();

  B two(13);
  two.input("a", {1, 4});
  two.input("b", {1, 4});
  two.node("Add", {"a", "b"}, {"y"});
  two.output("y");
  o = exact_options();
  o.subgraph_inputs = {"a"};
  st = convert(two, &g, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("need the model input 'b'"), std::string::npos) << st.message();
}

TEST(SubgraphCut, YamlInputsAndOutputs) {
  ConvertOptions o = exact_options();
  ASSERT_OK(load_config_yaml_text("{\"inputs\": [\"r\"], \"outputs\": [\"s\"], \"target_platform\": \"rk3562\"}",
                                  ".", &o));
  EXPECT_EQ(o.subgraph_inputs, (std::vector<std::string>{"r"}));
  EXPECT_EQ(o.subgraph_outputs, (std::vector<std::string>{"s"}));
  EXPECT_EQ(o.platform, "rk3562");
  B b = chain(true);
  Graph g;
  ASSERT_OK(convert(b, &g, o));
  EXPECT_EQ(g.nodes.size(), 1u);
}

// x [1,3,2,2] (or the given dim 0) -> Mul by a per-channel constant -> Relu -> y
B per_channel_model(int64_t batch) {
  B b(13);
  b.input("x", {batch, 3, 2, 2});
  b.init_f32("w", {1, 3, 1, 1}, {1.f, -2.f, 3.f});
  b.node("Mul", {"x", "w"}, {"m"}, "mul");
  b.node("Relu", {"m"}, {"y"}, "relu");
  b.output("y");
  return b;
}

TEST(BatchSize, EveryInputTakesTheBatchAndEachSampleComputesAlone) {
  Graph one, four;
  ASSERT_OK(convert(per_channel_model(1), &one));
  ConvertOptions o = exact_options();
  o.batch_size = 4;
  ASSERT_OK(convert(per_channel_model(1), &four, o));
  EXPECT_EQ(four.tensor(four.inputs[0].tensor).shape, (Shape{4, 3, 2, 2}));
  EXPECT_EQ(output_tensor(four).shape, (Shape{4, 3, 2, 2}));
  std::vector<float> x(48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.f;
  const std::vector<float> y = run_f32(four, {x});
  ASSERT_EQ(y.size(), 48u);
  for (int n = 0; n < 4; ++n) {
    const std::vector<float> xs(x.begin() + n * 12, x.begin() + (n + 1) * 12);
    const std::vector<float> want = run_f32(one, {xs});
    for (int i = 0; i < 12; ++i) {
      const float w = i < 4 ? 1.f : (i < 8 ? -2.f : 3.f);
      EXPECT_EQ(want[static_cast<size_t>(i)], std::max(0.f, xs[static_cast<size_t>(i)] * w));
      EXPECT_EQ(y[static_cast<size_t>(n * 12 + i)], want[static_cast<size_t>(i)]) << n << " " << i;
    }
  }
  // A dynamic batch takes it too, and an input shape given per sample (batch 1) is scaled.
  B dyn(13);
  dyn.input("x", {-1, 3, -1, -1});
  dyn.node("Relu", {"x"}, {"y"});
  dyn.output("y");
  ConvertOptions od = exact_options();
  od.batch_size = 2;
  od.input_shapes["x"] = {1, 3, 5, 5};
  Graph g;
  ASSERT_OK(convert(dyn, &g, od));
  EXPECT_EQ(g.tensor(g.inputs[0].tensor).shape, (Shape{2, 3, 5, 5}));
}

TEST(BatchSize, FixedBatchesAreErrorsNamingTheInputOrTheNode) {
  Graph g;
  ConvertOptions o = exact_options();
  o.batch_size = 4;
  Status st = convert(per_channel_model(2), &g, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'x' has batch 2 in the model"), std::string::npos) << st.message();
  // A Reshape that fixes the batch at 1 cannot take 4 samples.
  B r(13);
  r.input("x", {1, 3, 2, 2});
  r.init_i64("s", {2}, {1, 12});
  r.node("Reshape", {"x", "s"}, {"y"}, "flatten_to_1x12");
  r.output("y");
  st = convert(r, &g, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("flatten_to_1x12"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace orknn::test
