// The runtime's SiLU fusion (kernels/x86/fusions.h) on efficientnet_b0, whose Sigmoid -> Mul
// pairs it fuses: outputs bit-identical to the unfused run (OPENRKNN_DISABLE_KERNELS=avx512_f32_silu),
// in fp16 and fp32 models, at 1 and 2 threads; and the per-layer profile shows the fused kernel.
#include <gtest/gtest.h>

#include <cstdlib>
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

TEST(SiluFusion, EfficientnetBitIdenticalToUnfused) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F: no fusion";
  ReferenceModel ref;
  ASSERT_NO_FATAL_FAILURE(load_reference_model("efficientnet_b0", &ref));
  for (FloatPrecision precision : {FloatPrecision::kFp16, FloatPrecision::kFp32}) {
    SCOPED_TRACE(precision == FloatPrecision::kFp16 ? "fp16" : "fp32");
    ConvertOptions opts;
    opts.precision = precision;
    // The converter fuses each SiLU after a convolution into it ("Silu"); the runtime's pairs serve
    // the others. Without the fusion passes efficientnet keeps its pairs (after BatchNormalization).
    opts.run_passes = false;
    Graph graph;
    std::vector<uint8_t> model;
    ASSERT_NO_FATAL_FAILURE(convert_model(ref.onnx, opts, &model, &graph));
    // The SiLU pairs, counted here from the graph: Sigmoid(x) read only by a Mul(x, .).
    size_t pairs = 0;
    for (const Node& sig : graph.nodes) {
      if (sig.op != OpId::Sigmoid) continue;
      std::vector<const Node*> readers;
      for (const Node& n : graph.nodes)
        for (int t : n.inputs)
          if (t == sig.outputs[0]) readers.push_back(&n);
      if (readers.size() == 1 && readers[0]->op == OpId::Mul &&
          (readers[0]->inputs[0] == sig.inputs[0] || readers[0]->inputs[1] == sig.inputs[0]))
        ++pairs;
    }
    EXPECT_GT(pairs, 10u) << "efficientnet_b0 has a SiLU in every block";
    for (const char* threads : {"1", "2"}) {
      SCOPED_TRACE(std::string("threads ") + threads);
      const SetEnv t("OPENRKNN_NUM_THREADS", threads);
      const SetEnv every_model("OPENRKNN_MIN_THREADED_MACS", "0");  // the threads asked, even for few MACs
      const std::vector<ModelInput> in = ref.inputs();
      std::vector<std::vector<float>> fused, unfused;
      std::string fused_perf, unfused_perf;
      run_model(model, in, &fused, nullptr, &fused_perf);
      {
        const SetEnv off("OPENRKNN_DISABLE_KERNELS", "avx512_f32_silu");
        run_model(model, in, &unfused, nullptr, &unfused_perf);
      }
      // Each fused pair shows the kernel twice (its Sigmoid and its Mul layer).
      EXPECT_EQ(count_words(fused_perf, "avx512_f32_silu"), 2u * pairs);
      EXPECT_EQ(count_words(unfused_perf, "avx512_f32_silu"), 0u);
      ASSERT_EQ(fused.size(), 1u);
      ASSERT_EQ(unfused.size(), 1u);
      ASSERT_EQ(fused[0].size(), unfused[0].size());
      EXPECT_EQ(std::memcmp(fused[0].data(), unfused[0].data(), fused[0].size() * sizeof(float)), 0);
    }
  }
}

}  // namespace
}  // namespace orknn
