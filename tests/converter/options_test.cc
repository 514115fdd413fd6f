// I/O options: mean/std validation, platform and custom string, the vendor YAML config.
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "converter/converter_test_util.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;
namespace fs = std::filesystem;

B image_model() {
  B b(13);
  b.input("img", {1, 3, 4, 4});
  b.input("ids", {1, 2}, onnx::TensorProto::INT64);
  b.node("Relu", {"img"}, {"y"});
  b.node("Identity", {"ids"}, {"z"});
  b.output("y");
  b.output("z");
  return b;
}

TEST(MeanStd, StoredPerInputAndValidated) {
  B b = image_model();
  Graph g;
  ConvertOptions o = exact_options();
  o.mean_values[""] = {123.675f, 116.28f, 103.53f};
  o.std_values["img"] = {58.395f, 57.12f, 57.375f};
  ASSERT_OK(convert(b, &g, o));
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.inputs[0].mean, (std::vector<float>{123.675f, 116.28f, 103.53f}));
  EXPECT_EQ(g.inputs[0].std, (std::vector<float>{58.395f, 57.12f, 57.375f}));
  EXPECT_TRUE(g.inputs[1].mean.empty());  // "" skips the int64 input
  EXPECT_TRUE(g.inputs[1].std.empty());

  // one value for all channels; the missing counterpart becomes the identity
  ConvertOptions o1 = exact_options();
  o1.std_values["img"] = {255.f};
  ASSERT_OK(convert(b, &g, o1));
  EXPECT_EQ(g.inputs[0].mean, (std::vector<float>{0.f}));
  EXPECT_EQ(g.inputs[0].std, (std::vector<float>{255.f}));
}

TEST(MeanStd, WrongLengthUnknownInputAndNonFloatAreErrors) {
  B b = image_model();
  Graph g;
  ConvertOptions o = exact_options();
  o.mean_values["img"] = {1.f, 2.f};
  Status st = convert(b, &g, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("mean_values for input 'img' has 2 values, but the input has 3 channels"),
            std::string::npos) << st.message();

  ConvertOptions o2 = exact_options();
  o2.std_values["image"] = {1.f};
  st = convert(b, &g, o2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("std_values names 'image', which is not an input of the model (inputs: 'img', 'ids')"),
            std::string::npos) << st.message();

  ConvertOptions o3 = exact_options();
  o3.mean_values["ids"] = {1.f};
  st = convert(b, &g, o3);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'ids'"), std::string::npos) << st.message();

  ConvertOptions o4 = exact_options();
  o4.std_values["img"] = {1.f, 0.f, 1.f};
  EXPECT_FALSE(convert(b, &g, o4).ok());

  // "#1" is the second input: the int64 one
  ConvertOptions o5 = exact_options();
  o5.mean_values["#0"] = {1.f, 2.f, 3.f};
  ASSERT_OK(convert(b, &g, o5));
  EXPECT_EQ(g.inputs[0].mean, (std::vector<float>{1.f, 2.f, 3.f}));
  ConvertOptions o6 = exact_options();
  o6.mean_values["#2"] = {1.f};
  EXPECT_FALSE(convert(b, &g, o6).ok());
}

TEST(Platform, ValidatedAndStored) {
  B b = image_model();
  Graph g;
  for (const char* p : {"rk3588", "rk3576", "rk3566", "rk3568", "rk3562", "rv1106", "rv1103", "rv1106b", "rv1103b",
                        "rk2118", "rv1126b", "RK3588"}) {
    ConvertOptions o = exact_options();
    o.platform = p;
    o.custom_string = "hello";
    ASSERT_OK(convert(b, &g, o));
    std::string lower = p;
    for (auto& c : lower) c = static_cast<char>(std::tolower(c));
    EXPECT_EQ(g.platform, lower);
    EXPECT_EQ(g.custom_string, "hello");
  }
  ConvertOptions o = exact_options();
  o.platform = "rk1808";
  Status st = convert(b, &g, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown target platform 'rk1808'"), std::string::npos) << st.message();
  ConvertOptions o2 = exact_options();
  o2.custom_string.assign(1024, 'x');
  EXPECT_FALSE(convert(b, &g, o2).ok());
}

TEST(ParseLists, DimsAndFloats) {
  Shape s;
  ASSERT_OK(parse_dims("1,3, 224,224", &s));
  EXPECT_EQ(s, (Shape{1, 3, 224, 224}));
  EXPECT_FALSE(parse_dims("1,0", &s).ok());
  EXPECT_FALSE(parse_dims("1,,2", &s).ok());
  EXPECT_FALSE(parse_dims("1,x", &s).ok());
  std::vector<float> f;
  ASSERT_OK(parse_floats("0.5,-1,2e1", &f));
  EXPECT_EQ(f, (std::vector<float>{0.5f, -1.f, 20.f}));
  EXPECT_FALSE(parse_floats("1,nan", &f).ok());
}

class YamlConfig : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    path_ = fs::temp_directory_path() / ("orknn_cfg_" + std::to_string(::getpid()) + ".yml");
    std::ofstream(path_) << text;
    return path_.string();
  }
  void TearDown() override { fs::remove(path_); }
  fs::path path_;
};

TEST_F(YamlConfig, VendorLayoutListsOfListsPerInput) {
  ConvertOptions o;
  ASSERT_OK(load_config_yaml(write(R"(
models:
  name: demo
  platform: onnx
  model_file_path: ./demo.onnx
  subgraphs:
    input_size_list:
      - 1,3,224,224
  quantize: false
  configs:
    quantized_dtype: asymmetric_quantized-8
    mean_values: [[123.675, 116.28, 103.53], [0]]
    std_values: [[58.395, 57.12, 57.375], [1]]
    quant_img_RGB2BGR: false
    target_platform: rk3566
    custom_string: "made by test"
    float_dtype: float16
)"), &o));
  EXPECT_EQ(o.platform, "rk3566");
  EXPECT_EQ(o.custom_string, "made by test");
  EXPECT_EQ(o.mean_values.at("#0"), (std::vector<float>{123.675f, 116.28f, 103.53f}));
  EXPECT_EQ(o.mean_values.at("#1"), (std::vector<float>{0.f}));
  EXPECT_EQ(o.std_values.at("#0"), (std::vector<float>{58.395f, 57.12f, 57.375f}));
  EXPECT_EQ(o.input_shapes.at("#0"), (Shape{1, 3, 224, 224}));
  EXPECT_EQ(o.precision, FloatPrecision::kFp16);
}

TEST_F(YamlConfig, CustomOpTypesAndLibraries) {
  ConvertOptions o;
  ASSERT_OK(load_config_yaml(write(R"(
custom_ops: [cstSigmoid, cstScale]
custom_op_libs: "plugins/librkcst_sigmoid.so, /abs/librkcst_scale.so"
)"), &o));
  EXPECT_EQ(o.custom_op_types, (std::vector<std::string>{"cstSigmoid", "cstScale"}));
  // Relative to the config file, like dataset.
  EXPECT_EQ(o.quant.custom_op_libs,
            (std::vector<std::string>{(path_.parent_path() / "plugins/librkcst_sigmoid.so").string(),
                                      "/abs/librkcst_scale.so"}));
  ConvertOptions cli;
  cli.custom_op_types = {"cstOther"};  // as if given with --custom-op: wins
  ASSERT_OK(load_config_yaml(write("custom_ops: cstSigmoid\n"), &cli));
  EXPECT_EQ(cli.custom_op_types, (std::vector<std::string>{"cstOther"}));
}

TEST_F(YamlConfig, FlatKeysNamedInputsAndCommandLineWins) {
  ConvertOptions o;
  o.mean_values["img"] = {1.f};  // as if given with --mean
  o.custom_string = "cli";
  ASSERT_OK(load_config_yaml(write(R"(
target_platform: [rv1106]
inputs: [img, ids]
input_size_list: [[1, 3, 4, 4], "1,2"]
mean_values: [[9, 9, 9], [0]]
std_values: [2, 2, 2]
custom_string: from yaml
float_dtype: float32
)"), &o));
  EXPECT_EQ(o.platform, "rv1106");
  EXPECT_EQ(o.custom_string, "cli");
  EXPECT_EQ(o.mean_values.size(), 1u);
  EXPECT_EQ(o.mean_values.at("img"), (std::vector<float>{1.f}));
  EXPECT_EQ(o.std_values.at(""), (std::vector<float>{2.f, 2.f, 2.f}));
  EXPECT_EQ(o.input_shapes.at("img"), (Shape{1, 3, 4, 4}));
  EXPECT_EQ(o.input_shapes.at("ids"), (Shape{1, 2}));
  EXPECT_EQ(o.precision, FloatPrecision::kFp32);

  // the loaded options drive a conversion
  B b = image_model();
  Graph g;
  ASSERT_OK(convert(b, &g, o));
  EXPECT_EQ(g.platform, "rv1106");
  EXPECT_EQ(g.inputs[0].std, (std::vector<float>{2.f, 2.f, 2.f}));
}

TEST_F(YamlConfig, BadFilesAreErrors) {
  ConvertOptions o;
  EXPECT_FALSE(load_config_yaml("/nonexistent/cfg.yml", &o).ok());
  EXPECT_FALSE(load_config_yaml(write("mean_values: [[1, 2], [3\n"), &o).ok());
  Status st = load_config_yaml(write("mean_values: [a, b]\n"), &o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("mean_values"), std::string::npos) << st.message();
  st = load_config_yaml(write("models:\n  platform: tflite\n"), &o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ONNX models only"), std::string::npos) << st.message();
  EXPECT_FALSE(load_config_yaml(write("float_dtype: bfloat16\n"), &o).ok());
}

}  // namespace
}  // namespace orknn::test
