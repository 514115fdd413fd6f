// Helpers shared by the end-to-end model tests (models_test.cc, int8_models_test.cc, the fusion and
// layout tests): where the prepared work directory is, reading the raw files
// scripts/prepare_test_models.sh writes, running a model through the public C API, and the output
// comparisons.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "model/model_io.h"
#include "rknn_api.h"

namespace orknn {
namespace model_test {

// Converts the ONNX file with `opts` into .rknn bytes (*graph: the converted graph, when given).
// Fails the test on any error.
inline void convert_model(const std::string& onnx, const ConvertOptions& opts, std::vector<uint8_t>* model,
                          Graph* graph = nullptr) {
  Graph local;
  Graph& g = graph ? *graph : local;
  const Status st = convert_onnx(onnx, opts, &g);
  ASSERT_TRUE(st.ok()) << "convert_onnx(" << onnx << "): " << st.message();
  const Status w = write_model(g, model);
  ASSERT_TRUE(w.ok()) << "write_model: " << w.message();
}

// $ORKNN_MODELS_DIR, or the default work directory of scripts/prepare_test_models.sh.
inline std::string models_dir() {
  const char* env = std::getenv("ORKNN_MODELS_DIR");
  if (env && *env) return env;
  return std::string(ORKNN_SOURCE_DIR) + "/tests/models/work";
}

inline bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// Reads a whole file as bytes (raw uint8 images, .rknn models).
inline bool read_bytes(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  const std::streamsize bytes = f.tellg();
  if (bytes < 0) return false;
  out->resize(static_cast<size_t>(bytes));
  f.seekg(0);
  return static_cast<bool>(f.read(reinterpret_cast<char*>(out->data()), bytes));
}

// Reads a raw little-endian float32 file (the format the preparation scripts write).
inline bool read_f32(const std::string& path, std::vector<float>* out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  const std::streamsize bytes = f.tellg();
  if (bytes % 4 != 0) return false;
  out->resize(static_cast<size_t>(bytes / 4));
  f.seekg(0);
  return static_cast<bool>(f.read(reinterpret_cast<char*>(out->data()), bytes));
}

// One input buffer of run_model.
struct ModelInput {
  const void* data;
  size_t bytes;
  rknn_tensor_type type;  // RKNN_TENSOR_FLOAT32 (NCHW) or RKNN_TENSOR_UINT8 (NHWC image)
  rknn_tensor_format fmt;
};

// A prepared test model of the work directory and its reference input.
struct ReferenceModel {
  std::string onnx;          // path of NAME.onnx
  std::vector<float> input;  // NAME.in.f32 (or the input of the model it was derived from)
  // The input as run_model takes it: float32 NCHW.
  std::vector<ModelInput> inputs() const {
    return {{input.data(), input.size() * sizeof(float), RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW}};
  }
};

// Finds NAME.onnx and reads the reference input of `input_of` (default: NAME), e.g. resnet18's for
// resnet18_qdq. Fails the test when scripts/prepare_test_models.sh has not made them.
inline void load_reference_model(const std::string& name, ReferenceModel* m, const std::string& input_of = "") {
  m->onnx = models_dir() + "/" + name + ".onnx";
  ASSERT_TRUE(file_exists(m->onnx)) << m->onnx << " is missing: run scripts/prepare_test_models.sh";
  const std::string in = models_dir() + "/" + (input_of.empty() ? name : input_of) + ".in.f32";
  ASSERT_TRUE(read_f32(in, &m->input)) << in << " is missing: run scripts/prepare_test_models.sh";
}

// Runs a one-input, one-output model (bytes of our .rknn) through the public C API, exactly as a
// client program would, on each input in turn (one context), and returns each output as float32
// (want_float = 1: dequantized by the runtime for a quantized model) in the model's output layout.
// With `nchw_input_shape`, also checks the input attributes the runtime reports against it (4-D
// inputs are reported in NHWC order, the vendor's behaviour; NCHW is accepted too). Fails the test
// on any API error. With `perf_detail`, the context collects per-layer timing and *perf_detail gets
// the RKNN_QUERY_PERF_DETAIL report of the last run.
inline void run_model(const std::vector<uint8_t>& model_bytes, const std::vector<ModelInput>& inputs,
                      std::vector<std::vector<float>>* outputs,
                      const std::vector<int64_t>* nchw_input_shape = nullptr, std::string* perf_detail = nullptr) {
  std::vector<uint8_t> model = model_bytes;  // rknn_init takes a non-const pointer
  rknn_context ctx = 0;
  const uint32_t flags = perf_detail ? RKNN_FLAG_COLLECT_PERF_MASK : 0;
  ASSERT_EQ(rknn_init(&ctx, model.data(), uint32_t(model.size()), flags, nullptr), RKNN_SUCC);
  ASSERT_NE(ctx, rknn_context(0));
  struct Destroy {
    rknn_context ctx;
    ~Destroy() { EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC); }
  } destroy{ctx};

  rknn_input_output_num io{};
  ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_SUCC);
  ASSERT_EQ(io.n_input, 1u);
  ASSERT_EQ(io.n_output, 1u);

  if (nchw_input_shape) {
    const std::vector<int64_t>& s = *nchw_input_shape;
    rknn_tensor_attr in_attr;
    std::memset(&in_attr, 0, sizeof(in_attr));
    in_attr.index = 0;
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &in_attr, sizeof(in_attr)), RKNN_SUCC);
    ASSERT_EQ(in_attr.n_dims, 4u);
    ASSERT_EQ(s.size(), 4u);
    const std::vector<uint32_t> want_dims =
        in_attr.fmt == RKNN_TENSOR_NHWC
            ? std::vector<uint32_t>{uint32_t(s[0]), uint32_t(s[2]), uint32_t(s[3]), uint32_t(s[1])}
            : std::vector<uint32_t>{uint32_t(s[0]), uint32_t(s[1]), uint32_t(s[2]), uint32_t(s[3])};
    EXPECT_EQ(std::vector<uint32_t>(in_attr.dims, in_attr.dims + 4), want_dims) << "input fmt " << in_attr.fmt;
    ASSERT_EQ(in_attr.n_elems, uint32_t(s[0] * s[1] * s[2] * s[3]));
  }

  rknn_tensor_attr out_attr;
  std::memset(&out_attr, 0, sizeof(out_attr));
  out_attr.index = 0;
  ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &out_attr, sizeof(out_attr)), RKNN_SUCC);
  ASSERT_GT(out_attr.n_elems, 0u);

  outputs->clear();
  for (const ModelInput& x : inputs) {
    rknn_input in;
    std::memset(&in, 0, sizeof(in));
    in.index = 0;
    in.buf = const_cast<void*>(x.data);
    in.size = uint32_t(x.bytes);
    in.pass_through = 0;
    in.type = x.type;
    in.fmt = x.fmt;
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    rknn_output out;
    std::memset(&out, 0, sizeof(out));
    out.want_float = 1;
    ASSERT_EQ(rknn_outputs_get(ctx, 1, &out, nullptr), RKNN_SUCC);
    ASSERT_NE(out.buf, nullptr);
    ASSERT_EQ(out.size, out_attr.n_elems * sizeof(float));
    const float* data = static_cast<const float*>(out.buf);
    outputs->emplace_back(data, data + out_attr.n_elems);
    EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
  }
  if (perf_detail) {
    rknn_perf_detail detail;
    std::memset(&detail, 0, sizeof(detail));
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
    perf_detail->assign(detail.perf_data ? detail.perf_data : "");
  }
}

// Sets an environment variable for the scope (the runtime reads its switches per rknn_init).
class SetEnv {
 public:
  SetEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
  }
  ~SetEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }
  SetEnv(const SetEnv&) = delete;
  SetEnv& operator=(const SetEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// Occurrences of `word` in `text`.
inline size_t count_words(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

struct Comparison {
  double cosine = 0;
  double max_abs_diff = 0;
  double ref_max_abs = 0;
};

inline Comparison compare(const std::vector<float>& got, const std::vector<float>& want) {
  Comparison c;
  double dot = 0, n_got = 0, n_want = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    dot += double(got[i]) * want[i];
    n_got += double(got[i]) * got[i];
    n_want += double(want[i]) * want[i];
    // NaN must fail the comparison, so it is not folded through std::max.
    const double d = std::fabs(double(got[i]) - want[i]);
    if (!(d <= c.max_abs_diff)) c.max_abs_diff = std::isnan(d) ? INFINITY : d;
    c.ref_max_abs = std::max(c.ref_max_abs, std::fabs(double(want[i])));
  }
  c.cosine = (n_got > 0 && n_want > 0) ? dot / std::sqrt(n_got * n_want) : 0.0;
  if (std::isnan(c.cosine)) c.cosine = 0;
  return c;
}

inline size_t argmax(const float* v, size_t n) { return size_t(std::max_element(v, v + n) - v); }

// Greedy CTC decoding as PaddleOCR does it: per-step argmax, repeats merged, blank (class 0) dropped.
inline std::vector<size_t> ctc_greedy(const std::vector<float>& probs, size_t classes) {
  std::vector<size_t> out;
  size_t prev = SIZE_MAX;
  for (size_t t = 0; t * classes < probs.size(); ++t) {
    const size_t k = argmax(probs.data() + t * classes, classes);
    if (k != prev && k != 0) out.push_back(k);
    prev = k;
  }
  return out;
}

}  // namespace model_test
}  // namespace orknn
