// The rknn_inspect command line (when built next to this test): `info` and `accuracy` on models
// converted here with the converter library. Expected numbers come from this test's own runs of
// the two graphs (executors on reference kernels) and a naive formula, never from rknn_inspect.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "converter/cli_test_util.h"
#include "converter/converter_test_util.h"
#include "model/model_io.h"

namespace orknn::test {
namespace {

namespace fs = std::filesystem;
using B = OnnxBuilder;

// The number after `"key": ` at or after `from` in a JSON text (the report's own layout).
double json_number_after(const std::string& j, size_t from, const std::string& key) {
  const size_t k = j.find("\"" + key + "\": ", from);
  if (k == std::string::npos) return std::nan("");
  const char* p = j.c_str() + k + key.size() + 4;
  if (*p == '"') return std::strtod(p + 1, nullptr);  // "inf", "nan"
  return std::strtod(p, nullptr);
}

class InspectCli : public ToolTest {
 protected:
  void SetUp() override {
    if (!use_tool("rknn_inspect", "inspect")) GTEST_SKIP() << "rknn_inspect not built";
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    auto rnd = [&](size_t n) {
      std::vector<float> v(n);
      for (auto& x : v) x = u(rng);
      return v;
    };
    // x -> Conv -> Sigmoid -> GlobalAveragePool -> y
    B b(13);
    b.input("x", {1, 3, 8, 8});
    b.init_f32("w", {4, 3, 3, 3}, rnd(108));
    b.init_f32("b", {4}, rnd(4));
    auto* conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
    B::attr_ints(conv, "pads", {1, 1, 1, 1});
    b.node("Sigmoid", {"c"}, {"s"}, "sig");
    b.node("GlobalAveragePool", {"s"}, {"y"}, "gap");
    b.output("y");
    onnx_ = dir_ / "m.onnx";
    std::ofstream(onnx_, std::ios::binary) << b.bytes();
    std::ofstream list(dir_ / "list.txt");
    for (int i = 0; i < 4; ++i) {
      write_npy_f32(dir_ / ("cal" + std::to_string(i) + ".npy"), {1, 3, 8, 8}, rnd(192));
      list << "cal" << i << ".npy\n";
    }
    input_ = rnd(192);
    write_npy_f32(dir_ / "in.npy", {1, 3, 8, 8}, input_);
  }
  // Converts m.onnx (float or quantized) into `name`, returns the graph as converted.
  Graph convert_to(const std::string& name, bool quantize) {
    ConvertOptions o;
    o.platform = "rk3588";
    o.mean_values["x"] = {0.5f, 0.5f, 0.5f};
    o.std_values["x"] = {0.25f};
    if (quantize) {
      o.quant.enabled = true;
      o.quant.dataset = (dir_ / "list.txt").string();
    }
    Graph g;
    Status st = convert_onnx(onnx_.string(), o, &g);
    EXPECT_TRUE(st.ok()) << st.message();
    st = write_model_file(g, (dir_ / name).string());
    EXPECT_TRUE(st.ok()) << st.message();
    return g;
  }
  fs::path onnx_;
  std::vector<float> input_;
};

TEST_F(InspectCli, InfoOnFloatAndQuantizedModels) {
  Graph g = convert_to("f.rknn", false);
  std::string out;
  ASSERT_EQ(run("info " + (dir_ / "f.rknn").string(), &out), 0) << out;
  EXPECT_NE(out.find("platform: rk3588"), std::string::npos) << out;
  EXPECT_NE(out.find("precision: float16"), std::string::npos) << out;
  EXPECT_NE(out.find("0 x "), std::string::npos) << out;
  EXPECT_NE(out.find("[1,3,8,8]"), std::string::npos) << out;
  EXPECT_NE(out.find("mean [0.5,0.5,0.5] std [0.25]"), std::string::npos) << out;
  EXPECT_NE(out.find("0 y "), std::string::npos) << out;
  EXPECT_NE(out.find("nodes: " + std::to_string(g.nodes.size()) + " (int8 0, float " +
                     std::to_string(g.nodes.size()) + ", quantize/dequantize 0)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("GlobalAveragePool"), std::string::npos) << out;

  Graph q = convert_to("q.rknn", true);
  ASSERT_EQ(run("info " + (dir_ / "q.rknn").string(), &out), 0) << out;
  EXPECT_NE(out.find("precision: int8 quantized (float parts in float16)"), std::string::npos) << out;
  int n_int8 = 0, n_qdq = 0;
  for (const Node& n : q.nodes) {
    bool quantized = false;
    for (int t : n.inputs) quantized = quantized || (t >= 0 && !q.tensor(t).quant.empty());
    for (int t : n.outputs) quantized = quantized || (t >= 0 && !q.tensor(t).quant.empty());
    if (n.op == OpId::QuantizeLinear || n.op == OpId::DequantizeLinear) ++n_qdq;
    else n_int8 += quantized;
  }
  EXPECT_GT(n_int8, 0);
  EXPECT_NE(out.find("(int8 " + std::to_string(n_int8) + ", float " +
                     std::to_string(static_cast<int>(q.nodes.size()) - n_int8 - n_qdq) + ", quantize/dequantize " +
                     std::to_string(n_qdq) + ")"),
            std::string::npos)
      << out;
  const Tensor& qx = q.tensor(q.inputs[0].tensor);
  if (!qx.quant.empty()) {
    EXPECT_NE(out.find(strfmt("scale %g zp %d", static_cast<double>(qx.quant.scale[0]), qx.quant.zero_point[0])),
              std::string::npos)
        << out;
  }

  EXPECT_EQ(run("info " + (dir_ / "missing.rknn").string(), &out), 1) << out;
  EXPECT_NE(out.find("missing.rknn"), std::string::npos) << out;
  EXPECT_EQ(run("info " + onnx_.string(), &out), 1) << out;  // not a .rknn
}

TEST_F(InspectCli, AccuracyAgainstIndependentRuns) {
  Graph q = convert_to("q.rknn", true);
  // The float reference as rknn_inspect should build it: fp32, same shapes (already static).
  Graph f;
  {
    ConvertOptions o;
    o.platform = "rk3588";
    o.precision = FloatPrecision::kFp32;
    ASSERT_OK(convert_onnx(onnx_.string(), o, &f));
  }
  const std::vector<float> fy = run_f32(f, {input_});
  ASSERT_EQ(fy.size(), 4u);

  // The quantized model run here: input quantized with its parameters when it is int8.
  const Tensor& qx = q.tensor(q.inputs[0].tensor);
  std::vector<uint8_t> in_bytes;
  if (qx.dtype == DType::kI8) {
    const float s = qx.quant.scale[0];
    const int zp = qx.quant.zero_point[0];
    for (float v : input_) {
      float r = std::nearbyint(v / s) + static_cast<float>(zp);
      r = std::min(127.f, std::max(-128.f, r));
      in_bytes.push_back(static_cast<uint8_t>(static_cast<int8_t>(r)));
    }
  } else {
    in_bytes = to_bytes(input_);
  }
  std::vector<std::vector<uint8_t>> outs;
  ASSERT_OK(run_graph(q, {in_bytes}, &outs));
  const Tensor& qy = q.tensor(q.outputs[0]);
  std::vector<float> y;
  if (qy.dtype == DType::kI8) {
    for (uint8_t c : outs[0])
      y.push_back(static_cast<float>(static_cast<int8_t>(c) - qy.quant.zero_point[0]) * qy.quant.scale[0]);
  } else {
    y = from_bytes<float>(outs[0]);
  }
  ASSERT_EQ(y.size(), fy.size());
  double sig = 0, noise = 0, dot = 0, yy = 0, mx = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double d = static_cast<double>(fy[i]) - y[i];
    sig += static_cast<double>(fy[i]) * fy[i];
    noise += d * d;
    dot += static_cast<double>(fy[i]) * y[i];
    yy += static_cast<double>(y[i]) * y[i];
    mx = std::max(mx, std::fabs(d));
  }
  ASSERT_GT(noise, 0.0) << "the quantized output should differ from the float one";
  const double want_sqnr = 10 * std::log10(sig / noise), want_cos = dot / std::sqrt(sig * yy);

  const std::string json = (dir_ / "r.json").string();
  std::string out;
  ASSERT_EQ(run("accuracy " + onnx_.string() + " " + (dir_ / "q.rknn").string() + " --input " +
                    (dir_ / "in.npy").string() + " --ref-kernels --threshold 200 --top 2 --json " + json,
                &out),
            0)
      << out;
  EXPECT_NE(out.find("inputs: " + (dir_ / "in.npy").string()), std::string::npos) << out;
  EXPECT_NE(out.find("SQNR dB"), std::string::npos) << out;
  // Everything quantized loses something, so the first row below 200 dB is the int8 input, or
  // (float input) the first node.
  const std::string first = qx.dtype == DType::kI8 ? "first below 200 dB (entire): graph input 'x'"
                                                    : "first below 200 dB (entire): node";
  EXPECT_NE(out.find(first), std::string::npos) << out;
  EXPECT_NE(out.find("--quantize --dataset DATASET.txt --float-layers "), std::string::npos) << out;
  EXPECT_NE(out.find("rknn_convert " + onnx_.string() + " -t rk3588 --input-shape x=1,3,8,8 --mean x=0.5,0.5,0.5 "
                     "--std x=0.25"),
            std::string::npos)
      << out;

  std::ifstream jf(json);
  const std::string j((std::istreambuf_iterator<char>(jf)), std::istreambuf_iterator<char>());
  const size_t row_y = j.find("\"tensor\": \"y\"");
  ASSERT_NE(row_y, std::string::npos) << j;
  const size_t entire = j.find("\"entire\": ", row_y);
  EXPECT_NEAR(json_number_after(j, entire, "sqnr_db"), want_sqnr, 1e-6 * std::fabs(want_sqnr)) << j;
  EXPECT_NEAR(json_number_after(j, entire, "cosine"), want_cos, 1e-8) << j;
  EXPECT_NEAR(json_number_after(j, entire, "max_abs"), mx, 1e-6 * mx) << j;
  EXPECT_NE(j.find("\"threshold_db\": 200"), std::string::npos) << j;
  EXPECT_EQ(j.find("\"first_below\": null"), std::string::npos) << j;
  // The JSON parses (when a Python is around to check it).
  if (std::system("python3 -c 'import json' > /dev/null 2>&1") == 0) {
    EXPECT_EQ(std::system(("python3 -c 'import json,sys; json.load(open(sys.argv[1]))' " + json).c_str()), 0) << j;
  }

  // A threshold nothing falls below; random inputs without --input.
  ASSERT_EQ(run("accuracy " + onnx_.string() + " " + (dir_ / "q.rknn").string() + " --threshold -1000", &out), 0)
      << out;
  EXPECT_NE(out.find("random uniform [0,1) values, seed 0"), std::string::npos) << out;
  EXPECT_NE(out.find("every compared tensor is at or above -1000 dB"), std::string::npos) << out;
}

TEST_F(InspectCli, AccuracyErrors) {
  convert_to("q.rknn", true);
  const std::string q = (dir_ / "q.rknn").string();
  std::string out;
  EXPECT_EQ(run("accuracy " + onnx_.string() + " " + q + " --input " + (dir_ / "in.npy").string() + " --input " +
                    (dir_ / "in.npy").string(),
                &out),
            1)
      << out;
  EXPECT_NE(out.find("2 input files given, the model has 1 input ('x')"), std::string::npos) << out;
  EXPECT_EQ(run("accuracy " + onnx_.string() + " " + q + " --input " + (dir_ / "nope.npy").string(), &out), 1) << out;
  EXPECT_NE(out.find("nope.npy"), std::string::npos) << out;
  EXPECT_EQ(run("accuracy " + (dir_ / "nope.onnx").string() + " " + q, &out), 1) << out;
  EXPECT_NE(out.find("nope.onnx"), std::string::npos) << out;
  EXPECT_NE(run("accuracy " + onnx_.string(), &out), 0) << out;  // the .rknn is required
}

}  // namespace
}  // namespace orknn::test
