// Calibration observers and the INT8 parameter formulas (docs/numerics.md, "Calibration
// (converter)"): known distributions, hand-computed parameters, weight quantization round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "converter/quant/observer.h"
#include "testutil/op_harness.h"
#include "testutil/status_assert.h"

namespace orknn {
namespace {

// Feeds `data` in `chunks` pieces per pass (as calibration feeds one sample at a time).
std::pair<float, float> observe_all(CalibAlgorithm alg, const std::vector<float>& data, size_t chunks = 4,
                                    bool kl_keep_tails = false) {
  Observer o(alg, kl_keep_tails);
  for (int pass = 0; pass < o.passes(); ++pass) {
    const size_t step = (data.size() + chunks - 1) / chunks;
    for (size_t start = 0; start < data.size(); start += step)
      o.observe(data.data() + start, std::min(step, data.size() - start));
    o.end_pass();
  }
  std::pair<float, float> r;
  o.range(&r.first, &r.second);
  return r;
}

// The spec's quantize -> dequantize, written here independently of the code under test.
float fake_quant(float x, float scale, int32_t zp) {
  float q = std::nearbyint(x / scale) + static_cast<float>(zp);
  q = std::min(127.f, std::max(-128.f, q));
  return (q - static_cast<float>(zp)) * scale;
}

// Mean squared quantization error of `data` with the range [lo, hi], parameters per the spec:
// scale = (hi - lo) / 255, zp = rne(-128 - lo / scale).
double mse_of_range(const std::vector<float>& data, float lo, float hi) {
  lo = std::min(lo, 0.f);
  hi = std::max(hi, 0.f);
  const float scale = (hi - lo) / 255.f;
  const int32_t zp = static_cast<int32_t>(std::nearbyint(-128.f - lo / scale));
  double e = 0.0;
  for (float x : data) {
    const double d = fake_quant(x, scale, zp) - x;
    e += d * d;
  }
  return e / static_cast<double>(data.size());
}

std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

const CalibAlgorithm kAll[] = {CalibAlgorithm::kNormal, CalibAlgorithm::kKl, CalibAlgorithm::kMmse};

TEST(CalibAlgorithmName, ParsesTheThreeAndTheVendorAlias) {
  CalibAlgorithm a;
  ASSERT_OK(parse_calib_algorithm("normal", &a));
  EXPECT_EQ(a, CalibAlgorithm::kNormal);
  ASSERT_OK(parse_calib_algorithm("KL", &a));
  EXPECT_EQ(a, CalibAlgorithm::kKl);
  ASSERT_OK(parse_calib_algorithm("kl_divergence", &a));
  EXPECT_EQ(a, CalibAlgorithm::kKl);
  ASSERT_OK(parse_calib_algorithm("mmse", &a));
  EXPECT_EQ(a, CalibAlgorithm::kMmse);
  Status st = parse_calib_algorithm("minmax", &a);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("minmax"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("normal, kl or mmse"), std::string::npos) << st.message();
}

TEST(Observer, NormalIsMinMaxOverEverySample) {
  std::vector<float> v = test::random_floats(10000, 1, -0.7f, 2.3f);
  v[1234] = -3.5f;  // one extreme in a later "sample"
  v[9876] = 4.25f;
  auto r = observe_all(CalibAlgorithm::kNormal, v, 7);
  EXPECT_EQ(r.first, -3.5f);
  EXPECT_EQ(r.second, 4.25f);
}

TEST(Observer, UniformKeepsNearlyTheWholeRange) {
  const std::vector<float> v = test::random_floats(200000, 2, -1.f, 1.f);
  const float mn = *std::min_element(v.begin(), v.end()), mx = *std::max_element(v.begin(), v.end());
  for (CalibAlgorithm alg : kAll) {
    auto r = observe_all(alg, v);
    SCOPED_TRACE(calib_algorithm_name(alg));
    EXPECT_GE(r.first, mn);
    EXPECT_LE(r.second, mx);
    // Clipping a uniform distribution costs more than it gains at 8 bits.
    EXPECT_LE(r.first, 0.9f * mn);
    EXPECT_GE(r.second, 0.9f * mx);
  }
}

TEST(Observer, GaussianWithOutliersKlAndMmseClipTheOutliers) {
  std::vector<float> v = gaussian(1000000, 3);
  v[10] = 60.f;  // two outliers among a million values
  v[20] = -60.f;
  auto normal = observe_all(CalibAlgorithm::kNormal, v);
  EXPECT_EQ(normal.first, -60.f);
  EXPECT_EQ(normal.second, 60.f);

  auto kl = observe_all(CalibAlgorithm::kKl, v);
  EXPECT_GT(kl.second, 2.f);  // keeps the bulk (a few sigma)
  EXPECT_LT(kl.second, 12.f);
  EXPECT_LT(kl.first, -2.f);
  EXPECT_GT(kl.first, -12.f);

  auto mmse = observe_all(CalibAlgorithm::kMmse, v);
  EXPECT_GT(mmse.second, 2.f);
  EXPECT_LT(mmse.second, 30.f);
  EXPECT_LT(mmse.first, -2.f);
  EXPECT_GT(mmse.first, -30.f);
  // Measured on the data itself with the spec's formulas, the chosen range beats min/max.
  const double e_minmax = mse_of_range(v, normal.first, normal.second);
  const double e_mmse = mse_of_range(v, mmse.first, mmse.second);
  EXPECT_LT(e_mmse, 0.5 * e_minmax) << e_mmse << " vs " << e_minmax;
}

TEST(Observer, MmseIsNearTheBestOfAFineSweep) {
  // A one-sided heavy-tailed distribution (|laplace|-like): the sweep written here over hi in
  // steps of 0.5% finds the best range; the observer must be within 2% of its error.
  std::mt19937 rng(4);
  std::exponential_distribution<float> d(1.f);
  std::vector<float> v(300000);
  for (float& x : v) x = d(rng);
  const float mx = *std::max_element(v.begin(), v.end());
  double best = std::numeric_limits<double>::infinity();
  for (int k = 1; k <= 200; ++k) best = std::min(best, mse_of_range(v, 0.f, mx * k / 200.f));
  auto r = observe_all(CalibAlgorithm::kMmse, v);
  EXPECT_EQ(r.first, 0.f);
  EXPECT_LT(r.second, mx);
  EXPECT_LE(mse_of_range(v, r.first, r.second), best * 1.02);
}

TEST(Observer, KlIsNotFooledBySpikesOrNarrowDistributions) {
  // ReLU output shifted by a bias: half the values sit on one spike at 0.75 and the rest above it.
  // Folding everything above the spike into it would look lossless to the divergence alone.
  std::vector<float> v = gaussian(200000, 8);
  for (float& x : v) x = std::max(x, 0.f) + 0.75f;
  auto r = observe_all(CalibAlgorithm::kKl, v);
  EXPECT_GT(r.second, 3.5f);  // max is about 5.2; a few sigma above the spike are kept
  // A narrow distribution far from 0 (mean 3, sd 0.2): the range must keep its bulk.
  v = gaussian(200000, 9, 0.2f);
  for (float& x : v) x += 3.f;
  r = observe_all(CalibAlgorithm::kKl, v);
  EXPECT_GT(r.second, 3.4f);
  // A ReLU's zeros (half the values) do not pull the threshold down.
  v = gaussian(200000, 10);
  for (float& x : v) x = std::max(x, 0.f);
  r = observe_all(CalibAlgorithm::kKl, v);
  EXPECT_GT(r.second, 3.f);
}

TEST(Observer, KlKeepTailsKeepsALongTailThatCarriesSignal) {
  // SiLU outputs of channels whose pre-activation scales differ (0.3 to 3, as in efficientnet):
  // a long positive tail of few values that carry much of the energy. With kl_keep_tails,
  // numerics.md's rule lets a threshold T clip at most 1e-4 of the energy, sum over |x| > T of
  // (|x| - T)^2 against sum x^2 (unless it clips at most 1e-5 of the values). Computed here on the
  // values themselves, where the observer uses bin centres (bins of max/2048): 1.5e-4 leaves room
  // for that. Without the option (the 1% count rule alone) kl clips more than that.
  std::vector<float> v = gaussian(400000, 12);
  for (size_t i = 0; i < v.size(); ++i) {
    const float x = v[i] * (0.3f + 2.7f * static_cast<float>((i / 1000) % 97) / 96.f);
    v[i] = x / (1.f + std::exp(-x));
  }
  auto clipped_share = [&](std::pair<float, float> r, size_t* count) {
    double clipped = 0.0, energy = 0.0;
    *count = 0;
    for (float x : v) {
      energy += static_cast<double>(x) * x;
      const double over = std::fabs(x) - (x < 0 ? -r.first : r.second);
      if (over > 0) {
        clipped += over * over;
        ++*count;
      }
    }
    return clipped / energy;
  };
  size_t count = 0;
  const auto kept = observe_all(CalibAlgorithm::kKl, v, 4, true);
  EXPECT_LE(clipped_share(kept, &count), 1.5e-4) << "range " << kept.first << " " << kept.second;
  EXPECT_GT(count, 4u) << "clips more than isolated outliers, so the energy rule applies";
  const auto plain = observe_all(CalibAlgorithm::kKl, v);
  EXPECT_GT(clipped_share(plain, &count), 1.5e-4) << "without the option the tail is clipped";
  EXPECT_LT(plain.second, kept.second);
}

TEST(Observer, AllZeroGivesAnEmptyRange) {
  const std::vector<float> v(1000, 0.f);
  for (CalibAlgorithm alg : kAll) {
    auto r = observe_all(alg, v);
    EXPECT_EQ(r.first, 0.f) << calib_algorithm_name(alg);
    EXPECT_EQ(r.second, 0.f) << calib_algorithm_name(alg);
  }
}

TEST(Observer, ConstantKeepsTheConstant) {
  for (float c : {2.5f, -1.5f}) {
    const std::vector<float> v(5000, c);
    for (CalibAlgorithm alg : kAll) {
      auto r = observe_all(alg, v);
      SCOPED_TRACE(std::string(calib_algorithm_name(alg)) + " c=" + std::to_string(c));
      EXPECT_EQ(r.first, std::min(c, 0.f));
      EXPECT_EQ(r.second, std::max(c, 0.f));
    }
  }
}

TEST(Observer, OneSidedStaysOneSided) {
  std::vector<float> v = gaussian(100000, 5);
  for (float& x : v) x = std::max(x, 0.f);  // ReLU output
  const float mx = *std::max_element(v.begin(), v.end());
  for (CalibAlgorithm alg : kAll) {
    auto r = observe_all(alg, v);
    SCOPED_TRACE(calib_algorithm_name(alg));
    EXPECT_EQ(r.first, 0.f);
    EXPECT_GT(r.second, 2.f);
    EXPECT_LE(r.second, mx);
  }
  EXPECT_EQ(observe_all(CalibAlgorithm::kNormal, v).second, mx);
  // All negative: the range ends at 0.
  for (float& x : v) x = -x - 0.5f;
  for (CalibAlgorithm alg : kAll) {
    auto r = observe_all(alg, v);
    SCOPED_TRACE(calib_algorithm_name(alg));
    EXPECT_EQ(r.second, 0.f);
    EXPECT_LT(r.first, -2.f);
  }
}

TEST(Observer, NonFiniteValuesAreSkipped) {
  std::vector<float> v = {1.f, std::nanf(""), -2.f, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), 0.5f};
  for (CalibAlgorithm alg : kAll) {
    Observer o(alg);
    for (int pass = 0; pass < o.passes(); ++pass) {
      o.observe(v.data(), v.size());
      o.end_pass();
    }
    float lo, hi;
    o.range(&lo, &hi);
    SCOPED_TRACE(calib_algorithm_name(alg));
    EXPECT_TRUE(std::isfinite(lo) && std::isfinite(hi));
    EXPECT_GE(lo, -2.f);
    EXPECT_LE(hi, 1.f);
    EXPECT_EQ(o.nonfinite(), 3u);
  }
  EXPECT_EQ(observe_all(CalibAlgorithm::kNormal, v, 1), std::make_pair(-2.f, 1.f));
}

TEST(ActivationQParams, HandComputedCases) {
  float s;
  int32_t zp;
  activation_qparams(0.f, 255.f, &s, &zp);  // one-sided: 0 -> -128
  EXPECT_EQ(s, 1.f);
  EXPECT_EQ(zp, -128);
  activation_qparams(-1.f, 1.55f, &s, &zp);  // s = 0.01, -128 + 100 = -28
  EXPECT_EQ(s, 2.55f / 255.f);
  EXPECT_EQ(zp, -28);
  activation_qparams(-127.5f, 127.5f, &s, &zp);  // s = 1, -128 + 127.5 = -0.5: ties to even -> 0
  EXPECT_EQ(s, 1.f);
  EXPECT_EQ(zp, 0);
  activation_qparams(-126.5f, 128.5f, &s, &zp);  // -1.5 -> -2
  EXPECT_EQ(zp, -2);
  activation_qparams(-2.f, 0.f, &s, &zp);  // all negative: 0 -> 127
  EXPECT_EQ(s, 2.f / 255.f);
  EXPECT_EQ(zp, 127);
  activation_qparams(1.f, 3.f, &s, &zp);  // 0 is included: [0, 3]
  EXPECT_EQ(s, 3.f / 255.f);
  EXPECT_EQ(zp, -128);
  activation_qparams(-3.f, -1.f, &s, &zp);  // [-3, 0]
  EXPECT_EQ(s, 3.f / 255.f);
  EXPECT_EQ(zp, 127);
  activation_qparams(-51.f, 204.f, &s, &zp);  // scale 1, zp = -128 + 51 = -77
  EXPECT_EQ(s, 1.f);
  EXPECT_EQ(zp, -77);
  activation_qparams(-0.5f, 1.5f, &s, &zp);  // s = 2/255; -128 + 63.75 = -64.25 -> -64
  EXPECT_EQ(s, 2.f / 255.f);
  EXPECT_EQ(zp, -64);
  // Zero range: scale 1, 0 maps to -128.
  activation_qparams(0.f, 0.f, &s, &zp);
  EXPECT_EQ(s, 1.f);
  EXPECT_EQ(zp, -128);
  activation_qparams(std::nanf(""), std::nanf(""), &s, &zp);
  EXPECT_EQ(s, 1.f);
  EXPECT_EQ(zp, -128);
}

TEST(ActivationQParams, ZeroIsExactlyRepresentableAndTheRangeIsCovered) {
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> d(-10.f, 10.f);
  for (int k = 0; k < 2000; ++k) {
    float lo = d(rng), hi = d(rng);
    if (lo > hi) std::swap(lo, hi);
    float s;
    int32_t zp;
    activation_qparams(lo, hi, &s, &zp);
    ASSERT_GT(s, 0.f);
    ASSERT_GE(zp, -128);
    ASSERT_LE(zp, 127);
    EXPECT_EQ(fake_quant(0.f, s, zp), 0.f);
    const float l = std::min(lo, 0.f), h = std::max(hi, 0.f);
    // The ends are representable to within one step (the zero point is rounded).
    EXPECT_LE(std::fabs(fake_quant(l, s, zp) - l), s * 1.001f);
    EXPECT_LE(std::fabs(fake_quant(h, s, zp) - h), s * 1.001f);
  }
}

Tensor weight(const std::string& name, const Shape& shape, const std::vector<float>& v) {
  Graph g;
  int id = g.add_const(name, shape, DType::kF32, v.data(), v.size() * sizeof(float));
  return g.tensor(id);  // shares the constant's bytes
}

TEST(QuantizeWeights, PerChannelHandCase) {
  // [3 channels, 3], axis 0.
  const std::vector<float> w = {2.54f, -1.0f, 0.5f,   // max 2.54 -> s = 0.02
                                0.f,   0.f,   0.f,    // all zero -> s = 1
                                -3.81f, 1.8f, 0.01f}; // max 3.81 -> s = 0.03
  Tensor t = weight("w", {3, 3}, w);
  std::vector<int8_t> q;
  QuantParams p;
  ASSERT_OK(quantize_weights(t, 0, &q, &p));
  ASSERT_EQ(p.scale.size(), 3u);
  EXPECT_EQ(p.scale[0], 2.54f / 127.f);
  EXPECT_EQ(p.scale[1], 1.f);
  EXPECT_EQ(p.scale[2], 3.81f / 127.f);
  EXPECT_EQ(p.zero_point, std::vector<int32_t>({0, 0, 0}));
  EXPECT_EQ(p.axis, 0);
  EXPECT_EQ(q, std::vector<int8_t>({127, -50, 25, 0, 0, 0, -127, 60, 0}));
}

TEST(QuantizeWeights, InnerAxisAndPerTensor) {
  // [2, 2, 2] with channel axis 1: channel 0 = {w[0,0,:], w[1,0,:]}, channel 1 = {w[0,1,:], w[1,1,:]}.
  const std::vector<float> w = {1.27f, 0.f, 0.254f, -0.1f, -0.6f, 0.381f, 0.f, 0.0254f};
  Tensor t = weight("w", {2, 2, 2}, w);
  std::vector<int8_t> q;
  QuantParams p;
  ASSERT_OK(quantize_weights(t, 1, &q, &p));
  ASSERT_EQ(p.scale.size(), 2u);
  EXPECT_EQ(p.scale[0], 1.27f / 127.f);   // channel 0 max: 1.27
  EXPECT_EQ(p.scale[1], 0.254f / 127.f);  // channel 1 max: 0.254
  EXPECT_EQ(p.axis, 1);
  EXPECT_EQ(q, std::vector<int8_t>({127, 0, 127, -50, -60, 38, 0, 13}));
  ASSERT_OK(quantize_weights(t, -1, &q, &p));
  ASSERT_EQ(p.scale.size(), 1u);
  EXPECT_EQ(p.scale[0], 1.27f / 127.f);
  EXPECT_EQ(p.axis, -1);
  EXPECT_EQ(p.zero_point, std::vector<int32_t>({0}));
  EXPECT_EQ(q, std::vector<int8_t>({127, 0, 25, -10, -60, 38, 0, 3}));
}

TEST(QuantizeWeights, RoundTripWithinHalfAStep) {
  // Conv-like [8, 4, 3, 3], per output channel, channels of very different magnitude.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> w(8 * 4 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = d(rng) * std::pow(10.f, static_cast<float>(i / 36) - 4.f);
  Tensor t = weight("conv.w", {8, 4, 3, 3}, w);
  for (int axis : {0, 1, -1}) {
    std::vector<int8_t> q;
    QuantParams p;
    ASSERT_OK(quantize_weights(t, axis, &q, &p));
    ASSERT_EQ(q.size(), w.size());
    const int64_t inner = axis == 0 ? 36 : 9, channels = axis == 0 ? 8 : (axis == 1 ? 4 : 1);
    for (size_t i = 0; i < w.size(); ++i) {
      const size_t c = axis < 0 ? 0 : static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
      const float s = p.scale[c];
      ASSERT_GE(q[i], -127);
      ASSERT_LE(q[i], 127);
      EXPECT_LE(std::fabs(static_cast<float>(q[i]) * s - w[i]), s * 0.5f * 1.0001f) << "axis " << axis << " i " << i;
    }
    // Per channel, the largest magnitude maps to +-127.
    for (size_t c = 0; c < p.scale.size(); ++c) {
      int m = 0;
      for (size_t i = 0; i < w.size(); ++i)
        if (axis < 0 || static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels) == c) m = std::max(m, std::abs(int(q[i])));
      EXPECT_EQ(m, 127) << "axis " << axis << " channel " << c;
    }
  }
}

TEST(QuantizeWeights, Errors) {
  std::vector<int8_t> q;
  QuantParams p;
  Tensor t = weight("w", {2, 3}, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  Status st = quantize_weights(t, 2, &q, &p);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'w'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("axis 2"), std::string::npos) << st.message();
  Tensor nan = weight("nan_w", {2}, {1.f, std::nanf("")});
  st = quantize_weights(nan, -1, &q, &p);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nan_w"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("element 1"), std::string::npos) << st.message();
  Tensor act;
  act.name = "x";
  act.shape = {2};
  st = quantize_weights(act, -1, &q, &p);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("constant"), std::string::npos) << st.message();
}

TEST(WeightScale, ZeroAndTiny) {
  EXPECT_EQ(weight_scale_symmetric(0.f), 1.f);
  EXPECT_EQ(weight_scale_symmetric(1e-20f), 1.f);
  EXPECT_EQ(weight_scale_symmetric(12.7f), 12.7f / 127.f);
}

}  // namespace
}  // namespace orknn
