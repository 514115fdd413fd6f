// Gemm and MatMul: parameter matrices against naive double implementations written here,
// hand-computed values, normalisation and error cases.
#include <cmath>
#include <string>
#include <vector>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

// ---------------------------------------------------------------- Gemm

struct GemmCase {
  int64_t m, k, n;
  bool ta, tb;
  float alpha, beta;
  Shape c_shape;  // {-1}: no C
  std::string act;
};

std::vector<double> naive_gemm(const GemmCase& g, const std::vector<float>& a, const std::vector<float>& b,
                               const std::vector<float>& c) {
  std::vector<double> y(static_cast<size_t>(g.m * g.n));
  const bool has_c = !(g.c_shape.size() == 1 && g.c_shape[0] == -1);
  // C broadcast by reading its (row, col) with size-1 dims pinned to 0.
  Shape cs = g.c_shape;
  while (has_c && cs.size() < 2) cs.insert(cs.begin(), 1);
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const double av = g.ta ? a[static_cast<size_t>(p * g.m + i)] : a[static_cast<size_t>(i * g.k + p)];
        const double bv = g.tb ? b[static_cast<size_t>(j * g.k + p)] : b[static_cast<size_t>(p * g.n + j)];
        s += av * bv;
      }
      double v = g.alpha * s;
      if (has_c) {
        const int64_t ci = (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j);
        v += g.beta * c[static_cast<size_t>(ci)];
      }
      y[static_cast<size_t>(i * g.n + j)] = act_ref(g.act, v, 0, 0);
    }
  }
  return y;
}

TEST(GemmRef, ParameterMatrix) {
  uint32_t seed = 10;
  const std::vector<Shape> c_shapes = {{-1}, {}, {1}, {5}, {4, 1}, {1, 5}, {4, 5}, {1, 1}};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (const Shape& cs : c_shapes) {
        for (int ab = 0; ab < 2; ++ab) {
          GemmCase g{4,
                     7,
                     5,
                     ta,
                     tb,
                     ab ? 0.5f : 1.f,
                     ab ? -2.f : 1.f,
                     cs,
                     seed % 3 == 0 ? "Relu" : (seed % 3 == 1 ? "Sigmoid" : "")};
          SCOPED_TRACE("ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " C=" + shape_str(cs) +
                       " act=" + g.act);
          const Shape as = ta ? Shape{g.k, g.m} : Shape{g.m, g.k};
          const Shape bs = tb ? Shape{g.n, g.k} : Shape{g.k, g.n};
          std::vector<float> a = random_floats(static_cast<size_t>(shape_numel(as)), seed);
          std::vector<float> b = random_floats(static_cast<size_t>(shape_numel(bs)), seed + 1);
          const bool has_c = cs != Shape{-1};
          std::vector<float> c =
              has_c ? random_floats(static_cast<size_t>(shape_numel(cs)), seed + 2) : std::vector<float>{};
          ++seed;
          Attrs at;
          if (ta) at.set_int("transA", 1);
          if (tb) at.set_int("transB", 1);
          if (ab) {
            at.set_float("alpha", g.alpha);
            at.set_float("beta", g.beta);
          }
          if (!g.act.empty()) at.set_string("fused_act", g.act);
          std::vector<TensorData> in = {TensorData::f32(as, a), TensorData::f32(bs, b, true)};
          if (has_c) in.push_back(TensorData::f32(cs, c, true));
          OpResult r = run_op(OpId::Gemm, at, in, 1, "ref");
          ASSERT_TRUE(r.status.ok()) << r.status.message();
          ASSERT_EQ(r.outputs[0].shape, (Shape{4, 5}));
          expect_close(r.outputs[0].as<float>(), naive_gemm(g, a, b, c), 1e-5, "Gemm");
        }
      }
    }
  }
}

TEST(GemmRef, HandComputed) {
  // A = [[1,2],[3,4]], B = [[5,6],[7,8]]: AB = [[19,22],[43,50]]; alpha 2, beta 10, C = [1, -1].
  Attrs at;
  at.set_float("alpha", 2.f);
  at.set_float("beta", 10.f);
  OpResult r = run_op(
      OpId::Gemm, at,
      {TensorData::f32({2, 2}, {1, 2, 3, 4}), TensorData::f32({2, 2}, {5, 6, 7, 8}), TensorData::f32({2}, {1, -1})}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{48, 34, 96, 90}));
}

TEST(GemmInfer, NormalisesDefaults) {
  Graph g;
  Node n;
  n.name = "node_under_test";
  n.op = OpId::Gemm;
  n.inputs = {g.add_tensor("a", {3, 2}, DType::kF32), g.add_tensor("b", {4, 2}, DType::kF32)};
  n.outputs = {g.add_tensor("y", {}, DType::kF32)};
  n.attrs.set_int("transB", 1);
  ASSERT_TRUE(infer_Gemm(g, n).ok());
  EXPECT_EQ(n.attrs.get_int("transA", -1), 0);
  EXPECT_EQ(n.attrs.get_int("transB", -1), 1);
  EXPECT_FLOAT_EQ(n.attrs.get_float("alpha", 0), 1.f);
  EXPECT_FLOAT_EQ(n.attrs.get_float("beta", 0), 1.f);
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{3, 4}));
  ASSERT_TRUE(infer_Gemm(g, n).ok());
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{3, 4}));
}

// ---------------------------------------------------------------- MatMul

// numpy.matmul written directly: promote 1-D operands, broadcast batch dims, drop promoted dims.
std::vector<double> naive_matmul(Shape as, Shape bs, const std::vector<float>& a, const std::vector<float>& b,
                                 Shape* out) {
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  const size_t rank = std::max(as.size(), bs.size());
  while (as.size() < rank) as.insert(as.begin(), 1);
  while (bs.size() < rank) bs.insert(bs.begin(), 1);
  Shape batch;
  for (size_t i = 0; i + 2 < rank; ++i) batch.push_back(std::max(as[i], bs[i]));
  const int64_t m = as[rank - 2], k = as[rank - 1], n = bs[rank - 1];
  std::vector<double> y;
  for (int64_t bi = 0; bi < shape_numel(batch); ++bi) {
    // batch coordinates
    std::vector<int64_t> coord(batch.size());
    int64_t rem = bi;
    for (size_t d = batch.size(); d-- > 0;) {
      coord[d] = rem % batch[d];
      rem /= batch[d];
    }
    int64_t ao = 0, bo = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      ao = ao * as[d] + (as[d] == 1 ? 0 : coord[d]);
      bo = bo * bs[d] + (bs[d] == 1 ? 0 : coord[d]);
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += double(a[static_cast<size_t>(ao * m * k + i * k + p)]) * b[static_cast<size_t>(bo * k * n + p * n + j)];
        y.push_back(s);
      }
  }
  *out = batch;
  if (!a1) out->push_back(m);
  if (!b1) out->push_back(n);
  return y;
}

TEST(MatMulRef, ParameterMatrix) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{6}, {6}},
      {{6}, {6, 3}},
      {{4, 6}, {6}},
      {{4, 6}, {6, 3}},
      {{1, 6}, {6, 1}},
      {{2, 4, 6}, {6, 3}},
      {{4, 6}, {2, 6, 3}},
      {{2, 4, 6}, {2, 6, 3}},
      {{2, 1, 4, 6}, {3, 6, 5}},
      {{1, 3, 4, 6}, {2, 1, 6, 5}},
      {{5, 6}, {2, 3, 6, 2}},
      {{6}, {2, 3, 6, 2}},
      {{2, 3, 4, 6}, {6}},
      {{2, 1, 1, 4, 6}, {1, 3, 2, 6, 2}},
  };
  uint32_t seed = 77;
  for (const auto& c : cases) {
    for (bool relu : {false, true}) {
      SCOPED_TRACE(shape_str(c.first) + " x " + shape_str(c.second) + (relu ? " relu" : ""));
      std::vector<float> a = random_floats(static_cast<size_t>(shape_numel(c.first)), seed);
      std::vector<float> b = random_floats(static_cast<size_t>(shape_numel(c.second)), seed + 1);
      ++seed;
      Shape want_shape;
      std::vector<double> want = naive_matmul(c.first, c.second, a, b, &want_shape);
      if (relu)
        for (double& v : want) v = act_ref("Relu", v, 0, 0);
      Attrs at;
      if (relu) at.set_string("fused_act", "Relu");
      OpResult r = run_op(OpId::MatMul, at, {TensorData::f32(c.first, a), TensorData::f32(c.second, b, seed % 2 == 0)},
                          1, "ref");
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      ASSERT_EQ(r.outputs[0].shape, want_shape);
      expect_close(r.outputs[0].as<float>(), want, 1e-5, "MatMul");
    }
  }
}

TEST(MatMulRef, HandComputed) {
  // [2,2] batch of 2 times a shared [2,1]: [[1,2],[3,4]]*[1,1]^T = [3,7]; [[0,1],[1,0]] -> [1,1].
  OpResult r = run_op(OpId::MatMul, Attrs(),
                      {TensorData::f32({2, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0}), TensorData::f32({2, 1}, {1, 1})}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].shape, (Shape{2, 2, 1}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{3, 7, 1, 1}));
  // 1-D x 1-D: dot product, a scalar.
  r = run_op(OpId::MatMul, Attrs(), {TensorData::f32({3}, {1, 2, 3}), TensorData::f32({3}, {4, 5, 6})}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].shape, Shape{});
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{32}));
}

// ---------------------------------------------------------------- errors

TEST(GemmInfer, Errors) {
  const DType f = DType::kF32;
  Attrs none;
  expect_infer_error(OpId::Gemm, {{{2, 3}, f}}, none, "inputs");
  expect_infer_error(OpId::Gemm, {{{2, 3, 1}, f}, {{3, 2}, f}}, none, "2-D");
  expect_infer_error(OpId::Gemm, {{{2, 3}, f}, {{4, 2}, f}}, none, "inner dims");
  expect_infer_error(OpId::Gemm, {{{2, 3}, f}, {{3, 4}, f}, {{3}, f}}, none, "broadcastable");
  expect_infer_error(OpId::Gemm, {{{2, 3}, f}, {{3, 4}, f}, {{2, 4, 1}, f}}, none, "broadcastable");
  expect_infer_error(OpId::Gemm, {{{2, 3}, DType::kI8}, {{3, 4}, f}}, none, "float32");
  expect_infer_error(OpId::Gemm, {{{2, 3}, f}, {{3, 4}, f}, {{4}, DType::kI32}}, none, "float32");
  Attrs t;
  t.set_int("transA", 2);
  expect_infer_error(OpId::Gemm, {{{2, 3}, f}, {{3, 4}, f}}, t, "transA");
  Attrs act;
  act.set_string("fused_act", "Tanh");
  expect_infer_error(OpId::Gemm, {{{2, 3}, f}, {{3, 4}, f}}, act, "fused_act");
}

TEST(MatMulInfer, Errors) {
  const DType f = DType::kF32;
  Attrs none;
  expect_infer_error(OpId::MatMul, {{{2, 3}, f}}, none, "inputs");
  expect_infer_error(OpId::MatMul, {{{2, 3}, f}, {{4, 2}, f}}, none, "inner dims");
  expect_infer_error(OpId::MatMul, {{{3}, f}, {{4}, f}}, none, "inner dims");
  expect_infer_error(OpId::MatMul, {{{2, 2, 3}, f}, {{3, 3, 4}, f}}, none, "broadcast");
  expect_infer_error(OpId::MatMul, {{{}, f}, {{3, 4}, f}}, none, "rank");
  expect_infer_error(OpId::MatMul, {{{2, 3}, DType::kI64}, {{3, 4}, DType::kI64}}, none, "float32");
}

}  // namespace
}  // namespace orknn::test
