// QuantizeLinear and DequantizeLinear: the IR form's infer, the reference kernels against values
// computed by hand and the spec's formulas written out here (docs/numerics.md, "Quantize and
// dequantize"), and the ONNX mapper (converter/onnx/ops/qdq.cc) through the importer: parameters
// on the int8 tensor, uint8 mapped to int8, constant DequantizeLinear kept, and its error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "converter/onnx/importer.h"
#include "converter/onnx_builder.h"
#include "runtime/executor.h"
#include "ops/int8_test_helpers.h"
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {

using namespace reft;  // NOLINT
using namespace q8t;   // NOLINT

OpResult quantize(const TensorData& x, const QuantParams& out) {
  return run_op(OpId::QuantizeLinear, Attrs(), {x}, 1, "ref", 1, {out});
}
OpResult dequantize(const TensorData& x) { return run_op(OpId::DequantizeLinear, Attrs(), {x}, 1, "ref"); }

// ------------------------------------------------------------------ QuantizeLinear kernel

TEST(QuantizeLinearRef, PerTensorHandComputed) {
  // s = 0.5, zp = -3: q = sat8(rne(x / 0.5) - 3).
  const std::vector<float> x = {0.25f, 0.75f, -0.25f, 1.25f, -1.25f, 100.f, -100.f, 63.f,
                                65.5f, 65.f,  -62.5f, -63.f, kNaN,   kInf,  -kInf,  1e30f};
  const std::vector<int8_t> want = {
      -3,    // 0.5 -> 0 (tie to even)
      -1,    // 1.5 -> 2
      -3,    // -0.5 -> -0
      -1,    // 2.5 -> 2
      -5,    // -2.5 -> -2
      127,   // 200 - 3 saturates
      -128,  // -203 saturates
      123,   // 126 - 3
      127,   // 131 - 3 = 128 saturates
      127,   // 130 - 3 = 127 exactly
      -128,  // -125 - 3 = -128 exactly
      -128,  // -126 - 3 = -129 saturates
      -3,    // NaN gives the zero point
      127,   // +inf
      -128,  // -inf
      127,   // huge
  };
  OpResult r = quantize(f32({16}, x), qp(0.5f, -3));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
  EXPECT_EQ(r.outputs[0].shape, Shape({16}));
  EXPECT_EQ(out_i8(r), want);
}

TEST(QuantizeLinearRef, MatchesFormulaOnRandomValues) {
  for (const auto& [scale, zp] : std::vector<std::pair<float, int32_t>>{{0.0173f, 0}, {0.25f, 17}, {3.1f, -101},
                                                                         {1e-3f, 127}, {0.5f, -128}}) {
    SCOPED_TRACE(testing::Message() << "scale " << scale << " zp " << zp);
    const std::vector<float> x = random_floats(500, 11u + static_cast<uint32_t>(zp + 128), -150.f * scale,
                                                     150.f * scale);
    OpResult r = quantize(f32({5, 100}, x), qp(scale, zp));
    ASSERT_OK(r.status);
    const std::vector<int8_t> got = out_i8(r);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], quantize_naive(x[i], qp(scale, zp))) << "x=" << x[i];
  }
}

TEST(QuantizeLinearRef, PerAxisOnConstantInput) {
  // x [2, 3], axis 1: column c uses (scale[c], zp[c]).
  const QuantParams q = per_axis({0.5f, 0.25f, 2.f}, 1, {0, 1, -1});
  OpResult r = quantize(f32({2, 3}, {1.f, 1.f, 1.f, -3.25f, 0.125f, 5.f}, /*c=*/true), q);
  ASSERT_OK(r.status);
  // 1/0.5 = 2; 1/0.25 + 1 = 5; 1/2 = 0.5 -> 0, -1; -6.5 -> -6; 0.5 -> 0, +1; 2.5 -> 2, -1.
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{2, 5, -1, -6, 1, 1}));
}

TEST(QuantizeLinearInfer, Errors) {
  {  // per-axis parameters on a tensor computed at run time
    OpResult r = quantize(f32({2, 3}, std::vector<float>(6, 0.f)), per_axis({0.5f, 0.25f, 2.f}, 1, {0, 0, 0}));
    expect_invalid_model(r.status, "must be quantized per tensor", "QuantizeLinear_under_test");
  }
  {  // no parameters on the output
    OpResult r = run_op(OpId::QuantizeLinear, Attrs(), {f32({2}, {0.f, 1.f})}, 1, "ref");
    expect_invalid_model(r.status, "has no quantization parameters", "QuantizeLinear_under_test");
  }
  {  // the input must be float32
    OpResult r = quantize(i32({2}, {1, 2}), qp(1.f, 0));
    expect_invalid_model(r.status, "must be float32", "QuantizeLinear_under_test");
  }
  {  // a bad scale or zero point
    expect_invalid_model(quantize(f32({2}, {0.f, 1.f}), qp(0.f, 0)).status, "not a finite positive",
                         "QuantizeLinear_under_test");
    expect_invalid_model(quantize(f32({2}, {0.f, 1.f}), qp(1.f, 128)).status, "zero point 128",
                         "QuantizeLinear_under_test");
  }
  {  // the ONNX form (x, scale, zero_point) is not the IR form
    OpResult r = run_op(OpId::QuantizeLinear, Attrs(),
                        {f32({2}, {0.f, 1.f}), f32({}, {1.f}, true), i8({}, {0}, true)}, 1, "ref", 1, {qp(1.f, 0)});
    expect_invalid_model(r.status, "ONNX form", "QuantizeLinear_under_test");
  }
}

// ------------------------------------------------------------------ DequantizeLinear kernel

TEST(DequantizeLinearRef, PerTensorHandComputed) {
  // x = float(q + 3) * 0.5
  OpResult r = dequantize(q8({5}, {-3, 127, -128, 0, 1}, qp(0.5f, -3)));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  EXPECT_EQ(r.outputs[0].dtype, DType::kF32);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0.f, 65.f, -62.5f, 1.5f, 2.f}));
}

TEST(DequantizeLinearRef, EveryInt8ValueMatchesFormula) {
  std::vector<int8_t> q;
  for (int v = -128; v <= 127; ++v) q.push_back(static_cast<int8_t>(v));
  const float s = 0.0371f;
  const int32_t zp = 13;
  OpResult r = dequantize(q8({256}, q, qp(s, zp)));
  ASSERT_OK(r.status);
  const std::vector<float> got = r.outputs[0].as<float>();
  for (int i = 0; i < 256; ++i) {
    const float want = static_cast<float>(static_cast<int>(q[i]) - zp) * s;  // float(q - zp) * s
    EXPECT_EQ(got[i], want) << "q=" << int(q[i]);
  }
}

TEST(DequantizeLinearRef, PerAxisWeights) {
  // [3, 2] weights, axis 0: row c uses scale[c].
  OpResult r = dequantize(q8({3, 2}, {2, -4, 3, 1, -127, 127}, per_axis({0.5f, 2.f, 0.125f}, 0, {0, 0, 0}), true));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1.f, -2.f, 6.f, 2.f, -15.875f, 15.875f}));

  // [1, 2, 2, 2], axis 1 with zero points: plane c uses (scale[c], zp[c]).
  OpResult r2 = dequantize(q8({1, 2, 2, 2}, {1, 2, 3, -1, -2, 0, 5, -128}, per_axis({0.25f, 4.f}, 1, {1, -2})));
  ASSERT_OK(r2.status);
  EXPECT_EQ(r2.outputs[0].as<float>(), (std::vector<float>{0.f, 0.25f, 0.5f, -0.5f, 0.f, 8.f, 28.f, -504.f}));
}

TEST(DequantizeLinearRef, Int32Bias) {
  {  // float(q) rounds to nearest even: 2^24 + 1 -> 2^24, 2^24 + 3 -> 2^24 + 4
    TensorData b = i32({3}, {16777217, 16777219, -7}, true);
    b.quant = qp(1.f, 0);
    OpResult r = dequantize(b);
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{16777216.f, 16777220.f, -7.f}));
  }
  {  // per output channel
    TensorData b = i32({2}, {-3, 7}, true);
    b.quant = per_axis({0.5f, 0.25f}, 0, {0, 0});
    OpResult r = dequantize(b);
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{-1.5f, 1.75f}));
  }
}

TEST(DequantizeLinearInfer, Errors) {
  // int8 without parameters
  expect_invalid_model(dequantize(i8({2}, {1, 2})).status, "no quantization parameters", "DequantizeLinear_under_test");
  // uint8 never reaches the IR (the mapper shifts it to int8)
  {
    TensorData u = u8({2}, {1, 2});
    u.quant = qp(1.f, 0);
    expect_invalid_model(dequantize(u).status, "must be int8 or int32", "DequantizeLinear_under_test");
  }
  // int32 with a non-zero zero point
  {
    TensorData b = i32({2}, {1, 2});
    b.quant = qp(1.f, 3);
    expect_invalid_model(dequantize(b).status, "zero point 3", "DequantizeLinear_under_test");
  }
  // per-axis scales that do not match the axis
  expect_invalid_model(dequantize(q8({2, 3}, {0, 0, 0, 0, 0, 0}, per_axis({1.f, 1.f}, 1, {0, 0}))).status,
                       "do not match axis", "DequantizeLinear_under_test");
  // a quantized float output
  {
    OpResult r = run_op(OpId::DequantizeLinear, Attrs(), {q8({2}, {1, 2}, qp(1.f, 0))}, 1, "ref", 1, {qp(1.f, 0)});
    expect_invalid_model(r.status, "must not carry quantization parameters", "DequantizeLinear_under_test");
  }
}

TEST(QuantizeDequantizeInfer, Idempotent) {
  {
    Graph g;
    Node n;
    n.name = "q";
    n.op = OpId::QuantizeLinear;
    n.inputs = {g.add_tensor("x", {2, 3}, DType::kF32)};
    n.outputs = {g.add_tensor("y", {}, DType::kF32)};
    g.tensor(n.outputs[0]).quant = qp(0.1f, 4);
    ASSERT_OK(find_op(n.op)->infer(g, n));
    EXPECT_EQ(g.tensor(n.outputs[0]).dtype, DType::kI8);
    EXPECT_EQ(g.tensor(n.outputs[0]).shape, Shape({2, 3}));
    expect_reinfer_unchanged(g, n);
    EXPECT_TRUE(same_params(g.tensor(n.outputs[0]).quant, qp(0.1f, 4)));  // infer never touches quant
  }
  {
    Graph g;
    Node n;
    n.name = "dq";
    n.op = OpId::DequantizeLinear;
    n.inputs = {g.add_tensor("x", {2, 3}, DType::kI8)};
    g.tensor(n.inputs[0]).quant = qp(0.1f, 4);
    n.outputs = {g.add_tensor("y", {}, DType::kF32)};
    ASSERT_OK(find_op(n.op)->infer(g, n));
    EXPECT_EQ(g.tensor(n.outputs[0]).dtype, DType::kF32);
    EXPECT_EQ(g.tensor(n.outputs[0]).shape, Shape({2, 3}));
    expect_reinfer_unchanged(g, n);
  }
}

// ------------------------------------------------------------------ ONNX mapper

template <typename T>
void init_raw(OnnxBuilder& b, const std::string& name, const std::vector<int64_t>& dims, int elem,
              const std::vector<T>& v) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

constexpr int kI8T = onnx::TensorProto::INT8;
constexpr int kU8T = onnx::TensorProto::UINT8;
constexpr int kI32T = onnx::TensorProto::INT32;

Status import(OnnxBuilder& b, Graph* g) {
  onnx_import::ImportStats stats;
  Status st = onnx_import::import_model(b.model(), onnx_import::ImportOptions(), g, &stats);
  g->precision = FloatPrecision::kFp32;  // exact float results in run_float_graph
  return st;
}

const Node* find_node(const Graph& g, OpId op, int k = 0) {
  for (const Node& n : g.nodes)
    if (n.op == op && k-- == 0) return &n;
  return nullptr;
}

// Runs graph g (float input 0) and returns float output 0.
std::vector<float> run_float_graph(const Graph& g, const std::vector<float>& x) {
  std::unique_ptr<Executor> runner;
  Status st = Executor::create_keep_all(g, false, 1, &runner);
  EXPECT_OK(st);
  if (!st.ok()) return {};
  EXPECT_OK(runner->set_input(0, x.data(), x.size() * sizeof(float)));
  EXPECT_OK(runner->run());
  const Tensor& y = g.tensor(g.outputs[0]);
  const float* p = runner->data_as<float>(g.outputs[0]);
  return std::vector<float>(p, p + y.numel());
}

TEST(QdqMapper, QuantizeLinearInt8AndUint8) {
  struct Case {
    const char* label;
    int zp_type;  // 0: no zero point input
    int32_t zp_onnx;
    int64_t output_dtype;  // 0: attribute absent
    int32_t want_zp;
  };
  for (const Case& c : {Case{"int8", kI8T, -7, 0, -7}, Case{"uint8", kU8T, 200, 0, 72},
                        Case{"no_zp_default_uint8", 0, 0, 0, -128}, Case{"no_zp_output_dtype_int8", 0, 0, kI8T, 0},
                        Case{"no_zp_output_dtype_uint8", 0, 0, kU8T, -128}}) {
    SCOPED_TRACE(c.label);
    OnnxBuilder b(21);
    b.input("x", {2, 3});
    b.init_f32("s", {}, {0.25f});
    std::vector<std::string> ins = {"x", "s"};
    if (c.zp_type == kI8T) init_raw<int8_t>(b, "zp", {}, kI8T, {static_cast<int8_t>(c.zp_onnx)});
    if (c.zp_type == kU8T) init_raw<uint8_t>(b, "zp", {}, kU8T, {static_cast<uint8_t>(c.zp_onnx)});
    if (c.zp_type) ins.push_back("zp");
    auto* q = b.node("QuantizeLinear", ins, {"y"}, "quant");
    if (c.output_dtype) OnnxBuilder::attr_i(q, "output_dtype", c.output_dtype);
    b.output("y");
    Graph g;
    ASSERT_OK(import(b, &g));
    const Node* n = find_node(g, OpId::QuantizeLinear);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->inputs.size(), 1u);
    EXPECT_TRUE(n->attrs.all().empty());
    const Tensor& y = g.tensor(n->outputs[0]);
    EXPECT_EQ(y.dtype, DType::kI8);
    EXPECT_EQ(y.shape, Shape({2, 3}));
    EXPECT_TRUE(same_params(y.quant, qp(0.25f, c.want_zp))) << y.quant.zero_point.at(0);
  }
}

TEST(QdqMapper, Uint8QuantizeDequantizeRoundTripIsExact) {
  // x -> Q(uint8, zp 131) -> DQ -> y equals (sat_u8(rne(x / s) + 131) - 131) * s as ONNX defines it.
  const float s = 0.05f;
  OnnxBuilder b(13);
  b.input("x", {1, 40});
  b.init_f32("s", {}, {s});
  init_raw<uint8_t>(b, "zp", {}, kU8T, {131});
  b.node("QuantizeLinear", {"x", "s", "zp"}, {"q"}, "quant");
  b.node("DequantizeLinear", {"q", "s", "zp"}, {"y"}, "dequant");
  b.output("y");
  Graph g;
  ASSERT_OK(import(b, &g));
  const Node* dq = find_node(g, OpId::DequantizeLinear);
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->inputs[0], find_node(g, OpId::QuantizeLinear)->outputs[0]);
  EXPECT_TRUE(same_params(g.tensor(dq->inputs[0]).quant, qp(s, 3)));
  const std::vector<float> x = random_floats(40, 5, -8.f, 8.f);
  const std::vector<float> y = run_float_graph(g, x);
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double u = rne_naive(static_cast<double>(x[i] / s)) + 131;  // the uint8 value ONNX computes
    u = u < 0 ? 0 : (u > 255 ? 255 : u);
    EXPECT_EQ(y[i], static_cast<float>(static_cast<int>(u) - 131) * s) << "x=" << x[i];
  }
}

TEST(QdqMapper, ConstantDequantizeIsKeptWithItsInt8Values) {
  // Per-channel int8 weights [3, 2] (axis 0) and a uint8 constant, which becomes a new int8 one.
  OnnxBuilder b(13);
  b.input("x", {3, 2});
  init_raw<int8_t>(b, "w", {3, 2}, kI8T, {1, -2, 3, -4, 127, -127});
  b.init_f32("sw", {3}, {0.5f, 0.25f, 2.f});
  init_raw<int8_t>(b, "zw", {3}, kI8T, {0, 0, 0});
  auto* dq = b.node("DequantizeLinear", {"w", "sw", "zw"}, {"wf"}, "dq_w");
  OnnxBuilder::attr_i(dq, "axis", 0);
  init_raw<uint8_t>(b, "u", {3, 2}, kU8T, {0, 128, 255, 1, 130, 127});
  b.init_f32("su", {}, {0.5f});
  init_raw<uint8_t>(b, "zu", {}, kU8T, {130});
  b.node("DequantizeLinear", {"u", "su", "zu"}, {"uf"}, "dq_u");
  b.node("Add", {"x", "wf"}, {"t"});
  b.node("Add", {"t", "uf"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(import(b, &g));
  const Node* dw = find_node(g, OpId::DequantizeLinear, 0);
  const Node* du = find_node(g, OpId::DequantizeLinear, 1);
  ASSERT_NE(dw, nullptr);
  ASSERT_NE(du, nullptr);  // not folded although the input is constant
  const Tensor& w = g.tensor(dw->inputs[0]);
  EXPECT_TRUE(w.is_const());
  EXPECT_EQ(w.dtype, DType::kI8);
  EXPECT_EQ(w.quant.scale, (std::vector<float>{0.5f, 0.25f, 2.f}));
  EXPECT_EQ(w.quant.zero_point, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(w.quant.axis, 0);
  const Tensor& u = g.tensor(du->inputs[0]);
  EXPECT_TRUE(u.is_const());
  EXPECT_EQ(u.dtype, DType::kI8);
  EXPECT_TRUE(same_params(u.quant, qp(0.5f, 2)));  // 130 - 128
  const std::vector<int8_t> uq(u.const_ptr<int8_t>(), u.const_ptr<int8_t>() + 6);
  EXPECT_EQ(uq, (std::vector<int8_t>{-128, 0, 127, -127, 2, -1}));

  // y = x + w * s_w[row] + (u - 130) * 0.5
  const std::vector<float> x = {0.f, 0.f, 0.f, 0.f, 10.f, -10.f};
  const std::vector<float> want = {0.5f + -65.f, -1.f + -1.f, 0.75f + 62.5f, -1.f + -64.5f,
                                   10.f + 254.f + 0.f, -10.f - 254.f - 1.5f};
  EXPECT_EQ(run_float_graph(g, x), want);
}

TEST(QdqMapper, Int32BiasAndAbsentZeroPoints) {
  // int32 DequantizeLinear (bias), and DequantizeLinear without a zero point after an int8 and a
  // uint8 QuantizeLinear: 0 of the tensor's ONNX type (uint8 0 maps to -128).
  OnnxBuilder b(13);
  b.input("x", {2});
  init_raw<int32_t>(b, "bias", {2}, kI32T, {-300, 70000});
  b.init_f32("sb", {2}, {0.01f, 0.001f});
  auto* db = b.node("DequantizeLinear", {"bias", "sb"}, {"bf"}, "dq_bias");
  OnnxBuilder::attr_i(db, "axis", 0);
  b.init_f32("s", {}, {0.1f});
  init_raw<int8_t>(b, "z8", {}, kI8T, {0});
  init_raw<uint8_t>(b, "zu", {}, kU8T, {0});
  b.node("QuantizeLinear", {"x", "s", "z8"}, {"q8"}, "q_int8");
  b.node("DequantizeLinear", {"q8", "s"}, {"f8"}, "dq_int8");
  b.node("QuantizeLinear", {"x", "s", "zu"}, {"qu"}, "q_uint8");
  b.node("DequantizeLinear", {"qu", "s"}, {"fu"}, "dq_uint8");
  b.node("Add", {"f8", "fu"}, {"t"});
  b.node("Add", {"t", "bf"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(import(b, &g));
  const Node* n = find_node(g, OpId::DequantizeLinear, 0);
  ASSERT_NE(n, nullptr);
  const Tensor& bias = g.tensor(n->inputs[0]);
  EXPECT_EQ(bias.dtype, DType::kI32);
  EXPECT_EQ(bias.quant.zero_point, (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(bias.quant.axis, 0);
  EXPECT_TRUE(same_params(g.tensor(find_node(g, OpId::QuantizeLinear, 1)->outputs[0]).quant, qp(0.1f, -128)));
  // x = {1.0, -2.0}: int8 path 1.0 / -2.0; uint8 path 1.0 / 0 (uint8 saturates at 0); bias -3 / 70.
  const std::vector<float> y = run_float_graph(g, {1.f, -2.f});
  ASSERT_EQ(y.size(), 2u);
  const float f8_0 = static_cast<float>(10) * 0.1f, f8_1 = static_cast<float>(-20) * 0.1f;
  const float fu_0 = static_cast<float>(10) * 0.1f, fu_1 = 0.f;
  EXPECT_EQ(y[0], (f8_0 + fu_0) + static_cast<float>(-300) * 0.01f);
  EXPECT_EQ(y[1], (f8_1 + fu_1) + static_cast<float>(70000) * 0.001f);
}

TEST(QdqMapper, QuantizeLinearOfConstantWeightsIsFoldedPerChannel) {
  // Float weights -> Q (per channel, uint8 zero point 128 = int8 0) -> DQ: the Q node is computed at
  // import (its input is constant) and the DQ reads the int8 constant it produced.
  OnnxBuilder b(13);
  b.input("x", {2, 3});
  b.init_f32("w", {2, 3}, {0.5f, -0.75f, 100.f, 0.3f, -0.1f, 0.125f});
  b.init_f32("s", {2}, {0.25f, 0.1f});
  init_raw<uint8_t>(b, "zp", {2}, kU8T, {128, 128});
  auto* q = b.node("QuantizeLinear", {"w", "s", "zp"}, {"wq"}, "q_w");
  OnnxBuilder::attr_i(q, "axis", 0);
  auto* dq = b.node("DequantizeLinear", {"wq", "s", "zp"}, {"wf"}, "dq_w");
  OnnxBuilder::attr_i(dq, "axis", 0);
  b.node("Add", {"x", "wf"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(import(b, &g));
  EXPECT_EQ(find_node(g, OpId::QuantizeLinear), nullptr);
  const Node* n = find_node(g, OpId::DequantizeLinear);
  ASSERT_NE(n, nullptr);
  const Tensor& w = g.tensor(n->inputs[0]);
  ASSERT_TRUE(w.is_const());
  EXPECT_EQ(w.dtype, DType::kI8);
  EXPECT_EQ(w.quant.scale, (std::vector<float>{0.25f, 0.1f}));
  EXPECT_EQ(w.quant.zero_point, (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(w.quant.axis, 0);
  // Row 0 / 0.25: {2, -3, 400 -> 127}; row 1 / 0.1 (float32): {3, -1, 1.25 -> 1}.
  const std::vector<int8_t> wq(w.const_ptr<int8_t>(), w.const_ptr<int8_t>() + 6);
  EXPECT_EQ(wq, (std::vector<int8_t>{2, -3, 127, 3, -1, 1}));
}

Status import_single(const std::string& op, bool scale_const, bool zp_const, int64_t block_size = 0,
                     const std::vector<float>& scales = {0.5f}, int x_type = onnx::TensorProto::FLOAT) {
  OnnxBuilder b(21);
  b.input("x", {2, 3}, x_type);
  if (scale_const) b.init_f32("s", {static_cast<int64_t>(scales.size())}, scales);
  else b.input("s", {static_cast<int64_t>(scales.size())});
  if (zp_const) init_raw<int8_t>(b, "zp", {static_cast<int64_t>(scales.size())}, kI8T,
                                 std::vector<int8_t>(scales.size(), 0));
  else b.input("zp", {static_cast<int64_t>(scales.size())}, kI8T);
  auto* n = b.node(op, {"x", "s", "zp"}, {"y"}, "the_node");
  if (block_size) OnnxBuilder::attr_i(n, "block_size", block_size);
  b.output("y");
  Graph g;
  return import(b, &g);
}

void expect_error(const Status& st, StatusCode code, const std::string& fragment) {
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), code) << st.message();
  EXPECT_NE(st.message().find("the_node"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
}

TEST(QdqMapper, Errors) {
  expect_error(import_single("QuantizeLinear", false, true), StatusCode::kInvalidModel, "must be a constant");
  expect_error(import_single("QuantizeLinear", true, false), StatusCode::kInvalidModel, "must be a constant");
  expect_error(import_single("DequantizeLinear", false, true, 0, {0.5f}, kI8T), StatusCode::kInvalidModel,
               "must be a constant");
  expect_error(import_single("QuantizeLinear", true, true, 2), StatusCode::kUnimplemented, "block_size");
  // per-axis parameters on an activation
  expect_error(import_single("QuantizeLinear", true, true, 0, {0.5f, 0.25f, 1.f}), StatusCode::kUnimplemented,
               "quantized per tensor");
  // int8 zero point for a uint8 tensor
  expect_error(import_single("DequantizeLinear", true, true, 0, {0.5f}, kU8T), StatusCode::kInvalidModel,
               "the zero point is int8");
  // a non-positive scale reaches infer
  expect_error(import_single("QuantizeLinear", true, true, 0, {-1.f}), StatusCode::kInvalidModel,
               "not a finite positive");

  {  // uint8 graph input read by DequantizeLinear: no QuantizeLinear to map it
    OnnxBuilder b(13);
    b.input("x", {4}, kU8T);
    b.init_f32("s", {}, {0.5f});
    init_raw<uint8_t>(b, "zp", {}, kU8T, {128});
    b.node("DequantizeLinear", {"x", "s", "zp"}, {"y"}, "the_node");
    b.output("y");
    Graph g;
    expect_error(import(b, &g), StatusCode::kUnimplemented, "neither a constant nor the output of a QuantizeLinear");
  }
  {  // Q and DQ of one tensor with different parameters
    OnnxBuilder b(13);
    b.input("x", {4});
    b.init_f32("s", {}, {0.5f});
    b.init_f32("s2", {}, {0.25f});
    init_raw<int8_t>(b, "zp", {}, kI8T, {1});
    b.node("QuantizeLinear", {"x", "s", "zp"}, {"q"}, "quant");
    b.node("DequantizeLinear", {"q", "s2", "zp"}, {"y"}, "the_node");
    b.output("y");
    Graph g;
    expect_error(import(b, &g), StatusCode::kInvalidModel, "one set of parameters");
  }
  {  // a per-axis scale that does not match x's axis
    OnnxBuilder b(13);
    b.input("x", {2, 3});
    init_raw<int8_t>(b, "w", {2, 3}, kI8T, {1, 2, 3, 4, 5, 6});
    b.init_f32("s", {2}, {0.5f, 0.25f});
    init_raw<int8_t>(b, "zp", {2}, kI8T, {0, 0});
    b.node("DequantizeLinear", {"w", "s", "zp"}, {"wf"}, "the_node");  // axis 1 (default) has 3 entries
    b.node("Add", {"x", "wf"}, {"y"});
    b.output("y");
    Graph g;
    expect_error(import(b, &g), StatusCode::kInvalidModel, "do not match axis");
  }
}

}  // namespace
}  // namespace orknn::test
