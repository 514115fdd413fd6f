// Already-quantized ONNX models (QuantizeLinear/DequantizeLinear pairs) convert without a data
// set and keep the model's scales and zero points exactly: int8 and uint8 (mapped to int8 by
// q - 128, zp - 128), per-tensor and per-channel weights, int32 biases.
#include <algorithm>
#include <cmath>

#include "converter/converter_test_util.h"
#include "converter/quant/qdq_import.h"
#include "kernels/kernel.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;

template <typename T>
void init_raw(B& b, const std::string& name, const std::vector<int64_t>& dims, int elem, const std::vector<T>& v) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

struct QdqCase {
  bool u8;           // activations and weights uint8 (else int8)
  bool per_channel;  // weights: one scale per output channel (axis 0), else one scale
};

// x -> Q/DQ -> Conv(DQ(w), DQ(bias int32)) -> Relu -> Q/DQ -> y
// x [1,2,3,3], w [3,2,1,1].
struct QdqModel {
  float sx = 0.02f, sy = 0.05f;
  int32_t zx = 3, zy = -128;  // int8 values (the uint8 model stores zp + 128)
  std::vector<float> sw;      // weight scales
  std::vector<int8_t> wq;     // int8 weight values (uint8 model: + 128)
  std::vector<int32_t> bq = {100, -250, 7};
  B b{13};

  explicit QdqModel(const QdqCase& c) {
    sw = c.per_channel ? std::vector<float>{0.01f, 0.004f, 0.03f} : std::vector<float>{0.01f};
    wq = {12, -127, 64, 3, -5, 127};
    const int act_type = c.u8 ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
    b.input("x", {1, 2, 3, 3});
    b.init_f32("sx", {}, {sx});
    b.init_f32("sy", {}, {sy});
    if (c.u8) {
      init_raw<uint8_t>(b, "zx", {}, act_type, {static_cast<uint8_t>(zx + 128)});
      init_raw<uint8_t>(b, "zy", {}, act_type, {static_cast<uint8_t>(zy + 128)});
      std::vector<uint8_t> wu;
      for (int8_t q : wq) wu.push_back(static_cast<uint8_t>(q + 128));
      init_raw<uint8_t>(b, "wq", {3, 2, 1, 1}, act_type, wu);
      init_raw<uint8_t>(b, "zw", {static_cast<int64_t>(sw.size())}, act_type, std::vector<uint8_t>(sw.size(), 128));
    } else {
      init_raw<int8_t>(b, "zx", {}, act_type, {static_cast<int8_t>(zx)});
      init_raw<int8_t>(b, "zy", {}, act_type, {static_cast<int8_t>(zy)});
      init_raw<int8_t>(b, "wq", {3, 2, 1, 1}, act_type, wq);
      init_raw<int8_t>(b, "zw", {static_cast<int64_t>(sw.size())}, act_type, std::vector<int8_t>(sw.size(), 0));
    }
    b.init_f32("sw", {static_cast<int64_t>(sw.size())}, sw);
    std::vector<float> sb;
    for (int ch = 0; ch < 3; ++ch) sb.push_back(sx * sw[c.per_channel ? ch : 0]);
    b.init_f32("sb", {3}, sb);
    init_raw<int32_t>(b, "bq", {3}, onnx::TensorProto::INT32, bq);
    b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"}, "qx");
    b.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"}, "dqx");
    auto* dqw = b.node("DequantizeLinear", {"wq", "sw", "zw"}, {"wd"}, "dqw");
    if (c.per_channel) B::attr_i(dqw, "axis", 0);
    auto* dqb = b.node("DequantizeLinear", {"bq", "sb"}, {"bd"}, "dqb");
    B::attr_i(dqb, "axis", 0);
    b.node("Conv", {"xd", "wd", "bd"}, {"c"}, "conv");
    b.node("Relu", {"c"}, {"r"}, "relu");
    b.node("QuantizeLinear", {"r", "sy", "zy"}, {"rq"}, "qy");
    b.node("DequantizeLinear", {"rq", "sy", "zy"}, {"y"}, "dqy");
    b.output("y");
  }
};

class Qdq : public ::testing::TestWithParam<QdqCase> {};

TEST_P(Qdq, ConvertsWithoutDataSetKeepingTheModelsParameters) {
  if (!has_quantized_ref_kernel(OpId::Conv) || !has_quantized_ref_kernel(OpId::QuantizeLinear))
    GTEST_SKIP() << "no int8 Conv / QuantizeLinear kernel in this build";
  const QdqCase c = GetParam();
  QdqModel m(c);
  Graph g;
  ConvertReport report;
  ConvertOptions o = exact_options();  // no --quantize, no data set
  std::string bytes = m.b.bytes();
  ASSERT_OK(convert_onnx_bytes(bytes.data(), bytes.size(), o, &g, &report));

  EXPECT_EQ(count_op(g, OpId::QuantizeLinear), 0);
  EXPECT_EQ(count_op(g, OpId::DequantizeLinear), 0);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.op, OpId::Conv);
  EXPECT_EQ(conv.attrs.get_string("fused_act", ""), "Relu");
  ASSERT_EQ(report.layer_precision.size(), 1u);
  EXPECT_EQ(report.layer_precision[0].precision, "int8") << report.layer_precision[0].why;
  EXPECT_EQ(report.calibration_samples, 0);

  const Tensor& x = g.tensor(g.inputs[0].tensor);
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, DType::kI8);
  ASSERT_EQ(x.quant.scale.size(), 1u);
  EXPECT_EQ(x.quant.scale[0], m.sx);
  EXPECT_EQ(x.quant.zero_point[0], m.zx);

  const Tensor& w = g.tensor(conv.inputs[1]);
  ASSERT_EQ(w.dtype, DType::kI8);
  ASSERT_EQ(w.quant.scale, m.sw);
  if (c.per_channel) EXPECT_EQ(w.quant.axis, 0);
  for (int32_t zp : w.quant.zero_point) EXPECT_EQ(zp, 0);
  for (size_t i = 0; i < m.wq.size(); ++i) EXPECT_EQ(w.const_ptr<int8_t>()[i], m.wq[i]) << i;

  const Tensor& bias = g.tensor(conv.inputs[2]);
  ASSERT_EQ(bias.dtype, DType::kI32);
  for (int ch = 0; ch < 3; ++ch) {
    EXPECT_EQ(bias.const_ptr<int32_t>()[ch], m.bq[ch]) << ch;
    EXPECT_EQ(bias.quant.scale[ch], m.sx * m.sw[c.per_channel ? ch : 0]) << ch;
  }

  const Tensor& y = output_tensor(g);
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.dtype, DType::kI8);
  ASSERT_EQ(y.quant.scale.size(), 1u);
  EXPECT_EQ(y.quant.scale[0], m.sy);
  EXPECT_EQ(y.quant.zero_point[0], m.zy);
}

INSTANTIATE_TEST_SUITE_P(Variants, Qdq,
                         ::testing::Values(QdqCase{false, true}, QdqCase{false, false}, QdqCase{true, true},
                                           QdqCase{true, false}),
                         [](const ::testing::TestParamInfo<QdqCase>& i) {
                           return std::string(i.param.u8 ? "uint8" : "int8") + (i.param.per_channel ? "_per_channel" : "_per_tensor");
                         });

TEST(QdqImport, Int8OutputAndWeightsOutsideTheSymmetricRange) {
  if (!has_quantized_ref_kernel(OpId::Conv) || !has_quantized_ref_kernel(OpId::QuantizeLinear))
    GTEST_SKIP() << "no int8 Conv / QuantizeLinear kernel in this build";
  QdqModel m(QdqCase{false, true});
  m.wq[1] = -128;  // numerics.md keeps weights in [-127, 127]: quantized again from the float values
  std::vector<int8_t> wq = m.wq;
  m.b.graph().mutable_initializer()->erase(
      std::find_if(m.b.graph().mutable_initializer()->begin(), m.b.graph().mutable_initializer()->end(),
                   [](const onnx::TensorProto& t) { return t.name() == "wq"; }));
  init_raw<int8_t>(m.b, "wq", {3, 2, 1, 1}, onnx::TensorProto::INT8, wq);
  // the model ends in QuantizeLinear: an int8 output "rq" instead of the dequantized "y"
  m.b.graph().mutable_output()->Clear();
  m.b.output("rq");
  Graph g;
  ConvertReport report;
  std::string bytes = m.b.bytes();
  ASSERT_OK(convert_onnx_bytes(bytes.data(), bytes.size(), exact_options(), &g, &report));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(report.layer_precision.at(0).precision, "int8") << report.layer_precision.at(0).why;
  const Tensor& y = output_tensor(g);
  EXPECT_EQ(y.name, "rq");
  EXPECT_EQ(y.dtype, DType::kI8);
  EXPECT_EQ(y.quant.scale[0], m.sy);
  EXPECT_EQ(y.quant.zero_point[0], m.zy);
  // channel 0 held the -128: max|w| = 128 * 0.01 -> scale 1.28 / 127, values rne(w / scale)
  const Tensor& w = g.tensor(g.nodes[0].inputs[1]);
  const float s0 = (128.f * 0.01f) / 127.f;
  EXPECT_EQ(w.quant.scale[0], s0);
  EXPECT_EQ(w.const_ptr<int8_t>()[1], -127);
  EXPECT_EQ(w.const_ptr<int8_t>()[0], static_cast<int8_t>(std::nearbyint((12.f * 0.01f) / s0)));
  // every channel is quantized again from its float values: channel 1 holds 64 and 3 (x 0.004)
  const float s1 = (64.f * 0.004f) / 127.f;
  EXPECT_EQ(w.quant.scale[1], s1);
  EXPECT_EQ(w.const_ptr<int8_t>()[2], 127);
  EXPECT_EQ(w.const_ptr<int8_t>()[3], static_cast<int8_t>(std::nearbyint((3.f * 0.004f) / s1)));
}

TEST(QdqImport, FloatLayersAndNodesWithoutParametersStayFloat) {
  if (!has_quantized_ref_kernel(OpId::Conv) || !has_quantized_ref_kernel(OpId::QuantizeLinear))
    GTEST_SKIP() << "no int8 Conv / QuantizeLinear kernel in this build";
  QdqModel m(QdqCase{false, true});
  // y -> Softmax: Softmax's output has no parameters (and no int8 kernel)
  m.b.graph().mutable_output()->Clear();
  m.b.node("Softmax", {"y"}, {"prob"}, "softmax");
  m.b.output("prob");
  Graph g;
  ConvertReport report;
  ConvertOptions o = exact_options();
  o.quant.float_layers = {"conv"};
  std::string bytes = m.b.bytes();
  ASSERT_OK(convert_onnx_bytes(bytes.data(), bytes.size(), o, &g, &report));
  for (const auto& r : report.layer_precision) EXPECT_EQ(r.precision, "float") << r.node;
  // the Conv runs in float on the dequantized weights: float(q) * s
  const Node* conv = nullptr;
  for (const Node& n : g.nodes)
    if (n.op == OpId::Conv) conv = &n;
  ASSERT_NE(conv, nullptr);
  const Tensor& w = g.tensor(conv->inputs[1]);
  ASSERT_EQ(w.dtype, DType::kF32);
  EXPECT_EQ(w.const_ptr<float>()[1], static_cast<float>(m.wq[1]) * m.sw[0]);
  EXPECT_EQ(w.const_ptr<float>()[2], static_cast<float>(m.wq[2]) * m.sw[1]);
}

}  // namespace
}  // namespace orknn::test
