// rknn_convert --dynamic-shape and the YAML key dynamic_input: the written model holds the shape
// sets, each set's graph (rebuilt from the file) computes the naive expectation of
// tests/api/dynamic_shape_model.h, and the command line's error paths.
#include <fstream>
#include <string>
#include <vector>

#include "api/dynamic_shape_model.h"
#include "converter/cli_test_util.h"
#include "converter/converter_test_util.h"
#include "model/dynamic_shapes.h"

namespace orknn::test {
namespace {

const int64_t kSets[3][2] = {{4, 4}, {2, 6}, {6, 8}};

class DynamicShapeCli : public ToolTest {
 protected:
  void SetUp() override {
    if (!use_tool("rknn_convert", "dyncli")) GTEST_SKIP() << "rknn_convert not built";
    write(dir_ / "m.onnx", dyn_test::make_onnx());
  }
  static void write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream f(p, std::ios::binary);
    f << text;
  }
  std::string path(const char* name) const { return (dir_ / name).string(); }

  // Loads a written dynamic model and checks every set against the naive expectation.
  void check_model(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(bytes.empty());
    std::shared_ptr<uint8_t> buf(static_cast<uint8_t*>(::operator new[](bytes.size(), std::align_val_t(64))),
                                 [](uint8_t* q) { ::operator delete[](q, std::align_val_t(64)); });
    std::memcpy(buf.get(), bytes.data(), bytes.size());
    Graph g;
    DynamicShapes dyn;
    Status st = load_model(buf, buf.get(), bytes.size(), &g, &dyn);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(dyn.sets.size(), 3u);
    for (size_t s = 0; s < 3; ++s) {
      const int64_t h = kSets[s][0], w = kSets[s][1];
      EXPECT_EQ(dyn.sets[s].input_shapes, (std::vector<Shape>{{1, 2, h, w}}));
      Graph v;
      ASSERT_TRUE(make_shape_variant(g, dyn, s, &v).ok());
      const std::vector<float> x = dyn_test::make_input(h, w, static_cast<int>(s));
      EXPECT_EQ(run_f32(v, {x}), dyn_test::expected_output(x, h, w)) << "set " << s;
    }
  }
};

TEST_F(DynamicShapeCli, CommandLine) {
  std::string out;
  ASSERT_EQ(run(path("m.onnx") + " -o " + path("d.rknn") + " -t rk3588 --dynamic-shape 'x=1,2,4,4;1,2,2,6;1,2,6,8'",
                &out), 0) << out;
  EXPECT_NE(out.find("dynamic shapes: 3 sets"), std::string::npos) << out;
  check_model(dir_ / "d.rknn");
  // Without a name for a one-input model.
  ASSERT_EQ(run(path("m.onnx") + " -o " + path("e.rknn") + " -t rk3588 --dynamic-shape '1,2,4,4;1,2,2,6;1,2,6,8'",
                &out), 0) << out;
  check_model(dir_ / "e.rknn");
}

TEST_F(DynamicShapeCli, YamlDynamicInput) {
  write(dir_ / "c.yml",
        "models:\n"
        "  platform: onnx\n"
        "  subgraphs:\n"
        "    inputs: [x]\n"
        "  configs:\n"
        "    target_platform: rk3588\n"
        "    dynamic_input: [[[1,2,4,4]], [[1,2,2,6]], [\"1,2,6,8\"]]\n");
  std::string out;
  ASSERT_EQ(run(path("m.onnx") + " -o " + path("y.rknn") + " --config " + path("c.yml"), &out), 0) << out;
  check_model(dir_ / "y.rknn");
  // input_size_list naming set 0 (as vendor configs do) is accepted alongside.
  write(dir_ / "c2.yml",
        "target_platform: rk3588\n"
        "input_size_list: [[1,2,4,4]]\n"
        "dynamic_input: [[[1,2,4,4]], [[1,2,2,6]], [[1,2,6,8]]]\n");
  ASSERT_EQ(run(path("m.onnx") + " -o " + path("y2.rknn") + " --config " + path("c2.yml"), &out), 0) << out;
  check_model(dir_ / "y2.rknn");
}

TEST_F(DynamicShapeCli, Errors) {
  std::string out;
  // Two inputs listing different numbers of sets.
  {
    OnnxBuilder b(13);
    b.input("a", {1, 2, -1, -1});
    b.input("c", {1, 2, -1, -1});
    b.node("Add", {"a", "c"}, {"s"});
    b.output("s");
    write(dir_ / "two.onnx", b.bytes());
  }
  EXPECT_EQ(run(path("two.onnx") + " -o " + path("t.rknn") + " -t rk3588 --dynamic-shape 'a=1,2,4,4;1,2,2,6' "
                "--dynamic-shape c=1,2,4,4", &out), 1);
  EXPECT_NE(out.find("every input needs one shape per set"), std::string::npos) << out;
  // ... and the same counts convert.
  EXPECT_EQ(run(path("two.onnx") + " -o " + path("t.rknn") + " -t rk3588 --dynamic-shape 'a=1,2,4,4;1,2,2,6' "
                "--dynamic-shape 'c=1,2,4,4;1,2,2,6'", &out), 0) << out;
  // Without a name on a two-input model.
  EXPECT_EQ(run(path("two.onnx") + " -o " + path("t.rknn") + " -t rk3588 --dynamic-shape '1,2,4,4'", &out), 1);
  EXPECT_NE(out.find("2 inputs"), std::string::npos) << out;
  // Unknown input, bad dims, repeated option, repeated set.
  EXPECT_EQ(run(path("m.onnx") + " -o " + path("d.rknn") + " -t rk3588 --dynamic-shape 'nope=1,2,4,4'", &out), 1);
  EXPECT_NE(out.find("not an input"), std::string::npos) << out;
  EXPECT_EQ(run(path("m.onnx") + " -o " + path("d.rknn") + " -t rk3588 --dynamic-shape 'x=1,2,4,4;1,2,x,6'", &out), 1);
  EXPECT_NE(out.find("--dynamic-shape"), std::string::npos) << out;
  EXPECT_EQ(run(path("m.onnx") + " -o " + path("d.rknn") + " -t rk3588 --dynamic-shape 'x=1,2,4,4' "
                "--dynamic-shape 'x=1,2,2,6'", &out), 1);
  EXPECT_NE(out.find("given twice"), std::string::npos) << out;
  EXPECT_EQ(run(path("m.onnx") + " -o " + path("d.rknn") + " -t rk3588 --dynamic-shape 'x=1,2,4,4;1,2,4,4'", &out), 1);
  EXPECT_NE(out.find("repeats shape set 0"), std::string::npos) << out;
  // A fixed shape contradicting the dynamic ones.
  EXPECT_EQ(run(path("m.onnx") + " -o " + path("d.rknn") + " -t rk3588 --input-shape x=1,2,8,8 "
                "--dynamic-shape 'x=1,2,4,4;1,2,2,6'", &out), 1);
  EXPECT_NE(out.find("give only one"), std::string::npos) << out;
  // Sets whose graphs differ in structure.
  write(dir_ / "v.onnx", dyn_test::make_onnx(/*structure_varies=*/true));
  EXPECT_EQ(run(path("v.onnx") + " -o " + path("d.rknn") + " -t rk3588 --dynamic-shape 'x=1,2,4,4;1,2,2,6'", &out), 1);
  EXPECT_NE(out.find("differs in structure"), std::string::npos) << out;
  // YAML: sets with different input counts.
  write(dir_ / "bad.yml", "target_platform: rk3588\ndynamic_input: [[[1,2,4,4]], [[1,2,2,6], [1,2,2,6]]]\n");
  EXPECT_EQ(run(path("m.onnx") + " -o " + path("d.rknn") + " --config " + path("bad.yml"), &out), 1);
  EXPECT_NE(out.find("dynamic_input[1]"), std::string::npos) << out;
  write(dir_ / "bad2.yml", "target_platform: rk3588\ndynamic_input: [1, 2]\n");
  EXPECT_EQ(run(path("m.onnx") + " -o " + path("d.rknn") + " --config " + path("bad2.yml"), &out), 1);
  EXPECT_NE(out.find("dynamic_input"), std::string::npos) << out;
}

}  // namespace
}  // namespace orknn::test
