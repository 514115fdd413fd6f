// Fast fp32 kernels against the reference kernels, over a parameter matrix per op: the build's
// library kernels (oneDNN's on x86-64, XNNPACK's on aarch64) on every matrix, and the x86 backend's
// hand-written ones.
//
// Each case runs the node through infer + the reference kernel, then through the named fast
// kernel with 1 and with 2 threads, and requires
//     max |fast - ref| <= kRelTol * max(1, max |ref|)
// Both kernels compute the same real-number expression; they differ only in the order of the
// float additions (blocking, vectorised partial sums, FMA) and in oneDNN's exp for Sigmoid, so the
// difference stays at a few float ulps of the accumulated magnitude (see docs/kernels.md).
// Inputs and weights are uniform in [-1, 1], so |ref| stays within a few tens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "kernels/kernel.h"
#include "ops/fast_vs_ref_util.h"
#include "ops/op.h"
#include "testutil/op_harness.h"

#if defined(ORKNN_WITH_ONEDNN) || defined(ORKNN_WITH_XNNPACK)
#include "testutil/cpu.h"

namespace orknn {
namespace {

// The float contract, the activations and the Conv cases' helpers: fast_vs_ref_util.h.
using namespace fast_vs_ref;

// The build's library float kernels, which the matrices below run: oneDNN's, or XNNPACK's.
#if defined(ORKNN_WITH_ONEDNN)
const char* const kConvF32 = "onednn_conv_f32";
const char* const kGemmF32 = "onednn_gemm_f32";
const char* const kMatMulF32 = "onednn_matmul_f32";
const char* const kPoolF32 = "onednn_pool_f32";
const char* const kGlobalPoolF32 = "onednn_global_pool_f32";
constexpr bool kXnnpack = false;
#else
const char* const kConvF32 = "xnnpack_conv_f32";
const char* const kGemmF32 = "xnnpack_gemm_f32";
const char* const kMatMulF32 = "xnnpack_matmul_f32";
const char* const kPoolF32 = "xnnpack_pool_f32";
const char* const kGlobalPoolF32 = "xnnpack_global_pool_f32";
constexpr bool kXnnpack = true;
#endif

// A node and the kernel the registry must pick for it (fast kernels allowed).
struct Pick {
  OpId op;
  Attrs attrs;
  std::vector<TensorData> inputs;
  const char* kernel;
};
void expect_picks(const std::vector<Pick>& cases) {
  for (const Pick& e : cases) {
    if (!reference_available(e.op)) continue;  // infer not linked yet
    OpResult r = test::run_op(e.op, e.attrs, e.inputs, 1, "");
    ASSERT_TRUE(r.status.ok()) << op_name(e.op) << ": " << r.status.message();
    EXPECT_EQ(r.kernel_name, e.kernel) << op_name(e.op);
  }
}

// A node the build's kernel `fast` declines: the registry's pick for it is another kernel.
void expect_declined(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, const std::string& fast,
                     const std::string& what) {
  OpResult best = test::run_op(op, attrs, inputs, 1, "");
  ASSERT_TRUE(best.status.ok()) << what << ": " << best.status.message();
  EXPECT_NE(best.kernel_name, fast) << what;
}


// The matrix: every (kernel, stride, dilation, pad style, group style) with channel counts,
// batch, bias and activation rotating through their values, plus every activation on the three
// common shapes, plus 1-D/3-D and odd geometries.
std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> cases;
  const int64_t tails[] = {3, 13, 17, 33};
  int rot = 0;
  for (int64_t k : {1, 3, 5, 7})
    for (int64_t s : {1, 2})
      for (int64_t d : {1, 2})
        for (int pad_style = 0; pad_style < 3; ++pad_style)  // none, symmetric, asymmetric
          for (int group_style = 0; group_style < 3; ++group_style) {  // 1, 2, depthwise
            ++rot;
            if (k == 1 && d == 2) continue;  // same as d == 1
            ConvCase p;
            p.n = (rot % 3 == 0) ? 2 : 1;
            const int64_t tail = tails[rot % 4];
            if (group_style == 0) { p.group = 1; p.c = tail; p.oc = tails[(rot + 1) % 4]; }
            if (group_style == 1) { p.group = 2; p.c = 2 * tail; p.oc = 2 * tails[(rot + 2) % 4]; }
            if (group_style == 2) { p.group = tail; p.c = tail; p.oc = (rot % 5 == 0) ? 2 * tail : tail; }
            const int64_t extent = (k - 1) * d + 1;
            const int64_t side = std::max<int64_t>(extent + 3, 11);
            p.spatial = {side, side + 2};
            p.kernel = {k, k};
            p.strides = {s, s};
            p.dilations = {d, d};
            const int64_t half = (extent - 1) / 2;
            if (pad_style == 0) p.pads = {0, 0, 0, 0};
            if (pad_style == 1) p.pads = {half, half, half, half};
            if (pad_style == 2) p.pads = {half, half + 1 > extent - 1 ? 0 : half + 1, 0, std::min<int64_t>(1, extent - 1)};
            p.bias = rot % 2 == 0;
            p.act = kActs[rot % kNumActs];
            cases.push_back(p);
          }
  // Every activation on a 1x1, a 3x3 and a depthwise 3x3 stride-2 layer.
  for (const ActCase& act : kActs) {
    cases.push_back({1, 16, 24, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, act});
    cases.push_back({1, 17, 32, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, act});
    cases.push_back({2, 32, 32, 32, {15, 15}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, act});
  }
  // Geometry specials.
  cases.push_back({1, 3, 16, 1, {23, 19}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, true, kActs[1]});   // stem
  cases.push_back({1, 8, 8, 1, {10, 13}, {3, 5}, {1, 2}, {2, 1}, {0, 2, 1, 0}, true, kActs[0]});    // non-square
  cases.push_back({1, 64, 64, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[1]});    // wide
  cases.push_back({2, 6, 9, 3, {9, 9}, {3, 3}, {3, 3}, {1, 1}, {2, 0, 2, 0}, false, kActs[0]});     // groups 3
  cases.push_back({1, 5, 7, 1, {20}, {3}, {2}, {1}, {1, 0}, true, kActs[1]});                        // 1-D
  cases.push_back({1, 4, 6, 2, {25}, {5}, {1}, {2}, {4, 4}, false, kActs[6]});                       // 1-D grouped
  cases.push_back({1, 3, 5, 1, {5, 6, 7}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1, 1, 0, 1}, true, kActs[0]});  // 3-D
  return cases;
}

class ConvFastVsRef : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvFastVsRef, MatchesReference) {
  REQUIRE_REFERENCE(OpId::Conv);
  const ConvCase& p = GetParam();
  // XNNPACK: 1-D and 2-D convolutions, 2-D ones also blocked (NHWC).
  if (kXnnpack && p.spatial.size() > 2) {
    expect_declined(OpId::Conv, conv_attrs(p), conv_inputs(p, false, 11), kConvF32, conv_name(p));
    return;
  }
  expect_fast_matches_ref(OpId::Conv, conv_attrs(p), conv_inputs(p, false, 11), kConvF32, conv_name(p), kXnnpack);
}

INSTANTIATE_TEST_SUITE_P(Matrix, ConvFastVsRef, ::testing::ValuesIn(conv_cases()),
                         [](const ::testing::TestParamInfo<ConvCase>& i) {
                           return std::to_string(i.index) + "_" + conv_name(i.param);
                         });

#if defined(ORKNN_WITH_ONEDNN)
// -------------------------------------------------------------------------------- ConvTranspose

struct DeconvCase {
  ConvCase conv;
  std::vector<int64_t> output_padding;
};

std::vector<DeconvCase> deconv_cases() {
  std::vector<DeconvCase> cases;
  int rot = 0;
  const int64_t tails[] = {3, 13, 17, 33};
  for (int64_t k : {1, 2, 3, 4, 5})
    for (int64_t s : {1, 2, 3})
      for (int group_style = 0; group_style < 3; ++group_style) {
        ++rot;
        ConvCase p;
        p.n = rot % 3 == 0 ? 2 : 1;
        const int64_t tail = tails[rot % 4];
        if (group_style == 0) { p.group = 1; p.c = tail; p.oc = tails[(rot + 1) % 4]; }
        if (group_style == 1) { p.group = 2; p.c = 2 * tail; p.oc = 2 * tails[(rot + 3) % 4]; }
        if (group_style == 2) { p.group = tail; p.c = tail; p.oc = tail; }
        const int64_t d = (rot % 4 == 1 && k > 1) ? 2 : 1;
        const int64_t extent = (k - 1) * d + 1;
        p.spatial = {7, 9};
        p.kernel = {k, k};
        p.strides = {s, s};
        p.dilations = {d, d};
        const int64_t pl = std::min<int64_t>(rot % 3, extent - 1), pr = std::min<int64_t>((rot + 1) % 3, extent - 1);
        p.pads = {pl, pr, pr, pl};
        p.bias = rot % 2 == 1;
        p.act = kActs[rot % kNumActs];
        std::vector<int64_t> op = {0, 0};
        if (s > 1 && rot % 2 == 0) op = {s - 1, 0};
        cases.push_back({p, op});
      }
  return cases;
}

class DeconvFastVsRef : public ::testing::TestWithParam<DeconvCase> {};

TEST_P(DeconvFastVsRef, MatchesReference) {
  REQUIRE_REFERENCE(OpId::ConvTranspose);
  const DeconvCase& p = GetParam();
  Attrs a = conv_attrs(p.conv);
  a.set_ints("output_padding", p.output_padding);
  expect_fast_matches_ref(OpId::ConvTranspose, a, conv_inputs(p.conv, true, 21), "onednn_deconv_f32",
                          conv_name(p.conv) + "_op" + vec_str(p.output_padding));
}

INSTANTIATE_TEST_SUITE_P(Matrix, DeconvFastVsRef, ::testing::ValuesIn(deconv_cases()),
                         [](const ::testing::TestParamInfo<DeconvCase>& i) {
                           return std::to_string(i.index) + "_" + conv_name(i.param.conv) + "_op" +
                                  vec_str(i.param.output_padding);
                         });

#endif  // ORKNN_WITH_ONEDNN

// ------------------------------------------------------------------------------------------ Gemm

struct GemmCase {
  int64_t m, k, n;
  bool trans_a, trans_b;
  float alpha, beta;
  int c_kind;  // 0 none, 1 scalar [], 2 [N], 3 [1,N], 4 [M,1], 5 [M,N]
  bool b_const, c_const;
  ActCase act;
};

std::string gemm_name(const GemmCase& p) {
  std::ostringstream os;
  os << "m" << p.m << "k" << p.k << "n" << p.n << (p.trans_a ? "_tA" : "") << (p.trans_b ? "_tB" : "") << "_a"
     << (p.alpha == 1.f ? "1" : "x") << "_b" << (p.beta == 1.f ? "1" : "x") << "_c" << p.c_kind
     << (p.b_const ? "_Bconst" : "_Bvar") << (p.c_const ? "_Cconst" : "_Cvar") << (*p.act.name ? "_" : "")
     << p.act.name;
  return os.str();
}

std::vector<GemmCase> gemm_cases() {
  std::vector<GemmCase> cases;
  const int64_t sizes[][3] = {{1, 64, 10}, {7, 33, 17}, {33, 17, 64}, {64, 64, 64}, {2, 512, 1000}};
  const float ab[][2] = {{1.f, 1.f}, {0.5f, 2.f}, {1.f, 0.25f}, {2.f, 1.f}};
  int rot = 0;
  for (const auto& sz : sizes)
    for (int t = 0; t < 4; ++t)
      for (int c_kind = 0; c_kind < 6; ++c_kind) {
        ++rot;
        GemmCase p{sz[0], sz[1], sz[2], (t & 1) != 0, (t & 2) != 0, ab[rot % 4][0], ab[rot % 4][1], c_kind,
                   rot % 3 != 0, rot % 2 == 0, kActs[rot % kNumActs]};
        cases.push_back(p);
      }
  return cases;
}

std::vector<TensorData> gemm_inputs(const GemmCase& p, uint32_t seed) {
  const Shape a = p.trans_a ? Shape{p.k, p.m} : Shape{p.m, p.k};
  const Shape b = p.trans_b ? Shape{p.n, p.k} : Shape{p.k, p.n};
  std::vector<TensorData> in;
  in.push_back(TensorData::f32(a, test::random_floats(static_cast<size_t>(p.m * p.k), seed)));
  in.push_back(TensorData::f32(b, test::random_floats(static_cast<size_t>(p.k * p.n), seed + 1), p.b_const));
  Shape c;
  switch (p.c_kind) {
    case 0: return in;
    case 1: c = {}; break;
    case 2: c = {p.n}; break;
    case 3: c = {1, p.n}; break;
    case 4: c = {p.m, 1}; break;
    default: c = {p.m, p.n}; break;
  }
  in.push_back(TensorData::f32(c, test::random_floats(static_cast<size_t>(shape_numel(c)), seed + 2), p.c_const));
  return in;
}

class GemmFastVsRef : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmFastVsRef, MatchesReference) {
  REQUIRE_REFERENCE(OpId::Gemm);
  const GemmCase& p = GetParam();
  Attrs a;
  a.set_int("transA", p.trans_a);
  a.set_int("transB", p.trans_b);
  a.set_float("alpha", p.alpha);
  a.set_float("beta", p.beta);
  set_act(a, p.act);
  // XNNPACK: the fully-connected form (kernels/fc_shape.h) with constant B and C.
  const bool c_bias = p.c_kind == 0 || (p.beta == 1.f && p.c_const && (p.c_kind == 2 || p.c_kind == 3));
  if (kXnnpack && !(p.b_const && !p.trans_a && p.alpha == 1.f && c_bias)) {
    expect_declined(OpId::Gemm, a, gemm_inputs(p, 31), kGemmF32, gemm_name(p));
    return;
  }
  expect_fast_matches_ref(OpId::Gemm, a, gemm_inputs(p, 31), kGemmF32, gemm_name(p));
}

INSTANTIATE_TEST_SUITE_P(Matrix, GemmFastVsRef, ::testing::ValuesIn(gemm_cases()),
                         [](const ::testing::TestParamInfo<GemmCase>& i) {
                           return std::to_string(i.index) + "_" + gemm_name(i.param);
                         });

// ---------------------------------------------------------------------------------------- MatMul

struct MatMulCase {
  Shape a, b;
  bool b_const;
  ActCase act;
};

std::string matmul_name(const MatMulCase& p) {
  return "A" + vec_str(p.a) + "_B" + vec_str(p.b) + (p.b_const ? "_const" : "_var") + (*p.act.name ? "_" : "") +
         p.act.name;
}

std::vector<MatMulCase> matmul_cases() {
  const ActCase none = kActs[0];
  return {
      {{5, 7}, {7, 3}, true, none},
      {{64, 64}, {64, 64}, true, kActs[1]},
      {{1, 512}, {512, 1000}, true, none},
      {{2, 3, 13, 33}, {33, 17}, true, kActs[5]},      // linear layer on a 4-D activation
      {{4, 9, 16}, {16, 8}, false, none},              // 2-D variable B, broadcast over batch
      {{3, 13, 17}, {3, 17, 33}, false, none},         // batched
      {{3, 13, 17}, {3, 17, 33}, true, kActs[7]},      // batched, constant B
      {{1, 6, 5}, {3, 5, 4}, false, none},             // broadcast A's batch
      {{2, 1, 6, 5}, {1, 3, 5, 4}, false, kActs[2]},   // broadcast both
      {{2, 4, 8, 8}, {8, 8}, false, none},
      {{6, 5}, {2, 3, 5, 4}, false, none},             // 2-D A against batched B
      {{17}, {17, 9}, true, none},                     // 1-D A
      {{9, 17}, {17}, true, none},                     // 1-D B
      {{2, 9, 17}, {17}, false, none},
      {{17}, {17}, false, none},                       // dot product
      {{1, 1, 64}, {64, 64}, true, kActs[3]},
  };
}

class MatMulFastVsRef : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(MatMulFastVsRef, MatchesReference) {
  REQUIRE_REFERENCE(OpId::MatMul);
  const MatMulCase& p = GetParam();
  Attrs a;
  set_act(a, p.act);
  std::vector<TensorData> in;
  in.push_back(TensorData::f32(p.a, test::random_floats(static_cast<size_t>(shape_numel(p.a)), 41)));
  in.push_back(TensorData::f32(p.b, test::random_floats(static_cast<size_t>(shape_numel(p.b)), 42), p.b_const));
  // XNNPACK: a constant 2-D B (a fully-connected layer).
  if (kXnnpack && !(p.b_const && p.b.size() == 2)) {
    expect_declined(OpId::MatMul, a, in, kMatMulF32, matmul_name(p));
    return;
  }
  expect_fast_matches_ref(OpId::MatMul, a, in, kMatMulF32, matmul_name(p));
}

INSTANTIATE_TEST_SUITE_P(Matrix, MatMulFastVsRef, ::testing::ValuesIn(matmul_cases()),
                         [](const ::testing::TestParamInfo<MatMulCase>& i) {
                           return std::to_string(i.index) + "_" + matmul_name(i.param);
                         });

// ------------------------------------------------------------------------------------- Pooling

struct PoolCase {
  bool max;
  int64_t n, c;
  std::vector<int64_t> spatial, kernel, strides, dilations, pads;
  bool ceil_mode, include_pad;
  bool fast_expected;  // oneDNN; false: the node must fall back to the reference kernel
};

std::string pool_name(const PoolCase& p) {
  std::ostringstream os;
  os << (p.max ? "max" : "avg") << "_n" << p.n << "_c" << p.c << "_in" << vec_str(p.spatial) << "_k"
     << vec_str(p.kernel) << "_s" << vec_str(p.strides) << "_d" << vec_str(p.dilations) << "_p" << vec_str(p.pads)
     << (p.ceil_mode ? "_ceil" : "") << (p.include_pad ? "_incpad" : "");
  return os.str();
}

// Independent of the kernel: does the ceil-mode output need padding beyond the declared pads?
bool ceil_adds_padding(const PoolCase& p) {
  const size_t sp = p.spatial.size();
  for (size_t i = 0; i < sp; ++i) {
    const int64_t extent = (p.kernel[i] - 1) * p.dilations[i] + 1;
    const int64_t span = p.spatial[i] + p.pads[i] + p.pads[sp + i] - extent;
    if (p.ceil_mode && span % p.strides[i] != 0) {
      const int64_t out = (span + p.strides[i] - 1) / p.strides[i] + 1;
      // ONNX drops a last window that would start in the right padding.
      const bool dropped = (out - 1) * p.strides[i] >= p.spatial[i] + p.pads[i];
      if (!dropped) return true;
    }
  }
  return false;
}

std::vector<PoolCase> pool_cases() {
  std::vector<PoolCase> cases;
  int rot = 0;
  for (bool is_max : {true, false})
    for (int64_t k : {1, 2, 3, 5, 7})
      for (int64_t s : {1, 2, 3})
        for (int pad_style = 0; pad_style < 3; ++pad_style)
          for (bool ceil_mode : {false, true}) {
            ++rot;
            PoolCase p;
            p.max = is_max;
            p.n = rot % 3 == 0 ? 2 : 1;
            p.c = (rot % 2) ? 13 : 17;
            const int64_t d = (rot % 5 == 0 && k > 1) ? 2 : 1;
            const int64_t extent = (k - 1) * d + 1;
            p.spatial = {extent + 8, extent + 5};
            p.kernel = {k, k};
            p.strides = {s, s};
            p.dilations = {d, d};
            const int64_t half = (extent - 1) / 2;
            if (pad_style == 0) p.pads = {0, 0, 0, 0};
            if (pad_style == 1) p.pads = {half, half, half, half};
            if (pad_style == 2) p.pads = {half, 0, 0, half};
            p.ceil_mode = ceil_mode;
            p.include_pad = !is_max && (rot % 2 == 0);
            // oneDNN 2.6 serves dilated pooling only with its naive reference implementation,
            // so the kernel declines it; include-pad averages with ceil padding differ (pool.cc).
            p.fast_expected = d == 1 && !(p.include_pad && ceil_adds_padding(p));
            cases.push_back(p);
          }
  // 1-D and 3-D.
  cases.push_back({true, 1, 5, {20}, {3}, {2}, {1}, {1, 1}, false, false, true});
  cases.push_back({false, 2, 4, {19}, {4}, {3}, {1}, {0, 2}, true, false, true});
  cases.push_back({true, 1, 3, {6, 7, 8}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, false, false, true});
  cases.push_back({false, 1, 3, {6, 7, 8}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, false, true, true});
  return cases;
}

// XNNPACK's pooling (kernels/xnnpack/pool_f32.cc): 2-D, no dilation, not 1x1, no padding counted
// by an average, and every window (ceil_mode's extra ones included) holding an input element.
bool xnnpack_takes_pool(const PoolCase& p) {
  if (p.spatial.size() != 2 || p.kernel[0] * p.kernel[1] == 1) return false;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t span = p.spatial[i] + p.pads[i] + p.pads[2 + i] - p.kernel[i];
    int64_t out = (p.ceil_mode ? (span + p.strides[i] - 1) / p.strides[i] : span / p.strides[i]) + 1;
    if (p.ceil_mode && (out - 1) * p.strides[i] >= p.spatial[i] + p.pads[i]) --out;  // ONNX drops it
    if (p.dilations[i] != 1 || p.pads[i] >= p.kernel[i] || (out - 1) * p.strides[i] - p.pads[i] >= p.spatial[i])
      return false;
    if (p.include_pad && (p.pads[i] != 0 || p.pads[2 + i] != 0)) return false;
  }
  return true;
}

class PoolFastVsRef : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolFastVsRef, MatchesReference) {
  const PoolCase& p = GetParam();
  const OpId op = p.max ? OpId::MaxPool : OpId::AveragePool;
  REQUIRE_REFERENCE(op);
  Attrs a;
  a.set_ints("kernel_shape", p.kernel);
  a.set_ints("strides", p.strides);
  a.set_ints("pads", p.pads);
  a.set_ints("dilations", p.dilations);
  a.set_int("ceil_mode", p.ceil_mode);
  if (!p.max) a.set_int("count_include_pad", p.include_pad);
  Shape x{p.n, p.c};
  x.insert(x.end(), p.spatial.begin(), p.spatial.end());
  std::vector<TensorData> in{TensorData::f32(x, test::random_floats(static_cast<size_t>(shape_numel(x)), 51))};
  if (kXnnpack ? xnnpack_takes_pool(p) : p.fast_expected) {
    expect_fast_matches_ref(op, a, in, kPoolF32, pool_name(p), kXnnpack);
  } else {
    OpResult best = test::run_op(op, a, in, 1, "");
    ASSERT_TRUE(best.status.ok()) << best.status.message();
    EXPECT_EQ(best.kernel_name, "ref") << pool_name(p);
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, PoolFastVsRef, ::testing::ValuesIn(pool_cases()),
                         [](const ::testing::TestParamInfo<PoolCase>& i) {
                           return std::to_string(i.index) + "_" + pool_name(i.param);
                         });

struct GlobalPoolCase {
  bool max;
  Shape x;
};

class GlobalPoolFastVsRef : public ::testing::TestWithParam<GlobalPoolCase> {};

TEST_P(GlobalPoolFastVsRef, MatchesReference) {
  const GlobalPoolCase& p = GetParam();
  const OpId op = p.max ? OpId::GlobalMaxPool : OpId::GlobalAveragePool;
  REQUIRE_REFERENCE(op);
  std::vector<TensorData> in{TensorData::f32(p.x, test::random_floats(static_cast<size_t>(shape_numel(p.x)), 61))};
  const std::string what = std::string(op_name(op)) + shape_str(p.x);
  if (kXnnpack && p.max) {  // XNNPACK has no global max pooling
    expect_declined(op, Attrs(), in, kGlobalPoolF32, what);
    return;
  }
  expect_fast_matches_ref(op, Attrs(), in, kGlobalPoolF32, what, kXnnpack);
}

std::vector<GlobalPoolCase> global_pool_cases() {
  std::vector<GlobalPoolCase> cases;
  for (bool is_max : {true, false})
    for (const Shape& x : {Shape{1, 3, 7, 7}, Shape{2, 33, 13, 17}, Shape{1, 64, 1, 1}, Shape{1, 1280, 7, 7},
                           Shape{2, 5, 9}, Shape{1, 4, 3, 5, 6}})
      cases.push_back({is_max, x});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Matrix, GlobalPoolFastVsRef, ::testing::ValuesIn(global_pool_cases()),
                         [](const ::testing::TestParamInfo<GlobalPoolCase>& i) {
                           return std::to_string(i.index) + (i.param.max ? "_max_" : "_avg_") + vec_str(i.param.x);
                         });

#if defined(ORKNN_WITH_ONEDNN)
// The hand-written float GlobalAveragePool (kernels/x86/global_pool_f32_avx512.cc), bit-identical
// to the reference in both layouts: channel counts around its 16-channel vectors and 64-channel
// jobs, batch 2, a 1x1 plane, a 112x112 one; NCHW and, where the runtime would block the channels,
// nChw16c (zero-padded above 16 channels that are not a multiple of 16: 33, 100).
TEST(GlobalPoolFastVsRef, X86AverageF32BitIdentical) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  REQUIRE_REFERENCE(OpId::GlobalAveragePool);
  uint32_t seed = 70;
  for (const Shape& x : {Shape{1, 3, 7, 7}, Shape{2, 33, 13, 17}, Shape{1, 64, 1, 1}, Shape{1, 1280, 7, 7},
                         Shape{2, 32, 9, 10}, Shape{1, 16, 4, 4}, Shape{1, 48, 112, 112}, Shape{1, 80, 5, 5},
                         Shape{1, 100, 3, 3}}) {
    SCOPED_TRACE(shape_str(x));
    std::vector<TensorData> in{TensorData::f32(x, test::random_floats(static_cast<size_t>(shape_numel(x)), seed++))};
    OpResult ref = test::run_op(OpId::GlobalAveragePool, Attrs(), in, 1, "ref");
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    for (int threads : {1, 2})
      for (bool blocked : {false, true}) {
        if (blocked && x[1] % 16 != 0 && x[1] < 16) continue;
        int n_blocked = 0;
        OpResult got = blocked ? test::run_op_blocked(OpId::GlobalAveragePool, Attrs(), in, "x86_gap_f32", threads,
                                                      &n_blocked)
                               : test::run_op(OpId::GlobalAveragePool, Attrs(), in, 1, "x86_gap_f32", threads);
        ASSERT_TRUE(got.status.ok()) << got.status.message();
        ASSERT_EQ(got.kernel_name, "x86_gap_f32");
        if (blocked) EXPECT_GE(n_blocked, 1) << "the input in nChw16c";
        EXPECT_EQ(got.outputs[0].bytes, ref.outputs[0].bytes) << threads << " threads, blocked " << blocked;
      }
  }
}

// ReduceMean over H and W (keepdims 1 or 0) runs on the same kernel: bytes equal to the reference
// GlobalAveragePool's, and within float rounding of the reference ReduceMean (which sums in
// double). Other axes stay on the reference.
TEST(GlobalPoolFastVsRef, X86SpatialReduceMean) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  for (const Shape& x : {Shape{1, 1024, 7, 7}, Shape{2, 33, 13, 17}}) {
    SCOPED_TRACE(shape_str(x));
    std::vector<TensorData> in{TensorData::f32(x, test::random_floats(static_cast<size_t>(shape_numel(x)), 90))};
    OpResult gap = test::run_op(OpId::GlobalAveragePool, Attrs(), in, 1, "ref");
    ASSERT_TRUE(gap.status.ok()) << gap.status.message();
    for (int64_t keep : {1, 0}) {
      Attrs a;
      a.set_ints("axes", {2, 3});
      a.set_int("keepdims", keep);
      OpResult want = test::run_op(OpId::ReduceMean, a, in, 1, "ref");
      ASSERT_TRUE(want.status.ok()) << want.status.message();
      for (int threads : {1, 2}) {
        OpResult got = test::run_op(OpId::ReduceMean, a, in, 1, "", threads);
        ASSERT_TRUE(got.status.ok()) << got.status.message();
        EXPECT_EQ(got.kernel_name, "x86_gap_f32");
        EXPECT_EQ(got.outputs[0].shape, want.outputs[0].shape);
        EXPECT_EQ(got.outputs[0].bytes, gap.outputs[0].bytes);
        EXPECT_LE(test::max_abs_diff(got.outputs[0].as<float>(), want.outputs[0].as<float>()), 1e-6f);
      }
    }
    Attrs channels;
    channels.set_ints("axes", {1});
    OpResult other = test::run_op(OpId::ReduceMean, channels, in, 1, "");
    ASSERT_TRUE(other.status.ok()) << other.status.message();
    EXPECT_NE(other.kernel_name, "x86_gap_f32");
  }
}

// ------------------------------------------------------------------ float pointwise (NCHW)

// The hand-written float 1x1 convolution (kernels/x86/pointwise_f32_avx512.cc): shufflenet_v2's
// layers, channel counts around its 8-channel blocks, pixel counts around its 16-pixel vectors and
// 48-pixel tiles, batch 2, with and without bias, every fused activation; one-pixel images;
// blocked inputs; and the nodes it leaves to the other kernels (channel counts that run blocked,
// strides, a 3x3 window, groups).
TEST(PointwiseF32X86, MatchesReference) {
  REQUIRE_REFERENCE(OpId::Conv);
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  std::vector<ConvCase> cases = {
      {1, 58, 58, 1, {28, 28}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[1]},
      {1, 116, 116, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[1]},
      {1, 232, 232, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},
      {1, 24, 58, 1, {56, 56}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[1]},
  };
  int rot = 0;
  for (int64_t c : {1, 9, 24})
    for (int64_t oc : {1, 7, 9, 17})
      for (int64_t pixels : {1, 15, 16, 17, 47, 48, 49, 97}) {
        cases.push_back({pixels == 17 ? 2 : 1, c, oc, 1, {1, pixels}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0},
                         (rot & 1) == 0, kActs[rot % kNumActs]});
        ++rot;
      }
  // One pixel (squeeze-and-excitation): any channel counts, output channels around the 64-channel
  // blocks of that path.
  for (const auto& co : std::vector<std::pair<int64_t, int64_t>>{{96, 4}, {4, 96}, {480, 20}, {128, 128}, {24, 130}})
    cases.push_back({co.first == 480 ? 2 : 1, co.first, co.second, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0},
                     co.first != 24, kActs[(rot++) % kNumActs]});
  for (const ConvCase& p : cases)
    expect_fast_matches_ref(OpId::Conv, conv_attrs(p), conv_inputs(p, false, 80 + static_cast<uint32_t>(rot++)),
                            "x86_pw_f32", conv_name(p));
  // One pixel with weights that are all fp16 values (as in fp16 mode), which stream as fp16
  // (gemv_f32_blocks.h); one weight off fp16 keeps them fp32 (the cases above).
  for (const auto& co : std::vector<std::pair<int64_t, int64_t>>{{96, 4}, {72, 130}, {24, 64}}) {
    const ConvCase p{co.first == 72 ? 2 : 1, co.first, co.second, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0},
                     true, kActs[(rot++) % kNumActs]};
    std::vector<TensorData> in = conv_inputs(p, false, 90 + static_cast<uint32_t>(rot));
    std::vector<float> w = in[1].as<float>();
    round_to_fp16(w.data(), w.size());
    in[1] = TensorData::f32(in[1].shape, w, true);
    expect_fast_matches_ref(OpId::Conv, conv_attrs(p), in, "x86_pw_f32", conv_name(p) + "_fp16_weights");
  }
  // Blocked activations: [N, C, 1, 1] is the same in nChw16c (input and output blocked); an
  // nChw16c input of 16 or 32 channels is transposed per pixel tile (pixel counts around the
  // 16-pixel transposes, batch 2). The same bytes as from NCHW, and within the tolerance.
  const std::vector<std::pair<ConvCase, int>> blocked_cases = {
      {{1, 96, 32, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[1]}, 2},
      {{1, 16, 72, 1, {20, 21}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, kActs[5]}, 1},
      {{2, 16, 9, 1, {5, 13}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[3]}, 1},
      {{1, 32, 40, 1, {1, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[1]}, 1},
  };
  for (const auto& [p, want_blocked] : blocked_cases) {
    SCOPED_TRACE(conv_name(p));
    const std::vector<TensorData> in = conv_inputs(p, false, 98);
    expect_fast_matches_ref(OpId::Conv, conv_attrs(p), in, "x86_pw_f32", conv_name(p));
    for (int threads : {1, 2}) {
      OpResult plain = test::run_op(OpId::Conv, conv_attrs(p), in, 1, "x86_pw_f32", threads);
      int n_blocked = 0;
      OpResult blocked = test::run_op_blocked(OpId::Conv, conv_attrs(p), in, "x86_pw_f32", threads, &n_blocked);
      ASSERT_TRUE(plain.status.ok() && blocked.status.ok());
      EXPECT_EQ(n_blocked, want_blocked);
      EXPECT_EQ(blocked.outputs[0].bytes, plain.outputs[0].bytes) << threads << " threads";
    }
  }
  const std::vector<ConvCase> others = {
      {1, 24, 32, 1, {8, 8}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // output blockable
      {1, 48, 24, 1, {8, 8}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // input blockable, > 32
      {1, 1152, 48, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // one pixel, many weights
      {1, 24, 24, 1, {8, 8}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // stride 2
      {1, 24, 24, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},  // 3x3
      {1, 24, 24, 2, {8, 8}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // groups
  };
  for (const ConvCase& p : others) {
    OpResult r = test::run_op(OpId::Conv, conv_attrs(p), conv_inputs(p, false, 99), 1, "");
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_NE(r.kernel_name, "x86_pw_f32") << conv_name(p);
  }
}

// The hand-written float stem convolution (kernels/x86/pointwise_f32_avx512.cc, x86_stem_f32):
// shufflenet_v2's and PP-OCR cls's stems, then 1 to 4 input channels, output channels around the
// 8-channel blocks, windows 3x3 / 5x5 / 7x7 / 3x5, strides 1 and 2 per axis and 3 vertically,
// symmetric, asymmetric and no padding, output widths around the 16-pixel vectors and 48-pixel
// tiles, batch 2, with and without bias, every fused activation, 1 and 2 threads. And the nodes it
// leaves to the other kernels.
TEST(StemF32X86, MatchesReference) {
  REQUIRE_REFERENCE(OpId::Conv);
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  std::vector<ConvCase> cases = {
      {1, 3, 24, 1, {224, 224}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[1]},  // shufflenet_v2
      {1, 3, 8, 1, {48, 192}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[5]},    // PP-OCR cls
  };
  int rot = 0;
  const std::vector<std::vector<int64_t>> windows = {{3, 3}, {5, 5}, {7, 7}, {3, 5}};
  const std::vector<std::vector<int64_t>> strides = {{1, 1}, {2, 2}, {1, 2}, {3, 1}};
  const std::vector<std::vector<int64_t>> pads = {{1, 1, 1, 1}, {0, 0, 0, 0}, {2, 0, 1, 3}};
  for (int64_t c : {1, 3, 4})
    for (int64_t oc : {1, 7, 9, 24, 33})
      for (int64_t ow : {15, 16, 17, 47, 49, 97}) {
        const std::vector<int64_t>& k = windows[static_cast<size_t>(rot) % windows.size()];
        const std::vector<int64_t>& s = strides[static_cast<size_t>(rot / 2) % strides.size()];
        const std::vector<int64_t>& p = pads[static_cast<size_t>(rot) % pads.size()];
        // An input width that gives ow output columns (the last window may end before the edge).
        const int64_t w = (ow - 1) * s[1] + k[1] - p[1] - p[3] + (rot % 2);
        cases.push_back({rot % 7 == 3 ? 2 : 1, c, oc, 1, {5 + rot % 4, w}, k, s, {1, 1}, p, rot % 3 != 0,
                         kActs[rot % kNumActs]});
        ++rot;
      }
  for (const ConvCase& p : cases)
    expect_fast_matches_ref(OpId::Conv, conv_attrs(p), conv_inputs(p, false, 300 + static_cast<uint32_t>(rot++)),
                            "x86_stem_f32", conv_name(p));
  const std::vector<ConvCase> others = {
      {1, 3, 32, 1, {16, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},  // output blockable
      {1, 5, 24, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},  // 5 input channels
      {1, 3, 24, 1, {16, 16}, {3, 3}, {1, 3}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},  // horizontal stride 3
      {1, 3, 24, 1, {16, 16}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}, true, kActs[0]},  // dilation 2
      {1, 3, 24, 1, {16, 16}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // 1x1 (pointwise)
      {1, 4, 24, 2, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},  // groups
  };
  for (const ConvCase& p : others) {
    OpResult r = test::run_op(OpId::Conv, conv_attrs(p), conv_inputs(p, false, 301), 1, "");
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_NE(r.kernel_name, "x86_stem_f32") << conv_name(p);
  }
}

// The hand-written float 1x1 convolution on nChw16c activations of small images
// (kernels/x86/pointwise16c_f32_avx512.cc): output channels around its 64-channel blocks (with
// and without a next block to prefetch) and 16-channel tails, pixel counts around its 6-pixel
// tiles and 64-pixel jobs (a 7x7 and a 14x14 image, 65 and 100 pixels: two jobs; 13x13 with few
// output channels: cut into two jobs per thread at two threads), batch 2, with
// and without bias, every fused activation, 1 and 2 threads; input and output blocked and both
// NCHW, within the tolerance of the reference and the same bytes in both layouts. And the nodes it
// leaves to the other kernels.
TEST(Pointwise16cF32X86, MatchesReference) {
  REQUIRE_REFERENCE(OpId::Conv);
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  std::vector<ConvCase> cases;
  int rot = 0;
  for (const auto& co : std::vector<std::pair<int64_t, int64_t>>{{16, 16}, {32, 80}, {48, 144}, {320, 64}, {96, 272}})
    for (const std::vector<int64_t>& hw : std::vector<std::vector<int64_t>>{{1, 2}, {1, 7}, {2, 6}, {7, 7}, {5, 13}, {10, 10}, {13, 13}, {14, 14}}) {
      cases.push_back({(rot % 5 == 1) ? 2 : 1, co.first, co.second, 1, hw, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0},
                       rot % 3 != 0, kActs[rot % kNumActs]});
      ++rot;
    }
  for (const ConvCase& p : cases) {
    SCOPED_TRACE(conv_name(p));
    const std::vector<TensorData> in = conv_inputs(p, false, 300 + static_cast<uint32_t>(rot++));
    OpResult ref = test::run_op(OpId::Conv, conv_attrs(p), in, 1, "ref");
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    const std::vector<float> want = as_floats(ref);
    const float tol = kRelTol * std::max(1.f, max_abs(want));
    for (int threads : {1, 2}) {
      int n_blocked = 0;
      OpResult got = test::run_op_blocked(OpId::Conv, conv_attrs(p), in, "x86_pw16c_f32", threads, &n_blocked);
      ASSERT_TRUE(got.status.ok()) << got.status.message();
      ASSERT_EQ(got.kernel_name, "x86_pw16c_f32");
      EXPECT_EQ(n_blocked, 2);
      EXPECT_LE(test::max_abs_diff(as_floats(got), want), tol) << threads << " threads";
      OpResult plain = test::run_op(OpId::Conv, conv_attrs(p), in, 1, "x86_pw16c_f32", threads);
      ASSERT_TRUE(plain.status.ok()) << plain.status.message();
      EXPECT_EQ(plain.outputs[0].bytes, got.outputs[0].bytes) << threads << " threads, NCHW";
    }
  }
  const std::vector<ConvCase> others = {
      {1, 16, 16, 1, {15, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // 210 pixels
      {1, 24, 32, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},   // input not blockable
      {1, 32, 24, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},   // output not blockable
      {1, 32, 32, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},   // one pixel
      {1, 32, 32, 1, {8, 8}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},   // stride 2
      {1, 32, 32, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},   // 3x3
      {1, 32, 32, 2, {8, 8}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},   // groups
  };
  for (const ConvCase& p : others) {
    int n_blocked = 0;
    OpResult r = test::run_op_blocked(OpId::Conv, conv_attrs(p), conv_inputs(p, false, 99), "", 1, &n_blocked);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_NE(r.kernel_name, "x86_pw16c_f32") << conv_name(p);
  }
}

#endif  // ORKNN_WITH_ONEDNN

// ------------------------------------------------------------------------- Conv + residual

// Conv's residual input (ops/conv.cc: y = act(conv + B + R)), on the fast kernels that add it:
// oneDNN's sum post-op (with the residual copied or reordered into its destination, or already
// there when the output shares the residual's bytes), x86_pw16c_f32's epilogue, and XNNPACK's
// convolution into the scratch followed by the kernel's own pass (the output may be the residual's
// bytes). Each runs NCHW
// and blocked, with its own output buffer and in the residual's bytes (as the arena planner places
// them), on 1 and 2 threads; the in-place result must equal the separate one bit for bit.
TEST(ConvResidual, FastKernelsMatchReference) {
  REQUIRE_REFERENCE(OpId::Conv);
  struct Case {
    ConvCase conv;
    const char* kernel;
  };
  const ActCase none = kActs[0], relu = kActs[1], hswish = kActs[5], sigmoid = kActs[7];
  const ActCase clip = kActs[4];
  std::vector<Case> cases = {
      {{1, 16, 32, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, relu}, kConvF32},  // 1x1, nChw16c
      {{2, 32, 32, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, relu}, kConvF32},  // 3x3, NHWC
      {{1, 16, 32, 1, {15, 15}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, none}, kConvF32},  // strided
      {{1, 32, 32, 32, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, hswish}, kConvF32},  // depthwise
      {{1, 24, 24, 1, {10, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, sigmoid}, kConvF32},  // own pass
      {{1, 5, 7, 1, {20}, {3}, {1}, {1}, {1, 1}, true, relu}, kConvF32},  // 1-D
      {{2, 13, 17, 1, {9, 8}, {3, 3}, {2, 1}, {1, 2}, {1, 2, 0, 2}, true, clip}, kConvF32},  // odd channels, Clip
  };
#if defined(ORKNN_WITH_ONEDNN)
  if (ORKNN_X86_HAS("avx512f")) {  // the pw16c cases need AVX-512F
    cases.push_back({{1, 32, 48, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, relu}, "x86_pw16c_f32"});
    cases.push_back({{2, 16, 16, 1, {13, 13}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, none}, "x86_pw16c_f32"});
    cases.push_back({{1, 64, 32, 1, {5, 9}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, sigmoid}, "x86_pw16c_f32"});
  }
#endif
  uint32_t seed = 500;
  for (const Case& c : cases) {
    const ConvCase& p = c.conv;
    SCOPED_TRACE(std::string(c.kernel) + " " + conv_name(p));
    std::vector<TensorData> in = conv_inputs(p, false, seed);
    if (!p.bias) in.push_back(TensorData::none());
    OpResult plain_conv = test::run_op(OpId::Conv, conv_attrs(p), in, 1, "ref");
    ASSERT_TRUE(plain_conv.status.ok()) << plain_conv.status.message();
    const Shape out = plain_conv.outputs[0].shape;
    in.push_back(TensorData::f32(out, test::random_floats(static_cast<size_t>(shape_numel(out)), seed + 7)));
    const size_t residual = in.size() - 1;
    seed += 10;

    OpResult ref = test::run_op(OpId::Conv, conv_attrs(p), in, 1, "ref");
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    const std::vector<float> want = as_floats(ref);
    OpResult ref_in_place = test::run_op_in_place(OpId::Conv, conv_attrs(p), in, "ref", 1, residual);
    ASSERT_TRUE(ref_in_place.status.ok()) << ref_in_place.status.message();
    EXPECT_EQ(ref_in_place.outputs[0].bytes, ref.outputs[0].bytes) << "reference in place";
    // The residual is really added: without it the reference differs.
    EXPECT_GT(test::max_abs_diff(want, as_floats(plain_conv)), 0.1f);

    const float tol = kRelTol * std::max(1.f, max_abs(want));
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      int n_blocked = 0, n_blocked_in_place = 0;
      const OpResult runs[] = {
          test::run_op(OpId::Conv, conv_attrs(p), in, 1, c.kernel, threads),
          test::run_op_in_place(OpId::Conv, conv_attrs(p), in, c.kernel, threads, residual),
          test::run_op_blocked(OpId::Conv, conv_attrs(p), in, c.kernel, threads, &n_blocked),
          test::run_op_in_place(OpId::Conv, conv_attrs(p), in, c.kernel, threads, residual, &n_blocked_in_place)};
      for (const OpResult& r : runs) {
        ASSERT_TRUE(r.status.ok()) << r.status.message();
        ASSERT_EQ(r.kernel_name, c.kernel);
        EXPECT_LE(test::max_abs_diff(as_floats(r), want), tol);
      }
      EXPECT_EQ(runs[1].outputs[0].bytes, runs[0].outputs[0].bytes) << "NCHW, in place";
      EXPECT_EQ(runs[3].outputs[0].bytes, runs[2].outputs[0].bytes) << "blocked, in place";
      EXPECT_EQ(n_blocked_in_place, n_blocked);
      // Residual and output are blocked together (runtime/layout_assignment.h) when the channels
      // allow: in NHWC any count; in nChw16c whole 16-channel blocks, or padded ones above 16
      // channels unless oneDNN's kernel applies Sigmoid/SiLU in its own pass (AVX-512F only),
      // which takes whole blocks.
      const std::string act = p.act.name;
      const bool own_act_pass = std::string(c.kernel) == "onednn_conv_f32" && (act == "Sigmoid" || act == "Silu") &&
                                ORKNN_X86_HAS("avx512f");
      const bool blockable =
          p.spatial.size() == 2 && (kFloatBlockedNhwc || p.oc % 16 == 0 || (p.oc > 16 && !own_act_pass));
      EXPECT_EQ(n_blocked >= 2, blockable) << n_blocked << " tensors blocked";
    }
  }
}

#if defined(ORKNN_WITH_ONEDNN)
// ----------------------------------------------------------------- ConvTranspose 2x2 stride 2

// The hand-written 2x2 stride-2 deconvolution (kernels/x86/deconv2x2_avx512.cc): channel counts
// around its 4-channel blocks, widths around its 16-pixel vectors, batch, bias, activations; and
// the nodes it leaves to the other kernels.
TEST(Deconv2x2X86, MatchesReference) {
  REQUIRE_REFERENCE(OpId::ConvTranspose);
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  int ran = 0;
  for (int64_t ic : {1, 5, 24})
    for (int64_t oc : {1, 3, 4, 6, 24})
      for (int64_t w : {1, 16, 17, 40}) {
        const ActCase& act = kActs[static_cast<size_t>(ic + oc + w) % 7];  // not Sigmoid (declined)
        ConvCase p{w == 17 ? 2 : 1, ic, oc, 1, {3 + w % 4, w}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, oc != 3, act};
        expect_fast_matches_ref(OpId::ConvTranspose, conv_attrs(p), conv_inputs(p, true, 61 + static_cast<uint32_t>(ran)),
                                "x86_deconv2x2_f32", conv_name(p));
        ++ran;
      }
  EXPECT_EQ(ran, 60);
  const std::vector<ConvCase> others = {
      {1, 8, 8, 1, {6, 6}, {2, 2}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},  // pads
      {1, 8, 8, 1, {6, 6}, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // stride 1
      {1, 8, 8, 1, {6, 6}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // 3x3
      {1, 8, 8, 2, {6, 6}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},  // groups
  };
  for (const ConvCase& p : others) {
    OpResult r = test::run_op(OpId::ConvTranspose, conv_attrs(p), conv_inputs(p, true, 7), 1, "");
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_NE(r.kernel_name, "x86_deconv2x2_f32") << conv_name(p);
  }
}

// The hand-written one-row Gemm (kernels/x86/gemv_avx512.cc): outputs around its 64-output blocks
// and 16-lane vectors, every C form a single row can have, transposes, alpha/beta, activations, and
// both weight storages (fp16 values as in fp16 mode; arbitrary fp32); and the nodes it declines.
TEST(GemvX86, MatchesReference) {
  REQUIRE_REFERENCE(OpId::Gemm);
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  int ran = 0;
  for (int64_t k : {1, 17, 300})
    for (int64_t n : {1, 15, 64, 65, 1000})
      for (int c_kind = 0; c_kind < 6; c_kind += (k == 17 ? 1 : 2))
        for (bool fp16_weights : {true, false}) {
          const int rot = ran++;
          GemmCase p{1, k, n, rot % 3 == 0, rot % 2 == 0, rot % 4 == 1 ? 0.5f : 1.f, rot % 5 == 2 ? 2.f : 1.f,
                     c_kind, true, rot % 3 != 1, kActs[static_cast<size_t>(rot) % 7]};  // not Sigmoid (declined)
          Attrs a;
          a.set_int("transA", p.trans_a);
          a.set_int("transB", p.trans_b);
          a.set_float("alpha", p.alpha);
          a.set_float("beta", p.beta);
          set_act(a, p.act);
          std::vector<TensorData> in = gemm_inputs(p, 71 + static_cast<uint32_t>(rot));
          if (fp16_weights) {
            std::vector<float> w = in[1].as<float>();
            round_to_fp16(w.data(), w.size());
            in[1] = TensorData::f32(in[1].shape, w, true);
          }
          expect_fast_matches_ref(OpId::Gemm, a, in, "x86_gemv_f32",
                                  gemm_name(p) + (fp16_weights ? "_fp16w" : "_fp32w"));
        }
  EXPECT_EQ(ran, 2 * 5 * (3 + 6 + 3));
  // Declined: two rows; B not constant.
  const std::vector<GemmCase> others = {{2, 64, 32, false, true, 1.f, 1.f, 2, true, true, kActs[0]},
                                        {1, 64, 32, false, true, 1.f, 1.f, 2, false, true, kActs[0]}};
  for (const GemmCase& p : others) {
    Attrs a;
    a.set_int("transB", 1);
    OpResult r = test::run_op(OpId::Gemm, a, gemm_inputs(p, 5), 1, "");
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_NE(r.kernel_name, "x86_gemv_f32") << gemm_name(p);
  }
}

// ------------------------------------------------------------------------ Blocked activations

// The oneDNN kernels with the runtime's blocked activations (nChw16c where the channel count is a
// multiple of 16; kernel.h BlockedIo): same contract as with NCHW buffers. Channel counts 16/32/48
// and 24 (that side stays NCHW, so the kernel mixes layouts).
TEST(BlockedActivations, OnednnKernelsMatchReference) {
  REQUIRE_REFERENCE(OpId::Conv);
  struct Case {
    OpId op;
    Attrs attrs;
    std::vector<TensorData> inputs;
    const char* kernel;
    int min_blocked;
  };
  std::vector<Case> cases;
  const std::vector<ConvCase> convs = {
      {1, 32, 48, 1, {9, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[1]},      // pointwise
      {2, 32, 32, 32, {10, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[3]},     // depthwise s2
      {1, 16, 32, 1, {15, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},     // dense 3x3
      {1, 32, 16, 1, {12, 12}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 1}, false, kActs[5]},    // strided, asymmetric
      {1, 16, 24, 1, {8, 8}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]},       // dst stays NCHW
      {1, 24, 16, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[1]},       // src stays NCHW
      {1, 3, 32, 1, {17, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[3]},      // stem: NCHW -> blocked
      {1, 3, 16, 1, {20, 20}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, true, kActs[1]},      // 7x7 stem
  };
  for (const ConvCase& p : convs)
    cases.push_back({OpId::Conv, conv_attrs(p), conv_inputs(p, false, 41), "onednn_conv_f32", 1});
  {
    ConvCase up{1, 32, 16, 1, {7, 7}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, kActs[0]};
    cases.push_back({OpId::ConvTranspose, conv_attrs(up), conv_inputs(up, true, 42), "onednn_deconv_f32", 2});
  }
  const TensorData x = TensorData::f32({2, 32, 9, 10}, test::random_floats(2 * 32 * 90, 43));
  for (OpId op : {OpId::MaxPool, OpId::AveragePool}) {
    Attrs a;
    a.set_ints("kernel_shape", {3, 3});
    a.set_ints("strides", {2, 2});
    a.set_ints("pads", {1, 1, 1, 1});
    cases.push_back({op, a, {x}, "onednn_pool_f32", 2});
  }
  cases.push_back({OpId::GlobalAveragePool, Attrs(), {x}, "onednn_global_pool_f32", 2});
  cases.push_back({OpId::GlobalMaxPool, Attrs(), {x}, "onednn_global_pool_f32", 2});
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(op_name(c.op)) + " " + c.kernel);
    OpResult ref = test::run_op(c.op, c.attrs, c.inputs, 1, "ref");
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    const std::vector<float> want = as_floats(ref);
    for (int threads : {1, 2}) {
      int blocked = 0;
      OpResult got = test::run_op_blocked(c.op, c.attrs, c.inputs, c.kernel, threads, &blocked);
      ASSERT_TRUE(got.status.ok()) << got.status.message();
      EXPECT_GE(blocked, c.min_blocked);
      EXPECT_LE(test::max_abs_diff(as_floats(got), want), kRelTol * std::max(1.f, max_abs(want))) << threads << " threads";
    }
  }
}

// ---------------------------------------------------------------------------------- Selection

// With fast kernels allowed, the common layers of CNNs pick the oneDNN kernel.
TEST(FastKernelSelection, CommonNodesPickOnednn) {
  std::vector<Pick> cases;
  {
    ConvCase p{1, 16, 32, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[1]};
    cases.push_back({OpId::Conv, conv_attrs(p), conv_inputs(p, false, 1), "onednn_conv_f32"});
    ConvCase dw{1, 32, 32, 32, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[3]};
    cases.push_back({OpId::Conv, conv_attrs(dw), conv_inputs(dw, false, 2), "onednn_conv_f32"});
    ConvCase up{1, 8, 4, 1, {7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, kActs[0]};
    cases.push_back({OpId::ConvTranspose, conv_attrs(up), conv_inputs(up, true, 3), "onednn_deconv_f32"});
    if (ORKNN_X86_HAS("avx512f")) {  // 2x2 stride 2: the hand-written kernel
      ConvCase up2{1, 8, 4, 1, {7, 7}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, false, kActs[0]};
      cases.push_back({OpId::ConvTranspose, conv_attrs(up2), conv_inputs(up2, true, 3), "x86_deconv2x2_f32"});
    }
  }
  {
    GemmCase fc{1, 512, 1000, false, true, 1.f, 1.f, 2, true, true, kActs[0]};
    Attrs a;
    a.set_int("transB", 1);
    // One row (a classifier): the hand-written kernel; a batch of rows: oneDNN.
    cases.push_back(
        {OpId::Gemm, a, gemm_inputs(fc, 4), ORKNN_X86_HAS("avx512f") ? "x86_gemv_f32" : "onednn_gemm_f32"});
    GemmCase batch{4, 512, 1000, false, true, 1.f, 1.f, 2, true, true, kActs[0]};
    cases.push_back({OpId::Gemm, a, gemm_inputs(batch, 4), "onednn_gemm_f32"});
    cases.push_back({OpId::MatMul, Attrs(),
                     {TensorData::f32({1, 4, 64}, test::random_floats(256, 5)),
                      TensorData::f32({64, 32}, test::random_floats(64 * 32, 6), true)},
                     "onednn_matmul_f32"});
  }
  {
    Attrs mp;
    mp.set_ints("kernel_shape", {3, 3});
    mp.set_ints("strides", {2, 2});
    mp.set_ints("pads", {1, 1, 1, 1});
    std::vector<TensorData> x{TensorData::f32({1, 8, 16, 16}, test::random_floats(8 * 256, 7))};
    cases.push_back({OpId::MaxPool, mp, x, "onednn_pool_f32"});
    Attrs ap;
    ap.set_ints("kernel_shape", {2, 2});
    ap.set_ints("strides", {2, 2});
    cases.push_back({OpId::AveragePool, ap, x, "onednn_pool_f32"});
    cases.push_back({OpId::GlobalAveragePool, Attrs(), x,
                     ORKNN_X86_HAS("avx512f") ? "x86_gap_f32" : "onednn_global_pool_f32"});
    cases.push_back({OpId::GlobalMaxPool, Attrs(), x, "onednn_global_pool_f32"});
  }
  expect_picks(cases);
}

// Nodes the oneDNN kernels do not take stay on the reference kernel.
TEST(FastKernelSelection, UnsupportedNodesFallBackToReference) {
  // Conv whose weights are not constants (nothing to pack at prepare).
  if (reference_available(OpId::Conv)) {
    ConvCase p{1, 4, 4, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, kActs[0]};
    std::vector<TensorData> in = conv_inputs(p, false, 8);
    in[1].is_const = false;
    OpResult r = test::run_op(OpId::Conv, conv_attrs(p), in, 1, "");
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.kernel_name, "ref");
  }
  // ConvTranspose whose output_padding reaches a full stride (oneDNN cannot size that output).
  if (reference_available(OpId::ConvTranspose)) {
    ConvCase p{1, 4, 3, 1, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]};
    Attrs a = conv_attrs(p);
    a.set_ints("output_padding", {2, 0});
    OpResult r = test::run_op(OpId::ConvTranspose, a, conv_inputs(p, true, 12), 1, "");
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.kernel_name, "ref");
  }
  // Dilated MaxPool: oneDNN has only its naive implementation, so ours stays.
  if (reference_available(OpId::MaxPool)) {
    Attrs mp;
    mp.set_ints("kernel_shape", {2, 2});
    mp.set_ints("dilations", {2, 2});
    std::vector<TensorData> x{TensorData::f32({1, 2, 6, 6}, test::random_floats(72, 10))};
    OpResult r = test::run_op(OpId::MaxPool, mp, x, 1, "");
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.kernel_name, "ref");
  }
  // AveragePool counting padding, where ceil_mode adds a window reaching past the end padding.
  if (reference_available(OpId::AveragePool)) {
    Attrs ap;
    ap.set_ints("kernel_shape", {3, 3});
    ap.set_ints("strides", {2, 2});
    ap.set_int("ceil_mode", 1);
    ap.set_int("count_include_pad", 1);
    std::vector<TensorData> x{TensorData::f32({1, 2, 6, 6}, test::random_floats(72, 11))};
    OpResult r = test::run_op(OpId::AveragePool, ap, x, 1, "");
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.kernel_name, "ref");
  }
}

#else  // XNNPACK

// With fast kernels allowed, the common float layers of CNNs pick XNNPACK's kernels, and what they
// decline stays on the reference.
TEST(FastKernelSelection, CommonNodesPickXnnpack) {
  std::vector<Pick> cases;
  const ConvCase convs[] = {
      {1, 16, 32, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[1]},
      {1, 32, 32, 32, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[3]},
      {1, 24, 144, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, kActs[0]},
  };
  for (const ConvCase& p : convs) cases.push_back({OpId::Conv, conv_attrs(p), conv_inputs(p, false, 1), kConvF32});
  {
    ConvCase p3d{1, 3, 5, 1, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, true, kActs[0]};
    cases.push_back({OpId::Conv, conv_attrs(p3d), conv_inputs(p3d, false, 2), "ref"});
    ConvCase p{1, 4, 4, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, kActs[0]};
    std::vector<TensorData> in = conv_inputs(p, false, 8);
    in[1].is_const = false;  // nothing to pack at prepare
    cases.push_back({OpId::Conv, conv_attrs(p), in, "ref"});
  }
  {
    GemmCase fc{1, 512, 1000, false, true, 1.f, 1.f, 2, true, true, kActs[0]};
    Attrs a;
    a.set_int("transB", 1);
    cases.push_back({OpId::Gemm, a, gemm_inputs(fc, 4), kGemmF32});
    Attrs ta = a;
    ta.set_int("transA", 1);
    GemmCase t{4, 16, 8, true, true, 1.f, 1.f, 0, true, true, kActs[0]};
    cases.push_back({OpId::Gemm, ta, gemm_inputs(t, 4), "ref"});
    cases.push_back({OpId::MatMul, Attrs(),
                     {TensorData::f32({1, 4, 64}, test::random_floats(256, 5)),
                      TensorData::f32({64, 32}, test::random_floats(64 * 32, 6), true)},
                     kMatMulF32});
    cases.push_back({OpId::MatMul, Attrs(),
                     {TensorData::f32({4, 64}, test::random_floats(256, 5)),
                      TensorData::f32({64, 32}, test::random_floats(64 * 32, 6), false)},
                     "ref"});
  }
  {
    Attrs mp;
    mp.set_ints("kernel_shape", {3, 3});
    mp.set_ints("strides", {2, 2});
    mp.set_ints("pads", {1, 1, 1, 1});
    std::vector<TensorData> x{TensorData::f32({1, 8, 16, 16}, test::random_floats(8 * 256, 7))};
    cases.push_back({OpId::MaxPool, mp, x, kPoolF32});
    Attrs dilated = mp;
    dilated.set_ints("dilations", {2, 2});
    cases.push_back({OpId::MaxPool, dilated, x, "ref"});
    Attrs ap;
    ap.set_ints("kernel_shape", {2, 2});
    ap.set_ints("strides", {2, 2});
    cases.push_back({OpId::AveragePool, ap, x, kPoolF32});
    cases.push_back({OpId::GlobalAveragePool, Attrs(), x, kGlobalPoolF32});
    cases.push_back({OpId::GlobalMaxPool, Attrs(), x, "ref"});
  }
  expect_picks(cases);
}

#endif  // ORKNN_WITH_ONEDNN

}  // namespace
}  // namespace orknn

#endif  // ORKNN_WITH_ONEDNN || ORKNN_WITH_XNNPACK
