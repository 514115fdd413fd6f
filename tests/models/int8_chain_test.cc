// The runtime's INT8 element-wise chains (kernels/x86/fusions.h): on efficientnet_b0 (SiLU:
// Sigmoid then Mul) and PP-OCRv4 rec (HardSwish, then Mul and Add by constants), INT8 models
// calibrated here, outputs bit-identical to the unfused run (OPENRKNN_DISABLE_KERNELS=avx512_int8_chain) at 1
// and 2 threads, and the per-layer profile shows every node of every chain on the chain kernel.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "model/model_io.h"
#include "model_test_util.h"
#include "rknn_api.h"
#include "testutil/cpu.h"

namespace orknn {
namespace {

using namespace model_test;

// The model converted with `opts`, run fused and unfused on its reference input (NAME.in.f32).
// At least `min_nodes` layers must run on the chain kernel.
void expect_chains_match_unfused(const std::string& name, const ConvertOptions& opts, size_t min_nodes) {
  ReferenceModel ref;
  ASSERT_NO_FATAL_FAILURE(load_reference_model(name, &ref));
  std::vector<uint8_t> model;
  ASSERT_NO_FATAL_FAILURE(convert_model(ref.onnx, opts, &model));
  const std::vector<ModelInput> in = ref.inputs();
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(name + ", threads " + threads);
    const SetEnv t("OPENRKNN_NUM_THREADS", threads);
    const SetEnv every_model("OPENRKNN_MIN_THREADED_MACS", "0");  // the threads asked, even for few MACs
    std::vector<std::vector<float>> fused, unfused;
    std::string fused_perf, unfused_perf;
    run_model(model, in, &fused, nullptr, &fused_perf);
    {
      const SetEnv off("OPENRKNN_DISABLE_KERNELS", "avx512_int8_chain");
      run_model(model, in, &unfused, nullptr, &unfused_perf);
    }
    EXPECT_GE(count_words(fused_perf, "avx512_int8_chain"), min_nodes) << fused_perf;
    EXPECT_EQ(count_words(unfused_perf, "avx512_int8_chain"), 0u);
    ASSERT_EQ(fused.size(), unfused.size());
    for (size_t o = 0; o < fused.size(); ++o) {
      ASSERT_EQ(fused[o].size(), unfused[o].size());
      EXPECT_EQ(std::memcmp(fused[o].data(), unfused[o].data(), fused[o].size() * sizeof(float)), 0) << "output " << o;
    }
  }
}

// efficientnet_b0: a SiLU after each of its 49 convolutions outside the squeeze-and-excitation
// blocks (2 nodes each).
TEST(Int8Chains, EfficientnetBitIdenticalToUnfused) {
  if (!ORKNN_X86_HAS("avx512vbmi")) GTEST_SKIP() << "CPU without AVX-512 VBMI: no INT8 chains";
  ConvertOptions opts;
  opts.quant.enabled = true;
  opts.quant.dataset = models_dir() + "/calib/torchvision.txt";
  expect_chains_match_unfused("efficientnet_b0", opts, 2 * 49);
}

// PP-OCRv4 rec: Mul(scale) -> Add(bias) after its 28 HardSwish convolutions (2 nodes each; the
// int8 Conv applies the HardSwish itself), and 7 SiLU pairs in its neck.
TEST(Int8Chains, PpocrRecBitIdenticalToUnfused) {
  if (!ORKNN_X86_HAS("avx512vbmi")) GTEST_SKIP() << "CPU without AVX-512 VBMI: no INT8 chains";
  ConvertOptions opts;
  opts.input_shapes["x"] = {1, 3, 48, 320};
  opts.mean_values[""] = {127.5f, 127.5f, 127.5f};
  opts.std_values[""] = {127.5f, 127.5f, 127.5f};
  opts.quant.enabled = true;
  opts.quant.dataset = models_dir() + "/calib/ppocrv4_rec.txt";
  expect_chains_match_unfused("ppocrv4_rec", opts, 2 * 28 + 2 * 7);
}

// resnet18 calibrated here: each of its 8 residual Adds is read by a Relu only, a chain with a
// binary head (2 nodes each). (Its QDQ file has no such Relu: the converter keeps the clamp in the
// Add's output parameters.)
TEST(Int8Chains, Resnet18ResidualAddReluBitIdenticalToUnfused) {
  if (!ORKNN_X86_HAS("avx512vbmi")) GTEST_SKIP() << "CPU without AVX-512 VBMI: no INT8 chains";
  ConvertOptions opts;
  opts.quant.enabled = true;
  opts.quant.dataset = models_dir() + "/calib/torchvision.txt";
  expect_chains_match_unfused("resnet18", opts, 2 * 8);
}

}  // namespace
}  // namespace orknn
