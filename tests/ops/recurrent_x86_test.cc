// x86_recurrent_f32 (kernels/x86/recurrent_avx512.cc) against the reference LSTM, GRU and RNN: every
// direction and layout, each optional input (sequence_lens shorter than the sequence and an empty
// one, initial_h / initial_c, peepholes), clip, input_forget, linear_before_reset both ways, batch
// rows beyond the kernel's groups of 4, hidden sizes below, at and past multiples of 16, fp32 and
// fp16-valued weights (the kernel's two weight storages), 1 and 2 threads. Every output (Y, Y_h,
// Y_c) within the float tolerance of docs/kernels.md: max |fast - ref| <= 1e-4 max(1, max |ref|).
// Nodes the kernel declines (other activations, non-constant weights) stay on the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "kernels/kernel.h"
#include "kernels/x86/cpu_features.h"
#include "ops/recurrent_test_util.h"
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

constexpr const char* kKernel = "x86_recurrent_f32";
constexpr float kRelTol = 1e-4f;

struct Case {
  OpId op = OpId::LSTM;
  std::string direction = "forward";
  int64_t layout = 0;
  int64_t seq = 5, batch = 1, input = 7, hidden = 20;
  bool bias = true, lens = false, init_h = false, init_c = false, peephole = false, fp16_weights = false;
  float clip = 0.f;  // 0: absent
  int64_t input_forget = 0, linear_before_reset = 0;
  std::vector<std::string> acts;  // empty: absent (the defaults)
  float w_range = 0.6f;      // W, R uniform in [-w_range, w_range]
  bool const_weights = true;
};

std::string label(const Case& c) {
  std::string s = std::string(op_name(c.op)) + " " + c.direction + " layout=" + std::to_string(c.layout) +
                  " seq=" + std::to_string(c.seq) + " batch=" + std::to_string(c.batch) +
                  " input=" + std::to_string(c.input) + " hidden=" + std::to_string(c.hidden);
  if (c.bias) s += " B";
  if (c.lens) s += " sequence_lens";
  if (c.init_h) s += " initial_h";
  if (c.init_c) s += " initial_c";
  if (c.peephole) s += " P";
  if (c.clip > 0) s += " clip";
  if (c.input_forget) s += " input_forget";
  if (c.linear_before_reset) s += " linear_before_reset";
  if (c.fp16_weights) s += " fp16-weights";
  return s;
}

int64_t gates_of(OpId op) { return op == OpId::LSTM ? 4 : op == OpId::GRU ? 3 : 1; }

struct Built {
  Attrs attrs;
  std::vector<TensorData> inputs;
  int outputs = 2;
};

Built build(const Case& c, uint32_t seed) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, H = c.hidden, G = gates_of(c.op);
  const bool bm = c.layout == 1;
  const Shape x_shape = bm ? Shape{c.batch, c.seq, c.input} : Shape{c.seq, c.batch, c.input};
  const Shape state = bm ? Shape{c.batch, D, H} : Shape{D, c.batch, H};
  auto weights = [&](size_t n, uint32_t s, float lo, float hi) {
    std::vector<float> v = random_floats(n, s, lo, hi);
    if (c.fp16_weights) round_to_fp16(v.data(), v.size());
    return v;
  };
  Built b;
  b.attrs = recurrent_attrs(H, c.direction, c.layout, c.clip, c.input_forget, c.linear_before_reset, c.acts);
  // Shorter than the sequence, down to an empty one for the last row (batch > 1).
  std::vector<int32_t> lens;
  for (int64_t i = 0; i < c.batch; ++i)
    lens.push_back(c.batch > 1 && i == c.batch - 1 ? 0 : int32_t(std::max<int64_t>(1, c.seq - 1 - i)));
  b.inputs = {f32(x_shape, random_floats(size_t(shape_numel(x_shape)), seed, -1.f, 1.f)),
              f32({D, G * H, c.input}, weights(size_t(D * G * H * c.input), seed + 1, -c.w_range, c.w_range),
                  c.const_weights),
              f32({D, G * H, H}, weights(size_t(D * G * H * H), seed + 2, -c.w_range, c.w_range), c.const_weights),
              c.bias ? f32({D, 2 * G * H}, weights(size_t(D * 2 * G * H), seed + 3, -0.5f, 0.5f), true)
                     : TensorData::none(),
              c.lens ? i32({c.batch}, lens) : TensorData::none(),
              c.init_h ? f32(state, random_floats(size_t(D * c.batch * H), seed + 4, -1.f, 1.f)) : TensorData::none()};
  if (c.op == OpId::LSTM) {
    b.inputs.push_back(c.init_c ? f32(state, random_floats(size_t(D * c.batch * H), seed + 5, -2.f, 2.f))
                                : TensorData::none());
    b.inputs.push_back(c.peephole ? f32({D, 3 * H}, weights(size_t(D * 3 * H), seed + 6, -0.5f, 0.5f), true)
                                  : TensorData::none());
  }
  while (b.inputs.back().absent) b.inputs.pop_back();
  b.outputs = c.op == OpId::LSTM ? 3 : 2;
  return b;
}

// The case's node in g, inferred (as the op harness builds it, without running a kernel).
Status make_node(OpId op, const Built& b, Graph* g, Node* n) {
  n->name = "node";
  n->op = op;
  n->attrs = b.attrs;
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    const TensorData& d = b.inputs[i];
    const std::string name = "in" + std::to_string(i);
    n->inputs.push_back(d.absent ? -1
                                 : d.is_const ? g->add_const(name, d.shape, d.dtype, d.bytes.data(), d.bytes.size())
                                              : g->add_tensor(name, d.shape, d.dtype));
  }
  for (int o = 0; o < b.outputs; ++o) n->outputs.push_back(g->add_tensor("out" + std::to_string(o), {}, DType::kF32));
  return find_op(op)->infer(*g, *n);
}

float max_abs(const std::vector<float>& v) {
  float m = 0.f;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Worst |fast - ref| / max(1, max |ref|) over the outputs, failing the test past kRelTol.
float expect_matches_ref(const Case& c, uint32_t seed) {
  SCOPED_TRACE(label(c));
  const Built b = build(c, seed);
  const OpResult want = run_op(c.op, b.attrs, b.inputs, b.outputs, "ref");
  EXPECT_TRUE(want.status.ok()) << want.status.message();
  if (!want.status.ok()) return 0.f;
  float worst = 0.f;
  for (int threads : {1, 2}) {
    const OpResult got = run_op(c.op, b.attrs, b.inputs, b.outputs, kKernel, threads);
    EXPECT_TRUE(got.status.ok()) << "threads=" << threads << ": " << got.status.message();
    if (!got.status.ok()) return 0.f;
    EXPECT_EQ(got.kernel_name, kKernel);
    for (size_t o = 0; o < want.outputs.size(); ++o) {
      const std::vector<float> w = want.outputs[o].as<float>(), h = got.outputs[o].as<float>();
      for (float v : w) EXPECT_TRUE(std::isfinite(v)) << "reference output " << o;
      const float scale = std::max(1.f, max_abs(w)), diff = max_abs_diff(h, w);
      EXPECT_LE(diff, kRelTol * scale) << "output " << o << " threads=" << threads;
      worst = std::max(worst, diff / scale);
    }
  }
  return worst;
}

bool have_kernel() { return x86::cpu_avx512f() && kernel_registered(OpId::LSTM, kKernel); }

TEST(RecurrentX86, MatchesReferenceOverParameterMatrix) {
  if (!have_kernel()) GTEST_SKIP() << "no AVX-512F";
  uint32_t seed = 7000;
  int cases = 0;
  float worst = 0.f;
  // Every op variant x direction x layout x optional-input variant; sizes rotate.
  const struct { int64_t batch, hidden, input, seq; } sizes[] = {
      {1, 20, 7, 6}, {3, 16, 5, 5}, {5, 33, 17, 7}, {2, 5, 3, 4}, {6, 32, 64, 3}};
  int rot = 0;
  for (int variant_op = 0; variant_op < 4; ++variant_op) {  // LSTM, GRU lbr=0, GRU lbr=1, RNN
    for (const char* direction : {"forward", "reverse", "bidirectional"}) {
      for (int64_t layout : {0, 1}) {
        for (int variant = 0; variant < 7; ++variant) {
          Case c;
          c.op = variant_op == 0 ? OpId::LSTM : variant_op == 3 ? OpId::RNN : OpId::GRU;
          c.linear_before_reset = variant_op == 2;
          c.direction = direction;
          c.layout = layout;
          const auto& sz = sizes[rot++ % 5];
          c.batch = sz.batch;
          c.hidden = sz.hidden;
          c.input = sz.input;
          c.seq = sz.seq;
          c.bias = variant != 0;
          c.lens = variant == 2 || variant >= 5;
          c.init_h = variant == 3 || variant >= 5;
          c.init_c = c.op == OpId::LSTM && (variant == 4 || variant >= 5);
          c.peephole = c.op == OpId::LSTM && (variant == 4 || variant >= 5);
          if (variant >= 5) c.clip = 0.6f;
          if (variant == 6) {
            c.input_forget = c.op == OpId::LSTM;
            c.fp16_weights = true;
          }
          worst = std::max(worst, expect_matches_ref(c, seed += 10));
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 4 * 3 * 2 * 7);
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", worst);
  ::testing::Test::RecordProperty("worst_rel_err", text);
}

// The CRNN shapes (bidirectional, batch 1, hidden 32 and 256, as the model families run them),
// with fp16-valued weights as fp16 mode stores them, and a long sequence. At hidden 256 the weights
// are PyTorch's initial range, +-1/sqrt(hidden): with +-0.6 the recurrence is chaotic (R's spectral
// radius ~5) and a difference in the last bits grows step by step (GRU: 2e-6 after one step,
// 5e-4 after 26, growing steadily in both directions).
TEST(RecurrentX86, CrnnShapesAndLongSequences) {
  if (!have_kernel()) GTEST_SKIP() << "no AVX-512F";
  uint32_t seed = 9000;
  for (OpId op : {OpId::LSTM, OpId::GRU}) {
    for (int64_t hidden : {32, 256}) {
      Case c;
      c.op = op;
      c.direction = "bidirectional";
      c.linear_before_reset = op == OpId::GRU;
      c.seq = 26;
      c.input = hidden == 32 ? 64 : 512;
      c.hidden = hidden;
      c.init_h = c.init_c = true;
      c.fp16_weights = hidden == 256;
      if (hidden == 256) c.w_range = 1.f / 16;
      expect_matches_ref(c, seed += 10);
    }
    Case c;
    c.op = op;
    c.seq = 200;
    c.batch = 2;
    c.hidden = 24;
    c.input = 8;
    c.lens = true;
    expect_matches_ref(c, seed += 10);
  }
}

// Outputs start as NaN bytes (the op harness zeroes them; the arena does not): the kernel must
// write every element, zeros for the steps past a row's length and Y_h / Y_c of an empty sequence.
TEST(RecurrentX86, WritesEveryOutputElement) {
  if (!have_kernel()) GTEST_SKIP() << "no AVX-512F";
  for (OpId op : {OpId::LSTM, OpId::GRU}) {
    Case c;
    c.op = op;
    c.direction = "bidirectional";
    c.batch = 5;
    c.hidden = 19;
    c.lens = c.init_h = c.init_c = true;
    SCOPED_TRACE(label(c));
    const Built b = build(c, 321);
    const OpResult want = run_op(op, b.attrs, b.inputs, b.outputs, "ref");
    ASSERT_TRUE(want.status.ok()) << want.status.message();
    Graph g;
    Node n;
    ASSERT_OK(make_node(op, b, &g, &n));
    std::unique_ptr<Kernel> k;
    for (const KernelEntry* e : kernels_for(op))
      if (std::string(e->name) == kKernel) k = e->create();
    ASSERT_TRUE(k);
    KernelContext ctx;
    ctx.graph = &g;
    ctx.node = &n;
    for (size_t i = 0; i < b.inputs.size(); ++i)
      ctx.inputs.push_back(b.inputs[i].absent ? nullptr : b.inputs[i].bytes.data());
    std::vector<std::vector<float>> outs;
    for (int o = 0; o < b.outputs; ++o)
      outs.emplace_back(size_t(g.tensor(n.outputs[size_t(o)]).numel()), std::nanf(""));
    for (auto& o : outs) ctx.outputs.push_back(o.data());
    ASSERT_OK(k->prepare(ctx));
    k->run(ctx);
    for (size_t o = 0; o < outs.size(); ++o) {
      const std::vector<float> w = want.outputs[o].as<float>();
      ASSERT_EQ(outs[o].size(), w.size());
      EXPECT_LE(max_abs_diff(outs[o], w), kRelTol * std::max(1.f, max_abs(w))) << "output " << o;
      for (size_t i = 0; i < w.size(); ++i)
        if (!std::isfinite(outs[o][i])) {
          ADD_FAILURE() << "output " << o << " element " << i << " not written";
          break;
        }
    }
  }
}

// The registry's pick: this kernel for default activations and constant weights, the reference
// otherwise, and on CPUs without AVX-512F.
TEST(RecurrentX86, SelectionAndFallback) {
  if (!kernel_registered(OpId::LSTM, kKernel)) GTEST_SKIP() << "no x86 backend";
  // The pick only: under qemu's AVX2 emulation the reference's vectorised loops may fault.
  auto best = [](const Case& c) {
    const Built b = build(c, 11);
    Graph g;
    Node n;
    const Status st = make_node(c.op, b, &g, &n);
    EXPECT_TRUE(st.ok()) << st.message();
    std::string name;
    EXPECT_TRUE(create_kernel(g, n, /*allow_fast=*/true, &name));
    return name;
  };
  Case c;
  if (!x86::cpu_avx512f()) {
    EXPECT_EQ(best(c), "ref");
    return;
  }
  EXPECT_EQ(best(c), kKernel);
  c.acts = {"sigmoid", "tanh", "tanh"};  // the defaults, spelled in lower case
  EXPECT_EQ(best(c), kKernel);
  c.acts = {"Sigmoid", "Tanh", "Relu"};
  EXPECT_EQ(best(c), "ref");
  c.acts = {"HardSigmoid", "Tanh", "Tanh"};
  EXPECT_EQ(best(c), "ref");
  c.acts.clear();
  c.const_weights = false;
  EXPECT_EQ(best(c), "ref");
  Case gru;
  gru.op = OpId::GRU;
  EXPECT_EQ(best(gru), kKernel);
  gru.acts = {"Sigmoid", "Relu"};
  EXPECT_EQ(best(gru), "ref");
  Case rnn;
  rnn.op = OpId::RNN;
  EXPECT_EQ(best(rnn), kKernel);
  rnn.acts = {"Relu"};
  EXPECT_EQ(best(rnn), "ref");
}

}  // namespace
}  // namespace orknn::test
