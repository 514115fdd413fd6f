#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "graph/planner.h"

namespace orknn {
namespace {

// Builds a chain/diamond graph with given tensor sizes; node ops don't matter to the planner.
TEST(Planner, OverlappingLifetimesNeverShareBytes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    Graph g;
    int n_nodes = 3 + static_cast<int>(rng() % 20);
    int in = g.add_tensor("in", {1 + static_cast<int64_t>(rng() % 100)}, DType::kF32);
    g.inputs.push_back(GraphInput{in, {}, {}});
    std::vector<int> produced = {in};
    for (int i = 0; i < n_nodes; ++i) {
      Node n;
      n.op = OpId::Add;
      n.inputs = {produced[rng() % produced.size()], produced[rng() % produced.size()]};
      int out = g.add_tensor("t" + std::to_string(i), {1 + static_cast<int64_t>(rng() % 1000)}, DType::kF32);
      n.outputs = {out};
      produced.push_back(out);
      g.nodes.push_back(n);
    }
    g.outputs = {produced.back()};
    ArenaPlan p = plan_arena(g);
    // Independent lifetime computation.
    const size_t nt = g.tensors.size();
    std::vector<int> first(nt, 1 << 30), last(nt, -2);
    first[in] = -1; last[in] = -1;
    for (int i = 0; i < n_nodes; ++i) {
      for (int t : g.nodes[i].inputs) last[t] = std::max(last[t], i);
      for (int t : g.nodes[i].outputs) { first[t] = i; last[t] = std::max(last[t], i); }
    }
    last[g.outputs[0]] = n_nodes;
    last[in] = n_nodes;  // graph inputs survive the run
    for (size_t a = 0; a < nt; ++a) {
      ASSERT_NE(p.offset[a], SIZE_MAX);
      EXPECT_EQ(p.offset[a] % kArenaAlign, 0u);
      EXPECT_LE(p.offset[a] + g.tensors[a].nbytes(), p.arena_size);
      for (size_t b = a + 1; b < nt; ++b) {
        bool live_together = !(last[a] < first[b] || last[b] < first[a]);
        if (!live_together) continue;
        bool disjoint = p.offset[a] + g.tensors[a].nbytes() <= p.offset[b] ||
                        p.offset[b] + g.tensors[b].nbytes() <= p.offset[a];
        EXPECT_TRUE(disjoint) << "trial " << trial << " tensors " << a << "," << b;
      }
    }
  }
}

// in -> t0 -> t1 -> t2 -> t3, each 1000 floats (4000 bytes, 4032 rounded up to 64).
Graph relu_chain() {
  Graph g;
  int prev = g.add_tensor("in", {1000}, DType::kF32);
  g.inputs.push_back(GraphInput{prev, {}, {}});
  for (int i = 0; i < 4; ++i) {
    Node n;
    n.op = OpId::Relu;
    n.inputs = {prev};
    prev = g.add_tensor("t" + std::to_string(i), {1000}, DType::kF32);
    n.outputs = {prev};
    g.nodes.push_back(n);
  }
  g.outputs = {prev};
  return g;
}

TEST(Planner, ChainReusesMemory) {
  // The input lives to the end (it must survive for the next run), and of t0..t3 only two are
  // ever alive at once: three slots.
  ArenaPlan p = plan_arena(relu_chain());
  EXPECT_EQ(p.arena_size, 3 * 4032u);
}

// A tensor gets the bytes the layout pass gives it (a padded nChw16c activation takes more than
// NCHW): a chain in -> mid -> out of 24-channel tensors, mid given its padded size.
TEST(Planner, TensorsGetTheBytesTheLayoutPassGives) {
  Graph g;
  const int in = g.add_tensor("in", {1, 24, 4, 4}, DType::kF32);
  const int mid = g.add_tensor("mid", {1, 24, 4, 4}, DType::kF32);
  const int out = g.add_tensor("out", {1, 24, 4, 4}, DType::kF32);
  g.inputs.push_back(GraphInput{in, {}, {}});
  g.outputs = {out};
  for (int k = 0; k < 2; ++k) {
    Node n;
    n.op = OpId::Relu;
    n.inputs = {k == 0 ? in : mid};
    n.outputs = {k == 0 ? mid : out};
    g.nodes.push_back(n);
  }
  const size_t nchw = 24 * 16 * 4, padded = 32 * 16 * 4;  // multiples of 64 bytes
  EXPECT_EQ(plan_arena(g).arena_size, 3 * nchw);
  ArenaOptions o;
  o.bytes = {nchw, padded, nchw};
  EXPECT_EQ(plan_arena(g, o).arena_size, 2 * nchw + padded);
}

// keep_all: no tensor shares bytes with another (the chain of four Relus of ChainReusesMemory,
// which then needs five slots instead of three), so every value is still there after the run.
TEST(Planner, KeepAllGivesEveryTensorItsOwnBytes) {
  ArenaOptions o;
  o.keep_all = true;
  const ArenaPlan p = plan_arena(relu_chain(), o);
  EXPECT_EQ(p.arena_size, 5 * 4032u);
  std::vector<size_t> offsets(p.offset.begin(), p.offset.end());
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(std::unique(offsets.begin(), offsets.end()), offsets.end());
}

// A read the graph does not show (a fused kernel reading a chain's input at its last node) keeps
// the tensor alive until then: a chain of four Relus, the first output also read at the last node.
TEST(Planner, ExtraReadExtendsTheLifetime) {
  const Graph g = relu_chain();
  std::vector<int> t;
  for (const Node& n : g.nodes) t.push_back(n.outputs[0]);
  EXPECT_EQ(plan_arena(g).arena_size, 3 * 4032u);
  ArenaOptions o;
  o.extra = {{t[0], 3}};
  const ArenaPlan p = plan_arena(g, o);
  // At node 2, t0, t1, t2 and the input are alive; at node 3, t0, t2, t3 and the input.
  EXPECT_EQ(p.arena_size, 4 * 4032u);
  for (int other : {t[1], t[2], t[3]}) EXPECT_NE(p.offset[static_cast<size_t>(t[0])], p.offset[static_cast<size_t>(other)]);
}

TEST(Planner, ConstantsAreNotInTheArena) {
  Graph g;
  int in = g.add_tensor("in", {4}, DType::kF32);
  float w[4] = {1, 2, 3, 4};
  int c = g.add_const("w", {4}, DType::kF32, w, sizeof(w));
  int out = g.add_tensor("out", {4}, DType::kF32);
  g.inputs.push_back(GraphInput{in, {}, {}});
  Node n;
  n.op = OpId::Add;
  n.inputs = {in, c};
  n.outputs = {out};
  g.nodes.push_back(n);
  g.outputs = {out};
  ArenaPlan p = plan_arena(g);
  EXPECT_EQ(p.offset[c], SIZE_MAX);
  EXPECT_EQ(p.arena_size, 128u);
}

// A view (Reshape, Flatten, ...) shares its input's bytes, and that slot stays alive while either
// is: in -Relu-> a -Reshape-> b -Relu-> c -Relu-> d -Relu-> e, b also read by the last node.
// A view of a graph input gets its own bytes.
TEST(Planner, ViewsShareTheirInputsBytes) {
  Graph g;
  const int in = g.add_tensor("in", {1000}, DType::kF32);
  g.inputs.push_back(GraphInput{in, {}, {}});
  auto add = [&](OpId op, std::vector<int> inputs, const Shape& shape) {
    Node n;
    n.op = op;
    n.inputs = std::move(inputs);
    n.outputs = {g.add_tensor("t" + std::to_string(g.nodes.size()), shape, DType::kF32)};
    g.nodes.push_back(n);
    return n.outputs[0];
  };
  const int a = add(OpId::Relu, {in}, {1000});
  const int b = add(OpId::Reshape, {a}, {10, 100});
  const int c = add(OpId::Relu, {b}, {10, 100});
  const int d = add(OpId::Relu, {c}, {10, 100});
  const int e = add(OpId::Add, {d, b}, {10, 100});
  const int r = add(OpId::Flatten, {in}, {1000});
  g.outputs = {e, r};
  EXPECT_EQ(view_offset(g, g.nodes[1]), 0);
  EXPECT_EQ(view_offset(g, g.nodes[5]), -1);  // of the graph input
  const ArenaPlan p = plan_arena(g);
  auto off = [&](int t) { return p.offset[static_cast<size_t>(t)]; };
  EXPECT_EQ(off(a), off(b));
  // a/b's slot is alive from node 0 to node 4: no tensor alive meanwhile shares it (r, made at
  // node 5, may).
  for (int other : {in, c, d, e}) EXPECT_NE(off(a), off(other)) << other;
  EXPECT_NE(off(r), off(in));
  // in, a/b, c, d (or e, which may take c's slot), r: five 4032-byte slots at most.
  EXPECT_LE(p.arena_size, 5 * 4032u);
}

// A Slice taking one contiguous, 64-byte aligned range of an activation (shufflenet_v2's channel
// halves) lies inside its input's bytes at that range; other Slices get bytes of their own.
TEST(Planner, ContiguousSlicesAreViewsAtTheirOffset) {
  Graph g;
  const int in = g.add_tensor("in", {1, 64, 4, 4}, DType::kF32);
  g.inputs.push_back(GraphInput{in, {}, {}});
  auto add = [&](OpId op, int x, const Shape& shape, std::vector<int64_t> starts, std::vector<int64_t> steps) {
    Node n;
    n.op = op;
    n.inputs = {x};
    n.outputs = {g.add_tensor("t" + std::to_string(g.nodes.size()), shape, DType::kF32)};
    n.attrs.set_ints("starts", std::move(starts));
    n.attrs.set_ints("steps", std::move(steps));
    g.nodes.push_back(n);
    return n.outputs[0];
  };
  const std::vector<int64_t> ones = {1, 1, 1, 1};
  const int a = add(OpId::Relu, in, {1, 64, 4, 4}, {}, {});
  const int lo = add(OpId::Slice, a, {1, 32, 4, 4}, {0, 0, 0, 0}, ones);
  const int hi = add(OpId::Slice, a, {1, 32, 4, 4}, {0, 32, 0, 0}, ones);
  const int all = add(OpId::Slice, a, {1, 64, 4, 4}, {0, 0, 0, 0}, ones);
  const int rows = add(OpId::Slice, a, {1, 64, 2, 4}, {0, 0, 2, 0}, ones);      // strided in a
  const int odd = add(OpId::Slice, a, {1, 32, 4, 4}, {0, 0, 0, 0}, {1, 2, 1, 1});  // every other channel
  const int b = add(OpId::Relu, in, {1, 64, 1, 3}, {}, {});
  const int unaligned = add(OpId::Slice, b, {1, 63, 1, 3}, {0, 1, 0, 0}, ones);  // 12 bytes in
  const int of_input = add(OpId::Slice, in, {1, 32, 4, 4}, {0, 32, 0, 0}, ones);
  g.outputs = {lo, hi, all, rows, odd, unaligned, of_input};
  const std::vector<int64_t> expected = {-1, 0, 32 * 16 * 4, 0, -1, -1, -1, -1, -1};
  for (size_t k = 0; k < g.nodes.size(); ++k) EXPECT_EQ(view_offset(g, g.nodes[k]), expected[k]) << "node " << k;
  const ArenaPlan p = plan_arena(g);
  auto off = [&](int t) { return p.offset[static_cast<size_t>(t)]; };
  EXPECT_EQ(off(lo), off(a));
  EXPECT_EQ(off(hi), off(a) + 32 * 16 * 4);
  EXPECT_EQ(off(all), off(a));
  // The others do not lie in their inputs' bytes.
  for (auto [t, x] : std::vector<std::pair<int, int>>{{rows, a}, {odd, a}, {unaligned, b}, {of_input, in}}) {
    const bool inside = off(t) >= off(x) && off(t) < off(x) + g.tensor(x).nbytes();
    EXPECT_FALSE(inside) << "tensor " << t;
  }
}

// A Conv's output takes its residual's bytes (ops/conv.cc input 3) when the Conv is the
// residual's last reader: in -Relu-> a -Relu-> b, c = Conv(b, w, -, a) reads a last; d = Conv(c,
// w, -, b) does not (b is read again by e = Add(d, b)); f = Conv(e, w, -, in) (a graph input) and
// h = Conv(g, w, -, g) (the residual is also X) get their own bytes.
TEST(Planner, ConvOutputTakesItsLastReadResidualsBytes) {
  Graph g;
  const int in = g.add_tensor("in", {1, 16, 4, 4}, DType::kF32);
  g.inputs.push_back(GraphInput{in, {}, {}});
  const float wv[16 * 16] = {};
  const int w = g.add_const("w", {16, 16, 1, 1}, DType::kF32, wv, sizeof(wv));
  auto add = [&](OpId op, std::vector<int> inputs) {
    Node n;
    n.op = op;
    n.inputs = std::move(inputs);
    n.outputs = {g.add_tensor("t" + std::to_string(g.nodes.size()), {1, 16, 4, 4}, DType::kF32)};
    g.nodes.push_back(n);
    return n.outputs[0];
  };
  const int a = add(OpId::Relu, {in});
  const int b = add(OpId::Relu, {a});
  const int c = add(OpId::Conv, {b, w, -1, a});
  const int d = add(OpId::Conv, {c, w, -1, b});
  const int e = add(OpId::Add, {d, b});
  const int f = add(OpId::Conv, {e, w, -1, in});
  const int gg = add(OpId::Relu, {f});
  const int h = add(OpId::Conv, {gg, w, -1, gg});
  g.outputs = {h};
  const ArenaPlan p = plan_arena(g);
  auto off = [&](int t) { return p.offset[static_cast<size_t>(t)]; };
  EXPECT_EQ(off(c), off(a));
  EXPECT_NE(off(d), off(b));
  EXPECT_NE(off(f), off(in));
  EXPECT_NE(off(h), off(gg));
  // a/c's slot lives from node 0 to node 3 (c's last reader): b, alive meanwhile, never shares it.
  EXPECT_NE(off(a), off(b));
  EXPECT_NE(off(a), off(in));
}

}  // namespace
}  // namespace orknn
