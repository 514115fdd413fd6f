// The rknn_inspect command line (when built next to this test): `info` and `accuracy` on models
// converted here with the converter library. Expected numbers come from this test's own runs of
// the two graphs (executors on reference kernels) and a naive formula, never from rknn_inspect.
#include <algorithm>
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
    auto rnd = [&](size_t n) { return uniform(rng, n); };
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
  // n values uniform in [-1, 1).
  static std::vector<float> uniform(std::mt19937& rng, size_t n) {
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
  }
  // The float reference as rknn_inspect should build it: fp32, same shapes (already static).
  Graph float_reference() {
    ConvertOptions o;
    o.platform = "rk3588";
    o.precision = FloatPrecision::kFp32;
    Graph f;
    Status st = convert_onnx(onnx_.string(), o, &f);
    EXPECT_TRUE(st.ok()) << st.message();
    return f;
  }
  // Converts m.onnx (float or quantized, with float_layers kept float) into `name`, returns the
  // graph as converted.
  Graph convert_to(const std::string& name, bool quantize, const std::vector<std::string>& float_layers = {}) {
    ConvertOptions o;
    o.platform = "rk3588";
    o.mean_values["x"] = {0.5f, 0.5f, 0.5f};
    o.std_values["x"] = {0.25f};
    if (quantize) {
      o.quant.enabled = true;
      o.quant.dataset = (dir_ / "list.txt").string();
      o.quant.float_layers = float_layers;
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

// Quantized graph q's output 0 on `input` as real values: the input quantized with its parameters
// when it is int8 (as the runtime does), an int8 output dequantized.
std::vector<float> run_quantized(const Graph& q, const std::vector<float>& input) {
  const Tensor& qx = q.tensor(q.inputs[0].tensor);
  std::vector<uint8_t> in_bytes;
  if (qx.dtype == DType::kI8) {
    const float s = qx.quant.scale[0];
    const int zp = qx.quant.zero_point[0];
    for (float v : input) {
      float r = std::nearbyint(v / s) + static_cast<float>(zp);
      r = std::min(127.f, std::max(-128.f, r));
      in_bytes.push_back(static_cast<uint8_t>(static_cast<int8_t>(r)));
    }
  } else {
    in_bytes = to_bytes(input);
  }
  std::vector<std::vector<uint8_t>> outs;
  Status st = run_graph(q, {in_bytes}, &outs);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  const Tensor& qy = q.tensor(q.outputs[0]);
  std::vector<float> y;
  if (qy.dtype == DType::kI8) {
    for (uint8_t c : outs[0])
      y.push_back(static_cast<float>(static_cast<int8_t>(c) - qy.quant.zero_point[0]) * qy.quant.scale[0]);
  } else {
    y = from_bytes<float>(outs[0]);
  }
  return y;
}

// The naive formulas of docs/inspect.md.
struct Metrics {
  double sqnr = 0, cosine = 0, max_abs = 0, noise = 0;
};
Metrics metrics(const std::vector<float>& ref, const std::vector<float>& y) {
  EXPECT_EQ(ref.size(), y.size());
  double sig = 0, noise = 0, dot = 0, yy = 0, mx = 0;
  for (size_t i = 0; i < y.size() && i < ref.size(); ++i) {
    const double d = static_cast<double>(ref[i]) - y[i];
    sig += static_cast<double>(ref[i]) * ref[i];
    noise += d * d;
    dot += static_cast<double>(ref[i]) * y[i];
    yy += static_cast<double>(y[i]) * y[i];
    mx = std::max(mx, std::fabs(d));
  }
  return Metrics{10 * std::log10(sig / noise), dot / std::sqrt(sig * yy), mx, noise};
}

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
  const std::vector<float> fy = run_f32(float_reference(), {input_});
  ASSERT_EQ(fy.size(), 4u);

  // The quantized model run here.
  const Tensor& qx = q.tensor(q.inputs[0].tensor);
  const Metrics m = metrics(fy, run_quantized(q, input_));
  ASSERT_GT(m.noise, 0.0) << "the quantized output should differ from the float one";
  const double want_sqnr = m.sqnr, want_cos = m.cosine, mx = m.max_abs;

  const std::string json = (dir_ / "r.json").string();
  std::string out;
  ASSERT_EQ(run("accuracy " + onnx_.string() + " " + (dir_ / "q.rknn").string() + " --input " +
                    (dir_ / "in.npy").string() + " --ref-kernels --threshold 200 --top 2 --try 0 --json " + json,
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

// --try: every candidate's measured outputs are those of a conversion with --float-layers (the
// same data set, so the same ranges) run here; the ranking is by the gain of the output cosine.
TEST_F(InspectCli, FloatTrialsAgainstIndependentConversions) {
  {
    // A deeper model than the fixture's, with several candidates: x -> Conv -> Sigmoid -> Conv ->
    // Tanh -> Conv -> GlobalAveragePool -> y.
    std::mt19937 rng(5);
    B b(13);
    b.input("x", {1, 3, 8, 8});
    b.init_f32("w1", {8, 3, 3, 3}, uniform(rng, 216));
    b.init_f32("b1", {8}, uniform(rng, 8));
    b.init_f32("w2", {8, 8, 3, 3}, uniform(rng, 576));
    b.init_f32("b2", {8}, uniform(rng, 8));
    b.init_f32("w3", {4, 8, 1, 1}, uniform(rng, 32));
    b.init_f32("b3", {4}, uniform(rng, 4));
    B::attr_ints(b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
    b.node("Sigmoid", {"c1"}, {"s1"}, "sig1");
    B::attr_ints(b.node("Conv", {"s1", "w2", "b2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
    b.node("Tanh", {"c2"}, {"t2"}, "tanh2");
    b.node("Conv", {"t2", "w3", "b3"}, {"c3"}, "conv3");
    b.node("GlobalAveragePool", {"c3"}, {"y"}, "gap");
    b.output("y");
    onnx_ = dir_ / "m2.onnx";
    std::ofstream(onnx_, std::ios::binary) << b.bytes();
  }
  convert_to("q.rknn", true);
  const std::vector<float> fy = run_f32(float_reference(), {input_});
  const std::string json = (dir_ / "r.json").string();
  std::string out;
  ASSERT_EQ(run("accuracy " + onnx_.string() + " " + (dir_ / "q.rknn").string() + " --input " +
                    (dir_ / "in.npy").string() + " --ref-kernels --try 8 --top 1 --json " + json,
                &out),
            0)
      << out;
  EXPECT_NE(out.find("euclidean"), std::string::npos) << out;
  std::ifstream jf(json);
  const std::string j((std::istreambuf_iterator<char>(jf)), std::istreambuf_iterator<char>());
  const size_t ft = j.find("\"float_trials\": ");
  ASSERT_NE(ft, std::string::npos) << out << j;
  EXPECT_NE(j.find("\"reproduced\": true", ft), std::string::npos) << j;
  const Metrics base = metrics(fy, run_quantized(convert_to("q.rknn", true), input_));
  EXPECT_NEAR(json_number_after(j, j.find("\"quantized\": ", ft), "cosine"), base.cosine, 1e-8) << j;

  // The names of the JSON string array that starts at `from`.
  auto names_at = [&](size_t from) {
    std::vector<std::string> names;
    const size_t end = j.find(']', from);
    for (size_t q = j.find('"', from); q < end; q = j.find('"', q + 1)) {
      const size_t e = j.find('"', q + 1);
      names.push_back(j.substr(q + 1, e - q - 1));
      q = e;
    }
    return names;
  };
  std::vector<size_t> ranks;  // by gain
  double last_gain = 1.0, best_gain = -1.0;
  size_t at = j.find("\"trials\": [", ft);
  ASSERT_NE(at, std::string::npos) << j;
  for (size_t k = j.find("{\"nodes\": ", at); k != std::string::npos; k = j.find("{\"nodes\": ", k + 1)) {
    const std::vector<std::string> nodes = names_at(k + 10);
    ASSERT_FALSE(nodes.empty()) << j;
    ranks.push_back(static_cast<size_t>(json_number_after(j, k, "single_rank")));
    const double gain = json_number_after(j, k, "cosine_gain");
    EXPECT_LE(gain, last_gain) << j;  // by gain, largest first
    last_gain = gain;
    best_gain = std::max(best_gain, gain);
    const Metrics m = metrics(fy, run_quantized(convert_to("h.rknn", true, nodes), input_));
    const size_t o = j.find("\"outputs\": ", k);
    EXPECT_NEAR(json_number_after(j, o, "cosine"), m.cosine, 1e-8) << nodes[0] << "\n" << j;
    EXPECT_NEAR(json_number_after(j, o, "sqnr_db"), m.sqnr, 1e-6 * std::fabs(m.sqnr)) << nodes[0] << "\n" << j;
    EXPECT_NEAR(gain, m.cosine - base.cosine, 1e-8) << j;
  }
  ASSERT_FALSE(ranks.empty()) << j;
  // On this model the float conv3 (the third by single SQNR) gains the most at the output; Tanh and
  // the Conv before it gain nothing, their outputs being rounded to the same int8 grid anyway.
  EXPECT_GT(ranks[0], 1u) << out;
  std::sort(ranks.begin(), ranks.end());
  for (size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(ranks[i], i + 1) << j;  // every candidate tried once
  EXPECT_GT(ranks.size(), 2u) << j;
  EXPECT_GT(best_gain, 0.0) << j;

  // The best one (--top 1), when it gains: the command keeps it float.
  const std::vector<std::string> keep = names_at(j.find("\"keep\": ", ft) + 8);
  EXPECT_FALSE(keep.empty()) << j;
  if (!keep.empty()) {
    const Metrics m = metrics(fy, run_quantized(convert_to("h.rknn", true, keep), input_));
    EXPECT_NEAR(json_number_after(j, j.find("\"kept\": ", ft), "cosine"), m.cosine, 1e-8) << j;
    EXPECT_NE(out.find("--float-layers " + keep[0] + " "), std::string::npos) << out;
  }

  // --try-dataset: the calibration samples judge the trials too; the outputs of the .rknn on them
  // are no closer to fp32 than on the one input alone (the least over all of them).
  const std::string json2 = (dir_ / "r2.json").string();
  ASSERT_EQ(run("accuracy " + onnx_.string() + " " + (dir_ / "q.rknn").string() + " --input " +
                    (dir_ / "in.npy").string() + " --try 2 --try-dataset " + (dir_ / "list.txt").string() +
                    " --json " + json2,
                &out),
            0)
      << out;
  EXPECT_NE(out.find("these inputs and the 4 samples of "), std::string::npos) << out;
  std::ifstream jf2(json2);
  const std::string j2((std::istreambuf_iterator<char>(jf2)), std::istreambuf_iterator<char>());
  const size_t ft2 = j2.find("\"float_trials\": ");
  ASSERT_NE(ft2, std::string::npos) << j2;
  EXPECT_NE(j2.find("\"samples\": 4", ft2), std::string::npos) << j2;
  EXPECT_LE(json_number_after(j2, j2.find("\"quantized\": ", ft2), "cosine"), base.cosine + 1e-6) << j2;
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
