// Runs on taken CPUs (common/threads.h): a context planned for two threads whose runs go
// sequential because the CPUs are taken computes the same bits as its runs on two threads, on real
// models (oneDNN's primitives and the hand-written kernels, fp16 and INT8).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/threads.h"
#include "converter/convert.h"
#include "model_test_util.h"

namespace orknn {
namespace {

using namespace model_test;

void expect_sequential_runs_match(const std::string& name, const std::string& input_of = "") {
  ReferenceModel ref;
  ASSERT_NO_FATAL_FAILURE(load_reference_model(name, &ref, input_of));
  std::vector<uint8_t> model;
  ASSERT_NO_FATAL_FAILURE(convert_model(ref.onnx, ConvertOptions(), &model));
  const SetEnv t("OPENRKNN_NUM_THREADS", "2");
  const SetEnv every_model("OPENRKNN_MIN_THREADED_MACS", "0");
  std::vector<std::vector<float>> two, taken;
  ASSERT_NO_FATAL_FAILURE(run_model(model, ref.inputs(), &two));
  {
    const RunThreads::ForceContended cpus_taken;
    ASSERT_NO_FATAL_FAILURE(run_model(model, ref.inputs(), &taken));
  }
  ASSERT_EQ(two.at(0).size(), taken.at(0).size());
  EXPECT_EQ(std::memcmp(two[0].data(), taken[0].data(), two[0].size() * sizeof(float)), 0);
}

TEST(ContendedRun, Resnet18Fp16SameBits) { expect_sequential_runs_match("resnet18"); }
TEST(ContendedRun, MobilenetV2Fp16SameBits) { expect_sequential_runs_match("mobilenet_v2"); }
TEST(ContendedRun, Resnet50QdqInt8SameBits) { expect_sequential_runs_match("resnet50_qdq", "resnet50"); }

}  // namespace
}  // namespace orknn
