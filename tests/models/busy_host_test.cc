// Runs on a busy host (common/threads.h): a context planned for two threads whose runs go
// single-threaded (OPENRKNN_BUSY_HOST=1: its one-thread executor) computes the same bits as its
// runs on an idle host (OPENRKNN_BUSY_HOST=0), on real models: oneDNN's float and INT8
// convolutions, the hand-written depthwise, pointwise, element-wise and pooling kernels, the
// fusions.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "model_test_util.h"

namespace orknn {
namespace {

using namespace model_test;

void expect_busy_host_runs_match(const std::string& name, const ConvertOptions& opts, const std::string& input_of = "") {
  ReferenceModel ref;
  ASSERT_NO_FATAL_FAILURE(load_reference_model(name, &ref, input_of));
  std::vector<uint8_t> model;
  ASSERT_NO_FATAL_FAILURE(convert_model(ref.onnx, opts, &model));
  const SetEnv t("OPENRKNN_NUM_THREADS", "2");
  const SetEnv every_model("OPENRKNN_MIN_THREADED_MACS", "0");
  std::vector<std::vector<float>> idle, busy;
  {
    const SetEnv cpus_free("OPENRKNN_BUSY_HOST", "0");
    ASSERT_NO_FATAL_FAILURE(run_model(model, ref.inputs(), &idle));
  }
  {
    const SetEnv cpus_taken("OPENRKNN_BUSY_HOST", "1");
    ASSERT_NO_FATAL_FAILURE(run_model(model, ref.inputs(), &busy));
  }
  ASSERT_EQ(idle.at(0).size(), busy.at(0).size());
  EXPECT_EQ(std::memcmp(idle[0].data(), busy[0].data(), idle[0].size() * sizeof(float)), 0);
}

TEST(BusyHostRun, Resnet18Fp16SameBits) { expect_busy_host_runs_match("resnet18", ConvertOptions()); }
TEST(BusyHostRun, EfficientnetB0Fp16SameBits) { expect_busy_host_runs_match("efficientnet_b0", ConvertOptions()); }

// INT8, calibrated here: oneDNN's INT8 convolutions, the hand-written INT8 kernels, INT8 chains.
TEST(BusyHostRun, EfficientnetB0Int8SameBits) {
  ConvertOptions opts;
  opts.quant.enabled = true;
  opts.quant.dataset = models_dir() + "/calib/torchvision.txt";
  expect_busy_host_runs_match("efficientnet_b0", opts);
}

TEST(BusyHostRun, Resnet50QdqInt8SameBits) {
  expect_busy_host_runs_match("resnet50_qdq", ConvertOptions(), "resnet50");
}

}  // namespace
}  // namespace orknn
