// One executor (runtime/executor.h): the executor that keeps every tensor, which the converter's
// calibration and rknn_inspect run, computes the runtime's bits. Real models converted here run
// through librknnrt.so (fusions, blocked layouts, the arena) and through a keep-all executor on the
// graph loaded from the same .rknn bytes (no fusion, every tensor its own bytes); the outputs must
// be identical, byte for byte, at 1 and 2 threads, in fp16, fp32 and INT8.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "kernels/quant_util.h"
#include "model_test_util.h"
#include "runtime/executor.h"
#include "runtime/model.h"

namespace orknn {
namespace {

using namespace model_test;

// The keep-all executor's output on `input` (float32 NCHW; quantized with the input's parameters
// for an INT8 input, as rknn_inputs_set does), as float32 (dequantized for an INT8 output).
void run_keep_all(const std::vector<uint8_t>& model, const std::vector<float>& input, int threads,
                  std::vector<float>* out) {
  std::shared_ptr<const Model> loaded;  // as rknn_init loads it
  const Status st = load_model_from_buffer(model.data(), model.size(), &loaded);
  ASSERT_TRUE(st.ok()) << st.message();
  const Graph& g = loaded->graph;
  std::unique_ptr<Executor> ex;
  const Status cs = Executor::create_keep_all(g, /*allow_fast=*/true, threads, &ex);
  ASSERT_TRUE(cs.ok()) << cs.message();
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  const Tensor& x = g.tensor(g.inputs[0].tensor);
  ASSERT_EQ(size_t(x.numel()), input.size());
  if (x.dtype == DType::kF32) {
    ASSERT_TRUE(ex->set_input(0, input.data(), input.size() * sizeof(float)).ok());
  } else {
    ASSERT_EQ(x.dtype, DType::kI8);
    const QuantScalar q = per_tensor(x);
    std::vector<int8_t> codes(input.size());
    for (size_t i = 0; i < input.size(); ++i) codes[i] = quantize_value(input[i], q.scale, q.zp);
    ASSERT_TRUE(ex->set_input(0, codes.data(), codes.size()).ok());
  }
  const Status rs = ex->run();
  ASSERT_TRUE(rs.ok()) << rs.message();
  const Tensor& y = g.tensor(g.outputs[0]);
  out->resize(size_t(y.numel()));
  if (y.dtype == DType::kF32) {
    std::memcpy(out->data(), ex->data(g.outputs[0]), out->size() * sizeof(float));
  } else {
    ASSERT_EQ(y.dtype, DType::kI8);
    const QuantScalar q = per_tensor(y);
    const int8_t* codes = ex->data_as<int8_t>(g.outputs[0]);
    for (size_t i = 0; i < out->size(); ++i) (*out)[i] = dequantize_value(codes[i], q.scale, q.zp);
  }
}

void expect_keep_all_matches_runtime(const std::string& name, const ConvertOptions& opts,
                                     const std::string& input_of = "") {
  ReferenceModel ref;
  ASSERT_NO_FATAL_FAILURE(load_reference_model(name, &ref, input_of));
  std::vector<uint8_t> model;
  ASSERT_NO_FATAL_FAILURE(convert_model(ref.onnx, opts, &model));
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << name << ", " << threads << " thread(s)");
    const SetEnv t("OPENRKNN_NUM_THREADS", std::to_string(threads).c_str());
    const SetEnv every_model("OPENRKNN_MIN_THREADED_MACS", "0");  // the threads asked, even for few MACs
    std::vector<std::vector<float>> runtime;
    ASSERT_NO_FATAL_FAILURE(run_model(model, ref.inputs(), &runtime));
    std::vector<float> keep_all;
    ASSERT_NO_FATAL_FAILURE(run_keep_all(model, ref.input, threads, &keep_all));
    ASSERT_EQ(runtime.at(0).size(), keep_all.size());
    EXPECT_EQ(std::memcmp(runtime[0].data(), keep_all.data(), keep_all.size() * sizeof(float)), 0);
  }
}

// SiLU pairs fused by the runtime (not by a keep-all executor), padded nChw16c activations.
TEST(OneExecutor, EfficientnetB0Fp16) {
  ConvertOptions opts;
  expect_keep_all_matches_runtime("efficientnet_b0", opts);
}

TEST(OneExecutor, MobilenetV2Fp32) {
  ConvertOptions opts;
  opts.precision = FloatPrecision::kFp32;
  expect_keep_all_matches_runtime("mobilenet_v2", opts);
}

// INT8: element-wise chains with a residual Add at their head (runtime only), NHWC activations.
TEST(OneExecutor, Resnet18QdqInt8) {
  ConvertOptions opts;
  expect_keep_all_matches_runtime("resnet18_qdq", opts, "resnet18");
}

// PP-LCNetV3's HardSwish chains and the recogniser's attention blocks, fp16.
TEST(OneExecutor, PpOcrV4RecFp16) {
  ConvertOptions opts;
  opts.input_shapes["x"] = {1, 3, 48, 320};
  expect_keep_all_matches_runtime("ppocrv4_rec", opts);
}

}  // namespace
}  // namespace orknn
