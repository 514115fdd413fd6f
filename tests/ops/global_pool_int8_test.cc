// The fast quantized GlobalAveragePool kernel of the build and CPU (x86: x86_gap_int8 with
// AVX-512F/BW; aarch64: neon_gap_int8) against ref_int8, bit for bit, NCHW and NHWC: plane sizes
// around the 16- and 64-byte vectors (1x1, 7x7, 8x8, 9x9, odd and large planes), 3-D and 5-D
// inputs, batch 2, channel counts that are not multiples of 16,
// output parameters equal to / different from the input's over every zero point class, constant
// planes that saturate, 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "int8_test_helpers.h"
#include "kernels/kernel.h"
#include "ops/op.h"
#include "testutil/cpu.h"
#include "testutil/op_harness.h"

namespace orknn {
namespace {

using test::OpResult;
using test::TensorData;
namespace q8t = test::q8t;

// nullptr when no fast kernel runs here.
const char* fast_kernel() {
  return q8t::fast_int8_kernel(OpId::GlobalAveragePool, "x86_gap_int8",
                               ORKNN_X86_HAS("avx512f") && ORKNN_X86_HAS("avx512bw"), "neon_gap_int8");
}

#define REQUIRE_KERNEL() \
  if (!fast_kernel()) GTEST_SKIP() << "CPU without AVX-512F/BW"

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

void check(const Shape& shape, const std::vector<int8_t>& x, const QuantParams& qx, const QuantParams& qy) {
  const char* kKernel = fast_kernel();
  SCOPED_TRACE(testing::Message() << "rank " << shape.size() << " numel " << numel(shape) << " s_x " << qx.scale[0]
                                  << " zp_x " << qx.zero_point[0] << " s_y " << qy.scale[0] << " zp_y "
                                  << qy.zero_point[0]);
  const TensorData in = q8t::q8(shape, x, qx);
  OpResult ref = test::run_op(OpId::GlobalAveragePool, Attrs(), {in}, 1, "ref", 1, {qy});
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  ASSERT_EQ(ref.kernel_name, "ref_int8");
  for (int threads : {1, 2}) {
    OpResult fast = test::run_op(OpId::GlobalAveragePool, Attrs(), {in}, 1, "", threads, {qy});
    ASSERT_TRUE(fast.status.ok()) << fast.status.message();
    EXPECT_EQ(fast.kernel_name, kKernel);
    EXPECT_EQ(fast.outputs[0].shape, ref.outputs[0].shape);
    EXPECT_EQ(fast.outputs[0].bytes, ref.outputs[0].bytes) << threads << " threads";
    if (shape.size() != 4) continue;
    int blocked = 0;  // input channels-last (the runtime's blocked INT8 layout)
    OpResult b = test::run_op_blocked(OpId::GlobalAveragePool, Attrs(), {in}, kKernel, threads, &blocked, {qy});
    ASSERT_TRUE(b.status.ok()) << b.status.message();
    EXPECT_GE(blocked, 1);
    EXPECT_EQ(b.outputs[0].bytes, ref.outputs[0].bytes) << threads << " threads, NHWC";
  }
}

// Parameter relations: the output's equal to the input's, and different (scale up/down, zero
// points at the extremes).
const std::pair<QuantParams, QuantParams> kParams[] = {
    {q8t::qp(0.05f, -7), q8t::qp(0.05f, -7)},    {q8t::qp(0.05f, -7), q8t::qp(0.02f, 3)},
    {q8t::qp(0.1f, 0), q8t::qp(0.3f, -128)},     {q8t::qp(0.0123f, 127), q8t::qp(0.0123f, -128)},
    {q8t::qp(0.5f, -128), q8t::qp(0.007f, 127)}, {q8t::qp(1.f, 17), q8t::qp(0.77f, -20)}};

TEST(GlobalAveragePoolFastI8, PlaneSizesAndParameters) {
  REQUIRE_KERNEL();
  uint32_t seed = 1;
  for (const auto& [qx, qy] : kParams)
    for (const Shape& s :
         {Shape{1, 1, 1, 1}, Shape{1, 19, 7, 7}, Shape{2, 3, 8, 8}, Shape{1, 33, 9, 9}, Shape{1, 5, 1, 63},
          Shape{1, 5, 13, 5}, Shape{2, 7, 17, 23}, Shape{1, 4, 56, 56}, Shape{1, 3, 11}, Shape{1, 2, 3, 4, 5}})
      check(s, q8t::random_i8(static_cast<size_t>(numel(s)), seed++), qx, qy);
}

TEST(GlobalAveragePoolFastI8, ConstantPlanesSaturate) {
  REQUIRE_KERNEL();
  for (int8_t v : {int8_t{-128}, int8_t{127}, int8_t{0}}) {
    const Shape s = {1, 3, 10, 10};
    check(s, std::vector<int8_t>(300, v), q8t::qp(1.f, 0), q8t::qp(0.1f, 0));
    check(s, std::vector<int8_t>(300, v), q8t::qp(0.1f, -128), q8t::qp(0.1f, 127));
  }
}

TEST(GlobalAveragePoolFastI8, LargeTensorsOnTwoThreads) {
  REQUIRE_KERNEL();
  const Shape s = {1, 32, 112, 112};  // efficientnet's first squeeze-and-excitation block
  check(s, q8t::random_i8(static_cast<size_t>(numel(s)), 5), q8t::qp(0.04f, -11), q8t::qp(0.01f, 2));
  const Shape s2 = {2, 1280, 7, 7};
  check(s2, q8t::random_i8(static_cast<size_t>(numel(s2)), 6), q8t::qp(0.04f, -11), q8t::qp(0.04f, -11));
}

}  // namespace
}  // namespace orknn
