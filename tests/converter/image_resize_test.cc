// The calibration images' resizer (converter/quant/image_resize.h): hand-computed tent weights,
// properties over many sizes (the stb resizer it replaced aborted on 500x333 -> 224x224), and
// structured images of odd sizes against the definition evaluated directly. Images of odd sizes
// and formats through the calibration list: dataset_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "converter/quant/image_resize.h"
#include "converter/resize_reference.h"

namespace orknn {
namespace {

TEST(ImageResize, EnlargingIsBilinearWithClampedEdges) {
  // 2 -> 4 pixels: centres at -0.25, 0.25, 0.75, 1.25 of the source: 0, 0.75*0+0.25*200, ...
  const uint8_t src[2] = {0, 200};
  EXPECT_EQ(resize_triangle_u8(src, 2, 1, 1, 4, 1), (std::vector<uint8_t>{0, 50, 150, 200}));
  EXPECT_EQ(resize_triangle_u8(src, 1, 2, 1, 1, 4), (std::vector<uint8_t>{0, 50, 150, 200}));  // vertically
}

TEST(ImageResize, ShrinkingAveragesUnderTheWidenedTent) {
  // 4 -> 2: centre 0.5, tent half-width 2: weights 1/8, 3/8, 3/8, 1/8 on pixels -1 (clamped to 0), 0, 1, 2.
  const uint8_t src[4] = {0, 80, 160, 240};
  EXPECT_EQ(resize_triangle_u8(src, 4, 1, 1, 2, 1), (std::vector<uint8_t>{50, 190}));
  // Interleaved channels are resized independently: channel 0 is (0, 0, 80, 240), channel 1
  // (240, 160, 80, 0): 0.5*p0 + 0.375*p1 + 0.125*p2 and 0.125*p1 + 0.375*p2 + 0.5*p3.
  const uint8_t rgb[8] = {0, 240, 0, 160, 80, 80, 240, 0};
  EXPECT_EQ(resize_triangle_u8(rgb, 4, 1, 2, 2, 1), (std::vector<uint8_t>{10, 190, 150, 50}));
  // To one pixel: centre 1.5, half-width 4: weights (4 - |i - 1.5|) / 16 for i = -2..5, clamped:
  // pixel 0 gets (0.5+1.5+2.5)/16, pixels 1 and 2 get 3.5/16 each, pixel 3 gets 4.5/16:
  // (4.5*0 + 3.5*80 + 3.5*160 + 4.5*240) / 16 = 120.
  EXPECT_EQ(resize_triangle_u8(src, 4, 1, 1, 1, 1), (std::vector<uint8_t>{120}));
}

TEST(ImageResize, EverySizePairGivesBoundedValuesAndKeepsConstants) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> size(1, 700), byte(0, 255);
  // The sizes the stb resizer aborted on, the degenerate ones, then random pairs.
  std::vector<std::array<int, 4>> cases = {{500, 333, 224, 224}, {400, 300, 224, 224}, {641, 479, 224, 224},
                                           {1, 224, 224, 224},   {224, 1, 224, 224},   {1, 1, 640, 640},
                                           {700, 700, 1, 1},     {3, 1000, 7, 2}};
  for (int i = 0; i < 60; ++i) cases.push_back({size(rng), size(rng), size(rng) / 3 + 1, size(rng) / 3 + 1});
  for (const auto& [w, h, ow, oh] : cases) {
    std::vector<uint8_t> img(static_cast<size_t>(w) * h * 3);
    for (auto& v : img) v = static_cast<uint8_t>(byte(rng));
    const auto [lo, hi] = std::minmax_element(img.begin(), img.end());
    const std::vector<uint8_t> out = resize_triangle_u8(img.data(), w, h, 3, ow, oh);
    ASSERT_EQ(out.size(), static_cast<size_t>(ow) * oh * 3) << w << "x" << h << " -> " << ow << "x" << oh;
    for (uint8_t v : out) ASSERT_TRUE(v >= *lo && v <= *hi) << w << "x" << h << " -> " << ow << "x" << oh;
    std::vector<uint8_t> flat(img.size(), 93);
    for (uint8_t v : resize_triangle_u8(flat.data(), w, h, 3, ow, oh)) ASSERT_EQ(v, 93);
  }
}

// Structured images (ramps, a checkerboard) of odd sizes and aspect ratios, 1, 3 and 4 channels,
// against the definition evaluated directly (resize_reference.h): each output is the rounded
// reference value. Allowed: 0.5 plus float rounding (the resizer accumulates in float; measured:
// 0.500008 at most over these cases), so only a value whose reference lies within 1e-3 of a .5
// boundary may round either way; a shift of the pixel centres by 0.05 pixel already fails.
TEST(ImageResize, StructuredImagesMatchTheDefinition) {
  struct Case { int w, h, ow, oh; };
  const Case cases[] = {{641, 479, 224, 224}, {479, 641, 224, 160}, {1, 97, 224, 224}, {97, 1, 224, 224},
                        {1000, 3, 7, 2},      {1, 1, 5, 3},         {33, 17, 33, 17},   {5, 4, 13, 11},
                        {224, 224, 223, 225}};
  double worst = 0;
  for (const Case& c : cases)
    for (int channels : {1, 3, 4}) {
      SCOPED_TRACE(std::to_string(c.w) + "x" + std::to_string(c.h) + " -> " + std::to_string(c.ow) + "x" +
                   std::to_string(c.oh) + ", " + std::to_string(channels) + " channels");
      const std::vector<uint8_t> img = resize_test::structured_image(c.w, c.h, channels);
      const std::vector<uint8_t> got = resize_triangle_u8(img.data(), c.w, c.h, channels, c.ow, c.oh);
      const std::vector<double> want = resize_test::tent_resize(img, c.w, c.h, channels, c.ow, c.oh);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, std::fabs(got[i] - want[i]));
        ASSERT_LE(std::fabs(got[i] - want[i]), 0.5 + 1e-3) << "value " << i << ": reference " << want[i];
      }
    }
  std::printf("[  metrics ] resize vs the direct definition: largest difference %.6f\n", worst);
}

}  // namespace
}  // namespace orknn
