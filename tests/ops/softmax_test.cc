// Softmax and LogSoftmax (opset 13, one axis): every axis of ranks 1 to 4 against a double
// implementation here, ONNX example values, large inputs, and error cases.
#include <cmath>
#include <string>
#include <vector>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

// Softmax over `axis` by gathering each slice through explicit strides.
std::vector<double> naive_softmax(const Shape& s, size_t axis, const std::vector<float>& x, bool log) {
  int64_t stride = 1;
  for (size_t i = axis + 1; i < s.size(); ++i) stride *= s[i];
  const int64_t len = s[axis];
  std::vector<double> y(x.size());
  for (int64_t e = 0; e < shape_numel(s); ++e) {
    const int64_t pos = (e / stride) % len, start = e - pos * stride;
    double mx = -INFINITY;
    for (int64_t j = 0; j < len; ++j) mx = std::max<double>(mx, x[static_cast<size_t>(start + j * stride)]);
    double sum = 0;
    for (int64_t j = 0; j < len; ++j) sum += std::exp(x[static_cast<size_t>(start + j * stride)] - mx);
    const double xe = x[static_cast<size_t>(e)];
    y[static_cast<size_t>(e)] = log ? (xe - mx) - std::log(sum) : std::exp(xe - mx) / sum;
  }
  return y;
}

TEST(SoftmaxRef, EveryAxis) {
  uint32_t seed = 1;
  for (const Shape& s : {Shape{7}, Shape{3, 5}, Shape{2, 3, 4}, Shape{2, 3, 2, 5}}) {
    const int64_t rank = static_cast<int64_t>(s.size());
    for (int64_t axis = -rank; axis < rank; ++axis) {
      for (bool log : {false, true}) {
        SCOPED_TRACE(shape_str(s) + " axis=" + std::to_string(axis) + (log ? " log" : ""));
        std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(s)), seed++, -5.f, 5.f);
        Attrs a;
        a.set_int("axis", axis);
        OpResult r = run_op(log ? OpId::LogSoftmax : OpId::Softmax, a, {TensorData::f32(s, x)}, 1);
        ASSERT_TRUE(r.status.ok()) << r.status.message();
        ASSERT_EQ(r.outputs[0].shape, s);
        std::vector<double> want = naive_softmax(s, static_cast<size_t>(axis < 0 ? axis + rank : axis), x, log);
        std::vector<float> got = r.outputs[0].as<float>();
        for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-6 * (1 + std::fabs(want[i]))) << i;
      }
    }
  }
}

TEST(SoftmaxRef, DefaultAxisIsLast) {
  std::vector<float> x = random_floats(24, 3);
  OpResult r = run_op(OpId::Softmax, Attrs(), {TensorData::f32({2, 3, 4}, x)}, 1);
  ASSERT_TRUE(r.status.ok());
  std::vector<double> want = naive_softmax({2, 3, 4}, 2, x, false);
  std::vector<float> got = r.outputs[0].as<float>();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST(SoftmaxRef, OnnxExampleAndLargeNumbers) {
  // test_softmax_example: [-1, 0, 1].
  OpResult r = run_op(OpId::Softmax, Attrs(), {TensorData::f32({1, 3}, {-1, 0, 1})}, 1);
  ASSERT_TRUE(r.status.ok());
  std::vector<float> y = r.outputs[0].as<float>();
  EXPECT_NEAR(y[0], 0.09003058, 1e-7);
  EXPECT_NEAR(y[1], 0.24472848, 1e-7);
  EXPECT_NEAR(y[2], 0.66524094, 1e-7);
  // Large values must not overflow: same result as [0, 1, 2, 3] shifted by 10000.
  r = run_op(OpId::Softmax, Attrs(), {TensorData::f32({4}, {10000, 10001, 10002, 10003})}, 1);
  ASSERT_TRUE(r.status.ok());
  y = r.outputs[0].as<float>();
  EXPECT_NEAR(y[0], 0.0320586, 1e-6);
  EXPECT_NEAR(y[3], 0.64391426, 1e-6);
  r = run_op(OpId::LogSoftmax, Attrs(), {TensorData::f32({4}, {10000, 10001, 10002, 10003})}, 1);
  ASSERT_TRUE(r.status.ok());
  y = r.outputs[0].as<float>();
  EXPECT_NEAR(y[0], -3.4401896, 1e-5);
  EXPECT_NEAR(y[3], -0.4401897, 1e-5);
}

TEST(SoftmaxInfer, ErrorsAndNormalisation) {
  Attrs a3;
  a3.set_int("axis", 3);
  expect_infer_error(OpId::Softmax, {{{2, 3, 4}, DType::kF32}}, a3, "axis");
  Attrs am4;
  am4.set_int("axis", -4);
  expect_infer_error(OpId::LogSoftmax, {{{2, 3, 4}, DType::kF32}}, am4, "axis");
  expect_infer_error(OpId::Softmax, {{{2, 3}, DType::kI32}}, Attrs(), "float32");
  expect_infer_error(OpId::Softmax, {{{2, 3}, DType::kF32}, {{2, 3}, DType::kF32}}, Attrs(), "input");
  expect_infer_error(OpId::Softmax, {{{}, DType::kF32}}, Attrs(), "rank");

  Graph g;
  Node n;
  n.name = "sm";
  n.op = OpId::Softmax;
  n.inputs = {g.add_tensor("x", {2, 3, 4}, DType::kF32)};
  n.outputs = {g.add_tensor("y", {}, DType::kF32)};
  n.attrs.set_int("axis", -2);
  ASSERT_TRUE(infer_Softmax(g, n).ok());
  EXPECT_EQ(n.attrs.get_int("axis", -9), 1);
  ASSERT_TRUE(infer_Softmax(g, n).ok());
  EXPECT_EQ(n.attrs.get_int("axis", -9), 1);
}

}  // namespace
}  // namespace orknn::test
