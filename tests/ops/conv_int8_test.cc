// Quantized Conv and ConvTranspose (docs/numerics.md, "Quantized (INT8) models"): the reference
// kernel (ref_int8) against cases computed by hand and against a naive formula written here (int64
// accumulation, ConvTranspose in scatter form, then the spec's requantization written out with a
// hand-made round-half-to-even), and the errors of infer for forms the kernel does not handle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/int8_test_helpers.h"
#include "ops/ref_test_helpers.h"
#include "testutil/cpu.h"

namespace orknn::test {
namespace {

using namespace reft;  // NOLINT
using namespace q8t;   // NOLINT

TensorData bias_i32(const std::vector<int32_t>& b) { return i32c({static_cast<int64_t>(b.size())}, b); }

// ------------------------------------------------------------------ hand-computed cases

TEST(ConvInt8Ref, HandComputedTiesToEven) {
  // x - zp_x = [[0, 1, 3], [-1, 2, 0], [-2, 0, 5]] (zp_x = 1), w = [[1, -1], [2, 1]], bias 2:
  // acc = {-1, 2, -7, 7} + 2 = {1, 4, -5, 9}; M = (0.5 * 1) / 1 = 0.5: {0.5, 2, -2.5, 4.5}
  // -> rne {0, 2, -2, 4} -> + zp_y 3 = {3, 5, 1, 7}.
  OpResult r = run_op(OpId::Conv, A(),
                      {q8({1, 1, 3, 3}, {1, 2, 4, 0, 3, 1, -1, 1, 6}, qp(0.5f, 1)),
                       weights({1, 1, 2, 2}, {1, -1, 2, 1}, {1.f}, 0), bias_i32({2})},
                      1, "ref", 1, {qp(1.f, 3)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
  EXPECT_EQ(r.outputs[0].shape, Shape({1, 1, 2, 2}));
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{3, 5, 1, 7}));
}

TEST(ConvInt8Ref, HandComputedPaddingTapsAreSkipped) {
  // Same x and w, pads 1, stride 2, no bias: only taps inside the input count (padding with
  // zp_x, not with 0). acc = {0, 2*1 + 1*3, -1*-1 + 1*-2, 1*2 + 1*5} = {0, 5, -1, 7};
  // * 0.5 = {0, 2.5, -0.5, 3.5} -> {0, 2, 0, 4} -> + zp_y -1 = {-1, 1, -1, 3}.
  OpResult r = run_op(OpId::Conv, A().ints("pads", {1, 1, 1, 1}).ints("strides", {2, 2}),
                      {q8({1, 1, 3, 3}, {1, 2, 4, 0, 3, 1, -1, 1, 6}, qp(0.5f, 1)),
                       weights({1, 1, 2, 2}, {1, -1, 2, 1}, {1.f}, 0)},
                      1, "ref", 1, {qp(1.f, -1)});
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{-1, 1, -1, 3}));
}

TEST(ConvInt8Ref, HandComputedSaturationAndPerChannel) {
  // Two output channels with weights 127 and -127, M = 100 and 200: every output saturates.
  OpResult r = run_op(OpId::Conv, A(),
                      {q8({1, 1, 1, 2}, {127, -128}, qp(1.f, 0)),
                       weights({2, 1, 1, 1}, {127, -127}, {1.f, 2.f}, 0)},
                      1, "ref", 1, {qp(0.01f, 10)});
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{127, -128, -128, 127}));

  // Per-channel scales that keep the values in range: acc = x * w, M = {0.25, 1}.
  OpResult r2 = run_op(OpId::Conv, A(),
                       {q8({1, 1, 1, 3}, {6, -10, 3}, qp(0.5f, 0)), weights({2, 1, 1, 1}, {3, -2}, {0.5f, 2.f}, 0)},
                       1, "ref", 1, {qp(1.f, 0)});
  ASSERT_OK(r2.status);
  // ch0: {18, -30, 9} * 0.25 = {4.5, -7.5, 2.25} -> {4, -8, 2}; ch1: {-12, 20, -6} * 1.
  EXPECT_EQ(out_i8(r2), (std::vector<int8_t>{4, -8, 2, -12, 20, -6}));
}

TEST(ConvInt8Ref, HandComputedFusedReluAndClip) {
  // acc = x - zp_x = {-4, -1, 0, 3, 8}, M = 1, zp_y = 2: y = {-2, 1, 2, 5, 10}.
  const TensorData x = q8({1, 1, 1, 5}, {-3, 0, 1, 4, 9}, qp(1.f, 1));
  const TensorData w = weights({1, 1, 1, 1}, {1}, {1.f}, 0);
  OpResult relu = run_op(OpId::Conv, A().s("fused_act", "Relu"), {x, w}, 1, "ref", 1, {qp(1.f, 2)});
  ASSERT_OK(relu.status);
  EXPECT_EQ(out_i8(relu), (std::vector<int8_t>{2, 2, 2, 5, 10}));  // clamped to [zp_y, 127]
  // Clip(-1.5, 4.5) in the output domain: quantize(-1.5) = rne(-1.5) + 2 = 0, quantize(4.5) = 4 + 2 = 6.
  OpResult clip = run_op(OpId::Conv, A().s("fused_act", "Clip").f("fused_alpha", -1.5f).f("fused_beta", 4.5f),
                         {x, w}, 1, "ref", 1, {qp(1.f, 2)});
  ASSERT_OK(clip.status);
  EXPECT_EQ(out_i8(clip), (std::vector<int8_t>{0, 1, 2, 5, 6}));
  // min > max: the upper bound wins, as in the float Clip.
  OpResult crossed = run_op(OpId::Conv, A().s("fused_act", "Clip").f("fused_alpha", 5.f).f("fused_beta", 1.f),
                            {x, w}, 1, "ref", 1, {qp(1.f, 2)});
  ASSERT_OK(crossed.status);
  EXPECT_EQ(out_i8(crossed), (std::vector<int8_t>{3, 3, 3, 3, 3}));
}

TEST(ConvInt8Ref, HandComputedValueActivations) {
  // acc = x - zp_x = {-6, -2, 0, 2, 6}, s_x * s_w = 1, s_y = 0.5 (times 2), zp_y = -1.
  const TensorData x = q8({1, 1, 1, 5}, {-5, -1, 1, 3, 7}, qp(1.f, 1));
  const TensorData w = weights({1, 1, 1, 1}, {1}, {1.f}, 0);
  // LeakyRelu(0.25): {-1.5, -0.5, 0, 2, 6} * 2 = {-3, -1, 0, 4, 12} -> + zp_y.
  OpResult leaky = run_op(OpId::Conv, A().s("fused_act", "LeakyRelu").f("fused_alpha", 0.25f), {x, w}, 1, "ref", 1,
                          {qp(0.5f, -1)});
  ASSERT_OK(leaky.status);
  EXPECT_EQ(out_i8(leaky), (std::vector<int8_t>{-4, -2, -1, 3, 11}));
  // HardSwish: v * clamp(v / 6 + 0.5, 0, 1) = {0, -1/3, 0, 5/3, 6}; * 2 = {0, -0.67, 0, 3.33, 12}
  // -> rne {0, -1, 0, 3, 12} + zp_y: the pre-activation is never rounded on its own.
  OpResult hswish = run_op(OpId::Conv, A().s("fused_act", "HardSwish"), {x, w}, 1, "ref", 1, {qp(0.5f, -1)});
  ASSERT_OK(hswish.status);
  EXPECT_EQ(out_i8(hswish), (std::vector<int8_t>{-1, -2, -1, 2, 11}));
  // HardSigmoid(0.2, 0.5) with s_y = 1/128: {0, 0.1, 0.5, 0.9, 1} * 128 = {0, 12.8, 64, 115.2, 128}
  // -> {0, 13, 64, 115, 128} + zp_y -128.
  OpResult hsig = run_op(OpId::Conv, A().s("fused_act", "HardSigmoid").f("fused_alpha", 0.2f).f("fused_beta", 0.5f),
                         {x, w}, 1, "ref", 1, {qp(1.f / 128.f, -128)});
  ASSERT_OK(hsig.status);
  EXPECT_EQ(out_i8(hsig), (std::vector<int8_t>{-128, -115, -64, -13, 0}));
}

TEST(ConvTransposeInt8Ref, HandComputedStride2) {
  // 1-D, x = {2, -1}, w = {1, 2, 3}, stride 2: scatter gives {2, 4, 6 - 1, -2, -3};
  // M = 1 / 2: {1, 2, 2.5, -1, -1.5} -> {1, 2, 2, -1, -2}.
  OpResult r = run_op(OpId::ConvTranspose, A().ints("strides", {2}),
                      {q8({1, 1, 2}, {2, -1}, qp(1.f, 0)), weights({1, 1, 3}, {1, 2, 3}, {1.f}, 1)}, 1, "ref", 1,
                      {qp(2.f, 0)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  EXPECT_EQ(r.outputs[0].shape, Shape({1, 1, 5}));
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{1, 2, 2, -1, -2}));
}

// ------------------------------------------------------------------ against the naive formula

const char* const kAvx2Conv = "x86_conv_int8_avx2";
const char* const kXnnpackConv = "xnnpack_conv_int8";

// The fast kernels that take every quantized 2-D Conv, where they are registered and can run: the
// AVX2 kernel (x86 CPUs with AVX2) and XNNPACK's (aarch64 builds).
std::vector<std::string> general_conv_kernels() {
  std::vector<std::string> v;
  for (const KernelEntry* e : kernels_for(OpId::Conv)) {
    const std::string name = e->name;
    if ((name == kAvx2Conv && ORKNN_X86_HAS("avx2")) || name == kXnnpackConv) v.push_back(name);
  }
  return v;
}

// "" when equal, else the first differing index and both values.
std::string first_mismatch_i8(const std::vector<int8_t>& got, const std::vector<int8_t>& want) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "index " + std::to_string(i) + ": " + std::to_string(got[i]) + " vs " + std::to_string(want[i]);
  return "";
}

struct ConvCase {
  std::string label;
  bool transpose = false;
  Shape x;  // N, C, spatial...
  int64_t oc = 1, group = 1;
  std::vector<int64_t> k, strides, dil, pads, out_pad;  // pads: begins then ends
  int32_t zp_x = 0, zp_y = 0;
  bool per_channel = true, bias = true;
  std::string act;
  float amin = 0.f, amax = 0.f;
  bool ties = false;  // power-of-two scales and small values: many float(acc) * M at k + 0.5
};

void run_case(const ConvCase& cs, uint32_t seed) {
  SCOPED_TRACE(cs.label);
  std::mt19937 rng(seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const NaiveConvGeometry geo{cs.x, cs.oc, cs.group, cs.k, cs.strides, cs.dil, cs.pads, cs.out_pad, cs.transpose};
  const Shape wshape = naive_conv_weight_shape(geo), yshape = naive_conv_output_shape(geo);
  const int64_t oc = cs.oc;
  std::vector<int8_t> x(static_cast<size_t>(shape_numel(cs.x))), w(static_cast<size_t>(shape_numel(wshape)));
  for (auto& v : x) v = static_cast<int8_t>(cs.ties ? std::clamp(cs.zp_x + uni(-5, 5), -128, 127) : uni(-128, 127));
  for (auto& v : w) v = static_cast<int8_t>(cs.ties ? uni(-3, 3) : uni(-127, 127));
  std::vector<int32_t> bias(static_cast<size_t>(oc));
  for (auto& v : bias) v = !cs.bias ? 0 : cs.ties ? uni(-20, 20) : uni(-20000, 20000);
  const std::vector<int64_t> acc = naive_conv_acc(geo, x, w, bias, cs.zp_x);
  const int64_t opix = shape_numel(yshape) / (yshape[0] * oc);

  // Scales: ties use powers of two (M in {1/2, 1/4, 1/8}); otherwise s_y puts most outputs in range.
  float s_x = cs.ties ? 0.5f : 0.0173f;
  std::vector<float> s_w(cs.per_channel ? static_cast<size_t>(oc) : 1);
  for (size_t c = 0; c < s_w.size(); ++c)
    s_w[c] = cs.ties ? std::ldexp(1.f, -static_cast<int>(c % 3)) : 0.001f * static_cast<float>(uni(1, 40));
  int64_t max_acc = 1;
  for (int64_t a : acc) max_acc = std::max<int64_t>(max_acc, std::llabs(a));
  const float s_y = cs.ties ? 1.f : s_x * s_w[0] * static_cast<float>(max_acc) / 90.f;

  std::vector<int8_t> want(acc.size());
  int ties = 0, saturated = 0;
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t c = (i / static_cast<size_t>(opix)) % static_cast<size_t>(oc);
    const float sw = s_w.size() == 1 ? s_w[0] : s_w[c];
    want[i] = requant_naive(acc[i], s_x, sw, s_y, cs.zp_y, cs.act, cs.amin, cs.amax);
    const float v = static_cast<float>(acc[i]) * ((s_x * sw) / s_y);
    if (v - std::floor(v) == 0.5f) ++ties;
    if (want[i] == 127 || want[i] == -128) ++saturated;
  }
  if (cs.ties) EXPECT_GT(ties, 10) << "too few exact .5 products";

  Attrs at;
  at.set_ints("strides", cs.strides);
  at.set_ints("dilations", cs.dil);
  at.set_ints("pads", cs.pads);
  at.set_int("group", cs.group);
  if (cs.transpose) at.set_ints("output_padding", cs.out_pad);
  if (!cs.act.empty()) {
    at.set_string("fused_act", cs.act);
    if (cs.act == "Clip" || cs.act == "LeakyRelu" || cs.act == "HardSigmoid") {
      at.set_float("fused_alpha", cs.amin);
      at.set_float("fused_beta", cs.amax);
    }
  }
  std::vector<TensorData> inputs = {q8(cs.x, x, qp(s_x, cs.zp_x)),
                                    weights(wshape, w, s_w, cs.transpose ? 1 : 0)};
  if (cs.bias) {
    TensorData b = bias_i32(bias);
    b.quant = per_axis(std::vector<float>(s_w.size(), 0.f), 0);
    for (size_t c = 0; c < s_w.size(); ++c) b.quant.scale[c] = s_x * s_w[c];
    inputs.push_back(b);
  }
  OpResult r = run_op(cs.transpose ? OpId::ConvTranspose : OpId::Conv, at, inputs, 1, "ref", 1, {qp(s_y, cs.zp_y)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  ASSERT_EQ(r.outputs[0].shape, yshape);
  const std::vector<int8_t> got = out_i8(r);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  EXPECT_EQ(bad, 0u) << "first mismatch at " << first << ": got " << int(got[first]) << " want " << int(want[first])
                     << " (acc " << acc[first] << ")";

  // The general fast kernels on the same case: every 2-D Conv, bit for bit, at 1 and 2 threads;
  // they decline the rest, and XNNPACK's the value activations (its requantization clamps only).
  const bool value_act = is_value_act_name(cs.act);
  for (const std::string& kernel : general_conv_kernels()) {
    const bool takes = !cs.transpose && cs.x.size() == 4 && !(value_act && kernel == kXnnpackConv);
    for (int threads : {1, 2}) {
      OpResult k = run_op(cs.transpose ? OpId::ConvTranspose : OpId::Conv, at, inputs, 1, kernel, threads,
                          {qp(s_y, cs.zp_y)});
      EXPECT_EQ(k.status.ok(), takes) << kernel << ": " << k.status.message();
      if (!k.status.ok()) continue;
      EXPECT_EQ(first_mismatch_i8(out_i8(k), want), "") << kernel << ", threads " << threads;
      // Channels-last input and output (the runtime's INT8 blocked layout).
      int blocked = 0;
      OpResult b = run_op_blocked(OpId::Conv, at, inputs, kernel, threads, &blocked, {qp(s_y, cs.zp_y)});
      ASSERT_OK(b.status);
      EXPECT_EQ(blocked, 2);
      EXPECT_EQ(first_mismatch_i8(out_i8(b), want), "") << kernel << " NHWC, threads " << threads;
    }
  }
}

ConvCase conv(const std::string& label, Shape x, int64_t oc, int64_t group, std::vector<int64_t> k,
              std::vector<int64_t> strides, std::vector<int64_t> dil, std::vector<int64_t> pads) {
  ConvCase c;
  c.label = label;
  c.x = std::move(x);
  c.oc = oc;
  c.group = group;
  c.k = std::move(k);
  c.strides = std::move(strides);
  c.dil = std::move(dil);
  c.pads = std::move(pads);
  c.out_pad.assign(c.k.size(), 0);
  return c;
}

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> v;
  v.push_back(conv("basic_3x3_pad1", {1, 3, 6, 7}, 4, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().zp_x = 5;
  v.back().zp_y = -7;
  v.push_back(conv("stride_asym_pads_per_tensor", {1, 4, 9, 8}, 5, 1, {3, 2}, {2, 3}, {1, 1}, {0, 1, 2, 0}));
  v.back().zp_x = -128;
  v.back().per_channel = false;
  v.push_back(conv("dilation_batch2", {2, 2, 8, 8}, 3, 1, {3, 3}, {1, 1}, {2, 1}, {2, 1, 2, 1}));
  v.back().zp_x = 127;
  v.back().zp_y = 33;
  v.push_back(conv("group2", {1, 4, 5, 5}, 6, 2, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().zp_x = -17;
  v.push_back(conv("depthwise_stride2", {1, 6, 7, 7}, 6, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}));
  v.back().zp_x = 9;
  v.push_back(conv("depthwise_mult2", {1, 6, 6, 5}, 12, 6, {3, 3}, {1, 1}, {1, 1}, {1, 0, 1, 0}));
  v.back().zp_x = -3;
  v.push_back(conv("conv1d", {2, 3, 11}, 4, 1, {4}, {2}, {1}, {1, 2}));
  v.back().zp_x = 1;
  v.push_back(conv("conv3d", {1, 2, 4, 5, 3}, 3, 1, {2, 3, 2}, {1, 2, 1}, {1, 1, 1}, {1, 0, 1, 0, 1, 1}));
  v.back().zp_x = -64;
  v.push_back(conv("pads_beyond_kernel", {1, 2, 4, 4}, 2, 1, {2, 2}, {1, 1}, {1, 1}, {3, 3, 3, 3}));
  v.back().zp_x = 77;
  v.push_back(conv("no_bias_relu", {1, 3, 6, 6}, 4, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().bias = false;
  v.back().act = "Relu";
  v.back().zp_y = -20;
  v.push_back(conv("clip", {1, 3, 6, 6}, 4, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().act = "Clip";
  v.back().amin = -0.7f;
  v.back().amax = 1.3f;
  v.push_back(conv("clip_inf", {1, 3, 6, 6}, 4, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().act = "Clip";
  v.back().amin = -kInf;
  v.back().amax = kInf;
  // Value activations, applied before the output's quantization (Conv only).
  v.push_back(conv("leaky_relu", {1, 5, 6, 7}, 9, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().act = "LeakyRelu";
  v.back().amin = 0.1f;
  v.back().zp_x = -9;
  v.back().zp_y = -60;
  v.push_back(conv("hardswish_depthwise", {1, 19, 9, 7}, 19, 19, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().act = "HardSwish";
  v.back().zp_x = 21;
  v.back().zp_y = -100;
  v.push_back(conv("hardswish_tails_oc37", {1, 5, 3, 13}, 37, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().act = "HardSwish";
  v.back().zp_y = -90;
  v.push_back(conv("hardsigmoid_1x1", {1, 24, 5, 6}, 20, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}));
  v.back().act = "HardSigmoid";
  v.back().amin = 0.2f;
  v.back().amax = 0.5f;
  v.push_back(conv("ties", {1, 8, 6, 6}, 6, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().ties = true;
  v.back().zp_x = 11;
  v.back().zp_y = 3;
  v.push_back(conv("ties_depthwise", {1, 8, 6, 6}, 8, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().ties = true;
  v.back().zp_x = -5;

  // Shapes of the AVX2 kernel's blocks: pixel tails around its 6- and 4-pixel register blocks,
  // output channels past 16 per group, odd channels per group (pairs), depthwise channels past 8,
  // a stem (3 channels, 7x7 stride 2), 1x1 with stride 2, and 2304 products per output.
  v.push_back(conv("tails_oc37_ow13", {1, 5, 3, 13}, 37, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().zp_x = -128;
  v.push_back(conv("group3_odd_channels", {2, 9, 7, 11}, 21, 3, {3, 3}, {2, 1}, {1, 2}, {2, 1, 0, 2}));
  v.back().zp_x = 40;
  v.push_back(conv("depthwise_c19_ow7", {1, 19, 9, 7}, 19, 19, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().zp_x = -77;
  v.push_back(conv("depthwise_5x5_s2_dil", {2, 24, 12, 17}, 24, 24, {5, 5}, {2, 2}, {1, 2}, {2, 4, 1, 3}));
  v.back().per_channel = false;
  v.push_back(conv("stem_7x7_s2", {1, 3, 23, 29}, 16, 1, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}));
  v.back().zp_x = 3;
  v.push_back(conv("pointwise_s2", {1, 32, 9, 10}, 20, 1, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}));
  v.back().zp_x = -1;
  v.push_back(conv("wide_k", {1, 256, 5, 21}, 18, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().zp_x = -128;
  v.push_back(conv("group2_even_w35", {1, 16, 4, 35}, 10, 2, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}));
  v.back().zp_x = 60;
  v.push_back(conv("convT_stride2_pads_outpad", {1, 3, 4, 5}, 2, 1, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}));
  v.back().transpose = true;
  v.back().out_pad = {1, 0};
  v.back().zp_x = 13;
  v.back().zp_y = -9;
  v.push_back(conv("convT_group2_per_tensor", {1, 4, 3, 3}, 6, 2, {2, 3}, {2, 1}, {1, 2}, {0, 1, 1, 0}));
  v.back().transpose = true;
  v.back().per_channel = false;
  v.back().zp_x = -100;
  v.push_back(conv("convT_1d_stride3_relu", {2, 2, 5}, 3, 1, {3}, {3}, {1}, {2, 0}));
  v.back().transpose = true;
  v.back().act = "Relu";
  v.back().zp_x = 3;
  v.back().zp_y = 4;
  v.push_back(conv("convT_ties", {1, 4, 3, 3}, 3, 1, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}));
  v.back().transpose = true;
  v.back().ties = true;
  v.back().zp_x = 7;
  return v;
}

TEST(ConvInt8Ref, MatchesNaiveFormula) {
  uint32_t seed = 100;
  for (const ConvCase& c : conv_cases()) run_case(c, seed++);
}

// A build with the XNNPACK backend registers its convolution, and the registry picks it for a
// quantized 2-D Conv (so the comparisons above ran on it, not on a skip).
TEST(ConvInt8Fast, XnnpackKernelIsPickedInXnnpackBuilds) {
#ifndef ORKNN_WITH_XNNPACK
  GTEST_SKIP() << "built without the XNNPACK backend";
#else
  const std::vector<std::string> kernels = general_conv_kernels();
  EXPECT_NE(std::find(kernels.begin(), kernels.end(), kXnnpackConv), kernels.end());
  std::vector<int8_t> x(2 * 5 * 5, 3), w(4 * 2 * 3 * 3, -2);
  Attrs at;
  at.set_ints("strides", {1, 1});
  at.set_ints("dilations", {1, 1});
  at.set_ints("pads", {1, 1, 1, 1});
  OpResult r = run_op(OpId::Conv, at, {q8({1, 2, 5, 5}, x, qp(0.5f, 1)), weights({4, 2, 3, 3}, w, {0.25f}, 0)}, 1, "",
                      1, {qp(1.f, 0)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, kXnnpackConv);
  // Centre pixel: 18 taps of (3 - 1) * -2, times 0.5 * 0.25 / 1.
  EXPECT_EQ(out_i8(r)[12], static_cast<int8_t>(std::nearbyint(18 * 2 * -2 * 0.125f)));
#endif
}

TEST(ConvInt8Ref, SaturatesAtBothEnds) {
  // s_y far below the accumulator range: most outputs sit at -128 or 127.
  std::mt19937 rng(7);
  std::vector<int8_t> x(100), w(3 * 4 * 9);
  for (auto& v : x) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
  for (auto& v : w) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-127, 127)(rng));
  OpResult r = run_op(OpId::Conv, A().ints("pads", {1, 1, 1, 1}),
                      {q8({1, 4, 5, 5}, x, qp(0.1f, 2)), weights({3, 4, 3, 3}, w, {0.1f}, 0)}, 1, "ref", 1,
                      {qp(0.001f, 5)});
  ASSERT_OK(r.status);
  int lo = 0, hi = 0;
  for (int8_t v : out_i8(r)) {
    lo += v == -128;
    hi += v == 127;
  }
  EXPECT_GT(lo, 10);
  EXPECT_GT(hi, 10);
  EXPECT_EQ(lo + hi, 75) << "an output escaped saturation";
}

// ------------------------------------------------------------------ infer

TEST(ConvInt8Infer, AcceptsQuantizedFormAndIsIdempotent) {
  Graph g;
  Node n;
  n.name = "qconv";
  n.op = OpId::Conv;
  const int x = g.add_tensor("x", {1, 2, 5, 5}, DType::kI8);
  g.tensor(x).quant = qp(0.1f, 3);
  std::vector<int8_t> wv(3 * 2 * 9, 1);
  const int w = g.add_const("w", {3, 2, 3, 3}, DType::kI8, wv.data(), wv.size());
  g.tensor(w).quant = per_axis({0.1f, 0.2f, 0.3f}, 0);
  const std::vector<int32_t> bv = {1, 2, 3};
  const int b = g.add_const("b", {3}, DType::kI32, bv.data(), bv.size() * 4);
  const int y = g.add_tensor("y", {}, DType::kF32);  // the converter may leave the dtype: infer sets int8
  g.tensor(y).quant = qp(0.5f, -2);
  n.inputs = {x, w, b};
  n.outputs = {y};
  n.attrs.set_string("auto_pad", "SAME_UPPER");
  n.attrs.set_string("fused_act", "Clip");
  ASSERT_OK(find_op(n.op)->infer(g, n));
  EXPECT_EQ(g.tensor(y).dtype, DType::kI8);
  EXPECT_EQ(g.tensor(y).shape, Shape({1, 3, 5, 5}));
  EXPECT_EQ(n.attrs.get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  expect_reinfer_unchanged(g, n);
  EXPECT_TRUE(same_params(g.tensor(y).quant, qp(0.5f, -2)));
}

// A quantized Conv/ConvTranspose whose parts can be swapped for broken ones.
struct QConv {
  OpId op = OpId::Conv;
  TensorData x = q8({1, 2, 4, 4}, std::vector<int8_t>(32, 1), qp(0.1f, 0));
  TensorData w = q8({2, 2, 3, 3}, std::vector<int8_t>(36, 1), qp(0.05f, 0), true);
  TensorData b = TensorData::none();
  QuantParams y = qp(0.2f, 0);
  Attrs attrs;
  Status infer() const { return run_quantized_status(op, attrs, {x, w, b}, y); }
};

TEST(ConvInt8Infer, RefusesFormsTheKernelDoesNotHandle) {
  const std::string conv = "Conv_under_test", convt = "ConvTranspose_under_test";
  {
    QConv c;
    ASSERT_OK(c.infer());  // the base case is valid
  }
  {  // int8 activation without parameters
    QConv c;
    c.x.quant = QuantParams();
    expect_invalid_model(c.infer(), "must be a quantized int8 tensor", conv);
  }
  {  // float activation with quantized weights and output
    QConv c;
    c.x = f32({1, 2, 4, 4}, std::vector<float>(32, 0.f));
    expect_invalid_model(c.infer(), "must be a quantized int8 tensor", conv);
  }
  {  // per-channel parameters on the activation
    QConv c;
    c.x.quant = per_axis({0.1f, 0.2f}, 1);
    expect_invalid_model(c.infer(), "must be quantized per tensor", conv);
  }
  {  // missing output parameters
    QConv c;
    c.y = QuantParams();
    expect_invalid_model(c.infer(), "has no quantization parameters", conv);
  }
  {  // per-channel output
    QConv c;
    c.y = per_axis({0.1f, 0.2f}, 1);
    expect_invalid_model(c.infer(), "must be quantized per tensor", conv);
  }
  {  // per-channel weights on the wrong axis
    QConv c;
    c.w.quant = per_axis({0.1f, 0.2f}, 1);
    expect_invalid_model(c.infer(), "per-axis parameters on axis 1", conv);
  }
  {  // asymmetric weights
    QConv c;
    c.w.quant = qp(0.05f, 3);
    expect_invalid_model(c.infer(), "symmetric", conv);
  }
  {  // a residual input (float convolutions only)
    QConv c;
    const TensorData r = q8({1, 2, 2, 2}, std::vector<int8_t>(8, 1), qp(0.2f, 0));
    expect_invalid_model(run_quantized_status(c.op, c.attrs, {c.x, c.w, c.b, r}, c.y),
                         "residual input (4th) is only supported on float convolutions", conv);
  }
  {  // weights computed at run time
    QConv c;
    c.w.is_const = false;
    expect_invalid_model(c.infer(), "must be an int8 constant", conv);
  }
  {  // float weights
    QConv c;
    c.w = f32({2, 2, 3, 3}, std::vector<float>(36, 0.f), true);
    expect_invalid_model(c.infer(), "must be an int8 constant", conv);
  }
  {  // -128 in the weights
    QConv c;
    std::vector<int8_t> wv(36, 1);
    wv[20] = -128;
    c.w = q8({2, 2, 3, 3}, wv, qp(0.05f, 0), true);
    expect_invalid_model(c.infer(), "-128", conv);
  }
  {  // float bias
    QConv c;
    c.b = f32({2}, {0.f, 0.f}, true);
    expect_invalid_model(c.infer(), "must be an int32 constant", conv);
  }
  {  // non-constant bias
    QConv c;
    c.b = TensorData::of({2}, std::vector<int32_t>{0, 0}, DType::kI32, false);
    expect_invalid_model(c.infer(), "must be an int32 constant", conv);
  }
  {  // bias with a zero point
    QConv c;
    c.b = bias_i32({0, 0});
    c.b.quant = qp(0.005f, 1);
    expect_invalid_model(c.infer(), "zero point 1", conv);
  }
  {  // an accumulator that could overflow int32: 18 products plus a bias near INT32_MAX
    QConv c;
    c.b = bias_i32({INT32_MAX - 1000, 0});
    expect_invalid_model(c.infer(), "could overflow", conv);
  }
  {  // a fused activation that is neither a clamp nor a value activation (docs/numerics.md)
    QConv c;
    c.attrs.set_string("fused_act", "Sigmoid");
    expect_invalid_model(c.infer(), "is not allowed on a quantized Conv node", conv);
  }
  {  // a value activation is applied before the output's quantization
    QConv c;
    c.attrs.set_string("fused_act", "HardSwish");
    EXPECT_OK(c.infer());
  }
  {  // Relu and Clip are fine
    QConv c;
    c.attrs.set_string("fused_act", "Relu");
    EXPECT_OK(c.infer());
  }
  {  // ConvTranspose: per-channel weights along axis 1 with group 1 are fine ...
    QConv c;
    c.op = OpId::ConvTranspose;
    c.w = q8({2, 3, 3, 3}, std::vector<int8_t>(54, 1), per_axis({0.1f, 0.2f, 0.3f}, 1), true);
    EXPECT_OK(c.infer());
    // ... not along axis 0 (input channels) ...
    c.w.quant = per_axis({0.1f, 0.2f}, 0);
    expect_invalid_model(c.infer(), "per-axis parameters on axis 0", convt);
  }
  {  // ... and not with group 2 (axis 1 holds M / group channels)
    QConv c;
    c.op = OpId::ConvTranspose;
    c.attrs.set_int("group", 2);
    c.w = q8({2, 3, 3, 3}, std::vector<int8_t>(54, 1), per_axis({0.1f, 0.2f, 0.3f}, 1), true);
    expect_invalid_model(c.infer(), "per-axis parameters on axis 1", convt);
    c.w.quant = qp(0.1f, 0);
    EXPECT_OK(c.infer());
  }
}

TEST(ConvInt8Infer, FloatConvIsUnchanged) {
  OpResult r = run_op(OpId::Conv, A(), {f32({1, 1, 2, 2}, {1.f, 2.f, 3.f, 4.f}), f32({1, 1, 1, 1}, {2.f}, true)}, 1,
                      "ref");
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref");
  EXPECT_EQ(r.outputs[0].dtype, DType::kF32);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2.f, 4.f, 6.f, 8.f}));
}

}  // namespace
}  // namespace orknn::test
