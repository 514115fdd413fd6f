// The calibration list (converter/quant/dataset.h): images and .npy files written here, the
// runtime's normalisation (x - mean) / std computed here, layouts, resizing (structured images of
// odd sizes and formats against the resize's definition, resize_reference.h) and every error path.
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "converter/quant/dataset.h"
#include "converter/resize_reference.h"
#include "testutil/status_assert.h"

namespace orknn {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class Dataset : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/orknn_dataset_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) {
      const std::string cmd = "rm -rf '" + dir_ + "'";
      (void)!system(cmd.c_str());
    }
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  void write_text(const std::string& name, const std::string& text) {
    std::ofstream f(path(name), std::ios::binary);
    f << text;
  }
  // A .npy file, format version 1.0, written byte by byte.
  void write_npy(const std::string& name, const std::string& descr, const std::string& shape_tuple, const void* data,
                 size_t nbytes, const std::string& fortran = "False") {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape_tuple + ", }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string bytes = std::string("\x93NUMPY", 6) + '\x01' + '\x00';
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    bytes.append(static_cast<const char*>(data), nbytes);
    write_text(name, bytes);
  }

  // Graph with one input [1, C, H, W] (float32) and the given mean/std.
  static Graph image_graph(int64_t c, int64_t h, int64_t w, std::vector<float> mean, std::vector<float> sd) {
    Graph g;
    GraphInput gi;
    gi.tensor = g.add_tensor("image", {1, c, h, w}, DType::kF32);
    gi.mean = std::move(mean);
    gi.std = std::move(sd);
    g.inputs.push_back(gi);
    return g;
  }

  // A PNG of 16-bit samples (stb_image_write writes 8-bit ones only), byte by byte after the PNG
  // specification: the signature, IHDR, one IDAT holding a zlib stream of stored (uncompressed)
  // deflate blocks, IEND. Rows are unfiltered, samples big-endian; gray (1) or RGB (3) channels.
  void write_png16(const std::string& name, int w, int h, int channels, const std::vector<uint16_t>& samples) {
    std::string raw;  // the scanlines, each after its filter type byte 0
    for (int y = 0; y < h; ++y) {
      raw += '\0';
      for (int i = 0; i < w * channels; ++i) {
        const uint16_t s = samples[static_cast<size_t>(y) * w * channels + i];
        raw += static_cast<char>(s >> 8);
        raw += static_cast<char>(s & 0xff);
      }
    }
    auto be32 = [](uint32_t v) {
      return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
    };
    std::string zlib = "\x78\x01";  // deflate, 32 KiB window, no dictionary; (0x78 << 8 | 0x01) % 31 == 0
    for (size_t at = 0; at == 0 || at < raw.size(); at += 65535) {
      const size_t n = std::min<size_t>(65535, raw.size() - at);
      zlib += static_cast<char>(at + n == raw.size() ? 1 : 0);  // BFINAL, BTYPE 00 (stored)
      for (const size_t len : {n, n ^ 0xffff}) {
        zlib += static_cast<char>(len & 0xff);
        zlib += static_cast<char>((len >> 8) & 0xff);
      }
      zlib.append(raw, at, n);
    }
    uint32_t a = 1, b = 0;  // Adler-32 of the uncompressed data
    for (unsigned char ch : raw) {
      a = (a + ch) % 65521;
      b = (b + a) % 65521;
    }
    zlib += be32(b << 16 | a);
    auto chunk = [&](const std::string& type, const std::string& data) {
      uint32_t crc = 0xffffffffu;  // CRC-32 (reflected polynomial 0xEDB88320) of type and data
      for (unsigned char ch : type + data) {
        crc ^= ch;
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
      }
      return be32(static_cast<uint32_t>(data.size())) + type + data + be32(~crc);
    };
    const std::string ihdr = be32(static_cast<uint32_t>(w)) + be32(static_cast<uint32_t>(h)) +
                             std::string{16, static_cast<char>(channels == 1 ? 0 : 2), 0, 0, 0};  // depth, colour type
    write_text(name, std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", zlib) + chunk("IEND", ""));
  }

  std::string dir_;
};

// RGB test pattern, HWC: pixel (y, x) channel c = 10 * c + 7 * y + 3 * x (fits in uint8 for small sizes).
std::vector<uint8_t> pattern(int h, int w, int c) {
  std::vector<uint8_t> p(static_cast<size_t>(h * w * c));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < c; ++k) p[static_cast<size_t>((y * w + x) * c + k)] = static_cast<uint8_t>(10 * k + 7 * y + 3 * x);
  return p;
}

// What the runtime makes of that pattern: NCHW, (u - mean[c]) / std[c].
std::vector<float> expected_nchw(const std::vector<uint8_t>& hwc, int h, int w, int c, const std::vector<float>& mean,
                                 const std::vector<float>& sd) {
  std::vector<float> e(static_cast<size_t>(h * w * c));
  for (int k = 0; k < c; ++k)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const float m = mean.empty() ? 0.f : mean[mean.size() == 1 ? 0 : static_cast<size_t>(k)];
        const float s = sd.empty() ? 1.f : sd[sd.size() == 1 ? 0 : static_cast<size_t>(k)];
        e[static_cast<size_t>((k * h + y) * w + x)] = (static_cast<float>(hwc[static_cast<size_t>((y * w + x) * c + k)]) - m) / s;
      }
  return e;
}

TEST_F(Dataset, PngAndBmpAreNormalisedLikeTheRuntime) {
  const int h = 4, w = 6;
  const std::vector<float> mean = {10.f, 20.f, 30.f}, sd = {2.f, 4.f, 5.f};
  Graph g = image_graph(3, h, w, mean, sd);
  const std::vector<uint8_t> px = pattern(h, w, 3);
  ASSERT_TRUE(stbi_write_png(path("a.png").c_str(), w, h, 3, px.data(), w * 3));
  ASSERT_TRUE(stbi_write_bmp(path("b.bmp").c_str(), w, h, 3, px.data()));
  write_text("list.txt", "a.png\nb.bmp\n");
  std::vector<CalibrationSample> samples;
  ASSERT_OK(load_calibration_set(path("list.txt"), g, &samples));
  ASSERT_EQ(samples.size(), 2u);
  const std::vector<float> e = expected_nchw(px, h, w, 3, mean, sd);
  for (const auto& s : samples) {
    ASSERT_EQ(s.inputs.size(), 1u);
    EXPECT_EQ(s.inputs[0], e);
  }
}

TEST_F(Dataset, OneMeanForAllChannelsAndNoMeanAtAll) {
  const int h = 3, w = 5;
  const std::vector<uint8_t> px = pattern(h, w, 3);
  ASSERT_TRUE(stbi_write_png(path("a.png").c_str(), w, h, 3, px.data(), w * 3));
  std::vector<float> v;
  ASSERT_OK(load_calibration_file(path("a.png"), image_graph(3, h, w, {127.5f}, {127.5f}), 0, &v));
  EXPECT_EQ(v, expected_nchw(px, h, w, 3, {127.5f}, {127.5f}));
  ASSERT_OK(load_calibration_file(path("a.png"), image_graph(3, h, w, {}, {}), 0, &v));
  EXPECT_EQ(v, expected_nchw(px, h, w, 3, {}, {}));
  EXPECT_EQ(v[1], 3.f);  // channel 0, y 0, x 1: raw value
}

TEST_F(Dataset, GrayInputGetsOneChannel) {
  const int h = 4, w = 4;
  // Gray pixels stored as RGB (r = g = b): the luminance stb computes is the same value.
  std::vector<uint8_t> rgb(static_cast<size_t>(h * w * 3)), gray(static_cast<size_t>(h * w));
  for (int i = 0; i < h * w; ++i) {
    gray[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 13);
    for (int k = 0; k < 3; ++k) rgb[static_cast<size_t>(i * 3 + k)] = gray[static_cast<size_t>(i)];
  }
  ASSERT_TRUE(stbi_write_png(path("g.png").c_str(), w, h, 3, rgb.data(), w * 3));
  std::vector<float> v;
  ASSERT_OK(load_calibration_file(path("g.png"), image_graph(1, h, w, {100.f}, {10.f}), 0, &v));
  EXPECT_EQ(v, expected_nchw(gray, h, w, 1, {100.f}, {10.f}));
}

// Image files of odd sizes, aspect ratios and formats, resized to inputs of other shapes (both
// ways, both axes) and normalised: each value is the definition of the resize evaluated directly
// (resize_reference.h) on the pixels as the file holds them, then (u - mean) / std. The file's
// pixels become the input's channels as a decoder's 8-bit RGB or gray view has them: alpha
// dropped, a gray file repeated into R, G and B, a 16-bit sample's high byte (each 16-bit sample
// here is v * 256 + 0x80: within 0.5 of v * 257, the exact 16-to-8-bit scaling, while the low
// byte alone is the same 0x80 everywhere). Allowed: the rounding of the resized 8-bit value (0.5
// plus float error, see image_resize_test.cc) divided by std.
TEST_F(Dataset, ImagesOfOddSizesAndFormatsAreResizedToTheInput) {
  struct Case {
    int w, h, file_channels, bits;  // the file
    int channels, height, width;    // the input [1, channels, height, width]
  };
  const Case cases[] = {
      {641, 479, 3, 8, 3, 224, 224},   // shrunk, a different factor per axis
      {641, 479, 4, 8, 3, 160, 224},   // RGBA
      {1, 97, 3, 8, 3, 224, 224},      // one column, enlarged sideways and lengthwise
      {97, 1, 1, 8, 3, 224, 96},       // one row, gray into three channels
      {333, 500, 1, 8, 1, 224, 224},   // gray
      {300, 201, 3, 16, 3, 224, 224},  // 16-bit RGB
      {5, 3, 1, 16, 1, 48, 64},        // 16-bit gray, enlarged
  };
  for (const Case& c : cases) {
    const std::string name = std::to_string(c.w) + "x" + std::to_string(c.h) + "_" + std::to_string(c.file_channels) +
                             "ch_" + std::to_string(c.bits) + "bit.png";
    SCOPED_TRACE(name + " -> " + std::to_string(c.channels) + "x" + std::to_string(c.height) + "x" + std::to_string(c.width));
    const std::vector<uint8_t> px = resize_test::structured_image(c.w, c.h, c.file_channels);
    if (c.bits == 16) {
      std::vector<uint16_t> wide(px.size());
      for (size_t i = 0; i < px.size(); ++i) wide[i] = static_cast<uint16_t>(px[i] * 256 + 0x80);
      write_png16(name, c.w, c.h, c.file_channels, wide);
    } else {
      ASSERT_TRUE(stbi_write_png(path(name).c_str(), c.w, c.h, c.file_channels, px.data(), c.w * c.file_channels));
    }
    // The file's pixels in the input's channels.
    std::vector<uint8_t> seen(static_cast<size_t>(c.w) * c.h * c.channels);
    for (size_t p = 0; p < static_cast<size_t>(c.w) * c.h; ++p)
      for (int k = 0; k < c.channels; ++k)
        seen[p * c.channels + k] = px[p * c.file_channels + (c.file_channels == 1 ? 0 : k)];
    const std::vector<double> resized = resize_test::tent_resize(seen, c.w, c.h, c.channels, c.width, c.height);
    const std::vector<float> mean = c.channels == 3 ? std::vector<float>{10.f, 20.f, 30.f} : std::vector<float>{100.f};
    const std::vector<float> sd = c.channels == 3 ? std::vector<float>{2.f, 4.f, 5.f} : std::vector<float>{10.f};
    std::vector<float> v;
    ASSERT_OK(load_calibration_file(path(name), image_graph(c.channels, c.height, c.width, mean, sd), 0, &v));
    ASSERT_EQ(v.size(), resized.size());
    for (int k = 0; k < c.channels; ++k)
      for (int y = 0; y < c.height; ++y)
        for (int x = 0; x < c.width; ++x) {
          const double want = (resized[(static_cast<size_t>(y) * c.width + x) * c.channels + k] - mean[k]) / sd[k];
          const float got = v[(static_cast<size_t>(k) * c.height + y) * c.width + x];
          ASSERT_NEAR(got, want, (0.5 + 1e-3) / sd[k]) << "channel " << k << ", y " << y << ", x " << x;
        }
  }
}

TEST_F(Dataset, NpyFloatIsUsedAsIsInEveryAcceptedLayout) {
  const int64_t c = 3, h = 2, w = 4;
  Graph g = image_graph(c, h, w, {10.f, 20.f, 30.f}, {2.f, 4.f, 5.f});  // not applied to float32 data
  std::vector<float> nchw(static_cast<size_t>(c * h * w));
  for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = 0.25f * static_cast<float>(i) - 3.f;
  std::vector<float> nhwc(nchw.size());
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) nhwc[static_cast<size_t>((y * w + x) * c + k)] = nchw[static_cast<size_t>((k * h + y) * w + x)];
  write_npy("nchw.npy", "<f4", "(1, 3, 2, 4)", nchw.data(), nchw.size() * 4);
  write_npy("chw.npy", "<f4", "(3, 2, 4)", nchw.data(), nchw.size() * 4);
  write_npy("nhwc.npy", "<f4", "(1, 2, 4, 3)", nhwc.data(), nhwc.size() * 4);
  write_npy("hwc.npy", "<f4", "(2, 4, 3)", nhwc.data(), nhwc.size() * 4);
  for (const char* f : {"nchw.npy", "chw.npy", "nhwc.npy", "hwc.npy"}) {
    std::vector<float> v;
    ASSERT_OK(load_calibration_file(path(f), g, 0, &v));
    EXPECT_EQ(v, nchw) << f;
  }
}

TEST_F(Dataset, NpyUint8IsNormalisedLikeAnImage) {
  const int h = 2, w = 3;
  const std::vector<float> mean = {1.f, 2.f, 3.f}, sd = {0.5f, 2.f, 4.f};
  Graph g = image_graph(3, h, w, mean, sd);
  const std::vector<uint8_t> px = pattern(h, w, 3);  // HWC
  write_npy("u8.npy", "|u1", "(1, 2, 3, 3)", px.data(), px.size());
  std::vector<float> v;
  ASSERT_OK(load_calibration_file(path("u8.npy"), g, 0, &v));
  EXPECT_EQ(v, expected_nchw(px, h, w, 3, mean, sd));
}

TEST_F(Dataset, TwoInputsPerLineRelativePathsCommentsAndCrlf) {
  Graph g = image_graph(3, 2, 2, {}, {});
  GraphInput second;
  second.tensor = g.add_tensor("features", {1, 5}, DType::kF32);
  g.inputs.push_back(second);
  const std::vector<uint8_t> px = pattern(2, 2, 3);
  ASSERT_EQ(mkdir(path("data").c_str(), 0755), 0);
  ASSERT_TRUE(stbi_write_png(path("data/img.png").c_str(), 2, 2, 3, px.data(), 6));
  const std::vector<float> f1 = {1.f, -2.f, 3.5f, 0.f, 7.f}, f2 = {-1.f, -1.f, -1.f, -1.f, 9.f};
  write_npy("data/f1.npy", "<f4", "(1, 5)", f1.data(), 20);
  write_npy("data/f2.npy", "<f4", "(5,)", f2.data(), 20);
  // The list sits in data/ and names its files relative to data/, wherever the process runs.
  write_text("data/list.txt", "# calibration set\r\n\r\nimg.png f1.npy\r\n   \r\n  img.png\t" + path("data/f2.npy") + "\r\n");
  std::vector<CalibrationSample> samples;
  ASSERT_OK(load_calibration_set(path("data/list.txt"), g, &samples));
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].inputs[0], expected_nchw(px, 2, 2, 3, {}, {}));
  EXPECT_EQ(samples[0].inputs[1], f1);
  EXPECT_EQ(samples[1].inputs[1], f2);

  // Wrong number of files on a line.
  write_text("data/bad.txt", "img.png f1.npy\nimg.png\n");
  Status st = load_calibration_set(path("data/bad.txt"), g, &samples);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(contains(st.message(), "line 2")) << st.message();
  EXPECT_TRUE(contains(st.message(), "1 file,")) << st.message();
  EXPECT_TRUE(contains(st.message(), "2 inputs")) << st.message();
  EXPECT_TRUE(contains(st.message(), "'features'")) << st.message();
}

TEST_F(Dataset, IntegerInputsTakeIntegerNpy) {
  Graph g;
  GraphInput gi;
  gi.tensor = g.add_tensor("ids", {1, 4}, DType::kI64);
  g.inputs.push_back(gi);
  const int64_t ids[4] = {101, 2054, 0, 102};
  write_npy("ids.npy", "<i8", "(1, 4)", ids, sizeof(ids));
  std::vector<float> v;
  ASSERT_OK(load_calibration_file(path("ids.npy"), g, 0, &v));
  EXPECT_EQ(v, std::vector<float>({101.f, 2054.f, 0.f, 102.f}));
}

TEST_F(Dataset, Errors) {
  Graph g = image_graph(3, 2, 2, {}, {});
  std::vector<CalibrationSample> samples;
  auto expect_error = [&](const std::string& list_text, const std::vector<std::string>& parts) {
    write_text("l.txt", list_text);
    Status st = load_calibration_set(path("l.txt"), g, &samples);
    ASSERT_FALSE(st.ok()) << list_text;
    for (const auto& p : parts) EXPECT_TRUE(contains(st.message(), p)) << "missing '" << p << "' in: " << st.message();
  };
  // Empty list.
  expect_error("", {"no samples"});
  expect_error("# only a comment\n\n", {"no samples"});
  // Missing file, named with its line.
  const std::vector<uint8_t> px = pattern(2, 2, 3);
  ASSERT_TRUE(stbi_write_png(path("ok.png").c_str(), 2, 2, 3, px.data(), 6));
  expect_error("ok.png\nmissing.jpg\n", {"line 2", "missing.jpg", "not found"});
  // Undecodable image.
  write_text("junk.jpg", "this is not a JPEG");
  expect_error("junk.jpg\n", {"line 1", "junk.jpg", "cannot decode"});
  // npy: wrong dtype, wrong shape, Fortran order, wrong data size, not an npy at all.
  const double d[12] = {};
  write_npy("f8.npy", "<f8", "(1, 3, 2, 2)", d, sizeof(d));
  expect_error("f8.npy\n", {"line 1", "f8.npy", "'<f8'", "'<f4'", "'|u1'"});
  const float f[12] = {};
  write_npy("shape.npy", "<f4", "(1, 2, 2, 4)", f, 4 * 12);  // wrong: neither NCHW nor NHWC
  expect_error("shape.npy\n", {"shape.npy", "[1,2,2,4]", "[1,3,2,2]", "[1,2,2,3]"});
  write_npy("fortran.npy", "<f4", "(1, 3, 2, 2)", f, 4 * 12, "True");
  expect_error("fortran.npy\n", {"fortran.npy", "Fortran"});
  write_npy("short.npy", "<f4", "(1, 3, 2, 2)", f, 4 * 11);
  expect_error("short.npy\n", {"short.npy", "44 bytes"});
  write_text("fake.npy", "not numpy at all");
  expect_error("fake.npy\n", {"fake.npy", "not a .npy"});
  // The list itself is missing.
  Status st = load_calibration_set(path("nope.txt"), g, &samples);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(contains(st.message(), "nope.txt")) << st.message();
  // An image for an input that is not an image.
  Graph flat;
  GraphInput gi;
  gi.tensor = flat.add_tensor("vec", {1, 12}, DType::kF32);
  flat.inputs.push_back(gi);
  std::vector<float> v;
  st = load_calibration_file(path("ok.png"), flat, 0, &v);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(contains(st.message(), "'vec'")) << st.message();
  EXPECT_TRUE(contains(st.message(), ".npy")) << st.message();
}

}  // namespace
}  // namespace orknn
