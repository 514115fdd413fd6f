// Resize: modes x coordinate transformations x nearest modes x scales/sizes on 3-D, 4-D and 5-D
// inputs against a recursive per-axis implementation written here in double (neighbour choice
// and coefficients as in the ONNX reference implementation), ONNX documentation examples, the
// opset-10 input form, axes / keep_aspect_ratio_policy, normalisation and errors.
#include <cmath>
#include <string>
#include <vector>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

struct Spec {
  std::string mode = "nearest", ctm = "half_pixel", nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
  std::vector<float> scales;  // per dim, as the op uses them
  std::vector<float> roi;     // 2 * rank (tf_crop_and_resize)
  Shape out;
};

// Output coordinate -> input coordinate (ONNX formulas, in double). A scale that is exactly
// out / in in float32 (it came from sizes) is used as the exact ratio, with resized length out.
double source_coord(const Spec& sp, size_t axis, int64_t o, int64_t in) {
  const int64_t out_i = sp.out[axis];
  const bool ratio = sp.scales[axis] == static_cast<float>(out_i) / static_cast<float>(in);
  const double s = ratio ? static_cast<double>(out_i) / static_cast<double>(in) : sp.scales[axis];
  const double out = static_cast<double>(out_i), x = static_cast<double>(o);
  const double length = ratio ? out : in * s;
  if (sp.ctm == "asymmetric") return x / s;
  if (sp.ctm == "align_corners") return out_i == 1 ? 0.0 : x * (in - 1) / (length - 1);
  if (sp.ctm == "pytorch_half_pixel") return out_i > 1 ? (x + 0.5) / s - 0.5 : 0.0;
  if (sp.ctm == "tf_half_pixel_for_nn") return (x + 0.5) / s;
  if (sp.ctm == "half_pixel_symmetric") {
    const double adjustment = out / length;
    return in / 2.0 * (1 - adjustment) + (x + 0.5) / s - 0.5;
  }
  if (sp.ctm == "tf_crop_and_resize") {
    const size_t r = sp.scales.size();
    const double start = sp.roi[axis], end = sp.roi[r + axis];
    if (out_i == 1) return (end - start) * (in - 1) / 2 + start * (in - 1);
    return x * (end - start) * (in - 1) / (out - 1) + start * (in - 1);
  }
  return (x + 0.5) / s - 0.5;  // half_pixel
}

struct Tap {
  int64_t index;
  double weight;
};

// Neighbours and coefficients of one axis, ONNX-reference style: a whole-number x uses
// ratio 1 with the neighbour below it as the "left" one.
std::vector<Tap> axis_taps(const Spec& sp, size_t axis, int64_t o, int64_t in, bool* outside) {
  const double x = source_coord(sp, axis, o, in);
  *outside = sp.ctm == "tf_crop_and_resize" && (x < 0 || x > in - 1);
  auto clamp = [in](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
  std::vector<Tap> taps;
  if (sp.mode == "nearest") {
    double r;
    if (sp.nearest_mode == "floor")
      r = std::floor(x);
    else if (sp.nearest_mode == "ceil")
      r = std::ceil(x);
    else if (x == std::floor(x) + 0.5)
      r = sp.nearest_mode == "round_prefer_ceil" ? std::ceil(x) : std::floor(x);
    else
      r = std::round(x);
    taps.push_back({clamp(static_cast<int64_t>(r)), 1.0});
    return taps;
  }
  const bool whole = x == std::floor(x);
  const int64_t left = whole ? static_cast<int64_t>(x) - 1 : static_cast<int64_t>(std::floor(x));
  const double t = whole ? 1.0 : x - std::floor(x);
  if (sp.mode == "linear") {
    taps.push_back({left, 1 - t});
    taps.push_back({left + 1, t});
  } else {
    const double a = sp.cubic_a;
    auto keys = [a](double d) {  // Keys kernel at distance d
      d = std::fabs(d);
      if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
      if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
      return 0.0;
    };
    for (int j = -1; j <= 2; ++j) taps.push_back({left + j, keys(t - j)});
    if (sp.exclude_outside) {
      double sum = 0;
      for (Tap& tp : taps) {
        if (tp.index < 0 || tp.index >= in) tp.weight = 0;
        sum += tp.weight;
      }
      for (Tap& tp : taps) tp.weight /= sum;
    }
  }
  for (Tap& tp : taps) tp.index = clamp(tp.index);
  return taps;
}

double interp(const Spec& sp, const Shape& xs, const std::vector<float>& x, const std::vector<int64_t>& oi, size_t axis,
              int64_t offset, bool* outside) {
  if (axis == xs.size()) return x[static_cast<size_t>(offset)];
  bool out_here = false;
  std::vector<Tap> taps = axis_taps(sp, axis, oi[axis], xs[axis], &out_here);
  if (out_here) {
    *outside = true;
    return 0;
  }
  int64_t stride = 1;
  for (size_t d = axis + 1; d < xs.size(); ++d) stride *= xs[d];
  double v = 0;
  for (const Tap& t : taps) v += t.weight * interp(sp, xs, x, oi, axis + 1, offset + t.index * stride, outside);
  return v;
}

std::vector<double> naive_resize(const Spec& sp, const Shape& xs, const std::vector<float>& x) {
  std::vector<double> y;
  for (int64_t e = 0; e < shape_numel(sp.out); ++e) {
    std::vector<int64_t> oi(sp.out.size());
    int64_t rem = e;
    for (size_t d = sp.out.size(); d-- > 0;) {
      oi[d] = rem % sp.out[d];
      rem /= sp.out[d];
    }
    bool outside = false;
    const double v = interp(sp, xs, x, oi, 0, 0, &outside);
    y.push_back(outside ? sp.extrapolation : v);
  }
  return y;
}

Attrs spec_attrs(const Spec& sp) {
  Attrs a;
  a.set_string("mode", sp.mode);
  a.set_string("coordinate_transformation_mode", sp.ctm);
  if (sp.mode == "nearest") a.set_string("nearest_mode", sp.nearest_mode);
  if (sp.mode == "cubic") {
    a.set_float("cubic_coeff_a", static_cast<float>(sp.cubic_a));
    if (sp.exclude_outside) a.set_int("exclude_outside", 1);
  }
  if (sp.extrapolation != 0) a.set_float("extrapolation_value", static_cast<float>(sp.extrapolation));
  return a;
}

TEST(ResizeRef, ParameterMatrix) {
  struct Geometry {
    Shape x;
    std::vector<std::vector<float>> scale_sets;
  };
  const Geometry geometries[] = {
      {{2, 2, 3, 4}, {{1, 1, 2, 2}, {1, 1, 1.5f, 2.5f}, {1, 1, 0.5f, 0.5f}, {1, 1, 0.6f, 0.75f}, {1, 1, 1.75f, 0.5f}}},
      {{1, 3, 5}, {{1, 1, 2}, {1, 1, 0.6f}, {2, 1, 1.4f}}},
      {{2, 1, 3, 2, 3}, {{1, 1, 2, 1.5f, 0.7f}, {1, 1, 0.5f, 2, 1}}},
  };
  const char* ctms[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                        "align_corners", "asymmetric",           "tf_half_pixel_for_nn"};
  struct ModeCase {
    const char* mode;
    const char* nearest_mode;
    double a;
    bool exclude;
  };
  const ModeCase modes[] = {{"nearest", "round_prefer_floor", 0, false},
                            {"nearest", "round_prefer_ceil", 0, false},
                            {"nearest", "floor", 0, false},
                            {"nearest", "ceil", 0, false},
                            {"linear", "", 0, false},
                            {"cubic", "", -0.75, false},
                            {"cubic", "", -0.5, true}};
  uint32_t seed = 1;
  int cases = 0;
  for (const Geometry& g : geometries) {
    for (const auto& scales : g.scale_sets) {
      for (const char* ctm : ctms) {
        for (const ModeCase& m : modes) {
          for (bool by_sizes : {false, true}) {
            if (by_sizes && (seed % 2)) {
              ++seed;
              continue;
            }  // sizes on about half the cases
            Spec sp;
            sp.mode = m.mode;
            sp.ctm = ctm;
            if (*m.nearest_mode) sp.nearest_mode = m.nearest_mode;
            sp.cubic_a = m.a;
            sp.exclude_outside = m.exclude;
            sp.scales = scales;
            for (size_t i = 0; i < g.x.size(); ++i)
              sp.out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(g.x[i]) * scales[i])));
            if (by_sizes)  // the op then uses out / in as the scale
              for (size_t i = 0; i < g.x.size(); ++i)
                sp.scales[i] = static_cast<float>(sp.out[i]) / static_cast<float>(g.x[i]);
            SCOPED_TRACE(shape_str(g.x) + " -> " + shape_str(sp.out) + " " + sp.mode + "/" + sp.nearest_mode + " " +
                         sp.ctm + (by_sizes ? " sizes" : " scales") + " a=" + std::to_string(sp.cubic_a));
            std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(g.x)), seed++, -2.f, 2.f);
            std::vector<TensorData> in = {TensorData::f32(g.x, x), TensorData::none()};
            if (by_sizes) {
              in.push_back(TensorData::f32({0}, {}, true));  // empty scales, as exporters write it
              in.push_back(TensorData::i64({static_cast<int64_t>(sp.out.size())}, sp.out));
            } else {
              in.push_back(TensorData::f32({static_cast<int64_t>(scales.size())}, scales, true));
            }
            OpResult r = run_op(OpId::Resize, spec_attrs(sp), in, 1);
            ASSERT_TRUE(r.status.ok()) << r.status.message();
            ASSERT_EQ(r.outputs[0].shape, sp.out);
            expect_close(r.outputs[0].as<float>(), naive_resize(sp, g.x, x), 2e-5, "Resize");
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 400);
}

TEST(ResizeRef, TfCropAndResize) {
  std::vector<float> x16(16);
  for (int i = 0; i < 16; ++i) x16[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  // test_resize_tf_crop_and_resize (linear, sizes 3x3).
  Attrs a;
  a.set_string("mode", "linear");
  a.set_string("coordinate_transformation_mode", "tf_crop_and_resize");
  OpResult r =
      run_op(OpId::Resize, a,
             {TensorData::f32({1, 1, 4, 4}, x16), TensorData::f32({8}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}, true),
              TensorData::none(), TensorData::i64({4}, {1, 1, 3, 3})},
             1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_close(r.outputs[0].as<float>(), {7.6, 7.9, 8.2, 8.8, 9.1, 9.4, 10.0, 10.3, 10.6}, 1e-5, "crop");
  // test_resize_tf_crop_and_resize_extrapolation_value.
  a.set_float("extrapolation_value", 10.f);
  r = run_op(OpId::Resize, a,
             {TensorData::f32({1, 1, 4, 4}, x16), TensorData::f32({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}, true),
              TensorData::none(), TensorData::i64({4}, {1, 1, 3, 3})},
             1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_close(r.outputs[0].as<float>(), {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10}, 1e-5, "extrapolation");

  // Matrix against the naive version: nearest/linear/cubic, roi given for listed axes only.
  uint32_t seed = 70;
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    for (bool with_scales : {false, true}) {
      Spec sp;
      sp.mode = mode;
      sp.ctm = "tf_crop_and_resize";
      sp.extrapolation = -7;
      sp.roi = {0, 0, -0.1f, 0.2f, 1, 1, 0.8f, 1.3f};
      const Shape xs = {2, 1, 5, 6};
      std::vector<float> scales = {1, 1, 1.5f, 0.8f};
      if (with_scales) {
        sp.scales = scales;
        // floor(in * (end - start) * scale)
        sp.out = {2, 1, static_cast<int64_t>(std::floor(5.0 * (0.8f - -0.1f) * 1.5f)),
                  static_cast<int64_t>(std::floor(6.0 * (1.3f - 0.2f) * 0.8f))};
      } else {
        sp.out = {2, 1, 4, 3};
        sp.scales = {1, 1, 4.f / 5.f, 3.f / 6.f};
      }
      SCOPED_TRACE(std::string(mode) + (with_scales ? " scales" : " sizes"));
      std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(xs)), seed++);
      Attrs at = spec_attrs(sp);
      at.set_ints("axes", {2, 3});  // roi, scales and sizes list H and W only
      std::vector<TensorData> in = {TensorData::f32(xs, x), TensorData::f32({4}, {-0.1f, 0.2f, 0.8f, 1.3f}, true)};
      if (with_scales) {
        in.push_back(TensorData::f32({2}, {1.5f, 0.8f}, true));
      } else {
        in.push_back(TensorData::none());
        in.push_back(TensorData::i64({2}, {4, 3}));
      }
      OpResult rr = run_op(OpId::Resize, at, in, 1);
      ASSERT_TRUE(rr.status.ok()) << rr.status.message();
      ASSERT_EQ(rr.outputs[0].shape, sp.out);
      expect_close(rr.outputs[0].as<float>(), naive_resize(sp, xs, x), 2e-5, "tf_crop_and_resize");
    }
  }
}

TEST(ResizeRef, OnnxExamples) {
  // test_resize_upsample_scales_nearest
  Attrs nearest;
  nearest.set_string("mode", "nearest");
  OpResult r = run_op(
      OpId::Resize, nearest,
      {TensorData::f32({1, 1, 2, 2}, {1, 2, 3, 4}), TensorData::none(), TensorData::f32({4}, {1, 1, 2, 3}, true)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].as<float>(),
            (std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  // test_resize_downsample_scales_nearest
  r = run_op(OpId::Resize, nearest,
             {TensorData::f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), TensorData::none(),
              TensorData::f32({4}, {1, 1, 0.6f, 0.6f}, true)},
             1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].shape, (Shape{1, 1, 1, 2}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 3}));
  // test_resize_upsample_scales_linear
  Attrs linear;
  linear.set_string("mode", "linear");
  r = run_op(
      OpId::Resize, linear,
      {TensorData::f32({1, 1, 2, 2}, {1, 2, 3, 4}), TensorData::none(), TensorData::f32({4}, {1, 1, 2, 2}, true)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_close(r.outputs[0].as<float>(),
               {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}, 1e-6, "linear");
  // test_resize_downsample_scales_linear
  r = run_op(OpId::Resize, linear,
             {TensorData::f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), TensorData::none(),
              TensorData::f32({4}, {1, 1, 0.6f, 0.6f}, true)},
             1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_close(r.outputs[0].as<float>(), {2.6666665, 4.3333331}, 1e-6, "linear down");
  // test_resize_upsample_scales_linear_align_corners / downsample (unfloored resized length).
  linear.set_string("coordinate_transformation_mode", "align_corners");
  r = run_op(
      OpId::Resize, linear,
      {TensorData::f32({1, 1, 2, 2}, {1, 2, 3, 4}), TensorData::none(), TensorData::f32({4}, {1, 1, 2, 2}, true)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const double t = 1.0 / 3;
  expect_close(
      r.outputs[0].as<float>(),
      {1, 1 + t, 1 + 2 * t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t, 2 + t, 2 + 2 * t, 3, 3 + t, 3, 3 + t, 3 + 2 * t, 4},
      1e-6, "align_corners");
  r = run_op(OpId::Resize, linear,
             {TensorData::f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), TensorData::none(),
              TensorData::f32({4}, {1, 1, 0.6f, 0.6f}, true)},
             1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_close(r.outputs[0].as<float>(), {1, 3.142857}, 1e-6, "align_corners down");
}

TEST(ResizeRef, Opset10FormAndScalesAttribute) {
  // (X, scales) with asymmetric + floor, the Upsample semantics the converter sets for opset 10.
  std::vector<float> x = random_floats(2 * 3 * 4, 8);
  Spec sp;
  sp.ctm = "asymmetric";
  sp.nearest_mode = "floor";
  sp.scales = {1, 1, 2.5f, 1.5f};
  sp.out = {1, 2, 7, 6};
  Attrs a = spec_attrs(sp);
  OpResult r = run_op(OpId::Resize, a, {TensorData::f32({1, 2, 3, 4}, x), TensorData::f32({4}, sp.scales, true)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.outputs[0].shape, sp.out);
  expect_close(r.outputs[0].as<float>(), naive_resize(sp, {1, 2, 3, 4}, x), 0, "opset10");
  // The same through a "scales" attribute only (no parameter inputs).
  a.set_floats("scales", sp.scales);
  r = run_op(OpId::Resize, a, {TensorData::f32({1, 2, 3, 4}, x)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_close(r.outputs[0].as<float>(), naive_resize(sp, {1, 2, 3, 4}, x), 0, "scales attribute");
}

TEST(ResizeRef, AxesAndKeepAspectRatio) {
  std::vector<float> x = random_floats(2 * 3 * 4 * 6, 9);
  const Shape xs = {2, 3, 4, 6};
  struct Case {
    const char* policy;
    std::vector<int64_t> sizes;
    Shape out;
  };
  const Case cases[] = {
      {"stretch", {6, 9}, {2, 3, 6, 9}},
      {"not_larger", {6, 12}, {2, 3, 6, 9}},    // min(6/4, 12/6) = 1.5
      {"not_smaller", {6, 12}, {2, 3, 8, 12}},  // max(1.5, 2) = 2
      {"not_larger", {3, 5}, {2, 3, 3, 5}},     // min(0.75, 0.83) = 0.75; 6 * 0.75 = 4.5 rounds up to 5
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.policy);
    Attrs a;
    a.set_string("mode", "linear");
    a.set_ints("axes", {2, -1});
    a.set_string("keep_aspect_ratio_policy", c.policy);
    OpResult r =
        run_op(OpId::Resize, a,
               {TensorData::f32(xs, x), TensorData::none(), TensorData::none(), TensorData::i64({2}, c.sizes)}, 1);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    Spec sp;
    sp.mode = "linear";
    if (std::string(c.policy) == "stretch") {
      sp.out = c.out;
      sp.scales = {1, 1, 6.f / 4, 9.f / 6};
    } else {
      const float s43 = static_cast<float>(c.sizes[0]) / 4, s63 = static_cast<float>(c.sizes[1]) / 6;
      const float s = std::string(c.policy) == "not_larger" ? std::min(s43, s63) : std::max(s43, s63);
      sp.scales = {1, 1, s, s};
      sp.out = {2, 3, static_cast<int64_t>(std::floor(4 * double(s) + 0.5)),
                static_cast<int64_t>(std::floor(6 * double(s) + 0.5))};
    }
    EXPECT_EQ(sp.out, c.out);
    ASSERT_EQ(r.outputs[0].shape, sp.out);
    expect_close(r.outputs[0].as<float>(), naive_resize(sp, xs, x), 2e-5, c.policy);
  }
}

// ---------------------------------------------------------------- infer

TEST(ResizeInfer, SizesBecomeAttributesAndIdempotent) {
  Graph g;
  Node n;
  n.name = "rs";
  n.op = OpId::Resize;
  const int64_t sizes[] = {1, 2, 7, 5};
  n.inputs = {g.add_tensor("x", {1, 2, 3, 4}, DType::kF32), -1, -1,
              g.add_const("sizes", {4}, DType::kI64, sizes, sizeof(sizes))};
  n.outputs = {g.add_tensor("y", {}, DType::kF32)};
  n.attrs.set_string("mode", "cubic");
  ASSERT_TRUE(infer_Resize(g, n).ok());
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{1, 2, 7, 5}));
  EXPECT_EQ(n.inputs[3], -1);
  EXPECT_EQ(n.attrs.get_ints("sizes"), (std::vector<int64_t>{1, 2, 7, 5}));
  const std::vector<float> scales = n.attrs.get_floats("scales");
  ASSERT_EQ(scales.size(), 4u);
  EXPECT_FLOAT_EQ(scales[2], 7.f / 3.f);
  EXPECT_FLOAT_EQ(scales[3], 5.f / 4.f);
  EXPECT_EQ(n.attrs.get_string("coordinate_transformation_mode", ""), "half_pixel");
  EXPECT_EQ(n.attrs.get_string("nearest_mode", ""), "round_prefer_floor");
  EXPECT_FLOAT_EQ(n.attrs.get_float("cubic_coeff_a", 0), -0.75f);
  EXPECT_EQ(n.attrs.get_int("exclude_outside", -1), 0);
  expect_reinfer_unchanged(g, n);
}

struct ResizeInputs {
  Shape x = {1, 1, 2, 2};
  DType x_dtype = DType::kF32;
  bool roi = false;
  std::vector<float> scales;
  bool scales_const = true;
  std::vector<int64_t> sizes;
};

void expect_error(const ResizeInputs& p, const Attrs& a, const std::string& fragment) {
  OneNode o = make_node(OpId::Resize, {{p.x, p.x_dtype}}, a);
  Graph& g = o.g;
  Node& n = o.n;
  const float roi[8] = {0, 0, 0, 0, 1, 1, 1, 1};
  n.inputs.push_back(p.roi ? g.add_const("roi", {8}, DType::kF32, roi, sizeof(roi)) : -1);
  if (p.scales.empty()) {
    n.inputs.push_back(-1);
  } else if (p.scales_const) {
    n.inputs.push_back(g.add_const("scales", {static_cast<int64_t>(p.scales.size())}, DType::kF32, p.scales.data(),
                                   p.scales.size() * 4));
  } else {
    n.inputs.push_back(g.add_tensor("scales", {static_cast<int64_t>(p.scales.size())}, DType::kF32));
  }
  n.inputs.push_back(p.sizes.empty() ? -1
                                     : g.add_const("sizes", {static_cast<int64_t>(p.sizes.size())}, DType::kI64,
                                                   p.sizes.data(), p.sizes.size() * 8));
  expect_invalid_model(infer(o), fragment);
}

TEST(ResizeInfer, Errors) {
  ResizeInputs ok;
  ok.scales = {1, 1, 2, 2};
  Attrs none;
  auto with = [](const char* k, const char* v) {
    Attrs a;
    a.set_string(k, v);
    return a;
  };
  expect_error(ok, with("mode", "area"), "mode");
  expect_error(ok, with("coordinate_transformation_mode", "center"), "coordinate_transformation_mode");
  expect_error(ok, with("nearest_mode", "nearest"), "nearest_mode");
  expect_error(ok, with("keep_aspect_ratio_policy", "fit"), "keep_aspect_ratio_policy");
  Attrs aa;
  aa.set_int("antialias", 1);
  expect_error(ok, aa, "antialias");
  ResizeInputs both = ok;
  both.sizes = {1, 1, 4, 4};
  expect_error(both, none, "only one of scales and sizes");
  ResizeInputs neither;
  expect_error(neither, none, "neither scales nor sizes");
  ResizeInputs nonconst = ok;
  nonconst.scales_const = false;
  expect_error(nonconst, none, "constant");
  ResizeInputs short_scales;
  short_scales.scales = {2, 2};
  expect_error(short_scales, none, "scales has 2 values");
  ResizeInputs zero;
  zero.scales = {1, 1, 0, 2};
  expect_error(zero, none, "must be > 0");
  ResizeInputs tiny;
  tiny.scales = {1, 1, 0.25f, 1};
  expect_error(tiny, none, "output dim");
  ResizeInputs bad_sizes;
  bad_sizes.sizes = {1, 1, 0, 2};
  expect_error(bad_sizes, none, "sizes[2]");
  ResizeInputs int_x = ok;
  int_x.x_dtype = DType::kI8;
  expect_error(int_x, none, "float32");
  expect_error(ok, with("coordinate_transformation_mode", "tf_crop_and_resize"), "roi");
  Attrs axes;
  axes.set_ints("axes", {2, 2});
  ResizeInputs two;
  two.scales = {2, 2};
  expect_error(two, axes, "repeated");
}

}  // namespace
}  // namespace orknn::test
