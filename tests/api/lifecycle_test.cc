// The general API through librknnrt.so: lifecycle, conversions, attribute reporting (docs/api-contract.md §4)
// and every documented error path. The model is built here from the IR and written with our writer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "graph/ir.h"
#include "model/model_io.h"
#include "api/api_test_util.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"

namespace {

using orknn::DType;
using orknn::Graph;

// x [1,3,2,2] -> Relu -> Add(b [1,3,1,1]) -> y [1,3,2,2] (4-D output) -> Reshape -> w [3,4]
// (a second, 2-D output, to test non-4-D reporting).
std::vector<uint8_t> make_model(orknn::FloatPrecision prec, const std::string& platform = "rk3588",
                                std::vector<float> mean = {}, std::vector<float> stdv = {}) {
  Graph g;
  g.platform = platform;
  g.precision = prec;
  g.custom_string = "demo model v1";
  int x = g.add_tensor("x", {1, 3, 2, 2}, DType::kF32);
  int r = g.add_tensor("relu_out", {1, 3, 2, 2}, DType::kF32);
  std::vector<float> bias = {0.5f, -1.0f, 2.0f};
  int b = g.add_const("b", {1, 3, 1, 1}, DType::kF32, bias.data(), bias.size() * 4);
  int y = g.add_tensor("y", {1, 3, 2, 2}, DType::kF32);
  int w = g.add_tensor("w", {3, 4}, DType::kF32);
  orknn::Node relu; relu.name = "relu0"; relu.op = orknn::OpId::Relu; relu.inputs = {x}; relu.outputs = {r};
  orknn::Node add; add.name = "add0"; add.op = orknn::OpId::Add; add.inputs = {r, b}; add.outputs = {y};
  orknn::Node rs; rs.name = "reshape0"; rs.op = orknn::OpId::Reshape; rs.inputs = {y, -1}; rs.outputs = {w};
  rs.attrs.set_ints("shape", {3, 4});
  rs.attrs.set_int("allowzero", 0);
  g.nodes = {relu, add, rs};
  orknn::GraphInput gi; gi.tensor = x; gi.mean = mean; gi.std = stdv;
  g.inputs = {gi};
  g.outputs = {y, w};
  return api_test::model_bytes(g);
}

// Expected y for NCHW input x: relu(x) + b[c].
std::vector<float> expected_y(const std::vector<float>& x) {
  const float b[3] = {0.5f, -1.0f, 2.0f};
  std::vector<float> y(12);
  for (int i = 0; i < 12; ++i) y[i] = std::max(x[i], 0.f) + b[i / 4];
  return y;
}

using api_test::Ctx;

int init(Ctx& c, std::vector<uint8_t> bytes, uint32_t flags = 0) {
  int ret = rknn_init(&c.ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), flags, nullptr);
  std::fill(bytes.begin(), bytes.end(), 0xAB);  // the caller may free/reuse the buffer at once
  return ret;
}

const std::vector<float> kX = {-1, 2, -3, 4, 5, -6, 7, -8, 0.25f, 0.5f, -0.75f, 1};

TEST(CApiLifecycle, RunsAndReportsLikeTheVendorRuntime) {
  Ctx c;
  ASSERT_EQ(init(c, make_model(orknn::FloatPrecision::kFp32)), RKNN_SUCC);
  EXPECT_NE(c.ctx, 0u);

  rknn_input_output_num io{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_SUCC);
  EXPECT_EQ(io.n_input, 1u);
  EXPECT_EQ(io.n_output, 2u);

  rknn_tensor_attr a;
  std::memset(&a, 0, sizeof(a));
  a.index = 0;
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)), RKNN_SUCC);
  EXPECT_STREQ(a.name, "x");
  EXPECT_EQ(a.fmt, RKNN_TENSOR_NHWC);  // 4-D inputs reported NHWC with permuted dims
  EXPECT_EQ(a.n_dims, 4u);
  EXPECT_EQ(a.dims[0], 1u); EXPECT_EQ(a.dims[1], 2u); EXPECT_EQ(a.dims[2], 2u); EXPECT_EQ(a.dims[3], 3u);
  EXPECT_EQ(a.type, RKNN_TENSOR_FLOAT16);
  EXPECT_EQ(a.qnt_type, RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
  EXPECT_EQ(a.zp, 0);
  EXPECT_FLOAT_EQ(a.scale, 1.0f);
  EXPECT_EQ(a.n_elems, 12u);
  EXPECT_EQ(a.size, 24u);
  EXPECT_GE(a.size_with_stride, a.size);
  EXPECT_EQ(a.w_stride, 2u);

  std::memset(&a, 0, sizeof(a));
  a.index = 0;
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)), RKNN_SUCC);
  EXPECT_STREQ(a.name, "y");
  EXPECT_EQ(a.fmt, RKNN_TENSOR_NCHW);  // 4-D outputs keep NCHW
  EXPECT_EQ(a.dims[1], 3u); EXPECT_EQ(a.dims[2], 2u); EXPECT_EQ(a.dims[3], 2u);
  std::memset(&a, 0, sizeof(a));
  a.index = 1;
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)), RKNN_SUCC);
  EXPECT_EQ(a.fmt, RKNN_TENSOR_UNDEFINED);
  EXPECT_EQ(a.n_dims, 2u);
  EXPECT_EQ(a.dims[0], 3u); EXPECT_EQ(a.dims[1], 4u); EXPECT_EQ(a.dims[2], 0u);

  // FLOAT32 NCHW input, sized n_elems*4 although the input is reported FLOAT16 (docs/api-contract.md §4.2).
  std::vector<float> x = kX;
  rknn_input in{};
  in.index = 0; in.buf = x.data(); in.size = 48; in.type = RKNN_TENSOR_FLOAT32; in.fmt = RKNN_TENSOR_NCHW;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  std::fill(x.begin(), x.end(), 99.f);  // copied at call time
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);

  rknn_output out[2];
  std::memset(out, 0, sizeof(out));
  out[0].want_float = 1; out[1].want_float = 1;
  out[1].index = 0;  // position identifies the output; index is written back
  ASSERT_EQ(rknn_outputs_get(c.ctx, 2, out, nullptr), RKNN_SUCC);
  EXPECT_EQ(out[1].index, 1u);
  ASSERT_EQ(out[0].size, 48u);
  std::vector<float> want = expected_y(kX);
  for (int i = 0; i < 12; ++i) {
    EXPECT_FLOAT_EQ(static_cast<float*>(out[0].buf)[i], want[i]) << i;
    EXPECT_FLOAT_EQ(static_cast<float*>(out[1].buf)[i], want[i]) << i;
  }
  ASSERT_EQ(rknn_outputs_release(c.ctx, 2, out), RKNN_SUCC);
  EXPECT_EQ(out[0].buf, nullptr);

  // want_float = 0 -> FLOAT16 (the reported type), into a preallocated buffer.
  std::vector<uint16_t> h(12);
  out[0].want_float = 0; out[0].is_prealloc = 1; out[0].buf = h.data(); out[0].size = 24;
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, out, nullptr), RKNN_SUCC);
  for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(orknn::fp16_to_fp32(h[i]), want[i]);
  ASSERT_EQ(rknn_outputs_release(c.ctx, 1, out), RKNN_SUCC);
  EXPECT_EQ(out[0].buf, h.data());  // user buffers untouched

  // The inputs survive a run: running again without rknn_inputs_set gives the same outputs.
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
    std::memset(out, 0, sizeof(out));
    out[0].want_float = 1;
    ASSERT_EQ(rknn_outputs_get(c.ctx, 1, out, nullptr), RKNN_SUCC);
    for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(static_cast<float*>(out[0].buf)[i], want[i]) << "rerun " << run << " " << i;
    ASSERT_EQ(rknn_outputs_release(c.ctx, 1, out), RKNN_SUCC);
  }
}

TEST(CApiLifecycle, InputConversions) {
  Ctx c;
  ASSERT_EQ(init(c, make_model(orknn::FloatPrecision::kFp32, "rk3588", {10, 20, 30}, {2, 4, 5})), RKNN_SUCC);
  // UINT8 NHWC with mean/std applied per channel.
  std::vector<uint8_t> img(12);
  for (int i = 0; i < 12; ++i) img[i] = static_cast<uint8_t>(i * 7);
  rknn_input in{};
  in.index = 0; in.buf = img.data(); in.size = 12; in.type = RKNN_TENSOR_UINT8; in.fmt = RKNN_TENSOR_NHWC;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  rknn_output out{};
  out.want_float = 1;
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, &out, nullptr), RKNN_SUCC);
  const float mean[3] = {10, 20, 30}, sd[3] = {2, 4, 5};
  std::vector<float> x_nchw(12);
  for (int hw = 0; hw < 4; ++hw)
    for (int ch = 0; ch < 3; ++ch) x_nchw[ch * 4 + hw] = (img[hw * 3 + ch] - mean[ch]) / sd[ch];
  std::vector<float> want = expected_y(x_nchw);
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(static_cast<float*>(out.buf)[i], want[i], 1e-6f) << i;
  rknn_outputs_release(c.ctx, 1, &out);

  // FLOAT16 NHWC, no mean/std for non-UINT8 data.
  std::vector<uint16_t> xh(12);
  std::vector<float> x_nchw2(12);
  for (int hw = 0; hw < 4; ++hw)
    for (int ch = 0; ch < 3; ++ch) {
      float v = kX[ch * 4 + hw];
      xh[hw * 3 + ch] = orknn::fp32_to_fp16(v);
      x_nchw2[ch * 4 + hw] = v;
    }
  in.buf = xh.data(); in.size = 24; in.type = RKNN_TENSOR_FLOAT16; in.fmt = RKNN_TENSOR_NHWC;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, &out, nullptr), RKNN_SUCC);
  want = expected_y(x_nchw2);
  for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(static_cast<float*>(out.buf)[i], want[i]) << i;
  rknn_outputs_release(c.ctx, 1, &out);

  // pass_through: raw native data (FLOAT16, NHWC as reported), type/fmt fields ignored.
  in.pass_through = 1; in.type = RKNN_TENSOR_UINT8; in.fmt = RKNN_TENSOR_NCHW;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, &out, nullptr), RKNN_SUCC);
  for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(static_cast<float*>(out.buf)[i], want[i]) << i;
  rknn_outputs_release(c.ctx, 1, &out);
}

// An integer input that is not quantized takes another type's values as Cast does
// (kernels/ref/float_to_int.h): truncated toward zero, NaN 0, beyond int64 saturated, then wrapped
// to the width. The conversion of a value the input's type cannot hold was undefined behaviour
// (found by fuzz_model_loader).
TEST(CApiLifecycle, IntegerInputTakesValuesBeyondItsTypeAsCastDoes) {
  Graph g;
  g.platform = "rk3588";
  int x = g.add_tensor("x", {4}, DType::kI8);
  int y = g.add_tensor("y", {2, 2}, DType::kI8);
  orknn::Node rs; rs.name = "reshape0"; rs.op = orknn::OpId::Reshape; rs.inputs = {x, -1}; rs.outputs = {y};
  rs.attrs.set_ints("shape", {2, 2});
  rs.attrs.set_int("allowzero", 0);
  g.nodes = {rs};
  orknn::GraphInput gi; gi.tensor = x;
  g.inputs = {gi};
  g.outputs = {y};
  Ctx c;
  ASSERT_EQ(init(c, api_test::model_bytes(g)), RKNN_SUCC);
  auto run = [&](rknn_tensor_type type, const void* data, uint32_t size) {
    rknn_input in{};
    in.buf = const_cast<void*>(data); in.size = size; in.type = type; in.fmt = RKNN_TENSOR_UNDEFINED;
    std::vector<int8_t> got(4);
    rknn_output out{};
    out.is_prealloc = 1; out.buf = got.data(); out.size = 4;
    EXPECT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
    EXPECT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
    EXPECT_EQ(rknn_outputs_get(c.ctx, 1, &out, nullptr), RKNN_SUCC);
    rknn_outputs_release(c.ctx, 1, &out);
    return got;
  };
  const uint8_t bytes[4] = {0, 127, 216, 255};
  EXPECT_EQ(run(RKNN_TENSOR_UINT8, bytes, 4), (std::vector<int8_t>{0, 127, -40, -1}));
  const float floats[4] = {300.7f, -1e30f, NAN, 1e30f};
  EXPECT_EQ(run(RKNN_TENSOR_FLOAT32, floats, 16), (std::vector<int8_t>{44, 0, 0, -1}));
}

TEST(CApiLifecycle, Fp16StorageRoundsEveryOpOutput) {
  Ctx c;
  ASSERT_EQ(init(c, make_model(orknn::FloatPrecision::kFp16)), RKNN_SUCC);
  std::vector<float> x = {1.0f / 3, 0.1f, 1000.3f, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  rknn_input in{};
  in.index = 0; in.buf = x.data(); in.size = 48; in.type = RKNN_TENSOR_FLOAT32; in.fmt = RKNN_TENSOR_NCHW;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  rknn_output out{};
  out.want_float = 1;
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, &out, nullptr), RKNN_SUCC);
  const float* y = static_cast<float*>(out.buf);
  // 1/3 as fp16 is 0.333251953125; + 0.5 = 0.833251953125, which lies exactly halfway between the
  // fp16 neighbours 1706/2048 and 1707/2048: ties go to the even mantissa, 1706/2048 = 0.8330078125.
  // (Without rounding the input first, fp32 1/3 + 0.5 would round to 1707/2048.)
  EXPECT_EQ(y[0], 0.8330078125f);
  // 1000.3 -> fp16 1000.5 (spacing 0.5); + 0.5 = 1001.0
  EXPECT_EQ(y[2], 1001.0f);
  rknn_outputs_release(c.ctx, 1, &out);
}

// Ops that only copy elements (Concat here) skip the runtime's fp16 pass when every input is an
// activation (fp16 values already); a float constant input may hold other values, so then the
// output is still rounded.
TEST(CApiLifecycle, Fp16CopiesOfConstantsAreRounded) {
  Graph g;
  g.platform = "rk3588";
  g.precision = orknn::FloatPrecision::kFp16;
  const int x = g.add_tensor("x", {1, 1, 2, 2}, DType::kF32);
  const std::vector<float> cv = {1.0f / 3, 0.1f, 1000.3f, 7.f};
  const int c = g.add_const("c", {1, 1, 2, 2}, DType::kF32, cv.data(), cv.size() * 4);
  const int y = g.add_tensor("y", {1, 2, 2, 2}, DType::kF32);
  orknn::Node cat; cat.name = "concat0"; cat.op = orknn::OpId::Concat; cat.inputs = {x, c}; cat.outputs = {y};
  cat.attrs.set_int("axis", 1);
  g.nodes = {cat};
  orknn::GraphInput gi; gi.tensor = x;
  g.inputs = {gi};
  g.outputs = {y};
  Ctx ctx;
  ASSERT_EQ(init(ctx, api_test::model_bytes(g)), RKNN_SUCC);
  std::vector<float> xv = {0.1f, 2.f, -1.0f / 3, 4.f};
  rknn_input in{};
  in.index = 0; in.buf = xv.data(); in.size = 16; in.type = RKNN_TENSOR_FLOAT32; in.fmt = RKNN_TENSOR_NCHW;
  ASSERT_EQ(rknn_inputs_set(ctx.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(ctx.ctx, nullptr), RKNN_SUCC);
  rknn_output out{};
  out.want_float = 1;
  ASSERT_EQ(rknn_outputs_get(ctx.ctx, 1, &out, nullptr), RKNN_SUCC);
  const float* yv = static_cast<float*>(out.buf);
  // fp16 values: 0.1 -> 0.0999755859375, 1/3 -> 0.333251953125, 1000.3 -> 1000.5.
  const float want[8] = {0.0999755859375f, 2.f, -0.333251953125f, 4.f, 0.333251953125f, 0.0999755859375f, 1000.5f, 7.f};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(yv[i], want[i]) << i;
  rknn_outputs_release(ctx.ctx, 1, &out);
}

TEST(CApiLifecycle, InitFromPathAndQueries) {
  std::vector<uint8_t> bytes = make_model(orknn::FloatPrecision::kFp16);
  std::string path = testing::TempDir() + "/lifecycle_model.rknn";
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  Ctx c;
  ASSERT_EQ(rknn_init(&c.ctx, const_cast<char*>(path.c_str()), 0, RKNN_FLAG_COLLECT_PERF_MASK, nullptr), RKNN_SUCC);

  rknn_sdk_version v{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_SDK_VERSION, &v, sizeof(v)), RKNN_SUCC);
  EXPECT_GT(std::strlen(v.api_version), 0u);
  EXPECT_GT(std::strlen(v.drv_version), 0u);
  rknn_custom_string cs{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_CUSTOM_STRING, &cs, sizeof(cs)), RKNN_SUCC);
  EXPECT_STREQ(cs.string, "demo model v1");
  rknn_mem_size ms{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms)), RKNN_SUCC);
  EXPECT_EQ(ms.total_weight_size, 12u);  // the 3-float bias
  // Lifetimes: x [in,end] (inputs survive for the next run), relu_out [relu0,add0], y [add0,end],
  // w [reshape0,end]; 64-byte slots: at most three tensors are alive at once.
  EXPECT_EQ(ms.total_internal_size, 192u);
  std::vector<float> x = kX;
  rknn_input in{};
  in.index = 0; in.buf = x.data(); in.size = 48; in.type = RKNN_TENSOR_FLOAT32; in.fmt = RKNN_TENSOR_NCHW;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  rknn_perf_run pr{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_PERF_RUN, &pr, sizeof(pr)), RKNN_SUCC);
  EXPECT_GE(pr.run_duration, 0);
  rknn_perf_detail pd{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_PERF_DETAIL, &pd, sizeof(pd)), RKNN_SUCC);
  ASSERT_NE(pd.perf_data, nullptr);
  std::string table(pd.perf_data);
  EXPECT_NE(table.find("relu0"), std::string::npos);
  EXPECT_NE(table.find("add0"), std::string::npos);
  EXPECT_EQ(pd.data_len, table.size());
  std::remove(path.c_str());
}

TEST(CApiLifecycle, PerfDetailWithoutFlagIsAShortString) {
  Ctx c;
  ASSERT_EQ(init(c, make_model(orknn::FloatPrecision::kFp16)), RKNN_SUCC);
  rknn_perf_detail pd{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_PERF_DETAIL, &pd, sizeof(pd)), RKNN_SUCC);
  ASSERT_NE(pd.perf_data, nullptr);
  EXPECT_GT(std::strlen(pd.perf_data), 0u);
  EXPECT_EQ(std::string(pd.perf_data).find("relu0"), std::string::npos);
}

TEST(CApiErrors, Init) {
  std::vector<uint8_t> bytes = make_model(orknn::FloatPrecision::kFp16);
  rknn_context ctx = 0;
  EXPECT_EQ(rknn_init(nullptr, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_init(&ctx, nullptr, 10, 0, nullptr), RKNN_ERR_PARAM_INVALID);
  std::vector<uint8_t> junk(256, 0x5a);
  EXPECT_EQ(rknn_init(&ctx, junk.data(), 256, 0, nullptr), RKNN_ERR_MODEL_INVALID);
  EXPECT_EQ(ctx, 0u);
  std::vector<uint8_t> vendor(512, 0);
  std::memcpy(vendor.data(), "RKNN", 4);
  EXPECT_EQ(rknn_init(&ctx, vendor.data(), 512, 0, nullptr), RKNN_ERR_MODEL_INVALID);
  EXPECT_EQ(rknn_init(&ctx, const_cast<char*>("/nonexistent/model.rknn"), 0, 0, nullptr), RKNN_ERR_MODEL_INVALID);
  // A directory is not a model (and not a memory shortage).
  EXPECT_EQ(rknn_init(&ctx, const_cast<char*>("/"), 0, 0, nullptr), RKNN_ERR_MODEL_INVALID);
  EXPECT_EQ(rknn_init(&ctx, const_cast<char*>("/dev/null"), 0, 0, nullptr), RKNN_ERR_MODEL_INVALID);
  EXPECT_LT(rknn_init(&ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), RKNN_FLAG_FENCE_IN_OUTSIDE, nullptr), 0);
  EXPECT_EQ(ctx, 0u);
}

TEST(CApiErrors, BadHandles) {
  rknn_input_output_num io{};
  EXPECT_EQ(rknn_query(0, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_ERR_CTX_INVALID);
  EXPECT_EQ(rknn_run(12345, nullptr), RKNN_ERR_CTX_INVALID);
  EXPECT_EQ(rknn_destroy(12345), RKNN_ERR_CTX_INVALID);
  rknn_context ctx = 0;
  std::vector<uint8_t> bytes = make_model(orknn::FloatPrecision::kFp16);
  ASSERT_EQ(rknn_init(&ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy(ctx), RKNN_ERR_CTX_INVALID);  // handles are never reused
  EXPECT_EQ(rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_ERR_CTX_INVALID);
}

TEST(CApiErrors, QueryInputsRunOutputs) {
  Ctx c;
  ASSERT_EQ(init(c, make_model(orknn::FloatPrecision::kFp16)), RKNN_SUCC);
  rknn_input_output_num io{};
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_IN_OUT_NUM, nullptr, sizeof(io)), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_IN_OUT_NUM, &io, 4), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_attr a{};
  a.index = 5;
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)), RKNN_ERR_PARAM_INVALID);
  // A command that is not an rknn_query_cmd value: a bad parameter.
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_CMD_MAX, &io, sizeof(io)), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_query(c.ctx, static_cast<rknn_query_cmd>(-1), &io, sizeof(io)), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)), RKNN_ERR_PARAM_INVALID);
  EXPECT_LT(rknn_query(c.ctx, static_cast<rknn_query_cmd>(999), &a, sizeof(a)), 0);

  // run before any input was set, outputs before any run
  EXPECT_EQ(rknn_run(c.ctx, nullptr), RKNN_ERR_INPUT_INVALID);
  rknn_output out{};
  EXPECT_EQ(rknn_outputs_get(c.ctx, 1, &out, nullptr), RKNN_ERR_OUTPUT_INVALID);

  std::vector<float> x = kX;
  rknn_input in{};
  in.index = 0; in.buf = x.data(); in.size = 48; in.type = RKNN_TENSOR_FLOAT32; in.fmt = RKNN_TENSOR_NCHW;
  EXPECT_EQ(rknn_inputs_set(c.ctx, 0, &in), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_inputs_set(c.ctx, 2, &in), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_inputs_set(c.ctx, 1, nullptr), RKNN_ERR_PARAM_INVALID);
  rknn_input bad = in;
  bad.index = 3;
  EXPECT_EQ(rknn_inputs_set(c.ctx, 1, &bad), RKNN_ERR_INPUT_INVALID);
  bad = in; bad.buf = nullptr;
  EXPECT_EQ(rknn_inputs_set(c.ctx, 1, &bad), RKNN_ERR_INPUT_INVALID);
  bad = in; bad.size = 47;
  EXPECT_EQ(rknn_inputs_set(c.ctx, 1, &bad), RKNN_ERR_INPUT_INVALID);
  bad = in; bad.type = static_cast<rknn_tensor_type>(77);
  EXPECT_EQ(rknn_inputs_set(c.ctx, 1, &bad), RKNN_ERR_INPUT_INVALID);
  bad = in; bad.fmt = RKNN_TENSOR_NC1HWC2;
  EXPECT_EQ(rknn_inputs_set(c.ctx, 1, &bad), RKNN_ERR_INPUT_INVALID);
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);

  rknn_output outs[3];
  std::memset(outs, 0, sizeof(outs));
  EXPECT_EQ(rknn_outputs_get(c.ctx, 3, outs, nullptr), RKNN_ERR_OUTPUT_INVALID);
  EXPECT_EQ(rknn_outputs_get(c.ctx, 0, outs, nullptr), RKNN_ERR_OUTPUT_INVALID);
  EXPECT_EQ(rknn_outputs_get(c.ctx, 1, nullptr, nullptr), RKNN_ERR_PARAM_INVALID);
  outs[0].is_prealloc = 1;
  EXPECT_EQ(rknn_outputs_get(c.ctx, 1, outs, nullptr), RKNN_ERR_OUTPUT_INVALID);  // NULL buffer
  std::vector<float> small(2);
  outs[0].buf = small.data(); outs[0].size = 8; outs[0].want_float = 1;
  EXPECT_EQ(rknn_outputs_get(c.ctx, 1, outs, nullptr), RKNN_ERR_OUTPUT_INVALID);  // too small
  // releasing something that was never handed out is harmless
  rknn_output foreign{};
  int local = 0;
  foreign.buf = &local;
  EXPECT_EQ(rknn_outputs_release(c.ctx, 1, &foreign), RKNN_SUCC);
  EXPECT_EQ(foreign.buf, &local);
}

TEST(CApiErrors, CoreMaskFollowsThePlatform) {
  Ctx c3588, c3566;
  ASSERT_EQ(init(c3588, make_model(orknn::FloatPrecision::kFp16, "rk3588")), RKNN_SUCC);
  ASSERT_EQ(init(c3566, make_model(orknn::FloatPrecision::kFp16, "rk3566")), RKNN_SUCC);
  EXPECT_EQ(rknn_set_core_mask(c3588.ctx, RKNN_NPU_CORE_0_1_2), RKNN_SUCC);
  EXPECT_EQ(rknn_set_core_mask(c3588.ctx, RKNN_NPU_CORE_AUTO), RKNN_SUCC);
  EXPECT_EQ(rknn_set_core_mask(c3588.ctx, static_cast<rknn_core_mask>(8)), RKNN_ERR_PARAM_INVALID);
  EXPECT_LT(rknn_set_core_mask(c3566.ctx, RKNN_NPU_CORE_0), 0);  // single-core platform
}

TEST(CApiErrors, UnsupportedOrInvalidCallsFailCleanly) {
  Ctx c;
  ASSERT_EQ(init(c, make_model(orknn::FloatPrecision::kFp16)), RKNN_SUCC);
  EXPECT_LT(rknn_set_weight_mem(c.ctx, nullptr), 0);
  EXPECT_EQ(rknn_create_mem_from_mb_blk(c.ctx, nullptr, 0), nullptr);
  EXPECT_LT(rknn_matmul_run(c.ctx), 0);
}

}  // namespace
