// The runtime's SiLU fusion (kernels/x86/silu_fusion.h) on efficientnet_b0, whose Sigmoid -> Mul
// pairs it fuses: outputs bit-identical to the unfused run (OPENRKNN_DISABLE_SILU_FUSION=1),
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

namespace orknn {
namespace {

using namespace model_test;

struct RunResult {
  std::vector<float> output;
  std::string perf_detail;
};

// One inference through the public API with the per-layer profile on.
void run_once(std::vector<uint8_t> model, const std::vector<float>& input, RunResult* r) {
  rknn_context ctx = 0;
  ASSERT_EQ(rknn_init(&ctx, model.data(), uint32_t(model.size()), RKNN_FLAG_COLLECT_PERF_MASK, nullptr), RKNN_SUCC);
  rknn_input in;
  std::memset(&in, 0, sizeof(in));
  in.buf = const_cast<float*>(input.data());
  in.size = uint32_t(input.size() * sizeof(float));
  in.type = RKNN_TENSOR_FLOAT32;
  in.fmt = RKNN_TENSOR_NCHW;
  EXPECT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
  EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
  rknn_output out;
  std::memset(&out, 0, sizeof(out));
  out.want_float = 1;
  EXPECT_EQ(rknn_outputs_get(ctx, 1, &out, nullptr), RKNN_SUCC);
  if (out.buf) {
    const float* p = static_cast<const float*>(out.buf);
    r->output.assign(p, p + out.size / sizeof(float));
  }
  EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
  rknn_perf_detail detail;
  std::memset(&detail, 0, sizeof(detail));
  EXPECT_EQ(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
  if (detail.perf_data) r->perf_detail = detail.perf_data;
  EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

size_t count(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

class SetEnv {
 public:
  SetEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
  }
  ~SetEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(SiluFusion, EfficientnetBitIdenticalToUnfused) {
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "CPU without AVX-512F: no fusion";
  const std::string base = models_dir() + "/efficientnet_b0";
  ASSERT_TRUE(file_exists(base + ".onnx")) << base << ".onnx is missing: run scripts/prepare_test_models.sh";
  std::vector<float> input;
  ASSERT_TRUE(read_f32(base + ".in.f32", &input));
  for (FloatPrecision precision : {FloatPrecision::kFp16, FloatPrecision::kFp32}) {
    SCOPED_TRACE(precision == FloatPrecision::kFp16 ? "fp16" : "fp32");
    ConvertOptions opts;
    opts.precision = precision;
    Graph graph;
    ASSERT_TRUE(convert_onnx(base + ".onnx", opts, &graph).ok());
    std::vector<uint8_t> model;
    ASSERT_TRUE(write_model(graph, &model).ok());
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
      RunResult fused, unfused;
      run_once(model, input, &fused);
      {
        const SetEnv off("OPENRKNN_DISABLE_SILU_FUSION", "1");
        run_once(model, input, &unfused);
      }
      // Each fused pair shows the kernel twice (its Sigmoid and its Mul layer).
      EXPECT_EQ(count(fused.perf_detail, "avx512_f32_silu"), 2u * pairs);
      EXPECT_EQ(count(unfused.perf_detail, "avx512_f32_silu"), 0u);
      ASSERT_EQ(fused.output.size(), unfused.output.size());
      ASSERT_FALSE(fused.output.empty());
      EXPECT_EQ(std::memcmp(fused.output.data(), unfused.output.data(), fused.output.size() * sizeof(float)), 0);
    }
  }
}

}  // namespace
}  // namespace orknn
