// The oneDNN float convolution's own choices, against the reference kernel: every activation
// layout it can run with, forced, and Winograd in fp16 storage mode (docs/kernels.md). Built only
// with the oneDNN backend (it includes its header: tests/CMakeLists.txt orknn_backend_tests_only).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/onednn/onednn_common.h"
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
// least 16 input and output channels, without activation or with Relu, when the output is stored as fp16 (KernelContext::round_fp16),
// and the direct convolution otherwise. Checks that choice (by implementation name) and that the
// Winograd result, before the runtime's fp16 rounding, is within the float tolerance of the reference.
struct WinogradRun {
  std::string impl;
  std::vector<float> y;
};

WinogradRun run_conv_kernel(const ConvCase& p, const std::vector<TensorData>& in, bool round_fp16, int threads) {
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
  n.outputs = {g.add_tensor("y", y, DType::kF32)};
  WinogradRun r;
  r.y.assign(static_cast<size_t>(shape_numel(y)), 0.f);
  std::unique_ptr<Kernel> k;
  for (const KernelEntry* e : kernels_for(OpId::Conv))
    if (std::string(e->name) == "onednn_conv_f32" && e->supports(g, n)) k = e->create();
  if (!k) return r;
  KernelContext ctx;
  ctx.graph = &g;
  ctx.node = &n;
  ctx.num_threads = threads;
  ctx.round_fp16 = round_fp16;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    ctx.inputs.push_back(i == 0 ? static_cast<const void*>(in[0].bytes.data()) : g.tensor(n.inputs[i]).data.ptr);
  ctx.outputs = {r.y.data()};
  if (!k->prepare(ctx).ok()) return r;
  k->run(ctx);
  r.impl = static_cast<onednn::OnednnKernel*>(k.get())->impl_name();
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
  // Not taken: fewer than 16 input channels, stride 2, dilation, groups, images under 14x14 output
  // pixels; activations other than Relu (oneDNN's Winograd implementations take no other post-op).
  const std::vector<ConvCase> others = {
      {1, 64, 64, 1, {13, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[1]},
      {1, 32, 32, 1, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[5]},
      {1, 32, 32, 1, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[3]},
      {1, 8, 16, 1, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, kActs[0]},
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

}  // namespace
}  // namespace orknn
