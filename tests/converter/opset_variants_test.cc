// The same op written in different opsets converts to the same IR semantics. Expected values are
// computed by hand (or by a naive formula in the test) from the ONNX specification.
#include <cmath>

#include "converter/converter_test_util.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;

TEST(OpsetVariants, SqueezeAxesAttributeVsInput) {
  for (int opset : {11, 13}) {
    B b(opset);
    b.input("x", {1, 3, 1, 2});
    auto* n = b.node("Squeeze", {"x"}, {"y"});
    if (opset < 13) B::attr_ints(n, "axes", {0, 2});
    else { b.init_i64("axes", {2}, {0, 2}); n->add_input("axes"); }
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    EXPECT_EQ(output_tensor(g).shape, (Shape{3, 2})) << "opset " << opset;
    std::vector<float> x = {1, 2, 3, 4, 5, 6};
    EXPECT_EQ(run_f32(g, {x}), x) << "opset " << opset;
  }
}

TEST(OpsetVariants, ReduceMeanAxesAttributeVsInput) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // [[1,2,3],[4,5,6]]
  for (int opset : {13, 18}) {
    B b(opset);
    b.input("x", {2, 3});
    auto* n = b.node("ReduceMean", {"x"}, {"y"});
    B::attr_i(n, "keepdims", 0);
    if (opset < 18) B::attr_ints(n, "axes", {1});
    else { b.init_i64("axes", {1}, {1}); n->add_input("axes"); }
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    EXPECT_EQ(output_tensor(g).shape, (Shape{2}));
    EXPECT_EQ(run_f32(g, {x}), (std::vector<float>{2, 5})) << "opset " << opset;
  }
  // opset 18 without axes: every axis (noop_with_empty_axes defaults to 0), keepdims defaults to 1
  B b(18);
  b.input("x", {2, 3});
  b.node("ReduceMean", {"x"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  EXPECT_EQ(output_tensor(g).shape, (Shape{1, 1}));
  EXPECT_EQ(run_f32(g, {x}), (std::vector<float>{3.5f}));
}

std::vector<float> softmax_ref(const std::vector<float>& v) {
  float m = v[0];
  for (float e : v) m = std::max(m, e);
  double s = 0;
  for (float e : v) s += std::exp(double(e) - m);
  std::vector<float> r;
  for (float e : v) r.push_back(static_cast<float>(std::exp(double(e) - m) / s));
  return r;
}

TEST(OpsetVariants, SoftmaxOpset11CoercesTo2D) {
  std::vector<float> x(8);
  for (int i = 0; i < 8; ++i) x[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i * i % 5);
  // opset 11, axis=1 on [2,2,2]: each batch row of 4 elements is one softmax
  {
    B b(11);
    b.input("x", {2, 2, 2});
    B::attr_i(b.node("Softmax", {"x"}, {"y"}), "axis", 1);
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    EXPECT_EQ(output_tensor(g).shape, (Shape{2, 2, 2}));
    std::vector<float> want;
    for (int r = 0; r < 2; ++r) {
      auto s = softmax_ref({x.begin() + r * 4, x.begin() + r * 4 + 4});
      want.insert(want.end(), s.begin(), s.end());
    }
    auto got = run_f32(g, {x});
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << i;
  }
  // opset 13, axis=1: softmax along dim 1 only (pairs x[b,0,k], x[b,1,k])
  {
    B b(13);
    b.input("x", {2, 2, 2});
    B::attr_i(b.node("Softmax", {"x"}, {"y"}), "axis", 1);
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    auto got = run_f32(g, {x});
    ASSERT_EQ(got.size(), 8u);
    for (int bb = 0; bb < 2; ++bb)
      for (int k = 0; k < 2; ++k) {
        size_t i0 = static_cast<size_t>(bb * 4 + k), i1 = i0 + 2;
        auto s = softmax_ref({x[i0], x[i1]});
        EXPECT_NEAR(got[i0], s[0], 1e-6f);
        EXPECT_NEAR(got[i1], s[1], 1e-6f);
      }
  }
  // opset 11 LogSoftmax with the default axis (1) on rank 2 is the plain last-axis form
  {
    B b(11);
    b.input("x", {1, 3});
    b.node("LogSoftmax", {"x"}, {"y"});
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    auto got = run_f32(g, {{1.f, 2.f, 3.f}});
    auto s = softmax_ref({1.f, 2.f, 3.f});
    ASSERT_EQ(got.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[i], std::log(s[i]), 1e-6f);
  }
}

TEST(OpsetVariants, ClipAttributesVsInputs) {
  const std::vector<float> x = {-2.f, -0.5f, 0.5f, 2.f};
  {
    B b(10);  // Clip-6 form (attributes), valid until opset 11
    b.input("x", {4});
    auto* n = b.node("Clip", {"x"}, {"y"});
    B::attr_f(n, "min", -1.f);
    B::attr_f(n, "max", 1.f);
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    EXPECT_EQ(run_f32(g, {x}), (std::vector<float>{-1.f, -0.5f, 0.5f, 1.f}));
  }
  {
    B b(13);
    b.input("x", {4});
    b.init_f32("lo", {}, {-1.f});
    b.init_f32("hi", {}, {1.f});
    b.node("Clip", {"x", "lo", "hi"}, {"y"});
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    EXPECT_EQ(run_f32(g, {x}), (std::vector<float>{-1.f, -0.5f, 0.5f, 1.f}));
  }
  {  // only max given: min input left empty
    B b(13);
    b.input("x", {4});
    b.init_f32("hi", {}, {1.f});
    b.node("Clip", {"x", "", "hi"}, {"y"});
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    EXPECT_EQ(run_f32(g, {x}), (std::vector<float>{-2.f, -0.5f, 0.5f, 1.f}));
  }
}

TEST(OpsetVariants, SplitAttributeInputAndNumOutputs) {
  auto run_split = [](B& b, size_t outs, const std::vector<float>& x) {
    Graph g;
    Status st = convert(b, &g);
    EXPECT_TRUE(st.ok()) << st.message();
    std::vector<std::vector<float>> r;
    if (!st.ok()) return r;
    std::vector<std::vector<uint8_t>> out;
    st = run_graph(g, {to_bytes(x)}, &out);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(out.size(), outs);
    for (auto& o : out) r.push_back(from_bytes<float>(o));
    return r;
  };
  const std::vector<float> x3 = {1, 2, 3};
  {
    B b(11);
    b.input("x", {3});
    B::attr_ints(b.node("Split", {"x"}, {"a", "c"}), "split", {1, 2});
    b.output("a");
    b.output("c");
    auto r = run_split(b, 2, x3);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0], (std::vector<float>{1}));
    EXPECT_EQ(r[1], (std::vector<float>{2, 3}));
  }
  {
    B b(13);
    b.input("x", {3});
    b.init_i64("split", {2}, {2, 1});
    b.node("Split", {"x", "split"}, {"a", "c"});
    b.output("a");
    b.output("c");
    auto r = run_split(b, 2, x3);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0], (std::vector<float>{1, 2}));
    EXPECT_EQ(r[1], (std::vector<float>{3}));
  }
  {  // opset 13 without sizes: equal parts
    B b(13);
    b.input("x", {6});
    b.node("Split", {"x"}, {"a", "c", "d"});
    for (auto o : {"a", "c", "d"}) b.output(o);
    auto r = run_split(b, 3, {1, 2, 3, 4, 5, 6});
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[2], (std::vector<float>{5, 6}));
  }
  {  // opset 18 num_outputs=2 on 5 elements: ceil(5/2)=3, then 2
    B b(18);
    b.input("x", {5});
    B::attr_i(b.node("Split", {"x"}, {"a", "c"}), "num_outputs", 2);
    b.output("a");
    b.output("c");
    auto r = run_split(b, 2, {1, 2, 3, 4, 5});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0], (std::vector<float>{1, 2, 3}));
    EXPECT_EQ(r[1], (std::vector<float>{4, 5}));
  }
}

TEST(OpsetVariants, PadAttributesVsInputs) {
  const std::vector<float> want = {9, 1, 2, 9, 9};
  {
    B b(7);  // Pad-2 form (attributes) holds until opset 11; opset 7 is our minimum
    b.input("x", {2});
    auto* n = b.node("Pad", {"x"}, {"y"});
    B::attr_ints(n, "pads", {1, 2});
    B::attr_f(n, "value", 9.f);
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    EXPECT_EQ(run_f32(g, {{1, 2}}), want);
  }
  {
    B b(11);
    b.input("x", {2});
    b.init_i64("pads", {2}, {1, 2});
    b.init_f32("v", {}, {9.f});
    b.node("Pad", {"x", "pads", "v"}, {"y"});
    b.output("y");
    Graph g;
    ASSERT_OK(convert(b, &g));
    EXPECT_EQ(run_f32(g, {{1, 2}}), want);
  }
}

// Linear 2x resize of [0, 1] along the last axis:
//   asymmetric (Upsample, Resize-10): x_in = x_out / 2            -> 0, 0.5, 1, 1
//   half_pixel (Resize-11+ default):  x_in = (x_out + 0.5)/2 - 0.5 -> 0, 0.25, 0.75, 1
TEST(OpsetVariants, ResizeAndUpsampleCoordinateModes) {
  const std::vector<float> x = {0.f, 1.f};
  const std::vector<float> asym = {0.f, 0.5f, 1.f, 1.f}, half = {0.f, 0.25f, 0.75f, 1.f};
  auto check = [&](B& b, const std::vector<float>& want, const char* what) {
    b.output("y");
    Graph g;
    Status st = convert(b, &g);
    ASSERT_TRUE(st.ok()) << what << ": " << st.message();
    EXPECT_EQ(output_tensor(g).shape, (Shape{1, 1, 1, 4})) << what;
    auto got = run_f32(g, {x});
    ASSERT_EQ(got.size(), 4u) << what;
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << what << " " << i;
  };
  {
    B b(10);
    b.input("x", {1, 1, 1, 2});
    b.init_f32("s", {4}, {1, 1, 1, 2});
    B::attr_s(b.node("Resize", {"x", "s"}, {"y"}), "mode", "linear");
    check(b, asym, "Resize-10");
  }
  {
    B b(11);
    b.input("x", {1, 1, 1, 2});
    b.init_f32("roi", {0}, {});
    b.init_f32("s", {4}, {1, 1, 1, 2});
    B::attr_s(b.node("Resize", {"x", "roi", "s"}, {"y"}), "mode", "linear");
    check(b, half, "Resize-11");
  }
  {
    B b(13);
    b.input("x", {1, 1, 1, 2});
    b.init_i64("sizes", {4}, {1, 1, 1, 4});
    B::attr_s(b.node("Resize", {"x", "", "", "sizes"}, {"y"}), "mode", "linear");
    check(b, half, "Resize-13 sizes");
  }
  {
    B b(9);
    b.input("x", {1, 1, 1, 2});
    b.init_f32("s", {4}, {1, 1, 1, 2});
    B::attr_s(b.node("Upsample", {"x", "s"}, {"y"}), "mode", "linear");
    check(b, asym, "Upsample-9");
  }
  {
    B b(7);
    b.input("x", {1, 1, 1, 2});
    auto* n = b.node("Upsample", {"x"}, {"y"});
    B::attr_floats(n, "scales", {1, 1, 1, 2});
    B::attr_s(n, "mode", "nearest");
    check(b, {0.f, 0.f, 1.f, 1.f}, "Upsample-7 nearest");
  }
}

TEST(OpsetVariants, BatchNormalizationSpatialAttributeDropped) {
  B b(7);
  b.input("x", {1, 2, 1, 1});
  b.init_f32("s", {2}, {2, 3});
  b.init_f32("bias", {2}, {1, 0});
  b.init_f32("m", {2}, {1, 1});
  b.init_f32("v", {2}, {3, 8});
  auto* n = b.node("BatchNormalization", {"x", "s", "bias", "m", "v"}, {"y"});
  B::attr_i(n, "spatial", 1);
  B::attr_f(n, "epsilon", 1.f);
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  // y = s * (x - m) / sqrt(v + eps) + bias
  auto got = run_f32(g, {{5.f, 4.f}});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NEAR(got[0], 2.f * 4.f / 2.f + 1.f, 1e-6f);
  EXPECT_NEAR(got[1], 3.f * 3.f / 3.f, 1e-6f);
}

TEST(OpsetVariants, DropoutSumAndComparisonsMapToIrOps) {
  B b(13);
  b.input("x", {3});
  b.input("z", {3});
  b.init_f32("ratio", {}, {0.5f});
  b.node("Dropout", {"x", "ratio"}, {"d", "mask"});
  b.node("Sum", {"d", "z", "x"}, {"s"});
  b.node("Mean", {"x", "z"}, {"m"});
  b.node("GreaterOrEqual", {"x", "z"}, {"ge"});
  b.node("LessOrEqual", {"x", "z"}, {"le"});
  for (auto o : {"s", "m", "ge", "le", "mask"}) b.output(o);
  Graph g;
  ASSERT_OK(convert(b, &g));
  std::vector<std::vector<uint8_t>> out;
  ASSERT_OK(run_graph(g, {to_bytes(std::vector<float>{1, 2, 3}), to_bytes(std::vector<float>{2, 2, 2})}, &out));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(from_bytes<float>(out[0]), (std::vector<float>{4, 6, 8}));
  EXPECT_EQ(from_bytes<float>(out[1]), (std::vector<float>{1.5f, 2, 2.5f}));
  EXPECT_EQ(out[2], (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(out[3], (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(out[4], (std::vector<uint8_t>{1, 1, 1}));  // inference mask: all kept
  EXPECT_EQ(count_op(g, OpId::Dropout), 0);
}

// Training-mode Dropout keeps every element when its ratio is 0 (torchvision's Swin exports its
// attention dropout so); with another ratio the result is random and the node is refused.
TEST(OpsetVariants, TrainingDropoutWithRatioZeroIsIdentity) {
  for (float ratio : {0.f, 0.1f}) {
    B b(13);
    b.input("x", {3});
    b.init_f32("ratio", {}, {ratio});
    auto* t = b.graph().add_initializer();
    t->set_name("training");
    t->set_data_type(onnx::TensorProto::BOOL);
    t->set_raw_data(std::string(1, '\1'));
    b.node("Dropout", {"x", "ratio", "training"}, {"y"}, "drop");
    b.output("y");
    Graph g;
    Status st = convert(b, &g);
    if (ratio == 0.f) {
      ASSERT_OK(st);
      EXPECT_EQ(run_f32(g, {{1, -2, 3}}), (std::vector<float>{1, -2, 3}));
    } else {
      EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
      EXPECT_EQ(st.message(), "node 'drop' (Dropout): training_mode is true; export the model in eval mode");
    }
  }
}

TEST(OpsetVariants, SizeCastLikeReduceSumSquare) {
  B b(15);
  b.input("x", {2, 3});
  b.input("ids", {2}, onnx::TensorProto::INT64);
  b.node("Size", {"x"}, {"n"});
  b.node("CastLike", {"n", "x"}, {"nf"});
  auto* r = b.node("ReduceSumSquare", {"x"}, {"ss"});
  B::attr_ints(r, "axes", {1});
  B::attr_i(r, "keepdims", 0);
  b.node("Add", {"ss", "nf"}, {"y"});
  b.node("CastLike", {"x", "ids"}, {"xi"});
  b.output("y");
  b.output("xi");
  Graph g;
  ASSERT_OK(convert(b, &g));
  std::vector<std::vector<uint8_t>> out;
  ASSERT_OK(run_graph(g, {to_bytes(std::vector<float>{1, 2, 3, -1, 0, 2}), to_bytes(std::vector<int64_t>{0, 0})}, &out));
  EXPECT_EQ(from_bytes<float>(out[0]), (std::vector<float>{14 + 6, 5 + 6}));
  EXPECT_EQ(g.tensor(g.outputs[1]).dtype, DType::kI64);
  EXPECT_EQ(from_bytes<int64_t>(out[1]), (std::vector<int64_t>{1, 2, 3, -1, 0, 2}));
}

TEST(OpsetVariants, CastToFloat16BecomesFloat32) {
  B b(13);
  b.input("x", {2}, onnx::TensorProto::INT64);
  B::attr_i(b.node("Cast", {"x"}, {"y"}), "to", onnx::TensorProto::FLOAT16);
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  EXPECT_EQ(output_tensor(g).dtype, DType::kF32);
  std::vector<std::vector<uint8_t>> out;
  ASSERT_OK(run_graph(g, {to_bytes(std::vector<int64_t>{3, -7})}, &out));
  EXPECT_EQ(from_bytes<float>(out[0]), (std::vector<float>{3.f, -7.f}));
}

}  // namespace
}  // namespace orknn::test
