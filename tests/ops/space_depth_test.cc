// DepthToSpace (DCR, CRD) and SpaceToDepth: against the ONNX definition (reshape + transpose)
// implemented here with a generic 6-D transpose, the ONNX documentation examples, other dtypes,
// and error cases.
#include <string>
#include <vector>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

// Transposes a row-major tensor of `dims` by `perm` (out dim i = in dim perm[i]).
std::vector<float> transpose(const std::vector<float>& x, const std::vector<int64_t>& dims,
                             const std::vector<int>& perm) {
  const size_t r = dims.size();
  std::vector<int64_t> out_dims(r), in_strides(r, 1);
  for (size_t i = r - 1; i-- > 0;) in_strides[i] = in_strides[i + 1] * dims[i + 1];
  for (size_t i = 0; i < r; ++i) out_dims[i] = dims[static_cast<size_t>(perm[i])];
  std::vector<float> y(x.size());
  for (size_t e = 0; e < y.size(); ++e) {
    int64_t rem = static_cast<int64_t>(e), src = 0;
    for (size_t i = r; i-- > 0;) {
      const int64_t c = rem % out_dims[i];
      rem /= out_dims[i];
      src += c * in_strides[static_cast<size_t>(perm[i])];
    }
    y[e] = x[static_cast<size_t>(src)];
  }
  return y;
}

// ONNX: DCR reshape [N, b, b, C/b^2, H, W], transpose (0, 3, 4, 1, 5, 2);
//       CRD reshape [N, C/b^2, b, b, H, W], transpose (0, 1, 4, 2, 5, 3).
std::vector<float> spec_depth_to_space(const std::vector<float>& x, const Shape& s, int64_t b, bool crd) {
  const int64_t c = s[1] / (b * b);
  if (crd) return transpose(x, {s[0], c, b, b, s[2], s[3]}, {0, 1, 4, 2, 5, 3});
  return transpose(x, {s[0], b, b, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2});
}
// ONNX: reshape [N, C, H/b, b, W/b, b], transpose (0, 3, 5, 1, 2, 4).
std::vector<float> spec_space_to_depth(const std::vector<float>& x, const Shape& s, int64_t b) {
  return transpose(x, {s[0], s[1], s[2] / b, b, s[3] / b, b}, {0, 3, 5, 1, 2, 4});
}

TEST(DepthToSpaceRef, ModesAndBlocks) {
  uint32_t seed = 1;
  for (int64_t b : {1, 2, 3}) {
    for (bool crd : {false, true}) {
      for (int64_t n : {1, 2}) {
        const Shape s = {n, 2 * b * b, 3, 2};
        SCOPED_TRACE("b=" + std::to_string(b) + (crd ? " CRD" : " DCR") + " " + shape_str(s));
        std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(s)), seed++);
        Attrs a;
        a.set_int("blocksize", b);
        if (crd) a.set_string("mode", "CRD");
        OpResult r = run_op(OpId::DepthToSpace, a, {TensorData::f32(s, x)}, 1);
        ASSERT_TRUE(r.status.ok()) << r.status.message();
        EXPECT_EQ(r.outputs[0].shape, (Shape{n, 2, 3 * b, 2 * b}));
        EXPECT_EQ(r.outputs[0].as<float>(), spec_depth_to_space(x, s, b, crd));
      }
    }
  }
}

TEST(SpaceToDepthRef, Blocks) {
  uint32_t seed = 50;
  for (int64_t b : {1, 2, 3}) {
    for (int64_t n : {1, 2}) {
      const Shape s = {n, 3, 2 * b, 3 * b};
      SCOPED_TRACE("b=" + std::to_string(b) + " " + shape_str(s));
      std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(s)), seed++);
      Attrs a;
      a.set_int("blocksize", b);
      OpResult r = run_op(OpId::SpaceToDepth, a, {TensorData::f32(s, x)}, 1);
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      EXPECT_EQ(r.outputs[0].shape, (Shape{n, 3 * b * b, 2, 3}));
      std::vector<float> y = r.outputs[0].as<float>();
      EXPECT_EQ(y, spec_space_to_depth(x, s, b));
      // DepthToSpace DCR undoes SpaceToDepth.
      OpResult back = run_op(OpId::DepthToSpace, a, {TensorData::f32(r.outputs[0].shape, y)}, 1);
      ASSERT_TRUE(back.status.ok());
      EXPECT_EQ(back.outputs[0].as<float>(), x);
    }
  }
}

TEST(DepthToSpaceRef, OnnxExamples) {
  std::vector<float> x(48);
  for (int i = 0; i < 48; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  Attrs a;
  a.set_int("blocksize", 2);
  a.set_string("mode", "DCR");
  OpResult r = run_op(OpId::DepthToSpace, a, {TensorData::f32({1, 8, 2, 3}, x)}, 1);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(
      r.outputs[0].as<float>(),
      (std::vector<float>{0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38, 3, 15, 4,  16, 5,  17, 27, 39, 28, 40, 29, 41,
                          6, 18, 7, 19, 8, 20, 30, 42, 31, 43, 32, 44, 9, 21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47}));
  // test_depthtospace_crd_mode_example: channel ch holds ch * 9 + h * 3 + w.
  std::vector<float> xc;
  for (int ch = 0; ch < 8; ++ch)
    for (int i = 0; i < 6; ++i) xc.push_back(static_cast<float>(ch * 9 + (i / 3) * 3 + i % 3));
  a.set_string("mode", "CRD");
  r = run_op(OpId::DepthToSpace, a, {TensorData::f32({1, 8, 2, 3}, xc)}, 1);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.outputs[0].as<float>(),
            (std::vector<float>{0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13,
                                5,  14, 21, 30, 22, 31, 23, 32, 36, 45, 37, 46, 38, 47, 54, 63,
                                55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68}));
}

TEST(SpaceDepthRef, OtherDtypes) {
  // int64 and int8 move the same way as float.
  std::vector<int64_t> x64(16);
  std::vector<int8_t> x8(16);
  std::vector<float> xf(16);
  for (int i = 0; i < 16; ++i) {
    x64[static_cast<size_t>(i)] = 1000000000000LL + i;
    x8[static_cast<size_t>(i)] = static_cast<int8_t>(i - 8);
    xf[static_cast<size_t>(i)] = static_cast<float>(i);
  }
  Attrs a;
  a.set_int("blocksize", 2);
  OpResult rf = run_op(OpId::SpaceToDepth, a, {TensorData::f32({1, 1, 4, 4}, xf)}, 1);
  OpResult r64 = run_op(OpId::SpaceToDepth, a, {TensorData::of<int64_t>({1, 1, 4, 4}, x64, DType::kI64, false)}, 1);
  OpResult r8 = run_op(OpId::SpaceToDepth, a, {TensorData::of<int8_t>({1, 1, 4, 4}, x8, DType::kI8, false)}, 1);
  ASSERT_TRUE(rf.status.ok() && r64.status.ok() && r8.status.ok());
  EXPECT_EQ(r64.outputs[0].dtype, DType::kI64);
  EXPECT_EQ(r8.outputs[0].dtype, DType::kI8);
  std::vector<float> yf = rf.outputs[0].as<float>();
  std::vector<int64_t> y64 = r64.outputs[0].as<int64_t>();
  std::vector<int8_t> y8 = r8.outputs[0].as<int8_t>();
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(y64[i], 1000000000000LL + static_cast<int64_t>(yf[i]));
    EXPECT_EQ(y8[i], static_cast<int8_t>(yf[i] - 8));
  }
}

TEST(SpaceDepthInfer, Errors) {
  const DType f = DType::kF32;
  Attrs b2;
  b2.set_int("blocksize", 2);
  expect_infer_error(OpId::DepthToSpace, {{{1, 4, 2, 2}, f}}, Attrs(), "blocksize");
  Attrs b0;
  b0.set_int("blocksize", 0);
  expect_infer_error(OpId::DepthToSpace, {{{1, 4, 2, 2}, f}}, b0, "blocksize");
  expect_infer_error(OpId::DepthToSpace, {{{1, 6, 2, 2}, f}}, b2, "divisible");
  expect_infer_error(OpId::DepthToSpace, {{{4, 2, 2}, f}}, b2, "4-D");
  Attrs bad_mode = b2;
  bad_mode.set_string("mode", "RCD");
  expect_infer_error(OpId::DepthToSpace, {{{1, 4, 2, 2}, f}}, bad_mode, "mode");
  expect_infer_error(OpId::SpaceToDepth, {{{1, 1, 3, 4}, f}}, b2, "divisible");
  expect_infer_error(OpId::SpaceToDepth, {{{1, 1, 4, 4}, f}, {{1, 1, 4, 4}, f}}, b2, "input");
}

}  // namespace
}  // namespace orknn::test
