// The AVX-512 nearest Resize kernels (src/kernels/x86/resize_nearest_avx512.cc) against the
// reference kernels, bit for bit: float32 against "ref", int8 against "ref_int8". Every coordinate
// transformation x nearest mode, integer repeats 2..17 (the permute paths and the gather beyond
// them), non-integer and downscaling scales, sizes, H-only and W-only resizes, odd widths around the
// 16/64-lane vector sizes, 1x1 planes, batch 2, channel counts that are not multiples of 16,
// non-finite floats, 1 and 2 threads; then the nodes the kernels must leave to the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "int8_test_helpers.h"
#include "kernels/kernel.h"
#include "ops/op.h"
#include "testutil/op_harness.h"

namespace orknn {
namespace {

using test::OpResult;
using test::TensorData;
namespace q8t = test::q8t;

constexpr const char* kF32Kernel = "x86_resize_nearest_f32";
constexpr const char* kI8Kernel = "x86_resize_nearest_int8";

bool kernel_registered(const char* name) {
  for (const KernelEntry* e : kernels_for(OpId::Resize))
    if (std::string(e->name) == name) return true;
  return false;
}

#define REQUIRE_KERNEL(name, cpu_ok)                                  \
  if (!kernel_registered(name)) GTEST_SKIP() << name << " not built"; \
  if (!(cpu_ok)) GTEST_SKIP() << "CPU without the kernel's AVX-512 extensions"

bool cpu_f32() { return __builtin_cpu_supports("avx512f"); }
bool cpu_i8() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"); }

const char* const kCtms[] = {"asymmetric",           "half_pixel",    "pytorch_half_pixel",
                             "tf_half_pixel_for_nn", "align_corners", "half_pixel_symmetric"};
const char* const kNearestModes[] = {"floor", "ceil", "round_prefer_floor", "round_prefer_ceil"};

struct Case {
  Shape x;
  std::vector<float> scales;  // 4 values; empty: use `sizes`
  std::vector<int64_t> sizes;
  std::string mode = "nearest", ctm = "asymmetric", nearest_mode = "floor";
  std::string label() const {
    char b[256];
    std::snprintf(
        b, sizeof(b), "x=[%lld,%lld,%lld,%lld] %s=[%g,%g] %s %s %s", (long long)x[0], (long long)x[1], (long long)x[2],
        (long long)x[3], scales.empty() ? "sizes" : "scales", scales.empty() ? double(sizes[2]) : double(scales[2]),
        scales.empty() ? double(sizes[3]) : double(scales[3]), mode.c_str(), ctm.c_str(), nearest_mode.c_str());
    return b;
  }
};

Attrs case_attrs(const Case& c) {
  Attrs a;
  a.set_string("mode", c.mode);
  a.set_string("coordinate_transformation_mode", c.ctm);
  a.set_string("nearest_mode", c.nearest_mode);
  return a;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// X, roi (absent), scales or (absent) sizes.
std::vector<TensorData> case_inputs(const Case& c, TensorData x) {
  std::vector<TensorData> in = {std::move(x), TensorData::none()};
  if (!c.scales.empty()) {
    in.push_back(TensorData::f32({4}, c.scales, true));
  } else {
    in.push_back(TensorData::none());
    in.push_back(TensorData::i64({4}, c.sizes));
  }
  return in;
}

// Reference vs best kernel on float data, 1 and 2 threads: bit-identical; `want` chosen (or, when
// null, not this kernel).
void check_f32(const Case& c, uint32_t seed, const char* want, bool non_finite = false) {
  SCOPED_TRACE(c.label());
  std::vector<float> xv = test::random_floats(static_cast<size_t>(numel(c.x)), seed, -3.f, 3.f);
  if (non_finite && xv.size() >= 4) {
    xv[0] = std::numeric_limits<float>::quiet_NaN();
    xv[1] = std::numeric_limits<float>::infinity();
    xv[2] = -std::numeric_limits<float>::infinity();
    xv[3] = -0.f;
  }
  const std::vector<TensorData> in = case_inputs(c, TensorData::f32(c.x, xv));
  const Attrs attrs = case_attrs(c);
  OpResult ref = test::run_op(OpId::Resize, attrs, in, 1, "ref");
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  ASSERT_EQ(ref.kernel_name, "ref");
  for (int threads : {1, 2}) {
    OpResult fast = test::run_op(OpId::Resize, attrs, in, 1, "", threads);
    ASSERT_TRUE(fast.status.ok()) << fast.status.message();
    if (want)
      EXPECT_EQ(fast.kernel_name, want);
    else
      EXPECT_NE(fast.kernel_name, kF32Kernel);
    ASSERT_EQ(fast.outputs[0].shape, ref.outputs[0].shape);
    ASSERT_EQ(fast.outputs[0].bytes.size(), ref.outputs[0].bytes.size());
    EXPECT_EQ(0, std::memcmp(fast.outputs[0].bytes.data(), ref.outputs[0].bytes.data(), ref.outputs[0].bytes.size()))
        << threads << " threads";
  }
}

// The same on int8 data with input and output parameters `q` (a nearest resize moves bytes).
void check_i8(const Case& c, uint32_t seed, const char* want, const QuantParams& q = q8t::qp(0.05f, -7)) {
  SCOPED_TRACE(c.label());
  const std::vector<TensorData> in =
      case_inputs(c, q8t::q8(c.x, q8t::random_i8(static_cast<size_t>(numel(c.x)), seed), q));
  const Attrs attrs = case_attrs(c);
  OpResult ref = test::run_op(OpId::Resize, attrs, in, 1, "ref", 1, {q});
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  ASSERT_EQ(ref.kernel_name, "ref_int8");
  for (int threads : {1, 2}) {
    OpResult fast = test::run_op(OpId::Resize, attrs, in, 1, "", threads, {q});
    ASSERT_TRUE(fast.status.ok()) << fast.status.message();
    if (want)
      EXPECT_EQ(fast.kernel_name, want);
    else
      EXPECT_NE(fast.kernel_name, kI8Kernel);
    ASSERT_EQ(fast.outputs[0].shape, ref.outputs[0].shape);
    EXPECT_EQ(fast.outputs[0].dtype, DType::kI8);
    EXPECT_EQ(0, std::memcmp(fast.outputs[0].bytes.data(), ref.outputs[0].bytes.data(), ref.outputs[0].bytes.size()))
        << threads << " threads";
  }
}

// Shape classes shared by the float and int8 tests.
std::vector<Case> shape_classes() {
  std::vector<Case> cases;
  auto add_scales = [&](Shape x, float sh, float sw) {
    Case c;
    c.x = x;
    c.scales = {1.f, 1.f, sh, sw};
    cases.push_back(c);
  };
  auto add_sizes = [&](Shape x, int64_t oh, int64_t ow) {
    Case c;
    c.x = x;
    c.sizes = {x[0], x[1], oh, ow};
    cases.push_back(c);
  };
  // Integer repeats (the PP-OCR FPN: 2, 4, 8) over widths around the vector sizes.
  for (float k : {2.f, 3.f, 4.f, 8.f})
    for (int64_t w : {1, 5, 8, 15, 16, 17, 31, 33, 64, 65}) add_scales({1, 3, 3, w}, k, k);
  add_scales({1, 1, 1, 1}, 2.f, 2.f);     // 1x1 plane
  add_scales({2, 19, 5, 7}, 2.f, 2.f);    // batch 2, 19 channels
  add_scales({1, 17, 4, 130}, 2.f, 3.f);  // different factors per axis, several int8 vectors
  add_scales({1, 2, 3, 6}, 5.f, 16.f);    // the largest float permute repeat
  add_scales({1, 2, 3, 6}, 1.f, 17.f);    // beyond it (float gathers, int8 permutes)
  add_scales({1, 2, 2, 3}, 3.f, 64.f);    // the largest int8 permute repeat
  add_scales({1, 2, 2, 3}, 2.f, 65.f);    // beyond it
  add_scales({1, 5, 6, 9}, 2.f, 1.f);     // H only (identity rows)
  add_scales({1, 5, 6, 9}, 1.f, 2.f);     // W only
  add_scales({1, 4, 7, 10}, 1.5f, 2.5f);  // non-integer
  add_scales({1, 4, 7, 10}, 0.5f, 0.6f);  // downscale
  add_scales({2, 3, 3, 4}, 2.5f, 1.5f);
  add_sizes({1, 6, 7, 10}, 10, 23);  // sizes (exact out / in ratios)
  add_sizes({1, 6, 10, 23}, 7, 10);
  add_sizes({2, 3, 5, 5}, 1, 1);
  add_sizes({1, 3, 3, 3}, 6, 6);
  return cases;
}

TEST(ResizeX86F32, ShapeClassesMatchReference) {
  REQUIRE_KERNEL(kF32Kernel, cpu_f32());
  uint32_t seed = 1;
  for (const Case& base : shape_classes()) check_f32(base, seed++, kF32Kernel);
}

// tf_half_pixel_for_nn rounding up maps output index o of an unresized axis to input o + 1
// (clamped): with more than one channel, C is not an identity and the kernels leave the node to
// the reference.
bool channel_shift(const Case& c) {
  return c.ctm == "tf_half_pixel_for_nn" && (c.nearest_mode == "ceil" || c.nearest_mode == "round_prefer_ceil") &&
         (c.x[0] > 1 || c.x[1] > 1);
}

TEST(ResizeX86F32, EveryTransformationAndNearestMode) {
  REQUIRE_KERNEL(kF32Kernel, cpu_f32());
  uint32_t seed = 100;
  int cases = 0;
  for (const char* ctm : kCtms)
    for (const char* nm : kNearestModes)
      for (const Case& base :
           {Case{{1, 3, 4, 6}, {1.f, 1.f, 2.f, 2.f}, {}}, Case{{2, 2, 5, 7}, {1.f, 1.f, 3.f, 1.5f}, {}},
            Case{{1, 3, 9, 8}, {1.f, 1.f, 0.5f, 0.75f}, {}}, Case{{1, 2, 5, 7}, {}, {1, 2, 9, 16}}}) {
        Case c = base;
        c.ctm = ctm;
        c.nearest_mode = nm;
        check_f32(c, seed++, channel_shift(c) ? nullptr : kF32Kernel);
        ++cases;
      }
  EXPECT_EQ(cases, 6 * 4 * 4);
}

TEST(ResizeX86F32, NonFiniteValuesAndThreadedSizes) {
  REQUIRE_KERNEL(kF32Kernel, cpu_f32());
  Case c;
  c.x = {1, 2, 4, 21};
  c.scales = {1.f, 1.f, 2.f, 2.f};
  check_f32(c, 7, kF32Kernel, /*non_finite=*/true);
  c.scales = {1.f, 1.f, 1.5f, 1.f};
  check_f32(c, 8, kF32Kernel, true);
  // Large enough for two threads (row ranges that split planes).
  c.x = {2, 19, 40, 37};
  c.scales = {1.f, 1.f, 2.f, 2.f};
  check_f32(c, 9, kF32Kernel);
  c.x = {1, 3, 61, 97};
  c.scales = {1.f, 1.f, 3.f, 1.7f};
  check_f32(c, 10, kF32Kernel);
}

TEST(ResizeX86I8, ShapeClassesMatchReference) {
  REQUIRE_KERNEL(kI8Kernel, cpu_i8());
  uint32_t seed = 200;
  for (const Case& base : shape_classes()) check_i8(base, seed++, kI8Kernel);
  // Other parameters (a nearest resize never requantizes; the zero point does not matter).
  Case c;
  c.x = {1, 5, 9, 70};
  c.scales = {1.f, 1.f, 2.f, 2.f};
  check_i8(c, seed++, kI8Kernel, q8t::qp(1.f, 0));
  check_i8(c, seed++, kI8Kernel, q8t::qp(0.0123f, 127));
  check_i8(c, seed++, kI8Kernel, q8t::qp(3.5f, -128));
  c.x = {2, 19, 40, 77};  // two threads
  check_i8(c, seed++, kI8Kernel);
}

TEST(ResizeX86I8, EveryTransformationAndNearestMode) {
  REQUIRE_KERNEL(kI8Kernel, cpu_i8());
  uint32_t seed = 300;
  for (const char* ctm : kCtms)
    for (const char* nm : kNearestModes)
      for (const Case& base : {Case{{1, 3, 4, 6}, {1.f, 1.f, 2.f, 2.f}, {}},
                               Case{{2, 2, 5, 7}, {1.f, 1.f, 3.f, 1.5f}, {}}, Case{{1, 2, 5, 7}, {}, {1, 2, 9, 16}}}) {
        Case c = base;
        c.ctm = ctm;
        c.nearest_mode = nm;
        check_i8(c, seed++, channel_shift(c) ? nullptr : kI8Kernel);
      }
}

// The output must carry the input's parameters: the int8 kernel refuses the node at plan time,
// as ref_int8 does.
TEST(ResizeX86I8, DifferentOutputParametersAreRefused) {
  REQUIRE_KERNEL(kI8Kernel, cpu_i8());
  Case c;
  c.x = {1, 2, 3, 3};
  c.scales = {1.f, 1.f, 2.f, 2.f};
  const std::vector<TensorData> in = case_inputs(c, q8t::q8(c.x, q8t::random_i8(18, 1), q8t::qp(0.5f, 1)));
  OpResult ref = test::run_op(OpId::Resize, case_attrs(c), in, 1, "ref", 1, {q8t::qp(0.25f, 1)});
  OpResult fast = test::run_op(OpId::Resize, case_attrs(c), in, 1, kI8Kernel, 1, {q8t::qp(0.25f, 1)});
  EXPECT_FALSE(ref.status.ok());
  EXPECT_FALSE(fast.status.ok());
}

// Nodes these kernels leave to other kernels (which the best-kernel run still matches): linear to
// x86_resize_linear_f32, the rest to the reference.
TEST(ResizeX86, DeclinedNodesFallBack) {
  REQUIRE_KERNEL(kF32Kernel, cpu_f32());
  Case linear;
  linear.x = {1, 2, 3, 4};
  linear.scales = {1.f, 1.f, 2.f, 2.f};
  linear.mode = "linear";
  linear.ctm = "half_pixel";
  check_f32(linear, 1, nullptr);
  Case channels;  // C resized
  channels.x = {1, 2, 3, 4};
  channels.scales = {1.f, 2.f, 2.f, 2.f};
  check_f32(channels, 2, nullptr);
  check_i8(channels, 3, nullptr);
  Case batch;  // N resized
  batch.x = {1, 2, 3, 4};
  batch.scales = {2.f, 1.f, 1.f, 1.f};
  check_f32(batch, 4, nullptr);

  // tf_crop_and_resize, and a 3-D input.
  Attrs crop;
  crop.set_string("mode", "nearest");
  crop.set_string("coordinate_transformation_mode", "tf_crop_and_resize");
  OpResult r = test::run_op(
      OpId::Resize, crop,
      {TensorData::f32({1, 1, 2, 2}, {1, 2, 3, 4}), TensorData::f32({8}, {0, 0, 0.f, 0.f, 1, 1, 1.f, 1.f}, true),
       TensorData::f32({4}, {1, 1, 2, 2}, true)},
      1, "");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.kernel_name, "ref");
  Attrs nearest;
  nearest.set_string("mode", "nearest");
  r = test::run_op(
      OpId::Resize, nearest,
      {TensorData::f32({1, 2, 2}, {1, 2, 3, 4}), TensorData::none(), TensorData::f32({3}, {1, 2, 2}, true)}, 1, "");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.kernel_name, "ref");
}

// A normalised "scales" need only be positive and finite, whatever "sizes" says (hostile_values_test.cc):
// a W scale of 1e-30 puts every W coordinate near 5e29, and both kernels must pick the last input
// column, without converting that coordinate to int64 out of range (found by fuzz_fast_kernels).
// H is doubled exactly: output row oh reads input row oh / 2.
TEST(ResizeX86, ScaleNearZeroPicksTheLastColumn) {
  Attrs a;
  a.set_string("mode", "nearest");
  a.set_string("coordinate_transformation_mode", "half_pixel");
  a.set_string("nearest_mode", "round_prefer_floor");
  a.set_floats("scales", {1.f, 1.f, 2.f, 1e-30f});
  a.set_ints("sizes", {1, 2, 4, 5});
  const Shape xs = {1, 2, 2, 3};
  std::vector<size_t> want;  // output element -> input element
  for (size_t c = 0; c < 2; ++c)
    for (size_t oh = 0; oh < 4; ++oh)
      for (size_t ow = 0; ow < 5; ++ow) want.push_back((c * 2 + oh / 2) * 3 + 2);
  const std::vector<float> xf = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<int8_t> xq = {-12, 2, 33, 4, -51, 6, 7, -8, 99, 10, -111, 12};
  const QuantParams q = q8t::qp(0.5f, 3);
  for (int threads : {1, 2}) {
    if (cpu_f32() && kernel_registered(kF32Kernel)) {
      OpResult r = test::run_op(OpId::Resize, a, {TensorData::f32(xs, xf)}, 1, "", threads);
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      EXPECT_EQ(r.kernel_name, kF32Kernel);
      const std::vector<float> y = r.outputs[0].as<float>();
      ASSERT_EQ(y.size(), want.size());
      for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], xf[want[i]]) << "float element " << i;
    }
    if (cpu_i8() && kernel_registered(kI8Kernel)) {
      OpResult r = test::run_op(OpId::Resize, a, {q8t::q8(xs, xq, q)}, 1, "", threads, {q});
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      EXPECT_EQ(r.kernel_name, kI8Kernel);
      const std::vector<int8_t> y = r.outputs[0].as<int8_t>();
      ASSERT_EQ(y.size(), want.size());
      for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], xq[want[i]]) << "int8 element " << i;
    }
  }
}

}  // namespace
}  // namespace orknn
