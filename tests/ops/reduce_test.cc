// Reduce* and ArgMax: every axes subset x keepdims x kind against a naive loop over coordinates.
#include <cmath>
#include <limits>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

enum class Kind { kMean, kSum, kMax, kMin, kProd, kL2 };

struct KindInfo {
  Kind kind;
  OpId op;
};
const KindInfo kKinds[] = {{Kind::kMean, OpId::ReduceMean}, {Kind::kSum, OpId::ReduceSum},
                           {Kind::kMax, OpId::ReduceMax},   {Kind::kMin, OpId::ReduceMin},
                           {Kind::kProd, OpId::ReduceProd}, {Kind::kL2, OpId::ReduceL2}};

// For each output element, gathers the input elements whose non-reduced coordinates match.
std::vector<double> naive_reduce(const std::vector<double>& x, const Shape& s, const std::vector<int64_t>& axes,
                                 Kind kind, Shape* out_keep) {
  Shape keep = s;
  for (int64_t a : axes) keep[static_cast<size_t>(a)] = 1;
  *out_keep = keep;
  const int64_t n_out = shape_numel(keep);
  std::vector<std::vector<double>> groups(static_cast<size_t>(n_out));
  for (int64_t i = 0; i < shape_numel(s); ++i) {
    auto c = unravel(i, s);
    for (int64_t a : axes) c[static_cast<size_t>(a)] = 0;
    int64_t j = 0;
    for (size_t d = 0; d < c.size(); ++d) j = j * keep[d] + c[d];
    groups[static_cast<size_t>(j)].push_back(x[static_cast<size_t>(i)]);
  }
  std::vector<double> r;
  for (const auto& g : groups) {
    double v = 0;
    switch (kind) {
      case Kind::kMean:
        for (double e : g) v += e;
        v /= static_cast<double>(g.size());
        break;
      case Kind::kSum:
        for (double e : g) v += e;
        break;
      case Kind::kMax:
        v = -INFINITY;
        for (double e : g) v = std::max(v, e);
        break;
      case Kind::kMin:
        v = INFINITY;
        for (double e : g) v = std::min(v, e);
        break;
      case Kind::kProd:
        v = 1;
        for (double e : g) v *= e;
        break;
      case Kind::kL2:
        for (double e : g) v += e * e;
        v = std::sqrt(v);
        break;
    }
    r.push_back(v);
  }
  return r;
}

Shape drop_axes(const Shape& keep, const std::vector<int64_t>& axes) {
  Shape r;
  for (size_t d = 0; d < keep.size(); ++d)
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) == axes.end()) r.push_back(keep[d]);
  return r;
}

TEST(ReduceRef, AllAxesSubsetsF32) {
  const Shape s = {2, 3, 4};
  // Values near 1 so that ReduceProd stays well-conditioned.
  const std::vector<float> x = random_floats(24, 7, 0.5f, 1.5f);
  const std::vector<double> xd(x.begin(), x.end());
  const std::vector<std::vector<int64_t>> subsets = {{0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const KindInfo& k : kKinds) {
    for (const auto& axes : subsets) {
      for (int keepdims : {0, 1}) {
        SCOPED_TRACE(std::string(op_name(k.op)) + " axes " + shape_str(axes) + " keepdims " + std::to_string(keepdims));
        Shape keep;
        const auto want = naive_reduce(xd, s, axes, k.kind, &keep);
        const Shape want_shape = keepdims ? keep : drop_axes(keep, axes);
        // Axes as the attribute (older opsets) and as the constant input (opset 18).
        const Attrs by_attr = A().ints("axes", axes).i("keepdims", keepdims);
        const Attrs by_input = A().i("keepdims", keepdims);
        for (int form = 0; form < 2; ++form) {
          std::vector<TensorData> in = {f32(s, x)};
          if (form == 1) in.push_back(i64c({static_cast<int64_t>(axes.size())}, axes));
          OpResult r = ref(k.op, form == 0 ? by_attr : by_input, in);
          ASSERT_OK(r.status);
          EXPECT_EQ(r.outputs[0].shape, want_shape);
          expect_near_all(r.outputs[0].as<float>(), want, 1e-6, "form " + std::to_string(form));
          expect_infer_idempotent(k.op, form == 0 ? by_attr : by_input, in);
        }
      }
    }
  }
}

// The x86 ReduceMean/ReduceSum over trailing axes against the reference: within one float ulp
// (both sum in double and round once; the kernel's sums are reassociated), both axes forms,
// keepdims, 1 and 2 threads; other axes stay on the reference.
TEST(ReduceX86, TrailingAxesWithinOneUlp) {
  const std::string kernel = "x86_reduce_sum_f32";
  if (!kernel_registered(OpId::ReduceMean, kernel)) GTEST_SKIP() << kernel << " not built";
  struct Case {
    Shape s;
    std::vector<int64_t> axes;
    bool fast;
  };
  const std::vector<Case> cases = {{{1, 256, 4, 18}, {0, 1, 2, 3}, true}, {{3, 5, 77}, {2}, true},
                                   {{2, 3, 4}, {1, 2}, true},           {{7, 33}, {1}, true},
                                   {{1, 1}, {0, 1}, true},              {{40000}, {0}, true},
                                   {{3, 5, 7}, {0}, false},             {{3, 5, 7}, {0, 2}, false}};
  uint32_t seed = 5;
  for (const Case& c : cases)
    for (OpId op : {OpId::ReduceMean, OpId::ReduceSum})
      for (int keepdims : {0, 1})
        for (int form = 0; form < 2; ++form) {
          const std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(c.s)), seed++, -2.f, 3.f);
          std::vector<TensorData> in = {f32(c.s, x)};
          Attrs at = A().i("keepdims", keepdims);
          if (form == 0) at.set_ints("axes", c.axes);
          else in.push_back(i64c({static_cast<int64_t>(c.axes.size())}, c.axes));
          const OpResult want = run_op(op, at, in, 1, "ref", 1);
          ASSERT_OK(want.status);
          for (int threads : {1, 2}) {
            SCOPED_TRACE(std::string(op_name(op)) + " " + shape_str(c.s) + " axes " + shape_str(c.axes) + " threads " +
                         std::to_string(threads));
            const OpResult r = run_op(op, at, in, 1, "", threads);
            ASSERT_OK(r.status);
            EXPECT_EQ(r.kernel_name == kernel, c.fast) << r.kernel_name;
            EXPECT_EQ(r.outputs[0].shape, want.outputs[0].shape);
            const std::vector<float> got = r.outputs[0].as<float>(), ref_v = want.outputs[0].as<float>();
            ASSERT_EQ(got.size(), ref_v.size());
            for (size_t i = 0; i < got.size(); ++i) {
              const float ulp = std::nextafter(std::fabs(ref_v[i]), std::numeric_limits<float>::infinity()) -
                                std::fabs(ref_v[i]);
              EXPECT_LE(std::fabs(got[i] - ref_v[i]), ulp) << i;
            }
          }
        }
}

TEST(ReduceRef, NegativeAxesAndDefaults) {
  const Shape s = {2, 3, 4};
  const std::vector<float> x = iota_f(24);
  // axes -1 == 2; keepdims defaults to 1.
  OpResult r = ref(OpId::ReduceSum, A().ints("axes", {-1}), {f32(s, x)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{2, 3, 1}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{6, 22, 38, 54, 70, 86}));
  // No axes: reduce everything (sum 0..23 = 276).
  r = ref(OpId::ReduceSum, A().i("keepdims", 0), {f32(s, x)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{});
  EXPECT_EQ(r.outputs[0].as<float>(), std::vector<float>{276.f});
  // Empty axes input with noop_with_empty_axes: identity.
  r = ref(OpId::ReduceMean, A().i("noop_with_empty_axes", 1), {f32(s, x), i64c({0}, {})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, s);
  EXPECT_EQ(r.outputs[0].as<float>(), x);
  expect_infer_idempotent(OpId::ReduceMean, A().i("noop_with_empty_axes", 1), {f32(s, x), i64c({0}, {})});
  // Empty axes without noop: everything, keepdims -> [1,1,1].
  r = ref(OpId::ReduceMax, A(), {f32(s, x), i64c({0}, {})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{1, 1, 1}));
  EXPECT_EQ(r.outputs[0].as<float>(), std::vector<float>{23.f});
}

TEST(ReduceRef, Int64AndInt32) {
  const Shape s = {2, 3};
  const std::vector<int64_t> x = {1, -2, 3, 4, 5, -6};
  struct Case {
    OpId op;
    std::vector<int64_t> axis1;
    std::vector<int64_t> axis0;
  };
  const std::vector<Case> cases = {
      {OpId::ReduceSum, {2, 3}, {5, 3, -3}},    {OpId::ReduceMax, {3, 5}, {4, 5, 3}},
      {OpId::ReduceMin, {-2, -6}, {1, -2, -6}}, {OpId::ReduceProd, {-6, -120}, {4, -10, -18}},
      {OpId::ReduceMean, {0, 1}, {2, 1, -1}},  // integer mean truncates: 2/3 -> 0, 3/3 -> 1, -3/2 -> -1
  };
  for (const Case& c : cases) {
    OpResult r = ref(c.op, A().ints("axes", {1}).i("keepdims", 0), {i64(s, x)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
    EXPECT_EQ(r.outputs[0].as<int64_t>(), c.axis1) << op_name(c.op);
    r = ref(c.op, A().ints("axes", {0}).i("keepdims", 0), {i64(s, x)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].as<int64_t>(), c.axis0) << op_name(c.op);
    std::vector<int32_t> x32(x.begin(), x.end()), w32(c.axis1.begin(), c.axis1.end());
    r = ref(c.op, A().ints("axes", {1}).i("keepdims", 0), {i32(s, x32)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].as<int32_t>(), w32) << op_name(c.op);
  }
}

TEST(ReduceRef, HandValues) {
  OpResult r = ref(OpId::ReduceL2, A().ints("axes", {1}).i("keepdims", 0), {f32({2, 2}, {3.f, 4.f, 5.f, 12.f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{5.f, 13.f}));
  r = ref(OpId::ReduceMean, A().ints("axes", {2, 3}), {f32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{1, 2, 1, 1}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2.5f, 25.f}));
  r = ref(OpId::ReduceMax, A().ints("axes", {0}), {f32({3}, {1.f, std::nanf(""), 2.f})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(std::isnan(r.outputs[0].as<float>()[0]));
}

TEST(ReduceRef, NormalisedAttributes) {
  Graph g;
  Node n;
  n.name = "r";
  n.op = OpId::ReduceMean;
  n.inputs = {g.add_tensor("x", {2, 3, 4, 5}, DType::kF32),
              g.add_const("axes", {2}, DType::kI64, std::vector<int64_t>{-1, 1}.data(), 16)};
  n.outputs = {g.add_tensor("y", {}, DType::kF32)};
  ASSERT_OK(find_op(OpId::ReduceMean)->infer(g, n));
  EXPECT_EQ(n.inputs[1], -1);
  EXPECT_EQ(n.attrs.get_ints("axes"), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(n.attrs.get_int("keepdims", -1), 1);
  EXPECT_EQ(n.attrs.get_int("noop_with_empty_axes", -1), 0);
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{2, 1, 4, 1}));
}

TEST(ReduceRef, Errors) {
  // Axes computed at run time.
  OpResult r = ref(OpId::ReduceSum, A(), {f32({2, 2}, iota_f(4)), i64({1}, {0}, false)});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "ReduceSum_under_test")) << r.status.message();
  EXPECT_TRUE(contains(r.status.message(), "--input-shape")) << r.status.message();
  r = ref(OpId::ReduceSum, A().ints("axes", {2}), {f32({2, 2}, iota_f(4))});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "axis 2")) << r.status.message();
  r = ref(OpId::ReduceMax, A().ints("axes", {1, -1}), {f32({2, 2}, iota_f(4))});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "twice")) << r.status.message();
  r = ref(OpId::ReduceMean, A(), {boolean({2}, {0, 1})});
  EXPECT_FALSE(r.status.ok());
}

// ---- ArgMax ----

std::vector<int64_t> naive_argmax(const std::vector<float>& x, const Shape& s, int64_t axis, bool last) {
  Shape keep = s;
  keep[static_cast<size_t>(axis)] = 1;
  std::vector<int64_t> best(static_cast<size_t>(shape_numel(keep)), -1);
  std::vector<float> best_v(best.size(), -INFINITY);
  for (int64_t i = 0; i < shape_numel(s); ++i) {
    auto c = unravel(i, s);
    const int64_t k = c[static_cast<size_t>(axis)];
    c[static_cast<size_t>(axis)] = 0;
    int64_t j = 0;
    for (size_t d = 0; d < c.size(); ++d) j = j * keep[d] + c[d];
    const float v = x[static_cast<size_t>(i)];
    auto& b = best[static_cast<size_t>(j)];
    auto& bv = best_v[static_cast<size_t>(j)];
    if (b < 0 || v > bv || (last && v == bv)) {
      b = k;
      bv = v;
    }
  }
  return best;
}

TEST(ArgMaxRef, Matrix) {
  const Shape s = {3, 4, 5};
  // Few distinct values, so ties exist and select_last_index matters.
  std::vector<float> x(60);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 5);
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    for (int keepdims : {0, 1}) {
      for (int last : {0, 1}) {
        SCOPED_TRACE("axis " + std::to_string(axis) + " keepdims " + std::to_string(keepdims) + " last " +
                     std::to_string(last));
        const Attrs at = A().i("axis", axis).i("keepdims", keepdims).i("select_last_index", last);
        OpResult r = ref(OpId::ArgMax, at, {f32(s, x)});
        ASSERT_OK(r.status);
        const int64_t a = axis < 0 ? axis + 3 : axis;
        Shape want_shape = s;
        if (keepdims)
          want_shape[static_cast<size_t>(a)] = 1;
        else
          want_shape.erase(want_shape.begin() + a);
        EXPECT_EQ(r.outputs[0].shape, want_shape);
        EXPECT_EQ(r.outputs[0].dtype, DType::kI64);
        EXPECT_EQ(r.outputs[0].as<int64_t>(), naive_argmax(x, s, a, last));
        expect_infer_idempotent(OpId::ArgMax, at, {f32(s, x)});
      }
    }
  }
}

TEST(ArgMaxRef, HandValuesAndInts) {
  OpResult r = ref(OpId::ArgMax, A().i("axis", 1), {f32({2, 3}, {1.f, 9.f, 9.f, -1.f, -5.f, -0.5f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{2, 1}));
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1, 2}));
  r = ref(OpId::ArgMax, A().i("axis", 1).i("select_last_index", 1), {f32({2, 3}, {1.f, 9.f, 9.f, -1.f, -5.f, -0.5f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{2, 2}));
  r = ref(OpId::ArgMax, A().i("keepdims", 0), {i64({4}, {3, 8, -1, 8})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, Shape{});
  EXPECT_EQ(r.outputs[0].as<int64_t>(), std::vector<int64_t>{1});
  r = ref(OpId::ArgMax, A().i("axis", 2), {f32({2, 2}, iota_f(4))});
  EXPECT_FALSE(r.status.ok());
}

}  // namespace
}  // namespace orknn::test
