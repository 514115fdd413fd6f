// The oneDNN float convolution's own choices, against the reference kernel: every activation
// layout it can run with, forced, and Winograd in fp16 storage mode (docs/kernels.md). Built only
// with the oneDNN backend (it includes its header: tests/CMakeLists.txt orknn_backend_tests_only).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "kernels/onednn/onednn_common.h"
#include "kernels/ref/activation.h"
#include "ops/fast_vs_ref_util.h"
#include "testutil/cpu.h"

namespace orknn {
namespace {

using namespace fast_vs_ref;

// Every activation layout the conv kernel can run with (normally chosen per layer), forced, on
// shapes that exercise channel tails, groups, depthwise, strides and pads.
TEST(ConvLayouts, EveryForcedLayoutMatchesReference) {
  REQUIRE_REFERENCE(OpId::Conv);
  const std::vector<ConvCase> cases = {
      {1, 13, 17, 1, {11, 12}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, kActs[1]},
      {2, 17, 33, 1, {9, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 1}, true, kActs[5]},
      {1, 33, 33, 33, {12, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[3]},
      {1, 26, 34, 2, {10, 10}, {5, 5}, {1, 1}, {2, 2}, {4, 4, 4, 4}, false, kActs[0]},
      {1, 3, 16, 1, {20, 20}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, true, kActs[1]},
  };
  const onednn::ActLayout layouts[] = {onednn::ActLayout::kPlain, onednn::ActLayout::kAny,
                                       onednn::ActLayout::kChannelBlocked16, onednn::ActLayout::kPlainToBlocked16};
  int ran = 0;
  for (onednn::ActLayout layout : layouts) {
    onednn::set_act_layout_override(layout);
    for (const ConvCase& p : cases) {
      const std::string what = "layout " + std::to_string(static_cast<int>(layout)) + " " + conv_name(p);
      // A layout oneDNN cannot serve for a shape (nChw16c for 3 input channels) makes the kernel
      // decline the node; that is checked by the selection, not here.
      OpResult probe = test::run_op(OpId::Conv, conv_attrs(p), conv_inputs(p, false, 71), 1, "onednn_conv_f32");
      if (!probe.status.ok()) continue;
      expect_fast_matches_ref(OpId::Conv, conv_attrs(p), conv_inputs(p, false, 71), "onednn_conv_f32", what);
      ++ran;
    }
  }
  onednn::set_act_layout_override(onednn::ActLayout::kAuto);
  // All but nChw16c with 3 input channels, and NCHW -> nChw16c only where oneDNN serves it. Without
  // AVX-512, oneDNN 2.6 has no nChw16c implementations: the plain and its own layouts only.
  EXPECT_GE(ran, ORKNN_X86_HAS("avx512f") ? 15 : 10);
}

// Winograd: the conv kernel uses oneDNN's Winograd implementations for 3x3 stride-1 layers of at
// least 16 input and 8 output channels, when the output is stored as fp16 (KernelContext::round_fp16),
// and the direct convolution otherwise. Checks that choice (by implementation name) and that the
// Winograd result, before the runtime's fp16 rounding, is within the float tolerance of the reference.
struct WinogradRun {
  std::string impl;
  std::vector<float> y;
  bool blocked = false;  // the output was nChw16c
};

// `in`: x, w and b when p.bias; `residual` (the output's NCHW values), when not empty, is the Conv's
// fourth input. `blocked`: the output in the runtime's nChw16c (padded above a multiple of 16) when
// the kernel's blocked_io() allows it, its padding lanes checked to come back as +0; r.y is NCHW.
WinogradRun run_conv_kernel(const ConvCase& p, const std::vector<TensorData>& in, bool round_fp16, int threads,
                            const std::vector<float>& residual = {}, bool blocked = false) {
  Graph g;
  Node n;
  n.op = OpId::Conv;
  n.name = "conv";
  n.attrs = conv_attrs(p);
  n.inputs.push_back(g.add_tensor("x", in[0].shape, DType::kF32));
  n.inputs.push_back(g.add_const("w", in[1].shape, DType::kF32, in[1].bytes.data(), in[1].bytes.size()));
  if (p.bias) n.inputs.push_back(g.add_const("b", in[2].shape, DType::kF32, in[2].bytes.data(), in[2].bytes.size()));
  Shape y{p.n, p.oc};
  for (size_t i = 0; i < 2; ++i)
    y.push_back((p.spatial[i] + p.pads[i] + p.pads[2 + i] - (p.kernel[i] - 1) * p.dilations[i] - 1) / p.strides[i] + 1);
  if (!residual.empty()) {
    if (!p.bias) n.inputs.push_back(-1);
    n.inputs.push_back(g.add_tensor("r", y, DType::kF32));
  }
  n.outputs = {g.add_tensor("y", y, DType::kF32)};
  WinogradRun r;
  r.y.assign(static_cast<size_t>(shape_numel(y)), 0.f);
  std::unique_ptr<Kernel> k;
  for (const KernelEntry* e : kernels_for(OpId::Conv))
    if (std::string(e->name) == "onednn_conv_f32" && e->supports(g, n)) k = e->create();
  if (!k) return r;
  const BlockedIo io = k->blocked_io(g, n);
  blocked = blocked && (io == BlockedIo::kEachPadded || (io == BlockedIo::kEach && p.oc % 16 == 0));
  const Tensor& yt = g.tensor(n.outputs[0]);
  std::vector<float> out(blocked ? test::blocked_bytes(yt) / sizeof(float) : r.y.size(), NAN);
  std::vector<float> res(residual);
  if (blocked && !residual.empty()) {
    res.assign(out.size(), 0.f);
    test::convert_blocked(y, DType::kF32, residual.data(), res.data(), true);
  }
  KernelContext ctx;
  ctx.graph = &g;
  ctx.node = &n;
  ctx.num_threads = threads;
  ctx.round_fp16 = round_fp16;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) ctx.inputs.push_back(nullptr);
    else if (i == 0) ctx.inputs.push_back(in[0].bytes.data());
    else if (i == 3) ctx.inputs.push_back(res.data());
    else ctx.inputs.push_back(g.tensor(n.inputs[i]).data.ptr);
  }
  ctx.outputs = {out.data()};
  if (blocked) ctx.out_blocked = {1};
  if (blocked && !residual.empty()) ctx.in_blocked = {0, 0, 0, 1};
  if (!k->prepare(ctx).ok()) return r;
  k->run(ctx);
  r.impl = static_cast<onednn::OnednnKernel*>(k.get())->impl_name();
  r.blocked = blocked;
  if (!blocked) {
    r.y = out;
    return r;
  }
  test::convert_blocked(y, DType::kF32, out.data(), r.y.data(), false);
  const int64_t hw = y[2] * y[3], blocks = (p.oc + 15) / 16;
  for (int64_t i = 0; i < p.n; ++i)
    for (int64_t c = p.oc; c < blocks * 16; ++c)
      for (int64_t q = 0; q < hw; ++q) {
        const float v = out[static_cast<size_t>(((i * blocks + c / 16) * hw + q) * 16 + c % 16)];
        if (v != 0.f || std::signbit(v)) r.impl = "padding lane not +0";
      }
  return r;
}

TEST(ConvWinograd, Fp16StorageSelectsWinogradWithinTolerance) {
  REQUIRE_REFERENCE(OpId::Conv);
  const std::vector<ConvCase> cases = {
      {1, 16, 16, 1, {20, 23}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[1]},
      {1, 24, 40, 1, {19, 17}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, kActs[0]},
      {2, 32, 24, 1, {16, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},
      {1, 64, 64, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, kActs[1]},
      {1, 96, 24, 1, {30, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[1]},
      {1, 16, 8, 1, {24, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},
  };
  const bool avx512_core = ORKNN_X86_HAS("avx512f") && ORKNN_X86_HAS("avx512bw") &&
                           ORKNN_X86_HAS("avx512vl") && ORKNN_X86_HAS("avx512dq");
  for (const ConvCase& p : cases) {
    SCOPED_TRACE(conv_name(p));
    const std::vector<TensorData> in = conv_inputs(p, false, 91);
    OpResult ref = test::run_op(OpId::Conv, conv_attrs(p), in, 1, "ref");
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    const std::vector<float> want = as_floats(ref);
    const float tol = kRelTol * std::max(1.f, max_abs(want));
    for (int threads : {1, 2}) {
      const WinogradRun wino = run_conv_kernel(p, in, /*round_fp16=*/true, threads);
      // oneDNN 2.6 has Winograd only for avx512_core: elsewhere the kernel runs the direct one.
      EXPECT_EQ(wino.impl.find("wino") != std::string::npos, avx512_core) << "fp16 storage ran " << wino.impl;
      EXPECT_LE(test::max_abs_diff(wino.y, want), tol) << "threads " << threads;
      const WinogradRun direct = run_conv_kernel(p, in, /*round_fp16=*/false, threads);
      EXPECT_FALSE(direct.impl.empty());
      EXPECT_EQ(direct.impl.find("wino"), std::string::npos) << "pure fp32 ran " << direct.impl;
      EXPECT_LE(test::max_abs_diff(direct.y, want), tol) << "threads " << threads;
    }
  }
  // Not taken: fewer than 16 input (or 8 output) channels, stride 2, dilation, groups, images under
  // 14x14 output pixels (other activations: ActivationAfterWinograd below).
  const std::vector<ConvCase> others = {
      {1, 64, 64, 1, {13, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[1]},
      {1, 32, 32, 1, {13, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[2]},
      {1, 8, 16, 1, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[5]},
      {1, 16, 4, 1, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},
      {1, 32, 32, 1, {20, 20}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},
      {1, 32, 32, 1, {20, 20}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}, true, kActs[0]},
      {1, 32, 32, 2, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},
  };
  for (const ConvCase& p : others) {
    const WinogradRun r = run_conv_kernel(p, conv_inputs(p, false, 92), /*round_fp16=*/true, 1);
    EXPECT_FALSE(r.impl.empty()) << conv_name(p);
    EXPECT_EQ(r.impl.find("wino"), std::string::npos) << conv_name(p) << " ran " << r.impl;
  }
}

bool all_fp16(const std::vector<float>& v) {
  std::vector<float> r = v;
  round_to_fp16(r.data(), r.size());
  return std::memcmp(r.data(), v.data(), v.size() * sizeof(float)) == 0;
}

// Every fused activation oneDNN's Winograd does not take (LeakyRelu, Clip, HardSwish, HardSigmoid,
// and Sigmoid/SiLU, which the kernel applies in its own pass anyway) runs after the Winograd
// convolution in the kernel's own pass, which also rounds to fp16 (onednn/conv.cc
// act_after_winograd); a residual input is added by the primitive before it. Checked against the
// reference: the implementation is Winograd (avx512_core), every output is an fp16 value, and each
// lies within the float tolerance plus fp16's half ulp of the reference value (the Winograd error,
// then the rounding), nearly all of them the reference value rounded to fp16 exactly. NCHW and
// nChw16c outputs (32 channels; 40, padded to 48, for the activations that map 0 to +0, their
// padding lanes checked to stay +0), with and without the residual, 1 and 2 threads; pure fp32
// stays direct.
TEST(ConvWinograd, ActivationAfterWinogradWithinTolerance) {
  REQUIRE_REFERENCE(OpId::Conv);
  const bool avx512_core = ORKNN_X86_HAS("avx512f") && ORKNN_X86_HAS("avx512bw") &&
                           ORKNN_X86_HAS("avx512vl") && ORKNN_X86_HAS("avx512dq");
  uint32_t seed = 300;
  int compared = 0;
  for (int a = 0; a < kNumActs; ++a) {
    // The kernel's own pass (activation and fp16 rounding) needs AVX-512; without it (AVX2-only
    // CPUs: no Winograd, no own pass) the activation is a post-op and the runtime rounds.
    const bool own_pass = avx512_core && *kActs[a].name && std::string(kActs[a].name) != "Relu";
    const float at0 = apply_fused_act(0.f, parse_fused_act(kActs[a].name), kActs[a].alpha, kActs[a].beta);
    const bool keeps_zero = at0 == 0.f && !std::signbit(at0);
    for (int oc : {32, 40}) {
      for (bool with_residual : {false, true}) {
        const ConvCase p{1, 24, oc, 1, {19, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, a % 2 == 0, kActs[a]};
        SCOPED_TRACE(conv_name(p) + (with_residual ? " residual" : ""));
        std::vector<TensorData> in = conv_inputs(p, false, seed++);
        std::vector<float> residual;
        std::vector<TensorData> ref_in = in;
        if (with_residual) {
          const size_t numel = static_cast<size_t>(p.oc * 19 * 17);
          residual = test::random_floats(numel, seed++);
          if (!p.bias) ref_in.push_back(TensorData::none());
          ref_in.push_back(TensorData::f32({1, p.oc, 19, 17}, residual));
        }
        OpResult ref = test::run_op(OpId::Conv, conv_attrs(p), ref_in, 1, "ref");
        ASSERT_TRUE(ref.status.ok()) << ref.status.message();
        const std::vector<float> want = as_floats(ref);
        const float tol = kRelTol * std::max(1.f, max_abs(want));
        for (int threads : {1, 2}) {
          for (bool blocked : {false, true}) {
            SCOPED_TRACE(std::to_string(threads) + " threads" + (blocked ? " blocked" : ""));
            const WinogradRun wino = run_conv_kernel(p, in, /*round_fp16=*/true, threads, residual, blocked);
            EXPECT_EQ(wino.impl.find("wino") != std::string::npos, avx512_core) << "fp16 storage ran " << wino.impl;
            EXPECT_EQ(wino.blocked, blocked && (oc % 16 == 0 || keeps_zero || !own_pass));
            ASSERT_EQ(wino.y.size(), want.size());
            // No activation and Relu stay in the primitive, and the runtime rounds after the kernel.
            std::vector<float> y = wino.y;
            if (own_pass) EXPECT_TRUE(all_fp16(y)) << "the own pass rounds to fp16";
            else round_to_fp16(y.data(), y.size());
            size_t exact = 0;
            float worst = 0.f;  // |fast - ref| beyond the bound, in units of the bound
            for (size_t i = 0; i < want.size(); ++i) {
              float r16 = want[i];
              round_to_fp16(&r16, 1);
              exact += y[i] == r16;
              // fp16's half ulp at the larger magnitude (2^-11 relative; 2^-25 below the normals).
              const float m = std::max(std::fabs(want[i]), std::fabs(y[i]));
              const float bound = tol + std::max(std::ldexp(m, -11), std::ldexp(1.f, -25));
              worst = std::max(worst, std::fabs(y[i] - want[i]) / bound);
            }
            EXPECT_LE(worst, 1.f);
            EXPECT_GE(exact, want.size() * 99 / 100) << "outputs equal to the reference rounded to fp16";
            ++compared;
          }
          const WinogradRun direct = run_conv_kernel(p, in, /*round_fp16=*/false, threads, residual);
          EXPECT_FALSE(direct.impl.empty());
          EXPECT_EQ(direct.impl.find("wino"), std::string::npos) << "pure fp32 ran " << direct.impl;
          EXPECT_LE(test::max_abs_diff(direct.y, want), tol) << "threads " << threads;
        }
      }
    }
  }
  EXPECT_EQ(compared, kNumActs * 2 * 2 * 2 * 2);
}

}  // namespace
}  // namespace orknn
