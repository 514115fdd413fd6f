// Values a corrupted or mutated model file can hold: attribute values and dims near INT64_MAX,
// parameter inputs that would create giant tensors. infer must answer kInvalidModel naming the
// node before any of its size arithmetic overflows (this file runs clean under UBSan), and keep
// accepting the largest sane values.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/infer_util.h"
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
constexpr int64_t kSmall = std::numeric_limits<int64_t>::min();
const DType f = DType::kF32;

// infer of `op` on inputs run_op would build (constants stay constants) fails with `fragment`.
void expect_rejected(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, const std::string& fragment,
                     int n_outputs = 1) {
  OpResult r = run_op(op, attrs, inputs, n_outputs, "ref");
  expect_invalid_model(r.status, fragment, std::string(op_name(op)) + "_under_test");
}

TEST(HostileValues, InputShapes) {
  // Every infer checks its inputs' shapes first: dims in [0, 2^31), at most 2^31-1 elements.
  expect_infer_error(OpId::Relu, {{{int64_t{1} << 40}, f}}, A(), "outside [0, 2147483647]");
  expect_infer_error(OpId::Relu, {{{-5, 2}, f}}, A(), "outside");
  expect_infer_error(OpId::Add, {{{1 << 20, 1 << 20}, f}, {{1}, f}}, A(), "more than 2147483647 elements");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, kBig, 3, 3}, f}}, A(), "input 1");
  expect_infer_error(OpId::Reshape, {{{kBig, kBig}, f}, {{2}, DType::kI64}}, A(), "input 0");
}

TEST(HostileValues, Conv) {
  const std::vector<std::pair<Shape, DType>> xw = {{{1, 2, 5, 5}, f}, {{2, 2, 3, 3}, f}};
  // w.shape[1] * group
  expect_infer_error(OpId::Conv, xw, A().i("group", kBig), "group");
  expect_infer_error(OpId::Conv, xw, A().i("group", int64_t{1} << 40), "group");
  // (kernel - 1) * dilation
  expect_infer_error(OpId::Conv, xw, A().ints("dilations", {kBig, 1}), "dilations");
  expect_infer_error(OpId::Conv, xw, A().ints("strides", {1, kBig}), "strides");
  // in + pads - extent
  expect_infer_error(OpId::Conv, xw, A().ints("pads", {kBig, 0, kBig, 0}), "pads");
  expect_infer_error(OpId::Conv, xw, A().ints("pads", {0, 0, kSmall, 0}), "pads");
  // The largest sane values still work: a dilation of 2^31-1 makes the kernel larger than the
  // input (an ordinary error), a stride of 2^31-1 gives one output position.
  expect_infer_error(OpId::Conv, xw, A().ints("dilations", {kMaxDim, 1}), "smaller than the dilated kernel");
  OneNode o = make_node(OpId::Conv, xw, A().ints("strides", {kMaxDim, kMaxDim}));
  ASSERT_OK(infer(o));
  EXPECT_EQ(o.g.tensor(o.n.outputs[0]).shape, (Shape{1, 2, 1, 1}));
}

TEST(HostileValues, ConvTranspose) {
  const std::vector<std::pair<Shape, DType>> xw = {{{1, 2, 4}, f}, {{2, 3, 3}, f}};
  expect_infer_error(OpId::ConvTranspose, xw, A().i("group", kBig), "group");
  expect_infer_error(OpId::ConvTranspose, xw, A().ints("strides", {kBig}), "strides");
  expect_infer_error(OpId::ConvTranspose, xw, A().ints("dilations", {kBig}), "dilations");
  expect_infer_error(OpId::ConvTranspose, xw, A().ints("output_padding", {kBig}), "output_padding");
  expect_infer_error(OpId::ConvTranspose, xw, A().ints("output_shape", {kBig}), "output_shape");
  expect_infer_error(OpId::ConvTranspose, xw, A().ints("pads", {kSmall, 0}), "pads");
  // stride * (in - 1) beyond the element limit, or an output beyond the dim limit.
  expect_infer_error(OpId::ConvTranspose, xw, A().ints("strides", {kMaxDim}), "exceeds");
  const std::vector<std::pair<Shape, DType>> x2w = {{{1, 2, 2}, f}, {{2, 3, 3}, f}};
  expect_infer_error(OpId::ConvTranspose, x2w, A().ints("strides", {kMaxDim}), "output 0");
  expect_infer_error(OpId::ConvTranspose, x2w, A().ints("strides", {kMaxDim}).s("auto_pad", "SAME_UPPER"), "output 0");
}

TEST(HostileValues, Pools) {
  const std::vector<std::pair<Shape, DType>> x = {{{1, 1, 6, 6}, f}};
  expect_infer_error(OpId::MaxPool, x, A().ints("kernel_shape", {kBig, 2}), "kernel_shape");
  expect_infer_error(OpId::MaxPool, x, A().ints("kernel_shape", {2, 2}).ints("dilations", {kBig, 1}), "dilations");
  expect_infer_error(OpId::AveragePool, x, A().ints("kernel_shape", {2, 2}).ints("strides", {1, kBig}), "strides");
  expect_infer_error(OpId::AveragePool, x, A().ints("kernel_shape", {2, 2}).ints("pads", {0, kBig, 0, 0}), "pads");
  // The largest stride is fine: SAME padding and the output size stay in range.
  OneNode o = make_node(OpId::MaxPool, x,
                        A().ints("kernel_shape", {2, 2}).ints("strides", {kMaxDim, 1}).s("auto_pad", "SAME_LOWER"));
  ASSERT_OK(infer(o));
  EXPECT_EQ(o.g.tensor(o.n.outputs[0]).shape, (Shape{1, 1, 1, 6}));
}

TEST(HostileValues, ShapeParameters) {
  const TensorData x = f32({2, 3}, iota_f(6));
  expect_rejected(OpId::Reshape, A(), {x, i64c({2}, {kBig, kBig})}, "above 2147483647");
  expect_rejected(OpId::Reshape, A(), {x, i64c({3}, {1 << 20, 1 << 20, 0})}, "more than");
  expect_rejected(OpId::Reshape, A(), {x, i64c({2}, {-1, kBig})}, "above");
  expect_rejected(OpId::Expand, A(), {x, i64c({3}, {kBig, 2, 3})}, "target shape");
  expect_rejected(OpId::Expand, A(), {x, i64c({3}, {1 << 20, 1 << 20, 3})}, "more than");
  expect_rejected(OpId::Tile, A(), {x, i64c({2}, {kBig, 1})}, "repeats");
  expect_rejected(OpId::Tile, A(), {x, i64c({2}, {1 << 20, 1 << 20})}, "output 0");
  expect_rejected(OpId::ConstantOfShape, A(), {i64c({2}, {kBig, 2})}, "shape");
  expect_rejected(OpId::ConstantOfShape, A(), {i64c({3}, {1 << 16, 1 << 16, 1 << 16})}, "more than");
  expect_rejected(OpId::Split, A().ints("split", {kBig, kBig}), {x}, "split", 2);
  expect_rejected(OpId::Split, A().ints("split", {kSmall, 2}), {x}, "split", 2);
  expect_rejected(OpId::Concat, A().i("axis", 0),
                  std::vector<TensorData>(4, TensorData{{1 << 29, 2}, DType::kU8, {}, false, false}), "output 0");
}

TEST(HostileValues, Range) {
  // (limit - start) and the element count must not overflow, whatever the values.
  expect_rejected(OpId::Range, A(), {i64c({}, {kSmall}), i64c({}, {kBig}), i64c({}, {1})}, "more than");
  expect_rejected(OpId::Range, A(), {f32({}, {0.f}, true), f32({}, {3e38f}, true), f32({}, {1e-30f}, true)},
                  "more than");
  // Extreme values with a huge delta give a few elements, exactly (ceil((limit - start) / delta)).
  OpResult r = ref(OpId::Range, A(), {i64c({}, {kSmall}), i64c({}, {kBig}), i64c({}, {kBig})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{kSmall, -1, kBig - 1}));
  r = ref(OpId::Range, A(), {i64c({}, {kBig}), i64c({}, {kSmall}), i64c({}, {kSmall})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{kBig, -1}));
}

TEST(HostileValues, SliceSteps) {
  // A step longer than the dim selects one element and is stored as the dim's length, so the
  // kernel's step * stride stays in range.
  const TensorData x = f32({3, 4}, iota_f(12));
  OpResult r =
      ref(OpId::Slice, A(), {x, i64c({2}, {1, 0}), i64c({2}, {kBig, kBig}), i64c({2}, {0, 1}), i64c({2}, {kBig, 2})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{1, 2}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{4.f, 6.f}));
  r = ref(OpId::Slice, A(), {x, i64c({1}, {-1}), i64c({1}, {kSmall}), i64c({1}, {1}), i64c({1}, {kSmall})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{3, 1}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{3.f, 7.f, 11.f}));
  OneNode o;
  o.n.name = "node_under_test";
  o.n.op = OpId::Slice;
  o.n.inputs = {o.g.add_tensor("x", {3, 4}, f)};
  o.n.outputs = {o.g.add_tensor("y", {}, f)};
  o.n.attrs = A().ints("starts", {0}).ints("ends", {kBig}).ints("axes", {1}).ints("steps", {kSmall});
  ASSERT_OK(infer(o));
  EXPECT_EQ(o.n.attrs.get_ints("steps"), (std::vector<int64_t>{1, -4}));
  expect_reinfer_unchanged(o.g, o.n);
}

TEST(HostileValues, PadResizeSpaceDepth) {
  const TensorData x = f32({1, 1, 2, 2}, iota_f(4));
  expect_rejected(OpId::Pad, A(), {x, i64c({8}, {0, 0, 0, kBig, 0, 0, 0, kBig})}, "pads");
  expect_rejected(OpId::Pad, A(), {x, i64c({8}, {0, 0, 0, kSmall, 0, 0, 0, 0})}, "pads");
  expect_rejected(OpId::Pad, A(), {x, i64c({8}, {0, 0, kMaxDim, kMaxDim, 0, 0, 0, 0})}, "output 0");
  const TensorData none = TensorData::none();
  expect_rejected(OpId::Resize, A(), {x, none, none, i64c({4}, {1, 1, kBig, 2})}, "sizes[2]");
  expect_rejected(OpId::Resize, A(), {x, none, f32({4}, {1.f, 1.f, 3e38f, 1.f}, true)}, "output dim 2");
  expect_rejected(OpId::Resize, A(), {x, none, f32({4}, {1.f, 1.f, 1e9f, 1e9f}, true)}, "more than");
  expect_rejected(OpId::Resize, A().s("keep_aspect_ratio_policy", "not_smaller").ints("axes", {2, 3}),
                  {x, none, none, i64c({2}, {1, kMaxDim})}, "output dim");
  expect_rejected(OpId::DepthToSpace, A().i("blocksize", kBig), {x}, "blocksize");
  expect_rejected(OpId::SpaceToDepth, A().i("blocksize", int64_t{1} << 20), {f32({1, 3, 0, 0}, {})}, "blocksize");
  expect_rejected(OpId::DepthToSpace, A().i("blocksize", 1 << 15), {f32({1, 0, 1 << 16, 1 << 16}, {})}, "output 0");
}

TEST(HostileValues, FillValuesBeyondTheDtype) {
  // A float "value" that an integer dtype cannot hold is converted with a defined result (no UB;
  // this runs under UBSan's float-cast-overflow check); the data elements are untouched.
  OpResult r = ref(OpId::Pad, A().ints("pads", {1, 1}).f("value", 1e20f),
                   {TensorData::of<int8_t>({2}, {5, -7}, DType::kI8)});
  ASSERT_OK(r.status);
  const std::vector<int8_t> y = r.outputs[0].as<int8_t>();
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[1], 5);
  EXPECT_EQ(y[2], -7);
  EXPECT_EQ(y[0], y[3]);
  r = ref(OpId::ConstantOfShape, A().f("value", -1e30f).i("dtype", static_cast<int64_t>(DType::kU16)),
          {i64c({1}, {3})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{3});
}

TEST(HostileValues, ResizeScaleNearZero) {
  // The normalised form keeps "scales" apart from "sizes" (keep_aspect_ratio_policy makes them
  // differ), so a model may hold any positive finite scale with any output size. A W scale of 1e-30
  // puts every W coordinate near 5e29, which each mode clamps to the edge without converting it to
  // int64 out of range (found by fuzz_fast_kernels): every output reads its row's last element.
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Attrs a = A().s("mode", mode).s("coordinate_transformation_mode", "half_pixel").ints("sizes", {1, 1, 2, 4});
    a.set_floats("scales", {1.f, 1.f, 1.f, 1e-30f});
    OpResult r = ref(OpId::Resize, a, {f32({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6})});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{3, 3, 3, 3, 6, 6, 6, 6})) << mode;
  }
}

}  // namespace
}  // namespace orknn::test
