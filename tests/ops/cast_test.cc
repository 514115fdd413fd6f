// Cast: source x target dtype pairs with hand-computed values.
#include <cmath>
#include <limits>

#include "common/fp16.h"
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

// ONNX TensorProto.DataType values.
enum Onnx : int64_t {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16
};

const std::vector<float> kFloats = {-2.7f, -1.5f, -0.5f, 0.f, 0.4f, 1.5f, 2.7f, 100.9f};

TEST(CastRef, FloatToIntegersTruncates) {
  OpResult r = ref(OpId::Cast, A().i("to", kInt64), {f32({8}, kFloats)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{-2, -1, 0, 0, 0, 1, 2, 100}));
  r = ref(OpId::Cast, A().i("to", kInt32), {f32({8}, kFloats)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kI32);
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{-2, -1, 0, 0, 0, 1, 2, 100}));
  r = ref(OpId::Cast, A().i("to", kInt8), {f32({8}, kFloats)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
  EXPECT_EQ(r.outputs[0].as<int8_t>(), (std::vector<int8_t>{-2, -1, 0, 0, 0, 1, 2, 100}));
  r = ref(OpId::Cast, A().i("to", kUint8), {f32({4}, {0.f, 1.9f, 255.f, 254.5f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kU8);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{0, 1, 255, 254}));
  r = ref(OpId::Cast, A().i("to", kInt16), {f32({2}, {-300.7f, 1234.5f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int16_t>(), (std::vector<int16_t>{-300, 1234}));
  r = ref(OpId::Cast, A().i("to", kInt64), {f32({1}, {std::nanf("")})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), std::vector<int64_t>{0});
}

TEST(CastRef, ToBoolAndBack) {
  OpResult r = ref(OpId::Cast, A().i("to", kBool), {f32({4}, {0.f, -0.f, 0.1f, -3.f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kBool);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{0, 0, 1, 1}));
  r = ref(OpId::Cast, A().i("to", kBool), {i64({3}, {0, 5, -1})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{0, 1, 1}));
  r = ref(OpId::Cast, A().i("to", kFloat), {boolean({2}, {1, 0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1.f, 0.f}));
  r = ref(OpId::Cast, A().i("to", kInt64), {boolean({2}, {1, 0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(CastRef, IntegerConversions) {
  OpResult r = ref(OpId::Cast, A().i("to", kFloat), {i64({3}, {-7, 0, 16777217})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{-7.f, 0.f, 16777216.f}));  // nearest float
  r = ref(OpId::Cast, A().i("to", kInt8), {u8({3}, {200, 127, 128})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int8_t>(), (std::vector<int8_t>{-56, 127, -128}));  // two's complement wrap
  r = ref(OpId::Cast, A().i("to", kInt32), {i64({2}, {-5, 4294967297})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{-5, 1}));
  r = ref(OpId::Cast, A().i("to", kInt64), {i32({2}, {-5, 2147483647}, false)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{-5, 2147483647}));
  r = ref(OpId::Cast, A().i("to", kUint16), {i64({2}, {65535, -1})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kU16);
  EXPECT_EQ(r.outputs[0].as<uint16_t>(), (std::vector<uint16_t>{65535, 65535}));
  r = ref(OpId::Cast, A().i("to", kUint32), {i64({1}, {4000000000})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kU32);
  EXPECT_EQ(r.outputs[0].as<uint32_t>(), std::vector<uint32_t>{4000000000u});
  r = ref(OpId::Cast, A().i("to", kFloat), {u8({3}, {0, 128, 255})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0.f, 128.f, 255.f}));
}

TEST(CastRef, Float16RoundsValuesAndDoubleIsFloat) {
  // fp16 has 10 mantissa bits: 1 + 2^-11 rounds to 1 (ties to even), 1 + 3*2^-11 to 1 + 2^-9,
  // 65519 to 65504 (max finite), 65520 overflows to inf, 1e-8 underflows to 0.
  const std::vector<float> x = {1.f + 1.f / 2048.f, 1.f + 3.f / 2048.f, 65519.f, 65520.f, 1e-8f, -2.5f, 0.1f};
  OpResult r = ref(OpId::Cast, A().i("to", kFloat16), {f32({7}, x)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kF32);
  const auto v = r.outputs[0].as<float>();
  EXPECT_EQ(v[0], 1.f);
  EXPECT_EQ(v[1], 1.f + 1.f / 512.f);
  EXPECT_EQ(v[2], 65504.f);
  EXPECT_EQ(v[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[4], 0.f);
  EXPECT_EQ(v[5], -2.5f);
  EXPECT_EQ(v[6], 0.0999755859375f);  // nearest fp16 to 0.1
  // Integers to float16 round too (2049 is not representable: ties to even -> 2048).
  r = ref(OpId::Cast, A().i("to", kFloat16), {i64({2}, {2049, 2051})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2048.f, 2052.f}));
  r = ref(OpId::Cast, A().i("to", kDouble), {f32({2}, {0.1f, -3.f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kF32);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0.1f, -3.f}));
}

TEST(CastRef, Float16Input) {
  const std::vector<uint16_t> h = {fp32_to_fp16(1.5f), fp32_to_fp16(-2.f), fp32_to_fp16(0.f)};
  OpResult r = ref(OpId::Cast, A().i("to", kInt64), {TensorData::of({3}, h, DType::kF16)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1, -2, 0}));
}

TEST(CastRef, UnsupportedTargets) {
  for (int64_t to : {int64_t{0}, int64_t{kString}, int64_t{kUint64}, int64_t{kBfloat16}, int64_t{99}}) {
    OpResult r = ref(OpId::Cast, A().i("to", to), {f32({1}, {1.f})});
    ASSERT_FALSE(r.status.ok()) << to;
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidModel);
    EXPECT_TRUE(contains(r.status.message(), "Cast_under_test")) << r.status.message();
    EXPECT_TRUE(contains(r.status.message(), std::to_string(to))) << r.status.message();
  }
  EXPECT_FALSE(ref(OpId::Cast, A(), {f32({1}, {1.f})}).status.ok());  // "to" is required
}

}  // namespace
}  // namespace orknn::test
