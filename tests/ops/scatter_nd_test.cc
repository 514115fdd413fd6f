// ScatterND: ONNX's specification examples and hand-computed cases for every reduction, index form
// (negative, int32, rank 3, full tuples), data type and the run-time out-of-range rule.
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

OpResult scatter(const std::string& reduction, const TensorData& data, const TensorData& idx, const TensorData& upd) {
  return ref(OpId::ScatterND, reduction.empty() ? A() : A().s("reduction", reduction), {data, idx, upd});
}

// The 1-D and 3-D examples of ONNX's ScatterND specification (outputs as the specification gives them).
TEST(ScatterNDRef, SpecificationExamples) {
  OpResult r = scatter("", f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), i64({4, 1}, {4, 3, 1, 7}), f32({4}, {9, 10, 11, 12}));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{8});
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));

  const std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1};
  const std::vector<float> b = {8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> data = a;
  data.insert(data.end(), a.begin(), a.end());
  data.insert(data.end(), b.begin(), b.end());
  data.insert(data.end(), b.begin(), b.end());
  const std::vector<float> u0 = {5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8};
  const std::vector<float> u1 = {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4};
  std::vector<float> upd = u0;
  upd.insert(upd.end(), u1.begin(), u1.end());
  r = scatter("", f32({4, 4, 4}, data), i64({2, 1}, {0, 2}), f32({2, 4, 4}, upd));
  ASSERT_OK(r.status);
  std::vector<float> want = u0;
  want.insert(want.end(), a.begin(), a.end());
  want.insert(want.end(), u1.begin(), u1.end());
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(r.outputs[0].as<float>(), want);

  // test_scatternd_add / test_scatternd_multiply: both slices into block 0.
  r = scatter("add", f32({4, 4, 4}, data), i64({2, 1}, {0, 0}), f32({2, 4, 4}, upd));
  ASSERT_OK(r.status);
  std::vector<float> got = r.outputs[0].as<float>();
  EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + 16),
            (std::vector<float>{7, 8, 9, 10, 13, 14, 15, 16, 18, 17, 16, 15, 16, 15, 14, 13}));
  EXPECT_EQ(std::vector<float>(got.begin() + 16, got.end()), std::vector<float>(data.begin() + 16, data.end()));
  r = scatter("mul", f32({4, 4, 4}, data), i64({2, 1}, {0, 0}), f32({2, 4, 4}, upd));
  ASSERT_OK(r.status);
  got = r.outputs[0].as<float>();
  EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + 16),
            (std::vector<float>{5, 10, 15, 20, 60, 72, 84, 96, 168, 147, 126, 105, 128, 96, 64, 32}));
}

TEST(ScatterNDRef, IndexForms) {
  // Full index tuples (k = rank) with negative indices, int64 and int32, constant and run-time.
  for (bool c : {false, true}) {
    for (int dt = 0; dt < 2; ++dt) {
      const std::vector<int64_t> v = {0, -1, -2, 1, 1, 0};
      const TensorData idx = dt == 0 ? i64({3, 2}, v, c) : i32({3, 2}, std::vector<int32_t>(v.begin(), v.end()), c);
      OpResult r = scatter("", f32({2, 3}, {10, 11, 12, 13, 14, 15}), idx, f32({3}, {1, 2, 3}));
      ASSERT_OK(r.status);
      EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{10, 2, 1, 3, 14, 15})) << c << dt;
    }
  }
  // Rank-3 indices: updates [2, 1] + data[1:].
  OpResult r = scatter("", f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({2, 1, 1}, {2, 0}), f32({2, 1, 2}, {7, 8, 9, 10}));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{9, 10, 3, 4, 7, 8}));
  // No index tuple: the data unchanged.
  r = scatter("add", f32({2, 2}, {1, 2, 3, 4}), i64({0, 1}, {}), f32({0, 2}, {}));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2, 3, 4}));
  // Duplicate indices, reduction none: the last write wins (ONNX Runtime's order).
  r = scatter("none", f32({4}, {0, 0, 0, 0}), i64({3, 1}, {1, 1, 3}), f32({3}, {5, 6, 7}));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0, 6, 0, 7}));
  expect_infer_idempotent(OpId::ScatterND, A(), {f32({4}, {0, 0, 0, 0}), i64c({3, 1}, {1, 1, 3}), f32({3}, {5, 6, 7})});
}

template <typename T>
void check_reductions(DType dt, const std::vector<T>& data, const std::vector<T>& upd,
                      const std::vector<std::pair<std::string, std::vector<T>>>& want) {
  for (const auto& [red, w] : want) {
    // Two updates land on element 0, one on element 2 and one, through -1, on element 3.
    OpResult r = scatter(red, TensorData::of({4}, data, dt), i64({4, 1}, {0, 0, 2, -1}), TensorData::of({4}, upd, dt));
    ASSERT_OK(r.status) << red;
    EXPECT_EQ(r.outputs[0].dtype, dt);
    EXPECT_EQ(r.outputs[0].as<T>(), w) << dtype_name(dt) << " " << red;
  }
}

TEST(ScatterNDRef, ReductionsPerType) {
  check_reductions<float>(DType::kF32, {1, 2, 3, 4}, {3, 4, -5, 10},
                          {{"none", {4, 2, -5, 10}}, {"add", {8, 2, -2, 14}}, {"mul", {12, 2, -15, 40}},
                           {"max", {4, 2, 3, 10}}, {"min", {1, 2, -5, 4}}});
  check_reductions<int64_t>(DType::kI64, {1, 2, 3, 4}, {3, 4, -5, 10},
                            {{"add", {8, 2, -2, 14}}, {"mul", {12, 2, -15, 40}}, {"max", {4, 2, 3, 10}},
                             {"min", {1, 2, -5, 4}}});
  check_reductions<int32_t>(DType::kI32, {1, 2, 3, 4}, {3, 4, -5, 10},
                            {{"add", {8, 2, -2, 14}}, {"mul", {12, 2, -15, 40}}, {"max", {4, 2, 3, 10}},
                             {"min", {1, 2, -5, 4}}});
  check_reductions<int16_t>(DType::kI16, {1, 2, 3, 4}, {3, 4, -5, 10}, {{"min", {1, 2, -5, 4}}});
  // Integers wrap: 100 + 100 = 200 - 256 in int8; 16 * 16 = 256 = 0 in uint8.
  check_reductions<int8_t>(DType::kI8, {100, 2, 3, 4}, {100, 0, -5, 10}, {{"add", {-56, 2, -2, 14}}});
  check_reductions<uint8_t>(DType::kU8, {1, 2, 3, 4}, {16, 16, 5, 10},
                            {{"mul", {0, 2, 15, 40}}, {"max", {16, 2, 5, 10}}, {"add", {33, 2, 8, 14}}});
  check_reductions<uint16_t>(DType::kU16, {1, 2, 3, 4}, {3, 4, 5, 10}, {{"max", {4, 2, 5, 10}}});
  check_reductions<uint32_t>(DType::kU32, {1, 2, 3, 4}, {3, 4, 5, 10}, {{"add", {8, 2, 8, 14}}});
  // bool: add and max are "or", mul and min "and".
  check_reductions<uint8_t>(DType::kBool, {0, 1, 1, 0}, {1, 0, 0, 0},
                            {{"none", {0, 1, 0, 0}}, {"add", {1, 1, 1, 0}}, {"max", {1, 1, 1, 0}},
                             {"mul", {0, 1, 0, 0}}, {"min", {0, 1, 0, 0}}});
}

// max / min with NaN, as ONNX Runtime computes them: the update is taken unless the existing value
// compares greater (max) or less (min).
TEST(ScatterNDRef, NaNInMaxAndMin) {
  const float nan = std::nanf("");
  OpResult r = scatter("max", f32({3}, {nan, 1, 2}), i64({3, 1}, {0, 1, 2}), f32({3}, {5, nan, 3}));
  ASSERT_OK(r.status);
  std::vector<float> got = r.outputs[0].as<float>();
  EXPECT_EQ(got[0], 5.f);
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_EQ(got[2], 3.f);
  r = scatter("min", f32({3}, {nan, 1, 2}), i64({3, 1}, {0, 1, 2}), f32({3}, {5, nan, 3}));
  ASSERT_OK(r.status);
  got = r.outputs[0].as<float>();
  EXPECT_EQ(got[0], 5.f);
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_EQ(got[2], 2.f);
}

// An index out of range at run time skips its tuple (ONNX Runtime refuses the run); nothing outside
// the output is written.
TEST(ScatterNDRef, RuntimeOutOfRangeTupleIsSkipped) {
  OpResult r = scatter("", f32({3}, {1, 2, 3}), i64({4, 1}, {5, 1, -4, 3}), f32({4}, {7, 8, 9, 10}));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 8, 3}));
  r = scatter("add", f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 2, 1, -1}), f32({2}, {10, 20}));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2, 3, 24}));
}

TEST(ScatterNDRef, Errors) {
  const auto f = DType::kF32;
  OpResult r = scatter("", f32({4}, {0, 0, 0, 0}), i64c({1, 1}, {4}), f32({1}, {1}));
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.message(), "ScatterND node 'ScatterND_under_test': index 4 is out of range [-4, 4) for dim 0 of "
                                "data [4]");
  EXPECT_FALSE(scatter("", f32({4}, {0, 0, 0, 0}), i64c({1, 1}, {-5}), f32({1}, {1})).status.ok());
  expect_infer_error(OpId::ScatterND, {{{4, 3}, f}, {{2, 1}, DType::kI64}, {{2, 4}, f}}, A(),
                     "updates ('in2') have shape [2,4]; indices [2,1] and data [4,3] need [2,3]");
  expect_infer_error(OpId::ScatterND, {{{4}, f}, {{2, 1}, DType::kI64}, {{2}, DType::kI64}}, A(),
                     "updates ('in2') are int64 and data ('in0') float32");
  expect_infer_error(OpId::ScatterND, {{{4}, f}, {{2, 1}, DType::kI64}, {{2}, f}}, A().s("reduction", "sum"),
                     "reduction 'sum' is not one of none, add, mul, max, min");
  expect_infer_error(OpId::ScatterND, {{{4}, f}, {{2, 2}, DType::kI64}, {{2}, f}}, A(),
                     "the last dim of indices [2,2] is 2; it must be in [1, 1]");
  expect_infer_error(OpId::ScatterND, {{{4}, f}, {{}, DType::kI64}, {{}, f}}, A(), "are a scalar");
  expect_infer_error(OpId::ScatterND, {{{4}, f}, {{2, 1}, f}, {{2}, f}}, A(), "node_under_test");
}

}  // namespace
}  // namespace orknn::test
