// Einsum, mapped at import onto ReduceSum/Transpose/Reshape/MatMul (converter/onnx/ops/einsum.cc):
// equations of the model families (maxvit's batched attention), implicit outputs, ellipsis with
// broadcasting, one-operand sums, outer products, against a naive evaluator written here that
// loops over every assignment of the labels; and the refusals.
#include <map>
#include <random>

#include "converter/converter_test_util.h"

namespace orknn::test {
namespace {

using B = OnnxBuilder;

struct Operand {
  std::string labels;  // one letter per dim ("..." already spelled out as letters)
  Shape shape;
  std::vector<float> data;
};

// out[o] = sum over all labels not in `out_labels` of prod_i operand_i[...], dims broadcast from 1.
std::vector<float> naive_einsum(const std::vector<Operand>& ops, const std::string& out_labels, Shape* out_shape) {
  std::map<char, int64_t> size;
  for (const auto& op : ops)
    for (size_t d = 0; d < op.labels.size(); ++d) size[op.labels[d]] = std::max(size[op.labels[d]], op.shape[d]);
  std::string all;
  for (const auto& [l, n] : size) all += l;
  out_shape->clear();
  for (char l : out_labels) out_shape->push_back(size[l]);
  int64_t out_count = 1;
  for (int64_t d : *out_shape) out_count *= d;
  std::vector<float> out(static_cast<size_t>(out_count), 0.f);
  std::map<char, int64_t> at;
  for (char l : all) at[l] = 0;
  while (true) {
    double prod = 1.0;
    for (const auto& op : ops) {
      int64_t idx = 0;
      for (size_t d = 0; d < op.labels.size(); ++d) idx = idx * op.shape[d] + (op.shape[d] == 1 ? 0 : at[op.labels[d]]);
      prod *= op.data[static_cast<size_t>(idx)];
    }
    int64_t o = 0;
    for (char l : out_labels) o = o * size[l] + at[l];
    out[static_cast<size_t>(o)] += static_cast<float>(prod);
    size_t k = all.size();
    while (k > 0 && ++at[all[k - 1]] == size[all[k - 1]]) at[all[--k]] = 0;
    if (k == 0) break;
  }
  return out;
}

std::vector<float> random_values(const Shape& s, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

// equation: the ONNX attribute; labels: each operand's dims as letters (for the naive evaluator);
// out_labels: the output's.
void check(const std::string& equation, const std::vector<std::string>& labels, const std::vector<Shape>& shapes,
           const std::string& out_labels) {
  SCOPED_TRACE(equation);
  B b(13);
  std::vector<std::string> names;
  std::vector<Operand> ops;
  std::vector<std::vector<float>> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    names.push_back("x" + std::to_string(i));
    b.input(names.back(), shapes[i]);
    ops.push_back({labels[i], shapes[i], random_values(shapes[i], 11 + static_cast<uint32_t>(i))});
    inputs.push_back(ops.back().data);
  }
  B::attr_s(b.node("Einsum", names, {"y"}, "einsum"), "equation", equation);
  b.output("y");
  Graph g;
  ASSERT_OK(convert(b, &g));
  EXPECT_EQ(count_op(g, OpId::MatMul), shapes.size() == 2 ? 1 : 0);
  Shape want_shape;
  const std::vector<float> want = naive_einsum(ops, out_labels, &want_shape);
  EXPECT_EQ(output_tensor(g).shape, want_shape);
  const std::vector<float> got = run_f32(g, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * (1.f + std::fabs(want[i]))) << i;
}

TEST(Einsum, BatchedAttentionOfMaxViT) {
  check("bghid,bghjd->bghij", {"bghid", "bghjd"}, {{1, 2, 3, 5, 4}, {1, 2, 3, 6, 4}}, "bghij");
  check("bghij,bghjd->bghid", {"bghij", "bghjd"}, {{1, 2, 3, 5, 6}, {1, 2, 3, 6, 4}}, "bghid");
}

TEST(Einsum, MatmulTransposedOutputsAndOuterProducts) {
  check("ij,jk->ik", {"ij", "jk"}, {{3, 4}, {4, 5}}, "ik");
  check("ij,jk->ki", {"ij", "jk"}, {{3, 4}, {4, 5}}, "ki");
  check("i,j->ij", {"i", "j"}, {{3}, {4}}, "ij");
  check("bij,bjk", {"bij", "bjk"}, {{2, 3, 4}, {2, 4, 5}}, "ik");   // implicit: letters used once, sorted (b summed)
  check("ik,jk->ij", {"ik", "jk"}, {{3, 4}, {5, 4}}, "ij");           // contraction on the last dims
  check("abc,cd->", {"abc", "cd"}, {{2, 3, 4}, {4, 5}}, "");          // everything summed
  check("ab,ab->ab", {"ab", "ab"}, {{3, 4}, {3, 4}}, "ab");           // element-wise product
  check("abc,b->ac", {"abc", "b"}, {{2, 3, 4}, {3}}, "ac");           // label summed away in one operand first
}

TEST(Einsum, EllipsisBroadcastsAndOneOperandSums) {
  check("...ij,...jk->...ik", {"pqij", "qjk"}, {{2, 3, 4, 5}, {3, 5, 6}}, "pqik");
  check("...ij,...jk->...ik", {"pqij", "qjk"}, {{2, 1, 4, 5}, {3, 5, 6}}, "pqik");  // batch dim 1 broadcast
  check("ij->i", {"ij"}, {{3, 4}}, "i");
  check("ij->ji", {"ij"}, {{3, 4}}, "ji");
  check("ijk->", {"ijk"}, {{2, 3, 4}}, "");
  check("ij", {"ij"}, {{3, 4}}, "ij");
}

TEST(Einsum, RefusalsNameTheNodeAndTheRemedy) {
  auto refuse = [](const std::string& eq, const std::vector<Shape>& shapes, const std::string& part) {
    B b(13);
    std::vector<std::string> names;
    for (size_t i = 0; i < shapes.size(); ++i) {
      names.push_back("x" + std::to_string(i));
      b.input(names.back(), shapes[i]);
    }
    B::attr_s(b.node("Einsum", names, {"y"}, "einsum"), "equation", eq);
    b.output("y");
    Graph g;
    Status st = convert(b, &g);
    ASSERT_FALSE(st.ok()) << eq;
    EXPECT_NE(st.message().find("node 'einsum' (Einsum)"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
  };
  refuse("ii->i", {{3, 3}}, "a diagonal");
  refuse("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}, "split it into pairwise Einsum nodes");
  refuse("ij,jk->ik", {{2, 3}, {4, 5}}, "label 'j' has size");
  refuse("ij->k", {{2, 3}}, "is not a label of the operands");
  refuse("ijk->i", {{2, 3}}, "has 3 labels for an operand of rank 2");
}

}  // namespace
}  // namespace orknn::test
