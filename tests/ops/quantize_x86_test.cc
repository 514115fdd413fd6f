// The AVX-512 QuantizeLinear and DequantizeLinear kernels (src/kernels/x86/quantize_avx512.cc)
// against the reference kernels (ref_int8), bit for bit: random values over several ranges (in and
// far out of the int8 range), ties x / s = k + 0.5, NaN, infinities, signed zeros and denormals,
// every zero point class (-128, negative, 0, positive, 127), scales from tiny to large, sizes that
// are not multiples of 16 (1, 15, 17, ...) and large tensors (2 threads); then the per-axis nodes
// left to the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "int8_test_helpers.h"
#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/io_convert.h"
#include "ops/op.h"
#include "testutil/op_harness.h"

namespace orknn {
namespace {

using test::OpResult;
using test::TensorData;
namespace q8t = test::q8t;

constexpr const char* kQKernel = "x86_quantize_int8";
constexpr const char* kDqKernel = "x86_dequantize_f32";

bool kernel_registered(OpId op, const char* name) {
  for (const KernelEntry* e : kernels_for(op))
    if (std::string(e->name) == name) return true;
  return false;
}

bool cpu_ok() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}

#define REQUIRE_KERNEL(op, name)                                          \
  if (!kernel_registered(op, name)) GTEST_SKIP() << name << " not built"; \
  if (!cpu_ok()) GTEST_SKIP() << "CPU without AVX-512F/BW/VL"

const int32_t kZeroPoints[] = {-128, -37, 0, 5, 127};
const float kScales[] = {1e-6f, 0.0037f, 0.02f, 0.5f, 1.f, 3.f, 1000.f};
const int64_t kSizes[] = {1, 15, 16, 17, 100, 1000};

// Values of every class: random in a range around the int8 range of `scale`, exact ties, specials.
std::vector<float> quantize_inputs(int64_t n, float scale, uint32_t seed) {
  std::vector<float> x = test::random_floats(static_cast<size_t>(n), seed, -300.f * scale, 300.f * scale);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.f,
                            -0.f,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            0.5f * scale,
                            1.5f * scale,
                            -2.5f * scale,
                            127.5f * scale,
                            -128.5f * scale};
  for (size_t i = 0; i < x.size(); ++i) {
    if (i % 7 == 3) x[i] = specials[(i / 7) % (sizeof(specials) / sizeof(specials[0]))];
    if (i % 7 == 5) x[i] = (std::floor(x[i] / scale) + 0.5f) * scale;  // near a tie
  }
  return x;
}

void check_quantize(const Shape& shape, float scale, int32_t zp, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "numel " << shape.back() << " scale " << scale << " zp " << zp);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const TensorData x = TensorData::f32(shape, quantize_inputs(n, scale, seed));
  const QuantParams q = q8t::qp(scale, zp);
  OpResult ref = test::run_op(OpId::QuantizeLinear, Attrs(), {x}, 1, "ref", 1, {q});
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  ASSERT_EQ(ref.kernel_name, "ref_int8");
  for (int threads : {1, 2}) {
    OpResult fast = test::run_op(OpId::QuantizeLinear, Attrs(), {x}, 1, "", threads, {q});
    ASSERT_TRUE(fast.status.ok()) << fast.status.message();
    EXPECT_EQ(fast.kernel_name, kQKernel);
    ASSERT_EQ(fast.outputs[0].bytes.size(), ref.outputs[0].bytes.size());
    EXPECT_EQ(fast.outputs[0].bytes, ref.outputs[0].bytes) << threads << " threads";
  }
}

// The same loops as the runtime's I/O conversions (kernels/io_convert.h: rknn_inputs_set of float
// data into an int8 input, rknn_outputs_get of an int8 output as float): bit-exact with
// quantize_value / dequantize_value, the scalar conversions they replace.
TEST(QuantizeLinearX86, RuntimeConversionsMatchScalar) {
  if (!cpu_ok()) GTEST_SKIP() << "CPU without AVX-512F/BW/VL";
  ASSERT_STREQ(io_convert_name(), "x86_io_convert");
  for (float scale : kScales)
    for (int32_t zp : kZeroPoints)
      for (int64_t n : kSizes) {
        SCOPED_TRACE(testing::Message() << "n " << n << " scale " << scale << " zp " << zp);
        const std::vector<float> x = quantize_inputs(n, scale, 17);
        std::vector<int8_t> fast(static_cast<size_t>(n)), slow(static_cast<size_t>(n));
        quantize_f32_s8(x.data(), fast.data(), n, scale, zp);
        for (int64_t i = 0; i < n; ++i) slow[static_cast<size_t>(i)] = quantize_value(x[static_cast<size_t>(i)], scale, zp);
        EXPECT_EQ(fast, slow);
        std::vector<float> back(static_cast<size_t>(n));
        dequantize_s8_f32(fast.data(), back.data(), n, scale, zp);
        for (int64_t i = 0; i < n; ++i) {
          const float want = dequantize_value(fast[static_cast<size_t>(i)], scale, zp);
          EXPECT_EQ(std::memcmp(&back[static_cast<size_t>(i)], &want, 4), 0) << "at " << i;
        }
      }
}

TEST(QuantizeLinearX86, MatchesReferenceBitForBit) {
  REQUIRE_KERNEL(OpId::QuantizeLinear, kQKernel);
  uint32_t seed = 1;
  for (int64_t n : kSizes)
    for (float s : kScales)
      for (int32_t zp : kZeroPoints) check_quantize({n}, s, zp, seed++);
}

TEST(QuantizeLinearX86, LargeTensorsOnTwoThreads) {
  REQUIRE_KERNEL(OpId::QuantizeLinear, kQKernel);
  check_quantize({1, 3, 480, 480}, 0.0173f, -9, 11);  // a quantized model's input image
  check_quantize({2, 5, 77, 131}, 0.25f, 3, 12);
}

void check_dequantize(const TensorData& x) {
  OpResult ref = test::run_op(OpId::DequantizeLinear, Attrs(), {x}, 1, "ref");
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  ASSERT_EQ(ref.kernel_name, "ref_int8");
  for (int threads : {1, 2}) {
    OpResult fast = test::run_op(OpId::DequantizeLinear, Attrs(), {x}, 1, "", threads);
    ASSERT_TRUE(fast.status.ok()) << fast.status.message();
    EXPECT_EQ(fast.kernel_name, kDqKernel);
    ASSERT_EQ(fast.outputs[0].bytes.size(), ref.outputs[0].bytes.size());
    EXPECT_EQ(0, std::memcmp(fast.outputs[0].bytes.data(), ref.outputs[0].bytes.data(), ref.outputs[0].bytes.size()))
        << threads << " threads";
  }
}

TEST(DequantizeLinearX86, Int8MatchesReferenceBitForBit) {
  REQUIRE_KERNEL(OpId::DequantizeLinear, kDqKernel);
  uint32_t seed = 100;
  for (int64_t n : kSizes)
    for (float s : kScales)
      for (int32_t zp : kZeroPoints) {
        SCOPED_TRACE(testing::Message() << "numel " << n << " scale " << s << " zp " << zp);
        check_dequantize(q8t::q8({n}, q8t::random_i8(static_cast<size_t>(n), seed++), q8t::qp(s, zp)));
      }
  check_dequantize(q8t::q8({1, 24, 240, 240}, q8t::random_i8(24 * 240 * 240, 7), q8t::qp(0.031f, -4)));
}

TEST(DequantizeLinearX86, Int32MatchesReferenceBitForBit) {
  REQUIRE_KERNEL(OpId::DequantizeLinear, kDqKernel);
  for (int64_t n : kSizes) {
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<int32_t>((i * 2654435761u) % 40000001u) - 20000000 + (i == 0 ? 16777217 : 0);
    TensorData x = TensorData::of({n}, v, DType::kI32, true);
    x.quant = q8t::qp(0.00037f, 0);
    SCOPED_TRACE(n);
    check_dequantize(x);
  }
}

// Per-axis parameters stay on the reference kernels.
TEST(QuantizeX86, PerAxisStaysOnReference) {
  REQUIRE_KERNEL(OpId::QuantizeLinear, kQKernel);
  TensorData x = q8t::q8({2, 3}, {1, -2, 3, -4, 5, -6}, q8t::per_axis({0.5f, 0.25f}, 0, {1, -1}), true);
  OpResult r = test::run_op(OpId::DequantizeLinear, Attrs(), {x}, 1, "");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.kernel_name, "ref_int8");
}

}  // namespace
}  // namespace orknn
