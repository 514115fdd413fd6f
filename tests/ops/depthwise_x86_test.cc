// The hand-written AVX-512 depthwise Conv kernels (src/kernels/x86/depthwise_avx512.cc) against the
// reference kernels: float within the fast-kernel tolerance of docs/kernels.md (and, as the kernel
// promises, bit-identical), INT8 bit-exact against ref_int8 (docs/numerics.md). Every shape class
// the kernels take (kernel 3/5 per axis, stride 1/2 per axis, symmetric and asymmetric pads, output
// widths 1..17 and multi-vector rows, odd channel counts, batch 2, each fused activation, 1 and 2
// threads), and the nodes they must leave to other kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "int8_test_helpers.h"
#include "kernels/kernel.h"
#include "ops/op.h"
#include "testutil/op_harness.h"

namespace orknn {

// kernels/x86/depthwise_avx512.cc: the output width from which the kernels take a node (by
// default, narrower planes stay on oneDNN, which is faster there).
int x86_depthwise_set_min_output_width(int width);

namespace {

// Lets the depthwise kernels take every width while in scope, so that every code path (tails,
// small planes) is tested.
struct AllWidths {
  AllWidths() : previous(x86_depthwise_set_min_output_width(1)) {}
  ~AllWidths() { x86_depthwise_set_min_output_width(previous); }
  int previous;
};

using test::OpResult;
using test::TensorData;
namespace q8t = test::q8t;

constexpr const char* kF32Kernel = "x86_dw_f32";
constexpr const char* kI8Kernel = "x86_dw_int8";

bool kernel_registered(const char* name) {
  for (const KernelEntry* e : kernels_for(OpId::Conv))
    if (std::string(e->name) == name) return true;
  return false;
}

bool cpu_runs_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}

#define REQUIRE_DW_KERNEL(name)                                                    \
  if (!kernel_registered(name)) GTEST_SKIP() << name << " not built";              \
  if (!cpu_runs_avx512()) GTEST_SKIP() << "CPU without AVX-512F/BW/VL";            \
  const AllWidths all_widths_in_this_test

struct Act {
  const char* name;  // "" = none
  float alpha, beta;
};
const Act kFloatActs[] = {{"", 0.f, 0.f},        {"Relu", 0.f, 0.f},      {"Clip", 0.f, 6.f},
                          {"Clip", -0.5f, 0.25f}, {"LeakyRelu", 0.1f, 0.f}, {"HardSwish", 0.f, 0.f},
                          {"HardSigmoid", 0.2f, 0.5f}, {"Sigmoid", 0.f, 0.f}, {"Silu", 0.f, 0.f}};
// The activations the kernel computes with the reference's operations (bit-identical); Sigmoid
// and Silu take the vectorised e^x (fused_act_avx512.h: within 8 float ulps).
bool exact_act(const Act& a) { return std::string(a.name) != "Sigmoid" && std::string(a.name) != "Silu"; }
// INT8: the clamps, and the value activations applied before the requantization's rounding.
const Act kInt8Acts[] = {{"", 0.f, 0.f},          {"Relu", 0.f, 0.f},      {"Clip", 0.f, 6.f},
                         {"Clip", -0.7f, 0.3f},   {"LeakyRelu", 0.1f, 0.f}, {"HardSwish", 0.f, 0.f},
                         {"HardSigmoid", 0.2f, 0.5f}};

struct DwCase {
  int64_t n = 1, c = 3, h = 7, w = 9;
  int64_t kh = 3, kw = 3, sh = 1, sw = 1;
  std::vector<int64_t> pads = {1, 1, 1, 1};  // top, left, bottom, right
  int64_t dilation = 1, multiplier = 1;
  bool bias = true;
  Act act = {"", 0.f, 0.f};
  std::string label() const {
    char b[256];
    std::snprintf(b, sizeof(b), "n%lld c%lld %lldx%lld k%lldx%lld s%lldx%lld pads %lld,%lld,%lld,%lld d%lld m%lld %s%s",
                  (long long)n, (long long)c, (long long)h, (long long)w, (long long)kh, (long long)kw,
                  (long long)sh, (long long)sw, (long long)pads[0], (long long)pads[1], (long long)pads[2],
                  (long long)pads[3], (long long)dilation, (long long)multiplier, bias ? "bias " : "",
                  act.name[0] ? act.name : "no-act");
    return b;
  }
  int64_t out_w() const { return (w + pads[1] + pads[3] - ((kw - 1) * dilation + 1)) / sw + 1; }
};

// Pad patterns of the shape-class sweeps (top, left, bottom, right), asymmetric ones included.
const std::vector<int64_t> kPadSets[] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2},
                                         {0, 1, 2, 0}, {2, 0, 1, 3}, {1, 2, 0, 1}};

// One case of the shape-class sweeps: kernel kh x kw, strides sh x sw, the given pads, and the
// input width that gives output width ow (the largest one, so stride 2 also sees an odd leftover
// column half the time); height, channels, batch and bias vary with ow. False when no input width
// gives ow. The activation is left to the caller.
bool shape_class_case(int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ow, const std::vector<int64_t>& pads,
                      DwCase* d) {
  d->kh = kh;
  d->kw = kw;
  d->sh = sh;
  d->sw = sw;
  d->pads = pads;
  d->w = std::max<int64_t>(1, (ow - 1) * sw + kw - pads[1] - pads[3] + (ow % 2 ? sw - 1 : 0));
  if (d->w + pads[1] + pads[3] < kw || d->out_w() != ow) return false;
  d->h = 3 + ow % 7;
  if (d->h + pads[0] + pads[2] < kh) d->h = kh;
  d->c = ow % 2 ? 3 : 5;
  d->n = ow % 3 == 0 ? 2 : 1;
  d->bias = ow % 4 != 1;
  return true;
}

Attrs dw_attrs(const DwCase& d) {
  Attrs a;
  a.set_ints("kernel_shape", {d.kh, d.kw});
  a.set_ints("strides", {d.sh, d.sw});
  a.set_ints("pads", d.pads);
  a.set_ints("dilations", {d.dilation, d.dilation});
  a.set_int("group", d.c);
  if (d.act.name[0]) {
    a.set_string("fused_act", d.act.name);
    a.set_float("fused_alpha", d.act.alpha);
    a.set_float("fused_beta", d.act.beta);
  }
  return a;
}

// ------------------------------------------------------------------ float

std::vector<TensorData> f32_inputs(const DwCase& d, uint32_t seed) {
  const int64_t oc = d.c * d.multiplier;
  std::vector<TensorData> in;
  in.push_back(TensorData::f32({d.n, d.c, d.h, d.w}, test::random_floats(static_cast<size_t>(d.n * d.c * d.h * d.w), seed)));
  in.push_back(TensorData::f32({oc, 1, d.kh, d.kw}, test::random_floats(static_cast<size_t>(oc * d.kh * d.kw), seed + 1), true));
  if (d.bias) in.push_back(TensorData::f32({oc}, test::random_floats(static_cast<size_t>(oc), seed + 2), true));
  return in;
}

// Runs the case with the reference and with the best kernel (1 and 2 threads); expects
// `want_kernel` to be chosen (or, when null, anything but the depthwise kernel).
void check_f32(const DwCase& d, uint32_t seed, const char* want_kernel) {
  SCOPED_TRACE(d.label());
  const Attrs attrs = dw_attrs(d);
  const std::vector<TensorData> in = f32_inputs(d, seed);
  OpResult ref = test::run_op(OpId::Conv, attrs, in, 1, "ref");
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  const std::vector<float> want = ref.outputs[0].as<float>();
  float scale = 1.f;
  for (float v : want) scale = std::max(scale, std::fabs(v));
  for (int threads : {1, 2}) {
    OpResult fast = test::run_op(OpId::Conv, attrs, in, 1, "", threads);
    ASSERT_TRUE(fast.status.ok()) << fast.status.message();
    if (want_kernel) EXPECT_EQ(fast.kernel_name, want_kernel);
    else EXPECT_NE(fast.kernel_name, kF32Kernel);
    const std::vector<float> got = fast.outputs[0].as<float>();
    ASSERT_EQ(got.size(), want.size());
    // The contract (docs/kernels.md "Tolerance") ...
    EXPECT_LE(test::max_abs_diff(got, want), 1e-4f * scale) << threads << " threads";
    // ... and this kernel's stronger property: the reference's operations in its order.
    if (want_kernel && exact_act(d.act))
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << threads << " threads";
  }
}

TEST(DepthwiseX86F32, EveryShapeClassMatchesReference) {
  REQUIRE_DW_KERNEL(kF32Kernel);
  uint32_t seed = 1;
  int cases = 0;
  for (int64_t kh : {3, 5})
    for (int64_t kw : {3, 5})
      for (int64_t sh : {1, 2})
        for (int64_t sw : {1, 2})
          for (int64_t ow = 1; ow <= 17; ++ow) {
            DwCase d;
            if (!shape_class_case(kh, kw, sh, sw, ow, kPadSets[static_cast<size_t>(ow + kh + sw) % std::size(kPadSets)],
                                  &d))
              continue;
            d.act = kFloatActs[static_cast<size_t>(ow) % (sizeof(kFloatActs) / sizeof(kFloatActs[0]))];
            check_f32(d, seed, kF32Kernel);
            seed += 3;
            ++cases;
          }
  std::printf("  [info] %d float cases\n", cases);
  EXPECT_GT(cases, 200);
}

TEST(DepthwiseX86F32, WideRowsBatchAndEveryActivation) {
  REQUIRE_DW_KERNEL(kF32Kernel);
  uint32_t seed = 900;
  for (const Act& act : kFloatActs)
    for (int64_t k : {3, 5})
      for (int64_t s : {1, 2}) {
        DwCase d;
        d.n = 2;
        d.c = 7;
        d.h = 11;
        d.w = 70 + s;  // several vectors of 16 plus a tail, the 4-vector blocks and the remainder
        d.kh = d.kw = k;
        d.sh = d.sw = s;
        d.pads = {k / 2, k / 2, k / 2 - (s - 1), k / 2};
        d.act = act;
        check_f32(d, seed, kF32Kernel);
        seed += 3;
      }
  // MobileNet-like layers (stride 2 with the right pad unused, big planes).
  for (const DwCase& d : {DwCase{1, 32, 112, 112, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
                          DwCase{1, 16, 112, 112, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
                          DwCase{1, 9, 28, 28, 5, 5, 2, 2, {1, 1, 2, 2}, 1, 1, true, {"HardSwish", 0.f, 0.f}},
                          DwCase{1, 17, 7, 7, 5, 5, 1, 1, {2, 2, 2, 2}, 1, 1, false, {"", 0.f, 0.f}}}) {
    check_f32(d, seed, kF32Kernel);
    seed += 3;
  }
}

// The runtime's blocked activations (nChw16c; kernel.h BlockedIo): the float kernel's second path,
// bit-identical to the reference too, over kernel sizes, strides, pads (incl. outputs over padding
// only), widths around the 8-output groups, batch, bias and every activation.
TEST(DepthwiseX86F32, BlockedActivationsBitIdentical) {
  REQUIRE_DW_KERNEL(kF32Kernel);
  uint32_t seed = 3000;
  int cases = 0;
  for (int64_t k : {3, 5})
    for (int64_t s : {1, 2})
      for (int64_t w : {1, 3, 6, 9, 13, 24, 37}) {
        DwCase d;
        d.c = w % 2 ? 16 : 32;
        d.n = w % 3 == 0 ? 2 : 1;
        d.h = 5 + w % 4;
        d.w = w;
        d.kh = d.kw = k;
        d.sh = d.sw = s;
        d.pads = kPadSets[static_cast<size_t>(w + k + s) % std::size(kPadSets)];
        if (d.w + d.pads[1] + d.pads[3] < k || d.h + d.pads[0] + d.pads[2] < k) d.pads = {k, k, k, k};
        d.bias = w % 4 != 1;
        d.act = kFloatActs[static_cast<size_t>(cases) % std::size(kFloatActs)];
        SCOPED_TRACE(d.label());
        const Attrs attrs = dw_attrs(d);
        const std::vector<TensorData> in = f32_inputs(d, seed);
        OpResult ref = test::run_op(OpId::Conv, attrs, in, 1, "ref");
        ASSERT_TRUE(ref.status.ok()) << ref.status.message();
        for (int threads : {1, 2}) {
          int blocked = 0;
          OpResult fast = test::run_op_blocked(OpId::Conv, attrs, in, kF32Kernel, threads, &blocked);
          ASSERT_TRUE(fast.status.ok()) << fast.status.message();
          EXPECT_EQ(blocked, 2) << "input and output in nChw16c";
          if (exact_act(d.act))
            EXPECT_EQ(0, std::memcmp(fast.outputs[0].bytes.data(), ref.outputs[0].bytes.data(), ref.outputs[0].bytes.size()))
                << threads << " threads";
          else
            EXPECT_LE(test::max_abs_diff(fast.outputs[0].as<float>(), ref.outputs[0].as<float>()), 1e-5f)
                << threads << " threads";
        }
        seed += 3;
        ++cases;
      }
  EXPECT_EQ(cases, 28);
}

// Pads larger than the kernel: whole output rows and columns see only padding (the reference's
// sum then stays 0; bias and activation still apply).
TEST(DepthwiseX86F32, OutputsOverPaddingOnly) {
  REQUIRE_DW_KERNEL(kF32Kernel);
  DwCase d;
  d.c = 3;
  d.h = 4;
  d.w = 5;
  d.pads = {4, 6, 5, 3};
  d.act = {"HardSigmoid", 0.2f, 0.5f};
  check_f32(d, 77, kF32Kernel);
  d.sh = d.sw = 2;
  d.act = {"LeakyRelu", 0.1f, 0.f};
  check_f32(d, 78, kF32Kernel);
}

// Non-finite inputs go through as the reference computes them (NaN stays NaN; Relu of NaN is 0).
TEST(DepthwiseX86F32, NonFiniteInputs) {
  REQUIRE_DW_KERNEL(kF32Kernel);
  for (const Act& act : kFloatActs) {
    DwCase d;
    d.c = 2;
    d.h = 5;
    d.w = 20;
    d.act = act;
    std::vector<TensorData> in = f32_inputs(d, 5);
    std::vector<float> x = in[0].as<float>();
    x[3] = std::numeric_limits<float>::quiet_NaN();
    x[27] = std::numeric_limits<float>::infinity();
    x[60] = -std::numeric_limits<float>::infinity();
    in[0] = TensorData::f32(in[0].shape, x);
    const Attrs attrs = dw_attrs(d);
    OpResult ref = test::run_op(OpId::Conv, attrs, in, 1, "ref");
    OpResult fast = test::run_op(OpId::Conv, attrs, in, 1, kF32Kernel);
    ASSERT_TRUE(ref.status.ok() && fast.status.ok()) << act.name;
    const std::vector<float> a = ref.outputs[0].as<float>(), b = fast.outputs[0].as<float>();
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::isnan(a[i])) EXPECT_TRUE(std::isnan(b[i])) << act.name << " at " << i;
      else if (exact_act(act) || std::isinf(a[i])) EXPECT_EQ(a[i], b[i]) << act.name << " at " << i;
      else EXPECT_NEAR(a[i], b[i], 1e-6f * std::max(1.f, std::fabs(a[i]))) << act.name << " at " << i;
    }
  }
}

// Nodes the depthwise kernel must leave to the other kernels (which still match the reference).
TEST(DepthwiseX86F32, DeclinedNodesFallBack) {
  REQUIRE_DW_KERNEL(kF32Kernel);
  DwCase dil;
  dil.dilation = 2;
  dil.pads = {2, 2, 2, 2};
  check_f32(dil, 11, nullptr);
  DwCase mult;
  mult.multiplier = 2;
  check_f32(mult, 12, nullptr);
  DwCase k7;
  k7.kh = k7.kw = 7;
  k7.h = k7.w = 9;
  k7.pads = {3, 3, 3, 3};
  check_f32(k7, 13, nullptr);
  DwCase s3;
  s3.sh = s3.sw = 3;
  check_f32(s3, 14, nullptr);
  DwCase k1;  // 1x1 depthwise (a per-channel scale)
  k1.kh = k1.kw = 1;
  k1.pads = {0, 0, 0, 0};
  check_f32(k1, 16, nullptr);

  // A grouped (not depthwise) conv: two input channels per group.
  Attrs a;
  a.set_ints("kernel_shape", {3, 3});
  a.set_ints("pads", {1, 1, 1, 1});
  a.set_int("group", 2);
  std::vector<TensorData> in = {TensorData::f32({1, 4, 6, 6}, test::random_floats(144, 20)),
                                TensorData::f32({2, 2, 3, 3}, test::random_floats(36, 21), true)};
  OpResult r = test::run_op(OpId::Conv, a, in, 1, "");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NE(r.kernel_name, kF32Kernel);
  // Non-constant weights.
  DwCase d;
  std::vector<TensorData> vin = f32_inputs(d, 30);
  vin[1].is_const = false;
  OpResult v = test::run_op(OpId::Conv, dw_attrs(d), vin, 1, "");
  ASSERT_TRUE(v.status.ok()) << v.status.message();
  EXPECT_NE(v.kernel_name, kF32Kernel);
}

// Without the test override, narrow outputs (14, 7: the small late layers) stay on oneDNN and
// wide ones (28 and more) take the depthwise kernel; so do narrow ones whose channel count is
// not a multiple of 16 (oneDNN would pad them).
TEST(DepthwiseX86Selection, NarrowPlanesStayOnOnednnByDefault) {
  REQUIRE_DW_KERNEL(kF32Kernel);
  x86_depthwise_set_min_output_width(0);  // the default, inside this test
  DwCase narrow{1, 16, 14, 14, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}};
  check_f32(narrow, 61, nullptr);
  DwCase narrow_odd{1, 12, 14, 14, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}};
  check_f32(narrow_odd, 64, kF32Kernel);
  DwCase wide{1, 8, 28, 28, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}};
  check_f32(wide, 62, kF32Kernel);
  DwCase wide_s2{1, 8, 56, 56, 5, 5, 2, 2, {1, 1, 2, 2}, 1, 1, true, {"", 0.f, 0.f}};
  check_f32(wide_s2, 63, kF32Kernel);
}

// ------------------------------------------------------------------ INT8

struct QCase {
  DwCase d;
  int32_t zp_x = 0, zp_y = 0;
  float s_x = 0.05f, s_y = 0.1f;
  std::vector<float> s_w;  // one (per tensor) or one per channel; empty: per channel, random
  enum class Data { kRandom, kExtreme, kTies } data = Data::kRandom;
  int64_t bias_mag = 5000;
};

// Checks the fast kernel bit for bit against ref_int8 with 1 and 2 threads, NCHW and (with VNNI)
// NHWC; `want_kernel` null:
// the depthwise kernel must not be chosen.
void check_i8(const QCase& q, uint32_t seed, const char* want_kernel) {
  const DwCase& d = q.d;
  SCOPED_TRACE(d.label() + " zp_x " + std::to_string(q.zp_x) + " zp_y " + std::to_string(q.zp_y));
  const int64_t oc = d.c * d.multiplier, taps = d.kh * d.kw;
  std::mt19937 rng(seed);
  std::vector<int8_t> x = q8t::random_i8(static_cast<size_t>(d.n * d.c * d.h * d.w), seed);
  std::vector<int8_t> w(static_cast<size_t>(oc * taps));
  std::uniform_int_distribution<int> wd(-127, 127);
  for (auto& v : w) v = static_cast<int8_t>(wd(rng));
  std::vector<float> s_w = q.s_w;
  if (s_w.empty()) {
    std::uniform_real_distribution<float> sd(0.002f, 0.03f);
    for (int64_t c = 0; c < oc; ++c) s_w.push_back(sd(rng));
  }
  std::vector<int32_t> bias(static_cast<size_t>(oc));
  std::uniform_int_distribution<int64_t> bd(-q.bias_mag, q.bias_mag);
  for (auto& b : bias) b = static_cast<int32_t>(bd(rng));
  if (q.data == QCase::Data::kExtreme) {
    // |x - zp_x| = 255 everywhere and weights of one sign per channel: the largest sums.
    for (auto& v : x) v = static_cast<int8_t>(q.zp_x >= 0 ? -128 : 127);
    for (int64_t c = 0; c < oc; ++c)
      for (int64_t t = 0; t < taps; ++t) w[static_cast<size_t>(c * taps + t)] = static_cast<int8_t>(c % 2 ? 127 : -127);
  } else if (q.data == QCase::Data::kTies) {
    // M = 0.5 exactly (s_x = 1, s_w = 0.5, s_y = 1) and small values: float(acc) * M hits .5 often.
    std::uniform_int_distribution<int> small(-3, 3);
    for (auto& v : x) v = static_cast<int8_t>(q.zp_x + small(rng));
    for (auto& v : w) v = static_cast<int8_t>(small(rng));
    for (auto& b : bias) b = small(rng);
  }
  std::vector<TensorData> in;
  in.push_back(q8t::q8({d.n, d.c, d.h, d.w}, x, q8t::qp(q.s_x, q.zp_x)));
  in.push_back(q8t::weights({oc, 1, d.kh, d.kw}, w, s_w, 0));
  if (d.bias) in.push_back(q8t::i32c({oc}, bias));
  const Attrs attrs = dw_attrs(d);
  const QuantParams yq = q8t::qp(q.s_y, q.zp_y);
  OpResult ref = test::run_op(OpId::Conv, attrs, in, 1, "ref", 1, {yq});
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  ASSERT_EQ(ref.kernel_name, "ref_int8");
  const std::vector<int8_t> want = q8t::out_i8(ref);
  for (int threads : {1, 2}) {
    OpResult fast = test::run_op(OpId::Conv, attrs, in, 1, "", threads, {yq});
    ASSERT_TRUE(fast.status.ok()) << fast.status.message();
    if (want_kernel) EXPECT_EQ(fast.kernel_name, want_kernel);
    else EXPECT_NE(fast.kernel_name, kI8Kernel);
    const std::vector<int8_t> got = q8t::out_i8(fast);
    ASSERT_EQ(got.size(), want.size());
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i] && bad++ == 0) first = i;
    EXPECT_EQ(bad, 0u) << threads << " threads; first at " << first << ": " << int(got[first]) << " vs "
                       << int(want[first]);
    // The NHWC path (the runtime's blocked INT8 activations), where the CPU has VNNI.
    if (!want_kernel || !__builtin_cpu_supports("avx512vnni")) continue;
    int blocked = 0;
    OpResult nhwc = test::run_op_blocked(OpId::Conv, attrs, in, kI8Kernel, threads, &blocked, {yq});
    ASSERT_TRUE(nhwc.status.ok()) << nhwc.status.message();
    EXPECT_EQ(blocked, 2) << "input and output NHWC";
    const std::vector<int8_t> got_nhwc = q8t::out_i8(nhwc);
    ASSERT_EQ(got_nhwc.size(), want.size());
    bad = 0;
    for (size_t i = 0; i < got_nhwc.size(); ++i)
      if (got_nhwc[i] != want[i] && bad++ == 0) first = i;
    EXPECT_EQ(bad, 0u) << "NHWC, " << threads << " threads; first at " << first << ": " << int(got_nhwc[first])
                       << " vs " << int(want[first]);
  }
}

TEST(DepthwiseX86Selection, NarrowInt8PlanesStayOnOnednnByDefault) {
  REQUIRE_DW_KERNEL(kI8Kernel);
  x86_depthwise_set_min_output_width(0);
  QCase narrow;
  narrow.d = DwCase{1, 8, 7, 7, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Relu", 0.f, 0.f}};
  check_i8(narrow, 64, nullptr);
  QCase wide;
  wide.d = DwCase{1, 8, 56, 56, 3, 3, 2, 2, {0, 0, 1, 1}, 1, 1, true, {"Relu", 0.f, 0.f}};
  check_i8(wide, 65, kI8Kernel);
}

TEST(DepthwiseX86Int8, EveryShapeClassBitExact) {
  REQUIRE_DW_KERNEL(kI8Kernel);
  const int32_t zps[] = {0, -37, 101, -128, 127, 3, -1};
  uint32_t seed = 5000;
  int cases = 0;
  for (int64_t kh : {3, 5})
    for (int64_t kw : {3, 5})
      for (int64_t sh : {1, 2})
        for (int64_t sw : {1, 2})
          for (int64_t ow = 1; ow <= 17; ++ow) {
            QCase q;
            DwCase& d = q.d;
            if (!shape_class_case(kh, kw, sh, sw, ow, kPadSets[static_cast<size_t>(ow + kw + sh) % std::size(kPadSets)],
                                  &d))
              continue;
            d.act = kInt8Acts[static_cast<size_t>(ow) % (sizeof(kInt8Acts) / sizeof(kInt8Acts[0]))];
            q.zp_x = zps[static_cast<size_t>(ow) % 7];
            q.zp_y = zps[static_cast<size_t>(ow + 3) % 7];
            if (ow % 5 == 0) q.s_w = {0.01f};  // per-tensor weights
            check_i8(q, seed++, kI8Kernel);
            ++cases;
          }
  std::printf("  [info] %d int8 cases\n", cases);
  EXPECT_GT(cases, 200);
}

TEST(DepthwiseX86Int8, LargeAccumulatorsTiesAndWideRows) {
  REQUIRE_DW_KERNEL(kI8Kernel);
  uint32_t seed = 7000;
  for (int64_t k : {3, 5})
    for (int64_t s : {1, 2})
      for (int32_t zp_x : {127, -128, 55}) {
        // Largest sums: 25 * 255 * 127 with a bias near the int32 limit the converter allows.
        QCase q;
        q.d = DwCase{2, 5, 9, 37, k, k, s, s, {k / 2, k / 2, k / 2, k / 2}, 1, 1, true, {"", 0.f, 0.f}};
        q.zp_x = zp_x;
        q.zp_y = -7;
        q.data = QCase::Data::kExtreme;
        q.bias_mag = 1000000000;
        q.s_x = 0.5f;
        q.s_y = 3000.f;
        check_i8(q, seed++, kI8Kernel);
        // Ties: M = 0.5 exactly.
        QCase t;
        t.d = DwCase{1, 7, 6, 45, k, k, s, s, {1, 2, 1, 0}, 1, 1, true, kInt8Acts[static_cast<size_t>(zp_x & 3)]};
        t.zp_x = zp_x == 127 ? 120 : (zp_x == -128 ? -120 : zp_x);
        t.zp_y = 1;
        t.s_x = 1.f;
        t.s_w = {0.5f};
        t.s_y = 1.f;
        t.data = QCase::Data::kTies;
        check_i8(t, seed++, kI8Kernel);
      }
  // Saturation both ways and every activation on wide rows.
  for (const Act& act : kInt8Acts) {
    QCase q;
    q.d = DwCase{2, 3, 10, 83, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, act};
    q.zp_x = -9;
    q.zp_y = 13;
    q.s_y = 0.004f;  // large multipliers: most outputs saturate
    check_i8(q, seed++, kI8Kernel);
    q.d.sh = q.d.sw = 2;
    q.d.kh = q.d.kw = 5;
    q.d.pads = {2, 2, 2, 2};
    q.s_y = 0.2f;
    check_i8(q, seed++, kI8Kernel);
  }
  // MobileNet-like layers.
  for (const DwCase& d : {DwCase{1, 32, 112, 112, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
                          DwCase{1, 24, 56, 56, 3, 3, 2, 2, {0, 0, 1, 1}, 1, 1, true, {"Relu", 0.f, 0.f}},
                          DwCase{1, 40, 14, 14, 5, 5, 1, 1, {2, 2, 2, 2}, 1, 1, true, {"", 0.f, 0.f}}}) {
    QCase q;
    q.d = d;
    q.zp_x = -128;
    q.zp_y = -128;
    check_i8(q, seed++, kI8Kernel);
  }
}

// The NHWC path computes 64 channels per block: channel counts around the block and lane
// boundaries (the last block's tail), several blocks, with every kernel size, stride and border.
TEST(DepthwiseX86Int8, NhwcChannelBlocks) {
  REQUIRE_DW_KERNEL(kI8Kernel);
  if (!__builtin_cpu_supports("avx512vnni")) GTEST_SKIP() << "CPU without AVX-512 VNNI";
  uint32_t seed = 9000;
  int cases = 0;
  for (int64_t c : {1, 4, 15, 63, 64, 65, 96, 130, 144, 197})
    for (int64_t k : {3, 5}) {
      QCase q;
      const int64_t s = c % 2 + 1, ks = (c / 2) % 2 ? 5 : 3;
      q.d = DwCase{c % 3 == 0 ? 2 : 1, c, 6 + c % 5, 9 + c % 7, k, ks, s, 3 - s, kPadSets[static_cast<size_t>(c + k) % std::size(kPadSets)],
                   1, 1, c % 4 != 1, kInt8Acts[static_cast<size_t>(c + k) % std::size(kInt8Acts)]};
      if (q.d.w + q.d.pads[1] + q.d.pads[3] < ks || q.d.h + q.d.pads[0] + q.d.pads[2] < k) q.d.pads = {k, ks, k, ks};
      q.zp_x = static_cast<int32_t>(c % 200) - 100;
      q.zp_y = static_cast<int32_t>(k * 11) - 40;
      check_i8(q, seed++, kI8Kernel);
      ++cases;
    }
  EXPECT_EQ(cases, 20);
}

// 16 and 32 channels with stride 1 across: the NHWC path computes 4 or 2 pixels per vector in the
// interior of a row (NhwcI8Dw::group). Widths around the groups of 4 vectors, every kernel size,
// vertical strides, borders, batch 2, and a mobilenet-sized row.
TEST(DepthwiseX86Int8, NhwcPixelGroups) {
  REQUIRE_DW_KERNEL(kI8Kernel);
  if (!__builtin_cpu_supports("avx512vnni")) GTEST_SKIP() << "CPU without AVX-512 VNNI";
  uint32_t seed = 9500;
  int cases = 0;
  for (int64_t c : {16, 32})
    for (int64_t w : {1, 2, 3, 5, 8, 9, 12, 17, 21, 35, 40})
      for (int64_t kw : {3, 5}) {
        QCase q;
        const int64_t kh = w % 2 ? 5 : 3, sh = w % 3 == 0 ? 2 : 1;
        q.d = DwCase{w % 4 == 1 ? 2 : 1, c, 7, w, kh, kw, sh, 1, kPadSets[static_cast<size_t>(w + kw) % std::size(kPadSets)],
                     1, 1, w % 5 != 0, kInt8Acts[static_cast<size_t>(w + c) % std::size(kInt8Acts)]};
        if (q.d.w + q.d.pads[1] + q.d.pads[3] < kw || q.d.h + q.d.pads[0] + q.d.pads[2] < kh) q.d.pads = {kh, kw, kh, kw};
        q.zp_x = static_cast<int32_t>(w * 6) - 120;  // -114 .. 120
        q.zp_y = static_cast<int32_t>(c) - 40;
        check_i8(q, seed++, kI8Kernel);
        ++cases;
      }
  QCase mobile;
  mobile.d = DwCase{1, 32, 9, 112, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}};
  check_i8(mobile, seed++, kI8Kernel);
  EXPECT_EQ(cases, 44);
}

TEST(DepthwiseX86Int8, OutputsOverPaddingOnly) {
  REQUIRE_DW_KERNEL(kI8Kernel);
  QCase q;
  q.d.c = 3;
  q.d.h = 4;
  q.d.w = 5;
  q.d.pads = {4, 6, 5, 3};
  q.zp_x = 17;
  q.zp_y = -3;
  check_i8(q, 41, kI8Kernel);
  q.d.sh = q.d.sw = 2;
  q.d.act = {"Relu", 0.f, 0.f};
  check_i8(q, 42, kI8Kernel);
}

TEST(DepthwiseX86Int8, DeclinedNodesFallBack) {
  REQUIRE_DW_KERNEL(kI8Kernel);
  QCase dil;
  dil.d.dilation = 2;
  dil.d.pads = {2, 2, 2, 2};
  dil.zp_x = 5;
  check_i8(dil, 51, nullptr);
  QCase mult;
  mult.d.multiplier = 2;
  check_i8(mult, 52, nullptr);
  QCase k7;
  k7.d.kh = k7.d.kw = 7;
  k7.d.h = k7.d.w = 9;
  k7.d.pads = {3, 3, 3, 3};
  check_i8(k7, 53, nullptr);
}

// ------------------------------------------------------------------ throughput (manual)

// One prepared node, to time kernel->run() alone (tests/testutil/op_harness.h prepares per call).
struct Prepared {
  Graph g;
  Node n;
  std::vector<std::vector<uint8_t>> bufs;
  KernelContext ctx;
  std::unique_ptr<Kernel> k;
};

std::unique_ptr<Prepared> prepare_named(const DwCase& d, bool quant, const char* kernel, int threads) {
  auto p = std::make_unique<Prepared>();
  Graph& g = p->g;
  Node& n = p->n;
  n.name = "dw";
  n.op = OpId::Conv;
  n.attrs = dw_attrs(d);
  const int64_t taps = d.kh * d.kw;
  const int xi = g.add_tensor("x", {d.n, d.c, d.h, d.w}, quant ? DType::kI8 : DType::kF32);
  int wi, bi;
  if (quant) {
    std::vector<int8_t> w = q8t::random_i8(static_cast<size_t>(d.c * taps), 3);
    for (auto& v : w) v = static_cast<int8_t>(std::max<int>(v, -127));
    std::vector<int32_t> b(static_cast<size_t>(d.c), 100);
    wi = g.add_const("w", {d.c, 1, d.kh, d.kw}, DType::kI8, w.data(), w.size());
    g.tensor(wi).quant = q8t::qp(0.01f, 0);
    bi = g.add_const("b", {d.c}, DType::kI32, b.data(), b.size() * 4);
    g.tensor(xi).quant = q8t::qp(0.05f, -3);
  } else {
    std::vector<float> w = test::random_floats(static_cast<size_t>(d.c * taps), 3);
    std::vector<float> b = test::random_floats(static_cast<size_t>(d.c), 4);
    wi = g.add_const("w", {d.c, 1, d.kh, d.kw}, DType::kF32, w.data(), w.size() * 4);
    bi = g.add_const("b", {d.c}, DType::kF32, b.data(), b.size() * 4);
  }
  n.inputs = {xi, wi, bi};
  const int yi = g.add_tensor("y", {}, quant ? DType::kI8 : DType::kF32);
  if (quant) g.tensor(yi).quant = q8t::qp(0.1f, 5);
  n.outputs = {yi};
  if (!find_op(OpId::Conv)->infer(g, n).ok()) return nullptr;
  for (const KernelEntry* e : kernels_for(OpId::Conv))
    if (std::string(e->name) == kernel && (!e->supports || e->supports(g, n))) p->k = e->create();
  if (!p->k) return nullptr;
  // Realistic input values (a byte pattern would make float products denormal).
  p->bufs.emplace_back(g.tensor(xi).nbytes() + 64, 0);
  if (quant) {
    const std::vector<int8_t> xv = q8t::random_i8(static_cast<size_t>(g.tensor(xi).numel()), 8);
    std::memcpy(p->bufs.back().data(), xv.data(), xv.size());
  } else {
    const std::vector<float> xv = test::random_floats(static_cast<size_t>(g.tensor(xi).numel()), 8);
    std::memcpy(p->bufs.back().data(), xv.data(), xv.size() * sizeof(float));
  }
  p->bufs.emplace_back(g.tensor(yi).nbytes() + 64, 0);
  p->ctx.graph = &g;
  p->ctx.node = &n;
  p->ctx.num_threads = threads;
  p->ctx.inputs = {p->bufs[0].data(), g.tensor(wi).data.ptr, g.tensor(bi).data.ptr};
  p->ctx.outputs = {p->bufs[1].data()};
  if (!p->k->prepare(p->ctx).ok()) return nullptr;
  return p;
}

double median_us(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Run with --gtest_also_run_disabled_tests --gtest_filter='*DepthwiseThroughput*'.
// OPENRKNN_DW_BENCH_THREADS sets the thread count (default 1).
TEST(DepthwiseX86Bench, DISABLED_DepthwiseThroughput) {
  REQUIRE_DW_KERNEL(kF32Kernel);
  const char* te = std::getenv("OPENRKNN_DW_BENCH_THREADS");
  const int threads = te ? std::atoi(te) : 1;
  // The depthwise layers of mobilenet_v2 (3x3) and efficientnet_b0 (3x3 and 5x5).
  const DwCase shapes[] = {
      {1, 32, 112, 112, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 96, 112, 112, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 144, 56, 56, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 144, 56, 56, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 192, 28, 28, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 192, 28, 28, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 384, 14, 14, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 576, 14, 14, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 576, 14, 14, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 960, 7, 7, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, true, {"Clip", 0.f, 6.f}},
      {1, 144, 56, 56, 5, 5, 2, 2, {2, 2, 2, 2}, 1, 1, true, {"", 0.f, 0.f}},
      {1, 240, 28, 28, 5, 5, 1, 1, {2, 2, 2, 2}, 1, 1, true, {"", 0.f, 0.f}},
      {1, 672, 14, 14, 5, 5, 1, 1, {2, 2, 2, 2}, 1, 1, true, {"", 0.f, 0.f}},
      {1, 672, 14, 14, 5, 5, 2, 2, {2, 2, 2, 2}, 1, 1, true, {"", 0.f, 0.f}},
      {1, 1152, 7, 7, 5, 5, 1, 1, {2, 2, 2, 2}, 1, 1, true, {"", 0.f, 0.f}},
  };
  std::printf("%-44s %10s %10s %10s %10s\n", "shape (threads)", "dnnl_f32", "dw_f32", "dnnl_i8", "dw_i8");
  for (const DwCase& d : shapes) {
    const char* names[4] = {"onednn_conv_f32", kF32Kernel, "onednn_conv_int8", kI8Kernel};
    std::unique_ptr<Prepared> ps[4];
    for (int i = 0; i < 4; ++i) ps[i] = prepare_named(d, i >= 2, names[i], threads);
    std::vector<double> t[4];
    for (int rep = 0; rep < 60; ++rep)
      for (int i = 0; i < 4; ++i) {
        if (!ps[i]) continue;
        const auto t0 = std::chrono::steady_clock::now();
        ps[i]->k->run(ps[i]->ctx);
        t[i].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
    char label[64];
    std::snprintf(label, sizeof(label), "%lldx%lldx%lld k%lld s%lld (%d)", (long long)d.c, (long long)d.h,
                  (long long)d.w, (long long)d.kh, (long long)d.sh, threads);
    std::printf("%-44s", label);
    for (int i = 0; i < 4; ++i) std::printf(" %10.1f", t[i].empty() ? -1.0 : median_us(t[i]));
    std::printf("\n");
  }
}

}  // namespace
}  // namespace orknn
