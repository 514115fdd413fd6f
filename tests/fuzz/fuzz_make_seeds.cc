// Writes the seed models of the model fuzz targets, every one made by code:
//   fuzz_make_seeds CORPUS_DIR   (tests/fuzz/corpus in the tree; regenerate after a format or
//                                 converter change; the regress_* reproducers there are kept)
// CORPUS_DIR/fuzz_model_loader/: models that together hold every section of the format (docs/format.md):
// per-tensor and per-channel quantization, UINT8 mean/std, two inputs, constants, fp16 and fp32
// precision, a custom string and conversion settings, custom operators with attributes of every
// kind, dynamic shapes with per-set node attributes (float and INT8), platforms with 8- and
// 16-channel blocks.
// CORPUS_DIR/fuzz_fast_kernels/: small networks the converter made as it makes a user's, in fp16,
// fp32 and INT8 (calibrated here on generated samples): convolutions (stem, 3x3, depthwise,
// pointwise, residual), pooling, Gemm and MatMul, SiLU, HardSwish, transposed convolution, resize,
// concat, softmax, and a classifier with dynamic input sizes. A few kilobytes each, so the fuzzer
// keeps its speed.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "api/dynamic_shape_model.h"
#include "converter/convert.h"
#include "converter/onnx_builder.h"
#include "fuzz_models.h"
#include "model/model_io.h"
#include "testutil/npy.h"

namespace {

namespace fs = std::filesystem;
using orknn::test::OnnxBuilder;

// Deterministic values in [-scale, scale).
std::vector<float> values(size_t n, float scale, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / float(1 << 23) - 1.f);
  }
  return v;
}

uint32_t g_seed = 1;  // each initializer gets values of its own

// Conv (weights scaled by the fan-in, so activations stay near 1) writing `out`.
onnx::NodeProto* conv(OnnxBuilder& b, const std::string& in, const std::string& out, int64_t cin, int64_t cout,
                      int64_t k, int64_t stride, int64_t group = 1) {
  const int64_t fan_in = cin / group * k * k;
  b.init_f32(out + "_w", {cout, cin / group, k, k},
             values(static_cast<size_t>(cout * fan_in), 1.5f / std::sqrt(float(fan_in)), g_seed++));
  b.init_f32(out + "_b", {cout}, values(static_cast<size_t>(cout), 0.1f, g_seed++));
  auto* n = b.node("Conv", {in, out + "_w", out + "_b"}, {out}, out);
  b.attr_ints(n, "kernel_shape", {k, k});
  b.attr_ints(n, "strides", {stride, stride});
  b.attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  b.attr_i(n, "group", group);
  return n;
}

// x [1,3,H,W] -> stem 3x3/2 (16) + Relu -> depthwise 3x3 + Relu -> pointwise 16->16 -> + stem
// (residual) -> Relu -> MaxPool 2x2 -> 3x3 16->8 -> SiLU (Sigmoid, Mul) -> GlobalAveragePool ->
// Flatten -> Gemm 8->10. dynamic: H and W left open (the converter's dynamic shapes set them).
std::string classifier(bool dynamic) {
  OnnxBuilder b(13);
  b.input("x", {1, 3, dynamic ? -1 : 16, dynamic ? -1 : 16}, onnx::TensorProto::FLOAT, {"", "", "H", "W"});
  conv(b, "x", "stem", 3, 16, 3, 2);
  b.node("Relu", {"stem"}, {"stem_r"});
  conv(b, "stem_r", "dw", 16, 16, 3, 1, 16);
  b.node("Relu", {"dw"}, {"dw_r"});
  conv(b, "dw_r", "pw", 16, 16, 1, 1);
  b.node("Add", {"pw", "stem_r"}, {"res"});
  b.node("Relu", {"res"}, {"res_r"});
  auto* pool = b.node("MaxPool", {"res_r"}, {"pool"});
  b.attr_ints(pool, "kernel_shape", {2, 2});
  b.attr_ints(pool, "strides", {2, 2});
  conv(b, "pool", "head", 16, 8, 3, 1);
  b.node("Sigmoid", {"head"}, {"head_sig"});
  b.node("Mul", {"head", "head_sig"}, {"head_silu"});
  b.node("GlobalAveragePool", {"head_silu"}, {"gap"});
  b.node("Flatten", {"gap"}, {"flat"});
  b.init_f32("fc_w", {10, 8}, values(80, 0.5f, g_seed++));
  b.init_f32("fc_b", {10}, values(10, 0.1f, g_seed++));
  auto* fc = b.node("Gemm", {"flat", "fc_w", "fc_b"}, {"y"});
  b.attr_i(fc, "transB", 1);
  b.output("y");
  return b.bytes();
}

// x [1,16,8,8] -> 1x1 + HardSwish -> ConvTranspose 2x2/2 (16->8) ; x -> 1x1 (8) -> Resize nearest
// x2 ; Concat -> AveragePool 2x2 -> Reshape [1,16,64] -> MatMul [64,8] -> Softmax.
std::string decoder() {
  OnnxBuilder b(17);
  b.input("x", {1, 16, 8, 8});
  conv(b, "x", "a", 16, 16, 1, 1);
  b.node("HardSwish", {"a"}, {"a_hs"});
  b.init_f32("up_w", {16, 8, 2, 2}, values(512, 0.25f, g_seed++));
  b.init_f32("up_b", {8}, values(8, 0.1f, g_seed++));
  auto* up = b.node("ConvTranspose", {"a_hs", "up_w", "up_b"}, {"up"});
  b.attr_ints(up, "kernel_shape", {2, 2});
  b.attr_ints(up, "strides", {2, 2});
  conv(b, "x", "side", 16, 8, 1, 1);
  b.init_f32("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  auto* rs = b.node("Resize", {"side", "", "scales"}, {"side_up"});
  b.attr_s(rs, "mode", "nearest");
  auto* cat = b.node("Concat", {"up", "side_up"}, {"cat"});
  b.attr_i(cat, "axis", 1);
  auto* ap = b.node("AveragePool", {"cat"}, {"ap"});
  b.attr_ints(ap, "kernel_shape", {2, 2});
  b.attr_ints(ap, "strides", {2, 2});
  b.init_i64("rs_shape", {3}, {1, 16, 64});
  b.node("Reshape", {"ap", "rs_shape"}, {"rows"});
  b.init_f32("mm_w", {64, 8}, values(512, 0.2f, g_seed++));
  b.node("MatMul", {"rows", "mm_w"}, {"mm"});
  auto* sm = b.node("Softmax", {"mm"}, {"y"});
  b.attr_i(sm, "axis", -1);
  b.output("y");
  return b.bytes();
}

// x [1,2,4,4] -> 3x3 (3) -> cstSigmoid (custom domain; an attribute of every kind) -> Add ->
// cstScale -> y: custom operators between ordinary ones.
std::string custom_ops() {
  OnnxBuilder b(13);
  auto* dom = b.model().add_opset_import();
  dom->set_domain("fuzz_cst");
  dom->set_version(1);
  b.input("x", {1, 2, 4, 4});
  conv(b, "x", "c", 2, 3, 3, 1);
  auto* sig = b.node("cstSigmoid", {"c"}, {"sig"});
  sig->set_domain("fuzz_cst");
  b.attr_f(sig, "alpha", 0.75f);
  b.attr_i(sig, "count", 7);
  b.attr_floats(sig, "coeffs", {0.5f, 1.5f});
  b.attr_ints(sig, "axes", {2, 3});
  b.attr_s(sig, "label", "seed");
  b.init_f32("bias", {1, 3, 1, 1}, {0.5f, -0.25f, 1.f});
  b.node("Add", {"sig", "bias"}, {"sum"});
  auto* scale = b.node("cstScale", {"sum"}, {"y"});
  scale->set_domain("fuzz_cst");
  b.output("y");
  return b.bytes();
}

struct Seeds {
  fs::path calib_dir;  // scratch directory of the calibration samples
  fs::path out;        // the target's corpus directory
  int failures = 0;

  // Four generated samples of one input's shape, in [-1, 1); returns the list file.
  std::string calibration(const std::vector<int64_t>& shape) {
    std::string tag;
    int64_t n = 1;
    for (int64_t d : shape) {
      tag += "_" + std::to_string(d);
      n *= d;
    }
    const fs::path list = calib_dir / ("list" + tag + ".txt");
    std::ofstream f(list);
    for (int i = 0; i < 4; ++i) {
      const std::string name = "s" + tag + "_" + std::to_string(i) + ".npy";
      orknn::test::write_npy_f32(calib_dir / name, shape, values(static_cast<size_t>(n), 1.f, 1000 + i));
      f << name << "\n";
    }
    return list.string();
  }

  void write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const fs::path p = out / name;
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", p.c_str());
      ++failures;
      return;
    }
    std::printf("%s: %zu bytes\n", p.c_str(), bytes.size());
  }

  // settings: Model.conversion_settings (the converter fills it only for auto-hybrid models).
  void convert(const std::string& name, const std::string& onnx, const orknn::ConvertOptions& opts,
               const std::string& settings = "") {
    orknn::Graph g;
    orknn::DynamicShapes dyn;
    orknn::ConvertReport report;
    std::vector<uint8_t> bytes;
    orknn::Status st = orknn::convert_onnx_bytes(onnx.data(), onnx.size(), opts, &g, &report, &dyn);
    g.conversion_settings = settings;
    if (st.ok()) st = orknn::write_model(g, dyn, &bytes);
    if (!st.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), st.message().c_str());
      ++failures;
      return;
    }
    write(name, bytes);
  }
};

orknn::ConvertOptions int8(const std::string& list, const std::string& method = "channel") {
  orknn::ConvertOptions o;
  o.quant.enabled = true;
  o.quant.dataset = list;
  o.quant.method = method;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const fs::path corpus = argv[1];
  Seeds s;
  s.calib_dir = fs::temp_directory_path() / ("orknn_fuzz_seeds_" + std::to_string(::getpid()));
  fs::create_directories(s.calib_dir);
  const std::string calib_classifier = s.calibration({1, 3, 16, 16});
  const std::string calib_decoder = s.calibration({1, 16, 8, 8});
  const std::string calib_dynamic = s.calibration({1, 2, 4, 4});
  orknn::ConvertOptions fp32;
  fp32.precision = orknn::FloatPrecision::kFp32;

  s.out = corpus / "fuzz_model_loader";
  fs::create_directories(s.out);
  s.write("quantized_relu.rknn", orknn_fuzz::quantized_relu_model());
  s.write("float_add.rknn", orknn_fuzz::float_add_model());
  s.write("float_conv_relu.rknn", orknn_fuzz::float_conv_relu_model());
  orknn::ConvertOptions dyn;
  dyn.dynamic_shapes["x"] = {{1, 2, 4, 4}, {1, 2, 6, 8}};  // Reshape's attributes differ per set
  s.convert("dynamic_shapes_fp16.rknn", dyn_test::make_onnx(), dyn);
  orknn::ConvertOptions dyn_int8 = int8(calib_dynamic);
  dyn_int8.dynamic_shapes = dyn.dynamic_shapes;
  dyn_int8.platform = "rk3568";
  s.convert("dynamic_shapes_int8.rknn", dyn_test::make_onnx(), dyn_int8);
  orknn::ConvertOptions custom = fp32;
  custom.custom_string = "fuzz seed: custom operators";
  s.convert("custom_ops_fp32.rknn", custom_ops(), custom, "fuzz_make_seeds: custom operators, fp32");
  orknn::ConvertOptions mean_std = int8(calib_classifier, "layer");
  mean_std.platform = "rk3566";
  mean_std.mean_values[""] = {123.675f, 116.28f, 103.53f};
  mean_std.std_values[""] = {58.395f, 57.12f, 57.375f};
  s.convert("classifier_int8_mean_std.rknn", classifier(false), mean_std);

  s.out = corpus / "fuzz_fast_kernels";
  fs::create_directories(s.out);
  s.convert("classifier_fp16.rknn", classifier(false), orknn::ConvertOptions());
  s.convert("classifier_fp32.rknn", classifier(false), fp32);
  s.convert("classifier_int8.rknn", classifier(false), int8(calib_classifier));
  orknn::ConvertOptions cls_dyn = int8(calib_classifier);  // set 0's shape is the calibration's
  cls_dyn.dynamic_shapes["x"] = {{1, 3, 16, 16}, {1, 3, 24, 32}};
  s.convert("classifier_dynamic_int8.rknn", classifier(true), cls_dyn);
  s.convert("decoder_fp16.rknn", decoder(), orknn::ConvertOptions());
  s.convert("decoder_int8.rknn", decoder(), int8(calib_decoder));

  fs::remove_all(s.calib_dir);
  return s.failures == 0 ? 0 : 1;
}
