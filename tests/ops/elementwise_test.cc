// Unary element-wise ops, Not, Identity, Dropout: reference kernels against formulas evaluated
// in double here (written from the ONNX operator specs) and hand-computed values.
#include <cmath>
#include <functional>
#include <limits>

#include "kernels/kernel.h"
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

const std::vector<float> kGeneral = {-6.f, -3.f, -2.5f, -1.f, -0.5f, -0.1f, 0.f, 0.1f, 0.5f, 1.f, 2.5f, 3.f, 6.f};
const std::vector<float> kPositive = {0.01f, 0.5f, 1.f, 2.f, 10.f, 100.f};
const std::vector<float> kNonZero = {-4.f, -0.5f, 0.25f, 1.f, 3.f};

struct UnaryCase {
  const char* label;
  OpId op;
  Attrs attrs;
  std::function<double(double)> f;
  std::vector<float> x;
};

double clamp01(double v) { return v < 0 ? 0 : (v > 1 ? 1 : v); }

std::vector<UnaryCase> unary_cases() {
  const double selu_a = 1.6732632423543772848170429916717;
  const double selu_g = 1.0507009873554804934193349852946;
  return {
      {"Relu", OpId::Relu, A(), [](double x) { return x > 0 ? x : 0; }, kGeneral},
      {"LeakyRelu_default", OpId::LeakyRelu, A(), [](double x) { return x >= 0 ? x : 0.01 * x; }, kGeneral},
      {"LeakyRelu_0.2", OpId::LeakyRelu, A().f("alpha", 0.2f), [](double x) { return x >= 0 ? x : 0.2 * x; }, kGeneral},
      {"Sigmoid", OpId::Sigmoid, A(), [](double x) { return 1 / (1 + std::exp(-x)); }, kGeneral},
      {"HardSigmoid_default", OpId::HardSigmoid, A(), [](double x) { return clamp01(0.2 * x + 0.5); }, kGeneral},
      {"HardSigmoid_custom", OpId::HardSigmoid, A().f("alpha", 0.5f).f("beta", 0.25f),
       [](double x) { return clamp01(0.5 * x + 0.25); }, kGeneral},
      // PyTorch's form x * relu6(x + 3) / 6, equal to ONNX's x * HardSigmoid(1/6, 1/2).
      {"HardSwish", OpId::HardSwish, A(), [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; },
       kGeneral},
      {"Tanh", OpId::Tanh, A(), [](double x) { return std::tanh(x); }, kGeneral},
      {"Erf", OpId::Erf, A(), [](double x) { return std::erf(x); }, kGeneral},
      {"Exp", OpId::Exp, A(), [](double x) { return std::exp(x); }, kGeneral},
      {"Log", OpId::Log, A(), [](double x) { return std::log(x); }, kPositive},
      {"Sqrt", OpId::Sqrt, A(), [](double x) { return std::sqrt(x); }, kPositive},
      {"Neg", OpId::Neg, A(), [](double x) { return -x; }, kGeneral},
      {"Abs", OpId::Abs, A(), [](double x) { return std::fabs(x); }, kGeneral},
      {"Reciprocal", OpId::Reciprocal, A(), [](double x) { return 1 / x; }, kNonZero},
      {"Floor", OpId::Floor, A(), [](double x) { return std::floor(x); }, kGeneral},
      {"Ceil", OpId::Ceil, A(), [](double x) { return std::ceil(x); }, kGeneral},
      {"Sin", OpId::Sin, A(), [](double x) { return std::sin(x); }, kGeneral},
      {"Cos", OpId::Cos, A(), [](double x) { return std::cos(x); }, kGeneral},
      {"Softplus", OpId::Softplus, A(), [](double x) { return std::log(1 + std::exp(x)); }, kGeneral},
      {"Elu_default", OpId::Elu, A(), [](double x) { return x >= 0 ? x : std::exp(x) - 1; }, kGeneral},
      {"Elu_0.5", OpId::Elu, A().f("alpha", 0.5f), [](double x) { return x >= 0 ? x : 0.5 * (std::exp(x) - 1); },
       kGeneral},
      {"Selu", OpId::Selu, A(), [=](double x) { return x > 0 ? selu_g * x : selu_g * selu_a * (std::exp(x) - 1); },
       kGeneral},
      {"Sign", OpId::Sign, A(), [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }, kGeneral},
      {"Mish", OpId::Mish, A(), [](double x) { return x * std::tanh(std::log(1 + std::exp(x))); }, kGeneral},
      {"Gelu_none", OpId::Gelu, A(), [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, kGeneral},
      {"Gelu_tanh", OpId::Gelu, A().s("approximate", "tanh"),
       [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }, kGeneral},
  };
}

TEST(UnaryRef, MatchesDoubleFormulas) {
  for (const UnaryCase& c : unary_cases()) {
    SCOPED_TRACE(c.label);
    // As a 1-D tensor and as a 3-D one: element-wise ops must not care about the shape.
    for (const Shape& s : {Shape{static_cast<int64_t>(c.x.size())}, Shape{1, static_cast<int64_t>(c.x.size()), 1}}) {
      OpResult r = ref(c.op, c.attrs, {f32(s, c.x)});
      ASSERT_OK(r.status);
      ASSERT_EQ(r.outputs.size(), 1u);
      EXPECT_EQ(r.outputs[0].shape, s);
      EXPECT_EQ(r.outputs[0].dtype, DType::kF32);
      std::vector<double> want;
      for (float v : c.x) want.push_back(c.f(v));
      expect_near_all(r.outputs[0].as<float>(), want, 2e-6, c.label);
    }
    expect_infer_idempotent(c.op, c.attrs, {f32({static_cast<int64_t>(c.x.size())}, c.x)});
  }
}

// Values worked out by hand (or well-known constants), independent of any formula above.
TEST(UnaryRef, HandComputedValues) {
  struct Spot {
    OpId op;
    Attrs attrs;
    float x;
    float y;
  };
  const std::vector<Spot> spots = {
      {OpId::Sigmoid, A(), 0.f, 0.5f},        {OpId::HardSwish, A(), 1.f, 2.f / 3.f},
      {OpId::HardSwish, A(), -3.f, 0.f},      {OpId::HardSwish, A(), 3.f, 3.f},
      {OpId::HardSwish, A(), -1.5f, -0.375f}, {OpId::HardSigmoid, A(), 1.f, 0.7f},
      {OpId::HardSigmoid, A(), 3.f, 1.f},     {OpId::Gelu, A(), 1.f, 0.8413447f},
      {OpId::Gelu, A(), -1.f, -0.1586553f},   {OpId::Gelu, A().s("approximate", "tanh"), 1.f, 0.8411920f},
      {OpId::Mish, A(), 1.f, 0.8650984f},     {OpId::Softplus, A(), 0.f, 0.6931472f},
      {OpId::Softplus, A(), 100.f, 100.f},    {OpId::Softplus, A(), -100.f, 0.f},
      {OpId::Selu, A(), -1.f, -1.1113307f},   {OpId::Selu, A(), 2.f, 2.1014020f},
      {OpId::Elu, A(), -1.f, -0.6321206f},    {OpId::LeakyRelu, A(), -10.f, -0.1f},
      {OpId::Erf, A(), 0.5f, 0.5204999f},     {OpId::Reciprocal, A(), 4.f, 0.25f},
  };
  for (const Spot& s : spots) {
    OpResult r = ref(s.op, s.attrs, {f32({1}, {s.x})});
    ASSERT_OK(r.status);
    EXPECT_NEAR(r.outputs[0].as<float>()[0], s.y, 2e-6) << op_name(s.op) << "(" << s.x << ")";
  }
}

TEST(UnaryRef, RoundHalfToEven) {
  OpResult r = ref(OpId::Round, A(), {f32({9}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, 2.6f, -2.6f})});
  ASSERT_OK(r.status);
  const std::vector<float> want = {0.f, 2.f, 2.f, -0.f, -2.f, -2.f, 2.f, 3.f, -3.f};
  EXPECT_EQ(r.outputs[0].as<float>(), want);
}

TEST(UnaryRef, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  OpResult r = ref(OpId::Sqrt, A(), {f32({2}, {-1.f, 0.f})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(std::isnan(r.outputs[0].as<float>()[0]));
  r = ref(OpId::Log, A(), {f32({1}, {0.f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>()[0], -inf);
  r = ref(OpId::Sigmoid, A(), {f32({2}, {-200.f, 200.f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0.f, 1.f}));
  r = ref(OpId::Relu, A(), {f32({1}, {std::nanf("")})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(std::isnan(r.outputs[0].as<float>()[0]));
}

TEST(UnaryRef, IntegerOps) {
  const std::vector<int64_t> x = {-7, -1, 0, 3, 9};
  struct Case {
    OpId op;
    std::vector<int64_t> want;
  };
  for (const Case& c : {Case{OpId::Relu, {0, 0, 0, 3, 9}}, Case{OpId::Neg, {7, 1, 0, -3, -9}},
                        Case{OpId::Abs, {7, 1, 0, 3, 9}}, Case{OpId::Sign, {-1, -1, 0, 1, 1}}}) {
    OpResult r = ref(c.op, A(), {i64({5}, x)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
    EXPECT_EQ(r.outputs[0].as<int64_t>(), c.want) << op_name(c.op);
    std::vector<int32_t> x32(x.begin(), x.end()), w32(c.want.begin(), c.want.end());
    r = ref(c.op, A(), {i32({5}, x32)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].dtype, DType::kI32);
    EXPECT_EQ(r.outputs[0].as<int32_t>(), w32) << op_name(c.op);
  }
}

TEST(UnaryRef, FloatOnlyOpsRejectIntegers) {
  for (OpId op : {OpId::Sigmoid, OpId::Exp, OpId::Gelu, OpId::Floor, OpId::HardSwish}) {
    OpResult r = ref(op, A(), {i64({2}, {1, 2})});
    ASSERT_FALSE(r.status.ok()) << op_name(op);
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidModel);
    EXPECT_TRUE(contains(r.status.message(), op_name(op))) << r.status.message();
    EXPECT_TRUE(contains(r.status.message(), "_under_test")) << r.status.message();
    EXPECT_TRUE(contains(r.status.message(), "int64")) << r.status.message();
  }
}

TEST(UnaryRef, GeluRejectsUnknownApproximation) {
  OpResult r = ref(OpId::Gelu, A().s("approximate", "fast"), {f32({1}, {1.f})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "approximate")) << r.status.message();
}

TEST(UnaryRef, WrongArity) {
  OpResult r = ref(OpId::Relu, A(), {f32({1}, {1.f}), f32({1}, {1.f})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "Relu")) << r.status.message();
}

// ---- Clip ----

const std::vector<float> kClipX = {-3.f, -1.f, -0.25f, 0.f, 0.5f, 1.f, 2.f, 5.f};

std::vector<float> clip_expect(float lo, float hi) {
  std::vector<float> r;
  for (float v : kClipX) r.push_back(std::min(std::max(v, lo), hi));
  return r;
}

TEST(ClipRef, BoundsAsInputsOrAttributes) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char* label;
    Attrs attrs;
    std::vector<TensorData> extra;
    float lo, hi;
  };
  const std::vector<Case> cases = {
      {"inputs_both", A(), {f32({}, {-1.f}, true), f32({}, {2.f}, true)}, -1.f, 2.f},
      {"input_min_only", A(), {f32({}, {0.f}, true)}, 0.f, inf},
      {"input_max_only", A(), {TensorData::none(), f32({}, {0.5f}, true)}, -inf, 0.5f},
      {"attrs_opset6", A().f("min", -0.25f).f("max", 1.f), {}, -0.25f, 1.f},
      {"no_bounds", A(), {}, -inf, inf},
      {"relu6", A(), {f32({1}, {0.f}, true), f32({1}, {6.f}, true)}, 0.f, 6.f},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    std::vector<TensorData> in = {f32({2, 4}, kClipX)};
    in.insert(in.end(), c.extra.begin(), c.extra.end());
    OpResult r = ref(OpId::Clip, c.attrs, in);
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].as<float>(), clip_expect(c.lo, c.hi));
    expect_infer_idempotent(OpId::Clip, c.attrs, in);
  }
}

TEST(ClipRef, MinGreaterThanMaxGivesMax) {
  OpResult r = ref(OpId::Clip, A(), {f32({2, 4}, kClipX), f32({}, {2.f}, true), f32({}, {1.f}, true)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), std::vector<float>(8, 1.f));
}

TEST(ClipRef, NanPassesThrough) {
  OpResult r = ref(OpId::Clip, A().f("min", 0.f).f("max", 1.f), {f32({1}, {std::nanf("")})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(std::isnan(r.outputs[0].as<float>()[0]));
}

TEST(ClipRef, Int64) {
  OpResult r = ref(OpId::Clip, A(), {i64({5}, {-9, -2, 0, 4, 100}), i64c({}, {-3}), i64c({}, {10})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{-3, -2, 0, 4, 10}));
}

TEST(ClipRef, NonConstantBoundIsAnError) {
  OpResult r = ref(OpId::Clip, A(), {f32({2}, {1.f, 2.f}), f32({}, {0.f}, false)});
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidModel);
  EXPECT_TRUE(contains(r.status.message(), "Clip_under_test")) << r.status.message();
  EXPECT_TRUE(contains(r.status.message(), "--input-shape")) << r.status.message();
}

TEST(ClipRef, NonScalarBoundIsAnError) {
  OpResult r = ref(OpId::Clip, A(), {f32({2}, {1.f, 2.f}), f32({2}, {0.f, 1.f}, true)});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "scalar")) << r.status.message();
}

// ---- quantized inputs: the 256-entry table ----

TEST(UnaryRef, QuantizedInt8GoesThroughTable) {
  Graph g;
  g.precision = FloatPrecision::kFp32;
  const int in = g.add_tensor("x", {6}, DType::kI8);
  const int out = g.add_tensor("y", {}, DType::kF32);
  g.tensor(in).quant.scale = {0.5f};
  g.tensor(in).quant.zero_point = {-10};
  g.tensor(out).quant.scale = {0.25f};
  g.tensor(out).quant.zero_point = {-128};
  Node n;
  n.name = "relu_q";
  n.op = OpId::Relu;
  n.inputs = {in};
  n.outputs = {out};
  ASSERT_OK(find_op(OpId::Relu)->infer(g, n));
  EXPECT_EQ(g.tensor(out).dtype, DType::kI8);
  std::unique_ptr<Kernel> k = create_kernel(g, n, false, nullptr);
  ASSERT_TRUE(k);
  // real x = 0.5 * (q + 10): q=-128 -> -59, -10 -> 0, -9 -> 0.5, 0 -> 5, 50 -> 30, 127 -> 68.5
  // y = relu(x) / 0.25 - 128, saturated: -128, -128, -126, -108, -8, 127 (146 saturates)
  const int8_t xq[6] = {-128, -10, -9, 0, 50, 127};
  int8_t yq[6] = {};
  KernelContext ctx;
  ctx.graph = &g;
  ctx.node = &n;
  ctx.inputs = {xq};
  ctx.outputs = {yq};
  ASSERT_OK(k->prepare(ctx));
  k->run(ctx);
  const int8_t want[6] = {-128, -128, -126, -108, -8, 127};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(yq[i], want[i]) << i;
}

// ---- Not, Identity, Dropout ----

TEST(NotRef, Bool) {
  OpResult r = ref(OpId::Not, A(), {boolean({2, 2}, {0, 1, 1, 0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kBool);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_FALSE(ref(OpId::Not, A(), {f32({1}, {1.f})}).status.ok());
}

TEST(IdentityRef, AnyDtype) {
  OpResult r = ref(OpId::Identity, A(), {i64({3}, {5, -6, 7})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{5, -6, 7}));
  r = ref(OpId::Identity, A(), {u8({2, 2}, {1, 2, 250, 0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{2, 2}));
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{1, 2, 250, 0}));
  r = ref(OpId::Identity, A(), {f32({}, {3.5f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{});
  EXPECT_EQ(r.outputs[0].as<float>(), std::vector<float>{3.5f});
}

TEST(DropoutRef, IdentityWithAllTrueMask) {
  const std::vector<float> x = iota_f(6, -2.f);
  const std::vector<std::vector<TensorData>> variants = {
      {f32({2, 3}, x)},
      {f32({2, 3}, x), f32({}, {0.3f}, true)},
      {f32({2, 3}, x), f32({}, {0.3f}, true), boolean({}, {0}, true)},
      {f32({2, 3}, x), TensorData::none(), boolean({}, {0}, true)},
  };
  for (size_t v = 0; v < variants.size(); ++v) {
    OpResult r = ref(OpId::Dropout, A(), variants[v], 2);
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].as<float>(), x) << v;
    EXPECT_EQ(r.outputs[1].dtype, DType::kBool);
    EXPECT_EQ(r.outputs[1].shape, (Shape{2, 3}));
    EXPECT_EQ(r.outputs[1].as<uint8_t>(), std::vector<uint8_t>(6, 1)) << v;
    expect_infer_idempotent(OpId::Dropout, A(), variants[v], 2);
  }
  OpResult one = ref(OpId::Dropout, A(), {f32({2, 3}, x)}, 1);
  ASSERT_OK(one.status);
  EXPECT_EQ(one.outputs[0].as<float>(), x);
}

TEST(DropoutRef, TrainingModeIsRejected) {
  OpResult r = ref(OpId::Dropout, A(), {f32({2}, {1.f, 2.f}), f32({}, {0.5f}, true), boolean({}, {1}, true)});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "training_mode")) << r.status.message();
  r = ref(OpId::Dropout, A(), {f32({2}, {1.f, 2.f}), f32({}, {0.5f}, true), boolean({}, {0}, false)});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "--input-shape")) << r.status.message();
}

}  // namespace
}  // namespace orknn::test
