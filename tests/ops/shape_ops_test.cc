// Reshape, Flatten, Squeeze, Unsqueeze, Shape: output shapes worked out by hand, data unchanged
// on several dtypes, normalised attributes, errors.
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

TEST(ReshapeRef, TargetShapes) {
  const Shape in = {2, 3, 4};
  struct Case {
    std::vector<int64_t> spec;
    int64_t allowzero;
    Shape want;
  };
  const std::vector<Case> cases = {
      {{4, 6}, 0, {4, 6}},         {{-1}, 0, {24}},      {{0, -1}, 0, {2, 12}},
      {{0, 0, 4}, 0, {2, 3, 4}},   {{-1, 4}, 0, {6, 4}}, {{2, 0, 2, 2}, 0, {2, 3, 2, 2}},
      {{1, 1, 24}, 0, {1, 1, 24}}, {{24}, 1, {24}},      {{3, -1, 2}, 0, {3, 4, 2}},
  };
  const std::vector<float> x = iota_f(24);
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_str(c.spec));
    // Shape as the constant input (opset 5+) and as the attribute (opset 1).
    OpResult r = ref(OpId::Reshape, A().i("allowzero", c.allowzero),
                     {f32(in, x), i64c({static_cast<int64_t>(c.spec.size())}, c.spec)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, c.want);
    EXPECT_EQ(r.outputs[0].as<float>(), x);
    r = ref(OpId::Reshape, A().ints("shape", c.spec).i("allowzero", c.allowzero), {f32(in, x)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, c.want);
    expect_infer_idempotent(OpId::Reshape, A(), {f32(in, x), i64c({static_cast<int64_t>(c.spec.size())}, c.spec)});
  }
}

TEST(ReshapeRef, AllowZeroAndEmptyTensors) {
  // allowzero=1: a 0 in the target is a real 0-sized dimension.
  OpResult r = ref(OpId::Reshape, A().i("allowzero", 1), {f32({0, 3}, {}), i64c({3}, {3, 0, 5})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{3, 0, 5}));
  // allowzero=0: the same 0 copies the input dimension.
  r = ref(OpId::Reshape, A(), {f32({2, 3}, iota_f(6)), i64c({2}, {0, 3})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{2, 3}));
  r = ref(OpId::Reshape, A().i("allowzero", 1), {f32({2, 3}, iota_f(6)), i64c({2}, {0, -1})});
  EXPECT_FALSE(r.status.ok());
}

TEST(ReshapeRef, AnyDtype) {
  OpResult r = ref(OpId::Reshape, A(), {i64({2, 2}, {1, 2, 3, 4}), i64c({1}, {-1})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4}));
  r = ref(OpId::Reshape, A(), {u8({4}, {9, 8, 7, 6}), i32({2}, {2, 2}, true)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{2, 2}));
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{9, 8, 7, 6}));
}

TEST(ReshapeRef, Errors) {
  const TensorData x = f32({2, 3}, iota_f(6));
  struct Case {
    std::vector<int64_t> spec;
    const char* needle;
  };
  for (const Case& c : {Case{{-1, -1}, "more than one -1"}, Case{{4, 2}, "cannot reshape"},
                        Case{{-1, 4}, "cannot reshape"}, Case{{2, -3}, "negative"}, Case{{0, 0, 0}, "rank"}}) {
    OpResult r = ref(OpId::Reshape, A(), {x, i64c({static_cast<int64_t>(c.spec.size())}, c.spec)});
    ASSERT_FALSE(r.status.ok()) << shape_str(c.spec);
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidModel);
    EXPECT_TRUE(contains(r.status.message(), "Reshape_under_test")) << r.status.message();
    EXPECT_TRUE(contains(r.status.message(), c.needle)) << r.status.message();
  }
  // Shape computed at run time (a dynamic dimension that was not pinned).
  OpResult r = ref(OpId::Reshape, A(), {x, i64({2}, {3, 2}, false)});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "--input-shape")) << r.status.message();
  EXPECT_TRUE(contains(r.status.message(), "in1")) << r.status.message();  // names the tensor
  r = ref(OpId::Reshape, A(), {x});
  EXPECT_FALSE(r.status.ok());
}

TEST(FlattenRef, Axes) {
  const Shape in = {2, 3, 4, 5};
  struct Case {
    int64_t axis;
    Shape want;
  };
  for (const Case& c : {Case{0, {1, 120}}, Case{1, {2, 60}}, Case{2, {6, 20}}, Case{3, {24, 5}}, Case{4, {120, 1}},
                        Case{-1, {24, 5}}, Case{-4, {1, 120}}}) {
    OpResult r = ref(OpId::Flatten, A().i("axis", c.axis), {f32(in, iota_f(120))});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, c.want) << c.axis;
    EXPECT_EQ(r.outputs[0].as<float>(), iota_f(120));
    expect_infer_idempotent(OpId::Flatten, A().i("axis", c.axis), {f32(in, iota_f(120))});
  }
  OpResult r = ref(OpId::Flatten, A(), {f32(in, iota_f(120))});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{2, 60}));  // default axis 1
  EXPECT_FALSE(ref(OpId::Flatten, A().i("axis", 5), {f32(in, iota_f(120))}).status.ok());
}

TEST(SqueezeRef, AxesForms) {
  const Shape in = {1, 3, 1, 2, 1};
  const std::vector<float> x = iota_f(6);
  struct Case {
    std::vector<int64_t> axes;
    bool given;
    Shape want;
  };
  for (const Case& c : {Case{{0}, true, {3, 1, 2, 1}}, Case{{2, 4}, true, {1, 3, 2}}, Case{{-1, 0}, true, {3, 1, 2}},
                        Case{{}, false, {3, 2}}}) {
    SCOPED_TRACE(shape_str(c.axes));
    std::vector<TensorData> by_input = {f32(in, x)};
    if (c.given) by_input.push_back(i64c({static_cast<int64_t>(c.axes.size())}, c.axes));
    OpResult r = ref(OpId::Squeeze, A(), by_input);
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, c.want);
    EXPECT_EQ(r.outputs[0].as<float>(), x);
    expect_infer_idempotent(OpId::Squeeze, A(), by_input);
    Attrs by_attr;
    if (c.given) by_attr.set_ints("axes", c.axes);
    r = ref(OpId::Squeeze, by_attr, {f32(in, x)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, c.want);
  }
  OpResult r = ref(OpId::Squeeze, A().ints("axes", {1}), {f32(in, x)});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "not 1")) << r.status.message();
  // int64 scalar from a [1] shape tensor (Gather/Squeeze chains in shape subgraphs).
  r = ref(OpId::Squeeze, A(), {i64({1}, {42}), i64c({1}, {0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{});
  EXPECT_EQ(r.outputs[0].as<int64_t>(), std::vector<int64_t>{42});
}

TEST(UnsqueezeRef, AxesForms) {
  const Shape in = {3, 2};
  const std::vector<float> x = iota_f(6);
  struct Case {
    std::vector<int64_t> axes;
    Shape want;
  };
  for (const Case& c : {Case{{0}, {1, 3, 2}}, Case{{2}, {3, 2, 1}}, Case{{1}, {3, 1, 2}}, Case{{0, 3}, {1, 3, 2, 1}},
                        Case{{-1}, {3, 2, 1}}, Case{{-1, 0}, {1, 3, 2, 1}}, Case{{1, 2}, {3, 1, 1, 2}}}) {
    SCOPED_TRACE(shape_str(c.axes));
    const std::vector<TensorData> by_input = {f32(in, x), i64c({static_cast<int64_t>(c.axes.size())}, c.axes)};
    OpResult r = ref(OpId::Unsqueeze, A(), by_input);
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, c.want);
    EXPECT_EQ(r.outputs[0].as<float>(), x);
    expect_infer_idempotent(OpId::Unsqueeze, A(), by_input);
    r = ref(OpId::Unsqueeze, A().ints("axes", c.axes), {f32(in, x)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, c.want);
  }
  // Scalar -> [1] (int64 shape arithmetic).
  OpResult r = ref(OpId::Unsqueeze, A(), {i64({}, {7}), i64c({1}, {0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{1});
  EXPECT_EQ(r.outputs[0].as<int64_t>(), std::vector<int64_t>{7});
  EXPECT_FALSE(ref(OpId::Unsqueeze, A().ints("axes", {0, 0}), {f32(in, x)}).status.ok());
  EXPECT_FALSE(ref(OpId::Unsqueeze, A().ints("axes", {3}), {f32(in, x)}).status.ok());
  EXPECT_FALSE(ref(OpId::Unsqueeze, A(), {f32(in, x)}).status.ok());
}

TEST(ShapeRef, StartEnd) {
  const Shape in = {2, 3, 5, 7};
  struct Case {
    Attrs attrs;
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      {A(), {2, 3, 5, 7}},
      {A().i("start", 1), {3, 5, 7}},
      {A().i("end", -1), {2, 3, 5}},
      {A().i("start", -2), {5, 7}},
      {A().i("start", 1).i("end", 3), {3, 5}},
      {A().i("start", -10).i("end", 10), {2, 3, 5, 7}},  // clamped
      {A().i("start", 3).i("end", 1), {}},
  };
  for (const Case& c : cases) {
    OpResult r = ref(OpId::Shape, c.attrs, {f32(in, std::vector<float>(210, 0.f))});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
    EXPECT_EQ(r.outputs[0].shape, Shape{static_cast<int64_t>(c.want.size())});
    EXPECT_EQ(r.outputs[0].as<int64_t>(), c.want);
    expect_infer_idempotent(OpId::Shape, c.attrs, {f32(in, std::vector<float>(210, 0.f))});
  }
  OpResult r = ref(OpId::Shape, A(), {i64({}, {1})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{0});
}

}  // namespace
}  // namespace orknn::test
