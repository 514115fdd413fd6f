// Quantized Gemm and MatMul (docs/numerics.md, "Quantized (INT8) models"): the reference kernel
// (ref_int8) against cases computed by hand and against a naive formula written here (int64
// accumulation, numpy broadcasting by coordinates, the spec's requantization written out with a
// hand-made round-half-to-even), and the errors of infer for forms the kernel does not handle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/int8_test_helpers.h"
#include "ops/ref_test_helpers.h"
#include "testutil/cpu.h"

namespace orknn::test {
namespace {

using namespace reft;  // NOLINT
using namespace q8t;   // NOLINT

std::vector<int8_t> random_values(size_t n, std::mt19937& rng, int lo, int hi) {
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
  return v;
}

void expect_same(const std::vector<int8_t>& got, const std::vector<int8_t>& want, const std::vector<int64_t>& acc) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  EXPECT_EQ(bad, 0u) << "first mismatch at " << first << ": got " << int(got[first]) << " want " << int(want[first])
                     << " (acc " << acc[first] << ")";
}

// The fast kernels of `op` that take its fully-connected form (constant 2-D B), where registered:
// XNNPACK's (aarch64 builds). Each is checked bit for bit on the cases below.
std::vector<std::string> fc_fast_kernels(OpId op) {
  std::vector<std::string> v;
  for (const KernelEntry* e : kernels_for(op)) {
    const std::string name = e->name;
    if (name == "xnnpack_gemm_int8" || name == "xnnpack_matmul_int8") v.push_back(name);
  }
  return v;
}

// Runs each fast kernel of `op` on the case at 1 and 2 threads: it must take the node when `takes`
// (and decline it otherwise) and give the naive formula's bytes.
void check_fc_fast_kernels(OpId op, const Attrs& at, const std::vector<TensorData>& in, const QuantParams& y_q,
                           bool takes, const std::vector<int8_t>& want, const std::vector<int64_t>& acc) {
  for (const std::string& kernel : fc_fast_kernels(op))
    for (int threads : {1, 2}) {
      SCOPED_TRACE(kernel + ", threads " + std::to_string(threads));
      OpResult r = run_op(op, at, in, 1, kernel, threads, {y_q});
      EXPECT_EQ(r.status.ok(), takes) << r.status.message();
      if (r.status.ok()) expect_same(out_i8(r), want, acc);
    }
}

// The fast kernel of MatMul for two activations (attention), where registered: the x86 VNNI one.
// It must take every such node on a CPU with AVX-512 VNNI, and decline every other node (constant
// B, other CPUs), at 1 and 2 threads, with the naive formula's bytes; through the registry it is
// the kernel chosen.
void check_act_fast_kernel(const Attrs& at, const std::vector<TensorData>& in, const QuantParams& y_q, bool b_const,
                           const std::vector<int8_t>& want, const std::vector<int64_t>& acc) {
  const std::string kernel = "x86_matmul_int8_act";
  if (!kernel_registered(OpId::MatMul, kernel)) return;
  const bool takes = !b_const && ORKNN_X86_HAS("avx512vnni") && ORKNN_X86_HAS("avx512bw") && ORKNN_X86_HAS("avx512vl");
  for (int threads : {1, 2}) {
    SCOPED_TRACE(kernel + ", threads " + std::to_string(threads));
    OpResult r = run_op(OpId::MatMul, at, in, 1, kernel, threads, {y_q});
    EXPECT_EQ(r.status.ok(), takes) << r.status.message();
    if (r.status.ok()) expect_same(out_i8(r), want, acc);
  }
  if (!takes) return;
  OpResult best = run_op(OpId::MatMul, at, in, 1, "", 2, {y_q});
  ASSERT_OK(best.status);
  EXPECT_EQ(best.kernel_name, kernel);
  expect_same(out_i8(best), want, acc);
}

// ------------------------------------------------------------------ hand-computed cases

TEST(GemmInt8Ref, HandComputedPerColumnScalesAndTies) {
  // a - zp_a = {-1, 0, 1; 2, 3, 4} (zp_a = 2), B = {1, -1; 2, 0; -3, 1}, C = {1, 3}:
  // acc = {-4 + 1, 2 + 3; -4 + 1, 2 + 3} = {-3, 5; -3, 5}; M = {0.5, 0.25}:
  // {-1.5, 1.25; ...} -> {-2, 1; -2, 1}.
  const TensorData a = q8({2, 3}, {1, 2, 3, 4, 5, 6}, qp(1.f, 2));
  const std::vector<int8_t> want = {-2, 1, -2, 1};
  OpResult r = run_op(OpId::Gemm, A(), {a, weights({3, 2}, {1, -1, 2, 0, -3, 1}, {0.5f, 0.25f}, 1), i32c({2}, {1, 3})},
                      1, "ref", 1, {qp(1.f, 0)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
  EXPECT_EQ(out_i8(r), want);
  // The same with B transposed (per-channel axis 0).
  OpResult rt = run_op(OpId::Gemm, A().i("transB", 1),
                       {a, weights({2, 3}, {1, 2, -3, -1, 0, 1}, {0.5f, 0.25f}, 0), i32c({2}, {1, 3})}, 1, "ref", 1,
                       {qp(1.f, 0)});
  ASSERT_OK(rt.status);
  EXPECT_EQ(out_i8(rt), want);
}

TEST(MatMulInt8Ref, HandComputedTwoActivations) {
  // a - zp_a = {2, -2}, b - zp_b = {3, -2; -4, 2}: acc = {14, -8}; M = 0.25: {3.5, -2} -> {4, -2};
  // + zp_y -3 = {1, -5}.
  OpResult r = run_op(OpId::MatMul, A(), {q8({1, 2}, {3, -1}, qp(0.5f, 1)), q8({2, 2}, {5, 0, -2, 4}, qp(0.5f, 2))},
                      1, "ref", 1, {qp(1.f, -3)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{1, -5}));
}

// ------------------------------------------------------------------ Gemm against the naive formula

struct GemmCase {
  std::string label;
  int64_t m = 1, k = 1, n = 1;
  bool trans_b = false, per_channel = true;
  int c_kind = 1;  // 0: no C, 1: [N], 2: [1, N], 3: [M, N], 4: [M, 1], 5: scalar
  int32_t zp_a = 0, zp_y = 0;
  std::string act;
  float amin = 0.f, amax = 0.f;
  bool ties = false;
};

void run_gemm_case(const GemmCase& cs, uint32_t seed) {
  SCOPED_TRACE(cs.label);
  std::mt19937 rng(seed);
  const std::vector<int8_t> a = cs.ties ? random_values(cs.m * cs.k, rng, cs.zp_a - 4, cs.zp_a + 4)
                                        : random_values(cs.m * cs.k, rng, -128, 127);
  const std::vector<int8_t> b = random_values(cs.k * cs.n, rng, cs.ties ? -3 : -127, cs.ties ? 3 : 127);
  Shape c_shape;
  switch (cs.c_kind) {
    case 1: c_shape = {cs.n}; break;
    case 2: c_shape = {1, cs.n}; break;
    case 3: c_shape = {cs.m, cs.n}; break;
    case 4: c_shape = {cs.m, 1}; break;
    default: c_shape = {}; break;
  }
  std::vector<int32_t> c(cs.c_kind ? static_cast<size_t>(shape_numel(c_shape)) : 0);
  for (auto& v : c) v = std::uniform_int_distribution<int>(cs.ties ? -9 : -30000, cs.ties ? 9 : 30000)(rng);

  std::vector<int64_t> acc(static_cast<size_t>(cs.m * cs.n));
  for (int64_t i = 0; i < cs.m; ++i)
    for (int64_t j = 0; j < cs.n; ++j) {
      int64_t s = 0;
      if (cs.c_kind) s = c[static_cast<size_t>(broadcast_index({i, j}, c_shape))];
      for (int64_t p = 0; p < cs.k; ++p) {
        const int64_t bv = cs.trans_b ? b[static_cast<size_t>(j * cs.k + p)] : b[static_cast<size_t>(p * cs.n + j)];
        s += (static_cast<int64_t>(a[static_cast<size_t>(i * cs.k + p)]) - cs.zp_a) * bv;
      }
      acc[static_cast<size_t>(i * cs.n + j)] = s;
    }
  const float s_a = cs.ties ? 0.5f : 0.021f;
  std::vector<float> s_b(cs.per_channel ? static_cast<size_t>(cs.n) : 1);
  for (size_t j = 0; j < s_b.size(); ++j)
    s_b[j] = cs.ties ? std::ldexp(1.f, -static_cast<int>(j % 3))
                     : 0.001f * static_cast<float>(std::uniform_int_distribution<int>(1, 30)(rng));
  int64_t max_acc = 1;
  for (int64_t v : acc) max_acc = std::max<int64_t>(max_acc, std::llabs(v));
  const float s_y = cs.ties ? 1.f : s_a * s_b[0] * static_cast<float>(max_acc) / 100.f;
  std::vector<int8_t> want(acc.size());
  int ties = 0;
  for (size_t i = 0; i < acc.size(); ++i) {
    const float sb = s_b.size() == 1 ? s_b[0] : s_b[i % static_cast<size_t>(cs.n)];
    want[i] = requant_naive(acc[i], s_a, sb, s_y, cs.zp_y, cs.act, cs.amin, cs.amax);
    const float v = static_cast<float>(acc[i]) * ((s_a * sb) / s_y);
    ties += v - std::floor(v) == 0.5f;
  }
  if (cs.ties) EXPECT_GT(ties, 5);

  Attrs at;
  at.set_int("transB", cs.trans_b ? 1 : 0);
  if (!cs.act.empty()) {
    at.set_string("fused_act", cs.act);
    if (cs.act == "Clip") {
      at.set_float("fused_alpha", cs.amin);
      at.set_float("fused_beta", cs.amax);
    }
  }
  const Shape b_shape = cs.trans_b ? Shape{cs.n, cs.k} : Shape{cs.k, cs.n};
  std::vector<TensorData> in = {q8({cs.m, cs.k}, a, qp(s_a, cs.zp_a)), weights(b_shape, b, s_b, cs.trans_b ? 0 : 1)};
  if (cs.c_kind) in.push_back(i32c(c_shape, c));
  OpResult r = run_op(OpId::Gemm, at, in, 1, "ref", 1, {qp(s_y, cs.zp_y)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  ASSERT_EQ(r.outputs[0].shape, Shape({cs.m, cs.n}));
  expect_same(out_i8(r), want, acc);
  // The fully-connected kernels take C only as one bias per column.
  const bool per_column_c = cs.c_kind == 0 || cs.c_kind == 1 || cs.c_kind == 2 || (cs.c_kind == 3 && cs.m == 1);
  check_fc_fast_kernels(OpId::Gemm, at, in, qp(s_y, cs.zp_y), per_column_c, want, acc);
}

TEST(GemmInt8Ref, MatchesNaiveFormula) {
  std::vector<GemmCase> cases;
  auto add = [&](const std::string& label, int64_t m, int64_t k, int64_t n, bool trans_b, bool per_channel, int c_kind,
                 int32_t zp_a, int32_t zp_y) {
    GemmCase c;
    c.label = label;
    c.m = m, c.k = k, c.n = n;
    c.trans_b = trans_b, c.per_channel = per_channel, c.c_kind = c_kind;
    c.zp_a = zp_a, c.zp_y = zp_y;
    cases.push_back(c);
    return &cases.back();
  };
  add("transB0_per_channel_C_N", 3, 7, 5, false, true, 1, 3, -5);
  add("transB1_per_tensor_C_1xN", 4, 9, 6, true, false, 2, -128, 0);
  add("C_MxN", 5, 16, 3, true, true, 3, 127, 17);
  add("C_Mx1", 2, 5, 7, false, true, 4, -1, -1);
  add("scalar_C", 3, 4, 4, true, true, 5, 9, 2);
  add("no_C_wide_k", 2, 300, 3, false, true, 0, -37, 100);
  add("relu", 4, 12, 8, true, true, 1, 5, -30)->act = "Relu";
  GemmCase* clip = add("clip", 4, 12, 8, false, true, 1, -5, 12);
  clip->act = "Clip";
  clip->amin = -0.3f;
  clip->amax = 0.45f;
  GemmCase* clip_inf = add("clip_inf", 4, 12, 8, false, true, 1, 0, 0);
  clip_inf->act = "Clip";
  clip_inf->amin = -kInf;
  clip_inf->amax = kInf;
  add("ties", 6, 10, 9, true, true, 1, 21, 3)->ties = true;
  uint32_t seed = 300;
  for (const GemmCase& c : cases) run_gemm_case(c, seed++);
}

// ------------------------------------------------------------------ MatMul against the naive formula

struct MatMulCase {
  std::string label;
  Shape a, b;
  bool b_const = true;   // weights (zero point 0); else a second activation
  bool per_channel = false;
  int32_t zp_a = 0, zp_b = 0, zp_y = 0;
  std::string act;
  bool ties = false;
  bool saturate = false;  // s_y small enough that many outputs saturate at both ends
};

void run_matmul_case(const MatMulCase& cs, uint32_t seed) {
  SCOPED_TRACE(cs.label);
  std::mt19937 rng(seed);
  // numpy.matmul: 1-D A is [1, K] (the row dim dropped), 1-D B is [K, 1] (the column dim dropped).
  const Shape a2 = cs.a.size() == 1 ? Shape{1, cs.a[0]} : cs.a;
  const Shape b2 = cs.b.size() == 1 ? Shape{cs.b[0], 1} : cs.b;
  const int64_t m = a2[a2.size() - 2], k = a2.back(), n = b2.back();
  const Shape a_batch(a2.begin(), a2.end() - 2), b_batch(b2.begin(), b2.end() - 2);
  const size_t rank = std::max(a_batch.size(), b_batch.size());
  Shape batch(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t da = d + a_batch.size() >= rank ? a_batch[d + a_batch.size() - rank] : 1;
    const int64_t db = d + b_batch.size() >= rank ? b_batch[d + b_batch.size() - rank] : 1;
    batch[d] = std::max(da, db);
  }
  Shape out = batch;
  if (cs.a.size() > 1) out.push_back(m);
  if (cs.b.size() > 1) out.push_back(n);

  const std::vector<int8_t> a = cs.ties ? random_values(shape_numel(cs.a), rng, cs.zp_a - 3, cs.zp_a + 3)
                                        : random_values(shape_numel(cs.a), rng, -128, 127);
  const std::vector<int8_t> b = cs.ties ? random_values(shape_numel(cs.b), rng, cs.zp_b - 3, cs.zp_b + 3)
                                        : random_values(shape_numel(cs.b), rng, cs.b_const ? -127 : -128, 127);
  const int64_t batches = shape_numel(batch);
  std::vector<int64_t> acc(static_cast<size_t>(batches * m * n));
  for (int64_t t = 0; t < batches; ++t) {
    const std::vector<int64_t> coord = unravel(t, batch);
    const int64_t ia = a_batch.empty() ? 0 : broadcast_index(coord, a_batch);
    const int64_t ib = b_batch.empty() ? 0 : broadcast_index(coord, b_batch);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t s = 0;
        for (int64_t p = 0; p < k; ++p) {
          const int64_t av = a[static_cast<size_t>((ia * m + i) * k + p)];
          const int64_t bv = b[static_cast<size_t>((ib * k + p) * n + j)];
          s += (av - cs.zp_a) * (bv - cs.zp_b);
        }
        acc[static_cast<size_t>((t * m + i) * n + j)] = s;
      }
  }
  const float s_a = cs.ties ? 0.5f : 0.03f;
  std::vector<float> s_b(cs.per_channel ? static_cast<size_t>(n) : 1);
  for (size_t j = 0; j < s_b.size(); ++j)
    s_b[j] = cs.ties ? std::ldexp(1.f, -static_cast<int>(j % 3))
                     : 0.002f * static_cast<float>(std::uniform_int_distribution<int>(1, 20)(rng));
  int64_t max_acc = 1;
  for (int64_t v : acc) max_acc = std::max<int64_t>(max_acc, std::llabs(v));
  const float s_y = cs.ties ? 1.f : s_a * s_b[0] * static_cast<float>(max_acc) / (cs.saturate ? 1000.f : 100.f);
  std::vector<int8_t> want(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    const float sb = s_b.size() == 1 ? s_b[0] : s_b[i % static_cast<size_t>(n)];
    want[i] = requant_naive(acc[i], s_a, sb, s_y, cs.zp_y, cs.act, 0.f, 0.f);
  }

  QuantParams bq = s_b.size() == 1 ? qp(s_b[0], cs.zp_b) : per_axis(s_b, static_cast<int32_t>(cs.b.size()) - 1);
  Attrs at;
  if (!cs.act.empty()) at.set_string("fused_act", cs.act);
  const std::vector<TensorData> in = {q8(cs.a, a, qp(s_a, cs.zp_a)), q8(cs.b, b, bq, cs.b_const)};
  OpResult r = run_op(OpId::MatMul, at, in, 1, "ref", 1, {qp(s_y, cs.zp_y)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  ASSERT_EQ(r.outputs[0].shape, out);
  expect_same(out_i8(r), want, acc);
  check_fc_fast_kernels(OpId::MatMul, at, in, qp(s_y, cs.zp_y), cs.b_const && cs.b.size() == 2, want, acc);
  check_act_fast_kernel(at, in, qp(s_y, cs.zp_y), cs.b_const, want, acc);
}

TEST(MatMulInt8Ref, MatchesNaiveFormula) {
  std::vector<MatMulCase> cases;
  auto add = [&](const std::string& label, Shape a, Shape b, bool b_const, bool per_channel, int32_t zp_a,
                 int32_t zp_b, int32_t zp_y) {
    MatMulCase c;
    c.label = label;
    c.a = std::move(a);
    c.b = std::move(b);
    c.b_const = b_const, c.per_channel = per_channel;
    c.zp_a = zp_a, c.zp_b = zp_b, c.zp_y = zp_y;
    cases.push_back(c);
    return &cases.back();
  };
  add("weights_per_channel_batched_a", {2, 3, 11}, {11, 6}, true, true, 7, 0, -4);
  add("weights_per_tensor", {5, 8}, {8, 4}, true, false, -128, 0, 0);
  add("weights_batched_b_1d_a", {9}, {2, 9, 5}, true, true, 3, 0, 1);
  add("weights_broadcast_batch", {2, 1, 4, 6}, {3, 6, 5}, true, false, -9, 0, 22);
  add("weights_1d_b", {3, 7}, {7}, true, false, 1, 0, 0);
  add("activations", {2, 3, 10}, {2, 10, 4}, false, false, 7, -9, 5);
  add("activations_broadcast", {3, 10}, {2, 10, 4}, false, false, -50, 127, -1);
  add("activations_1d", {12}, {12}, false, false, 4, -4, 0);
  add("relu", {4, 10}, {10, 6}, true, true, 2, 0, -7)->act = "Relu";
  add("ties_weights", {6, 8}, {8, 9}, true, true, 5, 0, 2)->ties = true;
  add("ties_activations", {6, 8}, {8, 9}, false, false, -5, 3, 1)->ties = true;
  // Attention shapes and the fast kernel's edges: K not a multiple of 4, column tails past 16 and
  // 64, row tails past 6, broadcast batch dims on either side, zero points at both ends,
  // saturation, large accumulators.
  add("attention_qk", {1, 4, 50, 16}, {1, 4, 16, 50}, false, false, 3, -7, 2);
  add("attention_pv", {1, 4, 50, 50}, {1, 4, 50, 16}, false, false, -128, -128, -5);
  add("odd_k_column_tails", {3, 7, 13}, {3, 13, 70}, false, false, 127, -128, 0);
  add("broadcast_b_batch", {2, 3, 5, 20}, {1, 3, 20, 9}, false, false, -128, 127, 127);
  add("broadcast_a_batch_3_panels", {1, 3, 6, 8}, {2, 3, 8, 130}, false, false, 127, 127, -128);
  add("b_2d_rows_split", {40, 24}, {24, 20}, false, false, -3, 5, 0);
  add("one_batch_rows_over_threads", {100, 80}, {80, 70}, false, false, 17, -33, 4);  // enough work for 2
  add("one_row_k1", {1, 1}, {1, 17}, false, false, 9, -9, 3);
  add("deep_k_extremes", {5, 1001}, {1001, 33}, false, false, -128, 127, 1);
  add("saturate", {2, 9, 31}, {2, 31, 18}, false, false, 60, -60, -100)->saturate = true;
  add("relu_activations", {3, 14, 12}, {3, 12, 40}, false, false, -20, 11, -60)->act = "Relu";
  add("ties_activations_wide", {2, 13, 22}, {2, 22, 67}, false, false, 100, -100, 0)->ties = true;
  uint32_t seed = 500;
  for (const MatMulCase& c : cases) run_matmul_case(c, seed++);
}

// A build with the XNNPACK backend registers its fully-connected kernels (so the comparisons above
// ran on them, not on a skip).
TEST(GemmInt8Fast, XnnpackKernelsRegisteredInXnnpackBuilds) {
#ifndef ORKNN_WITH_XNNPACK
  GTEST_SKIP() << "built without the XNNPACK backend";
#else
  EXPECT_EQ(fc_fast_kernels(OpId::Gemm), std::vector<std::string>{"xnnpack_gemm_int8"});
  EXPECT_EQ(fc_fast_kernels(OpId::MatMul), std::vector<std::string>{"xnnpack_matmul_int8"});
#endif
}

TEST(MatMulInt8Ref, SaturatesAtBothEnds) {
  // Every product is large and s_y tiny: outputs are -128 or 127 (by the sign of the accumulator).
  const std::vector<int8_t> a = {100, -100, 50, -60};
  OpResult r = run_op(OpId::MatMul, A(), {q8({2, 2}, a, qp(1.f, 0)), weights({2, 2}, {127, -127, 90, 0}, {1.f}, 1)}, 1,
                      "ref", 1, {qp(0.5f, 3)});
  ASSERT_OK(r.status);
  // acc = {100*127 - 100*90, -100*127} = {3700, -12700}; {50*127 - 60*90, -50*127} = {950, -6350}
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{127, -128, 127, -128}));
}

// ------------------------------------------------------------------ infer

TEST(GemmInt8Infer, AcceptsQuantizedFormAndIsIdempotent) {
  Graph g;
  Node n;
  n.name = "qgemm";
  n.op = OpId::Gemm;
  const int a = g.add_tensor("a", {2, 4}, DType::kI8);
  g.tensor(a).quant = qp(0.1f, 3);
  std::vector<int8_t> wv(12, 1);
  const int w = g.add_const("w", {3, 4}, DType::kI8, wv.data(), wv.size());
  g.tensor(w).quant = per_axis({0.1f, 0.2f, 0.3f}, 0);
  const int y = g.add_tensor("y", {}, DType::kF32);
  g.tensor(y).quant = qp(0.5f, -2);
  n.inputs = {a, w};
  n.outputs = {y};
  n.attrs.set_int("transB", 1);
  ASSERT_OK(find_op(n.op)->infer(g, n));
  EXPECT_EQ(g.tensor(y).dtype, DType::kI8);
  EXPECT_EQ(g.tensor(y).shape, Shape({2, 3}));
  expect_reinfer_unchanged(g, n);
}

struct QGemm {
  OpId op = OpId::Gemm;
  TensorData a = q8({2, 3}, {1, 2, 3, 4, 5, 6}, qp(0.1f, 0));
  TensorData b = q8({3, 2}, {1, 2, 3, 4, 5, 6}, qp(0.05f, 0), true);
  TensorData c = TensorData::none();
  QuantParams y = qp(0.2f, 0);
  Attrs attrs;
  Status infer() const { return run_quantized_status(op, attrs, {a, b, c}, y); }
};

TEST(GemmInt8Infer, RefusesFormsTheKernelDoesNotHandle) {
  const std::string gemm = "Gemm_under_test";
  {
    QGemm q;
    ASSERT_OK(q.infer());
  }
  {
    QGemm q;
    q.attrs.set_int("transA", 1);
    q.a = q8({3, 2}, {1, 2, 3, 4, 5, 6}, qp(0.1f, 0));
    expect_invalid_model(q.infer(), "transA = 0", gemm);
  }
  {
    QGemm q;
    q.attrs.set_float("alpha", 2.f);
    expect_invalid_model(q.infer(), "alpha = beta = 1", gemm);
  }
  {
    QGemm q;
    q.attrs.set_float("beta", 0.5f);
    q.c = i32c({2}, {0, 0});
    expect_invalid_model(q.infer(), "alpha = beta = 1", gemm);
  }
  {
    QGemm q;
    q.b.is_const = false;
    expect_invalid_model(q.infer(), "must be an int8 constant", gemm);
  }
  {  // transB = 0: per-channel along axis 1, not 0
    QGemm q;
    q.b.quant = per_axis({0.1f, 0.1f, 0.1f}, 0);
    expect_invalid_model(q.infer(), "per-axis parameters on axis 0", gemm);
  }
  {  // transB = 1: along axis 0, not 1
    QGemm q;
    q.attrs.set_int("transB", 1);
    q.b = q8({2, 3}, {1, 2, 3, 4, 5, 6}, per_axis({0.1f, 0.1f, 0.1f}, 1), true);
    expect_invalid_model(q.infer(), "per-axis parameters on axis 1", gemm);
  }
  {
    QGemm q;
    q.c = f32({2}, {0.f, 0.f}, true);
    expect_invalid_model(q.infer(), "must be an int32 constant", gemm);
  }
  {
    QGemm q;
    q.a = f32({2, 3}, std::vector<float>(6, 0.f));
    expect_invalid_model(q.infer(), "must be a quantized int8 tensor", gemm);
  }
  {
    QGemm q;
    q.y = QuantParams();
    expect_invalid_model(q.infer(), "has no quantization parameters", gemm);
  }
  {
    QGemm q;
    q.attrs.set_string("fused_act", "Sigmoid");
    expect_invalid_model(q.infer(), "is not allowed on a quantized Gemm node", gemm);
  }
}

TEST(MatMulInt8Infer, RefusesFormsTheKernelDoesNotHandle) {
  const std::string mm = "MatMul_under_test";
  auto mat = [](QGemm q) {
    q.op = OpId::MatMul;
    return q;
  };
  {
    QGemm q = mat(QGemm());
    ASSERT_OK(q.infer());
  }
  {  // a second activation quantized per channel
    QGemm q = mat(QGemm());
    q.b = q8({3, 2}, {1, 2, 3, 4, 5, 6}, per_axis({0.1f, 0.1f}, 1, {1, 2}));
    expect_invalid_model(q.infer(), "must be quantized per tensor", mm);
  }
  {  // a second activation without parameters
    QGemm q = mat(QGemm());
    q.b = i8({3, 2}, {1, 2, 3, 4, 5, 6});
    expect_invalid_model(q.infer(), "must be a quantized int8 tensor", mm);
  }
  {  // constant weights per channel on a dim that is not the last
    QGemm q = mat(QGemm());
    q.b.quant = per_axis({0.1f, 0.1f, 0.1f}, 0);
    expect_invalid_model(q.infer(), "per-axis parameters on axis 0", mm);
  }
  {  // 1-D weights have no output-channel axis
    QGemm q = mat(QGemm());
    q.b = q8({3}, {1, 2, 3}, per_axis({0.1f, 0.1f, 0.1f}, 0), true);
    expect_invalid_model(q.infer(), "per-axis parameters on axis 0", mm);
  }
  {  // constant weights with a zero point
    QGemm q = mat(QGemm());
    q.b.quant = qp(0.05f, 4);
    expect_invalid_model(q.infer(), "symmetric", mm);
  }
  {
    QGemm q = mat(QGemm());
    q.attrs.set_string("fused_act", "HardSwish");
    expect_invalid_model(q.infer(), "is not allowed on a quantized MatMul node", mm);
  }
  {
    QGemm q = mat(QGemm());
    q.y = QuantParams();
    expect_invalid_model(q.infer(), "has no quantization parameters", mm);
  }
}

TEST(MatMulInt8Infer, AccumulatorRangeOfTwoActivations) {
  // |(a - zp_a) * (b - zp_b)| <= 255 * 255: K = 33000 fits in int32, K = 33100 might not.
  for (const auto& [k, ok] : std::vector<std::pair<int64_t, bool>>{{33000, true}, {33100, false}}) {
    SCOPED_TRACE(k);
    const std::vector<int8_t> a(static_cast<size_t>(k), 127), b(static_cast<size_t>(k), -128);
    OpResult r = run_op(OpId::MatMul, A(), {q8({1, k}, a, qp(1.f, -128)), q8({k, 1}, b, qp(1.f, 127))}, 1, "ref", 1,
                        {qp(1e6f, 0)});
    if (ok) {
      ASSERT_OK(r.status);
      // acc = k * 255 * -255 = -2145825000; * 1e-6 -> -2145.8 -> saturates.
      EXPECT_EQ(out_i8(r), (std::vector<int8_t>{-128}));
    } else {
      expect_invalid_model(r.status, "could overflow", "MatMul_under_test");
    }
  }
}

}  // namespace
}  // namespace orknn::test
