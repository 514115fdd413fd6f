// The dynamic-shape test network, built as ONNX in memory (shared by tests/api/dynamic_shape_test.cc
// and tests/converter/dynamic_shape_cli_test.cc), and its expected output computed by a naive loop.
//
//   x [1,2,H,W] (H, W dynamic) -> Conv 1x1 (2->2, bias) -> Resize nearest x2 (asymmetric, floor)
//     -> Reshape to [1, 2, 4*H*W], the target shape computed from Shape(resize_out) (so the folded
//        Reshape "shape" attribute differs per shape set) -> y
// All values are small multiples of 1/8, so every result is exact in fp16 and fp32.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "converter/onnx_builder.h"

namespace dyn_test {

constexpr float kConvW[2][2] = {{0.5f, -1.f}, {2.f, 0.25f}};
constexpr float kConvB[2] = {0.25f, -0.5f};

// structure_varies: adds x + ConstantOfShape(Shape(x), 1.0), whose folded constant has the
// input's shape, so that each shape set converts to a different constant (not a valid dynamic model).
inline std::string make_onnx(bool structure_varies = false) {
  orknn::test::OnnxBuilder b(13);
  b.input("x", {1, 2, -1, -1}, onnx::TensorProto::FLOAT, {"", "", "H", "W"});
  b.init_f32("w", {2, 2, 1, 1}, {kConvW[0][0], kConvW[0][1], kConvW[1][0], kConvW[1][1]});
  b.init_f32("b", {2}, {kConvB[0], kConvB[1]});
  std::string conv_in = "x";
  if (structure_varies) {
    b.node("Shape", {"x"}, {"x_shape"});
    auto* cos = b.node("ConstantOfShape", {"x_shape"}, {"ones"});
    orknn::test::OnnxBuilder::fill(orknn::test::OnnxBuilder::attr_t(cos, "value"), {1}, std::vector<float>{1.f});
    b.node("Add", {"x", "ones"}, {"x_plus"});
    conv_in = "x_plus";
  }
  b.node("Conv", {conv_in, "w", "b"}, {"conv_out"}, "conv");
  b.init_f32("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  auto* rs = b.node("Resize", {"conv_out", "", "scales"}, {"up"}, "resize");
  orknn::test::OnnxBuilder::attr_s(rs, "mode", "nearest");
  orknn::test::OnnxBuilder::attr_s(rs, "coordinate_transformation_mode", "asymmetric");
  orknn::test::OnnxBuilder::attr_s(rs, "nearest_mode", "floor");
  // target = concat([1, 2], [H2 * W2]) from Shape(up)
  b.node("Shape", {"up"}, {"up_shape"});
  b.init_i64("i2", {1}, {2});
  b.init_i64("i3", {1}, {3});
  b.node("Gather", {"up_shape", "i2"}, {"h2"});
  b.node("Gather", {"up_shape", "i3"}, {"w2"});
  b.node("Mul", {"h2", "w2"}, {"hw"});
  b.init_i64("lead", {2}, {1, 2});
  auto* cat = b.node("Concat", {"lead", "hw"}, {"target"});
  orknn::test::OnnxBuilder::attr_i(cat, "axis", 0);
  b.node("Reshape", {"up", "target"}, {"y"}, "reshape");
  b.output("y");
  return b.bytes();
}

// Input values for shape [1,2,h,w]: multiples of 1/8 in [-2, 2).
inline std::vector<float> make_input(int64_t h, int64_t w, int seed) {
  std::vector<float> x(static_cast<size_t>(2 * h * w));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>((i * 7 + seed * 5) % 32) - 16) / 8.f;
  return x;
}

// y[0][c][(2*i + dy) * 2w + 2*j + dx] = b[c] + sum_k W[c][k] * x[k][i][j], written out naively.
inline std::vector<float> expected_output(const std::vector<float>& x, int64_t h, int64_t w) {
  const int64_t H2 = 2 * h, W2 = 2 * w;
  std::vector<float> y(static_cast<size_t>(2 * H2 * W2));
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t oy = 0; oy < H2; ++oy)
      for (int64_t ox = 0; ox < W2; ++ox) {
        const int64_t i = oy / 2, j = ox / 2;
        float v = kConvB[c];
        for (int64_t k = 0; k < 2; ++k) v += kConvW[c][k] * x[static_cast<size_t>((k * h + i) * w + j)];
        y[static_cast<size_t>(c * H2 * W2 + oy * W2 + ox)] = v;
      }
  return y;
}

}  // namespace dyn_test
