// Quantized (INT8) data movement: Concat (copied or requantized inputs), Reshape, Flatten,
// Squeeze, Unsqueeze, Transpose, Slice, Split, Gather, Tile, Expand, DepthToSpace, SpaceToDepth,
// Pad (quantize(value) in constant mode; reflect, edge), Resize (nearest only), Identity.
// Expected values are written by hand or with the formulas of docs/numerics.md written out here;
// then the error paths (parameters that differ, linear/cubic Resize on int8, ...), both in infer
// and in the kernels' prepare.
#include "kernels/kernel.h"
#include "ops/int8_test_helpers.h"
#include "ops/ref_test_helpers.h"
#include "testutil/cpu.h"

namespace orknn::test {
namespace {
using namespace reft;
using namespace q8t;

const QuantParams kQ = qp(0.5f, -3);

OpResult run_q(OpId op, const Attrs& attrs, const std::vector<TensorData>& ins, const QuantParams& qy,
               int n_out = 1) {
  return run_op(op, attrs, ins, n_out, "ref", 1, std::vector<QuantParams>(static_cast<size_t>(n_out), qy));
}

// Output 0 is int8, keeps `q` and holds `want`; the quantized reference kernel ran.
void expect_q8_out(const OpResult& r, const Shape& shape, const std::vector<int8_t>& want, const QuantParams& q,
                   size_t i = 0) {
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.kernel_name, "ref_int8");
  ASSERT_LT(i, r.outputs.size());
  EXPECT_EQ(r.outputs[i].dtype, DType::kI8);
  EXPECT_EQ(r.outputs[i].shape, shape);
  EXPECT_TRUE(same_params(r.outputs[i].quant, q));
  EXPECT_EQ(out_i8(r, i), want);
}

// ---- Concat ----

TEST(QuantConcatRef, EqualParamsAreCopied) {
  const TensorData a = q8({1, 2, 2}, {1, -2, 3, -128}, kQ);
  const TensorData b = q8({1, 1, 2}, {127, 0}, kQ);
  expect_q8_out(run_q(OpId::Concat, A().i("axis", 1), {a, b}, kQ), {1, 3, 2}, {1, -2, 3, -128, 127, 0}, kQ);
  expect_q8_out(run_q(OpId::Concat, A().i("axis", -2), {b, a}, kQ), {1, 3, 2}, {127, 0, 1, -2, 3, -128}, kQ);
}

// INT8 Concat on the channel axis of 4-D activations also runs NHWC (a pixel's channels are
// consecutive): copied and requantized inputs, odd channel counts, equal to the NCHW run.
TEST(QuantConcatRef, NhwcChannelsMatchNchw) {
  std::vector<int8_t> va(2 * 3 * 4 * 5), vb(2 * 5 * 4 * 5);
  for (size_t i = 0; i < va.size(); ++i) va[i] = static_cast<int8_t>(i * 37 % 256 - 128);
  for (size_t i = 0; i < vb.size(); ++i) vb[i] = static_cast<int8_t>(i * 53 % 256 - 128);
  const QuantParams qb = qp(0.3f, 7);
  const std::vector<TensorData> ins = {q8({2, 3, 4, 5}, va, kQ), q8({2, 5, 4, 5}, vb, qb)};
  const OpResult nchw = run_q(OpId::Concat, A().i("axis", 1), ins, kQ);
  ASSERT_TRUE(nchw.status.ok()) << nchw.status.message();
  int blocked = 0;
  const OpResult nhwc = run_op_blocked(OpId::Concat, A().i("axis", 1), ins, "ref_int8", 1, &blocked, {kQ});
  ASSERT_TRUE(nhwc.status.ok()) << nhwc.status.message();
  EXPECT_EQ(blocked, 3);
  EXPECT_EQ(out_i8(nhwc), out_i8(nchw));
  EXPECT_NE(out_i8(nchw), std::vector<int8_t>(out_i8(nchw).size(), out_i8(nchw)[0]));
}

// Large enough to be split over two threads (copy_threads): copied and requantized pieces, ranges
// starting inside a piece; the one-thread bytes.
TEST(QuantConcatRef, TwoThreadsEqualOne) {
  std::vector<int8_t> va(1 * 40 * 32 * 33), vb(1 * 24 * 32 * 33);  // periods 251 and 241: no equal rows
  for (size_t i = 0; i < va.size(); ++i) va[i] = static_cast<int8_t>(i * 37 % 251 - 128);
  for (size_t i = 0; i < vb.size(); ++i) vb[i] = static_cast<int8_t>(i * 53 % 241 - 128);
  const std::vector<TensorData> ins = {q8({1, 40, 32, 33}, va, kQ), q8({1, 24, 32, 33}, vb, qp(0.3f, 7))};
  for (int64_t axis : {1, 3}) {
    const OpResult one = run_op(OpId::Concat, A().i("axis", axis), axis == 1 ? ins : std::vector<TensorData>{ins[0], ins[0]},
                                1, "ref", 1, {kQ});
    const OpResult two = run_op(OpId::Concat, A().i("axis", axis), axis == 1 ? ins : std::vector<TensorData>{ins[0], ins[0]},
                                1, "ref", 2, {kQ});
    ASSERT_TRUE(one.status.ok()) << one.status.message();
    ASSERT_TRUE(two.status.ok()) << two.status.message();
    EXPECT_EQ(out_i8(two), out_i8(one)) << "axis " << axis;
  }
}

// The vectorised quantized Concat (x86: avx512_int8, aarch64: neon_int8) against the reference,
// byte for byte: every code of each input requantized with multipliers below and above 1
// (saturating ones) and an infinite one (3e38 / 0.05: NaN for x = zp_x, else +-inf), zero points at
// the extremes, rows around the 16-value vectors, NHWC, two threads.
TEST(QuantConcatFast, BitExactWithReference) {
  const bool x86_cpu = ORKNN_X86_HAS("avx512bw") && ORKNN_X86_HAS("avx512vl");
  const char* kFast = fast_int8_kernel(OpId::Concat, "avx512_int8", x86_cpu, "neon_int8");
  if (!kFast) GTEST_SKIP() << "CPU without AVX-512BW/VL";
  const QuantParams qy = qp(0.05f, -7);
  const std::vector<QuantParams> others = {qp(0.05f, -7), qp(0.02f, 127), qp(0.3f, -128), qp(0.0123f, 5), qp(0.05f, 3),
                                         qp(3e38f, 1)};
  int ran = 0;
  for (const Shape& s : std::vector<Shape>{{1, 3, 1, 1}, {1, 5, 7, 3}, {2, 16, 4, 9}, {1, 33, 32, 32}})
    for (size_t k = 0; k < others.size(); ++k) {
      std::vector<int8_t> va(static_cast<size_t>(shape_numel(s))), vb(va.size());
      for (size_t i = 0; i < va.size(); ++i) va[i] = static_cast<int8_t>(i * 37 % 251 - 128 + (i % 7 == 0 ? 3 : 0));
      for (size_t i = 0; i < vb.size(); ++i) vb[i] = static_cast<int8_t>(i % 256 - 128);  // every code
      const std::vector<TensorData> ins = {q8(s, va, others[k]), q8(s, vb, others[(k + 2) % others.size()])};
      const OpResult want = run_q(OpId::Concat, A().i("axis", 1), ins, qy);
      ASSERT_TRUE(want.status.ok()) << want.status.message();
      for (int threads : {1, 2}) {
        const OpResult got = run_op(OpId::Concat, A().i("axis", 1), ins, 1, kFast, threads, {qy});
        ASSERT_TRUE(got.status.ok()) << got.status.message();
        EXPECT_EQ(got.kernel_name, kFast);
        EXPECT_EQ(out_i8(got), out_i8(want)) << shape_str(s) << " params " << k << ", " << threads << " threads";
        int blocked = 0;
        const OpResult nhwc = run_op_blocked(OpId::Concat, A().i("axis", 1), ins, kFast, threads, &blocked, {qy});
        ASSERT_TRUE(nhwc.status.ok()) << nhwc.status.message();
        EXPECT_EQ(blocked, 3);
        EXPECT_EQ(out_i8(nhwc), out_i8(want)) << shape_str(s) << " NHWC";
        ++ran;
      }
    }
  EXPECT_EQ(ran, 48);
}

TEST(QuantConcatRef, DifferentParamsAreRequantized) {
  // Output has a's parameters: a is copied. b (s 0.25, zp -5): M = 0.25 / 0.5 = 0.5,
  // y = rne((b + 5) * 0.5) + 3:  -4 -> 0.5 -> 0 -> 3;  -2 -> 1.5 -> 2 -> 5;  0 -> 2.5 -> 2 -> 5;
  // 127 -> 66 -> 69;  -128 -> -61.5 -> -62 -> -59;  -5 -> 0 -> 3
  const QuantParams qa = qp(0.5f, 3), qb = qp(0.25f, -5);
  const TensorData a = q8({2, 1}, {-128, 77}, qa);
  const TensorData b = q8({2, 3}, {-4, -2, 0, 127, -128, -5}, qb);
  expect_q8_out(run_q(OpId::Concat, A().i("axis", 1), {a, b}, qa), {2, 4}, {-128, 3, 5, 5, 77, 69, -59, 3}, qa);
}

TEST(QuantConcatRef, SaturationAndThreeInputsAgainstFormula) {
  const std::vector<QuantParams> qs = {qp(0.1f, -7), qp(0.37f, 11), qp(0.1f, -7)};
  const QuantParams qy = qp(0.1f, -7);  // inputs 0 and 2 copied, input 1 requantized (saturates often)
  const std::vector<Shape> shapes = {{2, 2, 3}, {2, 1, 3}, {2, 3, 3}};
  std::vector<TensorData> ins;
  for (size_t i = 0; i < 3; ++i)
    ins.push_back(q8(shapes[i], random_i8(static_cast<size_t>(shape_numel(shapes[i])), 40 + static_cast<uint32_t>(i)),
                     qs[i], i == 2));
  OpResult r = run_q(OpId::Concat, A().i("axis", 1), ins, qy);
  ASSERT_OK(r.status);
  ASSERT_EQ(r.outputs[0].shape, (Shape{2, 6, 3}));
  std::vector<int8_t> want;
  for (int64_t o = 0; o < 2; ++o)
    for (size_t i = 0; i < 3; ++i) {
      const std::vector<int8_t> v = ins[i].as<int8_t>();
      const int64_t row = shapes[i][1] * 3;
      const float m = qs[i].scale[0] / qy.scale[0];
      for (int64_t k = 0; k < row; ++k) {
        const int x = v[static_cast<size_t>(o * row + k)];
        want.push_back(same_params(qs[i], qy) ? static_cast<int8_t>(x)
                                              : rne_zp_naive(static_cast<float>(x - qs[i].zero_point[0]) * m,
                                                             qy.zero_point[0]));
      }
    }
  EXPECT_EQ(out_i8(r), want);
  // All inputs requantized into parameters none of them has.
  const QuantParams qz = qp(0.05f, 100);
  r = run_q(OpId::Concat, A().i("axis", 0), {ins[0], ins[0]}, qz);
  ASSERT_OK(r.status);
  const std::vector<int8_t> v0 = ins[0].as<int8_t>();
  const std::vector<int8_t> got = out_i8(r);
  ASSERT_EQ(got.size(), 2 * v0.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const int x = v0[k % v0.size()];
    EXPECT_EQ(got[k], rne_zp_naive(static_cast<float>(x + 7) * (0.1f / 0.05f), 100)) << k;
  }
}

TEST(QuantConcatInfer, Errors) {
  const TensorData a = q8({2}, {1, 2}, kQ);
  OpResult r = run_q(OpId::Concat, A().i("axis", 0), {a, f32({2}, {1.f, 2.f})}, kQ);
  expect_invalid_model(r.status, "input 1 ('in1') must be a quantized int8 tensor", "Concat_under_test");
  r = run_q(OpId::Concat, A().i("axis", 0), {a, i8({2}, {1, 2})}, kQ);
  expect_invalid_model(r.status, "input 1", "Concat_under_test");
  r = run_op(OpId::Concat, A().i("axis", 0), {a, a}, 1, "ref", 1, {});
  expect_invalid_model(r.status, "output 0 ('out0') has no quantization parameters", "Concat_under_test");
  // Plain int64 concatenation (shape arithmetic) is unchanged.
  r = ref(OpId::Concat, A().i("axis", 0), {i64({1}, {1}), i64({2}, {2, 3})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref");
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
}

// ---- ops that move bytes ----

TEST(QuantShapeOpsRef, ReshapeFlattenSqueezeUnsqueeze) {
  const std::vector<int8_t> v = {-128, -3, 0, 5, 127, 9};
  const TensorData x = q8({1, 2, 3}, v, kQ);
  expect_q8_out(run_q(OpId::Reshape, A(), {x, i64c({2}, {3, -1})}, kQ), {3, 2}, v, kQ);
  expect_q8_out(run_q(OpId::Flatten, A().i("axis", 2), {x}, kQ), {2, 3}, v, kQ);
  expect_q8_out(run_q(OpId::Squeeze, A(), {x, i64c({1}, {0})}, kQ), {2, 3}, v, kQ);
  expect_q8_out(run_q(OpId::Unsqueeze, A(), {x, i64c({1}, {-1})}, kQ), {1, 2, 3, 1}, v, kQ);
  expect_q8_out(run_q(OpId::Identity, A(), {x}, kQ), {1, 2, 3}, v, kQ);
}

TEST(QuantShapeOpsRef, DropoutCopiesAndKeepsAPlainMask) {
  const std::vector<int8_t> v = {-128, -3, 0, 127};
  OpResult r = run_op(OpId::Dropout, A(), {q8({2, 2}, v, kQ)}, 2, "ref", 1, {kQ, QuantParams()});
  expect_q8_out(r, {2, 2}, v, kQ);
  EXPECT_EQ(r.outputs[1].dtype, DType::kBool);
  EXPECT_EQ(r.outputs[1].as<uint8_t>(), std::vector<uint8_t>(4, 1));
  r = run_op(OpId::Dropout, A(), {q8({2, 2}, v, kQ)}, 1, "ref", 1, {qp(0.5f, 0)});
  expect_invalid_model(r.status, "must carry the quantization parameters", "Dropout_under_test");
}

TEST(QuantDataMovementRef, TransposeSliceSplitGatherTileExpand) {
  // x = [[1, 2, 3], [4, 5, 6]]
  const TensorData x = q8({2, 3}, {1, 2, 3, 4, 5, 6}, kQ);
  expect_q8_out(run_q(OpId::Transpose, A().ints("perm", {1, 0}), {x}, kQ), {3, 2}, {1, 4, 2, 5, 3, 6}, kQ);
  expect_q8_out(run_q(OpId::Slice, A(), {x, i64c({2}, {0, 2}), i64c({2}, {2, 0}), i64c({2}, {0, 1}), i64c({2}, {1, -1})},
                      kQ),
                {2, 2}, {3, 2, 6, 5}, kQ);
  OpResult r = run_q(OpId::Split, A().i("axis", 1), {x, i64c({2}, {1, 2})}, kQ, 2);
  expect_q8_out(r, {2, 1}, {1, 4}, kQ, 0);
  expect_q8_out(r, {2, 2}, {2, 3, 5, 6}, kQ, 1);
  expect_q8_out(run_q(OpId::Gather, A().i("axis", 1), {x, i64c({2}, {2, 0})}, kQ), {2, 2}, {3, 1, 6, 4}, kQ);
  expect_q8_out(run_q(OpId::Gather, A(), {x, TensorData::of<int32_t>({}, {-1}, DType::kI32, false)}, kQ), {3},
                {4, 5, 6}, kQ);
  expect_q8_out(run_q(OpId::Tile, A(), {x, i64c({2}, {2, 1})}, kQ), {4, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, kQ);
  expect_q8_out(run_q(OpId::Expand, A(), {q8({2, 1}, {-7, 8}, kQ), i64c({3}, {2, 2, 3})}, kQ), {2, 2, 3},
                {-7, -7, -7, 8, 8, 8, -7, -7, -7, 8, 8, 8}, kQ);
}

TEST(QuantDataMovementRef, DepthToSpaceAndBack) {
  // 1 x 8 x 1 x 1, blocksize 2, C_out 2. DCR: y[c, i, j] = x[(i*2 + j) * 2 + c]; CRD: x[c*4 + i*2 + j].
  const std::vector<int8_t> v = {10, 11, 12, 13, 14, 15, 16, 17};
  const TensorData x = q8({1, 8, 1, 1}, v, kQ);
  expect_q8_out(run_q(OpId::DepthToSpace, A().i("blocksize", 2), {x}, kQ), {1, 2, 2, 2},
                {10, 12, 14, 16, 11, 13, 15, 17}, kQ);
  expect_q8_out(run_q(OpId::DepthToSpace, A().i("blocksize", 2).s("mode", "CRD"), {x}, kQ), {1, 2, 2, 2}, v, kQ);
  expect_q8_out(run_q(OpId::SpaceToDepth, A().i("blocksize", 2), {q8({1, 2, 2, 2}, {10, 12, 14, 16, 11, 13, 15, 17}, kQ)},
                      kQ),
                {1, 8, 1, 1}, v, kQ);
}

// ---- Pad ----

TEST(QuantPadRef, ConstantValueIsQuantized) {
  // s 0.5, zp -3: value 1.3 -> 2.6 -> 3 -> 0;  1.25 -> 2.5 -> 2 (tie, even) -> -1;
  // -1000 -> -128 (saturated); absent -> 0 -> zp = -3
  const TensorData x = q8({3}, {10, -20, 30}, kQ);
  const Attrs pads = A().ints("pads", {2, 1});
  expect_q8_out(run_q(OpId::Pad, A().ints("pads", {2, 1}).f("value", 1.3f), {x}, kQ), {6}, {0, 0, 10, -20, 30, 0}, kQ);
  expect_q8_out(run_q(OpId::Pad, A().ints("pads", {2, 1}).f("value", 1.25f), {x}, kQ), {6}, {-1, -1, 10, -20, 30, -1},
                kQ);
  expect_q8_out(run_q(OpId::Pad, A().ints("pads", {2, 1}).f("value", -1000.f), {x}, kQ), {6},
                {-128, -128, 10, -20, 30, -128}, kQ);
  expect_q8_out(run_q(OpId::Pad, pads, {x}, kQ), {6}, {-3, -3, 10, -20, 30, -3}, kQ);
  // Opset 11+: pads and constant_value as inputs; a float32 value, or a quantized int8 one
  // (code 7, s 0.25, zp 1: 6 * 0.25 = 1.5 -> 3 -> 0).
  expect_q8_out(run_q(OpId::Pad, A(), {x, i64c({2}, {1, 0}), f32({}, {1.3f}, true)}, kQ), {4}, {0, 10, -20, 30}, kQ);
  expect_q8_out(run_q(OpId::Pad, A(), {x, i64c({2}, {0, 1}), q8({}, {7}, qp(0.25f, 1), true)}, kQ), {4},
                {10, -20, 30, 0}, kQ);
  // The quantized value matches the naive quantize for a few more values.
  for (float value : {0.f, 0.75f, -0.75f, 63.9f, 65.6f, -62.4f}) {
    OpResult r = run_q(OpId::Pad, A().ints("pads", {1, 0}).f("value", value), {x}, kQ);
    ASSERT_OK(r.status);
    EXPECT_EQ(out_i8(r)[0], quantize_naive(value, kQ)) << value;
  }
}

TEST(QuantPadRef, ReflectAndEdge) {
  const TensorData x = q8({3}, {10, -20, 30}, kQ);
  expect_q8_out(run_q(OpId::Pad, A().ints("pads", {2, 1}).s("mode", "reflect"), {x}, kQ), {6},
                {30, -20, 10, -20, 30, -20}, kQ);
  expect_q8_out(run_q(OpId::Pad, A().ints("pads", {2, 1}).s("mode", "edge"), {x}, kQ), {6}, {10, 10, 10, -20, 30, 30},
                kQ);
  // Negative pads crop.
  expect_q8_out(run_q(OpId::Pad, A().ints("pads", {-1, 1}).s("mode", "edge"), {x}, kQ), {3}, {-20, 30, 30}, kQ);
}

TEST(QuantPadInfer, Errors) {
  const TensorData x = q8({3}, {10, -20, 30}, kQ);
  OpResult r = run_q(OpId::Pad, A(), {x, i64c({2}, {1, 0}), i8({}, {7}, true)}, kQ);
  expect_invalid_model(r.status, "constant_value must be float32 or a quantized int8 scalar", "Pad_under_test");
  r = run_q(OpId::Pad, A().ints("pads", {1, 0}), {x}, qp(0.25f, -3));
  expect_invalid_model(r.status, "must be equal", "Pad_under_test");
}

// ---- Resize ----

TEST(QuantResizeRef, NearestMovesValues) {
  // 2x2 -> 4x4, asymmetric + floor: every pixel becomes a 2x2 block.
  const TensorData x = q8({1, 1, 2, 2}, {-128, 5, 60, 127}, kQ);
  const A attrs = A().s("mode", "nearest").s("coordinate_transformation_mode", "asymmetric").s("nearest_mode", "floor");
  expect_q8_out(run_q(OpId::Resize, attrs, {x, TensorData::none(), f32({4}, {1.f, 1.f, 2.f, 2.f}, true)}, kQ),
                {1, 1, 4, 4}, {-128, -128, 5, 5, -128, -128, 5, 5, 60, 60, 127, 127, 60, 60, 127, 127}, kQ);
  // Downscale with sizes, half_pixel + round_prefer_floor: x_orig = (o + 0.5) * 2 - 0.5 = 0.5 -> 0 (prefer floor).
  const TensorData x4 = q8({1, 4}, {1, 2, 3, 4}, kQ);
  expect_q8_out(run_q(OpId::Resize, A(), {x4, TensorData::none(), TensorData::none(), i64c({2}, {1, 2})}, kQ), {1, 2},
                {1, 3}, kQ);
}

TEST(QuantResizeRef, CropAndResizeExtrapolationIsQuantized) {
  // roi [0.5, 1.5] on 4 elements, 3 outputs: x_orig = 1.5 + o * 1.5 -> 1.5, 3, 4.5 (outside).
  // round_prefer_floor: 1.5 -> 1, 3 -> 3; outside: quantize(2.6) = rne(5.2) - 3 = 2.
  const TensorData x = q8({4}, {10, 20, 30, 40}, kQ);
  const A attrs = A().s("coordinate_transformation_mode", "tf_crop_and_resize").f("extrapolation_value", 2.6f);
  expect_q8_out(run_q(OpId::Resize, attrs, {x, f32({2}, {0.5f, 1.5f}, true), TensorData::none(), i64c({1}, {3})}, kQ),
                {3}, {20, 40, 2}, kQ);
}

TEST(QuantResizeInfer, LinearAndCubicAreRefused) {
  const TensorData x = q8({1, 1, 2, 2}, {1, 2, 3, 4}, kQ);
  for (const char* mode : {"linear", "cubic"}) {
    OpResult r = run_q(OpId::Resize, A().s("mode", mode), {x, TensorData::none(), f32({4}, {1.f, 1.f, 2.f, 2.f}, true)},
                       kQ);
    expect_invalid_model(r.status, std::string("mode '") + mode + "' is not supported on a quantized int8 node",
                         "Resize_under_test");
  }
  // Float Resize is unchanged.
  OpResult r = ref(OpId::Resize, A().s("mode", "linear"),
                   {f32({1, 1, 1, 2}, {0.f, 1.f}), TensorData::none(), f32({4}, {1.f, 1.f, 1.f, 2.f}, true)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kF32);
}

// ---- parameters that differ, and other errors ----

TEST(QuantDataMovementInfer, MismatchedParamsAreErrors) {
  const TensorData x = q8({2, 3}, {1, 2, 3, 4, 5, 6}, kQ);
  const QuantParams other_scale = qp(0.25f, -3), other_zp = qp(0.5f, -2);
  struct Case {
    OpId op;
    Attrs attrs;
    std::vector<TensorData> ins;
  };
  const std::vector<Case> cases = {
      {OpId::Reshape, A(), {x, i64c({1}, {6})}},
      {OpId::Flatten, A(), {x}},
      {OpId::Squeeze, A(), {q8({1, 3}, {1, 2, 3}, kQ)}},
      {OpId::Unsqueeze, A(), {x, i64c({1}, {0})}},
      {OpId::Transpose, A(), {x}},
      {OpId::Slice, A(), {x, i64c({1}, {0}), i64c({1}, {1})}},
      {OpId::Split, A().i("axis", 0), {x}},
      {OpId::Gather, A(), {x, i64c({1}, {1})}},
      {OpId::Tile, A(), {x, i64c({2}, {1, 2})}},
      {OpId::Expand, A(), {x, i64c({3}, {2, 2, 3})}},
      {OpId::DepthToSpace, A().i("blocksize", 1), {q8({1, 1, 1, 2}, {1, 2}, kQ)}},
      {OpId::SpaceToDepth, A().i("blocksize", 1), {q8({1, 1, 1, 2}, {1, 2}, kQ)}},
      {OpId::Pad, A().ints("pads", {0, 0, 0, 1}), {x}},
      {OpId::Resize, A(), {x, TensorData::none(), f32({2}, {1.f, 2.f}, true)}},
      {OpId::Identity, A(), {x}},
  };
  for (const Case& c : cases) {
    const std::string node = std::string(op_name(c.op)) + "_under_test";
    for (const QuantParams& q : {other_scale, other_zp}) {
      OpResult r = run_q(c.op, c.attrs, c.ins, q);
      expect_invalid_model(r.status, "must be equal", node);
      EXPECT_TRUE(contains(r.status.message(), "scale 0.5 zero point -3")) << r.status.message();
    }
    // Quantized data, output without parameters.
    OpResult r = run_op(c.op, c.attrs, c.ins, 1, "ref", 1, {});
    expect_invalid_model(r.status, "no quantization parameters", node);
    // Float data, quantized output.
    std::vector<TensorData> fins = c.ins;
    const std::vector<int8_t> codes = fins[0].as<int8_t>();
    std::vector<float> reals(codes.begin(), codes.end());
    fins[0] = f32(fins[0].shape, reals);
    r = run_q(c.op, c.attrs, fins, kQ);
    expect_invalid_model(r.status, "must be a quantized int8 tensor", node);
  }
}

TEST(QuantDataMovementInfer, OtherErrors) {
  const TensorData x = q8({2, 3}, {1, 2, 3, 4, 5, 6}, kQ);
  // Quantized Gather indices.
  TensorData idx = i64c({1}, {1});
  idx.quant = qp(1.f, 0);
  OpResult r = run_q(OpId::Gather, A(), {x, idx}, kQ);
  expect_invalid_model(r.status, "input 1 ('in1') must not be quantized", "Gather_under_test");
  // Per-axis data.
  TensorData pa = x;
  pa.quant.scale = {0.5f, 0.25f};
  pa.quant.zero_point = {0, 0};
  pa.quant.axis = 0;
  r = run_op(OpId::Transpose, A(), {pa}, 1, "ref", 1, {pa.quant});
  expect_invalid_model(r.status, "per tensor", "Transpose_under_test");
  // Split: every output must carry the input's parameters.
  r = run_op(OpId::Split, A().i("axis", 0), {x}, 2, "ref", 1, {kQ, qp(0.5f, 0)});
  expect_invalid_model(r.status, "output 1 ('out1')", "Split_under_test");
}

// infer has accepted the node; the parameters are changed afterwards: the kernel refuses it.
TEST(QuantDataMovementKernel, PrepareRefusesMismatchedParams) {
  for (OpId op : {OpId::Transpose, OpId::Reshape, OpId::Gather, OpId::Pad, OpId::Resize}) {
    Graph g;
    Node n;
    n.name = "moved";
    n.op = op;
    const int x = g.add_tensor("x", {2, 2}, DType::kI8);
    g.tensor(x).quant = kQ;
    n.inputs = {x};
    if (op == OpId::Reshape) {
      const int64_t shape[1] = {4};
      n.inputs.push_back(g.add_const("shape", {1}, DType::kI64, shape, sizeof(shape)));
    } else if (op == OpId::Gather) {
      const int64_t idx[1] = {1};
      n.inputs.push_back(g.add_const("idx", {1}, DType::kI64, idx, sizeof(idx)));
    } else if (op == OpId::Pad) {
      n.attrs.set_ints("pads", {0, 1, 0, 0});
    } else if (op == OpId::Resize) {
      n.attrs.set_floats("scales", {1.f, 2.f});
    }
    const int y = g.add_tensor("y", {}, DType::kI8);
    g.tensor(y).quant = kQ;
    n.outputs = {y};
    ASSERT_OK(find_op(op)->infer(g, n)) << op_name(op);
    expect_reinfer_unchanged(g, n);
    EXPECT_EQ(g.tensor(y).dtype, DType::kI8);
    g.tensor(y).quant = qp(0.5f, 4);
    std::string name;
    std::unique_ptr<Kernel> k = create_kernel(g, n, true, &name);
    ASSERT_TRUE(k) << op_name(op);
    EXPECT_EQ(name, "ref_int8");
    KernelContext ctx;
    ctx.graph = &g;
    ctx.node = &n;
    int8_t in[16] = {}, out[64] = {};
    ctx.inputs = {in};
    if (n.inputs.size() > 1) ctx.inputs.push_back(n.inputs[1] >= 0 ? g.tensor(n.inputs[1]).data.ptr : nullptr);
    ctx.outputs = {out};
    Status s = k->prepare(ctx);
    expect_invalid_model(s, "must be equal", "moved");
  }
}

TEST(QuantDataMovementRef, PlainInt8KeepsTheByteKernels) {
  // int8 without parameters is plain data: the ordinary kernels move it.
  OpResult r = ref(OpId::Transpose, A(), {i8({2, 2}, {1, 2, 3, 4})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref");
  EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
  EXPECT_TRUE(r.outputs[0].quant.empty());
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{1, 3, 2, 4}));
  r = ref(OpId::Pad, A().ints("pads", {1, 0}).f("value", 7.9f), {i8({1}, {5})});
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{7, 5}));  // plain int8: the value is truncated, not quantized
}

TEST(QuantDataMovementInfer, IdempotentOnQuantizedNodes) {
  const TensorData x = q8({1, 4, 2, 2}, random_i8(16, 3), kQ);
  struct Case {
    OpId op;
    Attrs attrs;
    std::vector<TensorData> ins;
  };
  const std::vector<Case> cases = {
      {OpId::Reshape, A(), {x, i64c({2}, {4, -1})}},
      {OpId::Slice, A(), {x, i64c({1}, {1}), i64c({1}, {3}), i64c({1}, {1})}},
      {OpId::Pad, A(), {x, i64c({8}, {0, 0, 1, 1, 0, 0, 1, 1}), f32({}, {0.3f}, true)}},
      {OpId::Resize, A(), {x, TensorData::none(), f32({4}, {1.f, 1.f, 2.f, 2.f}, true)}},
      {OpId::Concat, A().i("axis", 1), {x, x}},
      {OpId::DepthToSpace, A().i("blocksize", 2), {x}},
  };
  for (const Case& c : cases) {
    Graph g;
    Node n;
    n.name = "idem_q";
    n.op = c.op;
    n.attrs = c.attrs;
    for (size_t i = 0; i < c.ins.size(); ++i) {
      const TensorData& d = c.ins[i];
      if (d.absent) {
        n.inputs.push_back(-1);
        continue;
      }
      const std::string name = "in" + std::to_string(i);
      const int id = d.is_const ? g.add_const(name, d.shape, d.dtype, d.bytes.data(), d.bytes.size())
                                : g.add_tensor(name, d.shape, d.dtype);
      g.tensor(id).quant = d.quant;
      n.inputs.push_back(id);
    }
    n.outputs.push_back(g.add_tensor("out", {}, DType::kI8));
    g.tensor(n.outputs[0]).quant = kQ;
    ASSERT_OK(find_op(c.op)->infer(g, n)) << op_name(c.op);
    EXPECT_EQ(g.tensor(n.outputs[0]).dtype, DType::kI8) << op_name(c.op);
    EXPECT_TRUE(same_params(g.tensor(n.outputs[0]).quant, kQ)) << op_name(c.op);
    expect_reinfer_unchanged(g, n);
  }
}

}  // namespace
}  // namespace orknn::test
