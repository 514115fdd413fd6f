// runtime/layouts: NCHW <-> NC1HWC2 / NHWC against the vendor guide's worked examples (§3.1.2) and
// round trips for several batches, channel counts, strides, element sizes and every C2 of the
// guide's Table 3-1 (testutil/vendor_c2.h), whose platforms are exactly the runtime's.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "runtime/layouts.h"
#include "runtime/platform.h"
#include "testutil/vendor_c2.h"

namespace {

using orknn::Nc1hwc2Geometry;

// Value of NCHW element (n, c, h, w): distinct and non-zero for every element we use.
int8_t val(int64_t n, int64_t c, int64_t h, int64_t w) { return static_cast<int8_t>(1 + n * 53 + c * 11 + h * 3 + w); }

TEST(Layouts, Rk3568Int8Feature13x4x4IsTwoBlocksOfEight) {
  const orknn::PlatformInfo* p = orknn::find_platform("RK3568");
  ASSERT_NE(p, nullptr);
  Nc1hwc2Geometry g;
  g.n = 1; g.c = 13; g.h = 4; g.w = 4; g.c2 = p->c2_int8;
  EXPECT_EQ(g.c2, 8);
  EXPECT_EQ(g.c1(), 2);  // (1, 13, 4, 4) -> (1, 2, 4, 4, 8)
  EXPECT_EQ(g.num_elements(), 1 * 2 * 4 * 4 * 8);
}

// The guide's (1, 13, 2, 2) example on RK3568: NC1HWC2 (1, 2, 2, 2, 8). Memory is block 0 (channels
// 0..7) for pixels 0..3, then block 1 whose pixels hold channels 8..12 and three padding zeros.
TEST(Layouts, Rk3568Int8Feature13x2x2MatchesTheGuideLayout) {
  Nc1hwc2Geometry g;
  g.n = 1; g.c = 13; g.h = 2; g.w = 2; g.c2 = 8;
  std::vector<int8_t> nchw(13 * 4);
  for (int c = 0; c < 13; ++c)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 2; ++w) nchw[c * 4 + h * 2 + w] = val(0, c, h, w);
  // Written out position by position: pixel p = h*2+w, block b -> 8 slots.
  std::vector<int8_t> want;
  for (int b = 0; b < 2; ++b)
    for (int p = 0; p < 4; ++p)
      for (int k = 0; k < 8; ++k) {
        int c = b * 8 + k;
        want.push_back(c < 13 ? val(0, c, p / 2, p % 2) : 0);
      }
  ASSERT_EQ(want.size(), 64u);
  std::vector<int8_t> native(64, 99);
  ASSERT_TRUE(orknn::nchw_to_nc1hwc2(nchw.data(), native.data(), g, 1));
  EXPECT_EQ(native, want);
  // Positions 32..63 (block 1): only the first 5 of each 8 are data.
  for (int p = 0; p < 4; ++p)
    for (int k = 5; k < 8; ++k) EXPECT_EQ(native[32 + p * 8 + k], 0);

  std::vector<int8_t> back(13 * 4);
  ASSERT_TRUE(orknn::nc1hwc2_to_nchw(native.data(), back.data(), g, 1));
  EXPECT_EQ(back, nchw);
  // NHWC (1, 2, 2, 13): pixel-major, channels contiguous, no padding.
  std::vector<int8_t> nhwc(13 * 4), want_nhwc;
  for (int p = 0; p < 4; ++p)
    for (int c = 0; c < 13; ++c) want_nhwc.push_back(val(0, c, p / 2, p % 2));
  ASSERT_TRUE(orknn::nc1hwc2_to_nhwc(native.data(), nhwc.data(), g, 1));
  EXPECT_EQ(nhwc, want_nhwc);
}

TEST(Layouts, RejectsInvalidGeometry) {
  Nc1hwc2Geometry g;
  g.n = 1; g.c = 3; g.h = 2; g.w = 4; g.c2 = 0;  // a platform without a native layout for the dtype
  int8_t a[64] = {}, b[64] = {};
  EXPECT_FALSE(orknn::nchw_to_nc1hwc2(a, b, g, 1));
  g.c2 = 8;
  g.w_stride = 3;  // smaller than W
  EXPECT_FALSE(orknn::nc1hwc2_to_nchw(a, b, g, 1));
  g.w_stride = 0;
  EXPECT_FALSE(orknn::nc1hwc2_to_nhwc(a, b, g, 0));
}

// Round trips with an independent naive index formula for every platform, dtype, N = 1..3, several C
// and a padded row stride.
template <typename T>
void round_trip(int64_t N, int64_t C, int64_t H, int64_t W, int64_t c2, int64_t ws) {
  Nc1hwc2Geometry g;
  g.n = N; g.c = C; g.h = H; g.w = W; g.c2 = c2; g.w_stride = ws;
  const int64_t c1 = (C + c2 - 1) / c2, row = ws ? ws : W;
  std::vector<T> nchw(static_cast<size_t>(N * C * H * W));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          nchw[static_cast<size_t>(((n * C + c) * H + h) * W + w)] = static_cast<T>(1000 + n * 200 + c * 13 + h * 5 + w);
  std::vector<T> native(static_cast<size_t>(N * c1 * H * row * c2), static_cast<T>(7));
  ASSERT_EQ(static_cast<int64_t>(native.size()), g.num_elements());
  ASSERT_TRUE(orknn::nchw_to_nc1hwc2(nchw.data(), native.data(), g, sizeof(T)));
  // Naive: walk the native buffer in order and decode each position.
  size_t pos = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t b = 0; b < c1; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < row; ++w)
          for (int64_t k = 0; k < c2; ++k, ++pos) {
            const int64_t c = b * c2 + k;
            const T want = (c < C && w < W) ? nchw[static_cast<size_t>(((n * C + c) * H + h) * W + w)] : T(0);
            ASSERT_EQ(native[pos], want) << "N=" << N << " C=" << C << " c2=" << c2 << " pos " << pos;
          }
  std::vector<T> back(nchw.size());
  ASSERT_TRUE(orknn::nc1hwc2_to_nchw(native.data(), back.data(), g, sizeof(T)));
  EXPECT_EQ(back, nchw);
  std::vector<T> nhwc(nchw.size()), nhwc2(nchw.size()), back2(nchw.size());
  ASSERT_TRUE(orknn::nc1hwc2_to_nhwc(native.data(), nhwc.data(), g, sizeof(T)));
  orknn::nchw_to_nhwc(nchw.data(), nhwc2.data(), N, C, H, W, sizeof(T));
  EXPECT_EQ(nhwc, nhwc2);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        for (int64_t c = 0; c < C; ++c)
          ASSERT_EQ(nhwc[static_cast<size_t>(((n * H + h) * W + w) * C + c)],
                    nchw[static_cast<size_t>(((n * C + c) * H + h) * W + w)]);
  orknn::nhwc_to_nchw(nhwc.data(), back2.data(), N, C, H, W, sizeof(T));
  EXPECT_EQ(back2, nchw);
}

TEST(Layouts, RoundTripsForEveryPlatformBatchAndChannelCount) {
  for (const testutil::VendorC2& row : testutil::kVendorC2) {
    SCOPED_TRACE(row.platform);
    for (int64_t N = 1; N <= 3; ++N)
      for (int64_t C : {1, 3, 4, 8, 13, 16, 17, 33})
        for (int64_t ws : {0, 7}) {
          if (row.int8) round_trip<int8_t>(N, C, 3, 5, row.int8, ws);
          if (row.fp16) round_trip<uint16_t>(N, C, 3, 5, row.fp16, ws);
        }
  }
}

// The tests that check C2 values iterate the guide's table (api/zero_copy_test.cc asserts each one
// through RKNN_QUERY_NATIVE_OUTPUT_ATTR): a platform the runtime knows but the table lacks, or the
// reverse, would go unchecked.
TEST(Layouts, RuntimePlatformsAreTheGuidesTable) {
  std::set<std::string> table;
  for (const testutil::VendorC2& row : testutil::kVendorC2) table.insert(row.platform);
  const std::vector<std::string> names = orknn::platform_names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), table);
  EXPECT_EQ(names.size(), table.size()) << "a platform is listed twice in src/runtime/platform.cc";
}

}  // namespace
