// The x86 bilinear Resize kernel (src/kernels/x86/resize_linear_f32.cc) against the reference
// kernel, bit for bit (NaN as any NaN): every coordinate transformation it takes, integer and
// non-integer upscales, downscales within and beyond its 32-float permute window, sizes (exact
// out / in ratios), H-only and W-only resizes, 1-pixel inputs and outputs, widths around the 8- and
// 16-lane vectors, batch and channel counts that are not multiples of 16, ranks 2 to 4, infinities,
// NaN and -0 (the terms of absent taps must be left out), 1 and 2 threads, on the AVX-512 and the
// AVX2 loops, NCHW and nChw16c; then the nodes it must leave to the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
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

constexpr const char* kKernel = "x86_resize_linear_f32";

#define REQUIRE_KERNEL()                                                                   \
  if (!test::kernel_registered(OpId::Resize, kKernel)) GTEST_SKIP() << kKernel << " not built"; \
  if (!ORKNN_X86_HAS("avx2")) GTEST_SKIP() << "CPU without AVX2"

// The kernel's loops: AVX-512 where the CPU has it, and AVX2 (on AVX-512 CPUs by disabling the
// AVX-512 loops by name).
struct Isa {
  const char* name;
  const char* disable;  // OPENRKNN_DISABLE_KERNELS while it runs
};
std::vector<Isa> isas() {
  std::vector<Isa> v;
  if (ORKNN_X86_HAS("avx512f")) v.push_back({"avx512", ""});
  v.push_back({"avx2", "x86_resize_linear_avx512"});
  return v;
}

// Sets OPENRKNN_DISABLE_KERNELS for its lifetime (kernels read it when they are planned).
class DisableScope {
 public:
  explicit DisableScope(const char* names) {
    if (const char* old = std::getenv("OPENRKNN_DISABLE_KERNELS")) old_ = old, had_ = true;
    setenv("OPENRKNN_DISABLE_KERNELS", names, 1);
  }
  ~DisableScope() {
    if (had_) setenv("OPENRKNN_DISABLE_KERNELS", old_.c_str(), 1);
    else unsetenv("OPENRKNN_DISABLE_KERNELS");
  }

 private:
  std::string old_;
  bool had_ = false;
};

struct Case {
  Shape x;
  std::vector<float> scales;  // one per axis; empty: `sizes`
  std::vector<int64_t> sizes;
  std::string ctm = "half_pixel";
  std::string label() const {
    std::string s = "x=[";
    for (size_t i = 0; i < x.size(); ++i) s += (i ? "," : "") + std::to_string(x[i]);
    s += scales.empty() ? "] sizes=[" : "] scales=[";
    for (size_t i = 0; i < x.size(); ++i) {
      char b[32];
      std::snprintf(b, sizeof(b), "%s%g", i ? "," : "", scales.empty() ? double(sizes[i]) : double(scales[i]));
      s += b;
    }
    return s + "] " + ctm;
  }
};

Attrs case_attrs(const Case& c) {
  Attrs a;
  a.set_string("mode", "linear");
  a.set_string("coordinate_transformation_mode", c.ctm);
  return a;
}

std::vector<TensorData> case_inputs(const Case& c, TensorData x) {
  std::vector<TensorData> in = {std::move(x), TensorData::none()};
  const int64_t rank = static_cast<int64_t>(c.x.size());
  if (!c.scales.empty()) {
    in.push_back(TensorData::f32({rank}, c.scales, true));
  } else {
    in.push_back(TensorData::none());
    in.push_back(TensorData::i64({rank}, c.sizes));
  }
  return in;
}

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;  // which NaN payload survives is the CPU's choice
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

void expect_same(const OpResult& got, const OpResult& want, const std::string& what) {
  ASSERT_TRUE(got.status.ok()) << what << ": " << got.status.message();
  ASSERT_EQ(got.outputs[0].shape, want.outputs[0].shape) << what;
  const std::vector<float> g = got.outputs[0].as<float>(), w = want.outputs[0].as<float>();
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < w.size(); ++i)
    if (!same_bits(g[i], w[i]) && bad++ == 0) first = i;
  EXPECT_EQ(bad, 0u) << what << ": first difference at " << first << ": " << g[first] << " vs reference " << w[first];
}

// tf_half_pixel_for_nn maps coordinate o of an axis that is not resized to o + 0.5: the reference
// blends neighbouring channels (or images), which the kernel leaves to it.
bool kernel_takes(const Case& c) {
  if (c.ctm != "tf_half_pixel_for_nn") return true;
  for (size_t d = 0; d + 2 < c.x.size(); ++d)
    if (c.x[d] > 1) return false;
  return true;
}

// Reference vs the best kernel (this one where it takes the node) on each ISA and thread count;
// for 4-D inputs also on the runtime's blocked layout, which takes nChw16c when C is a multiple of
// 16 (AVX-512 only).
void check(const Case& c, uint32_t seed, bool specials = false) {
  SCOPED_TRACE(c.label());
  int64_t n = 1;
  for (int64_t d : c.x) n *= d;
  std::vector<float> xv = test::random_floats(static_cast<size_t>(n), seed, -3.f, 3.f);
  if (specials) {
    const float inf = std::numeric_limits<float>::infinity();
    const float values[] = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, -0.f, 0.f};
    for (size_t i = 0; i < xv.size(); i += 7) xv[i] = values[(i / 7) % 5];
  }
  const std::vector<TensorData> in = case_inputs(c, TensorData::f32(c.x, xv));
  const Attrs attrs = case_attrs(c);
  const OpResult ref = test::run_op(OpId::Resize, attrs, in, 1, "ref");
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  for (const Isa& isa : isas()) {
    DisableScope scope(isa.disable);
    for (int threads : {1, 2}) {
      const std::string what = std::string(isa.name) + ", " + std::to_string(threads) + " threads";
      const OpResult fast = test::run_op(OpId::Resize, attrs, in, 1, "", threads);
      EXPECT_EQ(fast.kernel_name, kernel_takes(c) ? kKernel : "ref") << what;
      expect_same(fast, ref, what);
      if (c.x.size() != 4 || !kernel_takes(c)) continue;
      int blocked = -1;
      const OpResult b = test::run_op_blocked(OpId::Resize, attrs, in, kKernel, threads, &blocked);
      const bool avx512 = std::string(isa.name) == "avx512";
      EXPECT_EQ(blocked, avx512 && c.x[1] % 16 == 0 ? 2 : 0) << what;
      expect_same(b, ref, what + ", blocked");
    }
  }
}

const char* const kCtms[] = {"half_pixel",    "pytorch_half_pixel",   "align_corners",
                             "asymmetric",    "half_pixel_symmetric", "tf_half_pixel_for_nn"};

Case scaled(Shape x, float sh, float sw, const char* ctm = "half_pixel") {
  Case c;
  c.x = x;
  c.scales.assign(x.size(), 1.f);
  c.scales[x.size() - 2] = sh;
  c.scales[x.size() - 1] = sw;
  c.ctm = ctm;
  return c;
}

Case sized(Shape x, int64_t oh, int64_t ow, const char* ctm = "half_pixel") {
  Case c;
  c.x = x;
  c.sizes = x;
  c.sizes[x.size() - 2] = oh;
  c.sizes[x.size() - 1] = ow;
  c.ctm = ctm;
  return c;
}

// Geometries every transformation is run on.
std::vector<Case> geometries(const char* ctm) {
  return {scaled({1, 3, 4, 6}, 2.f, 2.f, ctm),       scaled({2, 5, 7, 9}, 4.f, 8.f, ctm),
          scaled({1, 2, 5, 7}, 1.5f, 2.5f, ctm),     scaled({1, 3, 9, 13}, 0.5f, 0.75f, ctm),
          scaled({1, 2, 20, 70}, 0.3f, 0.2f, ctm),   sized({1, 2, 5, 7}, 9, 16, ctm),
          sized({1, 3, 14, 14}, 224, 224, ctm),      sized({1, 2, 17, 40}, 6, 11, ctm),
          sized({1, 16, 6, 5}, 13, 21, ctm),         sized({1, 1, 1, 1}, 3, 5, ctm)};
}

TEST(ResizeLinearX86, EveryTransformationMatchesReference) {
  REQUIRE_KERNEL();
  uint32_t seed = 1;
  for (const char* ctm : kCtms)
    for (const Case& c : geometries(ctm)) check(c, seed++);
}

// Widths around the vector sizes (8 AVX2 lanes, 16 AVX-512 lanes, the 32-float window), both ways.
TEST(ResizeLinearX86, WidthsAroundVectorSizes) {
  REQUIRE_KERNEL();
  uint32_t seed = 100;
  for (int64_t w : {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47}) {
    check(scaled({1, 2, 3, w}, 2.f, 2.f), seed++);
    check(scaled({1, 2, 3, w}, 1.f, 3.f, "align_corners"), seed++);
    check(sized({1, 2, 3, w}, 2, (w + 1) / 2, "asymmetric"), seed++);
    check(sized({1, 1, 2, w}, 5, w * 3 + 1, "pytorch_half_pixel"), seed++);
  }
}

TEST(ResizeLinearX86, AxesRanksAndOddShapes) {
  REQUIRE_KERNEL();
  uint32_t seed = 200;
  check(scaled({1, 4, 6, 9}, 2.f, 1.f), seed++);          // H only
  check(scaled({1, 4, 6, 9}, 1.f, 2.f), seed++);          // W only
  check(scaled({1, 4, 6, 9}, 1.f, 1.f), seed++);          // not resized at all
  check(sized({2, 19, 7, 5}, 1, 1), seed++);              // to one pixel
  check(sized({1, 4, 6, 1}, 12, 1, "align_corners"), seed++);  // one column
  check(sized({1, 4, 1, 6}, 1, 12, "align_corners"), seed++);  // one row
  check(sized({1, 256, 1, 1}, 14, 14), seed++);           // deeplabv3's ASPP pooling branch
  check(sized({1, 32, 14, 14}, 28, 28), seed++);          // lraspp's 1/16 -> 1/8 (blocked there)
  check(sized({2, 48, 5, 3}, 11, 7, "align_corners"), seed++);
  check(sized({3, 5, 11}, 7, 23), seed++);                // rank 3
  check(scaled({9, 13}, 2.5f, 0.4f, "asymmetric"), seed++);  // rank 2
  check(scaled({2, 3, 4, 5}, 1.7f, 3.3f, "half_pixel_symmetric"), seed++);
}

// Non-finite values and signed zeros: a term is only added where the reference has a tap.
TEST(ResizeLinearX86, NonFiniteValuesAndSignedZeros) {
  REQUIRE_KERNEL();
  uint32_t seed = 300;
  for (const char* ctm : kCtms) {
    check(scaled({1, 3, 5, 23}, 2.f, 2.f, ctm), seed++, true);
    check(sized({1, 16, 9, 12}, 4, 5, ctm), seed++, true);
    check(sized({1, 2, 6, 40}, 13, 9, ctm), seed++, true);  // beyond the permute window: gathers
  }
}

// Large enough that two threads split the rows inside planes (and blocked rows inside blocks).
TEST(ResizeLinearX86, ThreadedSizes) {
  REQUIRE_KERNEL();
  check(sized({1, 21, 28, 28}, 224, 224), 400);
  check(sized({1, 32, 37, 41}, 75, 83), 401);
  check(scaled({2, 7, 61, 97}, 0.45f, 1.7f, "align_corners"), 402);
}

// Nodes the kernel leaves to the reference (which the best-kernel run still matches).
TEST(ResizeLinearX86, DeclinedNodesFallBack) {
  REQUIRE_KERNEL();
  auto best = [](const Attrs& a, const std::vector<TensorData>& in) {
    const OpResult r = test::run_op(OpId::Resize, a, in, 1, "");
    EXPECT_TRUE(r.status.ok()) << r.status.message();
    return r.kernel_name;
  };
  const TensorData x = TensorData::f32({1, 2, 3, 4}, test::random_floats(24, 5));
  Case c = scaled({1, 2, 3, 4}, 1.f, 1.f);
  c.scales = {1.f, 2.f, 2.f, 2.f};  // C resized
  EXPECT_EQ(best(case_attrs(c), case_inputs(c, x)), "ref");
  c.scales = {2.f, 1.f, 2.f, 2.f};  // N resized
  EXPECT_EQ(best(case_attrs(c), case_inputs(c, x)), "ref");
  c = scaled({1, 2, 3, 4}, 2.f, 2.f);
  Attrs cubic = case_attrs(c);
  cubic.set_string("mode", "cubic");
  EXPECT_EQ(best(cubic, case_inputs(c, x)), "ref");
  Attrs crop = case_attrs(c);
  crop.set_string("coordinate_transformation_mode", "tf_crop_and_resize");
  EXPECT_EQ(best(crop, {x, TensorData::f32({8}, {0, 0, 0.1f, 0.2f, 1, 1, 0.9f, 1.f}, true),
                        TensorData::f32({4}, {1, 1, 2, 2}, true)}),
            "ref");
  const TensorData x1 = TensorData::f32({5}, test::random_floats(5, 6));  // rank 1
  EXPECT_EQ(best(case_attrs(c), {x1, TensorData::none(), TensorData::f32({1}, {2.f}, true)}), "ref");
}

}  // namespace
}  // namespace orknn
