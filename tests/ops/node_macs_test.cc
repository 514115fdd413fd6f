// node_macs (ops/op.h): the multiply-accumulates the per-layer report counts, hand-computed.
#include <gtest/gtest.h>

#include "graph/ir.h"
#include "ops/op.h"

namespace orknn {
namespace {

int64_t macs(OpId op, const Shape& a, const Shape& b, const Shape& y, const Attrs& attrs = Attrs()) {
  Graph g;
  Node n;
  n.op = op;
  n.attrs = attrs;
  n.inputs = {g.add_tensor("a", a, DType::kF32), g.add_tensor("b", b, DType::kF32)};
  n.outputs = {g.add_tensor("y", y, DType::kF32)};
  return node_macs(g, n);
}

TEST(NodeMacs, ConvolutionsAndMatrixProducts) {
  // 3x3 conv 16 -> 32 on 8x8 outputs: each output sums 16 * 9 products.
  EXPECT_EQ(macs(OpId::Conv, {1, 16, 8, 8}, {32, 16, 3, 3}, {1, 32, 8, 8}), 32 * 8 * 8 * 16 * 9);
  // Depthwise (group 16): one input channel per output.
  EXPECT_EQ(macs(OpId::Conv, {2, 16, 8, 8}, {16, 1, 3, 3}, {2, 16, 4, 4}), 2 * 16 * 4 * 4 * 9);
  // ConvTranspose 2x2 stride 2, 8 -> 4 channels: every input element meets 4 * 4 weights.
  EXPECT_EQ(macs(OpId::ConvTranspose, {1, 8, 5, 5}, {8, 4, 2, 2}, {1, 4, 10, 10}), 8 * 5 * 5 * 4 * 4);
  // Gemm [3,64] x [64,10] and with transA ([64,3]).
  EXPECT_EQ(macs(OpId::Gemm, {3, 64}, {64, 10}, {3, 10}), 3 * 10 * 64);
  Attrs ta;
  ta.set_int("transA", 1);
  EXPECT_EQ(macs(OpId::Gemm, {64, 3}, {64, 10}, {3, 10}, ta), 3 * 10 * 64);
  // Batched MatMul [2,5,7] x [7,4].
  EXPECT_EQ(macs(OpId::MatMul, {2, 5, 7}, {7, 4}, {2, 5, 4}), 2 * 5 * 4 * 7);
  // Anything else counts nothing.
  EXPECT_EQ(macs(OpId::Add, {1, 4}, {1, 4}, {1, 4}), 0);
}

}  // namespace
}  // namespace orknn
