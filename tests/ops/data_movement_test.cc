// Concat, Split, Slice, Transpose, Expand, Tile: parameter matrices against naive coordinate
// loops written here (Slice: Python's slice.indices rules, which ONNX Slice follows).
#include <algorithm>
#include <limits>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

// ---- Concat ----

TEST(ConcatRef, AxesAndInputs) {
  const Shape base = {2, 3, 4};
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    std::vector<Shape> shapes;
    for (int64_t len : {1, 3, 2}) {
      Shape s = base;
      s[a] = len;
      shapes.push_back(s);
    }
    std::vector<TensorData> ins;
    std::vector<std::vector<float>> vals;
    for (size_t i = 0; i < shapes.size(); ++i) {
      vals.push_back(iota_f(static_cast<size_t>(shape_numel(shapes[i])), 100.f * static_cast<float>(i)));
      ins.push_back(f32(shapes[i], vals.back()));
    }
    OpResult r = ref(OpId::Concat, A().i("axis", axis), ins);
    ASSERT_OK(r.status);
    Shape out = base;
    out[a] = 6;
    ASSERT_EQ(r.outputs[0].shape, out);
    // Naive: output coordinate along `a` selects the input and its local coordinate.
    std::vector<float> want;
    for (int64_t i = 0; i < shape_numel(out); ++i) {
      auto c = unravel(i, out);
      size_t k = 0;
      while (c[a] >= shapes[k][a]) c[a] -= shapes[k++][a];
      int64_t j = 0;
      for (size_t d = 0; d < c.size(); ++d) j = j * shapes[k][d] + c[d];
      want.push_back(vals[k][static_cast<size_t>(j)]);
    }
    EXPECT_EQ(r.outputs[0].as<float>(), want) << "axis " << axis;
    expect_infer_idempotent(OpId::Concat, A().i("axis", axis), ins);
  }
}

// On the channel axis of 4-D activations Concat also runs blocked (nChw16c: every channel count a
// multiple of 16; or NHWC): the blocked run, converted back, equals the NCHW one. Another axis, or a
// constant input, keeps it NCHW.
TEST(ConcatRef, BlockedChannelsMatchNchw) {
  const std::vector<float> va = iota_f(2 * 16 * 3 * 5, 0.f), vb = iota_f(2 * 32 * 3 * 5, 10000.f);
  const std::vector<TensorData> ins = {f32({2, 16, 3, 5}, va), f32({2, 32, 3, 5}, vb)};
  const OpResult nchw = ref(OpId::Concat, A().i("axis", 1), ins);
  ASSERT_OK(nchw.status);
  int blocked = 0;
  const OpResult b = run_op_blocked(OpId::Concat, A().i("axis", 1), ins, "ref", 1, &blocked);
  ASSERT_OK(b.status);
  EXPECT_EQ(blocked, 3);
  EXPECT_EQ(b.outputs[0].as<float>(), nchw.outputs[0].as<float>());

  const std::vector<TensorData> rows = {f32({2, 16, 3, 5}, va), f32({2, 16, 3, 5}, va)};
  ASSERT_OK(run_op_blocked(OpId::Concat, A().i("axis", 2), rows, "ref", 1, &blocked).status);
  EXPECT_EQ(blocked, 0);
  const std::vector<TensorData> with_const = {f32({2, 16, 3, 5}, va), f32({2, 32, 3, 5}, vb, true)};
  ASSERT_OK(run_op_blocked(OpId::Concat, A().i("axis", 1), with_const, "ref", 1, &blocked).status);
  EXPECT_EQ(blocked, 0);
  // Channel counts nChw16c would pad: blocked only where float is kept NHWC (kernel.h
  // kFloatBlockedNhwc), where a pixel's channels from each input are one run.
  const std::vector<TensorData> odd = {f32({2, 3, 3, 5}, iota_f(2 * 3 * 15, 0.f)),
                                       f32({2, 5, 3, 5}, iota_f(2 * 5 * 15, 500.f))};
  const OpResult odd_nchw = ref(OpId::Concat, A().i("axis", 1), odd);
  ASSERT_OK(odd_nchw.status);
  const OpResult odd_blocked = run_op_blocked(OpId::Concat, A().i("axis", 1), odd, "ref", 1, &blocked);
  ASSERT_OK(odd_blocked.status);
  EXPECT_EQ(blocked, kFloatBlockedNhwc ? 3 : 0);
  EXPECT_EQ(odd_blocked.outputs[0].as<float>(), odd_nchw.outputs[0].as<float>());
}

TEST(ConcatRef, ShapeVectorsAndEmptyInputs) {
  // Concat of int64 shape pieces, as in Reshape(x, Concat(Shape(x)[0:1], [-1])).
  OpResult r = ref(OpId::Concat, A().i("axis", 0), {i64c({1}, {8}), i64c({0}, {}), i64c({2}, {-1, 4})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{8, -1, 4}));
  r = ref(OpId::Concat, A().i("axis", 1), {u8({2, 1}, {1, 2}), u8({2, 2}, {3, 4, 5, 6})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{1, 3, 4, 2, 5, 6}));
  r = ref(OpId::Concat, A().i("axis", 0), {f32({2}, {1.f, 2.f})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1.f, 2.f}));
}

TEST(ConcatRef, Errors) {
  EXPECT_FALSE(ref(OpId::Concat, A(), {f32({1}, {1.f}), f32({1}, {2.f})}).status.ok());  // no axis
  OpResult r = ref(OpId::Concat, A().i("axis", 0), {f32({1, 2}, {1.f, 2.f}), f32({1, 3}, {1.f, 2.f, 3.f})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "[1,3]")) << r.status.message();
  EXPECT_FALSE(ref(OpId::Concat, A().i("axis", 0), {f32({1}, {1.f}), i64({1}, {2})}).status.ok());
  EXPECT_FALSE(ref(OpId::Concat, A().i("axis", 2), {f32({1, 2}, {1.f, 2.f})}).status.ok());
}

// ---- Split ----

struct SplitCase {
  const char* label;
  Attrs attrs;
  std::vector<TensorData> extra;
  int outputs;
  std::vector<int64_t> sizes;
};

TEST(SplitRef, SizesFromEverySource) {
  const Shape in = {2, 7};
  const std::vector<float> x = iota_f(14);
  const std::vector<SplitCase> cases = {
      {"input", A().i("axis", 1), {i64c({3}, {2, 4, 1})}, 3, {2, 4, 1}},
      {"attr", A().i("axis", -1).ints("split", {3, 4}), {}, 2, {3, 4}},
      {"num_outputs_uneven", A().i("axis", 1).i("num_outputs", 3), {}, 3, {3, 3, 1}},
      {"num_outputs_even", A().i("axis", 1).i("num_outputs", 7), {}, 7, {1, 1, 1, 1, 1, 1, 1}},
      {"zero_sized_part", A().i("axis", 1), {i64c({3}, {0, 7, 0})}, 3, {0, 7, 0}},
  };
  for (const SplitCase& c : cases) {
    SCOPED_TRACE(c.label);
    std::vector<TensorData> ins = {f32(in, x)};
    ins.insert(ins.end(), c.extra.begin(), c.extra.end());
    OpResult r = ref(OpId::Split, c.attrs, ins, c.outputs);
    ASSERT_OK(r.status);
    ASSERT_EQ(r.outputs.size(), c.sizes.size());
    int64_t col = 0;
    for (size_t k = 0; k < c.sizes.size(); ++k) {
      EXPECT_EQ(r.outputs[k].shape, (Shape{2, c.sizes[k]}));
      std::vector<float> want;
      for (int64_t row = 0; row < 2; ++row)
        for (int64_t j = 0; j < c.sizes[k]; ++j) want.push_back(x[static_cast<size_t>(row * 7 + col + j)]);
      EXPECT_EQ(r.outputs[k].as<float>(), want) << k;
      col += c.sizes[k];
    }
    expect_infer_idempotent(OpId::Split, c.attrs, ins, c.outputs);
  }
  // Default: even split over the outputs along axis 0.
  OpResult r = ref(OpId::Split, A(), {i64({4}, {1, 2, 3, 4})}, 2);
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.outputs[1].as<int64_t>(), (std::vector<int64_t>{3, 4}));
}

TEST(SplitRef, Errors) {
  const TensorData x = f32({2, 7}, iota_f(14));
  EXPECT_FALSE(ref(OpId::Split, A().i("axis", 1), {x, i64c({2}, {3, 3})}, 2).status.ok());     // sum 6 != 7
  EXPECT_FALSE(ref(OpId::Split, A().i("axis", 1), {x, i64c({3}, {3, 3, 1})}, 2).status.ok());  // 3 sizes, 2 outputs
  EXPECT_FALSE(ref(OpId::Split, A().i("axis", 1), {x}, 2).status.ok());                        // 7 is odd
  EXPECT_FALSE(ref(OpId::Split, A().i("axis", 1).i("num_outputs", 3), {x}, 2).status.ok());
  EXPECT_FALSE(ref(OpId::Split, A().i("axis", 0).i("num_outputs", 4), {f32({2}, {1.f, 2.f})}, 4).status.ok());
  OpResult r = ref(OpId::Split, A().i("axis", 1), {x, i64({2}, {3, 4}, false)}, 2);
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "--input-shape")) << r.status.message();
}

// Float Split along the channels of a 4-D tensor runs on the runtime's nChw16c when every part is
// a multiple of 16 channels (kUniform: the layout pass blocks no padded tensor of the node), with
// the same values; otherwise, or along another axis, NCHW. Builds whose float blocked layout is
// NHWC (aarch64: kernel.h kFloatBlockedNhwc) keep Split plain: a channel part is not one run there.
TEST(SplitRef, ChannelSplitRunsBlocked) {
  const bool nchw16c = !blocked_channels_last(DType::kF32);
  const Shape s{2, 48, 3, 5};
  const std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(s)), 21);
  struct Case {
    int64_t axis;
    std::vector<int64_t> sizes;
    int blocked;  // tensors kept blocked
  };
  for (const Case& c : {Case{1, {16, 32}, 3}, Case{1, {16, 16, 16}, 4}, Case{1, {8, 40}, 0}, Case{2, {1, 2}, 0}}) {
    SCOPED_TRACE(std::to_string(c.axis) + ": " + std::to_string(c.sizes.size()) + " parts");
    const std::vector<TensorData> ins = {f32(s, x), i64c({static_cast<int64_t>(c.sizes.size())}, c.sizes)};
    const int parts = static_cast<int>(c.sizes.size());
    OpResult nchw = ref(OpId::Split, A().i("axis", c.axis), ins, parts);
    ASSERT_OK(nchw.status);
    int blocked = -1;
    OpResult r = run_op_blocked(OpId::Split, A().i("axis", c.axis), ins, "ref", 1, &blocked, {}, parts);
    ASSERT_OK(r.status);
    EXPECT_EQ(blocked, nchw16c ? c.blocked : 0);
    ASSERT_EQ(r.outputs.size(), nchw.outputs.size());
    for (size_t k = 0; k < r.outputs.size(); ++k) EXPECT_EQ(r.outputs[k].as<float>(), nchw.outputs[k].as<float>()) << k;
  }
}

// ---- Slice ----

// Python's slice(start, stop, step).indices(len) followed by range(): ONNX Slice's definition.
std::vector<int64_t> python_slice(int64_t len, int64_t start, int64_t stop, int64_t step) {
  const int64_t lower = step < 0 ? -1 : 0;
  const int64_t upper = step < 0 ? len - 1 : len;
  auto fix = [&](int64_t v) {
    if (v < 0) {
      v += len;
      if (v < lower) v = lower;
    } else if (v > upper) {
      v = upper;
    }
    return v;
  };
  start = fix(start);
  stop = fix(stop);
  std::vector<int64_t> r;
  if (step > 0)
    for (int64_t i = start; i < stop; i += step) r.push_back(i);
  else
    for (int64_t i = start; i > stop; i += step) r.push_back(i);
  return r;
}

struct SliceCase {
  const char* label;
  std::vector<int64_t> starts, ends, axes, steps;  // axes/steps empty = input absent
};

const int64_t kMax = std::numeric_limits<int64_t>::max();
const int64_t kMin = std::numeric_limits<int64_t>::min();

const std::vector<SliceCase> kSliceCases = {
    {"simple", {1}, {3}, {0}, {}},
    {"clamp_end", {1}, {1000}, {1}, {}},
    {"int64_max_end", {2}, {kMax}, {2}, {1}},
    {"negative_start_end", {-3}, {-1}, {2}, {}},
    {"reverse_axis", {-1}, {kMin}, {2}, {-1}},
    {"reverse_step2", {5}, {0}, {2}, {-2}},
    {"reverse_clamped_start", {100}, {-100}, {1}, {-2}},
    {"multi_axis_steps", {0, 1, 5}, {4, 5, 0}, {0, 1, 2}, {2, 3, -1}},
    {"negative_axes", {1, 0}, {3, 2}, {-1, -3}, {}},
    {"axes_default", {1, 1}, {3, 4}, {}, {}},
    {"empty_result", {3}, {1}, {0}, {}},
    {"start_beyond_dim", {10}, {20}, {2}, {}},
    {"empty_reverse", {1}, {3}, {1}, {-1}},
    {"unordered_axes", {2, 0}, {6, 3}, {2, 0}, {2, 1}},
};

std::vector<float> naive_slice(const std::vector<float>& x, const Shape& s, const SliceCase& c, Shape* out) {
  std::vector<std::vector<int64_t>> idx(s.size());
  for (size_t d = 0; d < s.size(); ++d)
    for (int64_t i = 0; i < s[d]; ++i) idx[d].push_back(i);
  for (size_t k = 0; k < c.starts.size(); ++k) {
    int64_t a = c.axes.empty() ? static_cast<int64_t>(k) : c.axes[k];
    if (a < 0) a += static_cast<int64_t>(s.size());
    idx[static_cast<size_t>(a)] =
        python_slice(s[static_cast<size_t>(a)], c.starts[k], c.ends[k], c.steps.empty() ? 1 : c.steps[k]);
  }
  out->clear();
  for (const auto& v : idx) out->push_back(static_cast<int64_t>(v.size()));
  std::vector<float> r;
  for (int64_t i = 0; i < shape_numel(*out); ++i) {
    const auto c2 = unravel(i, *out);
    int64_t j = 0;
    for (size_t d = 0; d < s.size(); ++d) j = j * s[d] + idx[d][static_cast<size_t>(c2[d])];
    r.push_back(x[static_cast<size_t>(j)]);
  }
  return r;
}

TEST(SliceRef, ParameterMatrix) {
  const Shape s = {4, 5, 6};
  const std::vector<float> x = iota_f(120);
  for (const SliceCase& c : kSliceCases) {
    SCOPED_TRACE(c.label);
    Shape want_shape;
    const std::vector<float> want = naive_slice(x, s, c, &want_shape);
    const int64_t n = static_cast<int64_t>(c.starts.size());
    // Opset 10+ inputs (int64), the same as int32, and opset 1 attributes (no steps there).
    std::vector<TensorData> in64 = {f32(s, x), i64c({n}, c.starts), i64c({n}, c.ends)};
    if (!c.axes.empty() || !c.steps.empty()) in64.push_back(c.axes.empty() ? TensorData::none() : i64c({n}, c.axes));
    if (!c.steps.empty()) in64.push_back(i64c({n}, c.steps));
    OpResult r = ref(OpId::Slice, A(), in64);
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, want_shape);
    EXPECT_EQ(r.outputs[0].as<float>(), want);
    expect_infer_idempotent(OpId::Slice, A(), in64);

    auto to32 = [](const std::vector<int64_t>& v) {
      std::vector<int32_t> r;
      for (int64_t e : v)
        r.push_back(static_cast<int32_t>(std::max<int64_t>(std::min<int64_t>(e, INT32_MAX), INT32_MIN)));
      return r;
    };
    std::vector<TensorData> in32 = {f32(s, x), i32({n}, to32(c.starts), true), i32({n}, to32(c.ends), true)};
    if (!c.axes.empty() || !c.steps.empty())
      in32.push_back(c.axes.empty() ? TensorData::none() : i32({n}, to32(c.axes), true));
    if (!c.steps.empty()) in32.push_back(i32({n}, to32(c.steps), true));
    r = ref(OpId::Slice, A(), in32);
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].as<float>(), want);

    if (c.steps.empty()) {
      A at;
      at.ints("starts", c.starts).ints("ends", c.ends);
      if (!c.axes.empty()) at.ints("axes", c.axes);
      r = ref(OpId::Slice, at, {f32(s, x)});
      ASSERT_OK(r.status);
      EXPECT_EQ(r.outputs[0].as<float>(), want);
    }
  }
}

TEST(SliceRef, NormalisedAttributes) {
  Graph g;
  Node n;
  n.name = "s";
  n.op = OpId::Slice;
  const std::vector<int64_t> starts = {-1}, ends = {kMin}, axes = {1}, steps = {-1};
  n.inputs = {g.add_tensor("x", {3, 4}, DType::kF32), g.add_const("st", {1}, DType::kI64, starts.data(), 8),
              g.add_const("en", {1}, DType::kI64, ends.data(), 8), g.add_const("ax", {1}, DType::kI64, axes.data(), 8),
              g.add_const("sp", {1}, DType::kI64, steps.data(), 8)};
  n.outputs = {g.add_tensor("y", {}, DType::kF32)};
  ASSERT_OK(find_op(OpId::Slice)->infer(g, n));
  EXPECT_EQ(n.inputs, (std::vector<int>{0, -1, -1, -1, -1}));
  EXPECT_EQ(n.attrs.get_ints("axes"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(n.attrs.get_ints("starts"), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(n.attrs.get_ints("ends"), (std::vector<int64_t>{3, -5}));  // -dim-1: through element 0
  EXPECT_EQ(n.attrs.get_ints("steps"), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{3, 4}));
}

TEST(SliceRef, Int64ShapeVector) {
  // Shape(x)[2:] on an int64 vector, as in shape subgraphs.
  OpResult r = ref(OpId::Slice, A(), {i64({4}, {1, 3, 224, 160}), i64c({1}, {2}), i64c({1}, {kMax})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{224, 160}));
}

TEST(SliceRef, Errors) {
  const TensorData x = f32({4}, iota_f(4));
  EXPECT_FALSE(ref(OpId::Slice, A(), {x, i64c({1}, {0}), i64c({1}, {2}), i64c({1}, {0}), i64c({1}, {0})}).status.ok());
  EXPECT_FALSE(ref(OpId::Slice, A(), {x, i64c({1}, {0}), i64c({2}, {2, 3})}).status.ok());
  EXPECT_FALSE(ref(OpId::Slice, A(), {x, i64c({1}, {0}), i64c({1}, {2}), i64c({1}, {1})}).status.ok());
  EXPECT_FALSE(ref(OpId::Slice, A(), {f32({2, 2}, iota_f(4)), i64c({2}, {0, 0}), i64c({2}, {1, 1}), i64c({2}, {1, -1})})
                   .status.ok());  // axis listed twice
  OpResult r = ref(OpId::Slice, A(), {x, i64({1}, {0}, false), i64c({1}, {2})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "starts")) << r.status.message();
  EXPECT_TRUE(contains(r.status.message(), "--input-shape")) << r.status.message();
}

// ---- Transpose ----

TEST(TransposeRef, Permutations) {
  const Shape s = {2, 3, 4, 5};
  const std::vector<float> x = iota_f(120);
  const std::vector<std::vector<int64_t>> perms = {
      {0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {3, 2, 1, 0}, {1, 0, 2, 3}, {2, 0, 3, 1}, {}};
  for (const auto& p0 : perms) {
    const std::vector<int64_t> p = p0.empty() ? std::vector<int64_t>{3, 2, 1, 0} : p0;
    Shape out;
    for (int64_t d : p) out.push_back(s[static_cast<size_t>(d)]);
    std::vector<float> want;
    for (int64_t i = 0; i < shape_numel(out); ++i) {
      const auto c = unravel(i, out);
      std::vector<int64_t> ic(4);
      for (size_t d = 0; d < 4; ++d) ic[static_cast<size_t>(p[d])] = c[d];
      want.push_back(x[static_cast<size_t>(((ic[0] * 3 + ic[1]) * 4 + ic[2]) * 5 + ic[3])]);
    }
    Attrs at;
    if (!p0.empty()) at.set_ints("perm", p0);
    OpResult r = ref(OpId::Transpose, at, {f32(s, x)});
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, out) << shape_str(p);
    EXPECT_EQ(r.outputs[0].as<float>(), want) << shape_str(p);
    expect_infer_idempotent(OpId::Transpose, at, {f32(s, x)});
  }
}

TEST(TransposeRef, OtherDtypesAndErrors) {
  OpResult r = ref(OpId::Transpose, A(), {i64({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  r = ref(OpId::Transpose, A().ints("perm", {1, 0}), {u8({2, 2}, {1, 2, 3, 4})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{1, 3, 2, 4}));
  EXPECT_FALSE(ref(OpId::Transpose, A().ints("perm", {0, 0}), {u8({2, 2}, {1, 2, 3, 4})}).status.ok());
  EXPECT_FALSE(ref(OpId::Transpose, A().ints("perm", {0}), {u8({2, 2}, {1, 2, 3, 4})}).status.ok());
  EXPECT_FALSE(ref(OpId::Transpose, A().ints("perm", {0, 2}), {u8({2, 2}, {1, 2, 3, 4})}).status.ok());
}

// The x86 tiled Transpose against the reference, bit for bit: every permutation of ranks 1 to 4,
// some of ranks 5 and 6, dims of 1, 7, 8, 9 and 17 (partial tiles, merged and dropped dims),
// float and int32, 1 and 2 threads, with the kernel the registry picks.
TEST(TransposeX86, MatchesReferenceBitExactly) {
  const std::string kernel = "x86_transpose_f32";
  if (!kernel_registered(OpId::Transpose, kernel)) GTEST_SKIP() << kernel << " not built";
  std::vector<Shape> shapes = {{17}, {9, 17}, {8, 8}, {1, 33}, {7, 1, 9}, {16, 24, 3}, {2, 9, 8, 17}, {1, 4, 256, 8},
                               {3, 1, 17, 7}, {1, 8, 1, 1}, {4, 16, 16, 16, 16}, {2, 3, 1, 5, 9, 8}, {3, 16, 4, 16, 16}};
  uint32_t seed = 11;
  int fast_runs = 0;
  for (const Shape& s : shapes) {
    std::vector<int64_t> p(s.size());
    for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int64_t>(i);
    int count = 0;
    do {
      if (s.size() > 4 && ++count % 7 != 1) continue;  // a sample of the 120 and 720 permutations
      Attrs at;
      at.set_ints("perm", p);
      const size_t numel = static_cast<size_t>(shape_numel(s));
      std::vector<TensorData> inputs = {TensorData::f32(s, random_floats(numel, seed++, -3.f, 3.f))};
      std::vector<int32_t> iv(numel);
      for (size_t i = 0; i < numel; ++i) iv[i] = static_cast<int32_t>(i * 2654435761u);
      inputs.push_back(i32(s, iv));
      for (const TensorData& in : inputs) {
        const OpResult want = run_op(OpId::Transpose, at, {in}, 1, "ref", 1);
        ASSERT_OK(want.status);
        for (int threads : {1, 2}) {
          SCOPED_TRACE(shape_str(s) + " perm " + shape_str(p) + " threads " + std::to_string(threads));
          const OpResult r = run_op(OpId::Transpose, at, {in}, 1, "", threads);
          ASSERT_OK(r.status);
          EXPECT_EQ(r.kernel_name, kernel);
          fast_runs += r.kernel_name == kernel;
          EXPECT_EQ(r.outputs[0].shape, want.outputs[0].shape);
          EXPECT_EQ(r.outputs[0].bytes, want.outputs[0].bytes);
        }
      }
    } while (std::next_permutation(p.begin(), p.end()));
  }
  EXPECT_GT(fast_runs, 0);
}

// ---- Expand ----

TEST(ExpandRef, Shapes) {
  struct Case {
    Shape in;
    std::vector<int64_t> shape;
    Shape out;
  };
  const std::vector<Case> cases = {
      {{3, 1}, {2, 3, 4}, {2, 3, 4}}, {{1}, {5}, {5}},      {{3, 1}, {1}, {3, 1}},  // shape smaller
      {{2, 1, 3}, {4, 1}, {2, 4, 3}}, {{}, {2, 2}, {2, 2}}, {{1, 4}, {3, 1}, {3, 4}}, {{2, 3}, {2, 3}, {2, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_str(c.in) + " -> " + shape_str(c.shape));
    const std::vector<float> x = iota_f(static_cast<size_t>(shape_numel(c.in)), 1.f);
    const std::vector<TensorData> in = {f32(c.in, x), i64c({static_cast<int64_t>(c.shape.size())}, c.shape)};
    OpResult r = ref(OpId::Expand, A(), in);
    ASSERT_OK(r.status);
    ASSERT_EQ(r.outputs[0].shape, c.out);
    std::vector<float> want;
    for (int64_t i = 0; i < shape_numel(c.out); ++i)
      want.push_back(x[static_cast<size_t>(broadcast_index(unravel(i, c.out), c.in))]);
    EXPECT_EQ(r.outputs[0].as<float>(), want);
    expect_infer_idempotent(OpId::Expand, A(), in);
  }
  OpResult r = ref(OpId::Expand, A(), {i64({1}, {7}), i64c({1}, {3})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{7, 7, 7}));
  EXPECT_FALSE(ref(OpId::Expand, A(), {f32({3}, {1, 2, 3}), i64c({1}, {2})}).status.ok());
  EXPECT_FALSE(ref(OpId::Expand, A(), {f32({3}, {1, 2, 3}), i64({1}, {3}, false)}).status.ok());
}

// ---- Tile ----

TEST(TileRef, Repeats) {
  struct Case {
    Shape in;
    std::vector<int64_t> repeats;
  };
  for (const Case& c : {Case{{2, 3}, {2, 2}}, Case{{2, 3}, {1, 3}}, Case{{3}, {4}}, Case{{2, 1, 2}, {2, 3, 1}},
                        Case{{2, 2}, {0, 2}}, Case{{1, 2, 3}, {1, 1, 1}}}) {
    SCOPED_TRACE(shape_str(c.in) + " x " + shape_str(c.repeats));
    const std::vector<float> x = iota_f(static_cast<size_t>(shape_numel(c.in)));
    Shape out;
    for (size_t d = 0; d < c.in.size(); ++d) out.push_back(c.in[d] * c.repeats[d]);
    std::vector<float> want;
    for (int64_t i = 0; i < shape_numel(out); ++i) {
      const auto oc = unravel(i, out);
      int64_t j = 0;
      for (size_t d = 0; d < c.in.size(); ++d) j = j * c.in[d] + oc[d] % c.in[d];
      want.push_back(x[static_cast<size_t>(j)]);
    }
    const std::vector<TensorData> in = {f32(c.in, x), i64c({static_cast<int64_t>(c.repeats.size())}, c.repeats)};
    OpResult r = ref(OpId::Tile, A(), in);
    ASSERT_OK(r.status);
    EXPECT_EQ(r.outputs[0].shape, out);
    EXPECT_EQ(r.outputs[0].as<float>(), want);
    expect_infer_idempotent(OpId::Tile, A(), in);
  }
  OpResult r = ref(OpId::Tile, A(), {i64({2}, {5, 6}), i64c({1}, {2})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{5, 6, 5, 6}));
  EXPECT_FALSE(ref(OpId::Tile, A(), {i64({2}, {5, 6}), i64c({2}, {2, 2})}).status.ok());
  EXPECT_FALSE(ref(OpId::Tile, A(), {i64({2}, {5, 6}), i64c({1}, {-1})}).status.ok());
}

// ---- Threads ----

// Copies of 16 KB and more are split over the threads (copy_threads): contiguous element ranges
// that may start and end inside a row, a Concat piece or a strided run. Two threads must give the
// one-thread bytes (tested against naive formulas above).
TEST(DataMovementThreads, TwoThreadsEqualOne) {
  struct Case {
    const char* label;
    OpId op;
    Attrs attrs;
    std::vector<TensorData> inputs;
  };
  auto data = [](const Shape& s, float from) { return f32(s, iota_f(static_cast<size_t>(shape_numel(s)), from)); };
  const std::vector<Case> cases = {
      {"concat channels", OpId::Concat, A().i("axis", 1), {data({1, 58, 28, 28}, 0.f), data({1, 60, 28, 28}, 1e6f)}},
      {"concat rows", OpId::Concat, A().i("axis", 3), {data({2, 3, 40, 17}, 0.f), data({2, 3, 40, 23}, 1e6f),
                                                       data({2, 3, 40, 1}, 2e6f)}},
      {"transpose shuffle", OpId::Transpose, A().ints("perm", {0, 2, 1, 3, 4}), {data({1, 2, 58, 28, 28}, 0.f)}},
      {"transpose nhwc", OpId::Transpose, A().ints("perm", {0, 2, 3, 1}), {data({1, 24, 30, 31}, 0.f)}},
      {"slice channels", OpId::Slice, A(), {data({1, 116, 28, 28}, 0.f), i64c({1}, {58}), i64c({1}, {116}), i64c({1}, {1})}},
      {"slice strided", OpId::Slice, A(), {data({1, 8, 64, 64}, 0.f), i64c({2}, {1, 1}), i64c({2}, {63, 64}),
                                           i64c({2}, {2, 3}), i64c({2}, {1, 2})}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    const OpResult one = run_op(c.op, c.attrs, c.inputs, 1, "ref", 1);
    const OpResult two = run_op(c.op, c.attrs, c.inputs, 1, "ref", 2);
    ASSERT_OK(one.status);
    ASSERT_OK(two.status);
    ASSERT_GE(one.outputs[0].bytes.size(), size_t{32} << 10);
    EXPECT_EQ(two.outputs[0].bytes, one.outputs[0].bytes);
  }
}

}  // namespace
}  // namespace orknn::test
