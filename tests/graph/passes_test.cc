// Graph passes on small hand-built graphs: structure after the pass, and numbers equal to the
// unrewritten graph (both run with reference kernels) or to a formula written here.
#include <gtest/gtest.h>

#include <cmath>

#include "common/fp16.h"
#include "converter/graph_runner.h"
#include "graph/passes/passes.h"
#include "testutil/op_harness.h"
#include "testutil/status_assert.h"

namespace orknn::test {
namespace {

// Builds a graph node by node; finish() runs every infer so shapes are set.
struct GraphBuilder {
  Graph g;
  GraphBuilder() { g.precision = FloatPrecision::kFp32; }
  int input(const std::string& name, const Shape& s) {
    int id = g.add_tensor(name, s, DType::kF32);
    GraphInput gi;
    gi.tensor = id;
    g.inputs.push_back(gi);
    return id;
  }
  int constant(const std::string& name, const Shape& s, const std::vector<float>& v) {
    return g.add_const(name, s, DType::kF32, v.data(), v.size() * sizeof(float));
  }
  int node(OpId op, const std::vector<int>& ins, const Attrs& attrs = {}, const std::string& out_name = "") {
    Node n;
    n.op = op;
    n.name = std::string(op_name(op)) + "_" + std::to_string(g.nodes.size());
    n.inputs = ins;
    n.attrs = attrs;
    n.outputs = {g.add_tensor(out_name.empty() ? n.name + "_out" : out_name, {}, DType::kF32)};
    g.nodes.push_back(n);
    return n.outputs[0];
  }
  void output(int t) { g.outputs.push_back(t); }
  Status finish() { return reinfer_graph(g); }
};

Attrs ints_attr(const std::string& k, std::vector<int64_t> v) {
  Attrs a;
  a.set_ints(k, v);
  return a;
}

std::vector<float> run1(const Graph& g, const std::vector<float>& x) {
  std::vector<std::vector<uint8_t>> out;
  Status st = run_graph(g, {to_bytes(x)}, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  return st.ok() ? from_bytes<float>(out[0]) : std::vector<float>{};
}

float rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0.f;
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]) / (1.f + std::fabs(b[i])));
  return m;
}

// Conv (+bias, groups) -> BatchNormalization: one Conv afterwards, same numbers within 1e-5.
TEST(FoldBatchNorm, MatchesUnfusedConvBn) {
  struct Case { int64_t group; bool bias; };
  for (Case c : {Case{1, true}, Case{1, false}, Case{2, true}}) {
    GraphBuilder b;
    const int64_t ic = 4, oc = 6;
    int x = b.input("x", {1, ic, 5, 5});
    int w = b.constant("w", {oc, ic / c.group, 3, 3}, random_floats(static_cast<size_t>(oc * ic / c.group * 9), 1));
    std::vector<int> ins = {x, w};
    if (c.bias) ins.push_back(b.constant("b", {oc}, random_floats(oc, 2)));
    Attrs ca;
    ca.set_int("group", c.group);
    ca.set_ints("pads", {1, 1, 1, 1});
    int y = b.node(OpId::Conv, ins, ca);
    int gamma = b.constant("gamma", {oc}, random_floats(oc, 3, 0.5f, 2.f));
    int beta = b.constant("beta", {oc}, random_floats(oc, 4));
    int mean = b.constant("mean", {oc}, random_floats(oc, 5));
    int var = b.constant("var", {oc}, random_floats(oc, 6, 0.1f, 3.f));
    Attrs ba;
    ba.set_float("epsilon", 1e-3f);
    int z = b.node(OpId::BatchNormalization, {y, gamma, beta, mean, var}, ba, "z");
    b.output(z);
    ASSERT_OK(b.finish());
    std::vector<float> in = random_floats(ic * 25, 7);
    std::vector<float> want = run1(b.g, in);

    Graph g = b.g;
    int changes = 0;
    ASSERT_OK(fold_batchnorm_into_conv(g, &changes));
    ASSERT_OK(remove_dead_code(g, nullptr));
    ASSERT_OK(reinfer_graph(g));
    EXPECT_EQ(changes, 1);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, OpId::Conv);
    EXPECT_EQ(g.tensor(g.outputs[0]).name, "z");
    EXPECT_LE(rel_diff(run1(g, in), want), 1e-5f) << "group " << c.group << " bias " << c.bias;
  }
}

TEST(FoldBatchNorm, LeavesSharedConvOutputAndStandaloneBn) {
  GraphBuilder b;
  int x = b.input("x", {1, 2, 3, 3});
  int w = b.constant("w", {2, 2, 1, 1}, random_floats(4, 1));
  int y = b.node(OpId::Conv, {x, w});
  int s = b.constant("s", {2}, {1, 2});
  int o = b.constant("o", {2}, {0, 1});
  int m = b.constant("m", {2}, {0, 0});
  int v = b.constant("v", {2}, {1, 1});
  int z = b.node(OpId::BatchNormalization, {y, s, o, m, v});
  int z2 = b.node(OpId::BatchNormalization, {x, s, o, m, v});  // not after a Conv
  b.output(z);
  b.output(y);  // the Conv output is observable: folding would change it
  b.output(z2);
  ASSERT_OK(b.finish());
  int changes = 0;
  ASSERT_OK(fold_batchnorm_into_conv(b.g, &changes));
  EXPECT_EQ(changes, 0);
  EXPECT_EQ(b.g.nodes.size(), 3u);
}

// fuse_conv_activation, then the clean-up the converter runs after it.
void fuse_activations(Graph& g, int* changes) {
  ASSERT_OK(fuse_conv_activation(g, changes));
  ASSERT_OK(remove_dead_code(g, nullptr));
  ASSERT_OK(reinfer_graph(g));
}

TEST(FuseActivation, ConvReluClipGemmLeakyRelu) {
  GraphBuilder b;
  int x = b.input("x", {1, 2, 4, 4});
  int w = b.constant("w", {3, 2, 3, 3}, random_floats(54, 1, -2.f, 2.f));
  int c1 = b.node(OpId::Conv, {x, w});
  int r = b.node(OpId::Relu, {c1});
  int c2 = b.node(OpId::Conv, {x, w});
  Attrs clip;
  clip.set_float("min", -0.5f);
  clip.set_float("max", 0.75f);
  int cl = b.node(OpId::Clip, {c2}, clip);
  int c3 = b.node(OpId::Conv, {x, w});  // read twice: stays unfused
  int s1 = b.node(OpId::Sigmoid, {c3});
  int s2 = b.node(OpId::Tanh, {c3});
  int add1 = b.node(OpId::Add, {r, cl});
  int add2 = b.node(OpId::Add, {s1, s2});
  int sum = b.node(OpId::Add, {add1, add2});
  Attrs fl;
  fl.set_ints("shape", {1, 12});  // 3 channels x 2 x 2 (3x3 kernels, no padding, on 4x4)
  int flat = b.node(OpId::Reshape, {sum, -1}, fl);
  int gw = b.constant("gw", {12, 5}, random_floats(60, 2));
  Attrs gm;
  int gemm = b.node(OpId::Gemm, {flat, gw}, gm);
  Attrs lr;
  lr.set_float("alpha", 0.2f);
  int out = b.node(OpId::LeakyRelu, {gemm}, lr, "out");
  b.output(out);
  ASSERT_OK(b.finish());
  std::vector<float> in = random_floats(32, 3, -2.f, 2.f);
  std::vector<float> want = run1(b.g, in);

  Graph g = b.g;
  int changes = 0;
  ASSERT_NO_FATAL_FAILURE(fuse_activations(g, &changes));
  EXPECT_EQ(changes, 3);
  int relu_fused = 0, clip_fused = 0, leaky_fused = 0, plain = 0;
  for (const auto& n : g.nodes) {
    std::string act = n.attrs.get_string("fused_act", "");
    if (n.op == OpId::Conv && act == "Relu") ++relu_fused;
    if (n.op == OpId::Conv && act == "Clip") {
      ++clip_fused;
      EXPECT_EQ(n.attrs.get_float("fused_alpha", 0), -0.5f);
      EXPECT_EQ(n.attrs.get_float("fused_beta", 0), 0.75f);
    }
    if (n.op == OpId::Gemm && act == "LeakyRelu") {
      ++leaky_fused;
      EXPECT_EQ(n.attrs.get_float("fused_alpha", 0), 0.2f);
    }
    if (n.op == OpId::Conv && act.empty()) ++plain;
  }
  EXPECT_EQ(relu_fused, 1);
  EXPECT_EQ(clip_fused, 1);
  EXPECT_EQ(leaky_fused, 1);
  EXPECT_EQ(plain, 1);
  EXPECT_EQ(g.tensor(g.outputs[0]).name, "out");
  EXPECT_LE(rel_diff(run1(g, in), want), 1e-6f);
}

// SiLU as exported: y = Mul(x, Sigmoid(x)), either operand order. A third reader of x, or of the
// Sigmoid's output, keeps the pattern unfused.
TEST(FuseActivation, ConvSiluEitherOrderButNotWithOtherReaders) {
  GraphBuilder b;
  int x = b.input("x", {1, 3, 4, 4});
  int w1 = b.constant("w1", {3, 3, 1, 1}, random_floats(9, 1));
  int c1 = b.node(OpId::Conv, {x, w1});
  int y1 = b.node(OpId::Mul, {c1, b.node(OpId::Sigmoid, {c1})});
  int w2 = b.constant("w2", {3, 3, 1, 1}, random_floats(9, 2));
  int c2 = b.node(OpId::Conv, {y1, w2});
  int y2 = b.node(OpId::Mul, {b.node(OpId::Sigmoid, {c2}), c2});
  int w3 = b.constant("w3", {3, 3, 1, 1}, random_floats(9, 3));
  int c3 = b.node(OpId::Conv, {y2, w3});
  int s3 = b.node(OpId::Sigmoid, {c3});
  int y3 = b.node(OpId::Mul, {c3, s3});
  int other = b.node(OpId::Add, {c3, s3});  // c3 and s3 have a third / second reader
  int out = b.node(OpId::Add, {y3, other}, Attrs(), "out");
  b.output(out);
  ASSERT_OK(b.finish());
  std::vector<float> in = random_floats(48, 4, -3.f, 3.f);
  std::vector<float> want = run1(b.g, in);

  Graph g = b.g;
  int changes = 0;
  ASSERT_NO_FATAL_FAILURE(fuse_activations(g, &changes));
  EXPECT_EQ(changes, 2);
  int silu = 0, sigmoids = 0;
  for (const auto& n : g.nodes) {
    if (n.op == OpId::Conv && n.attrs.get_string("fused_act", "") == "Silu") ++silu;
    if (n.op == OpId::Sigmoid) ++sigmoids;
  }
  EXPECT_EQ(silu, 2);
  EXPECT_EQ(sigmoids, 1);
  EXPECT_LE(rel_diff(run1(g, in), want), 1e-6f);
}

TEST(FuseActivation, NotWhenProducerOutputIsGraphOutput) {
  GraphBuilder b;
  int x = b.input("x", {1, 4});
  int w = b.constant("w", {4, 4}, random_floats(16, 1));
  int m = b.node(OpId::MatMul, {x, w});
  int r = b.node(OpId::Relu, {m});
  b.output(r);
  b.output(m);
  ASSERT_OK(b.finish());
  int changes = 0;
  ASSERT_OK(fuse_conv_activation(b.g, &changes));
  EXPECT_EQ(changes, 0);
}

// fuse_conv_add: Add(conv(x), r) becomes Conv(x, W, B, r) (ops/conv.cc), then the Relu after
// it fuses too; the numbers are the unfused graph's bit for bit (fp32: the same additions in the
// same order). `residual_after`: r's producer comes after the Conv in the node order, so the
// fused Conv must move to the Add's place.
TEST(FuseConvAdd, ResidualBlockBecomesOneConv) {
  for (bool residual_after : {false, true}) {
    SCOPED_TRACE(residual_after ? "residual made after the conv" : "residual made before the conv");
    GraphBuilder b;
    int x = b.input("x", {1, 4, 5, 5});
    int w = b.constant("w", {4, 4, 3, 3}, random_floats(144, 3));
    int bias = b.constant("b", {4}, random_floats(4, 4));
    Attrs pads = ints_attr("pads", {1, 1, 1, 1});
    int a = residual_after ? -1 : b.node(OpId::Relu, {x});
    int c = b.node(OpId::Conv, {x, w, bias}, pads);
    if (residual_after) a = b.node(OpId::Relu, {x});
    int y = b.node(OpId::Relu, {b.node(OpId::Add, {a, c})}, {}, "y");
    b.output(y);
    ASSERT_OK(b.finish());
    const std::vector<float> in = random_floats(100, 5);
    const std::vector<float> want = run1(b.g, in);

    Graph g = b.g;
    std::vector<PassStat> stats;
    PassOptions po;
    po.precision = FloatPrecision::kFp32;
    ASSERT_OK(run_graph_passes(g, po, &stats));
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].op, OpId::Relu);
    const Node& conv = g.nodes[1];
    ASSERT_EQ(conv.op, OpId::Conv);
    ASSERT_EQ(conv.inputs.size(), 4u);
    EXPECT_EQ(conv.inputs[3], g.nodes[0].outputs[0]);
    EXPECT_EQ(conv.attrs.get_string("fused_act", ""), "Relu");
    EXPECT_EQ(g.tensor(conv.outputs[0]).name, "y");
    EXPECT_EQ(run1(g, in), want);
  }
}

// Both operands convolutions: the later Conv takes the earlier one's output as its residual.
TEST(FuseConvAdd, TwoConvolutionsTheLaterTakesTheResidual) {
  GraphBuilder b;
  int x = b.input("x", {1, 4, 3, 3});
  int w1 = b.constant("w1", {4, 4, 1, 1}, random_floats(16, 6));
  int w2 = b.constant("w2", {4, 4, 1, 1}, random_floats(16, 7));
  int c1 = b.node(OpId::Conv, {x, w1});
  int c2 = b.node(OpId::Conv, {x, w2});
  b.output(b.node(OpId::Add, {c2, c1}, {}, "y"));
  ASSERT_OK(b.finish());
  const std::vector<float> in = random_floats(36, 8);
  const std::vector<float> want = run1(b.g, in);
  int changes = 0;
  ASSERT_OK(fuse_conv_add(b.g, &changes));
  EXPECT_EQ(changes, 1);
  ASSERT_EQ(b.g.nodes.size(), 2u);
  ASSERT_EQ(b.g.nodes[1].inputs.size(), 4u);
  EXPECT_EQ(b.g.nodes[1].inputs[1], w2);
  EXPECT_EQ(b.g.nodes[1].inputs[3], c1);
  EXPECT_EQ(run1(b.g, in), want);
}

// What stays an Add: the conv output read elsewhere too, a Conv with a fused activation, a
// broadcast or constant operand, and any graph when the converter quantizes afterwards.
TEST(FuseConvAdd, LeavesWhatItCannotFuse) {
  auto block = [](int variant, GraphBuilder& b) {
    int x = b.input("x", {1, 4, 3, 3});
    int w = b.constant("w", {4, 4, 1, 1}, random_floats(16, 9));
    Attrs act;
    if (variant == 1) act.set_string("fused_act", "Relu");
    int c = b.node(OpId::Conv, {x, w}, act);
    int r = b.node(OpId::Relu, {x});
    if (variant == 2) r = b.node(OpId::ReduceMean, {r}, ints_attr("axes", {2, 3}));  // [1,4,1,1]
    if (variant == 3) r = b.constant("k", {1, 4, 3, 3}, random_floats(36, 10));
    b.output(b.node(OpId::Add, {c, r}, {}, "y"));
    if (variant == 0) b.output(b.node(OpId::Sigmoid, {c}, {}, "z"));
  };
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    GraphBuilder b;
    block(variant, b);
    ASSERT_OK(b.finish());
    int changes = 0;
    ASSERT_OK(fuse_conv_add(b.g, &changes));
    EXPECT_EQ(changes, 0);
  }
  GraphBuilder b;
  block(4, b);
  ASSERT_OK(b.finish());
  PassOptions po;
  po.fuse_residual = false;
  std::vector<PassStat> stats;
  ASSERT_OK(run_graph_passes(b.g, po, &stats));
  for (const PassStat& st : stats) EXPECT_NE(st.name, "fuse_conv_add");
  bool has_add = false;
  for (const Node& n : b.g.nodes) has_add |= n.op == OpId::Add;
  EXPECT_TRUE(has_add);
}

TEST(RemoveNoop, IdentityReshapeCastTransposeAndNames) {
  GraphBuilder b;
  int x = b.input("x", {2, 3});
  int r = b.node(OpId::Relu, {x});
  int i1 = b.node(OpId::Identity, {r});
  Attrs rs;
  rs.set_ints("shape", {2, 3});
  int re = b.node(OpId::Reshape, {i1, -1}, rs);
  Attrs ca;
  ca.set_int("to", 1);  // float -> float
  int c = b.node(OpId::Cast, {re}, ca);
  int t = b.node(OpId::Transpose, {c}, ints_attr("perm", {0, 1}));
  int neg = b.node(OpId::Neg, {t});
  int y = b.node(OpId::Identity, {neg}, {}, "y");  // graph output: its name must survive
  b.output(y);
  ASSERT_OK(b.finish());
  int changes = 0;
  ASSERT_OK(remove_noop_nodes(b.g, &changes));
  ASSERT_OK(remove_dead_code(b.g, nullptr));
  ASSERT_OK(reinfer_graph(b.g));
  EXPECT_EQ(changes, 5);
  ASSERT_EQ(b.g.nodes.size(), 2u);
  EXPECT_EQ(b.g.nodes[0].op, OpId::Relu);
  EXPECT_EQ(b.g.nodes[1].op, OpId::Neg);
  EXPECT_EQ(b.g.tensor(b.g.outputs[0]).name, "y");
  EXPECT_EQ(b.g.tensor(b.g.nodes[1].outputs[0]).name, "y");
  EXPECT_EQ(run1(b.g, {-1, 2, -3, 4, -5, 6}), (std::vector<float>{0, -2, 0, -4, 0, -6}));
}

TEST(RemoveNoop, KeepsInputToOutputIdentityAndRealReshapes) {
  GraphBuilder b;
  int x = b.input("x", {2, 3});
  int y = b.node(OpId::Identity, {x}, {}, "y");
  Attrs rs;
  rs.set_ints("shape", {3, 2});
  int z = b.node(OpId::Reshape, {x, -1}, rs, "z");
  int t = b.node(OpId::Transpose, {z}, ints_attr("perm", {1, 0}), "t");
  b.output(y);
  b.output(t);
  ASSERT_OK(b.finish());
  int changes = 0;
  ASSERT_OK(remove_noop_nodes(b.g, &changes));
  EXPECT_EQ(changes, 0);
  EXPECT_EQ(b.g.nodes.size(), 3u);
}

// The layer normalisation exporters write before opset 17.
struct LnGraph {
  GraphBuilder b;
  int x;
  LnGraph(bool pow_form, bool affine, int64_t axis) {
    const int64_t d = 4;
    x = b.input("x", {2, 3, d});
    Attrs mean_attrs = ints_attr("axes", {axis});
    mean_attrs.set_int("keepdims", 1);
    int m = b.node(OpId::ReduceMean, {x}, mean_attrs);
    int diff = b.node(OpId::Sub, {x, m});
    int sq = pow_form ? b.node(OpId::Pow, {diff, b.constant("two", {}, {2.f})}) : b.node(OpId::Mul, {diff, diff});
    int var = b.node(OpId::ReduceMean, {sq}, mean_attrs);
    int ve = b.node(OpId::Add, {var, b.constant("eps", {}, {1e-5f})});
    int sd = b.node(OpId::Sqrt, {ve});
    int n = b.node(OpId::Div, {diff, sd}, {}, affine ? "" : "y");
    if (affine) {
      int sc = b.node(OpId::Mul, {b.constant("scale", {d}, {1, 2, 3, 4}), n});
      n = b.node(OpId::Add, {sc, b.constant("bias", {1, 1, d}, {0.5f, 0, -0.5f, 1})}, {}, "y");
    }
    b.output(n);
  }
};

TEST(FuseLayerNorm, PatternBecomesLayerNormalization) {
  for (bool pow_form : {true, false})
    for (bool affine : {true, false}) {
      LnGraph ln(pow_form, affine, -1);
      ASSERT_OK(ln.b.finish());
      Graph& g = ln.b.g;
      int changes = 0;
      ASSERT_OK(fuse_layernorm(g, &changes));
      ASSERT_OK(remove_dead_code(g, nullptr));
      ASSERT_OK(reinfer_graph(g));
      EXPECT_EQ(changes, 1);
      ASSERT_EQ(g.nodes.size(), 1u);
      EXPECT_EQ(g.nodes[0].op, OpId::LayerNormalization);
      EXPECT_EQ(g.tensor(g.outputs[0]).name, "y");
      // independent formula: per row of 4, (x - mean) / sqrt(var + eps) * scale + bias
      std::vector<float> in = random_floats(24, 11, -3.f, 3.f);
      std::vector<float> got = run1(g, in);
      ASSERT_EQ(got.size(), 24u);
      const float scale[4] = {1, 2, 3, 4}, bias[4] = {0.5f, 0, -0.5f, 1};
      for (int r = 0; r < 6; ++r) {
        double mean = 0, var = 0;
        for (int k = 0; k < 4; ++k) mean += in[static_cast<size_t>(r * 4 + k)];
        mean /= 4;
        for (int k = 0; k < 4; ++k) var += std::pow(in[static_cast<size_t>(r * 4 + k)] - mean, 2);
        var /= 4;
        for (int k = 0; k < 4; ++k) {
          double v = (in[static_cast<size_t>(r * 4 + k)] - mean) / std::sqrt(var + 1e-5);
          if (affine) v = v * scale[k] + bias[k];
          EXPECT_NEAR(got[static_cast<size_t>(r * 4 + k)], v, 2e-5) << r << "," << k;
        }
      }
    }
}

TEST(FuseLayerNorm, NotOverOtherAxes) {
  LnGraph ln(true, true, 1);
  ASSERT_OK(ln.b.finish());
  int changes = 0;
  ASSERT_OK(fuse_layernorm(ln.b.g, &changes));
  EXPECT_EQ(changes, 0);
}

// Conv -> Mul(scalar) -> Add(per-channel) -> Sub(scalar): all folded into the Conv.
TEST(FoldMulAdd, ScaleAndBiasFoldIntoConv) {
  GraphBuilder b;
  int x = b.input("x", {1, 2, 4, 4});
  int w = b.constant("w", {3, 2, 3, 3}, random_floats(54, 1));
  int bias = b.constant("b", {3}, {0.1f, 0.2f, 0.3f});
  Attrs ca;
  ca.set_ints("pads", {1, 1, 1, 1});
  int c = b.node(OpId::Conv, {x, w, bias}, ca);
  int m = b.node(OpId::Mul, {b.constant("s", {1}, {1.5f}), c});
  int a = b.node(OpId::Add, {m, b.constant("pc", {1, 3, 1, 1}, {1, -2, 3})});
  int y = b.node(OpId::Sub, {a, b.constant("k", {}, {0.25f})}, {}, "y");
  int z = b.node(OpId::Mul, {b.node(OpId::Conv, {x, w}, ca), b.constant("row", {4}, {1, 2, 3, 4})}, {}, "z");
  b.output(y);
  b.output(z);
  ASSERT_OK(b.finish());
  std::vector<float> in = random_floats(32, 2);
  std::vector<std::vector<uint8_t>> want, got;
  ASSERT_OK(run_graph(b.g, {to_bytes(in)}, &want));
  int changes = 0;
  ASSERT_OK(fold_mul_add_into_conv(b.g, &changes));
  ASSERT_OK(remove_dead_code(b.g, nullptr));
  ASSERT_OK(reinfer_graph(b.g));
  EXPECT_EQ(changes, 3);  // the Mul by a per-column row is not per channel: stays
  EXPECT_EQ(b.g.nodes.size(), 3u);
  EXPECT_EQ(b.g.tensor(b.g.outputs[0]).name, "y");
  ASSERT_OK(run_graph(b.g, {to_bytes(in)}, &got));
  EXPECT_LE(rel_diff(from_bytes<float>(got[0]), from_bytes<float>(want[0])), 1e-6f);
  EXPECT_EQ(from_bytes<float>(got[1]), from_bytes<float>(want[1]));
}

// ShuffleNet's channel shuffle: Concat of g parts -> Reshape (split the axis into g, m) ->
// Transpose (swap them) becomes one Concat of Unsqueeze views, the same values as the unrewritten
// graph, for g = 2 (shufflenet_v2) and 3, on axis 1 and 2.
TEST(RewriteChannelShuffle, MatchesUnrewrittenShuffle) {
  struct Case { int64_t parts, axis; };
  for (Case c : {Case{2, 1}, Case{3, 1}, Case{2, 2}}) {
    GraphBuilder b;
    const Shape xs = {1, 4, 6, 5};
    int x = b.input("x", xs);
    std::vector<int> parts;
    const OpId part_ops[] = {OpId::Relu, OpId::Sigmoid, OpId::Neg};
    for (int64_t j = 0; j < c.parts; ++j) parts.push_back(b.node(part_ops[j], {x}));
    Attrs ca;
    ca.set_int("axis", c.axis);
    int cat = b.node(OpId::Concat, parts, ca);
    Shape split = xs, joined = xs;
    split.insert(split.begin() + c.axis, c.parts);
    joined[static_cast<size_t>(c.axis)] *= c.parts;
    std::vector<int64_t> perm = {0, 1, 2, 3, 4};
    std::swap(perm[static_cast<size_t>(c.axis)], perm[static_cast<size_t>(c.axis) + 1]);
    int r = b.node(OpId::Reshape, {cat}, ints_attr("shape", split));
    int t = b.node(OpId::Transpose, {r}, ints_attr("perm", perm));
    int y = b.node(OpId::Reshape, {t}, ints_attr("shape", joined), "y");
    b.output(y);
    ASSERT_OK(b.finish());
    std::vector<float> in = random_floats(static_cast<size_t>(shape_numel(xs)), 5, -3.f, 3.f);
    std::vector<float> want = run1(b.g, in);

    Graph g = b.g;
    int changes = 0;
    ASSERT_OK(rewrite_channel_shuffle(g, &changes));
    ASSERT_OK(remove_dead_code(g, nullptr));
    ASSERT_OK(reinfer_graph(g));
    EXPECT_EQ(changes, 1) << c.parts << " parts, axis " << c.axis;
    std::vector<OpId> ops;
    for (const Node& n : g.nodes) ops.push_back(n.op);
    std::vector<OpId> expect(part_ops, part_ops + c.parts);
    for (int64_t j = 0; j < c.parts; ++j) expect.push_back(OpId::Unsqueeze);
    expect.push_back(OpId::Concat);
    expect.push_back(OpId::Reshape);
    EXPECT_EQ(ops, expect);
    EXPECT_EQ(g.nodes[static_cast<size_t>(2 * c.parts)].attrs.get_int("axis", -1), c.axis + 1);
    EXPECT_EQ(g.tensor(g.outputs[0]).name, "y");
    EXPECT_EQ(run1(g, in), want) << c.parts << " parts, axis " << c.axis;
  }
}

// Not a shuffle, or one whose intermediates are observable: left as it is.
TEST(RewriteChannelShuffle, LeavesOtherPatterns) {
  struct Case { const char* what; bool concat_is_output, unequal_parts, other_perm; };
  for (Case c : {Case{"concat output is a graph output", true, false, false},
                 Case{"parts of different sizes", false, true, false},
                 Case{"transpose moves other axes", false, false, true}}) {
    GraphBuilder b;
    int x = b.input("x", {1, 4, 3, 3});
    int p0 = b.node(OpId::Relu, {x});
    int p1 = c.unequal_parts ? b.node(OpId::Slice, {x}, [] {
      Attrs a;
      a.set_ints("starts", {0});
      a.set_ints("ends", {2});
      a.set_ints("axes", {1});
      return a;
    }()) : b.node(OpId::Neg, {x});
    Attrs ca;
    ca.set_int("axis", 1);
    int cat = b.node(OpId::Concat, {p0, p1}, ca);
    const int64_t total = c.unequal_parts ? 6 : 8;
    int r = b.node(OpId::Reshape, {cat}, ints_attr("shape", {1, 2, total / 2, 3, 3}));
    int t = b.node(OpId::Transpose, {r}, ints_attr("perm", c.other_perm ? std::vector<int64_t>{0, 2, 1, 4, 3}
                                                                         : std::vector<int64_t>{0, 2, 1, 3, 4}));
    b.output(t);
    if (c.concat_is_output) b.output(cat);
    ASSERT_OK(b.finish());
    int changes = 0;
    ASSERT_OK(rewrite_channel_shuffle(b.g, &changes));
    EXPECT_EQ(changes, 0) << c.what;
  }
}

TEST(FuseHardSwish, TorchAndPaddleForms) {
  GraphBuilder b;
  int x = b.input("x", {1, 2, 2, 3});
  Attrs hsa;
  hsa.set_float("alpha", 1.f / 6.f);
  hsa.set_float("beta", 0.5f);
  int t1 = b.node(OpId::Mul, {x, b.node(OpId::HardSigmoid, {x}, hsa)});
  Attrs clip;
  clip.set_float("min", 0.f);
  clip.set_float("max", 6.f);
  int a = b.node(OpId::Add, {b.constant("three", {}, {3.f}), t1});
  int cl = b.node(OpId::Clip, {a}, clip);
  int mu = b.node(OpId::Mul, {cl, t1});
  int y = b.node(OpId::Div, {mu, b.constant("six", {1}, {6.f})}, {}, "y");
  b.output(y);
  ASSERT_OK(b.finish());
  int changes = 0;
  ASSERT_OK(fuse_hardswish(b.g, &changes));
  ASSERT_OK(remove_dead_code(b.g, nullptr));
  ASSERT_OK(reinfer_graph(b.g));
  EXPECT_EQ(changes, 2);
  ASSERT_EQ(b.g.nodes.size(), 2u);
  EXPECT_EQ(b.g.nodes[0].op, OpId::HardSwish);
  EXPECT_EQ(b.g.nodes[1].op, OpId::HardSwish);
  EXPECT_EQ(b.g.tensor(b.g.outputs[0]).name, "y");
  std::vector<float> in = random_floats(12, 3, -5.f, 5.f);
  std::vector<float> got = run1(b.g, in);
  ASSERT_EQ(got.size(), 12u);
  auto hswish = [](double v) { return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; };
  for (size_t i = 0; i < 12; ++i) EXPECT_NEAR(got[i], hswish(hswish(in[i])), 1e-5) << i;
}

TEST(FoldConstants, ComputesConstantSubgraphs) {
  GraphBuilder b;
  int x = b.input("x", {3});
  int c = b.node(OpId::Add, {b.constant("a", {3}, {1, 2, 3}), b.constant("b", {3}, {10, 20, 30})});
  int y = b.node(OpId::Mul, {x, c}, {}, "y");
  b.output(y);
  ASSERT_OK(b.finish());
  int changes = 0;
  ASSERT_OK(fold_constants(b.g, &changes));
  ASSERT_OK(remove_dead_code(b.g, nullptr));
  EXPECT_EQ(changes, 1);
  ASSERT_EQ(b.g.nodes.size(), 1u);
  EXPECT_EQ(run1(b.g, {1, 2, 3}), (std::vector<float>{11, 44, 99}));
}

TEST(DeadCode, RemovesUnusedChainsAndCompactsTensors) {
  GraphBuilder b;
  int x = b.input("x", {2});
  int u1 = b.node(OpId::Relu, {x});
  b.node(OpId::Neg, {u1});  // dead chain
  int y = b.node(OpId::Abs, {x}, {}, "y");
  b.constant("unused", {1}, {0});
  b.output(y);
  ASSERT_OK(b.finish());
  int changes = 0;
  ASSERT_OK(remove_dead_code(b.g, &changes));
  EXPECT_EQ(changes, 2);
  ASSERT_EQ(b.g.nodes.size(), 1u);
  EXPECT_EQ(b.g.tensors.size(), 2u);
  EXPECT_EQ(b.g.tensor(b.g.outputs[0]).name, "y");
  EXPECT_EQ(b.g.tensor(b.g.inputs[0].tensor).name, "x");
  EXPECT_EQ(b.g.tensor(b.g.nodes[0].inputs[0]).name, "x");
}

TEST(RoundWeights, Fp16ValuesKeptInFloat32) {
  GraphBuilder b;
  int x = b.input("x", {3});
  int k = b.constant("k", {3}, {0.1f, 1.f, 70000.f});
  b.output(b.node(OpId::Mul, {x, k}));
  ASSERT_OK(b.finish());
  int changes = 0;
  ASSERT_OK(round_weights_fp16(b.g, &changes));
  EXPECT_EQ(changes, 1);
  const float* v = b.g.tensor(k).const_ptr<float>();
  EXPECT_EQ(v[0], fp16_to_fp32(fp32_to_fp16(0.1f)));
  EXPECT_EQ(v[1], 1.f);
  EXPECT_TRUE(std::isinf(v[2]));  // beyond fp16's range, as the NPU would store it
}

// Nonzero constants and Clip bounds below the smallest fp16 subnormal keep it (with their sign)
// instead of rounding to 0; zero, and values that round to a nonzero fp16, round to nearest.
TEST(RoundWeights, TinyNonzeroValuesKeepTheSmallestSubnormal) {
  const float sub = std::ldexp(1.f, -24);
  GraphBuilder b;
  int x = b.input("x", {5});
  int k = b.constant("k", {5}, {1e-12f, -2e-8f, 0.f, 4e-8f, 1.f});
  Attrs bounds;
  bounds.set_float("min", 1e-12f);
  bounds.set_float("max", 6.f);
  b.output(b.node(OpId::Clip, {b.node(OpId::Mul, {x, k})}, bounds));
  ASSERT_OK(b.finish());
  int changes = 0;
  ASSERT_OK(round_weights_fp16(b.g, &changes));
  EXPECT_EQ(changes, 2);
  const float* v = b.g.tensor(k).const_ptr<float>();
  EXPECT_EQ(v[0], sub);
  EXPECT_EQ(v[1], -sub);
  EXPECT_EQ(v[2], 0.f);
  EXPECT_EQ(v[3], sub);  // 4e-8 rounds to 2^-24 by itself
  EXPECT_EQ(v[4], 1.f);
  EXPECT_EQ(b.g.nodes.back().attrs.get_float("min", 0.f), sub);
  EXPECT_EQ(b.g.nodes.back().attrs.get_float("max", 0.f), 6.f);
}

TEST(PassDriver, FixedOrderAndFusionSwitch) {
  GraphBuilder b;
  int x = b.input("x", {1, 1, 2, 2});
  int w = b.constant("w", {1, 1, 1, 1}, {2.f});
  int c = b.node(OpId::Conv, {x, w});
  int y = b.node(OpId::Relu, {b.node(OpId::Identity, {c})}, {}, "y");
  b.output(y);
  ASSERT_OK(b.finish());
  Graph g1 = b.g, g2 = b.g;
  std::vector<PassStat> stats;
  PassOptions po;
  po.precision = FloatPrecision::kFp32;
  ASSERT_OK(run_graph_passes(g1, po, &stats));
  std::vector<std::string> names;
  for (const auto& s : stats) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fold_constants", "remove_noop_nodes", "fold_batchnorm_into_conv",
                                             "fold_mul_add_into_conv", "fuse_layernorm", "fuse_hardswish",
                                             "fuse_conv_add", "fuse_conv_activation", "rewrite_channel_shuffle",
                                             "dead_code"}));
  ASSERT_EQ(g1.nodes.size(), 1u);
  EXPECT_EQ(g1.nodes[0].attrs.get_string("fused_act", ""), "Relu");

  po.fusion = false;
  po.precision = FloatPrecision::kFp16;
  stats.clear();
  ASSERT_OK(run_graph_passes(g2, po, &stats));
  EXPECT_EQ(g2.nodes.size(), 3u);
  EXPECT_EQ(stats.back().name, "round_weights_fp16");
}

}  // namespace
}  // namespace orknn::test
