// The runtime's blocked activation layout (runtime/layout_assignment.h; docs/kernels.md "Blocked
// activations"): on real models, outputs bit-identical to the all-NCHW run
// (OPENRKNN_DISABLE_KERNELS=blocked_layout) in fp16 and fp32 (nChw16c, or NHWC in builds that keep
// float blocked so: kernels/kernel.h kFloatBlockedNhwc) and INT8 (NHWC), at 1 and 2 threads, and the
// per-layer report shows that tensors were actually kept blocked.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "kernels/kernel.h"
#include "model/model_io.h"
#include "model_test_util.h"
#include "rknn_api.h"
#include "runtime/layout_assignment.h"
#include "testutil/cpu.h"

namespace orknn {
namespace {

using namespace model_test;

// `model` (converted from `onnx`) run with and without the blocked layout, at 1 and 2 threads:
// the same bytes out, and at least `min_blocked` layers reported with output layout `layout`.
// `check_perf(blocked_perf, nchw_perf)`, when given, inspects the two per-layer reports.
void expect_model_blocked_matches_nchw(const std::string& onnx, const ConvertOptions& opts, const char* layout,
                                       size_t min_blocked,
                                       void (*check_perf)(const std::string&, const std::string&) = nullptr) {
  ReferenceModel ref;
  ASSERT_NO_FATAL_FAILURE(load_reference_model(onnx, &ref, onnx.substr(0, onnx.find("_qdq"))));
  const std::vector<ModelInput> in = ref.inputs();
  std::vector<uint8_t> model;
  ASSERT_NO_FATAL_FAILURE(convert_model(ref.onnx, opts, &model));
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(std::string("threads ") + threads);
    const SetEnv t("OPENRKNN_NUM_THREADS", threads);
    const SetEnv every_model("OPENRKNN_MIN_THREADED_MACS", "0");  // the threads asked, even for few MACs
    std::vector<std::vector<float>> blocked, nchw;
    std::string blocked_perf, nchw_perf;
    run_model(model, in, &blocked, nullptr, &blocked_perf);
    {
      const SetEnv off("OPENRKNN_DISABLE_KERNELS", "blocked_layout");
      run_model(model, in, &nchw, nullptr, &nchw_perf);
    }
    EXPECT_GE(count_words(blocked_perf, layout), min_blocked) << blocked_perf;
    EXPECT_EQ(count_words(nchw_perf, layout), 0u);
    if (check_perf) check_perf(blocked_perf, nchw_perf);
    ASSERT_EQ(blocked.size(), 1u);
    ASSERT_EQ(nchw.size(), 1u);
    ASSERT_EQ(blocked[0].size(), nchw[0].size());
    EXPECT_EQ(std::memcmp(blocked[0].data(), nchw[0].data(), nchw[0].size() * sizeof(float)), 0);
  }
}

// Float models, fp16 and fp32 storage: the build's float blocked layout.
void expect_blocked_matches_nchw(const std::string& name, size_t min_blocked) {
  for (FloatPrecision precision : {FloatPrecision::kFp16, FloatPrecision::kFp32}) {
    SCOPED_TRACE(name + (precision == FloatPrecision::kFp16 ? " fp16" : " fp32"));
    ConvertOptions opts;
    opts.precision = precision;
    expect_model_blocked_matches_nchw(name, opts, blocked_layout_name(DType::kF32), min_blocked);
  }
}

// Layers of the per-layer report whose line names `op` and whose output is in `layout`.
size_t layers_in_layout(const std::string& perf, const char* op, const char* layout) {
  size_t n = 0;
  std::istringstream lines(perf);
  for (std::string line; std::getline(lines, line);)
    if (line.find(op) != std::string::npos) n += count_words(line, layout);
  return n;
}

bool has_avx512() { return ORKNN_X86_HAS("avx512f") && ORKNN_X86_HAS("avx512bw"); }
// Float blocked layouts are chosen by the x86 kernels (AVX-512) or, in NHWC builds, by XNNPACK's.
bool float_blocked_here() { return has_avx512() || kFloatBlockedNhwc; }
// INT8 ones where the kernels between the INT8 convolutions take NHWC: the x86 ones (AVX-512) or the
// NEON backend's (with XNNPACK's convolutions).
bool int8_blocked_here() {
  for (const KernelEntry* e : kernels_for(OpId::MaxPool))
    if (std::string(e->name) == "neon_maxpool_int8") return true;
  return has_avx512();
}

// Pointwise and depthwise convolutions (oneDNN and the hand-written depthwise kernel), residual Adds.
TEST(BlockedLayout, MobilenetV2BitIdenticalToNchw) {
  if (!has_avx512()) GTEST_SKIP() << "CPU without AVX-512";
  expect_blocked_matches_nchw("mobilenet_v2", 30);
}

// Dense 3x3 convolutions (Winograd in fp16, brgemm in NHWC), MaxPool, residual Adds.
TEST(BlockedLayout, Resnet18BitIdenticalToNchw) {
  if (!has_avx512()) GTEST_SKIP() << "CPU without AVX-512";
  expect_blocked_matches_nchw("resnet18", 10);
}

// SiLU pairs, squeeze-and-excitation blocks (per-channel Muls in nChw16c), channel counts that are
// not multiples of 16.
TEST(BlockedLayout, EfficientnetB0BitIdenticalToNchw) {
  if (!has_avx512()) GTEST_SKIP() << "CPU without AVX-512";
  expect_blocked_matches_nchw("efficientnet_b0", 20);
}

// HardSwish / HardSigmoid squeeze-and-excitation blocks, global pooling on blocked inputs.
TEST(BlockedLayout, MobilenetV3SmallBitIdenticalToNchw) {
  if (!float_blocked_here()) GTEST_SKIP() << "CPU without AVX-512";
  expect_blocked_matches_nchw("mobilenet_v3_small", kFloatBlockedNhwc ? 10 : 20);
}

// Fire modules: the expand convolutions' outputs and their channel Concat stay blocked, so
// every layer but the classifier (1000 channels) runs blocked.
TEST(BlockedLayout, Squeezenet11ConcatsBlocked) {
  if (!float_blocked_here()) GTEST_SKIP() << "CPU without AVX-512";
  ConvertOptions opts;
  expect_model_blocked_matches_nchw("squeezenet1_1", opts, blocked_layout_name(DType::kF32), 30,
                                    [](const std::string& blocked, const std::string&) {
                                      EXPECT_EQ(layers_in_layout(blocked, "Concat", blocked_layout_name(DType::kF32)),
                                                8u)
                                          << blocked;
                                    });
}

// INT8 (the QDQ models, converted with their own parameters): NHWC between the convolutions
// (oneDNN's, XNNPACK's), residual Adds, Relu tables, MaxPool and the global pooling.
TEST(BlockedLayout, Int8Resnet18BitIdenticalToNchw) {
  if (!int8_blocked_here()) GTEST_SKIP() << "CPU without AVX-512";
  expect_model_blocked_matches_nchw("resnet18_qdq", ConvertOptions(), "nhwc", 25);
}

// INT8, calibrated here: the Fire modules' Concats run NHWC (a pixel's channels interleaved from
// both expand convolutions, requantized where their parameters differ).
TEST(BlockedLayout, Int8Squeezenet11ConcatsNhwc) {
  if (!has_avx512()) GTEST_SKIP() << "CPU without AVX-512";
  ConvertOptions opts;
  opts.quant.enabled = true;
  opts.quant.dataset = models_dir() + "/calib/torchvision.txt";
  expect_model_blocked_matches_nchw("squeezenet1_1", opts, "nhwc", 30,
                                    [](const std::string& blocked, const std::string&) {
                                      EXPECT_EQ(layers_in_layout(blocked, "Concat", "nhwc"), 8u) << blocked;
                                    });
}

// With VNNI every layer but the first convolution and the classifier runs NHWC, on the
// hand-written kernels at every size: the 17 depthwise and the 34 pointwise convolutions.
// In NCHW the kernels chosen for that layout (Kernel::layout_fit) take over: the depthwise kernel
// keeps the 6 layers with output width >= 24 (112, 56, 56, 28, 28, 28) and the pointwise kernel
// the 12 pointwise layers of at least 16x16 pixels; oneDNN the others.
TEST(BlockedLayout, Int8MobilenetV2BitIdenticalToNchw) {
  if (!int8_blocked_here()) GTEST_SKIP() << "CPU without AVX-512";
  if (!ORKNN_X86_HAS("avx512vnni") || !has_avx512()) {
    expect_model_blocked_matches_nchw("mobilenet_v2_qdq", ConvertOptions(), "nhwc", 30);
    return;
  }
  expect_model_blocked_matches_nchw("mobilenet_v2_qdq", ConvertOptions(), "nhwc", 60,
                                    [](const std::string& blocked, const std::string& nchw) {
                                      EXPECT_EQ(count_words(blocked, "x86_dw_int8"), 17u) << blocked;
                                      EXPECT_EQ(count_words(blocked, "x86_pw_int8"), 34u) << blocked;
                                      EXPECT_EQ(count_words(nchw, "x86_dw_int8"), 6u) << nchw;
                                      EXPECT_EQ(count_words(nchw, "x86_pw_int8"), 12u) << nchw;
                                      // The stem writes NHWC only.
                                      if (ORKNN_X86_HAS("avx512vbmi"))
                                        EXPECT_EQ(count_words(blocked, "x86_stem_int8"), 1u) << blocked;
                                      EXPECT_EQ(count_words(nchw, "x86_stem_int8"), 0u) << nchw;
                                    });
}

}  // namespace
}  // namespace orknn
