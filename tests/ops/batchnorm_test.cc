// BatchNormalization (inference): ranks 2 to 5 and N > 1 against the formula evaluated in double
// here, a hand-computed case, and error cases.
#include <cmath>
#include <string>
#include <vector>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

TEST(BatchNormRef, Ranks) {
  uint32_t seed = 5;
  for (const Shape& s : {Shape{3, 4}, Shape{2, 4, 5}, Shape{2, 4, 3, 5}, Shape{2, 4, 2, 3, 2}}) {
    for (float eps : {1e-5f, 0.1f}) {
      SCOPED_TRACE(shape_str(s) + " eps=" + std::to_string(eps));
      const int64_t c = s[1], inner = shape_numel(s) / (s[0] * c);
      std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(s)), seed, -3.f, 3.f);
      std::vector<float> scale = random_floats(static_cast<size_t>(c), seed + 1, 0.5f, 2.f);
      std::vector<float> bias = random_floats(static_cast<size_t>(c), seed + 2);
      std::vector<float> mean = random_floats(static_cast<size_t>(c), seed + 3);
      std::vector<float> var = random_floats(static_cast<size_t>(c), seed + 4, 0.f, 2.f);
      ++seed;
      Attrs a;
      if (eps != 1e-5f) a.set_float("epsilon", eps);
      a.set_float("momentum", 0.9f);  // training-only attribute, ignored
      OpResult r = run_op(OpId::BatchNormalization, a,
                          {TensorData::f32(s, x), TensorData::f32({c}, scale, true), TensorData::f32({c}, bias, true),
                           TensorData::f32({c}, mean, true), TensorData::f32({c}, var, true)},
                          1);
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      ASSERT_EQ(r.outputs[0].shape, s);
      std::vector<float> y = r.outputs[0].as<float>();
      for (int64_t i = 0; i < shape_numel(s); ++i) {
        const size_t ch = static_cast<size_t>((i / inner) % c);
        const double want =
            (x[static_cast<size_t>(i)] - double(mean[ch])) / std::sqrt(double(var[ch]) + eps) * scale[ch] + bias[ch];
        ASSERT_NEAR(y[static_cast<size_t>(i)], want, 1e-5 * (1 + std::fabs(want))) << "element " << i;
      }
    }
  }
}

TEST(BatchNormRef, HandComputed) {
  // Channel 0: (x - 1) / sqrt(4 + 0) * 2 + 0.5;  channel 1: (x - 0) / sqrt(1) * 1 - 1. epsilon 0.
  Attrs a;
  a.set_float("epsilon", 0.f);
  OpResult r = run_op(OpId::BatchNormalization, a,
                      {TensorData::f32({1, 2, 2}, {1, 3, 5, -5}), TensorData::f32({2}, {2, 1}),
                       TensorData::f32({2}, {0.5f, -1}), TensorData::f32({2}, {1, 0}), TensorData::f32({2}, {4, 1})},
                      1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0.5f, 2.5f, 4.f, -6.f}));
}

// BatchNormalization's infer on inputs of these shapes; output_ids: one entry per output, -1 for
// an absent one.
void expect_error(const std::vector<std::pair<Shape, DType>>& inputs, const Attrs& a, const std::string& fragment,
                  const std::vector<int>& output_ids = {0}) {
  OneNode o = make_node(OpId::BatchNormalization, inputs, a, 0);
  for (int id : output_ids)
    o.n.outputs.push_back(id < 0 ? -1 : o.g.add_tensor("out" + std::to_string(o.n.outputs.size()), {}, DType::kF32));
  expect_invalid_model(infer(o), fragment);
}

TEST(BatchNormInfer, Errors) {
  const DType f = DType::kF32;
  const std::pair<Shape, DType> x = {{2, 3, 4}, f}, p = {{3}, f};
  Attrs none;
  expect_error({x, p, p, p}, none, "5 inputs");
  expect_error({x, p, p, p, p}, none, "training outputs", {0, 1, 2});
  Attrs train;
  train.set_int("training_mode", 1);
  expect_error({x, p, p, p, p}, train, "training_mode");
  Attrs spatial;
  spatial.set_int("spatial", 0);
  expect_error({x, p, p, p, p}, spatial, "spatial");
  expect_error({x, p, {{4}, f}, p, p}, none, "input B");
  expect_error({x, p, p, p, {{3, 1}, f}}, none, "input_var");
  expect_error({{{3}, f}, p, p, p, p}, none, "rank");
  expect_error({{{2, 3, 4}, DType::kI8}, p, p, p, p}, none, "float32");
  Attrs eps;
  eps.set_float("epsilon", -1.f);
  expect_error({x, p, p, p, p}, eps, "epsilon");
}

TEST(BatchNormInfer, AbsentTrainingOutputsAndIdempotence) {
  Graph g;
  Node n;
  n.name = "bn";
  n.op = OpId::BatchNormalization;
  for (int i = 0; i < 5; ++i)
    n.inputs.push_back(g.add_tensor("in" + std::to_string(i), i == 0 ? Shape{2, 3, 4} : Shape{3}, DType::kF32));
  n.outputs = {g.add_tensor("y", {}, DType::kF32), -1, -1};
  n.attrs.set_int("is_test", 1);
  ASSERT_TRUE(infer_BatchNormalization(g, n).ok());
  EXPECT_FLOAT_EQ(n.attrs.get_float("epsilon", 0), 1e-5f);
  EXPECT_FALSE(n.attrs.has("is_test"));
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{2, 3, 4}));
  expect_reinfer_unchanged(g, n);
}

}  // namespace
}  // namespace orknn::test
