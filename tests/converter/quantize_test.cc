// The INT8 rewrite (converter/quant/quantize.h): which nodes become int8, the parameters they
// get (from given ranges, with the sharing rules), quantized weights and biases (expected values
// computed here from numerics.md's formulas), Q/DQ edges, --float-layers, and the numbers of a
// quantized conv net against its float graph.
#include <algorithm>
#include <cmath>
#include <random>

#include "converter/converter_test_util.h"
#include "converter/quant/quantize.h"
#include "runtime/executor.h"
#include "testutil/op_harness.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;
using Ranges = std::map<int, std::pair<float, float>>;

// numerics.md / observer.h: lo = min(lo, 0), hi = max(hi, 0), scale = (hi - lo) / 255,
// zp = sat8(rne(-128 - lo / scale)), float32.
void expected_act(float lo, float hi, float* scale, int32_t* zp) {
  lo = std::min(lo, 0.f);
  hi = std::max(hi, 0.f);
  *scale = (hi - lo) / 255.f;
  const float z = std::nearbyint(-128.f - lo / *scale);
  *zp = static_cast<int32_t>(std::max(-128.f, std::min(127.f, z)));
}

Graph float_graph(const B& b) {
  Graph g;
  Status st = convert(b, &g);  // fp32, passes on (Relu fused into Conv)
  EXPECT_TRUE(st.ok()) << st.message();
  return g;
}

int tensor_id(const Graph& g, const std::string& name) {
  const int id = g.find_tensor(name);
  EXPECT_GE(id, 0) << "no tensor " << name;
  return id;
}

const Node* node_named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

const Node* producer_of(const Graph& g, const std::string& tensor) {
  const int id = g.find_tensor(tensor);
  for (const Node& n : g.nodes)
    for (int o : n.outputs)
      if (o == id) return &n;
  return nullptr;
}

// Min/max of every non-constant float tensor over `samples` random inputs (the float graph run
// with reference kernels): the "calibration" of these tests.
Ranges observe(const Graph& g, int samples, uint32_t seed) {
  Ranges r;
  std::unique_ptr<Executor> runner;
  Status st = Executor::create_keep_all(g, false, 1, &runner);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return r;
  for (int s = 0; s < samples; ++s) {
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Tensor& t = g.tensor(g.inputs[i].tensor);
      std::vector<float> x = random_floats(static_cast<size_t>(t.numel()), seed + 97 * s + static_cast<uint32_t>(i), -1.f, 1.f);
      EXPECT_TRUE(runner->set_input(i, x.data(), x.size() * 4).ok());
    }
    EXPECT_TRUE(runner->run().ok());
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      const Tensor& tensor = g.tensors[t];
      if (tensor.is_const() || tensor.dtype != DType::kF32) continue;
      const float* p = runner->data_as<float>(static_cast<int>(t));
      if (!p) continue;
      auto it = r.find(static_cast<int>(t));
      float lo = it == r.end() ? p[0] : it->second.first, hi = it == r.end() ? p[0] : it->second.second;
      for (int64_t k = 0; k < tensor.numel(); ++k) {
        lo = std::min(lo, p[k]);
        hi = std::max(hi, p[k]);
      }
      r[static_cast<int>(t)] = {lo, hi};
    }
  }
  return r;
}

const ConvertReport::LayerPrecision* row(const std::vector<ConvertReport::LayerPrecision>& table,
                                         const std::string& node) {
  for (const auto& r : table)
    if (r.node == node) return &r;
  return nullptr;
}

// x [1,2,6,6] -> Conv(4, 3x3, pad 1) -> Relu -> MaxPool 2x2 -> Reshape [1,36] -> Softmax -> y
B conv_pool_softmax(std::vector<float>* w_out, std::vector<float>* b_out) {
  B b(13);
  b.input("x", {1, 2, 6, 6});
  std::vector<float> w = random_floats(4 * 2 * 9, 7, -0.5f, 0.5f);
  w[5] = 0.9f;    // channel 0's largest magnitude
  w[20] = -1.1f;  // channel 1's
  std::vector<float> bias = {0.1f, -0.2f, 0.3f, 0.05f};
  b.init_f32("w", {4, 2, 3, 3}, w);
  b.init_f32("b", {4}, bias);
  b.init_i64("shape", {2}, {1, 36});
  auto* conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  B::attr_ints(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  auto* mp = b.node("MaxPool", {"r"}, {"p"}, "pool");
  B::attr_ints(mp, "kernel_shape", {2, 2});
  B::attr_ints(mp, "strides", {2, 2});
  b.node("Reshape", {"p", "shape"}, {"flat"}, "reshape");
  b.node("Softmax", {"flat"}, {"y"}, "softmax");
  b.output("y");
  if (w_out) *w_out = w;
  if (b_out) *b_out = bias;
  return b;
}

TEST(Quantize, ConvPoolReshapeSoftmaxStructureAndParameters) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  std::vector<float> w, bias;
  Graph g = float_graph(conv_pool_softmax(&w, &bias));
  ASSERT_OK(prepare_for_quantization(g, [](const Node&) { return true; }));
  Ranges r;
  r[tensor_id(g, "x")] = {-1.f, 1.f};
  r[tensor_id(g, "r")] = {0.f, 3.f};  // the Conv (Relu fused) writes "r"
  r[tensor_id(g, "p")] = {0.f, 2.5f};
  r[tensor_id(g, "flat")] = {0.f, 2.5f};
  r[tensor_id(g, "y")] = {0.f, 1.f};
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));

  // x: read only by the int8 Conv -> an int8 graph input
  const Tensor& x = g.tensor(g.inputs[0].tensor);
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, DType::kI8);
  float sx;
  int32_t zx;
  expected_act(-1.f, 1.f, &sx, &zx);
  ASSERT_EQ(x.quant.scale.size(), 1u);
  EXPECT_EQ(x.quant.scale[0], sx);
  EXPECT_EQ(x.quant.zero_point[0], zx);

  const Node* conv = node_named(g, "conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.get_string("fused_act", ""), "Relu");
  const Tensor& wq = g.tensor(conv->inputs[1]);
  ASSERT_EQ(wq.dtype, DType::kI8);
  ASSERT_EQ(wq.quant.scale.size(), 4u);
  EXPECT_EQ(wq.quant.axis, 0);
  for (int c = 0; c < 4; ++c) {
    float m = 0.f;
    for (int k = 0; k < 18; ++k) m = std::max(m, std::fabs(w[c * 18 + k]));
    const float sw = m / 127.f;
    EXPECT_EQ(wq.quant.scale[c], sw) << c;
    EXPECT_EQ(wq.quant.zero_point[c], 0);
    for (int k = 0; k < 18; ++k) {
      const float q = std::max(-127.f, std::min(127.f, std::nearbyint(w[c * 18 + k] / sw)));
      EXPECT_EQ(wq.const_ptr<int8_t>()[c * 18 + k], static_cast<int8_t>(q)) << c << "," << k;
    }
    const Tensor& bq = g.tensor(conv->inputs[2]);
    ASSERT_EQ(bq.dtype, DType::kI32);
    const float sb = sx * sw;
    EXPECT_EQ(bq.quant.scale[c], sb);
    EXPECT_EQ(bq.const_ptr<int32_t>()[c], static_cast<int32_t>(std::nearbyint(static_cast<double>(bias[c]) / sb)));
  }
  // the Conv's output has the range's parameters; MaxPool and Reshape pass them on
  float sr;
  int32_t zr;
  expected_act(0.f, 3.f, &sr, &zr);
  for (const char* name : {"r", "p", "flat"}) {
    const Tensor& t = g.tensor(tensor_id(g, name));
    EXPECT_EQ(t.dtype, DType::kI8) << name;
    ASSERT_EQ(t.quant.scale.size(), 1u) << name;
    EXPECT_EQ(t.quant.scale[0], sr) << name;
    EXPECT_EQ(t.quant.zero_point[0], zr) << name;
  }
  // Softmax stays float, behind a DequantizeLinear of "flat"
  const Node* sm = node_named(g, "softmax");
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(g.tensor(sm->inputs[0]).name, "flat_dequant");
  EXPECT_EQ(g.tensor(sm->inputs[0]).dtype, DType::kF32);
  const Node* dq = producer_of(g, "flat_dequant");
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->op, OpId::DequantizeLinear);
  EXPECT_EQ(g.tensor(dq->inputs[0]).name, "flat");
  EXPECT_EQ(output_tensor(g).name, "y");
  EXPECT_EQ(output_tensor(g).dtype, DType::kF32);
  // no float weights are left behind
  for (const Tensor& t : g.tensors) EXPECT_FALSE(t.is_const() && t.dtype == DType::kF32 && t.numel() > 4) << t.name;

  ASSERT_EQ(table.size(), 4u);
  EXPECT_EQ(table[0].node, "conv");
  EXPECT_EQ(table[0].precision, "int8");
  EXPECT_EQ(row(table, "pool")->precision, "int8");
  EXPECT_EQ(row(table, "reshape")->precision, "int8");
  EXPECT_EQ(row(table, "softmax")->precision, "float");
  EXPECT_FALSE(row(table, "softmax")->why.empty());
}

TEST(Quantize, PerLayerWeightsHaveOneScale) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  std::vector<float> w, bias;
  Graph g = float_graph(conv_pool_softmax(&w, &bias));
  Ranges r = observe(g, 2, 1);
  QuantizeSettings s;
  s.weights = WeightGranularity::kPerTensor;
  ASSERT_OK(quantize_graph(g, r, s, nullptr));
  const Tensor& wq = g.tensor(node_named(g, "conv")->inputs[1]);
  ASSERT_EQ(wq.quant.scale.size(), 1u);
  EXPECT_EQ(wq.quant.scale[0], 1.1f / 127.f);  // the largest |w| of the whole tensor
  EXPECT_EQ(wq.const_ptr<int8_t>()[20], -127);
}

TEST(Quantize, FloatLayersKeepNodesFloatWithQuantizeDequantizeAtTheirEdges) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  Graph g = float_graph(conv_pool_softmax(nullptr, nullptr));
  Ranges r = observe(g, 2, 3);
  const int p_id = tensor_id(g, "p");
  QuantizeSettings s;
  s.float_layers = {"pool"};
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, s, &table));
  EXPECT_EQ(row(table, "conv")->precision, "int8");
  EXPECT_EQ(row(table, "pool")->precision, "float");
  EXPECT_EQ(row(table, "pool")->why, "--float-layers");
  EXPECT_EQ(row(table, "reshape")->precision, "int8");
  // conv (int8) -> r -> DQ -> r_dequant -> pool (float) -> p -> Q -> p_quant -> reshape (int8)
  const Node* pool = node_named(g, "pool");
  EXPECT_EQ(g.tensor(pool->inputs[0]).name, "r_dequant");
  EXPECT_EQ(g.tensor(pool->outputs[0]).name, "p");
  EXPECT_EQ(g.tensor(pool->outputs[0]).dtype, DType::kF32);
  EXPECT_EQ(producer_of(g, "r_dequant")->op, OpId::DequantizeLinear);
  const Node* reshape = node_named(g, "reshape");
  EXPECT_EQ(g.tensor(reshape->inputs[0]).name, "p_quant");
  EXPECT_EQ(producer_of(g, "p_quant")->op, OpId::QuantizeLinear);
  EXPECT_EQ(g.tensor(tensor_id(g, "p_quant")).dtype, DType::kI8);
  // p_quant carries p's own range (MaxPool is float, so nothing is passed through it)
  float sp;
  int32_t zp;
  expected_act(r.at(p_id).first, r.at(p_id).second, &sp, &zp);
  EXPECT_EQ(g.tensor(tensor_id(g, "p_quant")).quant.scale[0], sp);

  // a conv kept in float: the graph input stays float and the conv's weights stay float
  Graph h = float_graph(conv_pool_softmax(nullptr, nullptr));
  Ranges rh = observe(h, 2, 3);
  s.float_layers = {"conv"};
  ASSERT_OK(quantize_graph(h, rh, s, &table));
  EXPECT_EQ(h.tensor(h.inputs[0].tensor).dtype, DType::kF32);
  EXPECT_EQ(h.tensor(node_named(h, "conv")->inputs[1]).dtype, DType::kF32);
  EXPECT_EQ(row(table, "conv")->why, "--float-layers");
}

TEST(Quantize, UnknownFloatLayerNameIsAnErrorListingNodeNames) {
  Graph g = float_graph(conv_pool_softmax(nullptr, nullptr));
  QuantizeSettings s;
  s.float_layers = {"pooll"};
  Status st = quantize_graph(g, observe(g, 1, 5), s, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'pooll'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'pool'"), std::string::npos) << st.message();
  // the name of a tensor a node writes is accepted too ("r": the Conv, which absorbed the Relu)
  Graph h = float_graph(conv_pool_softmax(nullptr, nullptr));
  s.float_layers = {"r"};
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(h, observe(h, 1, 5), s, &table));
  EXPECT_EQ(row(table, "conv")->precision, "float");
}

TEST(Quantize, TensorWithoutRangeKeepsItsNodesFloat) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  Graph g = float_graph(conv_pool_softmax(nullptr, nullptr));
  Ranges r = observe(g, 1, 9);
  r.erase(tensor_id(g, "p"));
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));
  EXPECT_EQ(row(table, "conv")->precision, "int8");
  // MaxPool's output takes its input's parameters, so only the range-less data matters where
  // nothing passes parameters on: reshape reads p, which MaxPool (int8) writes with r's.
  EXPECT_EQ(row(table, "pool")->precision, "int8");
  Graph h = float_graph(conv_pool_softmax(nullptr, nullptr));
  Ranges rh = observe(h, 1, 9);
  rh.erase(tensor_id(h, "r"));
  ASSERT_OK(quantize_graph(h, rh, QuantizeSettings{}, &table));
  EXPECT_EQ(row(table, "conv")->precision, "float");
  EXPECT_NE(row(table, "conv")->why.find("'r'"), std::string::npos) << row(table, "conv")->why;
  EXPECT_EQ(row(table, "pool")->precision, "float");
}

// a, b [1,2,4,4] -> Conv each -> Concat(axis 1) -> Conv -> y; a also feeds Concat directly.
B concat_model() {
  B b(13);
  b.input("a", {1, 2, 4, 4});
  b.init_f32("w1", {2, 2, 1, 1}, random_floats(4, 11, -1.f, 1.f));
  b.init_f32("w2", {2, 2, 1, 1}, random_floats(4, 12, -1.f, 1.f));
  b.init_f32("w3", {3, 6, 1, 1}, random_floats(18, 13, -1.f, 1.f));
  b.node("Conv", {"a", "w1"}, {"c1"}, "conv1");
  b.node("Conv", {"a", "w2"}, {"c2"}, "conv2");
  auto* cat = b.node("Concat", {"c1", "c2", "a"}, {"cat"}, "concat");
  B::attr_i(cat, "axis", 1);
  b.node("Conv", {"cat", "w3"}, {"y"}, "conv3");
  b.output("y");
  return b;
}

TEST(Quantize, ConcatInputsShareTheOutputParametersWhenSafe) {
  if (!has_quantized_ref_kernel(OpId::Conv) || !has_quantized_ref_kernel(OpId::Concat))
    GTEST_SKIP() << "no int8 Conv/Concat kernel in this build";
  Graph g = float_graph(concat_model());
  Ranges r;
  r[tensor_id(g, "a")] = {-1.f, 1.f};
  r[tensor_id(g, "c1")] = {-0.5f, 0.5f};
  r[tensor_id(g, "c2")] = {-2.f, 1.f};
  r[tensor_id(g, "cat")] = {-2.f, 1.5f};
  r[tensor_id(g, "y")] = {-4.f, 4.f};
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));
  for (const auto& row : table) EXPECT_EQ(row.precision, "int8") << row.node << ": " << row.why;
  float s_cat, s_a;
  int32_t z_cat, z_a;
  expected_act(-2.f, 1.5f, &s_cat, &z_cat);
  expected_act(-1.f, 1.f, &s_a, &z_a);
  for (const char* name : {"c1", "c2", "cat"}) {
    const Tensor& t = g.tensor(tensor_id(g, name));
    EXPECT_EQ(t.quant.scale[0], s_cat) << name;
    EXPECT_EQ(t.quant.zero_point[0], z_cat) << name;
  }
  // "a" has three readers: it keeps its own parameters and Concat requantizes it
  EXPECT_EQ(g.tensor(tensor_id(g, "a")).quant.scale[0], s_a);
  EXPECT_EQ(g.tensor(tensor_id(g, "a")).quant.zero_point[0], z_a);
}

TEST(Quantize, ConcatSharingLooksThroughDataMovement) {
  if (!has_quantized_ref_kernel(OpId::Resize) || !has_quantized_ref_kernel(OpId::Concat))
    GTEST_SKIP() << "no int8 Resize/Concat kernel in this build";
  // x -> Conv -> c -> Resize(nearest, x2) -> up ; y2 -> Conv -> d ; Concat(up, d)
  B b(13);
  b.input("x", {1, 2, 2, 2});
  b.input("z", {1, 2, 4, 4});
  b.init_f32("w1", {2, 2, 1, 1}, {1.f, 0.f, 0.f, 1.f});
  b.init_f32("w2", {2, 2, 1, 1}, {0.5f, 0.f, 0.f, 0.5f});
  b.init_f32("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  b.node("Conv", {"x", "w1"}, {"c"}, "conv1");
  auto* rs = b.node("Resize", {"c", "", "scales"}, {"up"}, "up");
  B::attr_s(rs, "mode", "nearest");
  b.node("Conv", {"z", "w2"}, {"d"}, "conv2");
  auto* cat = b.node("Concat", {"up", "d"}, {"cat"}, "concat");
  B::attr_i(cat, "axis", 1);
  b.output("cat");
  Graph g = float_graph(b);
  Ranges r;
  r[tensor_id(g, "x")] = {-1.f, 1.f};
  r[tensor_id(g, "z")] = {-1.f, 1.f};
  r[tensor_id(g, "c")] = {-1.f, 1.f};
  r[tensor_id(g, "up")] = {-1.f, 1.f};
  r[tensor_id(g, "d")] = {-0.5f, 0.5f};
  r[tensor_id(g, "cat")] = {-1.f, 2.f};
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));
  for (const auto& row : table) ASSERT_EQ(row.precision, "int8") << row.node << ": " << row.why;
  float s_cat;
  int32_t z_cat;
  expected_act(-1.f, 2.f, &s_cat, &z_cat);
  // conv1 writes the Concat's parameters, Resize passes them on; conv2 writes them directly
  for (const char* name : {"c", "up", "d", "cat"}) {
    EXPECT_EQ(g.tensor(tensor_id(g, name)).quant.scale[0], s_cat) << name;
    EXPECT_EQ(g.tensor(tensor_id(g, name)).quant.zero_point[0], z_cat) << name;
  }
}

// A YOLO head's output: box coordinates up to 320 beside class scores near 1e-3 in one Concat.
// In the shared int8 scale (320 / 255) every score would be 0; the Concat stays float and the
// scores keep a scale of their own.
TEST(Quantize, OutputConcatOfVeryDifferentRangesStaysFloat) {
  if (!has_quantized_ref_kernel(OpId::Conv) || !has_quantized_ref_kernel(OpId::Concat))
    GTEST_SKIP() << "no int8 Conv/Concat kernel in this build";
  auto head = [](float score_hi, Ranges* r) {
    B b(13);
    b.input("x", {1, 2, 4, 4});
    b.init_f32("wb", {2, 2, 1, 1}, {100.f, 0.f, 0.f, 100.f});
    b.init_f32("ws", {2, 2, 1, 1}, {1e-3f, 0.f, 0.f, 1e-3f});
    b.node("Conv", {"x", "wb"}, {"boxes"}, "box_conv");
    b.node("Conv", {"x", "ws"}, {"scores"}, "score_conv");
    auto* cat = b.node("Concat", {"boxes", "scores"}, {"y"}, "concat");
    B::attr_i(cat, "axis", 1);
    b.output("y");
    Graph g = float_graph(b);
    (*r)[tensor_id(g, "x")] = {-1.f, 1.f};
    (*r)[tensor_id(g, "boxes")] = {0.f, 320.f};
    (*r)[tensor_id(g, "scores")] = {0.f, score_hi};
    (*r)[tensor_id(g, "y")] = {0.f, 320.f};
    return g;
  };
  Ranges r;
  Graph g = head(1e-3f, &r);
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));
  ASSERT_NE(row(table, "concat"), nullptr);
  EXPECT_EQ(row(table, "concat")->precision, "float");
  EXPECT_NE(row(table, "concat")->why.find("graph output"), std::string::npos) << row(table, "concat")->why;
  EXPECT_EQ(row(table, "score_conv")->precision, "int8");
  float s_scores;
  int32_t z_scores;
  expected_act(0.f, 1e-3f, &s_scores, &z_scores);
  EXPECT_EQ(g.tensor(tensor_id(g, "scores")).quant.scale[0], s_scores);
  // A piece spanning 1/16 of the output (16 steps of the shared scale) keeps the Concat int8.
  Ranges r2;
  Graph g2 = head(20.f, &r2);
  ASSERT_OK(quantize_graph(g2, r2, QuantizeSettings{}, &table));
  EXPECT_EQ(row(table, "concat")->precision, "int8") << row(table, "concat")->why;
}

TEST(Quantize, NearZeroWeightChannelWithLargeBiasGetsALargerWeightScale) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  B b(13);
  b.input("x", {1, 2, 2, 2});
  // channel 0: ordinary; channel 1: weights ~1e-9 (a pruned channel) and bias 5
  b.init_f32("w", {2, 2, 1, 1}, {0.5f, -0.25f, 1e-9f, -2e-9f});
  b.init_f32("b", {2}, {0.1f, 5.f});
  b.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  b.output("y");
  Graph g = float_graph(b);
  Ranges r;
  r[tensor_id(g, "x")] = {-1.f, 1.f};
  r[tensor_id(g, "y")] = {-1.f, 6.f};
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));
  ASSERT_EQ(table.at(0).precision, "int8") << table.at(0).why;
  float sx;
  int32_t zx;
  expected_act(-1.f, 1.f, &sx, &zx);
  const Node& conv = g.nodes.at(0);
  const Tensor& w = g.tensor(conv.inputs[1]);
  const Tensor& bias = g.tensor(conv.inputs[2]);
  EXPECT_EQ(w.quant.scale[0], 0.5f / 127.f);  // untouched
  // channel 1: |b| / (s_x * s_w) <= 2^30 (with the raised scale its weights quantize to 0)
  const double limit = 1073741824.0;
  EXPECT_GE(static_cast<double>(w.quant.scale[1]), 5.0 / (static_cast<double>(sx) * limit) * (1 - 1e-6));
  EXPECT_LE(std::fabs(static_cast<double>(bias.const_ptr<int32_t>()[1])), limit);
  EXPECT_GT(std::fabs(static_cast<double>(bias.const_ptr<int32_t>()[1])), limit * 0.99);
  EXPECT_EQ(w.const_ptr<int8_t>()[2], 0);
  EXPECT_EQ(w.const_ptr<int8_t>()[3], 0);
  EXPECT_EQ(w.const_ptr<int8_t>()[0], 127);
  EXPECT_EQ(bias.quant.scale[1], sx * w.quant.scale[1]);
}

TEST(Quantize, GemmFoldsAlphaBetaAndQuantizesPerOutputRow) {
  if (!has_quantized_ref_kernel(OpId::Gemm)) GTEST_SKIP() << "no int8 Gemm kernel in this build";
  B b(13);
  b.input("x", {2, 4});
  std::vector<float> w = random_floats(12, 21, -1.f, 1.f), c = {0.3f, -0.7f, 0.2f};
  b.init_f32("w", {3, 4}, w);  // transB = 1: [N, K]
  b.init_f32("c", {3}, c);
  auto* gemm = b.node("Gemm", {"x", "w", "c"}, {"y"}, "fc");
  B::attr_i(gemm, "transB", 1);
  B::attr_f(gemm, "alpha", 0.5f);
  B::attr_f(gemm, "beta", 2.f);
  b.output("y");
  Graph g = float_graph(b);
  Ranges r;
  r[tensor_id(g, "x")] = {-1.f, 1.f};
  r[tensor_id(g, "y")] = {-3.f, 3.f};
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));
  ASSERT_EQ(table.at(0).precision, "int8") << table.at(0).why;
  const Node& n = g.nodes.at(0);
  EXPECT_EQ(n.attrs.get_float("alpha", 0.f), 1.f);
  EXPECT_EQ(n.attrs.get_float("beta", 0.f), 1.f);
  float sx;
  int32_t zx;
  expected_act(-1.f, 1.f, &sx, &zx);
  const Tensor& wq = g.tensor(n.inputs[1]);
  const Tensor& bq = g.tensor(n.inputs[2]);
  ASSERT_EQ(wq.quant.scale.size(), 3u);
  EXPECT_EQ(wq.quant.axis, 0);
  for (int row_i = 0; row_i < 3; ++row_i) {
    float m = 0.f;
    for (int k = 0; k < 4; ++k) m = std::max(m, std::fabs(0.5f * w[row_i * 4 + k]));
    EXPECT_EQ(wq.quant.scale[row_i], m / 127.f);
    const float sb = sx * (m / 127.f);
    EXPECT_EQ(bq.const_ptr<int32_t>()[row_i],
              static_cast<int32_t>(std::nearbyint(static_cast<double>(2.f * c[row_i]) / sb)));
  }
  // transB = 0: [K, N], the output channels are the columns (axis 1)
  B b2(13);
  b2.input("x", {2, 4});
  b2.init_f32("w", {4, 3}, w);
  b2.node("Gemm", {"x", "w"}, {"y"}, "fc");
  b2.output("y");
  Graph h = float_graph(b2);
  Ranges rh;
  rh[tensor_id(h, "x")] = {-1.f, 1.f};
  rh[tensor_id(h, "y")] = {-3.f, 3.f};
  ASSERT_OK(quantize_graph(h, rh, QuantizeSettings{}, &table));
  const Tensor& wq2 = h.tensor(h.nodes.at(0).inputs[1]);
  ASSERT_EQ(wq2.quant.scale.size(), 3u);
  EXPECT_EQ(wq2.quant.axis, 1);
  float m0 = 0.f;
  for (int k = 0; k < 4; ++k) m0 = std::max(m0, std::fabs(w[k * 3 + 0]));
  EXPECT_EQ(wq2.quant.scale[0], m0 / 127.f);
}

TEST(Quantize, MatMulWeightsPerLastAxisAndTwoActivations) {
  if (!has_quantized_ref_kernel(OpId::MatMul)) GTEST_SKIP() << "no int8 MatMul kernel in this build";
  // q = x @ W (W [8, 6], constant), s = q @ k^T-like second MatMul of two activations
  B b(13);
  b.input("x", {1, 4, 8});
  b.input("k", {1, 6, 5});
  std::vector<float> w = random_floats(48, 41, -1.f, 1.f);
  b.init_f32("w", {8, 6}, w);
  b.node("MatMul", {"x", "w"}, {"q"}, "proj");
  b.node("MatMul", {"q", "k"}, {"s"}, "scores");
  b.output("s");
  Graph g = float_graph(b);
  Ranges r = observe(g, 3, 8);
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));
  EXPECT_EQ(row(table, "proj")->precision, "int8") << row(table, "proj")->why;
  EXPECT_EQ(row(table, "scores")->precision, "int8") << row(table, "scores")->why;
  const Tensor& wq = g.tensor(node_named(g, "proj")->inputs[1]);
  ASSERT_EQ(wq.dtype, DType::kI8);
  ASSERT_EQ(wq.quant.scale.size(), 6u);
  EXPECT_EQ(wq.quant.axis, 1);
  for (int col = 0; col < 6; ++col) {
    float m = 0.f;
    for (int k = 0; k < 8; ++k) m = std::max(m, std::fabs(w[k * 6 + col]));
    EXPECT_EQ(wq.quant.scale[col], m / 127.f) << col;
  }
  // both graph inputs are read only by int8 nodes
  EXPECT_EQ(g.tensor(g.inputs[0].tensor).dtype, DType::kI8);
  EXPECT_EQ(g.tensor(g.inputs[1].tensor).dtype, DType::kI8);
}

TEST(Quantize, AddConstantOperandGetsItsOwnPerTensorParameters) {
  if (!has_quantized_ref_kernel(OpId::Add)) GTEST_SKIP() << "no int8 Add kernel in this build";
  B b(13);
  b.input("x", {1, 4});
  b.init_f32("k", {4}, {-0.5f, 0.25f, 1.5f, 0.f});
  b.node("Add", {"x", "k"}, {"y"}, "add");
  b.output("y");
  Graph g = float_graph(b);
  Ranges r;
  r[tensor_id(g, "x")] = {-1.f, 1.f};
  r[tensor_id(g, "y")] = {-1.5f, 2.5f};
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));
  ASSERT_EQ(table.at(0).precision, "int8") << table.at(0).why;
  const Tensor& k = g.tensor(g.nodes.at(0).inputs[1]);
  ASSERT_EQ(k.dtype, DType::kI8);
  float sk;
  int32_t zk;
  expected_act(-0.5f, 1.5f, &sk, &zk);
  EXPECT_EQ(k.quant.scale[0], sk);
  EXPECT_EQ(k.quant.zero_point[0], zk);
  const float kv[4] = {-0.5f, 0.25f, 1.5f, 0.f};
  for (int i = 0; i < 4; ++i) {
    const float q = std::max(-128.f, std::min(127.f, std::nearbyint(kv[i] / sk) + static_cast<float>(zk)));
    EXPECT_EQ(k.const_ptr<int8_t>()[i], static_cast<int8_t>(q)) << i;
  }
  // graph output produced int8 stays int8
  EXPECT_EQ(output_tensor(g).dtype, DType::kI8);
  EXPECT_EQ(output_tensor(g).name, "y");
}

// Split: every activation but Relu/Clip (a QDQ model that quantizes the pre-activation); kept:
// LeakyRelu/HardSwish/HardSigmoid on a Conv (the int8 Conv applies them).
TEST(Quantize, PrepareSplitsActivationsTheInt8ComputeOpsCannotApply) {
  B b(13);
  b.input("x", {1, 2, 4, 4});
  b.init_f32("w", {2, 2, 1, 1}, {1.f, 0.f, 0.f, 1.f});
  b.init_f32("w2", {2, 2, 1, 1}, {1.f, 0.5f, 0.5f, 1.f});
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  b.node("HardSwish", {"c"}, {"h"}, "hs");
  b.node("Conv", {"h", "w2"}, {"c2"}, "conv2");
  b.node("Relu", {"c2"}, {"y"}, "relu");
  b.output("y");
  Graph g = float_graph(b);
  ASSERT_EQ(g.nodes.size(), 2u);  // both activations fused by the passes
  std::vector<float> x = random_floats(32, 3, -4.f, 4.f);
  std::vector<float> before = run_f32(g, {x});
  Graph kept = g;
  ASSERT_OK(prepare_for_quantization(kept, [](const Node&) { return true; }));
  ASSERT_EQ(kept.nodes.size(), 2u);
  EXPECT_EQ(kept.nodes[0].attrs.get_string("fused_act", ""), "HardSwish");
  ASSERT_OK(prepare_for_quantization(g, [](const Node&) { return false; }));
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "conv");
  EXPECT_FALSE(g.nodes[0].attrs.has("fused_act"));
  EXPECT_EQ(g.nodes[1].op, OpId::HardSwish);
  EXPECT_EQ(g.tensor(g.nodes[1].inputs[0]).name, "h_preact");
  EXPECT_EQ(g.tensor(g.nodes[1].outputs[0]).name, "h");  // the original tensor keeps its name
  EXPECT_EQ(g.nodes[2].attrs.get_string("fused_act", ""), "Relu");  // Relu stays fused
  // the same function, computed by the HardSwish op instead of the fused form
  std::vector<float> after = run_f32(g, {x});
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) EXPECT_NEAR(after[i], before[i], 1e-5f * (1.f + std::fabs(before[i]))) << i;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb + 1e-30);
}

// Runs a (possibly quantized) graph on float input x: an int8 input is quantized here, an int8
// output dequantized (what the runtime does at rknn_inputs_set / want_float outputs).
std::vector<float> run_dequantized(const Graph& g, const std::vector<float>& x) {
  std::unique_ptr<Executor> runner;
  Status st = Executor::create_keep_all(g, false, 1, &runner);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  const Tensor& in = g.tensor(g.inputs[0].tensor);
  if (in.dtype == DType::kI8) {
    std::vector<int8_t> q(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const float v = std::nearbyint(x[i] / in.quant.scale[0]) + static_cast<float>(in.quant.zero_point[0]);
      q[i] = static_cast<int8_t>(std::max(-128.f, std::min(127.f, v)));
    }
    EXPECT_TRUE(runner->set_input(0, q.data(), q.size()).ok());
  } else {
    EXPECT_TRUE(runner->set_input(0, x.data(), x.size() * 4).ok());
  }
  st = runner->run();
  EXPECT_TRUE(st.ok()) << st.message();
  const Tensor& out = g.tensor(g.outputs[0]);
  std::vector<float> y(static_cast<size_t>(out.numel()));
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = out.dtype == DType::kI8
               ? static_cast<float>(runner->data_as<int8_t>(g.outputs[0])[i] - out.quant.zero_point[0]) * out.quant.scale[0]
               : runner->data_as<float>(g.outputs[0])[i];
  return y;
}

TEST(Quantize, SmallConvNetMatchesItsFloatGraph) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  // x [1,3,12,12] -> Conv 8 3x3 + Relu -> Conv 8 3x3 s2 + HardSwish -> (+ residual 1x1 conv) ->
  // MaxPool -> GlobalAveragePool -> Flatten -> Gemm 10
  B b(13);
  b.input("x", {1, 3, 12, 12});
  b.init_f32("w1", {8, 3, 3, 3}, random_floats(216, 31, -0.4f, 0.4f));
  b.init_f32("b1", {8}, random_floats(8, 32, -0.1f, 0.1f));
  b.init_f32("w2", {8, 8, 3, 3}, random_floats(576, 33, -0.2f, 0.2f));
  b.init_f32("b2", {8}, random_floats(8, 34, -0.1f, 0.1f));
  b.init_f32("w3", {8, 8, 1, 1}, random_floats(64, 35, -0.5f, 0.5f));
  b.init_f32("wf", {10, 8}, random_floats(80, 36, -0.5f, 0.5f));
  b.init_f32("bf", {10}, random_floats(10, 37, -0.2f, 0.2f));
  auto* c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  B::attr_ints(c1, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto* c2 = b.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2");
  B::attr_ints(c2, "pads", {1, 1, 1, 1});
  B::attr_ints(c2, "strides", {2, 2});
  b.node("HardSwish", {"c2"}, {"h2"}, "hswish");
  b.node("Conv", {"h2", "w3"}, {"c3"}, "conv3");
  b.node("Add", {"h2", "c3"}, {"s"}, "add");
  auto* mp = b.node("MaxPool", {"s"}, {"p"}, "pool");
  B::attr_ints(mp, "kernel_shape", {2, 2});
  B::attr_ints(mp, "strides", {2, 2});
  b.node("GlobalAveragePool", {"p"}, {"gap"}, "gap");
  b.node("Flatten", {"gap"}, {"f"}, "flatten");
  auto* fc = b.node("Gemm", {"f", "wf", "bf"}, {"y"}, "fc");
  B::attr_i(fc, "transB", 1);
  b.output("y");

  Graph fg = float_graph(b);
  Graph g = fg;
  ASSERT_OK(prepare_for_quantization(g, [](const Node&) { return true; }));
  Ranges r = observe(g, 8, 100);
  std::vector<ConvertReport::LayerPrecision> table;
  ASSERT_OK(quantize_graph(g, r, QuantizeSettings{}, &table));
  int int8_nodes = 0;
  for (const auto& row : table) int8_nodes += row.precision == "int8";
  EXPECT_GE(int8_nodes, 4);
  EXPECT_EQ(row(table, "conv1")->precision, "int8") << row(table, "conv1")->why;

  double worst = 1.0;
  for (uint32_t s = 0; s < 5; ++s) {
    std::vector<float> x = random_floats(3 * 144, 500 + s, -1.f, 1.f);
    std::vector<float> ref = run_dequantized(fg, x), got = run_dequantized(g, x);
    ASSERT_EQ(ref.size(), got.size());
    worst = std::min(worst, cosine(ref, got));
  }
  EXPECT_GE(worst, 0.99);
}

}  // namespace
}  // namespace orknn::test
