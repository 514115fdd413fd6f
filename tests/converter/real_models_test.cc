// Real models, when present on this machine: torchvision exports (opset 13) and PP-OCRv4
// (paddle2onnx, opsets 9/11) convert without error, and the converted graph run with reference
// kernels matches the reference output stored next to each model (PyTorch / ONNX Runtime).
// Models are looked up in $ORKNN_MODELS_DIR, /tmp/tvmodels and tests/models/work; absent ones
// are skipped.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "converter/converter_test_util.h"
#include "testutil/op_harness.h"

namespace orknn::test {
namespace {

namespace fs = std::filesystem;

struct RealModel {
  const char* name;    // NAME.onnx, NAME.in.f32, NAME.out.f32
  Shape input_shape;   // pins dynamic dims (PP-OCR exports are dynamic)
  bool pin;
};

std::string find_file(const std::string& file) {
  std::vector<std::string> dirs;
  if (const char* d = std::getenv("ORKNN_MODELS_DIR")) dirs.push_back(d);
  dirs.push_back("/tmp/tvmodels");
  dirs.push_back(std::string(ORKNN_SOURCE_DIR) + "/tests/models/work");
  for (const auto& d : dirs)
    if (fs::exists(fs::path(d) / file)) return (fs::path(d) / file).string();
  return "";
}

std::vector<float> read_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<float> v(b.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

class RealModels : public ::testing::TestWithParam<RealModel> {};

TEST_P(RealModels, ConvertAndMatchReference) {
  const RealModel& m = GetParam();
  std::string onnx = find_file(std::string(m.name) + ".onnx");
  if (onnx.empty()) GTEST_SKIP() << m.name << ".onnx not found";
  ConvertOptions o = exact_options();
  if (m.pin) o.input_shapes[""] = m.input_shape;
  Graph g;
  ConvertReport rep;
  Status st = convert_onnx(onnx, o, &g, &rep);
  ASSERT_TRUE(st.ok()) << st.message();

  std::string in_path = find_file(std::string(m.name) + ".in.f32"), out_path = find_file(std::string(m.name) + ".out.f32");
  if (in_path.empty() || out_path.empty()) GTEST_SKIP() << "no reference input/output for " << m.name;
  std::vector<float> in = read_f32(in_path), want = read_f32(out_path);
  ASSERT_EQ(in.size(), static_cast<size_t>(g.tensor(g.inputs[0].tensor).numel()));
  std::vector<float> got = run_f32(g, {in});
  ASSERT_EQ(got.size(), want.size());
  float max_ref = 0.f;
  for (float v : want) max_ref = std::max(max_ref, std::fabs(v));
  EXPECT_GT(cosine(got, want), 0.99999) << m.name;
  EXPECT_LE(max_abs_diff(got, want), 1e-3f * std::max(1.f, max_ref)) << m.name;
}

INSTANTIATE_TEST_SUITE_P(
    Models, RealModels,
    ::testing::Values(RealModel{"resnet18", {}, false}, RealModel{"mobilenet_v2", {}, false},
                      RealModel{"mobilenet_v3_small", {}, false}, RealModel{"squeezenet1_1", {}, false},
                      RealModel{"shufflenet_v2_x1_0", {}, false}, RealModel{"efficientnet_b0", {}, false},
                      RealModel{"ppocr_cls", {1, 3, 48, 192}, true}, RealModel{"ppocrv4_rec", {1, 3, 48, 320}, true},
                      RealModel{"ppocrv4_det", {1, 3, 480, 480}, true}),
    [](const ::testing::TestParamInfo<RealModel>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace orknn::test
