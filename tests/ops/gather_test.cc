// Gather: axes x index shapes x index dtypes against a naive coordinate loop.
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

TEST(GatherRef, Matrix) {
  const Shape s = {3, 4, 5};
  const std::vector<float> x = iota_f(60);
  struct Idx {
    Shape shape;
    std::vector<int64_t> v;
  };
  const std::vector<Idx> index_sets = {
      {{}, {1}},   // scalar: the axis disappears
      {{}, {-1}},  // negative scalar
      {{2}, {0, 2}},
      {{3}, {-1, 0, -2}},      // negative indices count from the end
      {{2, 2}, {1, 0, 0, 1}},  // 2-D indices: rank grows
      {{1}, {2}},
      {{0}, {}},  // no indices: empty output
  };
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    const int64_t dim = s[a];
    for (const Idx& ix : index_sets) {
      bool in_range = true;
      for (int64_t v : ix.v) in_range = in_range && v < dim && v >= -dim;
      if (!in_range) continue;
      SCOPED_TRACE("axis " + std::to_string(axis) + " indices " + shape_str(ix.v));
      Shape out(s.begin(), s.begin() + static_cast<long>(a));
      out.insert(out.end(), ix.shape.begin(), ix.shape.end());
      out.insert(out.end(), s.begin() + static_cast<long>(a) + 1, s.end());
      std::vector<float> want;
      for (int64_t i = 0; i < shape_numel(out); ++i) {
        const auto c = unravel(i, out);
        // Output coordinates: [data before axis][index coords][data after axis].
        int64_t flat_idx = 0;
        for (size_t k = 0; k < ix.shape.size(); ++k) flat_idx = flat_idx * ix.shape[k] + c[a + k];
        int64_t v = ix.v[static_cast<size_t>(flat_idx)];
        if (v < 0) v += dim;
        std::vector<int64_t> dc;
        for (size_t d = 0; d < a; ++d) dc.push_back(c[d]);
        dc.push_back(v);
        for (size_t d = a + ix.shape.size(); d < c.size(); ++d) dc.push_back(c[d]);
        want.push_back(x[static_cast<size_t>((dc[0] * 4 + dc[1]) * 5 + dc[2])]);
      }
      for (int dt = 0; dt < 2; ++dt) {
        std::vector<int32_t> v32(ix.v.begin(), ix.v.end());
        const TensorData idx = dt == 0 ? i64(ix.shape, ix.v) : i32(ix.shape, v32);
        OpResult r = ref(OpId::Gather, A().i("axis", axis), {f32(s, x), idx});
        ASSERT_OK(r.status);
        EXPECT_EQ(r.outputs[0].shape, out);
        EXPECT_EQ(r.outputs[0].as<float>(), want) << (dt ? "int32" : "int64");
        expect_infer_idempotent(OpId::Gather, A().i("axis", axis), {f32(s, x), idx});
      }
    }
  }
}

TEST(GatherRef, ShapeArithmetic) {
  // Gather(Shape(x), 0) with a constant scalar index: the classic dynamic-batch pattern.
  OpResult r = ref(OpId::Gather, A(), {i64({4}, {1, 3, 224, 224}), i64c({}, {0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{});
  EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), std::vector<int64_t>{1});
  r = ref(OpId::Gather, A(), {i64({4}, {1, 3, 224, 160}), i64c({2}, {2, 3})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{224, 160}));
  // uint8 rows (embedding-style lookup with runtime indices).
  r = ref(OpId::Gather, A(), {u8({3, 2}, {1, 2, 3, 4, 5, 6}), i64({2}, {2, 0}, false)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{5, 6, 1, 2}));
}

TEST(GatherRef, RuntimeOutOfRangeIndexGivesZeros) {
  OpResult r = ref(OpId::Gather, A(), {f32({3}, {1.f, 2.f, 3.f}), i64({3}, {1, 7, -9}, false)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2.f, 0.f, 0.f}));
}

TEST(GatherRef, Errors) {
  OpResult r = ref(OpId::Gather, A(), {f32({3}, {1.f, 2.f, 3.f}), i64c({1}, {3})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "Gather_under_test")) << r.status.message();
  EXPECT_TRUE(contains(r.status.message(), "out of range")) << r.status.message();
  EXPECT_FALSE(ref(OpId::Gather, A(), {f32({3}, {1.f, 2.f, 3.f}), i64c({1}, {-4})}).status.ok());
  EXPECT_FALSE(ref(OpId::Gather, A().i("axis", 1), {f32({3}, {1.f, 2.f, 3.f}), i64c({1}, {0})}).status.ok());
  EXPECT_FALSE(ref(OpId::Gather, A(), {f32({3}, {1.f, 2.f, 3.f}), f32({1}, {0.f})}).status.ok());
  EXPECT_FALSE(ref(OpId::Gather, A(), {f32({}, {1.f}), i64c({}, {0})}).status.ok());
}

}  // namespace
}  // namespace orknn::test
