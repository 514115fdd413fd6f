// Kernels that round their float outputs to fp16 themselves (Kernel::rounds_fp16_outputs(), used
// in fp16 mode instead of the runtime's pass over the output): with KernelContext::round_fp16 set,
// each must store exactly round_to_fp16 of what it stores without it, bit for bit, on values that
// fp16 cannot hold (tails, ties, large and tiny magnitudes); and must say it does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "kernels/kernel.h"
#include "testutil/op_harness.h"
#include "testutil/cpu.h"

namespace orknn {

namespace {

const KernelEntry* find_kernel(OpId op, const std::string& name) {
  for (const KernelEntry* e : kernels_for(op))
    if (name == e->name) return e;
  return nullptr;
}

// Values spread over fp16's range and beyond, most of them not fp16 values.
std::vector<float> awkward_values(size_t n, uint32_t seed) {
  std::vector<float> v = test::random_floats(n, seed, -4.f, 4.f);
  for (size_t i = 0; i < n; ++i) {
    if (i % 7 == 0) v[i] *= 3000.f;          // above fp16's 2048 integer step
    if (i % 11 == 0) v[i] *= 1e-5f;          // fp16 subnormals
    if (i % 13 == 0) v[i] = 1.f + 1.f / 2048.f;  // a tie between two fp16 values
  }
  return v;
}

// A square window's attributes as infer writes them (every pad `pad`, no dilation).
void set_window_attrs(Node& n, int64_t k, int64_t stride, int64_t pad) {
  n.attrs.set_ints("kernel_shape", {k, k});
  n.attrs.set_ints("strides", {stride, stride});
  n.attrs.set_ints("pads", {pad, pad, pad, pad});
  n.attrs.set_ints("dilations", {1, 1});
}

// A node `op` of g with a square window (set_window_attrs): input x of x_shape, constant weights w
// of w_shape, a constant bias b when not empty, output of y_shape.
Node window_node(Graph& g, OpId op, const char* name, const Shape& x_shape, const Shape& w_shape,
                 const std::vector<float>& w, const std::vector<float>& b, const Shape& y_shape, int64_t k,
                 int64_t stride, int64_t pad) {
  Node n;
  n.op = op;
  n.name = name;
  n.inputs = {g.add_tensor("x", x_shape, DType::kF32), g.add_const("w", w_shape, DType::kF32, w.data(), w.size() * 4)};
  if (!b.empty()) n.inputs.push_back(g.add_const("b", {static_cast<int64_t>(b.size())}, DType::kF32, b.data(), b.size() * 4));
  n.outputs = {g.add_tensor("y", y_shape, DType::kF32)};
  set_window_attrs(n, k, stride, pad);
  return n;
}

// A node `op` of g with one activation input of shape xs and one output of shape ys.
Node one_input_node(Graph& g, OpId op, const Shape& xs, const Shape& ys) {
  Node n;
  n.op = op;
  n.name = op_name(op);
  n.inputs = {g.add_tensor("x", xs, DType::kF32)};
  n.outputs = {g.add_tensor("y", ys, DType::kF32)};
  return n;
}

// Runs kernel `name` on node `n` of graph `g` (inputs already filled) twice: without
// ctx.round_fp16 (then rounded here) and with it; the outputs must be bit-identical. `blocked`:
// the activations are handed over as blocked tensors (the same bytes either way).
void expect_fused_rounding(Graph& g, Node& n, const std::string& name, const std::vector<std::vector<float>>& inputs,
                           bool blocked = false) {
  SCOPED_TRACE(name + " " + op_name(n.op));
  const KernelEntry* e = find_kernel(n.op, name);
  ASSERT_NE(e, nullptr) << name << " is not registered";
  ASSERT_TRUE(!e->supports || e->supports(g, n)) << name << " declines the node";
  const Tensor& y = g.tensor(n.outputs[0]);
  std::vector<float> plain(static_cast<size_t>(y.numel())), fused(plain.size());
  for (int threads : {1, 2}) {
    for (int round : {0, 1}) {
      std::unique_ptr<Kernel> k = e->create();
      KernelContext ctx;
      ctx.graph = &g;
      ctx.node = &n;
      ctx.num_threads = threads;
      ctx.round_fp16 = round != 0;
      if (blocked) {
        ctx.in_blocked.assign(n.inputs.size(), 1);
        ctx.out_blocked = {1};
      }
      size_t next = 0;
      for (int id : n.inputs)
        ctx.inputs.push_back(g.tensor(id).is_const() ? static_cast<const void*>(g.tensor(id).data.ptr)
                                                     : static_cast<const void*>(inputs[next++].data()));
      ctx.outputs = {round ? fused.data() : plain.data()};
      ASSERT_TRUE(k->prepare(ctx).ok());
      EXPECT_TRUE(k->rounds_fp16_outputs());
      k->run(ctx);
    }
    const std::vector<float> raw = plain;
    round_to_fp16(plain.data(), plain.size());
    EXPECT_NE(std::memcmp(raw.data(), plain.data(), raw.size() * sizeof(float)), 0)
        << "every output is an fp16 value already: the test checks nothing";
    EXPECT_EQ(std::memcmp(plain.data(), fused.data(), plain.size() * sizeof(float)), 0) << "threads " << threads;
  }
}

TEST(FusedFp16Rounding, DepthwiseConv) {
  if (!ORKNN_X86_HAS("avx512f") || !ORKNN_X86_HAS("avx512bw")) GTEST_SKIP() << "CPU without AVX-512";
  Graph g;
  const std::vector<float> w = awkward_values(5 * 9, 5);
  Node n = window_node(g, OpId::Conv, "dw", {1, 5, 30, 31}, {5, 1, 3, 3}, w, {}, {1, 5, 30, 31}, 3, 1, 1);
  n.attrs.set_int("group", 5);
  expect_fused_rounding(g, n, "x86_dw_f32", {awkward_values(5 * 30 * 31, 4)});
}

// The nChw16c path, whose interior finishes the activations of fp16 mode's common layers (none,
// Relu, Clip, HardSwish) as compile-time variants and every other one (LeakyRelu here) through
// store(): each must equal the unrounded run (store() throughout) rounded afterwards. Widths
// around the 8-output groups, both strides and window sizes, with and without a bias.
TEST(FusedFp16Rounding, DepthwiseConvBlocked) {
  if (!ORKNN_X86_HAS("avx512f") || !ORKNN_X86_HAS("avx512bw")) GTEST_SKIP() << "CPU without AVX-512";
  struct Case {
    const char* act;
    int64_t k, stride, w;
    bool bias;
  };
  // (Output widths of 24 and more: narrower blocked layers are oneDNN's.)
  for (const Case& cs : {Case{"", 3, 1, 30, true}, Case{"Relu", 3, 2, 53, true}, Case{"Clip", 3, 1, 35, false},
                         Case{"HardSwish", 5, 1, 27, true}, Case{"HardSwish", 5, 2, 50, false},
                         Case{"LeakyRelu", 3, 1, 26, true}}) {
    SCOPED_TRACE(std::string(cs.act) + " k" + std::to_string(cs.k) + " s" + std::to_string(cs.stride));
    Graph g;
    const int64_t c = 32, h = 9, pad = cs.k / 2;
    const int64_t oh = (h + 2 * pad - cs.k) / cs.stride + 1, ow = (cs.w + 2 * pad - cs.k) / cs.stride + 1;
    const std::vector<float> w = awkward_values(static_cast<size_t>(c * cs.k * cs.k), 51);
    const std::vector<float> b = cs.bias ? awkward_values(c, 52) : std::vector<float>{};
    Node n = window_node(g, OpId::Conv, "dw", {1, c, h, cs.w}, {c, 1, cs.k, cs.k}, w, b, {1, c, oh, ow}, cs.k, cs.stride, pad);
    n.attrs.set_int("group", c);
    if (cs.act[0]) {
      n.attrs.set_string("fused_act", cs.act);
      n.attrs.set_float("fused_alpha", std::string(cs.act) == "LeakyRelu" ? 0.1f : -1.5f);
      n.attrs.set_float("fused_beta", 2.5f);
    }
    expect_fused_rounding(g, n, "x86_dw_f32", {awkward_values(static_cast<size_t>(c * h * cs.w), 53)}, /*blocked=*/true);
  }
}

TEST(FusedFp16Rounding, SigmoidAndBinaryOps) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  {
    Graph g;
    Node n;
    n.op = OpId::Sigmoid;
    n.inputs = {g.add_tensor("x", {2, 3, 37, 41}, DType::kF32)};
    n.outputs = {g.add_tensor("y", {2, 3, 37, 41}, DType::kF32)};
    expect_fused_rounding(g, n, "avx512_f32", {awkward_values(2 * 3 * 37 * 41, 6)});
  }
  for (const Shape& s : {Shape{3, 1000}, Shape{2, 16, 37}}) {  // contiguous and strided slices
    Graph g;
    Node n;
    n.op = OpId::Softmax;
    n.attrs.set_int("axis", 1);
    n.inputs = {g.add_tensor("x", s, DType::kF32)};
    n.outputs = {g.add_tensor("y", s, DType::kF32)};
    std::vector<float> x = awkward_values(static_cast<size_t>(shape_numel(s)), 9);
    for (float& v : x) v = std::fmod(v, 10.f);  // keep exp finite: a softmax, not an overflow test
    expect_fused_rounding(g, n, "avx512_f32", {x});
  }
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul, OpId::Div}) {
    for (bool broadcast : {false, true}) {
      Graph g;
      Node n;
      n.op = op;
      const Shape bs = broadcast ? Shape{2, 3, 1, 1} : Shape{2, 3, 37, 41};
      n.inputs = {g.add_tensor("a", {2, 3, 37, 41}, DType::kF32), g.add_tensor("b", bs, DType::kF32)};
      n.outputs = {g.add_tensor("y", {2, 3, 37, 41}, DType::kF32)};
      expect_fused_rounding(g, n, "avx512_f32",
                            {awkward_values(2 * 3 * 37 * 41, 7), awkward_values(static_cast<size_t>(shape_numel(bs)), 8)});
    }
  }
}

TEST(FusedFp16Rounding, ErfGeluTanhLayerNorm) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  for (OpId op : {OpId::Erf, OpId::Gelu}) {
    Graph g;
    Node n = one_input_node(g, op, {3, 7, 41}, {3, 7, 41});
    expect_fused_rounding(g, n, "x86_erf_f32", {awkward_values(3 * 7 * 41, 23)});
  }
  for (const char* approximate : {"", "tanh"}) {  // Tanh, Gelu's tanh formula
    Graph g;
    Node n = one_input_node(g, *approximate ? OpId::Gelu : OpId::Tanh, {3, 7, 41}, {3, 7, 41});
    if (*approximate) n.attrs.set_string("approximate", approximate);
    expect_fused_rounding(g, n, "x86_tanh_f32", {awkward_values(3 * 7 * 41, 29)});
  }
  {
    Graph g;
    Node n;
    n.op = OpId::LayerNormalization;
    n.attrs.set_int("axis", 2);
    const std::vector<float> scale = awkward_values(41, 24), bias = awkward_values(41, 25);
    n.inputs = {g.add_tensor("x", {3, 7, 41}, DType::kF32), g.add_const("s", {41}, DType::kF32, scale.data(), 41 * 4),
                g.add_const("b", {41}, DType::kF32, bias.data(), 41 * 4)};
    n.outputs = {g.add_tensor("y", {3, 7, 41}, DType::kF32)};
    expect_fused_rounding(g, n, "x86_layernorm_f32", {awkward_values(3 * 7 * 41, 26)});
  }
}

// onednn_conv_f32 with a fused Sigmoid or SiLU: the activation and the rounding run in the
// kernel's own pass after oneDNN's convolution (act_in_own_pass in onednn/conv.cc). Shapes that
// never take Winograd (1x1; 3x3 with stride 2), whose result would differ with the rounding flag.
TEST(FusedFp16Rounding, OnednnConvSigmoidSilu) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  if (!find_kernel(OpId::Conv, "onednn_conv_f32")) GTEST_SKIP() << "onednn_conv_f32 not built";
  struct Case {
    const char* act;
    int64_t c, oc, k, stride;
  };
  for (const Case& cs : {Case{"Silu", 24, 40, 1, 1}, Case{"Sigmoid", 16, 32, 3, 2}, Case{"Silu", 3, 19, 3, 2}}) {
    SCOPED_TRACE(std::string(cs.act) + " k" + std::to_string(cs.k));
    Graph g;
    const int64_t h = 17, w = 19, pad = cs.k / 2;
    const int64_t oh = (h + 2 * pad - cs.k) / cs.stride + 1, ow = (w + 2 * pad - cs.k) / cs.stride + 1;
    const std::vector<float> wt = awkward_values(static_cast<size_t>(cs.oc * cs.c * cs.k * cs.k), 21);
    const std::vector<float> bias = awkward_values(static_cast<size_t>(cs.oc), 22);
    Node n = window_node(g, OpId::Conv, "conv", {1, cs.c, h, w}, {cs.oc, cs.c, cs.k, cs.k}, wt, bias, {1, cs.oc, oh, ow},
                         cs.k, cs.stride, pad);
    n.attrs.set_int("group", 1);
    n.attrs.set_string("fused_act", cs.act);
    // Small inputs: the sums stay where sigmoid is not saturated to exactly 0 or 1.
    std::vector<float> x = test::random_floats(static_cast<size_t>(cs.c * h * w), 23, -0.05f, 0.05f);
    expect_fused_rounding(g, n, "onednn_conv_f32", {x});
  }
}

TEST(FusedFp16Rounding, Deconv2x2) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  for (int64_t oc : {1, 6}) {
    Graph g;
    const std::vector<float> w = awkward_values(static_cast<size_t>(5 * oc * 4), 21), b = awkward_values(static_cast<size_t>(oc), 22);
    Node n = window_node(g, OpId::ConvTranspose, "up", {2, 5, 9, 37}, {5, oc, 2, 2}, w, b, {2, oc, 18, 74}, 2, 2, 0);
    expect_fused_rounding(g, n, "x86_deconv2x2_f32", {awkward_values(2 * 5 * 9 * 37, 23)});
  }
}

// Both weight storages of the one-row Gemm: fp16 values (as the converter leaves them in fp16 mode,
// stored as fp16) and arbitrary fp32 weights (stored as fp32).
TEST(FusedFp16Rounding, Gemv) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  for (bool fp16_weights : {true, false}) {
    Graph g;
    std::vector<float> w = awkward_values(37 * 70, 31), c = awkward_values(70, 32);
    if (fp16_weights) round_to_fp16(w.data(), w.size());
    Node n;
    n.op = OpId::Gemm;
    n.name = "fc";
    n.inputs = {g.add_tensor("a", {1, 37}, DType::kF32), g.add_const("w", {70, 37}, DType::kF32, w.data(), w.size() * 4),
                g.add_const("c", {70}, DType::kF32, c.data(), c.size() * 4)};
    n.outputs = {g.add_tensor("y", {1, 70}, DType::kF32)};
    n.attrs.set_int("transB", 1);
    n.attrs.set_float("alpha", 0.75f);
    expect_fused_rounding(g, n, "x86_gemv_f32", {awkward_values(37, 33)});
  }
}

TEST(FusedFp16Rounding, Pointwise16c) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  Graph g;
  const std::vector<float> w = awkward_values(80 * 32, 41), b = awkward_values(80, 42);
  Node n = window_node(g, OpId::Conv, "pw", {1, 32, 7, 7}, {80, 32, 1, 1}, w, b, {1, 80, 7, 7}, 1, 1, 0);
  n.attrs.set_int("group", 1);
  expect_fused_rounding(g, n, "x86_pw16c_f32", {awkward_values(32 * 49, 43)}, /*blocked=*/true);
  // With a residual input (ops/conv.cc), added before the rounding.
  n.inputs.push_back(g.add_tensor("r", {1, 80, 7, 7}, DType::kF32));
  expect_fused_rounding(g, n, "x86_pw16c_f32", {awkward_values(32 * 49, 43), awkward_values(80 * 49, 44)},
                        /*blocked=*/true);
}

TEST(FusedFp16Rounding, StemF32) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  for (const char* act : {"Relu", "LeakyRelu"}) {  // a compile-time activation and the run-time switch
    SCOPED_TRACE(act);
    Graph g;
    const std::vector<float> w = awkward_values(24 * 3 * 9, 61), b = awkward_values(24, 62);
    Node n = window_node(g, OpId::Conv, "stem", {1, 3, 20, 37}, {24, 3, 3, 3}, w, b, {1, 24, 10, 19}, 3, 2, 1);
    n.attrs.set_int("group", 1);
    n.attrs.set_string("fused_act", act);
    n.attrs.set_float("fused_alpha", 0.1f);
    expect_fused_rounding(g, n, "x86_stem_f32", {awkward_values(3 * 20 * 37, 63)});
  }
}

TEST(FusedFp16Rounding, GlobalAveragePool) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  Graph g;
  Node n;
  n.op = OpId::GlobalAveragePool;
  n.name = "gap";
  n.inputs = {g.add_tensor("x", {2, 37, 5, 7}, DType::kF32)};
  n.outputs = {g.add_tensor("y", {2, 37, 1, 1}, DType::kF32)};
  expect_fused_rounding(g, n, "x86_gap_f32", {awkward_values(2 * 37 * 5 * 7, 41)});
}

// Bilinear Resize: NCHW and nChw16c on the AVX-512 loops, NCHW on the AVX2 ones (selected by name).
TEST(FusedFp16Rounding, ResizeLinear) {
  if (!ORKNN_X86_HAS("avx2")) GTEST_SKIP() << "CPU without AVX2";
  if (!find_kernel(OpId::Resize, "x86_resize_linear_f32")) GTEST_SKIP() << "x86_resize_linear_f32 not built";
  Graph g;
  Node n = one_input_node(g, OpId::Resize, {1, 32, 7, 9}, {1, 32, 17, 20});
  n.attrs.set_string("mode", "linear");
  n.attrs.set_string("coordinate_transformation_mode", "half_pixel");
  n.attrs.set_floats("scales", {1.f, 1.f, 17.f / 7.f, 20.f / 9.f});
  const std::vector<float> x = awkward_values(32 * 7 * 9, 71);
  if (ORKNN_X86_HAS("avx512f")) {
    expect_fused_rounding(g, n, "x86_resize_linear_f32", {x});
    expect_fused_rounding(g, n, "x86_resize_linear_f32", {x}, /*blocked=*/true);
  }
  setenv("OPENRKNN_DISABLE_KERNELS", "x86_resize_linear_avx512", 1);
  expect_fused_rounding(g, n, "x86_resize_linear_f32", {x});
  unsetenv("OPENRKNN_DISABLE_KERNELS");
}

TEST(FusedFp16Rounding, BatchNorm) {
  if (!ORKNN_X86_HAS("avx512f")) GTEST_SKIP() << "CPU without AVX-512F";
  Graph g;
  const std::vector<float> scale = awkward_values(6, 11), bias = awkward_values(6, 12), mean = awkward_values(6, 13);
  std::vector<float> var = test::random_floats(6, 14, 0.1f, 2.f);
  Node n;
  n.op = OpId::BatchNormalization;
  n.inputs = {g.add_tensor("x", {2, 6, 19, 23}, DType::kF32), g.add_const("s", {6}, DType::kF32, scale.data(), 24),
              g.add_const("b", {6}, DType::kF32, bias.data(), 24), g.add_const("m", {6}, DType::kF32, mean.data(), 24),
              g.add_const("v", {6}, DType::kF32, var.data(), 24)};
  n.outputs = {g.add_tensor("y", {2, 6, 19, 23}, DType::kF32)};
  expect_fused_rounding(g, n, "avx512_f32", {awkward_values(2 * 6 * 19 * 23, 10)});
}

}  // namespace
}  // namespace orknn
