// ConstantOfShape and Range against hand-computed outputs.
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

TEST(ConstantOfShapeRef, ValuesAndDtypes) {
  OpResult r = ref(OpId::ConstantOfShape, A(), {i64c({2}, {2, 3})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{2, 3}));
  EXPECT_EQ(r.outputs[0].dtype, DType::kF32);
  EXPECT_EQ(r.outputs[0].as<float>(), std::vector<float>(6, 0.f));
  r = ref(OpId::ConstantOfShape, A().f("value", 1.5f), {i64c({1}, {4})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), std::vector<float>(4, 1.5f));
  r = ref(OpId::ConstantOfShape, A().f("value", -7.f).i("dtype", static_cast<int64_t>(DType::kI64)),
          {i64c({2}, {1, 2})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{-7, -7}));
  r = ref(OpId::ConstantOfShape, A().f("value", 1.f).i("dtype", static_cast<int64_t>(DType::kBool)), {i64c({1}, {3})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{1, 1, 1}));
  r = ref(OpId::ConstantOfShape, A().f("value", 3.f).i("dtype", static_cast<int64_t>(DType::kI32)), {i64c({0}, {})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{});  // empty shape: a scalar
  EXPECT_EQ(r.outputs[0].as<int32_t>(), std::vector<int32_t>{3});
  r = ref(OpId::ConstantOfShape, A(), {i64c({2}, {0, 5})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{0, 5}));
  expect_infer_idempotent(OpId::ConstantOfShape, A().f("value", 2.f), {i64c({2}, {2, 3})});
}

TEST(ConstantOfShapeRef, Errors) {
  OpResult r = ref(OpId::ConstantOfShape, A(), {i64({2}, {2, 3}, false)});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "ConstantOfShape_under_test")) << r.status.message();
  EXPECT_TRUE(contains(r.status.message(), "--input-shape")) << r.status.message();
  EXPECT_FALSE(ref(OpId::ConstantOfShape, A(), {i64c({1}, {-2})}).status.ok());
  EXPECT_FALSE(ref(OpId::ConstantOfShape, A().i("dtype", 42), {i64c({1}, {2})}).status.ok());
}

TEST(RangeRef, FloatAndInt) {
  struct Case {
    std::vector<float> p;
    std::vector<float> want;
  };
  for (const Case& c :
       {Case{{0.f, 5.f, 1.f}, {0, 1, 2, 3, 4}}, Case{{1.f, 2.f, 0.25f}, {1, 1.25f, 1.5f, 1.75f}},
        Case{{10.f, 4.f, -3.f}, {10, 7}}, Case{{0.f, 1.f, 0.3f}, {0.f, 0.3f, 0.6f, 0.9f}}, Case{{5.f, 1.f, 1.f}, {}}}) {
    OpResult r = ref(OpId::Range, A(), {f32({}, {c.p[0]}, true), f32({}, {c.p[1]}, true), f32({}, {c.p[2]}, true)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, Shape{static_cast<int64_t>(c.want.size())});
    expect_near_all(r.outputs[0].as<float>(), std::vector<double>(c.want.begin(), c.want.end()), 1e-6, "range");
  }
  struct ICase {
    std::vector<int64_t> p;
    std::vector<int64_t> want;
  };
  for (const ICase& c : {ICase{{0, 5, 2}, {0, 2, 4}}, ICase{{0, 6, 2}, {0, 2, 4}}, ICase{{3, -3, -2}, {3, 1, -1}},
                         ICase{{3, -4, -2}, {3, 1, -1, -3}}, ICase{{0, 0, 1}, {}}, ICase{{0, 3, -1}, {}}}) {
    OpResult r = ref(OpId::Range, A(), {i64c({}, {c.p[0]}), i64c({}, {c.p[1]}), i64c({}, {c.p[2]})});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
    EXPECT_EQ(r.outputs[0].as<int64_t>(), c.want) << shape_str(c.p);
  }
  OpResult r = ref(OpId::Range, A(), {i32({}, {1}, true), i32({}, {4}, true), i32({}, {1}, true)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
}

TEST(RangeRef, Errors) {
  EXPECT_FALSE(ref(OpId::Range, A(), {i64c({}, {0}), i64c({}, {5}), i64c({}, {0})}).status.ok());
  EXPECT_FALSE(ref(OpId::Range, A(), {i64c({}, {0}), f32({}, {5.f}, true), i64c({}, {1})}).status.ok());
  EXPECT_FALSE(ref(OpId::Range, A(), {i64c({2}, {0, 1}), i64c({}, {5}), i64c({}, {1})}).status.ok());
  OpResult r = ref(OpId::Range, A(), {i64c({}, {0}), i64({}, {5}, false), i64c({}, {1})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "limit")) << r.status.message();
  EXPECT_TRUE(contains(r.status.message(), "--input-shape")) << r.status.message();
}

}  // namespace
}  // namespace orknn::test
