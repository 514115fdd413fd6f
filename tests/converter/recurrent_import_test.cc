// LSTM / GRU / RNN import (converter/onnx/ops/recurrent.cc): the ONNX "activations" list of
// strings becomes the IR's comma-separated string, an unnamed Y still gets a tensor, and bad
// attributes are refused with the ONNX node's name. The numbers are tests/ops/recurrent_test.cc's
// and the conformance suite's.
#include "converter/converter_test_util.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;

// X [2, 1, 3] -> RNN (hidden 2, bidirectional); Y unnamed, Y_h the graph output.
B rnn_model(const std::vector<std::string>& activations, bool activations_as_strings = true) {
  B b(14);
  b.input("x", {2, 1, 3});
  b.init_f32("w", {2, 2, 3}, {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f, 0.7f, 0.1f, -0.3f, 0.2f, 0.2f, 0.1f});
  b.init_f32("r", {2, 2, 2}, {0.1f, 0.2f, -0.3f, 0.4f, 0.5f, 0.1f, 0.2f, -0.1f});
  auto* n = b.node("RNN", {"x", "w", "r"}, {"", "y_h"}, "my_rnn");
  B::attr_i(n, "hidden_size", 2);
  B::attr_s(n, "direction", "bidirectional");
  if (!activations.empty()) {
    auto* a = n->add_attribute();
    a->set_name("activations");
    if (activations_as_strings) {
      a->set_type(onnx::AttributeProto::STRINGS);
      for (const std::string& s : activations) a->add_strings(s);
    } else {
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(activations[0]);
    }
  }
  b.output("y_h");
  return b;
}

TEST(RecurrentImport, ActivationsListBecomesOneString) {
  Graph g;
  ASSERT_OK(convert(rnn_model({"relu", "Softsign"}), &g));
  ASSERT_EQ(count_op(g, OpId::RNN), 1);
  const Node* rnn = nullptr;
  for (const Node& n : g.nodes)
    if (n.op == OpId::RNN) rnn = &n;
  EXPECT_EQ(rnn->attrs.get_string("activations", ""), "Relu,Softsign");
  EXPECT_EQ(output_tensor(g).shape, (Shape{2, 1, 2}));
  // It runs, and the forward direction's Relu keeps its state non-negative.
  const std::vector<float> y_h = run_f32(g, {{1, 1, 1, 1, 1, 1}});
  ASSERT_EQ(y_h.size(), 4u);
  EXPECT_GE(y_h[0], 0.f);
  EXPECT_GE(y_h[1], 0.f);
}

TEST(RecurrentImport, BadActivationsNameTheNode) {
  Graph g;
  Status st = convert(rnn_model({"Tanh", "Swish"}), &g);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("my_rnn"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'Swish'"), std::string::npos) << st.message();

  st = convert(rnn_model({"Tanh"}), &g);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("my_rnn"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("expected 2"), std::string::npos) << st.message();

  st = convert(rnn_model({"Tanh"}, /*activations_as_strings=*/false), &g);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("my_rnn"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("list of strings"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace orknn::test
