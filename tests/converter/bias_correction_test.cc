// Bias correction (converter/quant/bias_correction.h): on layers whose int8 weights are all rounded
// the same way, the quantized output's mean per channel drifts from the float one by an amount
// known in advance; after the correction it must be within what the int32 bias step and the int8
// output step can still leave.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <random>

#include "converter/converter_test_util.h"
#include "converter/quant/accuracy.h"
#include "converter/quant/bias_correction.h"
#include "converter/quant/calibrate.h"
#include "converter/quant/quantize.h"
#include "runtime/executor.h"
#include "testutil/op_harness.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;

// Weight scale of every output channel: a power of two, so w / s is exact in float32.
constexpr float kScale = 1.f / 256.f;
// Every weight but one per channel is s * (k + kOffset): it rounds to k, an error of -kOffset * s.
constexpr float kOffset = 0.4f;

// Weights of `channels` output channels of `per_channel` values each: small integers k in [-3, 3]
// plus kOffset, in units of kScale, and one weight of 127 units (it sets max|w| = 127 * kScale, so
// the quantizer's scale is exactly kScale and that weight rounds without error).
std::vector<float> biased_weights(int64_t channels, int64_t per_channel, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> k(-3, 3);
  std::vector<float> w(static_cast<size_t>(channels * per_channel));
  for (int64_t m = 0; m < channels; ++m)
    for (int64_t i = 0; i < per_channel; ++i)
      w[static_cast<size_t>(m * per_channel + i)] = i == per_channel / 2 ? 127.f * kScale : (k(rng) + kOffset) * kScale;
  return w;
}

std::vector<CalibrationSample> uniform_samples(const Graph& g, int count, uint32_t seed) {
  std::vector<CalibrationSample> samples(static_cast<size_t>(count));
  for (int s = 0; s < count; ++s)
    for (const GraphInput& in : g.inputs)
      samples[static_cast<size_t>(s)].inputs.push_back(random_floats(
          static_cast<size_t>(g.tensor(in.tensor).numel()), seed + 31 * static_cast<uint32_t>(s), 0.f, 1.f));
  return samples;
}

// Mean over the samples and positions of (quantized - float) output, per channel. The output is
// [N, C, ...] (channel axis 1).
std::vector<double> mean_error_per_channel(const Graph& fg, const Graph& qg,
                                           const std::vector<CalibrationSample>& samples) {
  const Tensor& out = qg.tensor(qg.outputs[0]);
  const int64_t channels = out.shape[1];
  const int64_t inner = out.numel() / (out.shape[0] * channels);
  std::vector<double> sum(static_cast<size_t>(channels), 0.0);
  double count = 0.0;
  for (const CalibrationSample& s : samples) {
    std::unique_ptr<Executor> fr, qr;
    EXPECT_TRUE(Executor::create_keep_all(fg, false, 1, &fr).ok());
    EXPECT_TRUE(Executor::create_keep_all(qg, false, 1, &qr).ok());
    std::vector<uint8_t> fb, qb;
    EXPECT_TRUE(graph_input_bytes(fg.tensor(fg.inputs[0].tensor), s.inputs[0], "float", &fb).ok());
    EXPECT_TRUE(graph_input_bytes(qg.tensor(qg.inputs[0].tensor), s.inputs[0], "quantized", &qb).ok());
    EXPECT_TRUE(fr->set_input(0, fb.data(), fb.size()).ok());
    EXPECT_TRUE(qr->set_input(0, qb.data(), qb.size()).ok());
    EXPECT_TRUE(fr->run().ok());
    EXPECT_TRUE(qr->run().ok());
    const std::vector<float> yf = real_values(fg.tensor(fg.outputs[0]), fr->data(fg.outputs[0]));
    const std::vector<float> yq = real_values(out, qr->data(qg.outputs[0]));
    for (size_t i = 0; i < yq.size(); ++i)
      sum[static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels)] += static_cast<double>(yq[i]) - yf[i];
    count += static_cast<double>(yq.size() / static_cast<size_t>(channels));
  }
  for (double& v : sum) v /= count;
  return sum;
}

struct Quantized {
  Graph fg, plain, corrected;
  std::vector<CalibrationSample> samples;
  BiasDeltas deltas;
};

// The float graph of b, calibrated (min/max) on uniform [0, 1) samples and quantized, without and
// with bias correction.
Quantized quantize_both_ways(const B& b, int samples) {
  Quantized r;
  ConvertOptions o = exact_options();
  EXPECT_OK(convert(b, &r.fg, o));
  r.samples = uniform_samples(r.fg, samples, 5);
  std::map<int, std::pair<float, float>> ranges;
  EXPECT_OK(calibrate(r.fg, r.samples, CalibAlgorithm::kNormal, &ranges));
  r.plain = r.fg;
  EXPECT_OK(quantize_graph(r.plain, ranges, QuantizeSettings(), nullptr));
  r.corrected = r.plain;
  EXPECT_OK(correct_biases(r.fg, r.corrected, r.samples, &r.deltas));
  return r;
}

const Node& only_node(const Graph& g, OpId op) {
  for (const Node& n : g.nodes)
    if (n.op == op) return n;
  ADD_FAILURE() << "no " << op_name(op) << " node";
  return g.nodes[0];
}

// Checks the claim of the header on a graph whose single compute node writes the output:
// before, every channel's mean error is at least `drift_at_least` (computed by the caller from the
// weights' rounding); after, at most half a bias step plus half an output step.
void expect_drift_removed(const Quantized& q, OpId op, double drift_at_least) {
  const Node& n = only_node(q.corrected, op);
  const Tensor& bias = q.corrected.tensor(n.inputs[2]);
  const Tensor& out = q.corrected.tensor(n.outputs[0]);
  ASSERT_EQ(out.dtype, DType::kI8);
  const double s_y = out.quant.scale[0];
  const std::vector<double> before = mean_error_per_channel(q.fg, q.plain, q.samples);
  const std::vector<double> after = mean_error_per_channel(q.fg, q.corrected, q.samples);
  ASSERT_EQ(before.size(), after.size());
  ASSERT_EQ(q.deltas.count(n.name), 1u);
  for (size_t m = 0; m < after.size(); ++m) {
    // Rounding the correction to the int32 grid leaves at most half a bias step (s_x * s_w[m]) of
    // mean error; rounding the int8 output leaves each value within s_y / 2 of its real value.
    const double bound = 0.5 * bias.quant.scale[m] + 0.5 * s_y;
    EXPECT_GT(std::fabs(before[m]), drift_at_least) << "channel " << m;
    EXPECT_GT(drift_at_least, 4 * bound) << "the test's drift must stand out from the bound";
    EXPECT_LE(std::fabs(after[m]), bound) << "channel " << m << ": before " << before[m];
    EXPECT_NE(q.deltas.at(n.name)[m], 0) << "channel " << m;
  }
}

TEST(BiasCorrection, ConvWeightRoundingDriftIsRemoved) {
  // x [1, 16, 8, 8] in [0, 1) -> Conv(4, 3x3, pad 1) -> y. Each of the 143 rounded weights of a
  // channel loses 0.4 * s; the taps inside the image see inputs of mean 0.5. Along one axis 22 of
  // the 24 (position, tap) pairs of an 8-wide row fall inside, so 143 * (22/24)^2 of a channel's
  // weights read an input on average: the drift is about -0.4 * s * 0.5 * 143 * 0.84 = -24 s.
  B b(13);
  const int64_t cin = 16, cout = 4;
  b.input("x", {1, cin, 8, 8});
  b.init_f32("w", {cout, cin, 3, 3}, biased_weights(cout, cin * 9, 3));
  b.init_f32("b", {cout}, {0.1f, -0.2f, 0.3f, 0.f});
  auto* conv = b.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  B::attr_ints(conv, "pads", {1, 1, 1, 1});
  b.output("y");
  const Quantized q = quantize_both_ways(b, 8);
  // Half of the expected drift leaves room for the sampling of the inputs' mean.
  expect_drift_removed(q, OpId::Conv, 0.5 * kOffset * kScale * 0.5 * 143 * (22.0 / 24) * (22.0 / 24));
}

TEST(BiasCorrection, GemmWeightRoundingDriftIsRemoved) {
  // x [32, 128] in [0, 1) -> Gemm(transB, 8 outputs) -> y: 127 rounded weights per output, each
  // -0.4 * s on an input of mean 0.5: a drift of about -25 s.
  B b(13);
  const int64_t k = 128, n = 8;
  b.input("x", {32, k});
  b.init_f32("w", {n, k}, biased_weights(n, k, 4));
  b.init_f32("b", {n}, std::vector<float>(static_cast<size_t>(n), 0.05f));
  auto* gemm = b.node("Gemm", {"x", "w", "b"}, {"y"}, "fc");
  B::attr_i(gemm, "transB", 1);
  b.output("y");
  const Quantized q = quantize_both_ways(b, 4);
  expect_drift_removed(q, OpId::Gemm, 0.5 * kOffset * kScale * 0.5 * (k - 1));
}

// x [1, 8, 6, 6] -> Conv(2, 3x3, no padding) -> y, weights from biased_weights: each channel's
// 71 rounded weights drift its mean by 71 * 0.4 * 0.5 = 14 s.
B small_conv() {
  B b(13);
  b.input("x", {1, 8, 6, 6});
  b.init_f32("w", {2, 8, 3, 3}, biased_weights(2, 72, 9));
  b.init_f32("b", {2}, {0.f, 0.f});
  b.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  b.output("y");
  return b;
}

TEST(BiasCorrection, DeltasReplayOnAnotherConversion) {
  // apply_bias_deltas gives a second conversion of the same model (another shape set) the same
  // int32 biases as the corrected one.
  const B b = small_conv();
  const Quantized q = quantize_both_ways(b, 4);
  Graph replay = q.plain;
  ASSERT_OK(apply_bias_deltas(replay, q.deltas));
  const Tensor& want = q.corrected.tensor(only_node(q.corrected, OpId::Conv).inputs[2]);
  const Tensor& got = replay.tensor(only_node(replay, OpId::Conv).inputs[2]);
  const Tensor& plain = q.plain.tensor(only_node(q.plain, OpId::Conv).inputs[2]);
  for (int64_t m = 0; m < 2; ++m) {
    EXPECT_EQ(got.const_ptr<int32_t>()[m], want.const_ptr<int32_t>()[m]);
    EXPECT_NE(got.const_ptr<int32_t>()[m], plain.const_ptr<int32_t>()[m]);  // the 14 s drift was corrected
  }
}

TEST(BiasCorrection, AccumulatorBoundIsKept) {
  // A delta that would carry 255 * sum|w_q| + |bias_q| past INT32_MAX leaves that channel's bias
  // as it is (the int8 kernels rely on the bound); the other channel moves.
  const B b = small_conv();
  const Quantized q = quantize_both_ways(b, 2);
  Graph g = q.plain;
  const int32_t* before = g.tensor(only_node(g, OpId::Conv).inputs[2]).const_ptr<int32_t>();
  const int32_t b0 = before[0], b1 = before[1];
  ASSERT_OK(apply_bias_deltas(g, {{"conv", {INT32_MAX - 10, 5}}}));
  const int32_t* after = g.tensor(only_node(g, OpId::Conv).inputs[2]).const_ptr<int32_t>();
  EXPECT_EQ(after[0], b0);
  EXPECT_EQ(after[1], b1 + 5);
}

}  // namespace
}  // namespace orknn::test
