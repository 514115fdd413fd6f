// Quantized (INT8) MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool: hand-computed cases
// (requantized maximum, padding never wins, count_include_pad both ways, ties at .5), a naive
// window loop with the formulas of docs/numerics.md written out here, and the error paths.
#include "ops/int8_test_helpers.h"
#include "ops/ref_test_helpers.h"
#include "testutil/cpu.h"

namespace orknn::test {
namespace {
using namespace reft;
using namespace q8t;

OpResult run_pool(OpId op, const Attrs& attrs, const TensorData& x, const QuantParams& qy, int n_out = 1) {
  std::vector<QuantParams> oq = {qy};
  return run_op(op, attrs, {x}, n_out, "ref", 1, oq);
}

// ---- MaxPool ----

const std::vector<int8_t> kGrid = {-100, 20, -5, 7, -128, 90, 3, 4, 127};

TEST(QuantMaxPoolRef, SameParamsCopiesTheMaximum) {
  const QuantParams q = qp(0.1f, 5);
  OpResult r = run_pool(OpId::MaxPool, A().ints("kernel_shape", {2, 2}), q8({1, 1, 3, 3}, kGrid, q), q);
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
  EXPECT_EQ(r.outputs[0].shape, (Shape{1, 1, 2, 2}));
  EXPECT_TRUE(same_params(r.outputs[0].quant, q));
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{20, 90, 7, 127}));
}

TEST(QuantMaxPoolRef, DifferentParamsRequantizeTheMaximum) {
  // M = 0.1 / 0.2 = 0.5: y = rne((m - 5) * 0.5) - 3
  // 20 -> 7.5 -> 8 -> 5;  90 -> 42.5 -> 42 (tie, even) -> 39;  7 -> 1 -> -2;  127 -> 61 -> 58
  OpResult r = run_pool(OpId::MaxPool, A().ints("kernel_shape", {2, 2}), q8({1, 1, 3, 3}, kGrid, qp(0.1f, 5)),
                        qp(0.2f, -3));
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{5, 39, -2, 58}));
}

TEST(QuantMaxPoolRef, PaddingNeverWins) {
  // Every value is below the zero point (negative reals); windows [-1, 0], [1, 2], [3, 4].
  const QuantParams q = qp(0.5f, 5);
  OpResult r = run_pool(OpId::MaxPool, A().ints("kernel_shape", {2}).ints("strides", {2}).ints("pads", {1, 1}),
                        q8({1, 1, 4}, {-100, -90, -80, -70}, q), q);
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{-100, -80, -70}));
}

TEST(QuantGlobalMaxPoolRef, SameAndDifferentParams) {
  const QuantParams qx = qp(0.5f, 3);
  const TensorData x = q8({1, 2, 2, 2}, {7, 4, -1, 10, 3, 3, 4, 5}, qx);
  OpResult r = run_pool(OpId::GlobalMaxPool, A(), x, qx);
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].shape, (Shape{1, 2, 1, 1}));
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{10, 5}));
  // M = 2: (10 - 3) * 2 = 14 -> 12;  (5 - 3) * 2 = 4 -> 2
  r = run_pool(OpId::GlobalMaxPool, A(), x, qp(0.25f, -2));
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{12, 2}));
}

// ---- AveragePool ----

// x - zp_x = [4, 1, -4, 7]; kernel 3, pads 1: windows {0,1}, {0,1,2}, {1,2,3}, {2,3};
// acc = 5, 1, 4, 3; ratio s_x / s_y = 2, zp_y = -2.
TEST(QuantAveragePoolRef, CountIncludePadBothWays) {
  const TensorData x = q8({1, 1, 4}, {7, 4, -1, 10}, qp(0.5f, 3));
  const A base = A().ints("kernel_shape", {3}).ints("pads", {1, 1});
  // count 2, 3, 3, 2: 5 * 1 = 5 -> 3;  1 * 2/3 -> 1 -> -1;  4 * 2/3 = 2.67 -> 3 -> 1;  3 * 1 = 3 -> 1
  OpResult r = run_pool(OpId::AveragePool, A(base).i("count_include_pad", 0), x, qp(0.25f, -2));
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{3, -1, 1, 1}));
  // count 3 everywhere: 5 * 2/3 = 3.33 -> 3 -> 1;  -1;  1;  3 * 2/3 = 2 -> 0
  r = run_pool(OpId::AveragePool, A(base).i("count_include_pad", 1), x, qp(0.25f, -2));
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{1, -1, 1, 0}));
}

TEST(QuantAveragePoolRef, TiesRoundToEven) {
  // Same parameters, kernel 2: sums 3, 7, -3, -7, 5 halve to 1.5, 3.5, -1.5, -3.5, 2.5.
  const QuantParams q = qp(0.5f, 0);
  OpResult r = run_pool(OpId::AveragePool, A().ints("kernel_shape", {2}).ints("strides", {2}),
                        q8({1, 1, 10}, {1, 2, 3, 4, -1, -2, -3, -4, 5, 0}, q), q);
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{2, 4, -2, -4, 2}));
}

TEST(QuantGlobalAveragePoolRef, HandValues) {
  // count 4, Mc = 2 / 4 = 0.5: c0 acc 8 -> 4 -> 2;  c1 acc 3 -> 1.5 -> 2 -> 0
  const TensorData x = q8({1, 2, 2, 2}, {7, 4, -1, 10, 3, 3, 4, 5}, qp(0.5f, 3));
  OpResult r = run_pool(OpId::GlobalAveragePool, A(), x, qp(0.25f, -2));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{2, 0}));
}

TEST(QuantGlobalAveragePoolRef, SaturatesAndMatchesFormula) {
  // Large ratio: every mean saturates; then a random plane against the formula.
  const TensorData x = q8({1, 2, 1, 3}, {127, 120, 100, -128, -120, -100}, qp(1.f, 0));
  OpResult r = run_pool(OpId::GlobalAveragePool, A(), x, qp(0.1f, 7));
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{127, -128}));

  const std::vector<int8_t> v = random_i8(2 * 3 * 7 * 5, 77);
  const QuantParams qx = qp(0.0173f, -9), qy = qp(0.0071f, 13);
  r = run_pool(OpId::GlobalAveragePool, A(), q8({2, 3, 7, 5}, v, qx), qy);
  ASSERT_OK(r.status);
  const std::vector<int8_t> got = out_i8(r);
  for (int p = 0; p < 6; ++p) {
    int acc = 0;
    for (int i = 0; i < 35; ++i) acc += v[static_cast<size_t>(p * 35 + i)] - qx.zero_point[0];
    const float mc = (qx.scale[0] / qy.scale[0]) / 35.f;
    EXPECT_EQ(got[static_cast<size_t>(p)], rne_zp_naive(static_cast<float>(acc) * mc, qy.zero_point[0])) << p;
  }
}

// ---- 2-D windows against a naive loop ----

struct Pool2d {
  int64_t kh, kw, sh, sw, pt, pl, pb, pr, ceil, include_pad, dh = 1, dw = 1;
};

// Output size of one dim (ONNX, explicit pads).
int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t d, bool ceil_mode) {
  const int64_t span = in + p0 + p1 - ((k - 1) * d + 1);
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p0) --o;
  return o;
}

std::vector<int8_t> naive_pool(bool is_max, const std::vector<int8_t>& x, int64_t planes, int64_t H, int64_t W,
                               const Pool2d& c, const QuantParams& qx, const QuantParams& qy, int64_t* oh_out,
                               int64_t* ow_out) {
  const int64_t OH = out_dim(H, c.kh, c.sh, c.pt, c.pb, c.dh, c.ceil != 0);
  const int64_t OW = out_dim(W, c.kw, c.sw, c.pl, c.pr, c.dw, c.ceil != 0);
  *oh_out = OH;
  *ow_out = OW;
  const int zx = qx.zero_point[0], zy = qy.zero_point[0];
  const float ratio = qx.scale[0] / qy.scale[0];
  const bool same = qx.scale == qy.scale && qx.zero_point == qy.zero_point;
  std::vector<int8_t> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int acc = 0, count = 0, best = -1000;
        for (int64_t i = 0; i < c.kh; ++i)
          for (int64_t j = 0; j < c.kw; ++j) {
            const int64_t h = oh * c.sh - c.pt + i * c.dh, w = ow * c.sw - c.pl + j * c.dw;
            const bool in = h >= 0 && h < H && w >= 0 && w < W;
            const bool in_padded = h >= -c.pt && h < H + c.pb && w >= -c.pl && w < W + c.pr;
            if (in) {
              const int v = x[static_cast<size_t>((p * H + h) * W + w)];
              acc += v - zx;
              if (v > best) best = v;
            }
            if (c.include_pad ? in_padded : in) ++count;
          }
        if (is_max) {
          if (best == -1000)
            y.push_back(-128);
          else
            y.push_back(same ? static_cast<int8_t>(best) : rne_zp_naive(static_cast<float>(best - zx) * ratio, zy));
        } else {
          if (count == 0) {
            y.push_back(sat8_naive(zy));
          } else {
            const float mc = ratio / static_cast<float>(count);
            y.push_back(rne_zp_naive(static_cast<float>(acc) * mc, zy));
          }
        }
      }
  return y;
}

A pool_attrs(const Pool2d& c) {
  return A()
      .ints("kernel_shape", {c.kh, c.kw})
      .ints("strides", {c.sh, c.sw})
      .ints("pads", {c.pt, c.pl, c.pb, c.pr})
      .ints("dilations", {c.dh, c.dw})
      .i("ceil_mode", c.ceil);
}

TEST(QuantWindowPoolRef, MatchesNaiveLoop) {
  const std::vector<Pool2d> configs = {
      {2, 2, 2, 2, 0, 0, 0, 0, 0, 0},        {3, 3, 1, 1, 1, 1, 1, 1, 0, 0},
      {3, 3, 1, 1, 1, 1, 1, 1, 0, 1},        {3, 2, 2, 1, 1, 0, 2, 1, 0, 1},
      {2, 2, 2, 2, 0, 0, 0, 0, 1, 0},        {2, 2, 2, 2, 0, 0, 0, 0, 1, 1},
      {3, 3, 2, 2, 1, 1, 1, 1, 1, 1},        {5, 5, 1, 1, 2, 2, 2, 2, 0, 0},
      {2, 3, 1, 2, 0, 1, 1, 0, 0, 1, 2, 1},  {7, 7, 1, 1, 0, 0, 0, 0, 0, 0},
  };
  const std::vector<std::pair<QuantParams, QuantParams>> params = {
      {qp(0.05f, -3), qp(0.05f, -3)}, {qp(0.05f, -3), qp(0.031f, 17)}, {qp(0.5f, 127), qp(0.01f, -128)},
      {qp(0.02f, 1), qp(0.5f, -7)}};
  const int64_t N = 2, C = 3, H = 7, W = 9;
  uint32_t seed = 5;
  for (bool is_max : {true, false}) {
    for (const Pool2d& c : configs) {
      for (const auto& [qx, qy] : params) {
        const std::vector<int8_t> x = random_i8(static_cast<size_t>(N * C * H * W), seed++);
        A attrs = pool_attrs(c);
        if (!is_max) attrs.i("count_include_pad", c.include_pad);
        OpResult r = run_pool(is_max ? OpId::MaxPool : OpId::AveragePool, attrs, q8({N, C, H, W}, x, qx), qy);
        ASSERT_OK(r.status);
        int64_t oh = 0, ow = 0;
        const std::vector<int8_t> want = naive_pool(is_max, x, N * C, H, W, c, qx, qy, &oh, &ow);
        ASSERT_EQ(r.outputs[0].shape, (Shape{N, C, oh, ow}));
        EXPECT_EQ(out_i8(r), want) << (is_max ? "MaxPool" : "AveragePool") << " k " << c.kh << "x" << c.kw
                                   << " ceil " << c.ceil << " include_pad " << c.include_pad;
      }
    }
  }
}

// The fast int8 MaxPools (nodes whose output keeps the input's parameters) must give exactly the
// naive loop's codes: the hand-written NCHW kernels (x86_maxpool_int8, neon_maxpool_int8: stride 1
// and 2 vector paths, other strides scalar, rows wider than a vector and rows' last outputs, windows
// over padding only, ceil_mode) and oneDNN's s8 pooling; the hand-written one is the kernel chosen
// where the CPU runs it, and also runs with input and output channels-last (the runtime's blocked
// INT8 layout; 3 channels: all in the scalar tail, 19: a vector and a tail).
TEST(QuantMaxPoolFast, FastKernelsMatchNaiveLoopBitExactly) {
  const std::vector<Pool2d> configs = {
      {2, 2, 2, 2, 0, 0, 0, 0, 0, 0}, {3, 3, 2, 2, 1, 1, 1, 1, 0, 0}, {3, 3, 1, 1, 1, 1, 1, 1, 0, 0},
      {3, 2, 2, 1, 1, 0, 2, 1, 0, 0}, {3, 3, 2, 2, 1, 1, 1, 1, 1, 0}, {2, 3, 1, 2, 0, 1, 1, 0, 0, 0, 2, 1},
      {5, 5, 3, 3, 2, 2, 2, 2, 1, 0}, {3, 5, 2, 2, 2, 4, 2, 4, 0, 0}, {1, 1, 1, 1, 0, 0, 0, 0, 0, 0},
  };
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{11, 13}, {5, 70}, {9, 150}};  // H, W
  const int64_t N = 2;
  std::vector<std::string> kernels;
  for (const KernelEntry* e : kernels_for(OpId::MaxPool))
    if (std::string(e->name) == "onednn_maxpool_s8" || std::string(e->name) == "x86_maxpool_int8" ||
        std::string(e->name) == "neon_maxpool_int8")
      kernels.push_back(e->name);
  auto registered = [&](const char* k) { return std::find(kernels.begin(), kernels.end(), k) != kernels.end(); };
  // The hand-written kernel this CPU runs: every aarch64 CPU has NEON.
  const char* own = fast_int8_kernel(OpId::MaxPool, "x86_maxpool_int8",
                                     ORKNN_X86_HAS("avx512bw") && ORKNN_X86_HAS("avx512vbmi"), "neon_maxpool_int8");
  uint32_t seed = 77;
  int checked = 0;
  for (const int64_t C : {int64_t{3}, int64_t{19}})
    for (const Pool2d& c : configs)
      for (const auto& [H, W] : sizes)
        for (int threads : {1, 2}) {
          const QuantParams q = qp(0.07f, -9);
          const std::vector<int8_t> x = random_i8(static_cast<size_t>(N * C * H * W), seed++);
          const A attrs = pool_attrs(c);
          int64_t oh = 0, ow = 0;
          const std::vector<int8_t> want = naive_pool(true, x, N * C, H, W, c, q, q, &oh, &ow);
          OpResult best = run_op(OpId::MaxPool, attrs, {q8({N, C, H, W}, x, q)}, 1, "", threads, {q});
          ASSERT_OK(best.status);
          if (own && c.dh == 1 && c.dw == 1) EXPECT_EQ(best.kernel_name, own);
          for (const std::string& k : kernels) {
            OpResult r = run_op(OpId::MaxPool, attrs, {q8({N, C, H, W}, x, q)}, 1, k, threads, {q});
            if (!r.status.ok()) continue;  // the kernel declines this node (dilation, CPU)
            EXPECT_EQ(out_i8(r), want) << "kernel " << k << " k " << c.kh << "x" << c.kw << " s " << c.sh << "x"
                                       << c.sw << " W " << W << " C " << C << " threads " << threads;
            ++checked;
            if (k == "onednn_maxpool_s8") continue;
            int blocked = 0;
            OpResult b =
                test::run_op_blocked(OpId::MaxPool, attrs, {q8({N, C, H, W}, x, q)}, k, threads, &blocked, {q});
            ASSERT_OK(b.status);
            EXPECT_EQ(blocked, 2);
            EXPECT_EQ(out_i8(b), want) << "NHWC, k " << c.kh << "x" << c.kw << " s " << c.sh << "x" << c.sw << " W "
                                       << W << " C " << C << " threads " << threads;
          }
        }
  // Each kernel declines only the dilated config (12 of the 108 runs); x86_maxpool_int8 every
  // node on a CPU without its extensions.
  const bool x86_declines = registered("x86_maxpool_int8") && !(own && std::string(own) == "x86_maxpool_int8");
  const int runnable = static_cast<int>(kernels.size()) - (x86_declines ? 1 : 0);
  EXPECT_GE(checked, 96 * runnable);
}

// The fast int8 AveragePool must give exactly the naive loop's codes, in NCHW and with input and
// output channels-last (the runtime's blocked INT8 layout): stride 1 (vector path, rows wider than
// 32 and 64 outputs) and other strides (scalar path), count_include_pad both ways, ceil_mode,
// windows over padding only, ties (ratio 1 with 2x2 windows), saturation, zero points at both
// ends, channel counts under and over 64 (NHWC tails), the largest window it takes (128 taps).
// Where the CPU runs it, it is the kernel chosen; elsewhere it declines and the node stays on
// ref_int8.
TEST(QuantAveragePoolFast, MatchesNaiveLoopBitExactly) {
  const std::string kernel = "x86_avgpool_int8";
  if (!kernel_registered(OpId::AveragePool, kernel)) GTEST_SKIP() << kernel << " not built";
  const bool cpu = ORKNN_X86_HAS("avx512bw") && ORKNN_X86_HAS("avx512vl");
  const std::vector<Pool2d> configs = {
      {3, 3, 1, 1, 1, 1, 1, 1, 0, 1}, {3, 3, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 2, 2, 2, 0, 0, 0, 0, 0, 0},
      {2, 2, 1, 1, 0, 0, 0, 0, 0, 0}, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, {3, 3, 2, 2, 1, 1, 1, 1, 1, 0},
      {3, 2, 2, 1, 1, 0, 2, 1, 0, 1}, {5, 5, 3, 3, 2, 2, 2, 2, 1, 0}, {3, 5, 1, 3, 2, 4, 2, 4, 0, 1},
      {1, 1, 1, 1, 0, 0, 0, 0, 0, 0}, {8, 16, 1, 1, 0, 0, 0, 0, 0, 0},
  };
  struct Size {
    int64_t c, h, w;
  };
  const std::vector<Size> sizes = {{3, 11, 13}, {70, 9, 20}, {2, 5, 150}};
  const std::vector<std::pair<QuantParams, QuantParams>> params = {
      {qp(0.05f, -3), qp(0.05f, -3)}, {qp(0.5f, 127), qp(0.01f, -128)}, {qp(0.02f, -128), qp(0.031f, 127)}};
  const int64_t N = 2;
  uint32_t seed = 901;
  int checked = 0;
  for (const Pool2d& c : configs)
    for (const Size& sz : sizes)
      for (const auto& [qx, qy] : params) {
        if (c.kh > sz.h + c.pt + c.pb || c.kw > sz.w + c.pl + c.pr) continue;
        const std::vector<int8_t> x = random_i8(static_cast<size_t>(N * sz.c * sz.h * sz.w), seed++);
        A attrs = pool_attrs(c);
        attrs.i("count_include_pad", c.include_pad);
        int64_t oh = 0, ow = 0;
        const std::vector<int8_t> want = naive_pool(false, x, N * sz.c, sz.h, sz.w, c, qx, qy, &oh, &ow);
        const TensorData in = q8({N, sz.c, sz.h, sz.w}, x, qx);
        const std::string what = "k " + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " s " +
                                 std::to_string(c.sh) + "x" + std::to_string(c.sw) + " ceil " + std::to_string(c.ceil) +
                                 " include_pad " + std::to_string(c.include_pad) + " C " + std::to_string(sz.c) +
                                 " W " + std::to_string(sz.w) + " zp_y " + std::to_string(qy.zero_point[0]);
        for (int threads : {1, 2}) {
          SCOPED_TRACE(what + " threads " + std::to_string(threads));
          OpResult r = run_op(OpId::AveragePool, attrs, {in}, 1, kernel, threads, {qy});
          ASSERT_EQ(r.status.ok(), cpu) << r.status.message();
          if (!cpu) continue;
          EXPECT_EQ(out_i8(r), want);
          int blocked = 0;
          OpResult b = test::run_op_blocked(OpId::AveragePool, attrs, {in}, kernel, threads, &blocked, {qy});
          ASSERT_OK(b.status);
          EXPECT_EQ(blocked, 2);
          EXPECT_EQ(out_i8(b), want) << "NHWC";
          ++checked;
        }
        OpResult best = run_op(OpId::AveragePool, attrs, {in}, 1, "", 1, {qy});
        ASSERT_OK(best.status);
        EXPECT_EQ(best.kernel_name, cpu ? kernel : "ref_int8");
        EXPECT_EQ(out_i8(best), want);
      }
  if (!cpu) return;
  EXPECT_GE(checked, 150);  // the configurations skipped are only the windows larger than a size
  // Declined: a dilated window, windows over 128 taps (the int16 sums), 1-D pooling.
  const TensorData x4 = q8({1, 2, 20, 20}, random_i8(800, 3), qp(0.1f, 0));
  auto takes = [&](const A& attrs, const TensorData& x) {
    return run_op(OpId::AveragePool, attrs, {x}, 1, kernel, 1, {qp(0.1f, 0)}).status.ok();
  };
  EXPECT_FALSE(takes(pool_attrs({2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 2, 2}), x4));
  EXPECT_FALSE(takes(pool_attrs({12, 11, 1, 1, 0, 0, 0, 0, 0, 0}), x4));
  EXPECT_TRUE(takes(pool_attrs({16, 8, 1, 1, 0, 0, 0, 0, 0, 0}), x4));
  EXPECT_FALSE(takes(A().ints("kernel_shape", {3}), q8({1, 2, 9}, random_i8(18, 4), qp(0.1f, 0))));
}

// ---- infer ----

TEST(QuantPoolInfer, OutputDtypeAndParamsAndIdempotence) {
  Graph g;
  Node n;
  n.name = "avg_q";
  n.op = OpId::AveragePool;
  n.attrs = A().ints("kernel_shape", {2, 2}).ints("strides", {2, 2}).s("auto_pad", "SAME_UPPER");
  const int x = g.add_tensor("x", {1, 2, 5, 5}, DType::kI8);
  const int y = g.add_tensor("y", {}, DType::kF32);  // dtype comes from infer
  g.tensor(x).quant = qp(0.1f, 3);
  g.tensor(y).quant = qp(0.2f, -3);
  n.inputs = {x};
  n.outputs = {y};
  ASSERT_OK(find_op(n.op)->infer(g, n));
  EXPECT_EQ(g.tensor(y).dtype, DType::kI8);
  EXPECT_EQ(g.tensor(y).shape, (Shape{1, 2, 3, 3}));
  EXPECT_TRUE(same_params(g.tensor(y).quant, qp(0.2f, -3)));
  expect_reinfer_unchanged(g, n);
}

TEST(QuantPoolInfer, Errors) {
  const QuantParams q = qp(0.1f, 3);
  const Attrs k = A().ints("kernel_shape", {2, 2});
  // Float input, quantized output.
  OpResult r = run_pool(OpId::MaxPool, k, f32({1, 1, 2, 2}, {1.f, 2.f, 3.f, 4.f}), q);
  expect_invalid_model(r.status, "input 0 ('in0') must be a quantized int8 tensor", "MaxPool_under_test");
  // Quantized input, output without parameters.
  r = run_op(OpId::AveragePool, k, {q8({1, 1, 2, 2}, {1, 2, 3, 4}, q)}, 1, "ref", 1, {});
  expect_invalid_model(r.status, "output 0 ('out0') has no quantization parameters", "AveragePool_under_test");
  r = run_op(OpId::GlobalAveragePool, A(), {q8({1, 1, 2, 2}, {1, 2, 3, 4}, q)}, 1, "ref", 1, {});
  expect_invalid_model(r.status, "no quantization parameters", "GlobalAveragePool_under_test");
  // Plain int8 input (no parameters) with a quantized output.
  r = run_pool(OpId::GlobalMaxPool, A(), i8({1, 1, 2, 2}, {1, 2, 3, 4}), q);
  expect_invalid_model(r.status, "must be a quantized int8 tensor", "GlobalMaxPool_under_test");
  // MaxPool's Indices output.
  r = run_op(OpId::MaxPool, k, {q8({1, 1, 2, 2}, {1, 2, 3, 4}, q)}, 2, "ref", 1, {q, QuantParams()});
  expect_invalid_model(r.status, "Indices", "MaxPool_under_test");
  // Per-axis output parameters.
  QuantParams per_axis;
  per_axis.scale = {0.1f, 0.2f};
  per_axis.zero_point = {0, 0};
  per_axis.axis = 1;
  r = run_pool(OpId::MaxPool, k, q8({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}, q), per_axis);
  expect_invalid_model(r.status, "per tensor", "MaxPool_under_test");
}

}  // namespace
}  // namespace orknn::test
