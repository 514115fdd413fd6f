// A converted graph written with write_model and read back with load_model is the same model:
// I/O contract (names, shapes, mean/std), platform, custom string, precision, and results.
#include <cstdlib>
#include <new>

#include "converter/converter_test_util.h"
#include "model/model_io.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;

TEST(RoundTrip, ConvertWriteLoadRun) {
  B b(13);
  b.input("img", {-1, 3, 4, 4});
  std::vector<float> w(2 * 3 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i % 7) - 0.1f;
  b.init_f32("w", {2, 3, 3, 3}, w);
  b.init_f32("bias", {2}, {0.5f, -0.5f});
  auto* conv = b.node("Conv", {"img", "w", "bias"}, {"c"}, "conv");
  B::attr_ints(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"});
  b.node("Shape", {"r"}, {"shape"});
  b.node("GlobalAveragePool", {"r"}, {"pooled"});
  b.output("pooled");
  b.output("shape");

  ConvertOptions o;  // fp16 mode, all passes
  o.platform = "rk3576";
  o.custom_string = "round trip";
  o.input_shapes["img"] = {1, 3, 4, 4};
  o.mean_values["img"] = {1.f, 2.f, 3.f};
  o.std_values["img"] = {4.f};
  Graph g;
  ASSERT_OK(convert(b, &g, o));

  std::vector<uint8_t> bytes;
  ASSERT_OK(write_model(g, &bytes));
  // load_model wants a 64-byte aligned buffer that it may keep
  std::shared_ptr<uint8_t> buf(static_cast<uint8_t*>(::operator new[](bytes.size(), std::align_val_t(64))),
                               [](uint8_t* p) { ::operator delete[](p, std::align_val_t(64)); });
  std::memcpy(buf.get(), bytes.data(), bytes.size());
  Graph h;
  ASSERT_OK(load_model(buf, buf.get(), bytes.size(), &h));

  EXPECT_EQ(h.platform, "rk3576");
  EXPECT_EQ(h.custom_string, "round trip");
  EXPECT_EQ(h.precision, FloatPrecision::kFp16);
  ASSERT_EQ(h.inputs.size(), 1u);
  EXPECT_EQ(h.tensor(h.inputs[0].tensor).name, "img");
  EXPECT_EQ(h.tensor(h.inputs[0].tensor).shape, (Shape{1, 3, 4, 4}));
  EXPECT_EQ(h.inputs[0].mean, (std::vector<float>{1.f, 2.f, 3.f}));
  EXPECT_EQ(h.inputs[0].std, (std::vector<float>{4.f}));
  ASSERT_EQ(h.outputs.size(), 2u);
  EXPECT_EQ(h.tensor(h.outputs[0]).name, "pooled");
  EXPECT_EQ(h.tensor(h.outputs[1]).name, "shape");
  ASSERT_TRUE(h.tensor(h.outputs[1]).is_const());
  EXPECT_EQ(h.tensor(h.outputs[1]).const_ptr<int64_t>()[3], 4);
  EXPECT_EQ(h.nodes.size(), g.nodes.size());

  std::vector<float> x(48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.f;
  EXPECT_EQ(run_f32(h, {x}), run_f32(g, {x}));
}

}  // namespace
}  // namespace orknn::test
