// Bias correction (converter/quant/bias_correction.h): on layers whose int8 weights are all rounded
// the same way, the quantized output's mean per channel drifts from the float one by an amount
// known in advance; after the correction it must be within what the int32 bias step and the int8
// output step can still leave. Adaptive rounding (same header): every weight stays next to w / s,
// and the quantized layer's output error against the float layer, measured here by running both
// graphs, falls on the calibration samples and on held-out ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
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

// Runs the float and the quantized graph on one sample: the first output of each as real values.
void run_both(const Graph& fg, const Graph& qg, const CalibrationSample& s, std::vector<float>* yf,
              std::vector<float>* yq) {
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
  *yf = real_values(fg.tensor(fg.outputs[0]), fr->data(fg.outputs[0]));
  *yq = real_values(qg.tensor(qg.outputs[0]), qr->data(qg.outputs[0]));
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
    std::vector<float> yf, yq;
    run_both(fg, qg, s, &yf, &yq);
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

// x [1, 16, 8, 8] -> Conv(4, 3x3, pad 1) -> y, weights from biased_weights.
B drifting_conv() {
  B b(13);
  const int64_t cin = 16, cout = 4;
  b.input("x", {1, cin, 8, 8});
  b.init_f32("w", {cout, cin, 3, 3}, biased_weights(cout, cin * 9, 3));
  b.init_f32("b", {cout}, {0.1f, -0.2f, 0.3f, 0.f});
  auto* conv = b.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  B::attr_ints(conv, "pads", {1, 1, 1, 1});
  b.output("y");
  return b;
}

TEST(BiasCorrection, ConvWeightRoundingDriftIsRemoved) {
  // drifting_conv on x in [0, 1). Each of the 143 rounded weights of a channel loses 0.4 * s; the
  // taps inside the image see inputs of mean 0.5. Along one axis 22 of the 24 (position, tap) pairs
  // of an 8-wide row fall inside, so 143 * (22/24)^2 of a channel's weights read an input on
  // average: the drift is about -0.4 * s * 0.5 * 143 * 0.84 = -24 s.
  const Quantized q = quantize_both_ways(drifting_conv(), 8);
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

// ---- adaptive rounding ----

// Mean squared difference between the quantized and the float graph's (first) output over the samples.
double output_mse(const Graph& fg, const Graph& qg, const std::vector<CalibrationSample>& samples) {
  double sum = 0.0, count = 0.0;
  for (const CalibrationSample& s : samples) {
    std::vector<float> yf, yq;
    run_both(fg, qg, s, &yf, &yq);
    for (size_t i = 0; i < yq.size(); ++i) sum += (static_cast<double>(yq[i]) - yf[i]) * (yq[i] - yf[i]);
    count += static_cast<double>(yq.size());
  }
  return sum / count;
}

// Quantizes b's float graph (min/max on `samples` uniform samples) with nearest and with adaptive
// rounding and checks: the scales are the same; every adaptively rounded weight is floor or ceil of
// w / s; some weights moved; the output error falls by at least `gain` (a factor) on the
// calibration samples and on held-out ones.
void expect_rounding_helps(const B& b, OpId op, int samples, double gain) {
  Graph fg;
  ASSERT_OK(convert(b, &fg, exact_options()));
  const std::vector<CalibrationSample> calib = uniform_samples(fg, samples, 5);
  const std::vector<CalibrationSample> held_out = uniform_samples(fg, 4, 1001);
  std::map<int, std::pair<float, float>> ranges;
  ASSERT_OK(calibrate(fg, calib, CalibAlgorithm::kNormal, &ranges));
  Graph plain = fg;
  ASSERT_OK(quantize_graph(plain, ranges, QuantizeSettings(), nullptr));
  Graph rounded = plain;
  RoundedWeights applied;
  ASSERT_OK(round_weights_adaptively(fg, rounded, calib, &applied));

  const Node& fn = only_node(fg, op);
  const Tensor& wf = fg.tensor(fn.inputs[1]);
  const Tensor& wp = plain.tensor(only_node(plain, op).inputs[1]);
  const Tensor& wr = rounded.tensor(only_node(rounded, op).inputs[1]);
  ASSERT_EQ(wr.dtype, DType::kI8);
  ASSERT_EQ(wr.quant.scale, wp.quant.scale);
  ASSERT_EQ(applied.count(fn.name), 1u);
  const int64_t channels = static_cast<int64_t>(wr.quant.scale.size());
  const int64_t per_channel = wr.numel() / channels;
  const bool trans = op == OpId::Gemm && fn.attrs.get_int("transB", 0) == 0;  // [K, N]: channel = column
  int moved = 0;
  for (int64_t i = 0; i < wr.numel(); ++i) {
    const int64_t m = trans ? i % channels : i / per_channel;
    const double v = wf.const_ptr<float>()[i] / wr.quant.scale[static_cast<size_t>(m)];
    const int q = wr.const_ptr<int8_t>()[i];
    EXPECT_TRUE(q == std::floor(v) || q == std::ceil(v)) << "weight " << i << ": " << q << " for " << v;
    EXPECT_EQ(applied.at(fn.name)[static_cast<size_t>(i)], q);
    moved += q != wp.const_ptr<int8_t>()[i];
  }
  EXPECT_GT(moved, 0);
  const double calib_before = output_mse(fg, plain, calib), calib_after = output_mse(fg, rounded, calib);
  const double held_before = output_mse(fg, plain, held_out), held_after = output_mse(fg, rounded, held_out);
  EXPECT_LT(calib_after * gain, calib_before) << "calibration samples";
  EXPECT_LT(held_after * gain, held_before) << "held-out samples";
}

TEST(AdaptiveRounding, ConvOutputErrorFalls) {
  // drifting_conv on x in [0, 1): nearest rounding leaves each channel's 143 rounded weights 0.4
  // steps low (a drift of about -24 s on inputs of mean 0.5); rounding some of them up instead
  // cancels most of it.
  expect_rounding_helps(drifting_conv(), OpId::Conv, 8, 2.0);
}

TEST(AdaptiveRounding, RandomConvWeightsAndGemm) {
  // Weights off the grid in no particular way (uniform), a Conv of 2 groups and a Gemm
  // [K, N]: the greedy choice still lowers the output error, on held-out inputs too.
  {
    B b(13);
    b.input("x", {1, 8, 10, 10});
    b.init_f32("w", {8, 4, 3, 3}, random_floats(8 * 4 * 9, 21, -1.f, 1.f));
    b.init_f32("b", {8}, random_floats(8, 22, -0.1f, 0.1f));
    auto* conv = b.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
    B::attr_i(conv, "group", 2);
    b.output("y");
    expect_rounding_helps(b, OpId::Conv, 8, 1.05);
  }
  {
    B b(13);
    b.input("x", {64, 96});
    b.init_f32("w", {96, 6}, random_floats(96 * 6, 23, -1.f, 1.f));
    b.init_f32("b", {6}, random_floats(6, 24, -0.1f, 0.1f));
    b.node("Gemm", {"x", "w", "b"}, {"y"}, "fc");
    b.output("y");
    expect_rounding_helps(b, OpId::Gemm, 4, 1.05);
  }
}

TEST(AdaptiveRounding, WeightsReplayOnAnotherConversion) {
  const B b = small_conv();
  Graph fg;
  ASSERT_OK(convert(b, &fg, exact_options()));
  const std::vector<CalibrationSample> calib = uniform_samples(fg, 4, 5);
  std::map<int, std::pair<float, float>> ranges;
  ASSERT_OK(calibrate(fg, calib, CalibAlgorithm::kNormal, &ranges));
  Graph plain = fg;
  ASSERT_OK(quantize_graph(plain, ranges, QuantizeSettings(), nullptr));
  Graph rounded = plain, replay = plain;
  RoundedWeights applied;
  ASSERT_OK(round_weights_adaptively(fg, rounded, calib, &applied));
  ASSERT_OK(apply_rounded_weights(replay, applied));
  const Tensor& want = rounded.tensor(only_node(rounded, OpId::Conv).inputs[1]);
  const Tensor& got = replay.tensor(only_node(replay, OpId::Conv).inputs[1]);
  ASSERT_EQ(want.numel(), got.numel());
  EXPECT_EQ(0, std::memcmp(want.const_ptr<int8_t>(), got.const_ptr<int8_t>(), static_cast<size_t>(want.numel())));
}

// ---- ranges that end where activations saturate (narrow_saturated_ranges, --clip-saturated) ----

// Calibrated (min/max) ranges of b's float graph on 4 samples uniform in [-8, 8).
struct Calibrated {
  Graph fg;
  std::vector<CalibrationSample> samples;
  std::map<int, std::pair<float, float>> ranges;
};
Calibrated calibrate_wide(const B& b) {
  Calibrated c;
  EXPECT_OK(convert(b, &c.fg, exact_options()));
  c.samples.resize(4);
  for (size_t i = 0; i < c.samples.size(); ++i)
    c.samples[i].inputs.push_back(random_floats(static_cast<size_t>(c.fg.tensor(c.fg.inputs[0].tensor).numel()),
                                                40 + static_cast<uint32_t>(i), -8.f, 8.f));
  EXPECT_OK(calibrate(c.fg, c.samples, CalibAlgorithm::kNormal, &c.ranges));
  return c;
}

std::pair<float, float> range_of(const Calibrated& c, const std::map<int, std::pair<float, float>>& r,
                                 const char* name) {
  for (const auto& [id, range] : r)
    if (c.fg.tensor(id).name == name) return range;
  ADD_FAILURE() << "no range for " << name;
  return {0.f, 0.f};
}

TEST(ClipSaturated, RangesEndWhereTheirReadersSaturate) {
  // x -> HardSwish -> a, x -> Relu -> r, h = x + 1 -> HardSwish -> b, h -> Relu -> c,
  // p = x - 1 -> HardSigmoid(alpha 0.25, beta 0.5) -> s.
  B b(13);
  b.input("x", {1, 4, 8, 8});
  b.init_f32("one", {1}, {1.f});
  b.node("HardSwish", {"x"}, {"a"}, "hswish_x");
  b.node("Add", {"x", "one"}, {"h"}, "add");
  b.node("HardSwish", {"h"}, {"b"}, "hswish_h");
  b.node("Relu", {"h"}, {"c"}, "relu_h");
  b.node("Sub", {"x", "one"}, {"p"}, "sub");
  auto* hs = b.node("HardSigmoid", {"p"}, {"s"}, "hsig");
  B::attr_f(hs, "alpha", 0.25f);
  B::attr_f(hs, "beta", 0.5f);
  for (const char* out : {"a", "b", "c", "s"}) b.output(out);
  const Calibrated c = calibrate_wide(b);
  std::map<int, std::pair<float, float>> narrowed = c.ranges;
  // x: Add and Sub read every value. h: HardSwish (from -3) and Relu (from 0): from -3.
  // p: HardSigmoid, constant outside [-2, 2]. The outputs keep theirs.
  EXPECT_EQ(narrow_saturated_ranges(c.fg, &narrowed), 2);
  EXPECT_EQ(range_of(c, narrowed, "x"), range_of(c, c.ranges, "x"));
  ASSERT_LT(range_of(c, c.ranges, "h").first, -6.f);
  EXPECT_EQ(range_of(c, narrowed, "h"), std::make_pair(-3.f, range_of(c, c.ranges, "h").second));
  ASSERT_LT(range_of(c, c.ranges, "p").first, -8.f);
  ASSERT_GT(range_of(c, c.ranges, "p").second, 6.f);
  EXPECT_EQ(range_of(c, narrowed, "p"), std::make_pair(-2.f, 2.f));
  for (const char* out : {"a", "b", "c", "s"}) EXPECT_EQ(range_of(c, narrowed, out), range_of(c, c.ranges, out));
}

TEST(ClipSaturated, SaturatingInputsGetAFinerGrid) {
  // x in [-8, 8) -> HardSigmoid(alpha 0.25, beta 0.5) -> s: the input's range [-8, 8] becomes
  // [-2, 2], a step 4x finer where the output changes; the output is the same function of it.
  B b(13);
  b.input("x", {1, 4, 8, 8});
  auto* hs = b.node("HardSigmoid", {"x"}, {"s"}, "hsig");
  B::attr_f(hs, "alpha", 0.25f);
  B::attr_f(hs, "beta", 0.5f);
  b.output("s");
  const Calibrated c = calibrate_wide(b);
  std::map<int, std::pair<float, float>> narrowed = c.ranges;
  ASSERT_EQ(narrow_saturated_ranges(c.fg, &narrowed), 1);
  Graph plain = c.fg, clipped = c.fg;
  ASSERT_OK(quantize_graph(plain, c.ranges, QuantizeSettings(), nullptr));
  ASSERT_OK(quantize_graph(clipped, narrowed, QuantizeSettings(), nullptr));
  EXPECT_LT(output_mse(c.fg, clipped, c.samples), 0.5 * output_mse(c.fg, plain, c.samples));
}

}  // namespace
}  // namespace orknn::test
