// converter/quant/accuracy.h: the error metrics, the entire/single comparison of a float graph and
// a quantized graph, first_below, the suggestions and the JSON writer. Expected values come from
// hand computation or from the numerics spec re-implemented naively in this file.
#include <cmath>
#include <limits>

#include "converter/converter_test_util.h"
#include "converter/quant/accuracy.h"
#include "kernels/kernel.h"

namespace orknn::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- naive references, written independently of the code under test ----

struct Naive {
  double cosine, sqnr_db, max_abs, euclidean;
};
Naive naive_error(const std::vector<float>& ref, const std::vector<float>& x) {
  double num = 0, den = 0, dot = 0, xx = 0, mx = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(ref[i]) - static_cast<double>(x[i]);
    num += static_cast<double>(ref[i]) * ref[i];
    den += d * d;
    dot += static_cast<double>(ref[i]) * x[i];
    xx += static_cast<double>(x[i]) * x[i];
    if (std::fabs(d) > mx) mx = std::fabs(d);
  }
  return Naive{dot / std::sqrt(num * xx), 10.0 * std::log10(num / den), mx, std::sqrt(den)};
}

// docs/numerics.md: q = sat8(rne(x / s) + zp), x = float(q - zp) * s.
int q8(float v, float s, int zp) {
  const float r = std::nearbyint(v / s) + static_cast<float>(zp);
  return r < -128.f ? -128 : (r > 127.f ? 127 : static_cast<int>(r));
}
float dq8(int q, float s, int zp) { return static_cast<float>(q - zp) * s; }
float relu(float v) { return v < 0.f ? 0.f : v; }
float sigmoid(float v) { return 1.f / (1.f + std::exp(-v)); }

void expect_error(const TensorError& got, const Naive& want, const char* what) {
  EXPECT_NEAR(got.cosine, want.cosine, 1e-12) << what;
  EXPECT_NEAR(got.sqnr_db, want.sqnr_db, 1e-9) << what;
  EXPECT_NEAR(got.max_abs, want.max_abs, 1e-12) << what;
  EXPECT_NEAR(got.euclidean, want.euclidean, 1e-12) << what;
}
void expect_exact(const TensorError& e, const std::string& what) {
  EXPECT_EQ(e.cosine, 1.0) << what;
  EXPECT_EQ(e.sqnr_db, kInf) << what;
  EXPECT_EQ(e.max_abs, 0.0) << what;
  EXPECT_EQ(e.euclidean, 0.0) << what;
}

// ---- metrics ----

TEST(AccuracyMetrics, HandComputedVectors) {
  // sum ref^2 = 30, sum err^2 = 1, ref.x = 34, |x|^2 = 39.
  TensorError e = tensor_error(std::vector<float>{1, 2, 3, 4}, std::vector<float>{1, 2, 3, 5});
  EXPECT_NEAR(e.sqnr_db, 14.771212547196624, 1e-12);
  EXPECT_NEAR(e.cosine, 0.9939990885479664, 1e-15);
  EXPECT_EQ(e.max_abs, 1.0);
  EXPECT_EQ(e.euclidean, 1.0);

  // x = -ref: cosine -1; sum err^2 = 4 * 5 = 20 -> 10 log10(5 / 20).
  e = tensor_error(std::vector<float>{1, -2}, std::vector<float>{-1, 2});
  EXPECT_NEAR(e.cosine, -1.0, 1e-15);
  EXPECT_NEAR(e.sqnr_db, -6.020599913279624, 1e-12);
  EXPECT_EQ(e.max_abs, 4.0);
  EXPECT_NEAR(e.euclidean, std::sqrt(20.0), 1e-15);

  e = tensor_error(std::vector<float>{0.5f, -0.25f, 3}, std::vector<float>{0.5f, -0.25f, 3});
  expect_exact(e, "identical");
  expect_exact(tensor_error(std::vector<float>{}, std::vector<float>{}), "empty");
  expect_exact(tensor_error(std::vector<float>{0, 0}, std::vector<float>{0, 0}), "both zero");
}

TEST(AccuracyMetrics, ZeroReferenceAndZeroOutput) {
  TensorError e = tensor_error(std::vector<float>{0, 0, 0}, std::vector<float>{0, 0.5f, 0});
  EXPECT_EQ(e.sqnr_db, -kInf);
  EXPECT_EQ(e.cosine, 0.0);
  EXPECT_EQ(e.max_abs, 0.5);
  e = tensor_error(std::vector<float>{1, -1}, std::vector<float>{0, 0});
  EXPECT_NEAR(e.sqnr_db, 0.0, 1e-15);  // the error is the whole signal
  EXPECT_EQ(e.cosine, 0.0);
  EXPECT_EQ(e.max_abs, 1.0);
}

TEST(AccuracyMetrics, NonFiniteValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Agreeing non-finite positions are skipped: what is left is {1, 2} vs {1, 3}.
  TensorError e = tensor_error(std::vector<float>{nan, -inf, 1, 2, inf}, std::vector<float>{nan, -inf, 1, 3, inf});
  EXPECT_NEAR(e.sqnr_db, 10.0 * std::log10(5.0 / 1.0), 1e-12);
  EXPECT_EQ(e.max_abs, 1.0);
  // A NaN or infinity on one side only: not measurable.
  for (auto pair : {std::make_pair(nan, 1.f), std::make_pair(1.f, nan), std::make_pair(-inf, -3.f),
                    std::make_pair(inf, -inf)}) {
    e = tensor_error(std::vector<float>{1, pair.first}, std::vector<float>{1, pair.second});
    EXPECT_TRUE(std::isnan(e.cosine) && std::isnan(e.sqnr_db) && std::isnan(e.max_abs) && std::isnan(e.euclidean))
        << pair.first << " " << pair.second;
  }
  e = tensor_error(std::vector<float>{1, 2}, std::vector<float>{1});
  EXPECT_TRUE(std::isnan(e.sqnr_db));
}

// ---- whole graphs ----

TEST(Accuracy, IdenticalFloatGraphsAreExact) {
  OnnxBuilder b(13);
  b.input("x", {1, 3, 4, 4});
  std::vector<float> w(2 * 3 * 3 * 3), bias{0.1f, -0.2f};
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(static_cast<int>(i % 7) - 3);
  b.init_f32("w", {2, 3, 3, 3}, w);
  b.init_f32("b", {2}, bias);
  auto* conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  OnnxBuilder::attr_ints(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Sigmoid", {"r"}, {"s"}, "sig");
  b.node("Flatten", {"s"}, {"y"}, "flatten");
  b.output("y");
  Graph f1, f2;
  ASSERT_OK(convert(b, &f1));
  ASSERT_OK(convert(b, &f2));
  std::vector<float> x(48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
  AccuracyReport rep;
  ASSERT_OK(compare_float_and_quantized(f1, f2, {x}, &rep));
  // One row for the input and one per node output (every node writes a float activation).
  ASSERT_EQ(rep.rows.size(), 1 + f2.nodes.size());
  EXPECT_EQ(rep.rows[0].tensor, "x");
  EXPECT_EQ(rep.rows[0].op, "input");
  EXPECT_EQ(rep.rows.back().tensor, "y");
  for (const AccuracyRow& r : rep.rows) {
    expect_exact(r.entire, r.tensor + " entire");
    expect_exact(r.single, r.tensor + " single");
    EXPECT_EQ(r.precision, "float");
    EXPECT_TRUE(r.single_int8_nodes.empty());
  }
  EXPECT_EQ(rep.first_below(30.0), nullptr);
  EXPECT_TRUE(rep.suggestions().empty());
  EXPECT_TRUE(rep.notes.empty());
}

// x[1,8] -> Relu "relu" -> r -> Sigmoid "sig" -> y, float or int8 (names given).
struct ChainParams {
  float sx = 0.1f, sr = 0.01f, sy = 1.f / 256.f;
  int zx = -10, zr = -128, zy = -128;
};
Graph relu_sigmoid_graph(bool quantized, const std::string& mid_name, const ChainParams& p = ChainParams()) {
  Graph g;
  g.precision = FloatPrecision::kFp32;
  g.platform = "rk3588";
  const DType dt = quantized ? DType::kI8 : DType::kF32;
  const int x = g.add_tensor("x", {1, 8}, dt), r = g.add_tensor(mid_name, {1, 8}, dt), y = g.add_tensor("y", {1, 8}, dt);
  if (quantized) {
    g.tensor(x).quant = QuantParams{{p.sx}, {p.zx}, -1};
    g.tensor(r).quant = QuantParams{{p.sr}, {p.zr}, -1};
    g.tensor(y).quant = QuantParams{{p.sy}, {p.zy}, -1};
  }
  Node relu_node, sig_node;
  relu_node.name = "relu";
  relu_node.op = OpId::Relu;
  relu_node.inputs = {x};
  relu_node.outputs = {r};
  sig_node.name = "sig";
  sig_node.op = OpId::Sigmoid;
  sig_node.inputs = {r};
  sig_node.outputs = {y};
  g.nodes = {relu_node, sig_node};
  g.inputs = {GraphInput{x, {}, {}}};
  g.outputs = {y};
  return g;
}

const std::vector<float> kChainInput{-1.23f, -0.31f, 0.0f, 0.07f, 0.44f, 0.96f, 1.5f, 2.38f};

TEST(Accuracy, QuantizedUnaryChainEntireAndSingle) {
  const ChainParams p;
  Graph fg = relu_sigmoid_graph(false, "r"), qg = relu_sigmoid_graph(true, "r");
  AccuracyReport rep;
  ASSERT_OK(compare_float_and_quantized(fg, qg, {kChainInput}, &rep, AccuracyOptions{false, 1}));
  ASSERT_EQ(rep.rows.size(), 3u);

  // Float reference and the int8 arithmetic of docs/numerics.md, element by element.
  std::vector<float> fr, fy, x_deq, r_ent, y_ent, y_sgl;
  for (float v : kChainInput) {
    fr.push_back(relu(v));
    fy.push_back(sigmoid(relu(v)));
    const int qx = q8(v, p.sx, p.zx);
    x_deq.push_back(dq8(qx, p.sx, p.zx));
    const int qr = q8(relu(dq8(qx, p.sx, p.zx)), p.sr, p.zr);  // Relu table entry of qx
    r_ent.push_back(dq8(qr, p.sr, p.zr));
    y_ent.push_back(dq8(q8(sigmoid(dq8(qr, p.sr, p.zr)), p.sy, p.zy), p.sy, p.zy));
    const int qr_ideal = q8(relu(v), p.sr, p.zr);  // float r re-quantized
    y_sgl.push_back(dq8(q8(sigmoid(dq8(qr_ideal, p.sr, p.zr)), p.sy, p.zy), p.sy, p.zy));
  }
  ASSERT_NE(y_ent, y_sgl);  // the case must tell entire from single

  const AccuracyRow &rx = rep.rows[0], &rr = rep.rows[1], &ry = rep.rows[2];
  EXPECT_EQ(rx.tensor, "x");
  EXPECT_EQ(rx.node, "");
  EXPECT_EQ(rx.op, "input");
  EXPECT_EQ(rx.precision, "int8");
  expect_error(rx.entire, naive_error(kChainInput, x_deq), "x entire");
  expect_error(rx.single, naive_error(kChainInput, x_deq), "x single");

  EXPECT_EQ(rr.tensor, "r");
  EXPECT_EQ(rr.node, "relu");
  EXPECT_EQ(rr.op, "Relu");
  EXPECT_EQ(rr.precision, "int8");
  EXPECT_EQ(rr.dtype, DType::kI8);
  EXPECT_EQ(rr.shape, (Shape{1, 8}));
  expect_error(rr.entire, naive_error(fr, r_ent), "r entire");
  expect_error(rr.single, naive_error(fr, r_ent), "r single");  // its input is the graph input
  EXPECT_EQ(rr.single_int8_nodes, (std::vector<std::string>{"relu"}));

  EXPECT_EQ(ry.tensor, "y");
  EXPECT_EQ(ry.node, "sig");
  expect_error(ry.entire, naive_error(fy, y_ent), "y entire");
  expect_error(ry.single, naive_error(fy, y_sgl), "y single");
  EXPECT_EQ(ry.single_int8_nodes, (std::vector<std::string>{"sig"}));

  // With the reference kernels and fast kernels alike (quantized fast kernels are bit-exact).
  AccuracyReport fast;
  ASSERT_OK(compare_float_and_quantized(fg, qg, {kChainInput}, &fast));
  ASSERT_EQ(fast.rows.size(), 3u);
  EXPECT_EQ(fast.rows[2].single.sqnr_db, ry.single.sqnr_db);
}

TEST(Accuracy, TensorsWithoutFloatCounterpartExtendTheSingleSegment) {
  // The quantized graph calls the middle tensor "r_preact" (like a Conv split from its
  // activation): y's single error then covers both nodes, computed from the ideal x.
  const ChainParams p;
  Graph fg = relu_sigmoid_graph(false, "r"), qg = relu_sigmoid_graph(true, "r_preact");
  AccuracyReport rep;
  ASSERT_OK(compare_float_and_quantized(fg, qg, {kChainInput}, &rep, AccuracyOptions{false, 1}));
  ASSERT_EQ(rep.rows.size(), 2u);
  EXPECT_EQ(rep.rows[0].tensor, "x");
  EXPECT_EQ(rep.rows[1].tensor, "y");
  EXPECT_EQ(rep.rows[1].single_int8_nodes, (std::vector<std::string>{"relu", "sig"}));
  std::vector<float> fy, y_q;
  for (float v : kChainInput) {
    fy.push_back(sigmoid(relu(v)));
    const int qr = q8(relu(dq8(q8(v, p.sx, p.zx), p.sx, p.zx)), p.sr, p.zr);
    y_q.push_back(dq8(q8(sigmoid(dq8(qr, p.sr, p.zr)), p.sy, p.zy), p.sy, p.zy));
  }
  expect_error(rep.rows[1].entire, naive_error(fy, y_q), "y entire");
  expect_error(rep.rows[1].single, naive_error(fy, y_q), "y single");
  const auto sug = rep.suggestions();
  ASSERT_EQ(sug.size(), 1u);
  EXPECT_EQ(sug[0].nodes, (std::vector<std::string>{"relu", "sig"}));
}

TEST(Accuracy, QuantizeDequantizeEdgesAndFloatNodes) {
  if (!has_quantized_ref_kernel(OpId::QuantizeLinear) || !has_quantized_ref_kernel(OpId::DequantizeLinear))
    GTEST_SKIP() << "no QuantizeLinear/DequantizeLinear kernels in this build";
  // float: x -> Sigmoid "sig" -> s -> Neg "neg" -> y
  // int8:  x -> Q -> x_quant -> Sigmoid "sig" -> s (int8) -> DQ -> s_dequant -> Neg "neg" -> y
  const float sa = 0.05f, ss = 1.f / 200.f;
  const int za = 3, zs = -100;
  Graph fg, qg;
  fg.precision = qg.precision = FloatPrecision::kFp32;
  {
    const int x = fg.add_tensor("x", {1, 8}, DType::kF32), s = fg.add_tensor("s", {1, 8}, DType::kF32),
              y = fg.add_tensor("y", {1, 8}, DType::kF32);
    fg.nodes = {Node{"sig", OpId::Sigmoid, {x}, {s}, {}}, Node{"neg", OpId::Neg, {s}, {y}, {}}};
    fg.inputs = {GraphInput{x, {}, {}}};
    fg.outputs = {y};
  }
  {
    const int x = qg.add_tensor("x", {1, 8}, DType::kF32), xq = qg.add_tensor("x_quant", {1, 8}, DType::kI8),
              s = qg.add_tensor("s", {1, 8}, DType::kI8), sd = qg.add_tensor("s_dequant", {1, 8}, DType::kF32),
              y = qg.add_tensor("y", {1, 8}, DType::kF32);
    qg.tensor(xq).quant = QuantParams{{sa}, {za}, -1};
    qg.tensor(s).quant = QuantParams{{ss}, {zs}, -1};
    qg.nodes = {Node{"x_quant", OpId::QuantizeLinear, {x}, {xq}, {}}, Node{"sig", OpId::Sigmoid, {xq}, {s}, {}},
                Node{"s_dequant", OpId::DequantizeLinear, {s}, {sd}, {}}, Node{"neg", OpId::Neg, {sd}, {y}, {}}};
    qg.inputs = {GraphInput{x, {}, {}}};
    qg.outputs = {y};
  }
  AccuracyReport rep;
  ASSERT_OK(compare_float_and_quantized(fg, qg, {kChainInput}, &rep, AccuracyOptions{false, 1}));
  ASSERT_EQ(rep.rows.size(), 3u);  // x, s, y: the edge tensors have no float counterpart
  const AccuracyRow &rx = rep.rows[0], &rs = rep.rows[1], &ry = rep.rows[2];
  EXPECT_EQ(rx.precision, "float");
  expect_exact(rx.entire, "x entire");
  EXPECT_EQ(rs.tensor, "s");
  EXPECT_EQ(rs.precision, "int8");
  EXPECT_EQ(rs.single_int8_nodes, (std::vector<std::string>{"sig"}));  // QuantizeLinear is not a layer
  EXPECT_EQ(ry.tensor, "y");
  EXPECT_EQ(ry.op, "Neg");
  EXPECT_EQ(ry.precision, "float");
  EXPECT_TRUE(ry.single_int8_nodes.empty());

  std::vector<float> fs, fy, s_q, y_q, y_sgl;
  for (float v : kChainInput) {
    fs.push_back(sigmoid(v));
    fy.push_back(-sigmoid(v));
    const float sv = dq8(q8(sigmoid(dq8(q8(v, sa, za), sa, za)), ss, zs), ss, zs);
    s_q.push_back(sv);
    y_q.push_back(-sv);
    y_sgl.push_back(-dq8(q8(sigmoid(v), ss, zs), ss, zs));  // Neg of the float s re-quantized
  }
  expect_error(rs.entire, naive_error(fs, s_q), "s entire");
  expect_error(rs.single, naive_error(fs, s_q), "s single");  // x is exact in both runs
  expect_error(ry.entire, naive_error(fy, y_q), "y entire");
  expect_error(ry.single, naive_error(fy, y_sgl), "y single");
}

TEST(Accuracy, BadInputsAreErrors) {
  Graph fg = relu_sigmoid_graph(false, "r"), qg = relu_sigmoid_graph(true, "r");
  AccuracyReport rep;
  Status st = compare_float_and_quantized(fg, qg, {}, &rep);
  EXPECT_FALSE(st.ok());
  st = compare_float_and_quantized(fg, qg, {{1.f, 2.f}}, &rep);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'x'"), std::string::npos) << st.message();
  Graph other = relu_sigmoid_graph(false, "r");
  other.tensor(other.inputs[0].tensor).name = "images";
  st = compare_float_and_quantized(other, qg, {kChainInput}, &rep);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'x'"), std::string::npos) << st.message();
  // A shape that differs between the graphs is a note, not a row.
  Graph wide = relu_sigmoid_graph(false, "r");
  wide.tensor(wide.find_tensor("y")).shape = {8, 1};
  ASSERT_OK(compare_float_and_quantized(wide, qg, {kChainInput}, &rep, AccuracyOptions{false, 1}));
  EXPECT_EQ(rep.rows.size(), 2u);
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_NE(rep.notes[0].find("'y'"), std::string::npos) << rep.notes[0];
}

// ---- first_below, suggestions ----

AccuracyRow row(const std::string& node, double entire_db, double single_db, std::vector<std::string> int8_nodes,
                bool on_grid = false) {
  AccuracyRow r;
  r.node = node;
  r.tensor = node + "_out";
  r.entire.sqnr_db = entire_db;
  r.single.sqnr_db = single_db;
  r.single_int8_nodes = std::move(int8_nodes);
  r.single_on_grid = on_grid;
  return r;
}

TEST(Accuracy, FirstBelowAndSuggestions) {
  AccuracyReport rep;
  rep.rows = {
      row("", 40, 10, {}),                                  // graph input: not a layer
      row("a", 35, 25, {"a"}),                              //
      row("b", 29, kInf, {"b"}),                            // exact alone: nothing to gain
      row("c", kNaN, 12, {"c"}, true),                      // on the int8 grid: nothing to gain
      row("d", 50, kNaN, {"d"}),                            // NaN: the worst
      row("e", 50, 18, {"conv", "conv_Sigmoid"}),           //
      row("e2", 50, 15, {"conv", "conv_Sigmoid"}),          // same segment: counted once, lowest
      row("f", 50, 1, {}),                                  // float layer
      row("g", 50, 25, {"g"}),                              // ties keep graph order
  };
  EXPECT_EQ(rep.first_below(30), &rep.rows[2]);
  EXPECT_EQ(rep.first_below(29), &rep.rows[3]);  // 29 is not below 29; NaN is
  EXPECT_EQ(rep.first_below(41), &rep.rows[0]);

  auto s = rep.suggestions(10);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].nodes, (std::vector<std::string>{"d"}));
  EXPECT_TRUE(std::isnan(s[0].single_sqnr_db));
  EXPECT_EQ(s[1].nodes, (std::vector<std::string>{"conv", "conv_Sigmoid"}));
  EXPECT_EQ(s[1].single_sqnr_db, 15);
  EXPECT_EQ(s[1].tensor, "e2_out");
  EXPECT_EQ(s[2].nodes, (std::vector<std::string>{"a"}));
  EXPECT_EQ(s[3].nodes, (std::vector<std::string>{"g"}));
  EXPECT_EQ(rep.suggestions().size(), 3u);
  EXPECT_EQ(rep.suggestions(1).size(), 1u);

  AccuracyReport good;
  good.rows = {row("a", 45, 50, {"a"}), row("b", 31, 60, {"b"})};
  EXPECT_EQ(good.first_below(30), nullptr);
  EXPECT_EQ(good.first_below(31.5), &good.rows[1]);
}

// ---- JSON ----

TEST(Accuracy, JsonEscapingAndNonFiniteNumbers) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
  EXPECT_EQ(json_quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // UTF-8 passes through

  AccuracyReport rep;
  rep.rows = {row("n\"1", 20, kInf, {"n\"1"}), row("n2", kNaN, -kInf, {"n2"})};
  rep.rows[0].entire.cosine = 0.5;
  rep.rows[0].entire.max_abs = 0.25;
  rep.rows[0].entire.euclidean = 0.5;
  const std::string j = accuracy_report_json(rep, 30, 3, {{"float_model", "m.onnx"}});
  EXPECT_NE(j.find("\"float_model\": \"m.onnx\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"threshold_db\": 30"), std::string::npos) << j;
  EXPECT_NE(j.find("\"node\": \"n\\\"1\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"entire\": {\"cosine\": 0.5, \"sqnr_db\": 20, \"max_abs\": 0.25, \"euclidean\": 0.5}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"sqnr_db\": \"inf\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"sqnr_db\": \"-inf\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"sqnr_db\": \"nan\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"first_below\": {\"row\": 0,"), std::string::npos) << j;
  // Suggestions: n2 (-inf) only; n"1 is exact alone.
  EXPECT_NE(j.find("\"suggestions\": [\n    {\"nodes\": [\"n2\"]"), std::string::npos) << j;
  EXPECT_EQ(j.find("{\"nodes\": [\"n\\\"1\"]"), std::string::npos) << j;

  AccuracyReport empty;
  const std::string e = accuracy_report_json(empty, 30, 3);
  EXPECT_NE(e.find("\"first_below\": null"), std::string::npos) << e;
  EXPECT_NE(e.find("\"rows\": []"), std::string::npos) << e;
}

}  // namespace
}  // namespace orknn::test
