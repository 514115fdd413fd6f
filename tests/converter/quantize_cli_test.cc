// rknn_convert's quantization options (when built next to this test): --quantize, --dataset,
// --algorithm, --method, --float-layers, the YAML keys, the per-layer precision table, and the
// errors. The written model is loaded back to check what was stored.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "converter/cli_test_util.h"
#include "converter/converter_test_util.h"
#include "converter/quant/dataset.h"
#include "kernels/kernel.h"
#include "testutil/op_harness.h"

namespace orknn::test {
namespace {

namespace fs = std::filesystem;
using B = OnnxBuilder;

class QuantCli : public ToolTest {
 protected:
  void SetUp() override {
    if (!use_tool("rknn_convert", "qcli")) GTEST_SKIP() << "rknn_convert not built";
    fs::create_directories(dir_ / "data");
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    auto rnd = [&](size_t n) {
      std::vector<float> v(n);
      for (auto& x : v) x = u(rng);
      return v;
    };
    B b(13);
    b.input("img", {1, 3, 8, 8});
    b.init_f32("w", {4, 3, 3, 3}, rnd(108));
    b.init_f32("b", {4}, rnd(4));
    b.init_f32("wf", {2, 4}, rnd(8));
    auto* conv = b.node("Conv", {"img", "w", "b"}, {"c"}, "conv");
    B::attr_ints(conv, "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, {"r"}, "relu");
    b.node("GlobalAveragePool", {"r"}, {"gap"}, "gap");
    b.node("Flatten", {"gap"}, {"f"}, "flatten");
    auto* fc = b.node("Gemm", {"f", "wf"}, {"logits"}, "fc");
    B::attr_i(fc, "transB", 1);
    b.node("Softmax", {"logits"}, {"prob"}, "softmax");
    b.output("prob");
    std::ofstream(dir_ / "m.onnx", std::ios::binary) << b.bytes();
    std::ofstream list(dir_ / "data" / "list.txt");
    for (int i = 0; i < 3; ++i) {
      write_npy_f32(dir_ / "data" / ("s" + std::to_string(i) + ".npy"), {1, 3, 8, 8}, rnd(192));
      list << "s" << i << ".npy\n";  // relative to the list file
    }
  }
  // rknn_convert on m.onnx for rk3588 with `args`.
  int run(const std::string& args, std::string* out) {
    return ToolTest::run((dir_ / "m.onnx").string() + " -t rk3588 " + args, out);
  }
  std::string list() const { return (dir_ / "data" / "list.txt").string(); }
  std::string out_model() const { return (dir_ / "q.rknn").string(); }
  // Two INT8 models of the fixture's input give the same int8 outputs, bit for bit, on the three
  // calibration samples (quantized with the first model's input parameters, which must match).
  void expect_same_int8_outputs(const std::string& model_a, const std::string& model_b) {
    bool ok = false;
    Graph a = load(model_a, &ok);
    ASSERT_TRUE(ok);
    Graph b = load(model_b, &ok);
    ASSERT_TRUE(ok);
    const Tensor &in_a = a.tensor(a.inputs[0].tensor), &in_b = b.tensor(b.inputs[0].tensor);
    ASSERT_EQ(in_a.dtype, DType::kI8);
    ASSERT_EQ(in_b.dtype, DType::kI8);
    ASSERT_EQ(in_a.quant.scale, in_b.quant.scale);
    ASSERT_EQ(in_a.quant.zero_point, in_b.quant.zero_point);
    for (int i = 0; i < 3; ++i) {
      std::vector<float> x;
      ASSERT_OK(load_calibration_file((dir_ / "data" / ("s" + std::to_string(i) + ".npy")).string(), a, 0, &x));
      std::vector<uint8_t> q(x.size());
      for (size_t k = 0; k < x.size(); ++k)
        q[k] = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(
            std::nearbyint(x[k] / in_a.quant.scale[0]) + in_a.quant.zero_point[0], -128.f, 127.f)));
      std::vector<std::vector<uint8_t>> out_a, out_b;
      ASSERT_OK(run_graph(a, {q}, &out_a));
      ASSERT_OK(run_graph(b, {q}, &out_b));
      ASSERT_EQ(out_a.size(), 1u);
      EXPECT_FALSE(out_a[0].empty());
      EXPECT_EQ(out_a, out_b) << "sample " << i;
    }
  }
};

TEST_F(QuantCli, QuantizeWithDatasetPrintsThePrecisionTable) {
  std::string out;
  ASSERT_EQ(run("-o " + out_model() + " --quantize --dataset " + list(), &out), 0) << out;
  EXPECT_NE(out.find("per-layer precision"), std::string::npos) << out;
  EXPECT_NE(out.find("calibrated on 3 samples"), std::string::npos) << out;
  EXPECT_NE(out.find("softmax"), std::string::npos) << out;
  EXPECT_NE(out.find(" int8 / "), std::string::npos) << out;
  bool ok = false;
  Graph g = load(out_model(), &ok);
  ASSERT_TRUE(ok);
  if (has_quantized_ref_kernel(OpId::Conv)) {
    EXPECT_NE(out.find("conv "), std::string::npos) << out;
    EXPECT_EQ(g.tensor(g.inputs[0].tensor).dtype, DType::kI8);  // read only by the int8 Conv
    EXPECT_EQ(g.tensor(g.inputs[0].tensor).quant.scale.size(), 1u);
  }
  EXPECT_EQ(g.tensor(g.outputs[0]).name, "prob");
}

// --bias-correction, --kl-keep-tails, --clip-saturated and --adaptive-rounding reach the conversion
// and the model records them; without them the conversion settings say so.
TEST_F(QuantCli, BiasCorrectionAndKlKeepTailsAreAppliedAndRecorded) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  // kl calibration with `options`; the model's conversion settings must hold `recorded`.
  auto convert_with = [&](const std::string& options, const std::string& recorded) {
    std::string out;
    EXPECT_EQ(run("-o " + out_model() + " --quantize --dataset " + list() + " --algorithm kl " + options, &out), 0)
        << out;
    bool ok = false;
    Graph g = load(out_model(), &ok);
    EXPECT_TRUE(ok);
    EXPECT_NE(g.conversion_settings.find(recorded), std::string::npos) << g.conversion_settings;
    return g;
  };
  const Graph plain = convert_with("", "algorithm kl, weights per channel, bias correction off");
  const Graph corrected = convert_with("--bias-correction", "algorithm kl, weights per channel, bias correction on");
  convert_with("--kl-keep-tails", "algorithm kl (keep tails), weights per channel, bias correction off");
  convert_with("--kl-keep-tails --clip-saturated --adaptive-rounding",
               "algorithm kl (keep tails, clip saturated), weights per channel (adaptive rounding), bias correction off");
  // The conv's 27 weights per channel are rounded to steps of max|w| / 127 and its bias step is
  // s_x * s_w: the mean error the rounding leaves is many bias steps, so some bias moves.
  auto conv_bias = [](const Graph& g) {
    for (const Node& n : g.nodes)
      if (n.op == OpId::Conv && n.inputs.size() > 2) {
        const Tensor& b = g.tensor(n.inputs[2]);
        return std::vector<int32_t>(b.const_ptr<int32_t>(), b.const_ptr<int32_t>() + b.numel());
      }
    return std::vector<int32_t>();
  };
  ASSERT_EQ(conv_bias(plain).size(), 4u);
  EXPECT_NE(conv_bias(plain), conv_bias(corrected));
}

TEST_F(QuantCli, MethodLayerAndFloatLayers) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  std::string out;
  ASSERT_EQ(run("-o " + out_model() + " --quantize --dataset " + list() + " --method layer --algorithm mmse", &out), 0)
      << out;
  bool ok = false;
  Graph g = load(out_model(), &ok);
  ASSERT_TRUE(ok);
  for (const Node& n : g.nodes)
    if (n.op == OpId::Conv) EXPECT_EQ(g.tensor(n.inputs[1]).quant.scale.size(), 1u);

  ASSERT_EQ(run("-o " + out_model() + " --quantize --dataset " + list() + " --float-layers conv,fc", &out), 0) << out;
  EXPECT_NE(out.find("--float-layers"), std::string::npos) << out;
  Graph h = load(out_model(), &ok);
  ASSERT_TRUE(ok);
  for (const Node& n : h.nodes)
    if (n.op == OpId::Conv) EXPECT_EQ(h.tensor(n.inputs[1]).dtype, DType::kF32);
  EXPECT_EQ(h.tensor(h.inputs[0].tensor).dtype, DType::kF32);
}

// --auto-hybrid: a target already met keeps everything int8; a target int8 cannot meet keeps layers
// float, the chosen ones recorded in the model, until the outputs reach it (the model's outputs,
// run here on the data set's samples, against the fp32 conversion).
TEST_F(QuantCli, AutoHybridKeepsLayersFloatUntilTheTargetCosine) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  // The model cut after the Conv (+Relu): its int8 output is about 0.99999 close to fp32.
  const std::string base = "-o " + out_model() + " --quantize --dataset " + list() + " --outputs r ";
  std::string out;
  ASSERT_EQ(run(base + "--auto-hybrid=0.5", &out), 0) << out;
  EXPECT_NE(out.find("layers kept float: none"), std::string::npos) << out;
  ASSERT_EQ(run(base + "--auto-hybrid=0.999999", &out), 0) << out;
  bool ok = false;
  Graph h = load(out_model(), &ok);
  ASSERT_TRUE(ok);
  EXPECT_NE(h.conversion_settings.find("layers kept float: conv"), std::string::npos) << h.conversion_settings;
  const Node* conv = nullptr;
  for (const Node& n : h.nodes)
    if (n.op == OpId::Conv) conv = &n;
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(h.tensor(conv->inputs[1]).dtype, DType::kF32);
  // The outputs meet the target on the samples, judged here against the fp32 conversion.
  ASSERT_EQ(run("-o " + (dir_ / "f.rknn").string() + " --outputs r --float-precision fp32 -q", &out), 0) << out;
  Graph f = load((dir_ / "f.rknn").string(), &ok);
  ASSERT_TRUE(ok);
  for (int i = 0; i < 3; ++i) {
    std::vector<float> x;
    ASSERT_OK(load_calibration_file((dir_ / "data" / ("s" + std::to_string(i) + ".npy")).string(), f, 0, &x));
    const std::vector<float> want = run_f32(f, {x}), got = run_f32(h, {x});
    ASSERT_EQ(got.size(), want.size());
    double dot = 0, ww = 0, gg = 0;
    for (size_t k = 0; k < want.size(); ++k) {
      dot += double(want[k]) * got[k];
      ww += double(want[k]) * want[k];
      gg += double(got[k]) * got[k];
    }
    EXPECT_GE(dot / std::sqrt(ww * gg), 0.999999) << "sample " << i;
  }
  EXPECT_EQ(run(base + "--auto-hybrid=2", &out), 1);
  EXPECT_NE(out.find("give a cosine in (0, 1]"), std::string::npos) << out;
  EXPECT_EQ(run("-o " + out_model() + " --auto-hybrid", &out), 1);
  EXPECT_NE(out.find("--auto-hybrid applies to models calibrated on a data set"), std::string::npos) << out;
}

// --export-qdq: the INT8 model as QDQ ONNX. Converting that file again (its parameters, no data set)
// gives the same INT8 model bit for bit; the weights are symmetric per output channel, the scale of
// each channel max |w| / 127 (computed here from the ONNX weights).
TEST_F(QuantCli, ExportQdqRoundTripsBitExactly) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  const std::string qdq = (dir_ / "q_qdq.onnx").string(), back = (dir_ / "back.rknn").string();
  std::string out;
  ASSERT_EQ(run("-o " + out_model() + " --quantize --dataset " + list() + " --export-qdq " + qdq + " -q", &out), 0) << out;
  onnx::ModelProto m;
  {
    std::ifstream f(qdq, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&f));
  }
  int q_nodes = 0;
  const onnx::NodeProto* weight_dq = nullptr;
  for (const auto& n : m.graph().node()) {
    q_nodes += n.op_type() == "QuantizeLinear";
    if (n.op_type() == "DequantizeLinear" && n.input(0) == "w/int8") weight_dq = &n;
  }
  EXPECT_GE(q_nodes, 3);  // the input, the Relu, the pooled and flattened activations, the logits
  ASSERT_NE(weight_dq, nullptr);
  const onnx::TensorProto* scales = nullptr;
  for (const auto& t : m.graph().initializer()) {
    EXPECT_NE(t.name(), "w");  // the float weight is gone
    if (t.name() == weight_dq->input(1)) scales = &t;
  }
  ASSERT_NE(scales, nullptr);
  ASSERT_EQ(scales->float_data_size(), 4);
  {  // the setup's weights, regenerated
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    for (int c = 0; c < 4; ++c) {
      float mx = 0;
      for (int k = 0; k < 27; ++k) mx = std::max(mx, std::fabs(u(rng)));
      EXPECT_EQ(scales->float_data(c), mx / 127.f) << "channel " << c;
    }
  }
  ASSERT_EQ(ToolTest::run(qdq + " -t rk3588 -o " + back + " -q", &out), 0) << out;
  expect_same_int8_outputs(out_model(), back);
  // Only INT8 conversions export.
  EXPECT_EQ(run("-o " + out_model() + " --export-qdq " + qdq, &out), 1);
  EXPECT_NE(out.find("--export-qdq writes an INT8 model"), std::string::npos) << out;
}

// Activations the converter computes apart from their convolution in INT8 (SiLU as Sigmoid and Mul)
// have int8 inputs that the ONNX graph names differently (the convolution's output). The export
// quantizes those values too, with their int8 weights, so that it is the INT8 model (bit for bit
// once converted back) and the vendor's toolkit, which crashes on a residual Add after such an
// activation left float, builds it. A LeakyRelu the int8 Conv applies itself has no int8 input:
// the export quantizes its output and the convolution's weights, and converting back fuses it again.
TEST_F(QuantCli, ExportQdqQuantizesSplitActivations) {
  if (!has_quantized_ref_kernel(OpId::Conv)) GTEST_SKIP() << "no int8 Conv kernel in this build";
  B b(13);
  b.input("img", {1, 3, 8, 8});
  b.init_f32("w1", {4, 3, 3, 3}, test::random_floats(108, 7, -0.4f, 0.4f));
  b.init_f32("w2", {4, 4, 3, 3}, test::random_floats(144, 8, -0.4f, 0.4f));
  auto* c1 = b.node("Conv", {"img", "w1"}, {"c1"}, "conv1");
  B::attr_ints(c1, "pads", {1, 1, 1, 1});
  b.node("Sigmoid", {"c1"}, {"s1"}, "sigmoid1");
  b.node("Mul", {"c1", "s1"}, {"a1"}, "silu1");
  auto* c2 = b.node("Conv", {"a1", "w2"}, {"c2"}, "conv2");
  B::attr_ints(c2, "pads", {1, 1, 1, 1});
  auto* lr = b.node("LeakyRelu", {"c2"}, {"a2"}, "leaky2");
  B::attr_f(lr, "alpha", 0.1f);
  b.node("Add", {"a1", "a2"}, {"y"}, "residual");
  b.output("y");
  std::ofstream(dir_ / "m.onnx", std::ios::binary) << b.bytes();
  const std::string qdq = (dir_ / "q_qdq.onnx").string(), back = (dir_ / "back.rknn").string();
  std::string out;
  ASSERT_EQ(run("-o " + out_model() + " --quantize --dataset " + list() + " --export-qdq " + qdq + " -q", &out), 0) << out;
  onnx::ModelProto m;
  {
    std::ifstream f(qdq, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&f));
  }
  std::set<std::string> quantized, weights;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "QuantizeLinear") quantized.insert(n.input(0));
    if (n.op_type() == "DequantizeLinear" && (n.input(0) == "w1/int8" || n.input(0) == "w2/int8")) weights.insert(n.input(0));
  }
  for (const char* v : {"img", "c1", "s1", "a1", "a2"}) EXPECT_TRUE(quantized.count(v)) << v;
  EXPECT_FALSE(quantized.count("c2"));  // LeakyRelu's input: inside the int8 Conv
  EXPECT_EQ(weights.size(), 2u);
  ASSERT_EQ(ToolTest::run(qdq + " -t rk3588 -o " + back + " -q", &out), 0) << out;
  expect_same_int8_outputs(out_model(), back);
}

TEST_F(QuantCli, Errors) {
  std::string out;
  EXPECT_EQ(run("-o " + out_model() + " --quantize", &out), 1);
  EXPECT_NE(out.find("rknn_convert: error: --quantize needs a calibration data set"), std::string::npos) << out;
  EXPECT_EQ(run("-o " + out_model() + " --quantize --dataset " + list() + " --float-layers conv,convv", &out), 1);
  EXPECT_NE(out.find("no node named 'convv'"), std::string::npos) << out;
  EXPECT_NE(out.find("'conv'"), std::string::npos) << out;
  EXPECT_EQ(run("-o " + out_model() + " --float-layers conv", &out), 1);
  EXPECT_NE(out.find("--float-layers applies to quantized conversions"), std::string::npos) << out;
  EXPECT_NE(run("-o " + out_model() + " --quantize --dataset " + list() + " --algorithm best", &out), 0);
  EXPECT_NE(run("-o " + out_model() + " --quantize --dataset " + list() + " --method tensor", &out), 0);
  EXPECT_EQ(run("-o " + out_model() + " --quantize --dataset " + (dir_ / "missing.txt").string(), &out), 1);
  EXPECT_NE(out.find("missing.txt"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(out_model()));
}

TEST_F(QuantCli, YamlVendorKeys) {
  std::ofstream(dir_ / "c.yml") << "models:\n  quantize: true\n  configs:\n"
                                   "    quantized_dtype: asymmetric_quantized-8\n"
                                   "    quantized_algorithm: kl_divergence\n    quantized_method: layer\n"
                                   "    dataset: data/list.txt\n    float_layers: [fc]\n";
  std::string out;
  ASSERT_EQ(run("-o " + out_model() + " --config " + (dir_ / "c.yml").string(), &out), 0) << out;
  EXPECT_NE(out.find("calibrated on 3 samples"), std::string::npos) << out;
  EXPECT_NE(out.find("--float-layers"), std::string::npos) << out;  // fc, from float_layers

  ConvertOptions o;
  ASSERT_OK(load_config_yaml((dir_ / "c.yml").string(), &o));
  EXPECT_TRUE(o.quant.enabled);
  EXPECT_EQ(o.quant.algorithm, "kl");
  EXPECT_EQ(o.quant.method, "layer");
  EXPECT_EQ(o.quant.dataset, (dir_ / "data" / "list.txt").string());  // relative to the config file
  EXPECT_EQ(o.quant.float_layers, (std::vector<std::string>{"fc"}));

  // quantized_dtype alone enables; "quantize: false" wins over it; other dtypes are refused
  std::ofstream(dir_ / "d.yml") << "quantized_dtype: asymmetric_quantized-8\n";
  ConvertOptions d;
  ASSERT_OK(load_config_yaml((dir_ / "d.yml").string(), &d));
  EXPECT_TRUE(d.quant.enabled);
  std::ofstream(dir_ / "e.yml") << "quantize: false\nquantized_dtype: asymmetric_quantized-8\n";
  ConvertOptions e;
  ASSERT_OK(load_config_yaml((dir_ / "e.yml").string(), &e));
  EXPECT_FALSE(e.quant.enabled);
  std::ofstream(dir_ / "f.yml") << "quantize: true\nquantized_dtype: asymmetric_quantized-16\n";
  ConvertOptions f;
  Status st = load_config_yaml((dir_ / "f.yml").string(), &f);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("only w8a8 (asymmetric_quantized-8"), std::string::npos) << st.message();
  std::ofstream(dir_ / "a.yml") << "auto_hybrid: true\n";  // the vendor's build(auto_hybrid=True) default 0.98
  ConvertOptions a;
  ASSERT_OK(load_config_yaml((dir_ / "a.yml").string(), &a));
  EXPECT_DOUBLE_EQ(a.quant.auto_hybrid_cos, 0.98);
  std::ofstream(dir_ / "a2.yml") << "auto_hybrid_cos_thresh: 0.995\nauto_hybrid: yes\n";
  ASSERT_OK(load_config_yaml((dir_ / "a2.yml").string(), &a));
  EXPECT_DOUBLE_EQ(a.quant.auto_hybrid_cos, 0.98);  // set before by the first file: it wins like the command line
  ConvertOptions a2;
  ASSERT_OK(load_config_yaml((dir_ / "a2.yml").string(), &a2));
  EXPECT_DOUBLE_EQ(a2.quant.auto_hybrid_cos, 0.995);
  std::ofstream(dir_ / "a3.yml") << "auto_hybrid_cos_thresh: 1.5\n";
  EXPECT_FALSE(load_config_yaml((dir_ / "a3.yml").string(), &a2).ok());
  std::ofstream(dir_ / "g.yml") << "quantized_dtype: w8a8\n";  // rknn-toolkit2's name
  ConvertOptions w;
  ASSERT_OK(load_config_yaml((dir_ / "g.yml").string(), &w));
  EXPECT_TRUE(w.quant.enabled);
  std::ofstream(dir_ / "h.yml") << "quantized_algorithm: best\n";
  EXPECT_FALSE(load_config_yaml((dir_ / "h.yml").string(), &f).ok());
  // Our calibration options (docs/convert.md), off unless the file turns them on.
  std::ofstream(dir_ / "k.yml") << "bias_correction: true\nkl_keep_tails: true\nadaptive_rounding: true\n"
                                   "clip_saturated: true\n";
  ConvertOptions k;
  EXPECT_FALSE(k.quant.bias_correction || k.quant.kl_keep_tails || k.quant.adaptive_rounding || k.quant.clip_saturated);
  ASSERT_OK(load_config_yaml((dir_ / "k.yml").string(), &k));
  EXPECT_TRUE(k.quant.bias_correction && k.quant.kl_keep_tails && k.quant.adaptive_rounding && k.quant.clip_saturated);

  // command line wins: --algorithm over the file, --dataset over the file's
  ASSERT_EQ(run("-o " + out_model() + " --config " + (dir_ / "c.yml").string() + " --algorithm normal --dataset " +
                    list(),
                &out),
            0)
      << out;
}

}  // namespace
}  // namespace orknn::test
