// Broadcasting ops (Add Sub Mul Div Pow Min Max Equal Less Greater Where PRelu): a matrix of
// shape pairs x ops x dtypes against a naive broadcast loop written here, plus hand values.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

struct ShapePair {
  Shape a, b, out;
};

// Includes scalars, rank mismatch, size-1 dims on both sides, and an empty dimension.
const std::vector<ShapePair> kShapePairs = {
    {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
    {{2, 3, 4}, {4}, {2, 3, 4}},
    {{2, 3, 4}, {3, 1}, {2, 3, 4}},
    {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}},
    {{}, {2, 3}, {2, 3}},
    {{2, 3}, {}, {2, 3}},
    {{1}, {5}, {5}},
    {{4, 1}, {1, 5}, {4, 5}},
    {{2, 3, 1, 5}, {3, 4, 1}, {2, 3, 4, 5}},
    {{1, 1, 1}, {2, 1, 3}, {2, 1, 3}},
    {{0, 3}, {1, 3}, {0, 3}},
    {{3, 1, 2}, {3, 4, 2}, {3, 4, 2}},
};

template <typename T>
std::vector<T> make_values(int64_t n, int seed, bool nonzero) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t x = ((i * 7 + seed * 13) % 11) - 5;  // -5..5
    if (nonzero && x == 0) x = 3;
    v[static_cast<size_t>(i)] = static_cast<T>(x) * (std::is_floating_point_v<T> ? T(0.75) : T(1));
  }
  return v;
}

template <typename T>
DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::kF32;
  if constexpr (std::is_same_v<T, int32_t>) return DType::kI32;
  return DType::kI64;
}

// Naive expectation: for every output coordinate, look both inputs up with numpy's rules.
template <typename T, typename R>
std::vector<R> naive(const ShapePair& p, const std::vector<T>& a, const std::vector<T>& b, std::function<R(T, T)> f) {
  std::vector<R> r(static_cast<size_t>(shape_numel(p.out)));
  for (int64_t i = 0; i < shape_numel(p.out); ++i) {
    const auto c = unravel(i, p.out);
    r[static_cast<size_t>(i)] =
        f(a[static_cast<size_t>(broadcast_index(c, p.a))], b[static_cast<size_t>(broadcast_index(c, p.b))]);
  }
  return r;
}

template <typename T>
void check_arith_matrix() {
  struct OpCase {
    OpId op;
    std::function<T(T, T)> f;
    bool nonzero_b;
  };
  const std::vector<OpCase> ops = {
      {OpId::Add, [](T x, T y) { return T(x + y); }, false},
      {OpId::Sub, [](T x, T y) { return T(x - y); }, false},
      {OpId::Mul, [](T x, T y) { return T(x * y); }, false},
      {OpId::Div,
       [](T x, T y) { return std::is_floating_point_v<T> ? T(x / y) : T(std::trunc(double(x) / double(y))); }, true},
      {OpId::Min, [](T x, T y) { return std::min(x, y); }, false},
      {OpId::Max, [](T x, T y) { return std::max(x, y); }, false},
  };
  for (const ShapePair& p : kShapePairs) {
    const auto a = make_values<T>(shape_numel(p.a), 1, false);
    for (const OpCase& o : ops) {
      const auto b = make_values<T>(shape_numel(p.b), 2, o.nonzero_b);
      SCOPED_TRACE(std::string(op_name(o.op)) + " " + shape_str(p.a) + " x " + shape_str(p.b) + " " +
                   dtype_name(dtype_of<T>()));
      OpResult r = ref(o.op, A(), {TensorData::of(p.a, a, dtype_of<T>()), TensorData::of(p.b, b, dtype_of<T>())});
      ASSERT_OK(r.status);
      EXPECT_EQ(r.outputs[0].shape, p.out);
      EXPECT_EQ(r.outputs[0].dtype, dtype_of<T>());
      EXPECT_EQ(r.outputs[0].as<T>(), (naive<T, T>(p, a, b, o.f)));
    }
  }
}

// The x86 Pow by a constant 2 (x * x) against the reference's powf: every output the square rounded
// once; glibc's powf is not always that (4097^2, a tie, and ~0.1% of random values), so the two
// differ by 1 ulp on at most 0.5% of the elements; specials (zeros, infinities,
// NaN, denormals, overflow); other exponents and a broadcasting one stay on the reference.
TEST(PowX86, SquareMatchesReferenceWithinOneUlp) {
  const std::string kernel = "x86_pow2_f32";
  if (!kernel_registered(OpId::Pow, kernel)) GTEST_SKIP() << kernel << " not built";
  std::vector<float> x = random_floats(4099, 3, -50.f, 50.f);
  const float specials[] = {0.f, -0.f, 1.f, -1.f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                            1e-30f, -3e-20f, 1e-42f, 1e20f, -2e19f, 4097.f, 4097.f * 1024.f, 3.4e38f};
  for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); ++i) x[i * 7] = specials[i];
  for (size_t i = 200; i < 1200; ++i) x[i] = std::ldexp(x[i], static_cast<int>(i % 200) - 100);
  for (const Shape& s : {Shape{4099}, Shape{1, 7, 1}, Shape{1, 256, 4, 4}}) {
    const std::vector<float> xs(x.begin(), x.begin() + shape_numel(s));
    for (float e : {2.f, 3.f}) {
      const std::vector<TensorData> in = {f32(s, xs), f32({}, {e}, true)};
      const OpResult want = run_op(OpId::Pow, A(), in, 1, "ref", 1);
      ASSERT_OK(want.status);
      for (int threads : {1, 2}) {
        SCOPED_TRACE(shape_str(s) + " exponent " + std::to_string(e) + " threads " + std::to_string(threads));
        const OpResult r = run_op(OpId::Pow, A(), in, 1, "", threads);
        ASSERT_OK(r.status);
        EXPECT_EQ(r.kernel_name == kernel, e == 2.f) << r.kernel_name;
        const std::vector<float> got = r.outputs[0].as<float>(), ref_v = want.outputs[0].as<float>();
        ASSERT_EQ(got.size(), ref_v.size());
        int differ = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          if (std::isnan(ref_v[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << i;
            continue;
          }
          if (e == 2.f) {  // the square rounded once (exact in double)
            const float sq = static_cast<float>(static_cast<double>(xs[i]) * static_cast<double>(xs[i]));
            EXPECT_EQ(std::memcmp(&got[i], &sq, sizeof(float)), 0) << i << " x " << xs[i];
          }
          if (got[i] == ref_v[i] && std::signbit(got[i]) == std::signbit(ref_v[i])) continue;
          ++differ;
          EXPECT_EQ(got[i], std::nextafter(ref_v[i], got[i])) << i << " x " << xs[i];
        }
        EXPECT_LE(differ, static_cast<int>(got.size() / 200) + 1);
      }
    }
  }
  // A tensor exponent [2, 2] broadcasting a [2, 1] base stays on the reference.
  const OpResult b = run_op(OpId::Pow, A(), {f32({2, 1}, {1.5f, -2.f}), f32({2}, {2.f, 2.f}, true)}, 1, "", 1);
  ASSERT_OK(b.status);
  EXPECT_NE(b.kernel_name, kernel);
}

TEST(BinaryRef, ArithmeticBroadcastMatrixF32) { check_arith_matrix<float>(); }
TEST(BinaryRef, ArithmeticBroadcastMatrixI64) { check_arith_matrix<int64_t>(); }
TEST(BinaryRef, ArithmeticBroadcastMatrixI32) { check_arith_matrix<int32_t>(); }

template <typename T>
void check_compare_matrix() {
  struct OpCase {
    OpId op;
    std::function<uint8_t(T, T)> f;
  };
  const std::vector<OpCase> ops = {
      {OpId::Equal, [](T x, T y) { return uint8_t(x == y); }},
      {OpId::Less, [](T x, T y) { return uint8_t(x < y); }},
      {OpId::Greater, [](T x, T y) { return uint8_t(x > y); }},
  };
  for (const ShapePair& p : kShapePairs) {
    const auto a = make_values<T>(shape_numel(p.a), 1, false);
    const auto b = make_values<T>(shape_numel(p.b), 3, false);
    for (const OpCase& o : ops) {
      SCOPED_TRACE(std::string(op_name(o.op)) + " " + shape_str(p.a) + " x " + shape_str(p.b));
      OpResult r = ref(o.op, A(), {TensorData::of(p.a, a, dtype_of<T>()), TensorData::of(p.b, b, dtype_of<T>())});
      ASSERT_OK(r.status);
      EXPECT_EQ(r.outputs[0].shape, p.out);
      EXPECT_EQ(r.outputs[0].dtype, DType::kBool);
      EXPECT_EQ(r.outputs[0].as<uint8_t>(), (naive<T, uint8_t>(p, a, b, o.f)));
    }
  }
}

TEST(BinaryRef, CompareBroadcastMatrixF32) { check_compare_matrix<float>(); }
TEST(BinaryRef, CompareBroadcastMatrixI64) { check_compare_matrix<int64_t>(); }
TEST(BinaryRef, CompareBroadcastMatrixI32) { check_compare_matrix<int32_t>(); }

// Float32 operands of the output's shape run in nChw16c (element-wise over the bytes); a broadcast
// keeps the node NCHW. Same values either way.
TEST(BinaryRef, SameShapeRunsBlocked) {
  const Shape s{1, 32, 5, 6};
  const std::vector<float> va = random_floats(32 * 30, 11), vb = random_floats(32 * 30, 12);
  for (const Shape& sb : {s, Shape{1, 32, 1, 1}}) {
    const std::vector<float> b(vb.begin(), vb.begin() + shape_numel(sb));
    OpResult nchw = ref(OpId::Sub, A(), {f32(s, va), f32(sb, b)});
    ASSERT_OK(nchw.status);
    int blocked = -1;
    OpResult r = run_op_blocked(OpId::Sub, A(), {f32(s, va), f32(sb, b)}, "ref", 1, &blocked);
    ASSERT_OK(r.status);
    EXPECT_EQ(blocked, sb == s ? 3 : 0);
    EXPECT_EQ(r.outputs[0].as<float>(), nchw.outputs[0].as<float>());
  }
}

TEST(BinaryRef, EqualOnBool) {
  OpResult r = ref(OpId::Equal, A(), {boolean({4}, {0, 0, 1, 1}), boolean({4}, {0, 1, 0, 1})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 1}));
}

TEST(BinaryRef, IntegerDivisionTruncatesTowardZero) {
  OpResult r = ref(OpId::Div, A(), {i64({6}, {7, -7, 7, -7, 1, -1}), i64({6}, {2, 2, -2, -2, 3, 3})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{3, -3, -3, 3, 0, 0}));
  r = ref(OpId::Div, A(), {i32({2}, {-9, 9}), i32({}, {4})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{-2, 2}));
  // Integer division by zero is undefined in ONNX; the kernel must not trap.
  r = ref(OpId::Div, A(), {i64({1}, {5}), i64({1}, {0})});
  ASSERT_OK(r.status);
}

TEST(BinaryRef, FloatHandValues) {
  OpResult r = ref(OpId::Div, A(), {f32({3}, {1.f, -1.f, 0.f}), f32({}, {0.f})});
  ASSERT_OK(r.status);
  const auto v = r.outputs[0].as<float>();
  EXPECT_EQ(v[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(v[2]));
  r = ref(OpId::Sub, A(), {f32({2, 2}, {10.f, 20.f, 30.f, 40.f}), f32({2, 1}, {1.f, 2.f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{9.f, 19.f, 28.f, 38.f}));
}

TEST(BinaryRef, ShapeArithmeticInt64) {
  // What the converter folds: Mul(Gather(Shape(x)), 2), Add with a scalar, Equal to a constant.
  OpResult r = ref(OpId::Mul, A(), {i64c({2}, {3, 224}), i64c({}, {2})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{6, 448}));
  r = ref(OpId::Equal, A(), {i64c({4}, {1, 3, 224, -1}), i64c({}, {-1})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 1}));
}

TEST(BinaryRef, MinMaxVariadic) {
  const TensorData a = f32({2, 3}, {1.f, 5.f, -2.f, 0.f, 7.f, 3.f});
  const TensorData b = f32({3}, {2.f, 2.f, 2.f});
  const TensorData c = f32({2, 1}, {-1.f, 4.f});
  OpResult r = ref(OpId::Max, A(), {a, b, c});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{2, 3}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2.f, 5.f, 2.f, 4.f, 7.f, 4.f}));
  r = ref(OpId::Min, A(), {a, b, c});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{-1.f, -1.f, -2.f, 0.f, 2.f, 2.f}));
  // The broadcast can come from a later input: the first one is expanded.
  r = ref(OpId::Max, A(), {c, b});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2.f, 2.f, 2.f, 4.f, 4.f, 4.f}));
  r = ref(OpId::Min, A(), {a});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), a.as<float>());
  r = ref(OpId::Max, A(), {i64({3}, {1, 9, -4}), i64({3}, {2, 3, -5}), i64({}, {0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{2, 9, 0}));
}

TEST(BinaryRef, MinMaxPropagateNan) {
  const float nan = std::nanf("");
  for (OpId op : {OpId::Min, OpId::Max}) {
    OpResult r = ref(op, A(), {f32({2}, {nan, 1.f}), f32({2}, {1.f, nan})});
    ASSERT_OK(r.status);
    for (float v : r.outputs[0].as<float>()) EXPECT_TRUE(std::isnan(v)) << op_name(op);
  }
}

TEST(BinaryRef, Pow) {
  OpResult r = ref(OpId::Pow, A(), {f32({4}, {2.f, 9.f, -2.f, 4.f}), f32({4}, {3.f, 0.5f, 2.f, -1.f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{8.f, 3.f, 4.f, 0.25f}));
  // Exponent of another dtype (ONNX T2), broadcast from a scalar.
  r = ref(OpId::Pow, A(), {f32({3}, {1.5f, -3.f, 10.f}), i64({}, {2})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kF32);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2.25f, 9.f, 100.f}));
  r = ref(OpId::Pow, A(), {i64({3}, {2, -3, 5}), i64({3}, {10, 3, 0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1024, -27, 1}));
}

TEST(BinaryRef, Where) {
  for (const ShapePair& p : kShapePairs) {
    // cond broadcast against X (shape a) and Y (shape b); cond has shape b's trailing dim only.
    const Shape cshape = p.b.empty() ? Shape{} : Shape{p.b.back()};
    std::vector<uint8_t> cond(static_cast<size_t>(shape_numel(cshape)));
    for (size_t i = 0; i < cond.size(); ++i) cond[i] = i % 2 == 0;
    const auto x = make_values<int64_t>(shape_numel(p.a), 1, false);
    const auto y = make_values<int64_t>(shape_numel(p.b), 4, false);
    OpResult r = ref(OpId::Where, A(), {boolean(cshape, cond), i64(p.a, x), i64(p.b, y)});
    SCOPED_TRACE(shape_str(cshape) + " " + shape_str(p.a) + " " + shape_str(p.b));
    ASSERT_OK(r.status);
    ASSERT_EQ(r.outputs[0].shape, p.out);
    std::vector<int64_t> want(static_cast<size_t>(shape_numel(p.out)));
    for (int64_t i = 0; i < shape_numel(p.out); ++i) {
      const auto c = unravel(i, p.out);
      want[static_cast<size_t>(i)] = cond[static_cast<size_t>(broadcast_index(c, cshape))]
                                         ? x[static_cast<size_t>(broadcast_index(c, p.a))]
                                         : y[static_cast<size_t>(broadcast_index(c, p.b))];
    }
    EXPECT_EQ(r.outputs[0].as<int64_t>(), want);
  }
  // cond with the largest shape, float and uint8 data.
  OpResult r = ref(OpId::Where, A(), {boolean({2, 2}, {1, 0, 0, 1}), f32({}, {1.5f}), f32({2}, {-1.f, -2.f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1.5f, -2.f, -1.f, 1.5f}));
  r = ref(OpId::Where, A(), {boolean({3}, {0, 1, 0}), u8({3}, {1, 2, 3}), u8({3}, {7, 8, 9})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{7, 2, 9}));
}

TEST(BinaryRef, PRelu) {
  // slope [C,1,1] on NCHW (what PyTorch exports), a scalar slope, and a slope along W.
  const Shape xs = {1, 2, 2, 3};
  const auto x = make_values<float>(12, 5, false);
  struct Case {
    Shape slope_shape;
    std::vector<float> slope;
  };
  for (const Case& c : {Case{{2, 1, 1}, {0.1f, 0.5f}}, Case{{1}, {0.25f}}, Case{{3}, {0.1f, 0.2f, 0.3f}},
                        Case{{1, 2, 2, 3}, iota_f(12, 0.05f, 0.05f)}}) {
    SCOPED_TRACE(shape_str(c.slope_shape));
    OpResult r = ref(OpId::PRelu, A(), {f32(xs, x), f32(c.slope_shape, c.slope, true)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, xs);
    std::vector<float> want(12);
    for (int64_t i = 0; i < 12; ++i) {
      const float s = c.slope[static_cast<size_t>(broadcast_index(unravel(i, xs), c.slope_shape))];
      const float v = x[static_cast<size_t>(i)];
      want[static_cast<size_t>(i)] = v < 0 ? v * s : v;
    }
    EXPECT_EQ(r.outputs[0].as<float>(), want);
  }
  // The slope must broadcast to X, not the other way round.
  OpResult r = ref(OpId::PRelu, A(), {f32({2}, {1.f, -1.f}), f32({2, 2}, {0.1f, 0.1f, 0.1f, 0.1f})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "slope")) << r.status.message();
}

// Opset < 7 / PyTorch nn.PReLU(num_parameters=C): slope [C] on an N x C x ... input is one slope
// per channel (the PReLU_*_multiparam cases of the ONNX test data). numpy broadcasting would
// align [C] with the last dim instead, which does not fit, so infer records slope_shape
// [C, 1, ...]. A [C] slope that does fit the last dim keeps numpy semantics.
TEST(BinaryRef, PReluPerChannelSlope) {
  for (const Shape& xs : {Shape{2, 3, 4, 5}, Shape{2, 3, 4}, Shape{1, 3, 2, 2, 2}}) {
    SCOPED_TRACE(shape_str(xs));
    const int64_t count = shape_numel(xs);
    std::vector<float> x(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) x[static_cast<size_t>(i)] = static_cast<float>((i * 7) % 11) - 5.f;
    const std::vector<float> slope = {0.5f, -2.f, 0.25f};
    OpResult r = ref(OpId::PRelu, A(), {f32(xs, x), f32({3}, slope, true)});
    ASSERT_OK(r.status);
    ASSERT_EQ(r.outputs[0].shape, xs);
    const std::vector<float> y = r.outputs[0].as<float>();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t channel = unravel(i, xs)[1];
      const float v = x[static_cast<size_t>(i)];
      EXPECT_EQ(y[static_cast<size_t>(i)], v < 0 ? v * slope[static_cast<size_t>(channel)] : v) << i;
    }
    expect_infer_idempotent(OpId::PRelu, A(), {f32(xs, x), f32({3}, slope, true)});
  }
  // The normalised node says how the slope broadcasts.
  OneNode o = make_node(OpId::PRelu, {{{2, 3, 4, 5}, DType::kF32}, {{3}, DType::kF32}}, A());
  ASSERT_OK(infer(o));
  EXPECT_EQ(o.n.attrs.get_ints("slope_shape"), (std::vector<int64_t>{3, 1, 1}));
  // [3] on [1, 3, 2, 3] is numpy-broadcastable along W: numpy semantics, nothing recorded.
  o = make_node(OpId::PRelu, {{{1, 3, 2, 3}, DType::kF32}, {{3}, DType::kF32}}, A());
  ASSERT_OK(infer(o));
  EXPECT_FALSE(o.n.attrs.has("slope_shape"));
  // [C] with C != dim 1 and not broadcastable stays an error.
  expect_infer_error(OpId::PRelu, {{{2, 3, 4, 5}, DType::kF32}, {{4}, DType::kF32}}, A(), "slope");
}

TEST(BinaryRef, Errors) {
  OpResult r = ref(OpId::Add, A(), {f32({2, 3}, iota_f(6)), f32({4}, iota_f(4))});
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidModel);
  EXPECT_TRUE(contains(r.status.message(), "Add_under_test")) << r.status.message();
  EXPECT_TRUE(contains(r.status.message(), "[2,3]")) << r.status.message();

  r = ref(OpId::Mul, A(), {f32({2}, {1.f, 2.f}), i64({2}, {1, 2})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "dtype")) << r.status.message();

  r = ref(OpId::Less, A(), {boolean({1}, {1}), boolean({1}, {0})});
  EXPECT_FALSE(r.status.ok());

  r = ref(OpId::Where, A(), {f32({1}, {1.f}), f32({1}, {1.f}), f32({1}, {2.f})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "bool")) << r.status.message();

  r = ref(OpId::Where, A(), {boolean({1}, {1}), f32({1}, {1.f}), i64({1}, {2})});
  EXPECT_FALSE(r.status.ok());

  r = ref(OpId::Sub, A(), {f32({1}, {1.f})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "inputs")) << r.status.message();
}

}  // namespace
}  // namespace orknn::test
