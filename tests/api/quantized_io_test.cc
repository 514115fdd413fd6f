// I/O of quantized models through librknnrt.so (docs/api-contract.md §4.1-4.3, docs/numerics.md): INT8 AFFINE
// attributes with the real zero point and scale, UINT8 images normalised and quantized inside the
// runtime, pass_through of native int8 data, want_float=0 raw int8 and want_float=1 dequantized.
// The model (quantized input -> Relu table op -> quantized output) is built from the IR here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "graph/ir.h"
#include "model/model_io.h"
#include "api/api_test_util.h"
#include "rknn_api.h"

namespace {

using orknn::DType;
using orknn::Graph;

constexpr float kInScale = 0.05f, kOutScale = 0.025f;
constexpr int kInZp = -3, kOutZp = -128;
const std::vector<float> kMean = {10.f, 20.f, 30.f}, kStd = {2.f, 4.f, 8.f};

std::vector<uint8_t> make_quantized_relu_model() {
  Graph g;
  g.platform = "rk3568";
  int x = g.add_tensor("x", {1, 3, 2, 2}, DType::kI8);
  int y = g.add_tensor("y", {1, 3, 2, 2}, DType::kI8);
  g.tensor(x).quant.scale = {kInScale};
  g.tensor(x).quant.zero_point = {kInZp};
  g.tensor(y).quant.scale = {kOutScale};
  g.tensor(y).quant.zero_point = {kOutZp};
  orknn::Node relu;
  relu.name = "relu0";
  relu.op = orknn::OpId::Relu;
  relu.inputs = {x};
  relu.outputs = {y};
  g.nodes = {relu};
  orknn::GraphInput gi;
  gi.tensor = x;
  gi.mean = kMean;
  gi.std = kStd;
  g.inputs = {gi};
  g.outputs = {y};
  return api_test::model_bytes(g);
}

// The spec written out independently: q = sat8(rne(x / s) + zp).
int quant(float x, float s, int zp) {
  long r = std::lrint(x / s) + zp;
  return r < -128 ? -128 : (r > 127 ? 127 : static_cast<int>(r));
}

using api_test::Ctx;

TEST(QuantizedIo, AttributesReportInt8AffineWithRealParameters) {
  std::vector<uint8_t> model = make_quantized_relu_model();
  Ctx c;
  ASSERT_EQ(rknn_init(&c.ctx, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr), RKNN_SUCC);
  rknn_tensor_attr a;
  std::memset(&a, 0, sizeof(a));
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)), RKNN_SUCC);
  EXPECT_EQ(a.type, RKNN_TENSOR_INT8);
  EXPECT_EQ(a.qnt_type, RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
  EXPECT_EQ(a.zp, kInZp);
  EXPECT_FLOAT_EQ(a.scale, kInScale);
  EXPECT_EQ(a.size, 12u);  // one byte per element
  EXPECT_EQ(a.fmt, RKNN_TENSOR_NHWC);
  std::memset(&a, 0, sizeof(a));
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)), RKNN_SUCC);
  EXPECT_EQ(a.type, RKNN_TENSOR_INT8);
  EXPECT_EQ(a.qnt_type, RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
  EXPECT_EQ(a.zp, kOutZp);
  EXPECT_FLOAT_EQ(a.scale, kOutScale);
}

TEST(QuantizedIo, Uint8ImageIsNormalisedQuantizedAndOutputsAreRawOrDequantized) {
  std::vector<uint8_t> model = make_quantized_relu_model();
  Ctx c;
  ASSERT_EQ(rknn_init(&c.ctx, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr), RKNN_SUCC);
  // NHWC image, 2x2 pixels of 3 channels.
  const uint8_t img[12] = {0, 20, 255, 10, 21, 30, 9, 19, 31, 15, 0, 200};
  rknn_input in;
  std::memset(&in, 0, sizeof(in));
  in.index = 0;
  in.buf = const_cast<uint8_t*>(img);
  in.size = sizeof(img);
  in.type = RKNN_TENSOR_UINT8;
  in.fmt = RKNN_TENSOR_NHWC;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);

  // Expected, in NCHW order: x = (u - mean[c]) / std[c], quantized, dequantized, relu, requantized
  // through the table: table[q] = sat8(rne(relu(float(q - zp_x) * s_x) / s_y) + zp_y).
  std::vector<int> want_q(12);
  std::vector<float> want_f(12);
  for (int ch = 0; ch < 3; ++ch) {
    for (int p = 0; p < 4; ++p) {
      const float x = (static_cast<float>(img[p * 3 + ch]) - kMean[ch]) / kStd[ch];
      const int qx = quant(x, kInScale, kInZp);
      const float real = static_cast<float>(qx - kInZp) * kInScale;
      const int qy = quant(real > 0.f ? real : 0.f, kOutScale, kOutZp);
      want_q[ch * 4 + p] = qy;
      want_f[ch * 4 + p] = static_cast<float>(qy - kOutZp) * kOutScale;
    }
  }
  rknn_output out[2];
  std::memset(out, 0, sizeof(out));
  out[0].want_float = 0;
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, out, nullptr), RKNN_SUCC);
  ASSERT_EQ(out[0].size, 12u);
  const int8_t* raw = static_cast<const int8_t*>(out[0].buf);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(raw[i], want_q[i]) << "element " << i;
  ASSERT_EQ(rknn_outputs_release(c.ctx, 1, out), RKNN_SUCC);

  std::memset(out, 0, sizeof(out));
  out[0].want_float = 1;
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, out, nullptr), RKNN_SUCC);
  ASSERT_EQ(out[0].size, 48u);
  const float* f = static_cast<const float*>(out[0].buf);
  for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(f[i], want_f[i]) << "element " << i;
  ASSERT_EQ(rknn_outputs_release(c.ctx, 1, out), RKNN_SUCC);
}

TEST(QuantizedIo, PassThroughTakesNativeInt8AndFloatInputIsQuantized) {
  std::vector<uint8_t> model = make_quantized_relu_model();
  Ctx c;
  ASSERT_EQ(rknn_init(&c.ctx, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr), RKNN_SUCC);
  // pass_through: the bytes are the model's own int8 codes (NCHW here: 4-D native data of this
  // emulation is the reported layout NHWC, so write it in NHWC).
  const int8_t codes_nhwc[12] = {-128, -3, 5, 127, -4, 0, 20, -60, 100, 3, -2, 64};
  rknn_input in;
  std::memset(&in, 0, sizeof(in));
  in.index = 0;
  in.buf = const_cast<int8_t*>(codes_nhwc);
  in.size = sizeof(codes_nhwc);
  in.pass_through = 1;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  rknn_output out;
  std::memset(&out, 0, sizeof(out));
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, &out, nullptr), RKNN_SUCC);
  const int8_t* raw = static_cast<const int8_t*>(out.buf);
  for (int ch = 0; ch < 3; ++ch) {
    for (int p = 0; p < 4; ++p) {
      const int q = codes_nhwc[p * 3 + ch];
      const float real = static_cast<float>(q - kInZp) * kInScale;
      EXPECT_EQ(raw[ch * 4 + p], quant(real > 0.f ? real : 0.f, kOutScale, kOutZp)) << ch << "," << p;
    }
  }
  ASSERT_EQ(rknn_outputs_release(c.ctx, 1, &out), RKNN_SUCC);

  // FLOAT32 NCHW real values are quantized with the input's parameters (no mean/std: not UINT8).
  const float xf[12] = {-1.f, 0.f, 0.026f, 6.5f, 0.3f, 0.125f, -0.2f, 1.f, 2.f, 3.f, 4.f, 5.f};
  std::memset(&in, 0, sizeof(in));
  in.index = 0;
  in.buf = const_cast<float*>(xf);
  in.size = sizeof(xf);
  in.type = RKNN_TENSOR_FLOAT32;
  in.fmt = RKNN_TENSOR_NCHW;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  std::memset(&out, 0, sizeof(out));
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, &out, nullptr), RKNN_SUCC);
  raw = static_cast<const int8_t*>(out.buf);
  for (int i = 0; i < 12; ++i) {
    const int qx = quant(xf[i], kInScale, kInZp);
    const float real = static_cast<float>(qx - kInZp) * kInScale;
    EXPECT_EQ(raw[i], quant(real > 0.f ? real : 0.f, kOutScale, kOutZp)) << i;
  }
  ASSERT_EQ(rknn_outputs_release(c.ctx, 1, &out), RKNN_SUCC);
}

}  // namespace
