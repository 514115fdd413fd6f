// runtime/layout_assignment.h: which activations the context keeps blocked (nChw16c for float32,
// or NHWC in builds that chose it (kernels/kernel.h kFloatBlockedNhwc); NHWC for INT8), from what
// each node's kernel takes. Small hand-made graphs, one rule each.
#include "runtime/layout_assignment.h"

#include <gtest/gtest.h>

#include <vector>

namespace orknn {
namespace {

// A chain in -> n0 -> t1 -> n1 -> t2 -> n2 -> out of 4-D tensors [1, C, 8, 8] of `dtype`.
struct Chain {
  Graph g;
  int in = -1, t1 = -1, t2 = -1, out = -1;
  Chain(DType dtype, int64_t channels) {
    const Shape s = {1, channels, 8, 8};
    in = g.add_tensor("in", s, dtype);
    t1 = g.add_tensor("t1", s, dtype);
    t2 = g.add_tensor("t2", s, dtype);
    out = g.add_tensor("out", s, dtype);
    g.inputs.push_back(GraphInput{in});
    g.outputs.push_back(out);
    const int ids[4] = {in, t1, t2, out};
    for (int k = 0; k < 3; ++k) {
      Node n;
      n.op = OpId::Relu;
      n.name = "n" + std::to_string(k);
      n.inputs = {ids[k]};
      n.outputs = {ids[k + 1]};
      g.nodes.push_back(n);
    }
  }
  std::vector<uint8_t> choose(BlockedIo a, BlockedIo b, BlockedIo c) const {
    return choose_blocked_tensors(g, {a, b, c});
  }
};

constexpr BlockedIo kEach = BlockedIo::kEach, kUniform = BlockedIo::kUniform, kNone = BlockedIo::kNone,
                    kEachPadded = BlockedIo::kEachPadded;

// nChw16c needs whole blocks of 16 channels (or padding, below); NHWC takes any count.
TEST(BlockedLayoutChoice, FloatNeedsChannelsInSixteensInt8TakesAny) {
  for (int64_t c : {16, 32, 24, 3}) {
    const Chain fc(DType::kF32, c);
    EXPECT_EQ(fc.choose(kEach, kEach, kEach)[static_cast<size_t>(fc.t1)], kFloatBlockedNhwc || c % 16 == 0)
        << "float, " << c << " channels";
    const Chain ic(DType::kI8, c);
    const std::vector<uint8_t> i = ic.choose(kEach, kEach, kEach);
    EXPECT_EQ(i[static_cast<size_t>(ic.t1)], 1) << "int8, " << c << " channels";
    EXPECT_EQ(i[static_cast<size_t>(ic.t2)], 1) << "int8, " << c << " channels";
  }
  const Chain other(DType::kI32, 16);  // neither float32 nor INT8
  EXPECT_EQ(other.choose(kEach, kEach, kEach)[static_cast<size_t>(other.t1)], 0);
}

// Float channel counts that nChw16c pads: only between kernels that take padding (kEachPadded),
// and only above 16 channels; multiples of 16 as before. NHWC pads nothing.
TEST(BlockedLayoutChoice, PaddedFloatOnlyBetweenKernelsThatTakePadding) {
  for (int64_t c : {24, 40, 1000, 3, 16, 32}) {
    const Chain fc(DType::kF32, c);
    const bool pads = !kFloatBlockedNhwc && c % 16 != 0;
    const std::vector<uint8_t> all = fc.choose(kEachPadded, kEachPadded, kEachPadded);
    EXPECT_EQ(all[static_cast<size_t>(fc.t1)], !pads || c > 16) << c << " channels";
    EXPECT_EQ(all[static_cast<size_t>(fc.t2)], !pads || c > 16) << c << " channels";
    // n2 reads t2 but takes no padding: t2 stays NCHW when it would be padded, t1 is unaffected.
    const std::vector<uint8_t> mixed = fc.choose(kEachPadded, kEachPadded, kEach);
    EXPECT_EQ(mixed[static_cast<size_t>(fc.t1)], !pads || c > 16) << c << " channels";
    EXPECT_EQ(mixed[static_cast<size_t>(fc.t2)], !pads) << c << " channels";
  }
}

TEST(BlockedLayoutChoice, GraphInputsAndOutputsStayNchw) {
  for (DType dt : {DType::kF32, DType::kI8}) {
    const Chain c(dt, 16);
    const std::vector<uint8_t> b = c.choose(kEach, kEach, kEach);
    EXPECT_EQ(b[static_cast<size_t>(c.in)], 0);
    EXPECT_EQ(b[static_cast<size_t>(c.out)], 0);
  }
}

TEST(BlockedLayoutChoice, EveryNodeTouchingATensorMustTakeIt) {
  const Chain c(DType::kI8, 16);
  const std::vector<uint8_t> b = c.choose(kEach, kNone, kEach);  // n1 reads t1 and writes t2
  EXPECT_EQ(b[static_cast<size_t>(c.t1)], 0);
  EXPECT_EQ(b[static_cast<size_t>(c.t2)], 0);
}

TEST(BlockedLayoutChoice, UniformNodesTakeAllOrNone) {
  // n1 kUniform between t1 and t2; n2 kNone reads t2, so t2 stays NCHW and so must t1.
  const Chain c(DType::kI8, 16);
  std::vector<uint8_t> b = c.choose(kEach, kUniform, kNone);
  EXPECT_EQ(b[static_cast<size_t>(c.t1)], 0);
  EXPECT_EQ(b[static_cast<size_t>(c.t2)], 0);
  b = c.choose(kEach, kUniform, kEach);
  EXPECT_EQ(b[static_cast<size_t>(c.t1)], 1);
  EXPECT_EQ(b[static_cast<size_t>(c.t2)], 1);
}

TEST(BlockedLayoutChoice, LayoutNames) {
  EXPECT_STREQ(blocked_layout_name(DType::kF32), kFloatBlockedNhwc ? "nhwc" : "nChw16c");
  EXPECT_EQ(stored_numel(Tensor{"t", {1, 24, 3, 3}, DType::kF32}, true), kFloatBlockedNhwc ? 216 : 288);
  EXPECT_STREQ(blocked_layout_name(DType::kI8), "nhwc");
}

// A Conv's residual input and its output are blocked both or neither (the planner may give them
// the same bytes): in -n0-> t1 -n1-> t2, t3 = Conv(t2, w, -, t1), t3 -n3-> out.
TEST(BlockedLayoutChoice, ConvResidualAndOutputShareTheLayout) {
  Graph g;
  const Shape s = {1, 16, 8, 8};
  const int in = g.add_tensor("in", s, DType::kF32), t1 = g.add_tensor("t1", s, DType::kF32);
  const int t2 = g.add_tensor("t2", s, DType::kF32), t3 = g.add_tensor("t3", s, DType::kF32);
  const int out = g.add_tensor("out", s, DType::kF32);
  const float wv[16 * 16] = {};
  const int w = g.add_const("w", {16, 16, 1, 1}, DType::kF32, wv, sizeof(wv));
  g.inputs.push_back(GraphInput{in});
  g.outputs.push_back(out);
  auto node = [&](OpId op, std::vector<int> inputs, int output) {
    Node n;
    n.op = op;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    g.nodes.push_back(n);
  };
  node(OpId::Relu, {in}, t1);
  node(OpId::Relu, {t1}, t2);
  node(OpId::Conv, {t2, w, -1, t1}, t3);
  node(OpId::Relu, {t3}, out);
  auto blocked = [&](std::vector<BlockedIo> io) {
    const std::vector<uint8_t> b = choose_blocked_tensors(g, io);
    return std::vector<int>{b[static_cast<size_t>(t1)], b[static_cast<size_t>(t2)], b[static_cast<size_t>(t3)]};
  };
  EXPECT_EQ(blocked({kEach, kEach, kEach, kEach}), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(blocked({kNone, kEach, kEach, kEach}), (std::vector<int>{0, 1, 0}));  // t1 NCHW: so is t3
  EXPECT_EQ(blocked({kEach, kEach, kEach, kNone}), (std::vector<int>{0, 1, 0}));  // t3 NCHW: so is t1
}

}  // namespace
}  // namespace orknn
