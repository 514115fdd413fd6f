// calibrate(): a small Conv -> Relu -> Add graph run on a few samples; the ranges must equal the
// min/max of the values computed here by a naive convolution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "converter/quant/calibrate.h"
#include "graph/passes/passes.h"
#include "testutil/op_harness.h"
#include "testutil/status_assert.h"

namespace orknn {
namespace {

constexpr int64_t kIc = 2, kOc = 3, kH = 5, kW = 6;

struct TinyNet {
  Graph g;
  std::vector<float> w, b;
  float add_const = 0.75f;
  int x = -1, conv = -1, relu = -1, out = -1, w_id = -1, b_id = -1;

  TinyNet() {
    w = test::random_floats(kOc * kIc * 9, 11, -1.f, 1.f);
    b = test::random_floats(kOc, 12, -0.5f, 0.5f);
    x = g.add_tensor("x", {1, kIc, kH, kW}, DType::kF32);
    GraphInput gi;
    gi.tensor = x;
    g.inputs.push_back(gi);
    w_id = g.add_const("w", {kOc, kIc, 3, 3}, DType::kF32, w.data(), w.size() * 4);
    b_id = g.add_const("b", {kOc}, DType::kF32, b.data(), b.size() * 4);
    const int c_id = g.add_const("c", {1}, DType::kF32, &add_const, 4);
    Node conv_n;
    conv_n.name = "conv";
    conv_n.op = OpId::Conv;
    conv_n.inputs = {x, w_id, b_id};
    conv_n.attrs.set_ints("pads", {1, 1, 1, 1});
    conv = g.add_tensor("conv_out", {}, DType::kF32);
    conv_n.outputs = {conv};
    g.nodes.push_back(conv_n);
    Node relu_n;
    relu_n.name = "relu";
    relu_n.op = OpId::Relu;
    relu_n.inputs = {conv};
    relu = g.add_tensor("relu_out", {}, DType::kF32);
    relu_n.outputs = {relu};
    g.nodes.push_back(relu_n);
    Node add_n;
    add_n.name = "add";
    add_n.op = OpId::Add;
    add_n.inputs = {relu, c_id};
    out = g.add_tensor("y", {}, DType::kF32);
    add_n.outputs = {out};
    g.nodes.push_back(add_n);
    g.outputs = {out};
    g.precision = FloatPrecision::kFp16;  // calibrate must run it in fp32 anyway
  }

  // Naive 3x3 convolution with padding 1, in double.
  std::vector<float> conv_ref(const std::vector<float>& in) const {
    std::vector<float> o(static_cast<size_t>(kOc * kH * kW));
    for (int64_t oc = 0; oc < kOc; ++oc)
      for (int64_t y = 0; y < kH; ++y)
        for (int64_t xx = 0; xx < kW; ++xx) {
          double acc = b[static_cast<size_t>(oc)];
          for (int64_t ic = 0; ic < kIc; ++ic)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t iy = y + ky - 1, ix = xx + kx - 1;
                if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
                acc += static_cast<double>(in[static_cast<size_t>((ic * kH + iy) * kW + ix)]) *
                       w[static_cast<size_t>(((oc * kIc + ic) * 3 + ky) * 3 + kx)];
              }
          o[static_cast<size_t>((oc * kH + y) * kW + xx)] = static_cast<float>(acc);
        }
    return o;
  }
};

std::vector<CalibrationSample> make_samples(int n) {
  std::vector<CalibrationSample> s(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    s[static_cast<size_t>(i)].inputs = {test::random_floats(kIc * kH * kW, 100 + i, -2.f + i, 1.f + 0.5f * i)};
  return s;
}

void expect_range(const std::map<int, std::pair<float, float>>& r, int id, float lo, float hi, const char* what) {
  auto it = r.find(id);
  ASSERT_NE(it, r.end()) << what;
  const float tol = 1e-5f * (1.f + std::max(std::fabs(lo), std::fabs(hi)));
  EXPECT_NEAR(it->second.first, lo, tol) << what;
  EXPECT_NEAR(it->second.second, hi, tol) << what;
}

TEST(Calibrate, NormalRangesAreTheMinMaxOfEveryTensor) {
  TinyNet net;
  ASSERT_OK(reinfer_graph(net.g));
  const auto samples = make_samples(4);
  std::map<int, std::pair<float, float>> ranges;
  ASSERT_OK(calibrate(net.g, samples, CalibAlgorithm::kNormal, &ranges));

  float xlo = 0, xhi = 0, clo = 0, chi = 0;  // 0 is always included
  for (const auto& s : samples) {
    for (float v : s.inputs[0]) xlo = std::min(xlo, v), xhi = std::max(xhi, v);
    for (float v : net.conv_ref(s.inputs[0])) clo = std::min(clo, v), chi = std::max(chi, v);
  }
  expect_range(ranges, net.x, xlo, xhi, "x");
  expect_range(ranges, net.conv, clo, chi, "conv");
  expect_range(ranges, net.relu, 0.f, chi, "relu");
  expect_range(ranges, net.out, 0.f, chi + net.add_const, "add");
  // Only activations: no constants.
  EXPECT_EQ(ranges.size(), 4u);
  EXPECT_EQ(ranges.count(net.w_id), 0u);
  EXPECT_EQ(ranges.count(net.b_id), 0u);
  // The input samples range over [-2, 2.5): check the data really reached the graph.
  EXPECT_LT(xlo, -1.9f);
  EXPECT_GT(xhi, 2.4f);
}

TEST(Calibrate, KlAndMmseStayInsideMinMaxAndKeepOneSidedTensorsOneSided) {
  TinyNet net;
  ASSERT_OK(reinfer_graph(net.g));
  const auto samples = make_samples(3);
  std::map<int, std::pair<float, float>> normal;
  ASSERT_OK(calibrate(net.g, samples, CalibAlgorithm::kNormal, &normal));
  for (CalibAlgorithm alg : {CalibAlgorithm::kKl, CalibAlgorithm::kMmse}) {
    std::map<int, std::pair<float, float>> r;
    ASSERT_OK(calibrate(net.g, samples, alg, &r));
    ASSERT_EQ(r.size(), normal.size());
    for (const auto& [id, lh] : r) {
      SCOPED_TRACE(std::string(calib_algorithm_name(alg)) + " " + net.g.tensor(id).name);
      EXPECT_LE(lh.first, 0.f);
      EXPECT_GE(lh.second, 0.f);
      EXPECT_GE(lh.first, normal[id].first);
      EXPECT_LE(lh.second, normal[id].second);
      EXPECT_GT(lh.second - lh.first, 0.25f * (normal[id].second - normal[id].first));
    }
    EXPECT_EQ(r[net.relu].first, 0.f);
    EXPECT_EQ(r[net.out].first, 0.f);
  }
  // The observer fed the values computed here gives the same mmse range as calibrate.
  Observer o(CalibAlgorithm::kMmse);
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& s : samples) {
      const auto c = net.conv_ref(s.inputs[0]);
      o.observe(c.data(), c.size());
    }
    o.end_pass();
  }
  float lo, hi;
  o.range(&lo, &hi);
  std::map<int, std::pair<float, float>> r;
  ASSERT_OK(calibrate(net.g, samples, CalibAlgorithm::kMmse, &r));
  EXPECT_NEAR(r[net.conv].first, lo, 1e-3f * (1.f + std::fabs(lo)));
  EXPECT_NEAR(r[net.conv].second, hi, 1e-3f * (1.f + std::fabs(hi)));
}

TEST(Calibrate, RejectsSamplesThatDoNotFit) {
  TinyNet net;
  ASSERT_OK(reinfer_graph(net.g));
  std::map<int, std::pair<float, float>> r;
  Status st = calibrate(net.g, {}, CalibAlgorithm::kNormal, &r);
  EXPECT_FALSE(st.ok());
  std::vector<CalibrationSample> s = make_samples(2);
  s[1].inputs[0].pop_back();
  st = calibrate(net.g, s, CalibAlgorithm::kNormal, &r);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("sample 1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'x'"), std::string::npos) << st.message();
  s = make_samples(1);
  s[0].inputs.push_back({});
  st = calibrate(net.g, s, CalibAlgorithm::kNormal, &r);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("2 inputs"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace orknn
