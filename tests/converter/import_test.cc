// ONNX import: constants (initializers, Constant nodes, external data), folding of shape
// arithmetic, graph I/O handling, ordering, and the errors users see.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "common/fp16.h"
#include "converter/converter_test_util.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;
namespace fs = std::filesystem;

// PyTorch's x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
TEST(Import, ShapeArithmeticFoldsAway) {
  B b(13);
  b.input("x", {2, 3, 4});
  b.init_i64("zero", {}, {0});
  b.init_i64("ax0", {1}, {0});
  b.init_i64("minus1", {1}, {-1});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "zero"}, {"batch"});
  b.node("Unsqueeze", {"batch", "ax0"}, {"batch1"});
  B::attr_i(b.node("Concat", {"batch1", "minus1"}, {"newshape"}), "axis", 0);
  b.node("Reshape", {"x", "newshape"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpId::Reshape);
  EXPECT_EQ(g.nodes[0].attrs.get_ints("shape"), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(output_tensor(g).shape, (Shape{2, 12}));
  // the folded constants are gone from the graph
  for (const auto& t : g.tensors) EXPECT_FALSE(t.is_const()) << t.name;
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  EXPECT_EQ(run_f32(g, {x}), x);
}

// Generators fed by shapes fold too: ConstantOfShape(Shape(x)) and Range(0, x.shape[1]).
TEST(Import, GeneratorChainsFold) {
  B b(13);
  b.input("x", {2, 3});
  b.init_i64("one", {}, {1});
  b.init_i64("zero", {}, {0});
  b.init_i64("step", {}, {1});
  b.node("Shape", {"x"}, {"s"});
  auto* cos = b.node("ConstantOfShape", {"s"}, {"twos"});
  B::fill(B::attr_t(cos, "value"), {1}, std::vector<float>{2.f});
  b.node("Gather", {"s", "one"}, {"n"});
  b.node("Range", {"zero", "n", "step"}, {"r"});
  B::attr_i(b.node("Cast", {"r"}, {"rf"}), "to", onnx::TensorProto::FLOAT);
  b.node("Mul", {"x", "twos"}, {"m"});
  b.node("Add", {"m", "rf"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  EXPECT_EQ(count_op(g, OpId::ConstantOfShape), 0);
  EXPECT_EQ(count_op(g, OpId::Range), 0);
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(run_f32(g, {{1, 2, 3, 4, 5, 6}}), (std::vector<float>{2, 5, 8, 8, 11, 14}));
}

// Swin-style window padding and attention mask: an op without an IR kernel (Mod) computed at
// conversion from the fixed shapes (converter/onnx/const_eval.h; the ONNX backend cases of every
// such op are checked in tests/conformance/const_eval_test.cc), and ScatterND on constants folded by
// its reference kernel.
TEST(Import, ConstantOnlyOpsFoldFromShapes) {
  B b(13);
  b.input("x", {1, 6});
  b.init_i64("one", {}, {1});
  b.init_i64("four", {}, {4});
  b.init_i64("ax0", {1}, {0});
  b.init_i64("zeros3", {3}, {0, 0, 0});
  b.init_f32("mask0", {8}, std::vector<float>(8, 0.f));
  b.init_i64("masked", {2, 1}, {6, -1});  // -1: the last position, as numpy indexes
  b.init_f32("minus", {2}, {-100.f, -100.f});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "one"}, {"n"});
  b.node("Mod", {"n", "four"}, {"rem"});      // 6 % 4 = 2
  b.node("Sub", {"four", "rem"}, {"short"});  // 2
  b.node("Mod", {"short", "four"}, {"pad"});  // (4 - 6 % 4) % 4 = 2
  b.node("Unsqueeze", {"pad", "ax0"}, {"pad1"});
  B::attr_i(b.node("Concat", {"zeros3", "pad1"}, {"pads"}), "axis", 0);
  b.node("Pad", {"x", "pads"}, {"padded"});
  b.node("ScatterND", {"mask0", "masked", "minus"}, {"mask"});
  b.node("Add", {"padded", "mask"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  EXPECT_EQ(g.nodes.size(), 2u);  // Pad and Add; everything else was computed
  EXPECT_EQ(output_tensor(g).shape, (Shape{1, 8}));
  EXPECT_EQ(run_f32(g, {{1, 2, 3, 4, 5, 6}}), (std::vector<float>{1, 2, 3, 4, 5, 6, -100, -100}));
}

// transformers' SamPositionalEmbedding: coords[..., 0] = coords[..., 0] / W exports as a ScatterND
// of run-time data and updates at indices computed from the shapes (constants once they are fixed).
TEST(Import, ScatterNDOnRunTimeData) {
  B b(16);
  b.input("x", {2, 3});
  b.input("u", {2});
  b.init_i64("idx", {2, 2}, {1, 0, 0, -1});  // x[1][0] and x[0][2]
  b.init_f32("half", {}, {0.5f});
  b.node("Mul", {"u", "half"}, {"uh"});
  B::attr_s(b.node("ScatterND", {"x", "idx", "uh"}, {"s"}, "scatter"), "reduction", "add");
  b.node("ScatterND", {"s", "idx", "u"}, {"y"});  // opset 11 form: no reduction attribute
  b.output("s");
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  ASSERT_EQ(count_op(g, OpId::ScatterND), 2);
  for (const Node& n : g.nodes)
    if (n.op == OpId::ScatterND) EXPECT_EQ(n.attrs.get_string("reduction", ""), n.name == "scatter" ? "add" : "none");
  EXPECT_EQ(output_tensor(g).shape, (Shape{2, 3}));
  // s: x[1][0] = 4 + 5, x[0][2] = 3 + 10; y: those two replaced by 10 and 20.
  EXPECT_EQ(run_f32(g, {{1, 2, 3, 4, 5, 6}, {10, 20}}, 0), (std::vector<float>{1, 2, 13, 9, 5, 6}));
  EXPECT_EQ(run_f32(g, {{1, 2, 3, 4, 5, 6}, {10, 20}}, 1), (std::vector<float>{1, 2, 20, 10, 5, 6}));
}

TEST(Import, ConstantNodesHoldWeights) {
  B b(13);
  b.input("x", {1, 1, 2, 2});
  auto* w = b.node("Constant", {}, {"W"});
  B::fill(B::attr_t(w, "value"), {1, 1, 1, 1}, std::vector<float>{2.f});
  auto* bias = b.node("Constant", {}, {"bias"});
  B::attr_floats(bias, "value_floats", {0.5f});
  auto* k = b.node("Constant", {}, {"k"});
  B::attr_f(k, "value_float", 10.f);
  b.node("Conv", {"x", "W", "bias"}, {"c"});
  b.node("Add", {"c", "k"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  EXPECT_EQ(run_f32(g, {{1, 2, 3, 4}}), (std::vector<float>{12.5f, 14.5f, 16.5f, 18.5f}));
}

TEST(Import, TypedFieldsAndFloat16Initializers) {
  B b(13);
  b.input("x", {3});
  auto* t = b.graph().add_initializer();
  t->set_name("h");
  t->set_data_type(onnx::TensorProto::FLOAT16);
  t->add_dims(3);
  for (float v : {1.5f, -2.f, 0.25f}) t->add_int32_data(fp32_to_fp16(v));  // fp16 bit patterns
  auto* d = b.graph().add_initializer();
  d->set_name("d");
  d->set_data_type(onnx::TensorProto::DOUBLE);
  d->add_dims(3);
  for (double v : {1.0, 2.0, 3.0}) d->add_double_data(v);
  b.node("Mul", {"x", "h"}, {"m"});
  b.node("Add", {"m", "d"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  EXPECT_EQ(run_f32(g, {{2, 2, 2}}), (std::vector<float>{4.f, -2.f, 3.5f}));
}

TEST(Import, ConstantGraphOutputsKeepTheirData) {
  B b(13);
  b.input("x", {2, 5});
  b.node("Shape", {"x"}, {"s"});
  b.node("Relu", {"x"}, {"r"});
  b.output("s");
  b.output("r");
  Graph g;
  ASSERT_OK(convert(b, &g));
  const Tensor& s = output_tensor(g, 0);
  ASSERT_TRUE(s.is_const());
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.dtype, DType::kI64);
  EXPECT_EQ(s.const_ptr<int64_t>()[0], 2);
  EXPECT_EQ(s.const_ptr<int64_t>()[1], 5);
  EXPECT_EQ(output_tensor(g, 1).name, "r");
}

TEST(Import, InitializerListedAsInputIsNotAModelInput) {
  B b(9, 3);  // IR 3 models list initializers among the graph inputs
  b.input("x", {2});
  b.input("w", {2});
  b.init_f32("w", {2}, {3, 4});
  b.node("Mul", {"x", "w"}, {"y"});
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.tensor(g.inputs[0].tensor).name, "x");
  EXPECT_EQ(run_f32(g, {{1, 2}}), (std::vector<float>{3, 8}));
}

TEST(Import, NodesOutOfOrderAreSorted) {
  B b(13);
  b.input("x", {2});
  b.node("Neg", {"a"}, {"y"});
  b.node("Abs", {"x"}, {"a"});
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  EXPECT_EQ(run_f32(g, {{-1, 2}}), (std::vector<float>{-1, -2}));
}

TEST(Import, IdentityFromInputToOutputKeepsNames) {
  B b(13);
  b.input("x", {2});
  b.node("Identity", {"x"}, {"y"});
  b.output("y");
  Graph g;
  ConvertOptions o = exact_options();
  ASSERT_OK(convert(b, &g, o));
  EXPECT_EQ(g.tensor(g.inputs[0].tensor).name, "x");
  EXPECT_EQ(output_tensor(g).name, "y");
  EXPECT_EQ(run_f32(g, {{5, 6}}), (std::vector<float>{5, 6}));
}

TEST(Import, InputShapePinsDynamicDims) {
  B b(13);
  b.input("x", {-1, 3, -1, -1});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  Graph g;
  ConvertOptions o = exact_options();
  o.input_shapes["x"] = {1, 3, 8, 6};
  ASSERT_OK(convert(b, &g, o));
  EXPECT_EQ(output_tensor(g).shape, (Shape{1, 3, 8, 6}));
  // "" pins the only input
  ConvertOptions o2 = exact_options();
  o2.input_shapes[""] = {2, 3, 4, 4};
  ASSERT_OK(convert(b, &g, o2));
  EXPECT_EQ(output_tensor(g).shape, (Shape{2, 3, 4, 4}));
}

TEST(ImportErrors, UnpinnedDynamicDimNamesTheInputAndTheFix) {
  B b(13);
  b.input("x", {-1, 3, 224, 224});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  Graph g;
  Status st = convert(b, &g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'x' has dynamic dim 0 (batch); pin it with --input-shape x=1,3,224,224"),
            std::string::npos) << st.message();

  B b2(13);
  b2.input("img", {1, 3, -1, -1}, onnx::TensorProto::FLOAT, {"", "", "height", "width"});
  b2.node("Relu", {"img"}, {"y"});
  b2.output("y");
  st = convert(b2, &g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'img' has dynamic dims 2 ('height'), 3 ('width')"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("--input-shape img=1,3,N,N"), std::string::npos) << st.message();
}

TEST(ImportErrors, PinForUnknownInputOrWrongRank) {
  B b(13);
  b.input("x", {-1, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  Graph g;
  ConvertOptions o = exact_options();
  o.input_shapes["images"] = {1, 3};
  Status st = convert(b, &g, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'images', which is not an input of the model (inputs: 'x')"), std::string::npos)
      << st.message();
  ConvertOptions o2 = exact_options();
  o2.input_shapes["x"] = {1, 3, 1};
  st = convert(b, &g, o2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("has 3 dims, the model's input has 2"), std::string::npos) << st.message();
}

TEST(ImportErrors, UnknownOpNamesNodeAndDocs) {
  B b(13);
  b.input("boxes", {1, 4, 4});
  b.input("scores", {1, 1, 4});
  b.node("NonMaxSuppression", {"boxes", "scores"}, {"sel"}, "nms");
  b.output("sel");
  Graph g;
  Status st = convert(b, &g);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(st.message(), "node 'nms' (NonMaxSuppression): op not supported by OpenRKNN yet; see docs/ops.md");
}

// An op computed only at conversion refuses an input known only at run time, naming it; a
// constant index out of range (ScatterND's too) is an invalid model, not a crash.
TEST(ImportErrors, ConstantOnlyOpsNameTheRunTimeInputAndBadIndices) {
  {
    B b(13);
    b.input("x", {2, 3});
    b.init_f32("d", {}, {4.f});
    B::attr_i(b.node("Mod", {"x", "d"}, {"y"}, "wrap"), "fmod", 1);
    b.output("y");
    Graph g;
    Status st = convert(b, &g);
    EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
    EXPECT_NE(st.message().find("node 'wrap' (Mod): OpenRKNN computes Mod at conversion only"), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("input 0 ('x') is computed at run time"), std::string::npos) << st.message();
  }
  {
    B b(13);
    b.input("x", {4});
    b.init_f32("data", {4}, {0, 0, 0, 0});
    b.init_i64("idx", {1, 1}, {4});
    b.init_f32("upd", {1}, {1.f});
    b.node("ScatterND", {"data", "idx", "upd"}, {"m"}, "scatter");
    b.node("Add", {"x", "m"}, {"y"});
    b.output("y");
    Graph g;
    Status st = convert(b, &g);
    EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
    EXPECT_EQ(st.message(), "ScatterND node 'scatter': index 4 is out of range [-4, 4) for dim 0 of data [4]");
  }
  {
    B b(13);
    b.input("x", {4, 3});
    b.input("u", {2, 4});
    b.init_i64("idx", {2, 1}, {0, 1});
    b.node("ScatterND", {"x", "idx", "u"}, {"y"}, "scatter");
    b.output("y");
    Graph g;
    Status st = convert(b, &g);
    EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
    EXPECT_EQ(st.message(), "ScatterND node 'scatter': updates ('u') have shape [2,4]; indices [2,1] and data [4,3] "
                            "need [2,3]");
  }
}

TEST(ImportErrors, ForeignDomainAndOpsetRange) {
  {
    B b(13);
    b.input("x", {2});
    b.node("FusedGemm", {"x"}, {"y"}, "fg")->set_domain("com.microsoft");
    b.output("y");
    Graph g;
    Status st = convert(b, &g);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("node 'fg' (FusedGemm): op domain 'com.microsoft' is not supported"), std::string::npos)
        << st.message();
  }
  for (int opset : {0, 22}) {
    B b(opset);
    b.input("x", {2});
    b.node("Relu", {"x"}, {"y"});
    b.output("y");
    Graph g;
    Status st = convert(b, &g);
    ASSERT_FALSE(st.ok()) << opset;
    EXPECT_NE(st.message().find("opset " + std::to_string(opset) + " is not supported (opsets 1 to 21 are)"),
              std::string::npos) << st.message();
  }
}

// Opsets 1-6 (converter/onnx/ops/legacy.cc): a binary op's broadcast=1 lines B up with A from
// `axis` (here the channel axis, where numpy would align B with the last dim), Concat's axis
// defaults to 1, Cast names its type. Without broadcast=1 the shapes must be equal.
TEST(Import, LegacyOpsetForms) {
  B b(3);  // Concat without axis is valid only before opset 4
  b.input("x", {1, 2, 2});
  b.init_f32("bias", {2}, {10.f, 20.f});
  auto* add = b.node("Add", {"x", "bias"}, {"a"});
  B::attr_i(add, "broadcast", 1);
  B::attr_i(add, "axis", 1);
  b.node("Concat", {"a", "x"}, {"c"});
  B::attr_s(b.node("Cast", {"c"}, {"y"}), "to", "FLOAT");
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  EXPECT_EQ(output_tensor(g).shape, (Shape{1, 4, 2}));
  EXPECT_EQ(run_f32(g, {{1, 2, 3, 4}}), (std::vector<float>{11, 12, 23, 24, 1, 2, 3, 4}));

  B e(6);
  e.input("x", {2, 3});
  e.init_f32("k", {3}, {1.f, 2.f, 3.f});
  e.node("Mul", {"x", "k"}, {"y"}, "mul");
  e.output("y");
  Status st = convert(e, &g);
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_EQ(st.message(), "node 'mul' (Mul): inputs [2,3] and [3] differ in shape without broadcast=1 (opset 6)");
}

TEST(ImportErrors, InferErrorsNameTheNode) {
  B b(13);
  b.input("x", {2, 3});
  b.input("w", {4, 5});
  b.node("MatMul", {"x", "w"}, {"y"}, "proj");
  b.output("y");
  Graph g;
  Status st = convert(b, &g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'proj'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("MatMul"), std::string::npos) << st.message();
}

TEST(ImportErrors, MissingProducerAndGarbageFile) {
  B b(13);
  b.input("x", {2});
  b.node("Add", {"x", "nowhere"}, {"y"}, "add1");
  b.output("y");
  Graph g;
  Status st = convert(b, &g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("node 'add1' (Add): input 'nowhere' is not produced"), std::string::npos) << st.message();

  const char junk[] = "\x08\x96\x01 definitely not onnx \xff\xff";
  st = convert_onnx_bytes(junk, sizeof junk, exact_options(), &g);
  EXPECT_FALSE(st.ok());
  st = convert_onnx("/nonexistent/model.onnx", exact_options(), &g);
  EXPECT_FALSE(st.ok());
}

TEST(ImportErrors, TrainingOnlyOutputsAreRefusedWhenUsed) {
  B b(13);
  b.input("x", {1, 2, 4, 4});
  auto* mp = b.node("MaxPool", {"x"}, {"p", "idx"}, "pool");
  B::attr_ints(mp, "kernel_shape", {2, 2});
  B::attr_i(b.node("Cast", {"idx"}, {"f"}), "to", onnx::TensorProto::FLOAT);
  b.output("f");
  Graph g;
  Status st = convert(b, &g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("MaxPool's Indices output is not supported"), std::string::npos) << st.message();
}

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("orknn_ext_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "sub");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Model y = x * w, w = [2, 3, 4] stored at `location` (offset 8, after 8 junk bytes).
  std::string write_model(const std::string& location) {
    B b(13);
    b.input("x", {3});
    auto* t = b.graph().add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(3);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    add("offset", "8");
    add("length", "12");
    b.node("Mul", {"x", "w"}, {"y"});
    b.output("y");
    fs::path p = dir_ / "sub" / "model.onnx";
    std::ofstream(p, std::ios::binary) << b.bytes();
    return p.string();
  }
  void write_weights(const fs::path& p) {
    const float w[3] = {2.f, 3.f, 4.f};
    std::ofstream f(p, std::ios::binary);
    f.write("JUNKJUNK", 8);
    f.write(reinterpret_cast<const char*>(w), sizeof w);
  }
  fs::path dir_;
};

TEST_F(ExternalData, LoadsRelativeToTheModelDirectory) {
  write_weights(dir_ / "sub" / "weights.bin");
  std::string model = write_model("weights.bin");
  Graph g;
  ASSERT_OK(convert_onnx(model, exact_options(), &g));
  EXPECT_EQ(run_f32(g, {{1, 1, 2}}), (std::vector<float>{2, 3, 8}));
}

TEST_F(ExternalData, RefusesPathsLeavingTheDirectory) {
  write_weights(dir_ / "weights.bin");  // one level above the model
  Graph g;
  for (std::string loc : {std::string("../weights.bin"), (dir_ / "weights.bin").string(),
                          std::string("a/../../weights.bin")}) {
    Status st = convert_onnx(write_model(loc), exact_options(), &g);
    ASSERT_FALSE(st.ok()) << loc;
    EXPECT_NE(st.message().find("outside the model's directory"), std::string::npos) << st.message();
  }
  // a symbolic link inside the directory pointing out of it
  fs::create_symlink(dir_ / "weights.bin", dir_ / "sub" / "link.bin");
  Status st = convert_onnx(write_model("link.bin"), exact_options(), &g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("outside the model's directory"), std::string::npos) << st.message();
}

TEST_F(ExternalData, ShortFileAndInMemoryModelsAreErrors) {
  {
    std::ofstream f(dir_ / "sub" / "short.bin", std::ios::binary);
    f.write("12345678abc", 11);
  }
  Graph g;
  Status st = convert_onnx(write_model("short.bin"), exact_options(), &g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("initializer 'w'"), std::string::npos) << st.message();

  write_weights(dir_ / "sub" / "weights.bin");
  std::ifstream in(write_model("weights.bin"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  st = convert_onnx_bytes(bytes.data(), bytes.size(), exact_options(), &g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("external file"), std::string::npos) << st.message();
}

TEST(Precision, Fp16ModeRoundsWeightsFp32KeepsThem) {
  B b(13);
  b.input("x", {1});
  b.init_f32("k", {1}, {0.1f});
  b.node("Mul", {"x", "k"}, {"y"});
  b.output("y");
  for (auto prec : {FloatPrecision::kFp16, FloatPrecision::kFp32}) {
    ConvertOptions o;
    o.precision = prec;
    Graph g;
    ASSERT_OK(convert(b, &g, o));
    EXPECT_EQ(g.precision, prec);
    const Tensor* k = nullptr;
    for (const auto& t : g.tensors)
      if (t.is_const()) k = &t;
    ASSERT_NE(k, nullptr);
    const float want = prec == FloatPrecision::kFp16 ? fp16_to_fp32(fp32_to_fp16(0.1f)) : 0.1f;
    EXPECT_EQ(k->const_ptr<float>()[0], want);
  }
}

// F.normalize (x / clamp_min(||x||, 1e-12)) in fp16 mode: the bound stays the smallest fp16
// subnormal instead of rounding to 0, so an all-zero row (Swin v2's padded window tokens) gives
// zeros, not 0/0 = NaN (docs/numerics.md, "Tiny constants").
TEST(Precision, Fp16NormalizeOfZerosStaysFinite) {
  B b(13);
  b.input("x", {2, 2});
  b.init_f32("eps", {}, {1e-12f});
  auto* r = b.node("ReduceL2", {"x"}, {"n"});
  B::attr_ints(r, "axes", {1});
  b.node("Clip", {"n", "eps"}, {"c"});
  b.node("Div", {"x", "c"}, {"y"});
  b.output("y");
  ConvertOptions o;
  o.precision = FloatPrecision::kFp16;
  Graph g;
  ASSERT_OK(convert(b, &g, o));
  const std::vector<float> y = run_f32(g, {{3, 4, 0, 0}});
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], fp16_to_fp32(fp32_to_fp16(0.6f)));
  EXPECT_EQ(y[1], fp16_to_fp32(fp32_to_fp16(0.8f)));
  EXPECT_EQ(y[2], 0.f);
  EXPECT_EQ(y[3], 0.f);
}

}  // namespace
}  // namespace orknn::test
