// The AVX-512 float element-wise kernels (kernels/x86/elementwise_avx512.cc) against the reference
// kernels: Add/Sub/Mul/Div bit-identical (one IEEE operation per element either way), Sigmoid
// within a few float ulps of 1 / (1 + std::exp(-x)), both with 1 and 2 threads, on vector tails,
// every broadcast form the kernel takes, and the special values. Shapes it must decline stay on
// the reference kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "testutil/op_harness.h"

namespace orknn {
namespace {

using test::OpResult;
using test::TensorData;

constexpr const char* kFast = "avx512_f32";

bool fast_available() { return __builtin_cpu_supports("avx512f"); }

std::vector<float> out_f32(const OpResult& r) { return r.outputs.at(0).as<float>(); }

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

// ---------------------------------------------------------------------------- Add/Sub/Mul/Div

struct BinaryCase {
  Shape a, b;
};

std::string shape_str(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

void expect_binary_identical(OpId op, const BinaryCase& c, uint32_t seed) {
  const std::string what = shape_str(c.a) + " op " + shape_str(c.b);
  SCOPED_TRACE(what);
  std::vector<float> a = test::random_floats(static_cast<size_t>(shape_numel(c.a)), seed, -2.f, 2.f);
  std::vector<float> b = test::random_floats(static_cast<size_t>(shape_numel(c.b)), seed + 7, 0.25f, 2.f);
  // Special values in the full operand: signed zeros, infinities, NaN, a denormal.
  const float specials[] = {0.f, -0.f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), 1e-40f};
  for (size_t i = 0; i < std::size(specials) && i < a.size(); ++i) a[i * 3 % a.size()] = specials[i];
  const std::vector<TensorData> in = {TensorData::f32(c.a, a), TensorData::f32(c.b, b)};
  const OpResult ref = test::run_op(op, Attrs(), in, 1, "ref");
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  const std::vector<float> want = out_f32(ref);
  for (int threads : {1, 2}) {
    const OpResult got = test::run_op(op, Attrs(), in, 1, kFast, threads);
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    ASSERT_EQ(got.kernel_name, kFast);
    ASSERT_EQ(got.outputs.at(0).shape, ref.outputs.at(0).shape);
    const std::vector<float> have = out_f32(got);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (!same_bits(have[i], want[i]) && bad++ == 0) first = i;
    EXPECT_EQ(bad, 0u) << "threads=" << threads << ": first difference at " << first << ": " << have[first]
                       << " vs reference " << want[first];
  }
}

std::vector<BinaryCase> binary_cases() {
  std::vector<BinaryCase> cases;
  for (int64_t w : {1, 15, 16, 17, 33}) cases.push_back({{1, 3, 2, w}, {1, 3, 2, w}});  // same shape, tails
  cases.push_back({{1, 40, 56, 56}, {1, 40, 56, 56}});   // large: both threads work
  cases.push_back({{1, 40, 28, 28}, {1, 40, 1, 1}});     // squeeze-and-excitation scale
  cases.push_back({{1, 40, 1, 1}, {1, 40, 28, 28}});     // broadcast operand first
  cases.push_back({{2, 5, 7, 9}, {2, 5, 1, 1}});         // batch 2, per (n, c) scalar
  cases.push_back({{1, 6, 5, 19}, {6, 1, 1}});           // fewer dims, leading output dim 1
  cases.push_back({{1, 2, 300, 300}, {1, 2, 1, 1}});     // few large blocks: split inside a block
  cases.push_back({{2, 3, 4, 5}, {}});                   // rank-0 scalar
  cases.push_back({{1}, {2, 3, 4, 5}});                  // rank-1 scalar first
  cases.push_back({{4, 6, 10}, {4, 6, 1}});              // 3-D, per-row scalar
  // Other broadcasts: runs of the output's innermost dims, each operand loaded or splat per run.
  cases.push_back({{1, 3, 1, 5}, {1, 1, 4, 5}});         // each input broadcast in a different direction
  cases.push_back({{2, 3, 4, 5}, {3, 1, 1}});            // periodic operand
  cases.push_back({{2, 3, 4, 5}, {2, 1, 4, 5}});         // a middle axis only
  cases.push_back({{2, 3, 4, 35}, {35}});                // a bias row
  cases.push_back({{4, 16, 16, 16, 16}, {4, 16, 16, 16, 1}});  // SAM's relative-position terms
  cases.push_back({{4, 16, 16, 1, 16}, {4, 16, 16, 16, 16}});
  cases.push_back({{3, 1, 7}, {1, 5, 1}});               // neither operand full
  cases.push_back({{1, 100, 64}, {100, 64}});            // Whisper's position table: one run
  return cases;
}

TEST(ElementwiseX86, BinaryOpsAreBitIdenticalToReference) {
  if (!fast_available()) GTEST_SKIP() << "no AVX-512F";
  uint32_t seed = 1;
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul, OpId::Div})
    for (const BinaryCase& c : binary_cases()) {
      SCOPED_TRACE(std::string(find_op(op)->name));
      expect_binary_identical(op, c, seed++);
    }
}

// Blocked activations (kernel.h BlockedIo): the element-wise kernels take nChw16c when every
// activation of the node is in it (kUniform): same shapes, scalars and per-channel operands; other
// broadcasts keep NCHW. The reference's unary kernels (Relu here) do the same. Results
// bit-identical to the NCHW run.
TEST(ElementwiseX86, BlockedActivationsOnlyWhenUniform) {
  if (!fast_available()) GTEST_SKIP() << "CPU without AVX-512F";
  const Shape x{2, 32, 5, 7};
  const std::vector<float> a = test::random_floats(static_cast<size_t>(shape_numel(x)), 5, -2.f, 2.f);
  const std::vector<float> b = test::random_floats(static_cast<size_t>(shape_numel(x)), 6, 0.25f, 2.f);
  struct Case {
    OpId op;
    std::vector<TensorData> in;
    const char* kernel;
    int want_blocked;
  };
  const std::vector<Case> cases = {
      {OpId::Add, {TensorData::f32(x, a), TensorData::f32(x, b)}, kFast, 3},
      {OpId::Div, {TensorData::f32(x, a), TensorData::f32(x, b)}, kFast, 3},
      // Per-channel scales (squeeze-and-excitation): blocked, either operand order.
      {OpId::Mul, {TensorData::f32(x, a), TensorData::f32({2, 32, 1, 1}, std::vector<float>(b.begin(), b.begin() + 64))},
       kFast, 3},
      {OpId::Sub, {TensorData::f32({2, 32, 1, 1}, std::vector<float>(b.begin(), b.begin() + 64)), TensorData::f32(x, a)},
       kFast, 3},
      // A constant [C,1,1] against one image: blocked around it.
      {OpId::Div, {TensorData::f32({1, 32, 5, 7}, std::vector<float>(a.begin(), a.begin() + 32 * 35)),
                   TensorData::f32({32, 1, 1}, std::vector<float>(b.begin(), b.begin() + 32), true)},
       kFast, 2},
      // Per (image, channel, row) values are not a channel block: NCHW.
      {OpId::Add, {TensorData::f32(x, a), TensorData::f32({2, 32, 5, 1}, std::vector<float>(b.begin(), b.begin() + 320))},
       kFast, 0},
      {OpId::Sigmoid, {TensorData::f32(x, a)}, kFast, 2},
      {OpId::Relu, {TensorData::f32(x, a)}, "ref", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(op_name(c.op));
    const OpResult plain = test::run_op(c.op, Attrs(), c.in, 1, c.kernel);
    ASSERT_TRUE(plain.status.ok()) << plain.status.message();
    int blocked = -1;
    const OpResult got = test::run_op_blocked(c.op, Attrs(), c.in, c.kernel, 2, &blocked);
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(blocked, c.want_blocked);
    EXPECT_EQ(0, std::memcmp(got.outputs[0].bytes.data(), plain.outputs[0].bytes.data(), plain.outputs[0].bytes.size()));
  }
}

TEST(ElementwiseX86, BinaryDeclinesIntegers) {
  if (!fast_available()) GTEST_SKIP() << "no AVX-512F";
  // Integer tensors (shape arithmetic) are not this kernel's either.
  const std::vector<TensorData> ints = {TensorData::i64({4}, {1, 2, 3, 4}, false), TensorData::i64({4}, {4, 3, 2, 1}, false)};
  const OpResult best = test::run_op(OpId::Add, Attrs(), ints, 1, "");
  ASSERT_TRUE(best.status.ok()) << best.status.message();
  EXPECT_NE(best.kernel_name, kFast);
}

// ----------------------------------------------------------------------------------- Sigmoid

// 1 / (1 + e^-x) in double: the exact function, to bound both kernels' error independently.
double sigmoid_exact(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// BatchNormalization: bit-identical to the reference over ranks 2-5, tails, batch 2, one and many
// channels, variances near zero, special input values; 1 and 2 threads.
TEST(ElementwiseX86, BatchNormIsBitIdenticalToReference) {
  if (!fast_available()) GTEST_SKIP() << "no AVX-512F";
  uint32_t seed = 40;
  for (const Shape& x : {Shape{3, 5}, Shape{1, 1, 17}, Shape{2, 7, 9, 13}, Shape{1, 24, 96, 96}, Shape{1, 3, 2, 3, 5}}) {
    SCOPED_TRACE(shape_str(x));
    const int64_t c = x[1];
    std::vector<float> xv = test::random_floats(static_cast<size_t>(shape_numel(x)), seed++, -3.f, 3.f);
    const float specials[] = {0.f, -0.f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                              1e-40f};
    for (size_t i = 0; i < std::size(specials) && i < xv.size(); ++i) xv[i * 5 % xv.size()] = specials[i];
    std::vector<float> var = test::random_floats(static_cast<size_t>(c), seed++, 0.f, 2.f);
    var[0] = 0.f;  // sqrt(epsilon)
    const std::vector<TensorData> in = {
        TensorData::f32(x, xv), TensorData::f32({c}, test::random_floats(static_cast<size_t>(c), seed++, -2.f, 2.f), true),
        TensorData::f32({c}, test::random_floats(static_cast<size_t>(c), seed++, -1.f, 1.f), true),
        TensorData::f32({c}, test::random_floats(static_cast<size_t>(c), seed++, -1.f, 1.f), true),
        TensorData::f32({c}, var, true)};
    Attrs attrs;
    attrs.set_float("epsilon", 1e-3f);
    const OpResult ref = test::run_op(OpId::BatchNormalization, attrs, in, 1, "ref");
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    const std::vector<float> want = out_f32(ref);
    for (int threads : {1, 2}) {
      const OpResult got = test::run_op(OpId::BatchNormalization, attrs, in, 1, kFast, threads);
      ASSERT_TRUE(got.status.ok()) << got.status.message();
      ASSERT_EQ(got.kernel_name, kFast);
      const std::vector<float> have = out_f32(got);
      size_t bad = 0;
      for (size_t i = 0; i < want.size(); ++i) bad += !same_bits(have[i], want[i]);
      EXPECT_EQ(bad, 0u) << "threads=" << threads;
    }
  }
}

TEST(ElementwiseX86, SigmoidWithinUlpsOfReference) {
  if (!fast_available()) GTEST_SKIP() << "no AVX-512F";
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = test::random_floats(200000, 11, -20.f, 20.f);
  // Range ends and special values: where e^-x overflows/underflows, rounds to 1, and the clamps.
  const float specials[] = {0.f,   -0.f,    1e-30f,  -1e-30f, 87.f,   88.7f,  89.f,  -87.f,   -88.7f,
                            -89.f, -103.9f, -104.f,  -105.f,  104.f,  200.f,  -200.f, inf,   -inf,
                            17.f,  -17.f,   16.6355f, 0.5f,  -0.5f,   3.4e38f, -3.4e38f};
  for (size_t i = 0; i < std::size(specials); ++i) x[i] = specials[i];
  x[std::size(specials)] = std::numeric_limits<float>::quiet_NaN();
  for (size_t n : {size_t(1), size_t(15), size_t(17), size_t(33), x.size()}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const std::vector<float> xs(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
    const std::vector<TensorData> in = {TensorData::f32({static_cast<int64_t>(n)}, xs)};
    const OpResult ref = test::run_op(OpId::Sigmoid, Attrs(), in, 1, "ref");
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    const std::vector<float> want = out_f32(ref);
    for (int threads : {1, 2}) {
      const OpResult got = test::run_op(OpId::Sigmoid, Attrs(), in, 1, kFast, threads);
      ASSERT_TRUE(got.status.ok()) << got.status.message();
      ASSERT_EQ(got.kernel_name, kFast);
      const std::vector<float> have = out_f32(got);
      double worst_rel = 0;
      for (size_t i = 0; i < n; ++i) {
        if (std::isnan(xs[i])) {
          EXPECT_TRUE(std::isnan(have[i])) << "NaN in, " << have[i] << " out";
          continue;
        }
        const double exact = sigmoid_exact(xs[i]);
        // Relative error against the exact value (8 float ulps), plus the smallest normal float as
        // an absolute floor: where 1 + e^-x overflows, float gives 0 for a denormal exact value.
        const double err = std::fabs(have[i] - exact);
        if (exact > 1.2e-38) worst_rel = std::max(worst_rel, err / exact);
        ASSERT_LE(err, 8 * 6e-8 * exact + 1.2e-38) << "x=" << xs[i] << ": " << have[i] << ", exact " << exact;
        ASSERT_LE(std::fabs(have[i] - want[i]), 1e-6f * std::max(1e-30f, std::fabs(want[i])) + 1.2e-38f)
            << "x=" << xs[i] << ": " << have[i] << " vs reference " << want[i];
        ASSERT_GE(have[i], 0.f);
        ASSERT_LE(have[i], 1.f);
      }
      ::testing::Test::RecordProperty("sigmoid_worst_rel_t" + std::to_string(threads), std::to_string(worst_rel));
    }
  }
}

// Softmax along any axis: within the float tolerance of the reference (another exp, another
// summation order for contiguous slices), slices with -inf, large values, a NaN (the slice becomes
// NaN), vector tails; contiguous slices (the axis innermost or followed by 1s) and strided ones
// (16 slices per vector, a partial last group).
TEST(ElementwiseX86, SoftmaxWithinToleranceOfReference) {
  if (!fast_available()) GTEST_SKIP() << "CPU without AVX-512F";
  struct Case {
    Shape shape;
    int64_t axis;
  };
  for (const Case& c : {Case{{1, 40, 6625}, 2}, Case{{3, 17}, 1}, Case{{2, 4, 16}, 2}, Case{{5, 1}, 1},
                        Case{{2, 33, 1, 1}, 1}, Case{{2, 3, 4}, 1}, Case{{1, 4, 16, 70}, 2}, Case{{2, 21, 9, 11}, 1},
                        Case{{3, 5, 17}, 0}, Case{{1, 1000, 2}, 1}, Case{{2, 7, 3, 16}, 2}}) {
    const Shape& shape = c.shape;
    SCOPED_TRACE(shape_str(shape) + " axis " + std::to_string(c.axis));
    int64_t inner = 1;
    for (size_t i = static_cast<size_t>(c.axis) + 1; i < shape.size(); ++i) inner *= shape[i];
    std::vector<float> x = test::random_floats(static_cast<size_t>(shape_numel(shape)), 31, -8.f, 8.f);
    if (x.size() > 40) {
      x[3] = -std::numeric_limits<float>::infinity();
      x[5] = 90.f;  // exp(90) overflows float: the max shift must be applied first
      x[static_cast<size_t>(inner) * 2 + 1] = std::numeric_limits<float>::quiet_NaN();  // its slice becomes NaN
    }
    Attrs a;
    a.set_int("axis", c.axis);
    const OpResult ref = test::run_op(OpId::Softmax, a, {TensorData::f32(shape, x)}, 1, "ref");
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    const std::vector<float> want = out_f32(ref);
    for (int threads : {1, 2}) {
      const OpResult got = test::run_op(OpId::Softmax, a, {TensorData::f32(shape, x)}, 1, "", threads);
      ASSERT_TRUE(got.status.ok()) << got.status.message();
      EXPECT_EQ(got.kernel_name, kFast);
      const std::vector<float> have = out_f32(got);
      size_t bad = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i]) != std::isnan(have[i])) ++bad;
        else if (!std::isnan(want[i]) && !(std::fabs(want[i] - have[i]) <= 2e-6f)) ++bad;  // outputs in [0, 1]
      }
      EXPECT_EQ(bad, 0u) << threads << " threads";
    }
  }
}

TEST(ElementwiseX86, SigmoidDeclinesQuantizedNodes) {
  if (!fast_available()) GTEST_SKIP() << "no AVX-512F";
  QuantParams q;
  q.scale = {0.05f};
  q.zero_point = {3};
  TensorData x = TensorData::of(Shape{64}, std::vector<int8_t>(64, 5), DType::kI8);
  x.quant = q;
  QuantParams qy;
  qy.scale = {1.f / 256};
  qy.zero_point = {-128};
  const OpResult best = test::run_op(OpId::Sigmoid, Attrs(), {x}, 1, "", 1, {qy});
  ASSERT_TRUE(best.status.ok()) << best.status.message();
  EXPECT_NE(best.kernel_name, kFast);
}

}  // namespace
}  // namespace orknn
