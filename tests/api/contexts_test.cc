// Contexts, threads and init flags through librknnrt.so: rknn_dup_context, concurrent use, and
// every rknn_init flag's success and error paths (docs/decisions.md "Contexts and init flags").
// Expected values are computed here from the model's definition (naive formulas), and the
// multi-threaded results are compared bit for bit with a single-threaded run.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "graph/ir.h"
#include "model/model_io.h"
#include "api/api_test_util.h"
#include "rknn_api.h"

namespace {

using orknn::DType;
using orknn::Graph;

const float kBias[3] = {0.5f, -1.0f, 2.0f};

// x [batch,3,2,2] -> Relu -> Add(b [1,3,1,1]) -> y.
std::vector<uint8_t> make_add_model(const std::string& platform = "rk3588", int64_t batch = 1) {
  Graph g;
  g.platform = platform;
  g.precision = orknn::FloatPrecision::kFp32;
  int x = g.add_tensor("x", {batch, 3, 2, 2}, DType::kF32);
  int r = g.add_tensor("relu_out", {batch, 3, 2, 2}, DType::kF32);
  int b = g.add_const("b", {1, 3, 1, 1}, DType::kF32, kBias, sizeof(kBias));
  int y = g.add_tensor("y", {batch, 3, 2, 2}, DType::kF32);
  orknn::Node relu; relu.name = "relu0"; relu.op = orknn::OpId::Relu; relu.inputs = {x}; relu.outputs = {r};
  orknn::Node add; add.name = "add0"; add.op = orknn::OpId::Add; add.inputs = {r, b}; add.outputs = {y};
  g.nodes = {relu, add};
  orknn::GraphInput gi; gi.tensor = x;
  g.inputs = {gi};
  g.outputs = {y};
  return api_test::model_bytes(g);
}

std::vector<float> expected_add(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = std::max(x[i], 0.f) + kBias[(i / 4) % 3];
  return y;
}

// x [1,3,8,8] -> Conv(8x3x3x3, pads 1) + bias -> Relu -> y [1,8,8,8]: enough work per run for
// threads to overlap.
constexpr int kCi = 3, kCo = 8, kH = 8, kW = 8;
float conv_w(int co, int ci, int kh, int kw) { return 0.05f * static_cast<float>((co * 7 + ci * 5 + kh * 3 + kw) % 11) - 0.25f; }
float conv_b(int co) { return 0.1f * static_cast<float>(co) - 0.3f; }

std::vector<uint8_t> make_conv_model() {
  Graph g;
  g.platform = "rk3588";
  g.precision = orknn::FloatPrecision::kFp32;
  std::vector<float> w(kCo * kCi * 9), b(kCo);
  for (int co = 0; co < kCo; ++co) {
    b[co] = conv_b(co);
    for (int ci = 0; ci < kCi; ++ci)
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) w[((co * kCi + ci) * 3 + kh) * 3 + kw] = conv_w(co, ci, kh, kw);
  }
  int x = g.add_tensor("x", {1, kCi, kH, kW}, DType::kF32);
  int wt = g.add_const("w", {kCo, kCi, 3, 3}, DType::kF32, w.data(), w.size() * 4);
  int bt = g.add_const("bias", {kCo}, DType::kF32, b.data(), b.size() * 4);
  int c = g.add_tensor("c", {1, kCo, kH, kW}, DType::kF32);
  int y = g.add_tensor("y", {1, kCo, kH, kW}, DType::kF32);
  orknn::Node conv; conv.name = "conv0"; conv.op = orknn::OpId::Conv; conv.inputs = {x, wt, bt}; conv.outputs = {c};
  conv.attrs.set_ints("kernel_shape", {3, 3});
  conv.attrs.set_ints("pads", {1, 1, 1, 1});
  conv.attrs.set_ints("strides", {1, 1});
  conv.attrs.set_ints("dilations", {1, 1});
  conv.attrs.set_int("group", 1);
  conv.attrs.set_string("auto_pad", "NOTSET");
  orknn::Node relu; relu.name = "relu0"; relu.op = orknn::OpId::Relu; relu.inputs = {c}; relu.outputs = {y};
  g.nodes = {conv, relu};
  orknn::GraphInput gi; gi.tensor = x;
  g.inputs = {gi};
  g.outputs = {y};
  return api_test::model_bytes(g);
}

std::vector<float> expected_conv(const std::vector<float>& x) {
  std::vector<float> y(kCo * kH * kW);
  for (int co = 0; co < kCo; ++co)
    for (int h = 0; h < kH; ++h)
      for (int w = 0; w < kW; ++w) {
        double acc = conv_b(co);
        for (int ci = 0; ci < kCi; ++ci)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              int ih = h + kh - 1, iw = w + kw - 1;
              if (ih < 0 || iw < 0 || ih >= kH || iw >= kW) continue;
              acc += static_cast<double>(conv_w(co, ci, kh, kw)) * x[(ci * kH + ih) * kW + iw];
            }
        y[(co * kH + h) * kW + w] = static_cast<float>(std::max(acc, 0.0));
      }
  return y;
}

// Gather(data: a 16 MiB constant [kRows,4], indices: int64 input [2]) -> [2,4]: big weights, tiny
// activations, so resident memory shows whether weights are copied.
constexpr int64_t kRows = 1 << 20;
std::vector<uint8_t> make_big_weight_model() {
  Graph g;
  g.platform = "rk3588";
  g.precision = orknn::FloatPrecision::kFp32;
  std::vector<float> data(static_cast<size_t>(kRows) * 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  int d = g.add_const("data", {kRows, 4}, DType::kF32, data.data(), data.size() * 4);
  int idx = g.add_tensor("idx", {2}, DType::kI64);
  int y = g.add_tensor("y", {2, 4}, DType::kF32);
  orknn::Node gather; gather.name = "gather0"; gather.op = orknn::OpId::Gather; gather.inputs = {d, idx}; gather.outputs = {y};
  gather.attrs.set_int("axis", 0);
  g.nodes = {gather};
  orknn::GraphInput gi; gi.tensor = idx;
  g.inputs = {gi};
  g.outputs = {y};
  return api_test::model_bytes(g);
}

size_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, rss = 0;
  if (std::fscanf(f, "%lu %lu", &size, &rss) != 2) rss = 0;
  std::fclose(f);
  return static_cast<size_t>(rss) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

using api_test::Ctx;

int init(Ctx& c, std::vector<uint8_t> bytes, uint32_t flags = 0, rknn_init_extend* ext = nullptr) {
  return rknn_init(&c.ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), flags, ext);
}

int set_float_input(rknn_context ctx, const std::vector<float>& x) {
  rknn_input in{};
  in.index = 0;
  in.buf = const_cast<float*>(x.data());
  in.size = static_cast<uint32_t>(x.size() * 4);
  in.type = RKNN_TENSOR_FLOAT32;
  in.fmt = RKNN_TENSOR_NCHW;
  return rknn_inputs_set(ctx, 1, &in);
}

int get_float_output(rknn_context ctx, std::vector<float>* y, rknn_output_extend* ext = nullptr) {
  rknn_output out{};
  out.want_float = 1;
  out.is_prealloc = 1;
  out.buf = y->data();
  out.size = static_cast<uint32_t>(y->size() * 4);
  return rknn_outputs_get(ctx, 1, &out, ext);
}

// set input, run, get output; returns the first failing code.
int infer(rknn_context ctx, const std::vector<float>& x, std::vector<float>* y) {
  int r = set_float_input(ctx, x);
  if (r != RKNN_SUCC) return r;
  r = rknn_run(ctx, nullptr);
  if (r != RKNN_SUCC) return r;
  return get_float_output(ctx, y);
}

std::vector<float> input_for(int seed, size_t n) {
  std::vector<float> x(n);
  uint32_t s = 0x9E3779B9u * static_cast<uint32_t>(seed + 1);
  for (float& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<int32_t>(s >> 8) % 2001) / 500.0f - 2.0f;
  }
  return x;
}

const std::vector<float> kX1 = {-1, 2, -3, 4, 5, -6, 7, -8, 0.25f, 0.5f, -0.75f, 1};
const std::vector<float> kX2 = {3, -2, 1, -4, 0.5f, 6, -7, 8, -0.25f, 1.5f, 0.75f, -1};

void expect_floats_eq(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << "element " << i;
}

// ---- rknn_dup_context ----

TEST(Contexts, DupSharesModelAndGivesIndependentResults) {
  Ctx a, b;
  ASSERT_EQ(init(a, make_add_model()), RKNN_SUCC);
  ASSERT_EQ(rknn_dup_context(&a.ctx, &b.ctx), RKNN_SUCC);
  EXPECT_NE(b.ctx, 0u);
  EXPECT_NE(b.ctx, a.ctx);
  rknn_mem_size ma{}, mb{};
  ASSERT_EQ(rknn_query(a.ctx, RKNN_QUERY_MEM_SIZE, &ma, sizeof(ma)), RKNN_SUCC);
  ASSERT_EQ(rknn_query(b.ctx, RKNN_QUERY_MEM_SIZE, &mb, sizeof(mb)), RKNN_SUCC);
  EXPECT_EQ(ma.total_weight_size, 12u);
  EXPECT_EQ(mb.total_weight_size, ma.total_weight_size);
  EXPECT_EQ(mb.total_internal_size, ma.total_internal_size);

  // Inputs are per context: set both, then run both.
  ASSERT_EQ(set_float_input(a.ctx, kX1), RKNN_SUCC);
  ASSERT_EQ(set_float_input(b.ctx, kX2), RKNN_SUCC);
  ASSERT_EQ(rknn_run(a.ctx, nullptr), RKNN_SUCC);
  ASSERT_EQ(rknn_run(b.ctx, nullptr), RKNN_SUCC);
  std::vector<float> ya(12), yb(12);
  ASSERT_EQ(get_float_output(a.ctx, &ya), RKNN_SUCC);
  ASSERT_EQ(get_float_output(b.ctx, &yb), RKNN_SUCC);
  expect_floats_eq(ya, expected_add(kX1));
  expect_floats_eq(yb, expected_add(kX2));

  // The duplicate outlives the original (the Model is shared, not owned by the first context).
  ASSERT_EQ(rknn_destroy(a.ctx), RKNN_SUCC);
  a.ctx = 0;
  ASSERT_EQ(infer(b.ctx, kX1, &yb), RKNN_SUCC);
  expect_floats_eq(yb, expected_add(kX1));

  // In and out may be the same variable.
  rknn_context c = b.ctx;
  ASSERT_EQ(rknn_dup_context(&c, &c), RKNN_SUCC);
  EXPECT_NE(c, b.ctx);
  EXPECT_EQ(rknn_destroy(c), RKNN_SUCC);
}

TEST(Contexts, DupDoesNotCopyWeights) {
  Ctx a;
  std::vector<uint8_t> bytes = make_big_weight_model();
  ASSERT_EQ(init(a, bytes), RKNN_SUCC);
  const size_t weights = static_cast<size_t>(kRows) * 16;
  rknn_mem_size ms{};
  ASSERT_EQ(rknn_query(a.ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms)), RKNN_SUCC);
  EXPECT_EQ(ms.total_weight_size, weights);

  const size_t before = resident_bytes();
  Ctx d[4];
  for (Ctx& c : d) ASSERT_EQ(rknn_dup_context(&a.ctx, &c.ctx), RKNN_SUCC);
  const size_t after_dup = resident_bytes();
  EXPECT_LT(after_dup - before, weights / 2) << "4 duplicates grew resident memory by " << (after_dup - before);

  // Sanity check of the measurement: a second rknn_init copies the model.
  Ctx other;
  ASSERT_EQ(init(other, bytes), RKNN_SUCC);
  EXPECT_GT(resident_bytes() - after_dup, weights / 2);

  // Each duplicate reads the shared weights correctly.
  for (int k = 0; k < 4; ++k) {
    const int64_t idx[2] = {k, kRows - 1 - k};
    rknn_input in{};
    in.index = 0; in.buf = const_cast<int64_t*>(idx); in.size = sizeof(idx); in.type = RKNN_TENSOR_INT64;
    ASSERT_EQ(rknn_inputs_set(d[k].ctx, 1, &in), RKNN_SUCC);
    ASSERT_EQ(rknn_run(d[k].ctx, nullptr), RKNN_SUCC);
    std::vector<float> y(8);
    ASSERT_EQ(get_float_output(d[k].ctx, &y), RKNN_SUCC);
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(y[j], static_cast<float>(idx[0] * 4 + j));
      EXPECT_EQ(y[4 + j], static_cast<float>(idx[1] * 4 + j));
    }
  }
}

TEST(Contexts, DupErrors) {
  Ctx a;
  ASSERT_EQ(init(a, make_add_model()), RKNN_SUCC);
  rknn_context out = 123;
  EXPECT_EQ(rknn_dup_context(nullptr, &out), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_dup_context(&a.ctx, nullptr), RKNN_ERR_PARAM_INVALID);
  rknn_context bogus = 0x7777777;
  EXPECT_EQ(rknn_dup_context(&bogus, &out), RKNN_ERR_CTX_INVALID);
  EXPECT_EQ(out, 0u);
}

// ---- threads ----

TEST(Contexts, ThreadsWithDupedContextsMatchSingleThreadBitForBit) {
  constexpr int kThreads = 4, kIters = 25;
  const size_t n_in = kCi * kH * kW, n_out = kCo * kH * kW;
  Ctx base;
  ASSERT_EQ(init(base, make_conv_model()), RKNN_SUCC);

  // Single-threaded reference, checked against the naive convolution.
  std::vector<std::vector<float>> ref(kThreads * kIters, std::vector<float>(n_out));
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kIters; ++i) {
      const std::vector<float> x = input_for(t * 1000 + i, n_in);
      ASSERT_EQ(infer(base.ctx, x, &ref[t * kIters + i]), RKNN_SUCC);
      if (i == 0) {
        const std::vector<float> naive = expected_conv(x);
        for (size_t k = 0; k < n_out; ++k) ASSERT_NEAR(ref[t * kIters + i][k], naive[k], 1e-4f) << k;
      }
    }

  std::vector<Ctx> ctxs(kThreads);
  for (Ctx& c : ctxs) ASSERT_EQ(rknn_dup_context(&base.ctx, &c.ctx), RKNN_SUCC);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<float> y(n_out);
      for (int i = 0; i < kIters; ++i) {
        const std::vector<float> x = input_for(t * 1000 + i, n_in);
        if (infer(ctxs[t].ctx, x, &y) != RKNN_SUCC ||
            std::memcmp(y.data(), ref[t * kIters + i].data(), n_out * 4) != 0)
          ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Contexts, ConcurrentCallsOnOneContextAreSerialised) {
  // Two threads share ONE context and call rknn_run / rknn_outputs_get on it concurrently. Calls
  // are serialised by the per-context lock, so every output read is the exact result; overlapping
  // runs on the one arena would corrupt it. The input is a zero-copy mem bound once, which each
  // rknn_run reads itself: the arena planner reuses an input's bytes after its last consumer, so a
  // second rknn_run without a fresh rknn_inputs_set would not be a valid reference (README/report).
  Ctx c;
  ASSERT_EQ(init(c, make_conv_model()), RKNN_SUCC);
  const size_t n_in = kCi * kH * kW, n_out = kCo * kH * kW;
  const std::vector<float> x = input_for(1, n_in);
  rknn_tensor_mem* in_mem = rknn_create_mem(c.ctx, static_cast<uint32_t>(n_in * 4));
  ASSERT_NE(in_mem, nullptr);
  std::memcpy(in_mem->virt_addr, x.data(), n_in * 4);
  rknn_tensor_attr attr{};
  attr.index = 0;
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
  attr.type = RKNN_TENSOR_FLOAT32;
  attr.fmt = RKNN_TENSOR_NCHW;
  ASSERT_EQ(rknn_set_io_mem(c.ctx, in_mem, &attr), RKNN_SUCC);
  std::vector<float> want(n_out);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  ASSERT_EQ(get_float_output(c.ctx, &want), RKNN_SUCC);
  const std::vector<float> naive = expected_conv(x);
  for (size_t k = 0; k < n_out; ++k) ASSERT_NEAR(want[k], naive[k], 1e-4f) << k;

  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      std::vector<float> y(n_out);
      for (int i = 0; i < 40; ++i) {
        if (rknn_run(c.ctx, nullptr) != RKNN_SUCC || get_float_output(c.ctx, &y) != RKNN_SUCC ||
            std::memcmp(y.data(), want.data(), n_out * 4) != 0)
          ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  rknn_run_extend ext{};
  EXPECT_EQ(rknn_wait(c.ctx, &ext), RKNN_SUCC);
  EXPECT_EQ(ext.frame_id, 81u);  // every run counted once
  EXPECT_EQ(rknn_destroy_mem(c.ctx, in_mem), RKNN_SUCC);
}

// ---- init flags ----

TEST(InitFlags, CollectModelInfoOnlyAnswersQueriesButCannotRun) {
  Ctx normal, info;
  ASSERT_EQ(init(normal, make_add_model()), RKNN_SUCC);
  ASSERT_EQ(init(info, make_add_model(), RKNN_FLAG_COLLECT_MODEL_INFO_ONLY), RKNN_SUCC);
  rknn_input_output_num io{};
  ASSERT_EQ(rknn_query(info.ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_SUCC);
  EXPECT_EQ(io.n_input, 1u);
  EXPECT_EQ(io.n_output, 1u);
  rknn_tensor_attr ai{}, an{};
  ASSERT_EQ(rknn_query(info.ctx, RKNN_QUERY_INPUT_ATTR, &ai, sizeof(ai)), RKNN_SUCC);
  ASSERT_EQ(rknn_query(normal.ctx, RKNN_QUERY_INPUT_ATTR, &an, sizeof(an)), RKNN_SUCC);
  EXPECT_EQ(std::memcmp(&ai, &an, sizeof(ai)), 0);
  std::memset(&ai, 0, sizeof(ai));
  std::memset(&an, 0, sizeof(an));
  ASSERT_EQ(rknn_query(info.ctx, RKNN_QUERY_OUTPUT_ATTR, &ai, sizeof(ai)), RKNN_SUCC);
  ASSERT_EQ(rknn_query(normal.ctx, RKNN_QUERY_OUTPUT_ATTR, &an, sizeof(an)), RKNN_SUCC);
  EXPECT_EQ(std::memcmp(&ai, &an, sizeof(ai)), 0);
  rknn_mem_size mi{}, mn{};
  ASSERT_EQ(rknn_query(info.ctx, RKNN_QUERY_MEM_SIZE, &mi, sizeof(mi)), RKNN_SUCC);
  ASSERT_EQ(rknn_query(normal.ctx, RKNN_QUERY_MEM_SIZE, &mn, sizeof(mn)), RKNN_SUCC);
  EXPECT_EQ(mi.total_weight_size, 12u);
  EXPECT_EQ(mi.total_internal_size, mn.total_internal_size);
  EXPECT_GT(mi.total_internal_size, 0u);

  EXPECT_EQ(set_float_input(info.ctx, kX1), RKNN_ERR_CTX_INVALID);
  EXPECT_EQ(rknn_run(info.ctx, nullptr), RKNN_ERR_CTX_INVALID);
  std::vector<float> y(12);
  EXPECT_NE(get_float_output(info.ctx, &y), RKNN_SUCC);
  rknn_tensor_mem* m = rknn_create_mem(info.ctx, 4096);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(rknn_set_internal_mem(info.ctx, m), RKNN_ERR_CTX_INVALID);
  rknn_destroy_mem(info.ctx, m);
}

TEST(InitFlags, InternalAllocOutside) {
  Ctx c;
  ASSERT_EQ(init(c, make_add_model(), RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE), RKNN_SUCC);
  rknn_mem_size ms{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms)), RKNN_SUCC);
  ASSERT_GT(ms.total_internal_size, 0u);
  // Nothing to run on yet.
  EXPECT_EQ(set_float_input(c.ctx, kX1), RKNN_ERR_FAIL);
  EXPECT_EQ(rknn_run(c.ctx, nullptr), RKNN_ERR_FAIL);
  EXPECT_EQ(rknn_set_internal_mem(c.ctx, nullptr), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_mem* small = rknn_create_mem(c.ctx, ms.total_internal_size - 1);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(rknn_set_internal_mem(c.ctx, small), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_mem fake{};
  EXPECT_EQ(rknn_set_internal_mem(c.ctx, &fake), RKNN_ERR_PARAM_INVALID);  // not from rknn_create_mem*
  // Not 64-byte aligned (a wrapper whose data starts 8 bytes into an aligned block).
  std::vector<uint8_t> raw(ms.total_internal_size + 128);
  uint8_t* aligned = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw.data()) + 63) / 64 * 64);
  rknn_tensor_mem* unaligned = rknn_create_mem_from_phys(c.ctx, 0, aligned + 8, ms.total_internal_size);
  ASSERT_NE(unaligned, nullptr);
  EXPECT_EQ(rknn_set_internal_mem(c.ctx, unaligned), RKNN_ERR_PARAM_INVALID);

  rknn_tensor_mem* mem = rknn_create_mem(c.ctx, ms.total_internal_size);
  ASSERT_NE(mem, nullptr);
  ASSERT_EQ(rknn_set_internal_mem(c.ctx, mem), RKNN_SUCC);
  std::vector<float> y(12);
  ASSERT_EQ(infer(c.ctx, kX1, &y), RKNN_SUCC);
  expect_floats_eq(y, expected_add(kX1));
  // The activations really live in the client's block: the output tensor is there.
  const std::vector<float> want = expected_add(kX1);
  bool found = false;
  for (size_t off = 0; off + 48 <= mem->size && !found; off += 4)
    found = std::memcmp(static_cast<uint8_t*>(mem->virt_addr) + off, want.data(), 48) == 0;
  EXPECT_TRUE(found);

  // A destroyed internal block is detected at the next run.
  ASSERT_EQ(rknn_destroy_mem(c.ctx, mem), RKNN_SUCC);
  EXPECT_EQ(rknn_run(c.ctx, nullptr), RKNN_ERR_FAIL);
  rknn_destroy_mem(c.ctx, small);
  rknn_destroy_mem(c.ctx, unaligned);

  // A context that owns its arena refuses one.
  Ctx normal;
  ASSERT_EQ(init(normal, make_add_model()), RKNN_SUCC);
  rknn_tensor_mem* m2 = rknn_create_mem(normal.ctx, 4096);
  EXPECT_EQ(rknn_set_internal_mem(normal.ctx, m2), RKNN_ERR_PARAM_INVALID);
  rknn_destroy_mem(normal.ctx, m2);
}

TEST(InitFlags, OneInternalBlockSharedByContextsRunInSequence) {
  Ctx a, b;
  ASSERT_EQ(init(a, make_add_model(), RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE), RKNN_SUCC);
  ASSERT_EQ(rknn_dup_context(&a.ctx, &b.ctx), RKNN_SUCC);  // the flag is inherited
  rknn_mem_size ms{};
  ASSERT_EQ(rknn_query(a.ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms)), RKNN_SUCC);
  EXPECT_EQ(rknn_run(b.ctx, nullptr), RKNN_ERR_FAIL);
  rknn_tensor_mem* mem = rknn_create_mem2(0, ms.total_internal_size, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  ASSERT_NE(mem, nullptr);
  ASSERT_EQ(rknn_set_internal_mem(a.ctx, mem), RKNN_SUCC);
  ASSERT_EQ(rknn_set_internal_mem(b.ctx, mem), RKNN_SUCC);
  std::vector<float> y(12);
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(infer(a.ctx, kX1, &y), RKNN_SUCC);
    expect_floats_eq(y, expected_add(kX1));
    ASSERT_EQ(infer(b.ctx, kX2, &y), RKNN_SUCC);
    expect_floats_eq(y, expected_add(kX2));
  }
  EXPECT_EQ(rknn_destroy_mem(0, mem), RKNN_SUCC);
}

TEST(InitFlags, MemAllocOutsideNeedsWeightAndInternalMem) {
  Ctx c;
  ASSERT_EQ(init(c, make_add_model(), RKNN_FLAG_MEM_ALLOC_OUTSIDE), RKNN_SUCC);
  rknn_mem_size ms{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms)), RKNN_SUCC);
  ASSERT_EQ(ms.total_weight_size, 12u);
  rknn_tensor_mem* internal = rknn_create_mem(c.ctx, ms.total_internal_size);
  ASSERT_EQ(rknn_set_internal_mem(c.ctx, internal), RKNN_SUCC);
  ASSERT_EQ(set_float_input(c.ctx, kX1), RKNN_SUCC);
  EXPECT_EQ(rknn_run(c.ctx, nullptr), RKNN_ERR_FAIL);  // no weight mem yet
  EXPECT_EQ(rknn_set_weight_mem(c.ctx, nullptr), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_mem* small = rknn_create_mem(c.ctx, ms.total_weight_size - 1);
  EXPECT_EQ(rknn_set_weight_mem(c.ctx, small), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_mem* weights = rknn_create_mem(c.ctx, ms.total_weight_size);
  ASSERT_EQ(rknn_set_weight_mem(c.ctx, weights), RKNN_SUCC);
  std::vector<float> y(12);
  ASSERT_EQ(infer(c.ctx, kX2, &y), RKNN_SUCC);
  expect_floats_eq(y, expected_add(kX2));
  ASSERT_EQ(rknn_destroy_mem(c.ctx, weights), RKNN_SUCC);
  EXPECT_EQ(rknn_run(c.ctx, nullptr), RKNN_ERR_FAIL);  // the weight block was destroyed
  rknn_destroy_mem(c.ctx, small);
  rknn_destroy_mem(c.ctx, internal);

  Ctx normal;
  ASSERT_EQ(init(normal, make_add_model()), RKNN_SUCC);
  rknn_tensor_mem* m = rknn_create_mem(normal.ctx, 64);
  EXPECT_EQ(rknn_set_weight_mem(normal.ctx, m), RKNN_ERR_PARAM_INVALID);
  rknn_destroy_mem(normal.ctx, m);
}

TEST(InitFlags, ShareWeightMem) {
  Ctx owner, shared;
  ASSERT_EQ(init(owner, make_add_model()), RKNN_SUCC);
  rknn_init_extend ext{};
  ext.ctx = owner.ctx;
  ASSERT_EQ(init(shared, make_add_model(), RKNN_FLAG_SHARE_WEIGHT_MEM, &ext), RKNN_SUCC);
  std::vector<float> y(12);
  ASSERT_EQ(infer(shared.ctx, kX2, &y), RKNN_SUCC);
  expect_floats_eq(y, expected_add(kX2));

  Ctx bad;
  EXPECT_EQ(init(bad, make_add_model(), RKNN_FLAG_SHARE_WEIGHT_MEM, nullptr), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(bad.ctx, 0u);
  rknn_init_extend none{};
  EXPECT_EQ(init(bad, make_add_model(), RKNN_FLAG_SHARE_WEIGHT_MEM, &none), RKNN_ERR_PARAM_INVALID);
  rknn_init_extend stale{};
  stale.ctx = 0x7777777;
  EXPECT_EQ(init(bad, make_add_model(), RKNN_FLAG_SHARE_WEIGHT_MEM, &stale), RKNN_ERR_CTX_INVALID);
  // Another network cannot borrow these weights.
  EXPECT_EQ(init(bad, make_conv_model(), RKNN_FLAG_SHARE_WEIGHT_MEM, &ext), RKNN_ERR_MODEL_INVALID);
  EXPECT_EQ(bad.ctx, 0u);
}

TEST(InitFlags, ModelBufferZeroCopy) {
  const std::vector<uint8_t> bytes = make_add_model();
  const uint32_t size = static_cast<uint32_t>(bytes.size());
  rknn_tensor_mem* mem = rknn_create_mem2(0, size + 128, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  ASSERT_NE(mem, nullptr);
  uint8_t* base = static_cast<uint8_t*>(mem->virt_addr);
  std::memcpy(base + 64, bytes.data(), bytes.size());  // the model at offset 64
  {
    Ctx c;
    rknn_init_extend ext{};
    ext.real_model_offset = 64;
    ext.real_model_size = size;
    ext.model_buffer_fd = mem->fd;
    ext.model_buffer_flags = mem->flags;
    ASSERT_EQ(rknn_init(&c.ctx, base, size + 128, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, &ext), RKNN_SUCC);
    std::vector<float> y(12);
    ASSERT_EQ(infer(c.ctx, kX1, &y), RKNN_SUCC);
    expect_floats_eq(y, expected_add(kX1));

    // Errors: misaligned model, ranges outside the buffer, a file path.
    Ctx bad;
    ext.real_model_offset = 8;
    EXPECT_EQ(rknn_init(&bad.ctx, base, size + 128, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, &ext), RKNN_ERR_MODEL_INVALID);
    ext.real_model_offset = 256;
    EXPECT_EQ(rknn_init(&bad.ctx, base, size + 128, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, &ext), RKNN_ERR_PARAM_INVALID);
    ext.real_model_offset = -64;
    EXPECT_EQ(rknn_init(&bad.ctx, base, size + 128, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, &ext), RKNN_ERR_PARAM_INVALID);
    char path[] = "/nonexistent.rknn";
    EXPECT_EQ(rknn_init(&bad.ctx, path, 0, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, nullptr), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(bad.ctx, 0u);
  }
  // Without extend the whole buffer is the model (offset 0).
  rknn_tensor_mem* mem0 = rknn_create_mem2(0, size, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  std::memcpy(mem0->virt_addr, bytes.data(), bytes.size());
  {
    Ctx c;
    ASSERT_EQ(rknn_init(&c.ctx, mem0->virt_addr, size, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, nullptr), RKNN_SUCC);
    std::vector<float> y(12);
    ASSERT_EQ(infer(c.ctx, kX2, &y), RKNN_SUCC);
    expect_floats_eq(y, expected_add(kX2));
  }
  EXPECT_EQ(rknn_destroy_mem(0, mem0), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy_mem(0, mem), RKNN_SUCC);
}

TEST(InitFlags, ModelBufferZeroCopyDoesNotCopyTheModel) {
  const std::vector<uint8_t> bytes = make_big_weight_model();
  const uint32_t size = static_cast<uint32_t>(bytes.size());
  rknn_tensor_mem* mem = rknn_create_mem2(0, size, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  ASSERT_NE(mem, nullptr);
  std::memcpy(mem->virt_addr, bytes.data(), bytes.size());
  const size_t before = resident_bytes();
  {
    Ctx c;
    ASSERT_EQ(rknn_init(&c.ctx, mem->virt_addr, size, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, nullptr), RKNN_SUCC);
    EXPECT_LT(resident_bytes() - before, size / 2u);
    const int64_t idx[2] = {7, kRows - 1};
    rknn_input in{};
    in.index = 0; in.buf = const_cast<int64_t*>(idx); in.size = sizeof(idx); in.type = RKNN_TENSOR_INT64;
    ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
    ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
    std::vector<float> y(8);
    ASSERT_EQ(get_float_output(c.ctx, &y), RKNN_SUCC);
    EXPECT_EQ(y[0], 28.f);
    EXPECT_EQ(y[7], static_cast<float>((kRows - 1) * 4 + 3));
  }
  EXPECT_EQ(rknn_destroy_mem(0, mem), RKNN_SUCC);
}

TEST(InitFlags, AsyncDeliversThePreviousFrame) {
  Ctx c;
  ASSERT_EQ(init(c, make_add_model(), RKNN_FLAG_ASYNC_MASK), RKNN_SUCC);
  rknn_run_extend run_ext{};
  rknn_output_extend out_ext{};
  std::vector<float> y(12, 99.f);

  // Frame 1: there is no previous frame; outputs_get gives zeros with frame_id 0.
  ASSERT_EQ(set_float_input(c.ctx, kX1), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, &run_ext), RKNN_SUCC);
  EXPECT_EQ(run_ext.frame_id, 1u);
  ASSERT_EQ(get_float_output(c.ctx, &y, &out_ext), RKNN_SUCC);
  EXPECT_EQ(out_ext.frame_id, 0u);
  expect_floats_eq(y, std::vector<float>(12, 0.f));

  // Frame 2 delivers frame 1, frame 3 delivers frame 2.
  ASSERT_EQ(set_float_input(c.ctx, kX2), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, &run_ext), RKNN_SUCC);
  EXPECT_EQ(run_ext.frame_id, 2u);
  ASSERT_EQ(get_float_output(c.ctx, &y, &out_ext), RKNN_SUCC);
  EXPECT_EQ(out_ext.frame_id, 1u);
  expect_floats_eq(y, expected_add(kX1));
  ASSERT_EQ(set_float_input(c.ctx, kX1), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, &run_ext), RKNN_SUCC);
  ASSERT_EQ(get_float_output(c.ctx, &y, &out_ext), RKNN_SUCC);
  EXPECT_EQ(out_ext.frame_id, 2u);
  expect_floats_eq(y, expected_add(kX2));

  // rknn_wait has nothing to wait for: it reports the last frame.
  rknn_run_extend wait_ext{};
  EXPECT_EQ(rknn_wait(c.ctx, &wait_ext), RKNN_SUCC);
  EXPECT_EQ(wait_ext.frame_id, 3u);
  EXPECT_EQ(rknn_wait(c.ctx, nullptr), RKNN_SUCC);
  EXPECT_EQ(rknn_wait(0x7777777, &wait_ext), RKNN_ERR_CTX_INVALID);
}

TEST(InitFlags, SyncFrameIds) {
  Ctx c;
  ASSERT_EQ(init(c, make_add_model()), RKNN_SUCC);
  rknn_run_extend wait_ext{};
  EXPECT_EQ(rknn_wait(c.ctx, &wait_ext), RKNN_SUCC);
  EXPECT_EQ(wait_ext.frame_id, 0u);
  rknn_run_extend run_ext{};
  run_ext.non_block = 1;  // accepted; the run is complete when rknn_run returns
  for (uint64_t f = 1; f <= 3; ++f) {
    ASSERT_EQ(set_float_input(c.ctx, kX1), RKNN_SUCC);
    ASSERT_EQ(rknn_run(c.ctx, &run_ext), RKNN_SUCC);
    EXPECT_EQ(run_ext.frame_id, f);
  }
  EXPECT_EQ(rknn_wait(c.ctx, &wait_ext), RKNN_SUCC);
  EXPECT_EQ(wait_ext.frame_id, 3u);
  rknn_output_extend out_ext{};
  std::vector<float> y(12);
  ASSERT_EQ(get_float_output(c.ctx, &y, &out_ext), RKNN_SUCC);
  EXPECT_EQ(out_ext.frame_id, 3u);
  expect_floats_eq(y, expected_add(kX1));
}

TEST(InitFlags, UnsupportedFlagsAreRefused) {
  for (uint32_t flag : {static_cast<uint32_t>(RKNN_FLAG_FENCE_IN_OUTSIDE), static_cast<uint32_t>(RKNN_FLAG_FENCE_OUT_OUTSIDE),
                        static_cast<uint32_t>(RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU),
                        static_cast<uint32_t>(RKNN_FLAG_ENABLE_SRAM), static_cast<uint32_t>(RKNN_FLAG_SHARE_SRAM), 0x80000000u}) {
    Ctx c;
    EXPECT_EQ(init(c, make_add_model(), flag), RKNN_ERR_FAIL) << "flag 0x" << std::hex << flag;
    EXPECT_EQ(c.ctx, 0u);
  }
}

TEST(Contexts, SetBatchCoreNum) {
  Ctx single, batch1, batch2;
  ASSERT_EQ(init(single, make_add_model("rk3566", 2)), RKNN_SUCC);
  EXPECT_EQ(rknn_set_batch_core_num(single.ctx, 1), RKNN_ERR_PARAM_INVALID);  // one NPU core
  ASSERT_EQ(init(batch1, make_add_model("rk3588", 1)), RKNN_SUCC);
  EXPECT_EQ(rknn_set_batch_core_num(batch1.ctx, 2), RKNN_ERR_PARAM_INVALID);  // not a multi-batch model
  ASSERT_EQ(init(batch2, make_add_model("rk3588", 2)), RKNN_SUCC);
  EXPECT_EQ(rknn_set_batch_core_num(batch2.ctx, 0), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_set_batch_core_num(batch2.ctx, 4), RKNN_ERR_PARAM_INVALID);  // RK3588 has 3 cores
  EXPECT_EQ(rknn_set_batch_core_num(0x7777777, 2), RKNN_ERR_CTX_INVALID);
  ASSERT_EQ(rknn_set_batch_core_num(batch2.ctx, 2), RKNN_SUCC);
  std::vector<float> x(24), y(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i % 7) - 3.f;
  ASSERT_EQ(infer(batch2.ctx, x, &y), RKNN_SUCC);
  expect_floats_eq(y, expected_add(x));
}

}  // namespace
