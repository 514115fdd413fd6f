// Pad: every mode with positive, zero, negative and mixed pads on ranks 1 to 4 against a naive
// crop-then-pad implementation written here (reflection/wrap by repeated folding), the ONNX
// documentation examples, all parameter-input forms (pads/constant_value/axes inputs, opset-2
// attributes), other dtypes, normalisation and errors.
#include <string>
#include <vector>

#include "ops/int8_test_helpers.h"
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

// Index into an axis of length len for an out-of-range position k, folding step by step.
int64_t fold(int64_t k, int64_t len, const std::string& mode) {
  if (mode == "edge") return std::min(std::max<int64_t>(k, 0), len - 1);
  if (mode == "wrap") {
    while (k < 0) k += len;
    while (k >= len) k -= len;
    return k;
  }
  // reflect (no edge repetition)
  if (len == 1) return 0;
  while (k < 0 || k >= len) {
    if (k < 0) k = -k;
    if (k >= len) k = 2 * (len - 1) - k;
  }
  return k;
}

template <typename T>
std::vector<T> naive_pad(const Shape& s, const std::vector<T>& x, const std::vector<int64_t>& pads,
                         const std::string& mode, T value, Shape* out_shape) {
  const size_t r = s.size();
  // 1. crop the negative pads
  Shape cs(r);
  for (size_t i = 0; i < r; ++i) cs[i] = s[i] + std::min<int64_t>(pads[i], 0) + std::min<int64_t>(pads[r + i], 0);
  std::vector<T> cropped;
  for (int64_t e = 0; e < shape_numel(cs); ++e) {
    int64_t rem = e, src = 0, stride = 1;
    for (size_t d = r; d-- > 0;) {
      const int64_t c = rem % cs[d];
      rem /= cs[d];
      src += (c + std::max<int64_t>(-pads[d], 0)) * stride;
      stride *= s[d];
    }
    cropped.push_back(x[static_cast<size_t>(src)]);
  }
  // 2. pad the positive ones
  Shape os(r);
  for (size_t i = 0; i < r; ++i) os[i] = cs[i] + std::max<int64_t>(pads[i], 0) + std::max<int64_t>(pads[r + i], 0);
  *out_shape = os;
  std::vector<T> y;
  for (int64_t e = 0; e < shape_numel(os); ++e) {
    std::vector<int64_t> idx(r);
    int64_t rem = e;
    for (size_t d = r; d-- > 0;) {
      idx[d] = rem % os[d];
      rem /= os[d];
    }
    bool use_value = false;
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d) {
      int64_t k = idx[d] - std::max<int64_t>(pads[d], 0);
      if (k < 0 || k >= cs[d]) {
        if (mode == "constant") {
          use_value = true;
          break;
        }
        k = fold(k, cs[d], mode);
      }
      src = src * cs[d] + k;
    }
    y.push_back(use_value ? value : cropped[static_cast<size_t>(src)]);
  }
  return y;
}

TEST(PadRef, ModesTimesPads) {
  uint32_t seed = 1;
  const std::vector<Shape> shapes = {{5}, {3, 4}, {2, 3, 4}, {2, 2, 3, 3}};
  for (const Shape& s : shapes) {
    const size_t r = s.size();
    // Pad patterns per axis (begin, end), applied cyclically over the axes.
    const std::vector<std::pair<int64_t, int64_t>> patterns[] = {
        {{0, 0}},           {{1, 2}, {2, 1}}, {{2, 2}}, {{-1, 0}, {0, -1}},  // crop only
        {{-1, 2}, {2, -1}},                                                  // crop one side, pad the other
        {{4, 5}},  // larger than the dim: repeated reflection/wrap
    };
    for (const auto& pattern : patterns) {
      std::vector<int64_t> pads(2 * r);
      for (size_t i = 0; i < r; ++i) {
        pads[i] = pattern[i % pattern.size()].first;
        pads[r + i] = pattern[i % pattern.size()].second;
      }
      for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
        SCOPED_TRACE(shape_str(s) + " pads=" + shape_str(pads) + " mode=" + mode);
        std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(s)), seed++);
        Attrs a;
        a.set_string("mode", mode);
        std::vector<TensorData> in = {TensorData::f32(s, x),
                                      TensorData::i64({static_cast<int64_t>(pads.size())}, pads)};
        if (std::string(mode) == "constant") in.push_back(TensorData::f32({}, {2.5f}, true));
        OpResult r_ = run_op(OpId::Pad, a, in, 1);
        ASSERT_TRUE(r_.status.ok()) << r_.status.message();
        Shape want_shape;
        std::vector<float> want = naive_pad<float>(s, x, pads, mode, 2.5f, &want_shape);
        EXPECT_EQ(r_.outputs[0].shape, want_shape);
        EXPECT_EQ(r_.outputs[0].as<float>(), want);
      }
    }
  }
}

TEST(PadRef, OnnxExamples) {
  const std::vector<float> x = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};
  struct Case {
    const char* mode;
    std::vector<int64_t> pads;
    Shape shape;
    std::vector<float> want;
  };
  const Case cases[] = {
      {"constant", {0, 2, 0, 0}, {3, 4}, {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f}},
      {"reflect", {0, 2, 0, 0}, {3, 4}, {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}},
      {"edge", {0, 2, 0, 0}, {3, 4}, {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}},
      {"wrap", {2, 1, 1, 1}, {6, 4}, {3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f,
                                      3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mode);
    Attrs a;
    a.set_string("mode", c.mode);
    OpResult r = run_op(OpId::Pad, a, {TensorData::f32({3, 2}, x), TensorData::i64({4}, c.pads)}, 1);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.outputs[0].shape, c.shape);
    EXPECT_EQ(r.outputs[0].as<float>(), c.want);
  }
}

TEST(PadRef, AxesInputAndAttributeForm) {
  std::vector<float> x = random_floats(24, 5);
  const Shape s = {2, 3, 4};
  // axes [-1, 1]: pads [w_begin, c_begin, w_end, c_end].
  OpResult r = run_op(OpId::Pad, Attrs(),
                      {TensorData::f32(s, x), TensorData::i64({4}, {1, 2, 0, -1}), TensorData::f32({1}, {-3.f}, true),
                       TensorData::i64({2}, {-1, 1})},
                      1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  Shape want_shape;
  std::vector<float> want = naive_pad<float>(s, x, {0, 2, 1, 0, -1, 0}, "constant", -3.f, &want_shape);
  EXPECT_EQ(r.outputs[0].shape, want_shape);
  EXPECT_EQ(r.outputs[0].as<float>(), want);

  // Opset 2: pads and value are attributes.
  Attrs a;
  a.set_ints("pads", {0, 1, 1, 0, 0, 2});
  a.set_float("value", 7.f);
  r = run_op(OpId::Pad, a, {TensorData::f32(s, x)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  want = naive_pad<float>(s, x, {0, 1, 1, 0, 0, 2}, "constant", 7.f, &want_shape);
  EXPECT_EQ(r.outputs[0].shape, want_shape);
  EXPECT_EQ(r.outputs[0].as<float>(), want);

  // An absent constant_value (empty input slot) means 0.
  r = run_op(OpId::Pad, Attrs(), {TensorData::f32(s, x), TensorData::i64({6}, {1, 0, 0, 0, 0, 1}), TensorData::none()},
             1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  want = naive_pad<float>(s, x, {1, 0, 0, 0, 0, 1}, "constant", 0.f, &want_shape);
  EXPECT_EQ(r.outputs[0].as<float>(), want);
}

TEST(PadRef, IntegerDtypes) {
  const Shape s = {2, 3};
  std::vector<int64_t> x64 = {1, 2, 3, 4, 5, 6};
  std::vector<int8_t> x8 = {-1, 2, -3, 4, -5, 6};
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    Attrs a;
    a.set_string("mode", mode);
    const std::vector<int64_t> pads = {1, 2, 0, 1};
    OpResult r = run_op(
        OpId::Pad, a,
        {TensorData::of<int64_t>(s, x64, DType::kI64, false), TensorData::i64({4}, pads), TensorData::i64({}, {-9})},
        1);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    Shape ws;
    EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
    EXPECT_EQ(r.outputs[0].as<int64_t>(), naive_pad<int64_t>(s, x64, pads, mode, -9, &ws));
    r = run_op(OpId::Pad, a,
               {TensorData::of<int8_t>(s, x8, DType::kI8, false), TensorData::i64({4}, pads),
                TensorData::of<int8_t>({}, {7}, DType::kI8, true)},
               1);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
    EXPECT_EQ(r.outputs[0].as<int8_t>(), naive_pad<int8_t>(s, x8, pads, mode, 7, &ws));
  }
}

// The fast quantized Pad (row copies) against the naive crop-then-pad, with the constant
// quantize(value) (value 0 gives zp; others round, and saturate): every mode, positive, negative
// and mixed pads on every axis of 4-D tensors (also the channel axis, which is innermost in the
// blocked NHWC layout), rows longer than a cache line, ranks 1 to 3, 1 and 2 threads, NCHW and
// channels-last. Where built it is the kernel chosen for quantized Pads.
TEST(QuantPadFast, MatchesNaivePadBitExactly) {
  using q8t::qp;
  const std::string kernel = "x86_pad_int8";
  if (!kernel_registered(OpId::Pad, kernel)) GTEST_SKIP() << kernel << " not built";
  struct Case {
    Shape s;
    std::vector<int64_t> pads;
    float value;
  };
  const std::vector<Case> cases = {
      {{1, 5, 7, 9}, {0, 0, 1, 1, 0, 0, 1, 1}, 0.f},          // inception's Pad before its pools
      {{2, 3, 4, 70}, {0, 1, 2, 3, 1, 0, 1, 65}, 0.3f},       // every axis, a row past 64 bytes
      {{2, 6, 5, 5}, {0, -1, 1, -2, 0, -2, -1, 2}, -0.77f},   // crops mixed with pads
      {{1, 2, 3, 3}, {0, 0, 2, 2, 0, 0, 2, 2}, 1000.f},       // value saturates at 127
      {{1, 3, 4, 4}, {0, 2, 0, 0, 0, 3, 0, 0}, -1000.f},      // channels only (saturates at -128)
      {{1, 1, 1, 1}, {0, 0, 3, 2, 0, 0, 1, 4}, 0.05f},        // one element padded far
      {{17}, {5, 9}, 0.125f},
      {{4, 33}, {-1, 2, 2, -30}, 0.f},
      {{3, 2, 5}, {1, 1, 1, 1, 1, 1}, -0.5f},
  };
  const QuantParams q = qp(0.1f, -7);
  uint32_t seed = 41;
  for (const Case& c : cases)
    for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
      const std::string m = mode;
      bool pads_fit = true;  // reflect and wrap need the pad within the kept length (infer)
      for (size_t d = 0; d < c.s.size() && m != "constant"; ++d) {
        const int64_t kept = c.s[d] + std::min<int64_t>(c.pads[d], 0) + std::min<int64_t>(c.pads[c.s.size() + d], 0);
        if (kept < 1) pads_fit = false;
      }
      if (!pads_fit) continue;
      const std::vector<int8_t> x = q8t::random_i8(static_cast<size_t>(shape_numel(c.s)), seed++);
      Attrs a;
      a.set_string("mode", mode);
      a.set_ints("pads", c.pads);
      a.set_float("value", c.value);
      Shape ws;
      const int8_t value = static_cast<int8_t>(q8t::quantize_naive(c.value, q));
      const std::vector<int8_t> want = naive_pad<int8_t>(c.s, x, c.pads, mode, value, &ws);
      const TensorData in = q8t::q8(c.s, x, q);
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(mode) + " " + shape_str(c.s) + " threads " + std::to_string(threads));
        OpResult r = run_op(OpId::Pad, a, {in}, 1, kernel, threads, {q});
        ASSERT_TRUE(r.status.ok()) << r.status.message();
        EXPECT_EQ(r.outputs[0].shape, ws);
        EXPECT_EQ(r.outputs[0].as<int8_t>(), want);
        if (c.s.size() != 4) continue;
        int blocked = 0;
        OpResult b = run_op_blocked(OpId::Pad, a, {in}, kernel, threads, &blocked, {q});
        ASSERT_TRUE(b.status.ok()) << b.status.message();
        EXPECT_EQ(blocked, 2);
        EXPECT_EQ(b.outputs[0].as<int8_t>(), want) << "NHWC";
      }
      OpResult best = run_op(OpId::Pad, a, {in}, 1, "", 1, {q});
      ASSERT_TRUE(best.status.ok()) << best.status.message();
      EXPECT_EQ(best.kernel_name, kernel);
      EXPECT_EQ(best.outputs[0].as<int8_t>(), want);
    }
}

// The float row-copy kernel against the reference kernel, bit for bit (both copy the elements),
// every mode, crops, a value that is not 0, 1 and 2 threads.
TEST(PadFastF32, MatchesReferenceBitExactly) {
  const std::string kernel = "x86_pad_f32";
  if (!kernel_registered(OpId::Pad, kernel)) GTEST_SKIP() << kernel << " not built";
  struct Case {
    Shape s;
    std::vector<int64_t> pads;
  };
  const std::vector<Case> cases = {
      {{1, 64, 32, 32}, {0, 0, 0, 0, 0, 0, 1, 1}},  // MaxViT's Pad before a stride-2 convolution
      {{2, 3, 4, 70}, {0, 1, 2, 3, 1, 0, 1, 65}},
      {{2, 6, 5, 5}, {0, -1, 1, -2, 0, -2, -1, 2}},
      {{17}, {5, 9}},
      {{3, 2, 5}, {1, 1, 1, 1, 1, 1}},
  };
  uint32_t seed = 7;
  for (const Case& c : cases)
    for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
      Attrs a;
      a.set_string("mode", mode);
      a.set_ints("pads", c.pads);
      a.set_float("value", -1.25f);
      const TensorData in = TensorData::f32(c.s, random_floats(static_cast<size_t>(shape_numel(c.s)), seed++, -2.f, 2.f));
      const OpResult ref = run_op(OpId::Pad, a, {in}, 1, "ref");
      ASSERT_TRUE(ref.status.ok()) << ref.status.message();
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(mode) + " " + shape_str(c.s) + " threads " + std::to_string(threads));
        const OpResult r = run_op(OpId::Pad, a, {in}, 1, "", threads);
        ASSERT_TRUE(r.status.ok()) << r.status.message();
        EXPECT_EQ(r.kernel_name, kernel);
        EXPECT_EQ(r.outputs[0].shape, ref.outputs[0].shape);
        EXPECT_EQ(r.outputs[0].bytes, ref.outputs[0].bytes);
      }
    }
}

// ---------------------------------------------------------------- infer

TEST(PadInfer, NormalisesAndIsIdempotent) {
  Graph g;
  Node n;
  n.name = "pad";
  n.op = OpId::Pad;
  const int64_t pads[] = {1, -1};
  const float value = 4.f;
  const int64_t axes[] = {-1};
  n.inputs = {g.add_tensor("x", {2, 3}, DType::kF32), g.add_const("p", {2}, DType::kI64, pads, sizeof(pads)),
              g.add_const("v", {}, DType::kF32, &value, sizeof(value)),
              g.add_const("a", {1}, DType::kI64, axes, sizeof(axes))};
  n.outputs = {g.add_tensor("y", {}, DType::kF32)};
  ASSERT_TRUE(infer_Pad(g, n).ok());
  EXPECT_EQ(n.attrs.get_ints("pads"), (std::vector<int64_t>{0, 1, 0, -1}));
  EXPECT_FLOAT_EQ(n.attrs.get_float("value", 0), 4.f);
  EXPECT_EQ(n.attrs.get_string("mode", ""), "constant");
  EXPECT_EQ(n.inputs, (std::vector<int>{n.inputs[0], -1, -1, -1}));
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{2, 3}));
  expect_reinfer_unchanged(g, n);
}

struct PadInputs {
  Shape x = {2, 3};
  DType x_dtype = DType::kF32;
  std::vector<int64_t> pads = {0, 0, 0, 0};
  bool pads_const = true;
  bool with_pads = true;
  bool with_value = false;
  DType value_dtype = DType::kF32;
  std::vector<int64_t> axes;
};

void expect_error(const PadInputs& p, const Attrs& a, const std::string& fragment) {
  OneNode o = make_node(OpId::Pad, {{p.x, p.x_dtype}}, a);
  Graph& g = o.g;
  Node& n = o.n;
  if (p.with_pads || p.with_value || !p.axes.empty()) {
    if (!p.with_pads) {
      n.inputs.push_back(-1);
    } else if (p.pads_const) {
      n.inputs.push_back(
          g.add_const("pads", {static_cast<int64_t>(p.pads.size())}, DType::kI64, p.pads.data(), p.pads.size() * 8));
    } else {
      n.inputs.push_back(g.add_tensor("pads", {static_cast<int64_t>(p.pads.size())}, DType::kI64));
    }
  }
  if (p.with_value || !p.axes.empty()) {
    const uint64_t zero = 0;
    n.inputs.push_back(p.with_value ? g.add_const("v", {}, p.value_dtype, &zero, dtype_size(p.value_dtype)) : -1);
  }
  if (!p.axes.empty())
    n.inputs.push_back(
        g.add_const("axes", {static_cast<int64_t>(p.axes.size())}, DType::kI64, p.axes.data(), p.axes.size() * 8));
  expect_invalid_model(infer(o), fragment);
}

TEST(PadInfer, Errors) {
  Attrs none;
  PadInputs p;
  p.pads = {1, 1};
  expect_error(p, none, "pads has 2 values");
  p = PadInputs();
  p.pads_const = false;
  expect_error(p, none, "constant");
  p = PadInputs();
  p.with_pads = false;
  expect_error(p, none, "pads are missing");
  p = PadInputs();
  Attrs mode;
  mode.set_string("mode", "symmetric");
  expect_error(p, mode, "mode");
  p = PadInputs();
  p.pads = {-3, 0, 0, 0};
  expect_error(p, none, "remove more");
  p = PadInputs();
  p.pads = {-2, 0, 1, 0};  // crops the whole axis, then reflect has nothing to read
  Attrs reflect;
  reflect.set_string("mode", "reflect");
  expect_error(p, reflect, "at least one element");
  p = PadInputs();
  p.with_value = true;
  p.value_dtype = DType::kI64;
  expect_error(p, none, "constant_value dtype");
  p = PadInputs();
  p.pads = {1, 1, 1, 1};
  p.axes = {1, -1};
  expect_error(p, none, "repeated");
  p.axes = {0, 2};
  expect_error(p, none, "out of range");
  p = PadInputs();
  p.pads = {1, 1};
  p.axes = {0, 1};
  expect_error(p, none, "2 * 2 axes");
}

}  // namespace
}  // namespace orknn::test
