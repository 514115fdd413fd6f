// The calibration images' resizer (converter/quant/image_resize.h): hand-computed tent weights,
// properties over many sizes (the stb resizer it replaced aborted on 500x333 -> 224x224), and odd
// images through the calibration list (1xN, RGBA, odd sizes).
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "converter/quant/dataset.h"
#include "converter/quant/image_resize.h"
#include "testutil/status_assert.h"

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

TEST(ImageResize, OddImagesThroughTheCalibrationList) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("orknn_resize_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Graph g;
  GraphInput gi;
  gi.tensor = g.add_tensor("image", {1, 3, 224, 224}, DType::kF32);
  g.inputs.push_back(gi);
  std::mt19937 rng(3);
  struct Case { int w, h, comp; };
  for (const Case& c : {Case{500, 333, 3}, Case{400, 300, 3}, Case{641, 479, 4}, Case{1, 97, 3}, Case{97, 1, 1}}) {
    std::vector<uint8_t> px(static_cast<size_t>(c.w) * c.h * c.comp);
    for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((i * 37 + rng() % 16) & 0xff);
    const std::string file = (dir / (std::to_string(c.w) + "x" + std::to_string(c.h) + ".png")).string();
    ASSERT_TRUE(stbi_write_png(file.c_str(), c.w, c.h, c.comp, px.data(), c.w * c.comp));
    std::vector<float> v;
    ASSERT_OK(load_calibration_file(file, g, 0, &v));
    ASSERT_EQ(v.size(), 3u * 224 * 224);
    for (float x : v) ASSERT_TRUE(x >= 0.f && x <= 255.f) << file;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orknn
