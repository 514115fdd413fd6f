// LayerNormalization and InstanceNormalization: every axis / rank against double formulas
// written here (including broadcast Scale/B), ONNX-style hand values, and error cases.
#include <cmath>
#include <string>
#include <vector>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

std::vector<double> naive_layernorm(const Shape& xs, size_t axis, const std::vector<float>& x, const Shape& ss,
                                    const std::vector<float>& scale, const Shape& bs, const std::vector<float>& bias,
                                    double eps) {
  const Shape norm_shape(xs.begin() + static_cast<long>(axis), xs.end());
  const int64_t len = shape_numel(norm_shape), groups = shape_numel(xs) / len;
  std::vector<double> y(x.size());
  for (int64_t g = 0; g < groups; ++g) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < len; ++i) mean += x[static_cast<size_t>(g * len + i)];
    mean /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i) var += std::pow(x[static_cast<size_t>(g * len + i)] - mean, 2);
    var /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i) {
      const std::vector<int64_t> idx = unravel(i, norm_shape);
      const double s = scale[static_cast<size_t>(broadcast_index(idx, ss))];
      const double b = bias.empty() ? 0.0 : bias[static_cast<size_t>(broadcast_index(idx, bs))];
      y[static_cast<size_t>(g * len + i)] = (x[static_cast<size_t>(g * len + i)] - mean) / std::sqrt(var + eps) * s + b;
    }
  }
  return y;
}

TEST(LayerNormRef, EveryAxisAndBroadcast) {
  uint32_t seed = 21;
  for (const Shape& xs : {Shape{6}, Shape{3, 5}, Shape{2, 3, 4}, Shape{2, 2, 3, 4}}) {
    const int64_t rank = static_cast<int64_t>(xs.size());
    for (int64_t axis = -rank; axis < rank; ++axis) {
      const size_t ax = static_cast<size_t>(axis < 0 ? axis + rank : axis);
      const Shape norm_shape(xs.begin() + static_cast<long>(ax), xs.end());
      // Scale: full normalized shape, or its last dim only (broadcast), or a single value.
      std::vector<Shape> scale_shapes = {norm_shape, Shape{norm_shape.back()}, Shape{1}};
      for (size_t si = 0; si < scale_shapes.size(); ++si) {
        for (int bias_kind = 0; bias_kind < 3; ++bias_kind) {  // none, full, broadcast
          const Shape ss = scale_shapes[si];
          Shape bs;
          if (bias_kind == 1) bs = norm_shape;
          if (bias_kind == 2) {
            bs = norm_shape;
            bs[0] = 1;
          }
          const float eps = (seed % 2) ? 1e-5f : 0.5f;
          SCOPED_TRACE(shape_str(xs) + " axis=" + std::to_string(axis) + " scale=" + shape_str(ss) +
                       " bias=" + (bias_kind ? shape_str(bs) : "none"));
          std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(xs)), seed, -3.f, 3.f);
          std::vector<float> scale = random_floats(static_cast<size_t>(shape_numel(ss)), seed + 1, 0.5f, 1.5f);
          std::vector<float> bias =
              bias_kind ? random_floats(static_cast<size_t>(shape_numel(bs)), seed + 2) : std::vector<float>{};
          ++seed;
          Attrs a;
          if (axis != -1) a.set_int("axis", axis);
          if (eps != 1e-5f) a.set_float("epsilon", eps);
          std::vector<TensorData> in = {TensorData::f32(xs, x), TensorData::f32(ss, scale, true)};
          if (bias_kind) in.push_back(TensorData::f32(bs, bias, true));
          OpResult r = run_op(OpId::LayerNormalization, a, in, 1);
          ASSERT_TRUE(r.status.ok()) << r.status.message();
          ASSERT_EQ(r.outputs[0].shape, xs);
          std::vector<double> want = naive_layernorm(xs, ax, x, ss, scale, bs, bias, eps);
          std::vector<float> got = r.outputs[0].as<float>();
          for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5 * (1 + std::fabs(want[i]))) << i;
        }
      }
    }
  }
}

TEST(LayerNormRef, HandComputed) {
  // Row [1, 2, 3, 4]: mean 2.5, var 1.25; epsilon 0 -> (x - 2.5) / sqrt(1.25).
  Attrs a;
  a.set_float("epsilon", 0.f);
  OpResult r = run_op(
      OpId::LayerNormalization, a,
      {TensorData::f32({1, 4}, {1, 2, 3, 4}), TensorData::f32({4}, {1, 1, 2, 2}), TensorData::f32({4}, {0, 0, 0, 1})},
      1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const double k = 1.0 / std::sqrt(1.25);
  std::vector<float> y = r.outputs[0].as<float>();
  EXPECT_NEAR(y[0], -1.5 * k, 1e-6);
  EXPECT_NEAR(y[1], -0.5 * k, 1e-6);
  EXPECT_NEAR(y[2], 2 * 0.5 * k, 1e-6);
  EXPECT_NEAR(y[3], 2 * 1.5 * k + 1, 1e-6);
}

TEST(InstanceNormRef, Ranks) {
  uint32_t seed = 31;
  for (const Shape& xs : {Shape{2, 3, 5}, Shape{2, 3, 4, 3}, Shape{1, 2, 2, 3, 2}, Shape{3, 1, 1, 1}}) {
    SCOPED_TRACE(shape_str(xs));
    const int64_t c = xs[1], len = shape_numel(xs) / (xs[0] * c);
    std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(xs)), seed, -2.f, 4.f);
    std::vector<float> scale = random_floats(static_cast<size_t>(c), seed + 1);
    std::vector<float> bias = random_floats(static_cast<size_t>(c), seed + 2);
    ++seed;
    Attrs a;
    a.set_float("epsilon", 1e-3f);
    OpResult r =
        run_op(OpId::InstanceNormalization, a,
               {TensorData::f32(xs, x), TensorData::f32({c}, scale, true), TensorData::f32({c}, bias, true)}, 1);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    ASSERT_EQ(r.outputs[0].shape, xs);
    std::vector<float> got = r.outputs[0].as<float>();
    for (int64_t p = 0; p < xs[0] * c; ++p) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < len; ++i) mean += x[static_cast<size_t>(p * len + i)];
      mean /= static_cast<double>(len);
      for (int64_t i = 0; i < len; ++i) var += std::pow(x[static_cast<size_t>(p * len + i)] - mean, 2);
      var /= static_cast<double>(len);
      const size_t ch = static_cast<size_t>(p % c);
      for (int64_t i = 0; i < len; ++i) {
        const double want = scale[ch] * (x[static_cast<size_t>(p * len + i)] - mean) / std::sqrt(var + 1e-3) + bias[ch];
        ASSERT_NEAR(got[static_cast<size_t>(p * len + i)], want, 1e-5 * (1 + std::fabs(want))) << p << " " << i;
      }
    }
  }
}

TEST(LayerNormInfer, Errors) {
  const DType f = DType::kF32;
  Attrs none;
  expect_infer_error(OpId::LayerNormalization, {{{2, 4}, f}}, none, "inputs");
  expect_infer_error(OpId::LayerNormalization, {{{2, 4}, f}, {{4}, f}}, none, "Mean and InvStdDev", 3);
  expect_infer_error(OpId::LayerNormalization, {{{2, 4}, f}, {{3}, f}}, none, "Scale");
  expect_infer_error(OpId::LayerNormalization, {{{2, 4}, f}, {{4}, f}, {{2, 4}, f}}, none, "B");
  expect_infer_error(OpId::LayerNormalization, {{{2, 4}, DType::kI8}, {{4}, f}}, none, "float32");
  Attrs ax;
  ax.set_int("axis", 2);
  expect_infer_error(OpId::LayerNormalization, {{{2, 4}, f}, {{4}, f}}, ax, "axis");
  Attrs st;
  st.set_int("stash_type", 0);
  expect_infer_error(OpId::LayerNormalization, {{{2, 4}, f}, {{4}, f}}, st, "stash_type");
}

TEST(LayerNormInfer, NormalisesAndAcceptsAbsentExtraOutputs) {
  Graph g;
  Node n;
  n.name = "ln";
  n.op = OpId::LayerNormalization;
  n.inputs = {g.add_tensor("x", {2, 3, 4}, DType::kF32), g.add_tensor("s", {3, 4}, DType::kF32)};
  n.outputs = {g.add_tensor("y", {}, DType::kF32), -1, -1};
  n.attrs.set_int("axis", -2);
  ASSERT_TRUE(infer_LayerNormalization(g, n).ok());
  EXPECT_EQ(n.attrs.get_int("axis", -9), 1);
  EXPECT_FLOAT_EQ(n.attrs.get_float("epsilon", 0), 1e-5f);
  ASSERT_TRUE(infer_LayerNormalization(g, n).ok());
  EXPECT_EQ(n.attrs.get_int("axis", -9), 1);
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{2, 3, 4}));
}

TEST(InstanceNormInfer, Errors) {
  const DType f = DType::kF32;
  Attrs none;
  expect_infer_error(OpId::InstanceNormalization, {{{2, 3, 4}, f}, {{3}, f}}, none, "inputs");
  expect_infer_error(OpId::InstanceNormalization, {{{2, 3}, f}, {{3}, f}, {{3}, f}}, none, "rank");
  expect_infer_error(OpId::InstanceNormalization, {{{2, 3, 4}, f}, {{4}, f}, {{3}, f}}, none, "scale");
  expect_infer_error(OpId::InstanceNormalization, {{{2, 3, 4}, f}, {{3}, f}, {{1, 3}, f}}, none, "B");
  expect_infer_error(OpId::InstanceNormalization, {{{2, 3, 4}, DType::kU8}, {{3}, f}, {{3}, f}}, none, "float32");
}

}  // namespace
}  // namespace orknn::test
