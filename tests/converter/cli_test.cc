// The rknn_convert command line (when built next to this test): the issue's interface, the
// config file, errors. The model it writes is loaded back to check what was stored.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "converter/cli_test_util.h"
#include "converter/converter_test_util.h"

namespace orknn::test {
namespace {

namespace fs = std::filesystem;
using B = OnnxBuilder;

class Cli : public ToolTest {
 protected:
  void SetUp() override {
    if (!use_tool("rknn_convert", "cli")) GTEST_SKIP() << "rknn_convert not built";
    B b(13);
    b.input("images", {-1, 3, 8, 8});
    b.input("scale", {1});
    b.node("Mul", {"images", "scale"}, {"y"});
    b.output("y");
    std::ofstream(dir_ / "m.onnx", std::ios::binary) << b.bytes();
  }
};

TEST_F(Cli, IssueInterface) {
  std::string m = (dir_ / "m.onnx").string(), o = (dir_ / "m.rknn").string(), out;
  ASSERT_EQ(run(m + " -o " + o + " -t rk3562 --input-shape images=1,3,8,8 --mean images=1,2,3 --std 4 "
                "--custom-string 'made by cli test' --float-precision fp32", &out), 0) << out;
  EXPECT_NE(out.find("images"), std::string::npos) << out;
  Graph g = load(o);
  EXPECT_EQ(g.platform, "rk3562");
  EXPECT_EQ(g.custom_string, "made by cli test");
  EXPECT_EQ(g.precision, FloatPrecision::kFp32);
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.tensor(g.inputs[0].tensor).shape, (Shape{1, 3, 8, 8}));
  EXPECT_EQ(g.inputs[0].mean, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(g.inputs[0].std, (std::vector<float>{4}));
  EXPECT_EQ(g.inputs[1].mean, (std::vector<float>{0}));  // the unnamed --std applies to every float input
  EXPECT_EQ(g.inputs[1].std, (std::vector<float>{4}));
}

TEST_F(Cli, ConfigFileAndCommandLinePrecedence) {
  std::ofstream(dir_ / "c.yml") << "models:\n  platform: onnx\n  subgraphs:\n    input_size_list: ['1,3,8,8', '1']\n"
                                   "  configs:\n    mean_values: [[10, 20, 30], [0]]\n    std_values: [[2, 2, 2], [1]]\n"
                                   "    target_platform: rk3568\n    custom_string: from yaml\n";
  std::string m = (dir_ / "m.onnx").string(), o = (dir_ / "c.rknn").string(), out;
  ASSERT_EQ(run(m + " -o " + o + " --config " + (dir_ / "c.yml").string() + " -t rv1106 -q", &out), 0) << out;
  EXPECT_TRUE(out.empty()) << out;
  Graph g = load(o);
  EXPECT_EQ(g.platform, "rv1106");  // -t wins
  EXPECT_EQ(g.custom_string, "from yaml");
  EXPECT_EQ(g.inputs[0].mean, (std::vector<float>{10, 20, 30}));
  EXPECT_EQ(g.inputs[1].std, (std::vector<float>{1}));
}

// The vendor's way to make a custom operator: a node renamed "cst..." in the default domain.
TEST_F(Cli, DefaultDomainCustomOpNeedsCustomOpOption) {
  B b(13);
  b.input("x", {1, 4});
  b.node("cstSigmoid", {"x"}, {"s"}, "sig_node");
  b.node("Relu", {"s"}, {"y"}, "relu");
  b.output("y");
  std::ofstream(dir_ / "cst.onnx", std::ios::binary) << b.bytes();
  const std::string m = (dir_ / "cst.onnx").string(), o = (dir_ / "cst.rknn").string();
  std::string out;
  ASSERT_EQ(run(m + " -o " + o + " -t rk3588", &out), 1) << out;
  EXPECT_NE(out.find("'sig_node'"), std::string::npos) << out;
  EXPECT_NE(out.find("--custom-op cstSigmoid"), std::string::npos) << out;  // the remedy

  auto expect_custom = [&](const std::string& args) {
    std::string log;
    ASSERT_EQ(run(m + " -o " + o + " -t rk3588 -q " + args, &log), 0) << log;
    Graph g = load(o);
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].op, OpId::Custom);
    EXPECT_EQ(g.nodes[0].attrs.get_string("custom_type", ""), "cstSigmoid");
    EXPECT_EQ(g.nodes[0].attrs.get_string("custom_domain", "?"), "");
    EXPECT_EQ(g.tensor(g.nodes[0].outputs[0]).shape, (Shape{1, 4}));
  };
  expect_custom("--custom-op cstSigmoid");
  expect_custom("--custom-op cstOther,cstSigmoid");
  std::ofstream(dir_ / "cst.yml") << "custom_ops: [cstSigmoid]\n";
  expect_custom("--config " + (dir_ / "cst.yml").string());
}

TEST_F(Cli, SubgraphCutInputsOutputs) {
  // y = images * scale; cut at y with "images" as the only input: "scale" is then missing
  std::string m = (dir_ / "m.onnx").string(), o = (dir_ / "s.rknn").string(), out;
  EXPECT_EQ(run(m + " -o " + o + " -t rk3588 --input-shape images=1,3,8,8 --inputs images --outputs y", &out), 1);
  EXPECT_NE(out.find("need the model input 'scale'"), std::string::npos) << out;
  ASSERT_EQ(run(m + " -o " + o + " -t rk3588 --input-shape images=1,3,8,8 --inputs scale,images --outputs y -q",
                &out), 0) << out;
  Graph g = load(o);
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.tensor(g.inputs[0].tensor).name, "scale");  // in the order given
  EXPECT_EQ(g.tensor(g.inputs[1].tensor).name, "images");
}

TEST_F(Cli, ErrorsExitNonZeroWithOneLine) {
  std::string m = (dir_ / "m.onnx").string(), o = (dir_ / "e.rknn").string(), out;
  EXPECT_EQ(run(m + " -o " + o + " -t rk3588", &out), 1);
  EXPECT_NE(out.find("rknn_convert: error: input 'images' has dynamic dim 0 (batch); pin it with --input-shape "
                     "images=1,3,8,8"), std::string::npos) << out;
  EXPECT_EQ(run(m + " -o " + o + " --input-shape images=1,3,8,8", &out), 1);
  EXPECT_NE(out.find("no target platform"), std::string::npos) << out;
  EXPECT_EQ(run(m + " -o " + o + " -t rk3588 --input-shape images=1,3,8,8 --mean images=1,2", &out), 1);
  EXPECT_NE(out.find("has 2 values, but the input has 3 channels"), std::string::npos) << out;
  EXPECT_NE(run(m + " -o " + o + " -t rk3588 --float-precision fp8", &out), 0);
  EXPECT_FALSE(fs::exists(o));
}

}  // namespace
}  // namespace orknn::test
