// Recurrent models exported from PyTorch (tests/models/export_recurrent.py): a CRNN-like Conv +
// 2-layer bidirectional LSTM + Linear, and a 2-layer batch-first GRU + Linear, converted, written
// and run through the public C API, against ONNX Runtime's outputs; in fp32, in fp16 storage, and
// quantized to INT8, where the LSTM/GRU nodes stay float (no int8 kernel) and say so.
// Missing files fail the test: run scripts/prepare_test_models.sh.
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "model/model_io.h"
#include "model_test_util.h"

namespace orknn {
namespace {

using namespace model_test;

struct RecurrentModel {
  const char* name;
  OpId op;
};
const RecurrentModel kRecurrentModels[] = {{"crnn_lstm", OpId::LSTM}, {"gru", OpId::GRU}};
// Lets gtest print a parameter by name instead of as raw bytes.
void PrintTo(const RecurrentModel& m, std::ostream* os) { *os << m.name; }

class RecurrentModelTest : public testing::TestWithParam<RecurrentModel> {
 protected:
  // Converts NAME.onnx with `opts`, runs it on NAME.in.f32, compares with NAME.out.f32.
  Comparison run(const ConvertOptions& opts, ConvertReport* report = nullptr) {
    const std::string base = models_dir() + "/" + GetParam().name;
    std::vector<float> input, reference;
    EXPECT_TRUE(read_f32(base + ".in.f32", &input)) << base << ".in.f32 is missing: run scripts/prepare_test_models.sh";
    EXPECT_TRUE(read_f32(base + ".out.f32", &reference))
        << base << ".out.f32 is missing: run scripts/prepare_test_models.sh";
    ConvertReport local;
    Graph graph;
    const Status st = convert_onnx(base + ".onnx", opts, &graph, report ? report : &local);
    EXPECT_TRUE(st.ok()) << "convert_onnx(" << base << ".onnx): " << st.message();
    if (!st.ok() || input.empty()) return {};
    int recurrent_nodes = 0;
    for (const Node& n : graph.nodes) recurrent_nodes += n.op == GetParam().op;
    EXPECT_EQ(recurrent_nodes, 2) << "both layers stay one node each";
    std::vector<uint8_t> model;
    const Status w = write_model(graph, &model);
    EXPECT_TRUE(w.ok()) << w.message();
    std::vector<std::vector<float>> outputs;
    run_model(model, {{input.data(), input.size() * sizeof(float), RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW}}, &outputs);
    if (outputs.empty()) return {};
    EXPECT_EQ(outputs[0].size(), reference.size());
    if (outputs[0].size() != reference.size()) return {};
    return compare(outputs[0], reference);
  }

  void print(const char* mode, const Comparison& c) {
    std::printf("[  metrics ] %s %s: cosine %.7f, max abs diff %.3g (reference max abs %.3g)\n", GetParam().name, mode,
                c.cosine, c.max_abs_diff, c.ref_max_abs);
  }
};

TEST_P(RecurrentModelTest, Fp32MatchesOnnxRuntime) {
  ConvertOptions opts;
  opts.precision = FloatPrecision::kFp32;
  const Comparison c = run(opts);
  print("fp32", c);
  // Both sides compute in fp32 and differ in summation order only: measured cosine 1.0000000,
  // max abs diff 6.7e-8 (crnn_lstm) and 3.0e-8 (gru) on outputs of magnitude 0.24 and 0.31.
  EXPECT_GT(c.cosine, 0.999999);
  EXPECT_LT(c.max_abs_diff, 1e-5 * (1 + c.ref_max_abs));
}

TEST_P(RecurrentModelTest, Fp16MatchesOnnxRuntime) {
  const Comparison c = run(ConvertOptions{});  // fp16 storage: weights and op outputs rounded to fp16
  print("fp16", c);
  // Measured: cosine 0.9999999 / 1.0000000, max abs diff 1.3e-4 on both.
  EXPECT_GT(c.cosine, 0.99999);
  EXPECT_LT(c.max_abs_diff, 2e-3);
}

TEST_P(RecurrentModelTest, Int8KeepsRecurrentNodesFloat) {
  ConvertOptions opts;
  opts.quant.enabled = true;
  opts.quant.dataset = models_dir() + "/calib/" + GetParam().name + ".txt";
  ASSERT_TRUE(file_exists(opts.quant.dataset)) << opts.quant.dataset << " is missing: run scripts/prepare_test_models.sh";
  ConvertReport report;
  const Comparison c = run(opts, &report);
  print("int8", c);
  int recurrent = 0;
  for (const auto& l : report.layer_precision) {
    if (l.op != op_name(GetParam().op)) continue;
    ++recurrent;
    EXPECT_EQ(l.precision, "float") << l.node;
    EXPECT_EQ(l.why, "no int8 kernel") << l.node;
  }
  EXPECT_EQ(recurrent, 2);
  // The quantized parts (Conv, MatMul/Gemm, data movement) cost a little accuracy: measured cosine
  // 0.99997 (crnn_lstm) and 0.999996 (gru), max abs diff 2.3e-3 and 1.5e-3.
  EXPECT_GT(c.cosine, 0.999);
}

INSTANTIATE_TEST_SUITE_P(Models, RecurrentModelTest, testing::ValuesIn(kRecurrentModels),
                         [](const testing::TestParamInfo<RecurrentModel>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace orknn
