// Subgraph cuts: ConvertOptions::subgraph_inputs/outputs (rknn_convert --inputs/--outputs, YAML
// inputs/outputs, Python load_onnx(inputs=, outputs=)).
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

}  // namespace
}  // namespace orknn::test
