// The AVX-512 float Erf / Gelu / Tanh (src/kernels/x86/elementwise_avx512.cc) and LayerNormalization
// (src/kernels/x86/layernorm_f32_avx512.cc) kernels against the reference kernels, within the
// tolerances of docs/kernels.md: Erf within 1 float ulp of std::erf over a dense sweep of [-5, 5],
// tiny, denormal and special values; Gelu within 2^-24 |x| plus one ulp of the output; Tanh within
// 3 ulps of std::tanh over [-10, 10] and the same kinds of values, Gelu's tanh formula within
// 2.5 2^-24 |x| plus one ulp; LayerNorm
// within float reassociation of its two sums. Vector tails, 1 and 2 threads, the blocked layout
// where a kernel takes it, and the nodes the kernels leave to the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "ops/op.h"
#include "testutil/cpu.h"
#include "testutil/op_harness.h"

namespace orknn {
namespace {

using test::OpResult;
using test::TensorData;

#define REQUIRE_AVX512F() \
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F"

// Distance in float ulps (0 for two NaNs; huge for NaN against a number).
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : static_cast<int64_t>(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

std::vector<float> out_f32(const OpResult& r) { return r.outputs.at(0).as<float>(); }

// Erf inputs: a dense sweep of [-5, 5] (both branches and their boundary at |x| = 1), tiny and
// denormal magnitudes, and the special values; n is odd, so runs end in a vector tail.
std::vector<float> erf_inputs() {
  std::vector<float> v;
  for (int i = -500000; i <= 500000; ++i) v.push_back(static_cast<float>(i) * 1e-5f);
  for (float x = 1.f; x > 1e-44f; x *= 0.37f) v.insert(v.end(), {x, -x});
  for (float x : {0.99999994f, 1.f, 1.00000012f, 3.9f, 4.f, 4.5f, 1e30f}) v.insert(v.end(), {x, -x});
  const float inf = std::numeric_limits<float>::infinity();
  v.insert(v.end(), {0.f, -0.f, inf, -inf, std::numeric_limits<float>::quiet_NaN()});
  if (v.size() % 2 == 0) v.push_back(0.5f);
  return v;
}

// The reference's output for x (1-D), and the best kernel's, which must be `kernel`, on 1 and 2
// threads.
struct Outputs {
  std::vector<float> ref;
  std::vector<std::vector<float>> fast;
};
Outputs run_unary(OpId op, const Attrs& a, const std::vector<float>& x, const char* kernel) {
  const std::vector<TensorData> in = {TensorData::f32({static_cast<int64_t>(x.size())}, x)};
  Outputs o;
  const OpResult ref = test::run_op(op, a, in, 1, "ref");
  EXPECT_TRUE(ref.status.ok()) << ref.status.message();
  o.ref = ref.status.ok() ? out_f32(ref) : std::vector<float>(x.size(), NAN);
  for (int threads : {1, 2}) {
    const OpResult got = test::run_op(op, a, in, 1, "", threads);
    EXPECT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(got.kernel_name, kernel) << threads << " threads";
    o.fast.push_back(got.status.ok() ? out_f32(got) : std::vector<float>(x.size(), NAN));
  }
  return o;
}

TEST(ErfX86, WithinOneUlpOfReference) {
  REQUIRE_AVX512F();
  const std::vector<float> x = erf_inputs();
  const Outputs o = run_unary(OpId::Erf, Attrs(), x, "x86_erf_f32");
  for (const std::vector<float>& have : o.fast) {
    int64_t worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (ulps(have[i], o.ref[i]) > worst) worst = ulps(have[i], o.ref[i]), at = i;
      if (x[i] == 0.f) EXPECT_EQ(std::signbit(have[i]), std::signbit(x[i])) << "erf(" << x[i] << ")";
    }
    EXPECT_LE(worst, 1) << "erf(" << x[at] << ") = " << have[at] << ", reference " << o.ref[at];
  }
}

// Element-wise over the bytes: nChw16c in and out, the same values as NCHW.
TEST(ErfX86, BlockedLayout) {
  REQUIRE_AVX512F();
  const Shape s = {2, 32, 5, 7};
  const std::vector<float> x = test::random_floats(2 * 32 * 35, 3, -3.f, 3.f);
  const OpResult plain = test::run_op(OpId::Erf, Attrs(), {TensorData::f32(s, x)}, 1, "x86_erf_f32");
  int blocked = 0;
  const OpResult b = test::run_op_blocked(OpId::Erf, Attrs(), {TensorData::f32(s, x)}, "x86_erf_f32", 1, &blocked);
  ASSERT_TRUE(plain.status.ok() && b.status.ok());
  EXPECT_EQ(blocked, 2);
  EXPECT_EQ(plain.outputs[0].bytes, b.outputs[0].bytes);
}

TEST(GeluX86, WithinToleranceOfReference) {
  REQUIRE_AVX512F();
  std::vector<float> x = erf_inputs();
  for (float& v : x) v *= 1.5f;  // erf's argument is x / sqrt(2)
  Attrs none;
  none.set_string("approximate", "none");
  const Outputs o = run_unary(OpId::Gelu, none, x, "x86_erf_f32");
  for (const std::vector<float>& have : o.fast) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = o.ref[i];
      double tol = 0;  // NaN and infinities exactly
      if (std::isfinite(want)) {
        const float ulp_y = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
        tol = std::ldexp(std::fabs(x[i]), -24) + ulp_y;
      }
      if (ulps(have[i], want) != 0 && !(std::fabs(double(have[i]) - want) <= tol) && bad++ == 0) first = i;
    }
    EXPECT_EQ(bad, 0u) << "gelu(" << x[first] << ") = " << have[first] << ", reference " << o.ref[first];
  }
}

// Tanh inputs: a dense sweep of [-10, 10] (both branches, their boundary at |x| = 0.625, the
// saturation past 9), tiny and denormal magnitudes, and the special values; odd in number.
std::vector<float> tanh_inputs() {
  std::vector<float> v;
  for (int i = -1000000; i <= 1000000; ++i) v.push_back(static_cast<float>(i) * 1e-5f);
  for (float x = 1.f; x > 1e-44f; x *= 0.37f) v.insert(v.end(), {x, -x});
  for (float x : {0.62499994f, 0.625f, 0.62500006f, 8.99f, 9.f, 9.01f, 44.f, 1e30f}) v.insert(v.end(), {x, -x});
  const float inf = std::numeric_limits<float>::infinity();
  v.insert(v.end(), {0.f, -0.f, inf, -inf, std::numeric_limits<float>::quiet_NaN()});
  if (v.size() % 2 == 0) v.push_back(0.5f);
  return v;
}

TEST(TanhX86, WithinThreeUlpsOfReference) {
  REQUIRE_AVX512F();
  const std::vector<float> x = tanh_inputs();
  const Outputs o = run_unary(OpId::Tanh, Attrs(), x, "x86_tanh_f32");
  for (const std::vector<float>& have : o.fast) {
    int64_t worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (ulps(have[i], o.ref[i]) > worst) worst = ulps(have[i], o.ref[i]), at = i;
      if (x[i] == 0.f) EXPECT_EQ(std::signbit(have[i]), std::signbit(x[i])) << "tanh(" << x[i] << ")";
    }
    EXPECT_LE(worst, 3) << "tanh(" << x[at] << ") = " << have[at] << ", reference " << o.ref[at];
  }
}

// Gelu's tanh formula: the reference's operations in its order with a tanh within 3 ulps of
// std::tanh (at most 2^-24 each below 1), which can move 1 + tanh by one more rounding step (2^-23
// in [1, 2)), all scaled by 0.5 |x|: within 2.5 |x| 2^-24 plus one ulp of the output; NaN and
// infinities exactly.
TEST(GeluX86, TanhApproximationWithinToleranceOfReference) {
  REQUIRE_AVX512F();
  std::vector<float> x = tanh_inputs();
  Attrs tanh_approx;
  tanh_approx.set_string("approximate", "tanh");
  const Outputs o = run_unary(OpId::Gelu, tanh_approx, x, "x86_tanh_f32");
  for (const std::vector<float>& have : o.fast) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = o.ref[i];
      double tol = 0;
      if (std::isfinite(want)) {
        const float ulp_y = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
        tol = 2.5 * std::ldexp(std::fabs(x[i]), -24) + ulp_y;
      }
      if (ulps(have[i], want) != 0 && !(std::fabs(double(have[i]) - want) <= tol) && bad++ == 0) first = i;
    }
    EXPECT_EQ(bad, 0u) << "gelu(" << x[first] << ") = " << have[first] << ", reference " << o.ref[first];
  }
}

// ------------------------------------------------------------------------- LayerNormalization

struct LnCase {
  Shape x;
  int64_t axis;
  Shape scale, bias;  // bias empty: absent
  float offset = 0.f;  // added to x: rows whose mean is not 0
  bool instance = false;  // InstanceNormalization: groups are the (n, c) planes, scale and B [C]
};

// Runs the case on the reference and on the best kernel (expected: want_kernel); returns the
// largest |fast - ref| / (sqrt(D) 2^-24 (|scale| (mean|x| inv_std + |x^|) + |B| + |y|)) over the
// elements, x^ = (x - mean) inv_std, D the group length. The sums' rounding errors, of the
// reference's running sums and of the kernel's partial ones, grow like sqrt(D) ulps of the terms
// (random data): as the mean's error enters the output, scaled by inv_std, and as inv_std's does,
// scaled by x^.
double ln_error(const LnCase& c, uint32_t seed, int threads, const char* want_kernel) {
  int64_t n = 1, len = 1;
  for (int64_t d : c.x) n *= d;
  for (size_t d = static_cast<size_t>(c.instance ? 2 : c.axis); d < c.x.size(); ++d) len *= c.x[d];
  std::vector<float> x = test::random_floats(static_cast<size_t>(n), seed, -1.f, 1.f);
  for (float& v : x) v += c.offset;
  auto numel = [](const Shape& s) {
    int64_t k = 1;
    for (int64_t d : s) k *= d;
    return static_cast<size_t>(k);
  };
  const std::vector<float> scale = test::random_floats(numel(c.scale), seed + 1, -2.f, 2.f);
  const std::vector<float> bias = test::random_floats(numel(c.bias), seed + 2, -1.f, 1.f);
  std::vector<TensorData> in = {TensorData::f32(c.x, x), TensorData::f32(c.scale, scale, true)};
  if (!c.bias.empty()) in.push_back(TensorData::f32(c.bias, bias, true));
  Attrs a;
  if (!c.instance) a.set_int("axis", c.axis);
  a.set_float("epsilon", 1e-5f);
  const OpId op = c.instance ? OpId::InstanceNormalization : OpId::LayerNormalization;
  const OpResult ref = test::run_op(op, a, in, 1, "ref");
  const OpResult got = test::run_op(op, a, in, 1, "", threads);
  if (!ref.status.ok() || !got.status.ok()) {
    ADD_FAILURE() << ref.status.message() << " / " << got.status.message();
    return INFINITY;
  }
  EXPECT_EQ(got.kernel_name, want_kernel);
  const std::vector<float> want = out_f32(ref), have = out_f32(got);
  const double unit = std::sqrt(static_cast<double>(len)) * std::ldexp(1.0, -24);
  double worst = 0;
  for (int64_t g = 0; g < n / len; ++g) {
    double mean = 0, mean_abs = 0, var = 0;
    for (int64_t i = 0; i < len; ++i) {
      mean += x[static_cast<size_t>(g * len + i)];
      mean_abs += std::fabs(x[static_cast<size_t>(g * len + i)]);
    }
    mean /= static_cast<double>(len);
    mean_abs /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i) var += std::pow(x[static_cast<size_t>(g * len + i)] - mean, 2);
    const double inv_std = 1 / std::sqrt(var / static_cast<double>(len) + 1e-5);
    for (int64_t i = 0; i < len; ++i) {
      const size_t e = static_cast<size_t>(g * len + i);
      // Scale and B are one per element or one for all here (the declined broadcast compares bits).
      const size_t k = static_cast<size_t>(c.instance ? g % c.x[1] : i);  // instance: per channel
      const double s = scale.size() == 1 ? scale[0] : scale[k];
      const double b = c.bias.empty() ? 0 : (bias.size() == 1 ? bias[0] : bias[k]);
      const double size = std::fabs(s) * (mean_abs * inv_std + std::fabs(x[e] - mean) * inv_std) + std::fabs(b) +
                          std::fabs(want[e]);
      const double err = std::fabs(double(have[e]) - want[e]) / (unit * size);
      worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    }
  }
  return worst;
}

TEST(LayerNormX86, WithinToleranceOfReference) {
  REQUIRE_AVX512F();
  const std::vector<LnCase> cases = {
      {{1, 56, 56, 96}, 3, {96}, {96}},          // convnext_tiny's stage 1 (two threads)
      {{1, 7, 7, 768}, 3, {768}, {768}},         // its stage 4
      {{2, 9, 384}, 2, {384}, {384}, 2.f},       // a transformer's tokens, mean 2
      {{3, 5}, 1, {5}, {}},                      // shorter than a vector, no B
      {{4, 16}, 1, {16}, {16}, -3.f},            // one vector
      {{4, 33}, 1, {1}, {1}},                    // one scale and B for all, a tail
      {{2, 3, 5, 17}, 2, {5, 17}, {5, 17}},      // two normalised axes
      {{6, 47}, 0, {6, 47}, {6, 47}},            // everything one group
      {{5, 1000}, 1, {1000}, {1000}, 10.f},
  };
  uint32_t seed = 1;
  double worst = 0;
  for (const LnCase& c : cases)
    for (int threads : {1, 2}) {
      const double e = ln_error(c, seed, threads, "x86_layernorm_f32");
      EXPECT_LE(e, 4.0) << "x " << c.x.size() << "-D, axis " << c.axis << ", " << threads << " threads";
      worst = std::max(worst, e);
      seed += 3;
    }
  RecordProperty("max_scaled_error", std::to_string(worst));
}

// InstanceNormalization: the same rows per (n, c) plane, the same bound.
TEST(InstanceNormX86, WithinToleranceOfReference) {
  REQUIRE_AVX512F();
  std::vector<LnCase> cases = {
      {{1, 32, 799}, 2, {32}, {32}},         // wav2vec2's first feature layer
      {{2, 3, 5, 7}, 2, {3}, {3}, 1.5f},     // 2-D planes, batch 2, a tail
      {{1, 4, 2, 3, 5}, 2, {4}, {4}},        // 3-D planes
      {{3, 2, 1}, 2, {2}, {2}, -2.f},        // one element per plane: x^ = 0
      {{1, 16, 4096}, 2, {16}, {16}},        // two threads
  };
  uint32_t seed = 5;
  for (LnCase& c : cases) {
    c.instance = true;
    for (int threads : {1, 2}) {
      const double e = ln_error(c, seed, threads, "x86_layernorm_f32");
      EXPECT_LE(e, 4.0) << "x " << c.x.size() << "-D, " << threads << " threads";
      seed += 3;
    }
  }
}

// Scale broadcast along a normalised axis (neither one per element nor one for all): the reference.
TEST(LayerNormX86, DeclinedNodesFallBack) {
  REQUIRE_AVX512F();
  Attrs a;
  a.set_int("axis", 2);
  const std::vector<TensorData> in = {TensorData::f32({2, 3, 5, 17}, test::random_floats(510, 9)),
                                      TensorData::f32({17}, test::random_floats(17, 10), true)};
  const OpResult r = test::run_op(OpId::LayerNormalization, a, in, 1, "");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.kernel_name, "ref");
}

}  // namespace
}  // namespace orknn
