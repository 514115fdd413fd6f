// Quantized (INT8) Add, Sub, Mul: hand-computed cases (ties at .5, saturation, odd zero points),
// numpy broadcasting with constant operands against the formulas of docs/numerics.md written out
// here, the error paths of infer, and the fast kernels (AVX-512, NEON) bit-exact against the reference.
#include <cstring>
#include <limits>

#include "kernels/kernel.h"
#include "ops/int8_test_helpers.h"
#include "ops/ref_test_helpers.h"
#include "testutil/cpu.h"

namespace orknn::test {
namespace {
using namespace reft;
using namespace q8t;

// The spec's formulas, operation by operation in float32:
//   Add/Sub: Ma = s_a / s_y, Mb = s_b / s_y, f = float(a - zp_a) * Ma, g = float(b - zp_b) * Mb,
//            y = sat8(rne(f +/- g) + zp_y)
//   Mul:     M = (s_a * s_b) / s_y, y = sat8(rne(float((a - zp_a) * (b - zp_b)) * M) + zp_y)
int8_t expect_binary(OpId op, int a, int b, const QuantParams& qa, const QuantParams& qb, const QuantParams& qy) {
  const float sa = qa.scale[0], sb = qb.scale[0], sy = qy.scale[0];
  const int za = qa.zero_point[0], zb = qb.zero_point[0], zy = qy.zero_point[0];
  if (op == OpId::Mul) {
    const float m = (sa * sb) / sy;
    const int prod = (a - za) * (b - zb);
    const float v = static_cast<float>(prod) * m;
    return rne_zp_naive(v, zy);
  }
  const float ma = sa / sy;
  const float mb = sb / sy;
  const float f = static_cast<float>(a - za) * ma;
  const float g = static_cast<float>(b - zb) * mb;
  const float v = op == OpId::Add ? f + g : f - g;
  return rne_zp_naive(v, zy);
}

OpResult run_q(OpId op, const TensorData& a, const TensorData& b, const QuantParams& qy,
               const std::string& kernel = "ref") {
  return run_op(op, Attrs(), {a, b}, 1, kernel, 1, {qy});
}

// Expected output of a broadcasting op, element by element with the naive broadcast index.
std::vector<int8_t> expect_broadcast(OpId op, const TensorData& a, const TensorData& b, const QuantParams& qy,
                                     const Shape& out) {
  const std::vector<int8_t> va = a.as<int8_t>(), vb = b.as<int8_t>();
  std::vector<int8_t> want(static_cast<size_t>(shape_numel(out)));
  for (size_t i = 0; i < want.size(); ++i) {
    const std::vector<int64_t> c = unravel(static_cast<int64_t>(i), out);
    want[i] = expect_binary(op, va[static_cast<size_t>(broadcast_index(c, a.shape))],
                            vb[static_cast<size_t>(broadcast_index(c, b.shape))], a.quant, b.quant, qy);
  }
  return want;
}

// ---- hand-computed ----

// a: s 0.5 zp 3, b: s 0.25 zp -5, y: s 1 zp -1, so Ma = 0.5, Mb = 0.25.
TEST(QuantAddRef, HandValuesWithTiesToEven) {
  const QuantParams qa = qp(0.5f, 3), qb = qp(0.25f, -5), qy = qp(1.f, -1);
  // (a, b) -> f + g -> rne -> + zp_y
  // (4, -5): 0.5 + 0 = 0.5 -> 0 (tie, even) -> -1
  // (6, -5): 1.5 + 0 = 1.5 -> 2 -> 1
  // (3, -3): 0 + 0.5 = 0.5 -> 0 -> -1
  // (3, 1):  0 + 1.5 = 1.5 -> 2 -> 1
  // (8, -3): 2.5 + 0.5 = 3 -> 3 -> 2
  // (5, 5):  1 + 2.5 = 3.5 -> 4 -> 3
  // (0, -7): -1.5 - 0.5 = -2 -> -2 -> -3
  // (2, -5): -0.5 + 0 = -0.5 -> -0 -> -1
  // (127, 127): 62 + 33 = 95 -> 94
  OpResult r = run_q(OpId::Add, q8({9}, {4, 6, 3, 3, 8, 5, 0, 2, 127}, qa), q8({9}, {-5, -5, -3, 1, -3, 5, -7, -5, 127}, qb),
                     qy);
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
  EXPECT_TRUE(same_params(r.outputs[0].quant, qy));
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{-1, 1, -1, 1, 2, 3, -3, -1, 94}));
}

TEST(QuantSubRef, HandValues) {
  const QuantParams qa = qp(0.5f, 3), qb = qp(0.25f, -5), qy = qp(1.f, -1);
  // (6, -3): 1.5 - 0.5 = 1 -> 0;  (4, 1): 0.5 - 1.5 = -1 -> -2;  (5, -3): 1 - 0.5 = 0.5 -> 0 -> -1
  // (7, -3): 2 - 0.5 = 1.5 -> 2 -> 1;  (3, -3): -0.5 -> -0 -> -1;  (3, 1): -1.5 -> -2 -> -3
  OpResult r = run_q(OpId::Sub, q8({6}, {6, 4, 5, 7, 3, 3}, qa), q8({6}, {-3, 1, -3, -3, -3, 1}, qb), qy);
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{0, -2, -1, 1, -1, -3}));
}

// a: s 0.5 zp 3, b: s 0.25 zp -5, y: s 0.5 zp 1, so M = 0.125 / 0.5 = 0.25.
TEST(QuantMulRef, HandValuesWithTiesAndSaturation) {
  const QuantParams qa = qp(0.5f, 3), qb = qp(0.25f, -5), qy = qp(0.5f, 1);
  // (5, -3): 2*2 = 4 -> 1 -> 2;  (4, -3): 2 -> 0.5 -> 0 -> 1;  (6, -3): 6 -> 1.5 -> 2 -> 3
  // (8, -3): 10 -> 2.5 -> 2 -> 3;  (9, -3): 12 -> 3 -> 4;  (3, 100): 0 -> 1
  // (-128, 127): -131 * 132 = -17292 -> -4323 -> -128;  (127, 127): 124 * 132 -> 4092 -> 127
  OpResult r = run_q(OpId::Mul, q8({8}, {5, 4, 6, 8, 9, 3, -128, 127}, qa), q8({8}, {-3, -3, -3, -3, -3, 100, 127, 127}, qb),
                     qy);
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{2, 1, 3, 3, 4, 1, -128, 127}));
}

TEST(QuantAddRef, SaturatesBothWays) {
  // Ma = 2, Mb = 1: (127, 127) -> 260 + 132 = 392 -> 127; (-128, -128) -> -250 - 123 -> -128.
  const QuantParams qa = qp(0.5f, -3), qb = qp(0.25f, -5), qy = qp(0.25f, -1);
  OpResult r = run_q(OpId::Add, q8({3}, {127, -128, -3}, qa), q8({3}, {127, -128, -5}, qb), qy);
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{127, -128, -1}));
}

// ---- broadcasting, constant operands, random parameters ----

TEST(QuantBinaryRef, BroadcastingWithConstantOperand) {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}, {2, 3, 4}},       {{2, 3, 4}, {3, 1}, {2, 3, 4}},
      {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}}, {{}, {2, 3}, {2, 3}},             {{2, 3}, {}, {2, 3}},
      {{1, 8, 5, 5}, {1, 8, 1, 1}, {1, 8, 5, 5}}, {{4, 1}, {1, 5}, {4, 5}},
  };
  const std::vector<std::vector<QuantParams>> params = {
      {qp(0.05f, -7), qp(0.02f, 13), qp(0.07f, -1)},
      {qp(0.5f, 127), qp(0.5f, -128), qp(0.25f, 5)},
      {qp(1.f / 3.f, 1), qp(0.1f, -3), qp(0.011f, 9)},
      {qp(0.003f, 0), qp(2.5f, -11), qp(0.4f, -127)},
  };
  uint32_t seed = 1;
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul}) {
    for (const Case& c : cases) {
      for (const auto& p : params) {
        for (bool b_const : {false, true}) {
          const TensorData a = q8(c.a, random_i8(static_cast<size_t>(shape_numel(c.a)), seed++), p[0]);
          const TensorData b = q8(c.b, random_i8(static_cast<size_t>(shape_numel(c.b)), seed++), p[1], b_const);
          OpResult r = run_q(op, a, b, p[2]);
          ASSERT_OK(r.status);
          ASSERT_EQ(r.outputs[0].shape, c.out);
          EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
          EXPECT_EQ(out_i8(r), expect_broadcast(op, a, b, p[2], c.out))
              << op_name(op) << " " << shape_str(c.a) << " x " << shape_str(c.b) << " seed " << seed;
          // A constant first operand works the same way.
          TensorData a_const = a;
          a_const.is_const = true;
          OpResult r2 = run_q(op, a_const, b, p[2]);
          ASSERT_OK(r2.status);
          EXPECT_EQ(out_i8(r2), out_i8(r));
        }
      }
    }
  }
}

// Every pair of int8 codes for a few parameter sets (the whole input space).
TEST(QuantBinaryRef, AllCodePairs) {
  std::vector<int8_t> va, vb;
  for (int a = -128; a < 128; ++a)
    for (int b = -128; b < 128; ++b) {
      va.push_back(static_cast<int8_t>(a));
      vb.push_back(static_cast<int8_t>(b));
    }
  const std::vector<std::vector<QuantParams>> params = {
      {qp(0.0235f, -17), qp(0.0117f, 41), qp(0.0391f, 3)},
      {qp(0.5f, 1), qp(0.5f, -1), qp(1.f, 0)},  // many exact ties at .5
      {qp(1.f, 0), qp(1.f, 0), qp(1.f, 0)},
  };
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul}) {
    for (const auto& p : params) {
      OpResult r = run_q(op, q8({256, 256}, va, p[0]), q8({256, 256}, vb, p[1]), p[2]);
      ASSERT_OK(r.status);
      const std::vector<int8_t> got = out_i8(r);
      size_t bad = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != expect_binary(op, va[i], vb[i], p[0], p[1], p[2]) && bad++ < 5)
          ADD_FAILURE() << op_name(op) << " a=" << int(va[i]) << " b=" << int(vb[i]) << " got " << int(got[i]);
      EXPECT_EQ(bad, 0u);
    }
  }
}

// ---- plain int8 keeps its old meaning; infer errors ----

TEST(QuantBinaryInfer, PlainInt8IsNotQuantizedArithmetic) {
  // Without quantization parameters int8 is not one of the arithmetic dtypes (float32, int32, int64).
  OpResult r = ref(OpId::Add, A(), {i8({2}, {1, 2}), i8({2}, {3, 4})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(contains(r.status.message(), "int8")) << r.status.message();
  // int32 stays exact integer arithmetic.
  r = ref(OpId::Mul, A(), {i32({2}, {100000, -7}), i32({2}, {3, 6})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{300000, -42}));
}

TEST(QuantBinaryInfer, Errors) {
  const QuantParams q = qp(0.1f, 2);
  // One operand float.
  OpResult r = run_q(OpId::Add, q8({2}, {1, 2}, q), f32({2}, {1.f, 2.f}), q);
  expect_invalid_model(r.status, "input 1 ('in1') must be a quantized int8 tensor", "Add_under_test");
  // Quantized inputs, output without parameters.
  r = run_op(OpId::Mul, Attrs(), {q8({2}, {1, 2}, q), q8({2}, {1, 2}, q)}, 1, "ref", 1, {});
  expect_invalid_model(r.status, "output 0 ('out0') has no quantization parameters", "Mul_under_test");
  // Plain int8 second operand.
  r = run_q(OpId::Sub, q8({2}, {1, 2}, q), i8({2}, {1, 2}), q);
  expect_invalid_model(r.status, "input 1", "Sub_under_test");
  // Per-axis parameters on an operand.
  TensorData b = q8({2}, {1, 2}, q, true);
  b.quant.scale = {0.1f, 0.2f};
  b.quant.zero_point = {0, 0};
  b.quant.axis = 0;
  r = run_q(OpId::Add, q8({2}, {1, 2}, q), b, q);
  expect_invalid_model(r.status, "per tensor", "Add_under_test");
  // Bad parameters.
  r = run_q(OpId::Add, q8({2}, {1, 2}, qp(-1.f, 0)), q8({2}, {1, 2}, q), q);
  expect_invalid_model(r.status, "scale", "Add_under_test");
  r = run_q(OpId::Add, q8({2}, {1, 2}, q), q8({2}, {1, 2}, q), qp(0.1f, 300));
  expect_invalid_model(r.status, "zero point 300", "Add_under_test");
  // Shapes that do not broadcast.
  r = run_q(OpId::Add, q8({2}, {1, 2}, q), q8({3}, {1, 2, 3}, q), q);
  EXPECT_FALSE(r.status.ok());
  // Ops without an int8 kernel refuse quantized tensors.
  for (OpId op : {OpId::Div, OpId::Max, OpId::Pow, OpId::Equal}) {
    r = run_q(op, q8({2}, {1, 2}, q), q8({2}, {1, 2}, q), q);
    expect_invalid_model(r.status, "not supported", std::string(op_name(op)) + "_under_test");
  }
  // The quantized node never gets the float kernel: no Add kernel treats it as plain data.
  r = run_q(OpId::Add, q8({2}, {1, 2}, q), q8({2}, {1, 2}, q), q);
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
}

TEST(QuantBinaryInfer, IdempotentAndKeepsParams) {
  Graph g;
  Node n;
  n.name = "add_q";
  n.op = OpId::Add;
  const int a = g.add_tensor("a", {2, 3}, DType::kI8);
  const int b = g.add_tensor("b", {3}, DType::kI8);
  const int y = g.add_tensor("y", {}, DType::kI8);
  g.tensor(a).quant = qp(0.1f, 1);
  g.tensor(b).quant = qp(0.2f, -1);
  g.tensor(y).quant = qp(0.3f, 5);
  n.inputs = {a, b};
  n.outputs = {y};
  ASSERT_OK(find_op(OpId::Add)->infer(g, n));
  EXPECT_EQ(g.tensor(y).dtype, DType::kI8);
  EXPECT_EQ(g.tensor(y).shape, (Shape{2, 3}));
  EXPECT_TRUE(same_params(g.tensor(y).quant, qp(0.3f, 5)));
  EXPECT_TRUE(same_params(g.tensor(a).quant, qp(0.1f, 1)));
  expect_reinfer_unchanged(g, n);
}

// ---- fast kernels: bit-exact against the reference ----

// The fast kernel of the build and CPU (x86: avx512_int8 with AVX-512BW; aarch64: neon_int8), the
// same name for Add, Sub and Mul (each test expects it for all three); nullptr: none here.
const char* fast_binary_kernel() {
  return fast_int8_kernel(OpId::Add, "avx512_int8", ORKNN_X86_HAS("avx512bw"), "neon_int8");
}

TEST(QuantBinaryFast, BitExactAgainstReference) {
  const char* kFast = fast_binary_kernel();
  if (!kFast) GTEST_SKIP() << "no AVX-512BW on this CPU";
  const std::vector<std::vector<QuantParams>> params = {
      {qp(0.0235f, -17), qp(0.0117f, 41), qp(0.0391f, 3)},
      {qp(0.5f, 1), qp(0.5f, -1), qp(1.f, 0)},
      {qp(0.5f, 127), qp(0.25f, -128), qp(0.001f, -128)},  // mostly saturated
      {qp(1e-3f, 5), qp(7.f, -9), qp(1e3f, 11)},           // Ma tiny, Mb small
      {qp(3e38f, 0), qp(1e-38f, 3), qp(1e-5f, -2)},         // Ma = inf: NaN and +-inf sums
  };
  uint32_t seed = 100;
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul}) {
    for (const auto& p : params) {
      for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{64}, int64_t{1000}, int64_t{4099}}) {
        const Shape s = {n};
        const TensorData a = q8(s, random_i8(static_cast<size_t>(n), seed++), p[0]);
        const TensorData b = q8(s, random_i8(static_cast<size_t>(n), seed++), p[1]);
        OpResult fast = run_q(op, a, b, p[2], "");
        OpResult ref_r = run_q(op, a, b, p[2], "ref");
        ASSERT_OK(fast.status);
        ASSERT_OK(ref_r.status);
        EXPECT_EQ(fast.kernel_name, kFast);
        EXPECT_EQ(ref_r.kernel_name, "ref_int8");
        ASSERT_EQ(out_i8(fast), out_i8(ref_r)) << op_name(op) << " n=" << n << " scale " << p[0].scale[0];
      }
    }
  }
}

TEST(QuantBinaryFast, AllCodePairsAndShapes) {
  const char* kFast = fast_binary_kernel();
  if (!kFast) GTEST_SKIP() << "no AVX-512BW on this CPU";
  std::vector<int8_t> va, vb;
  for (int a = -128; a < 128; ++a)
    for (int b = -128; b < 128; ++b) {
      va.push_back(static_cast<int8_t>(a));
      vb.push_back(static_cast<int8_t>(b));
    }
  const QuantParams qa = qp(0.0235f, -17), qb = qp(0.0117f, 41), qy = qp(0.0391f, 3);
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul}) {
    OpResult fast = run_q(op, q8({4, 128, 128}, va, qa), q8({4, 128, 128}, vb, qb, true), qy, "");
    ASSERT_OK(fast.status);
    EXPECT_EQ(fast.kernel_name, kFast);
    const std::vector<int8_t> got = out_i8(fast);
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != expect_binary(op, va[i], vb[i], qa, qb, qy)) ++bad;
    EXPECT_EQ(bad, 0u) << op_name(op);
    // Broadcasting goes to the reference kernel.
    OpResult bc = run_q(op, q8({2, 3}, random_i8(6, 9), qa), q8({3}, random_i8(3, 10), qb), qy, "");
    ASSERT_OK(bc.status);
    EXPECT_EQ(bc.kernel_name, "ref_int8");
  }
}

TEST(QuantBinaryFast, BlockBroadcastsBitExactAgainstReference) {
  const char* kFast = fast_binary_kernel();
  if (!kFast) GTEST_SKIP() << "no AVX-512BW on this CPU";
  struct Case {
    Shape a, b;
  };
  const Case cases[] = {{{1, 40, 28, 28}, {1, 40, 1, 1}},  // squeeze-and-excitation scale
                        {{1, 16, 1, 1}, {1, 16, 5, 5}},    // broadcast input first
                        {{2, 5, 7, 9}, {2, 5, 1, 1}},      // batch 2
                        {{1, 6, 5, 19}, {6, 1, 1}},        // fewer dims
                        {{3, 4, 17}, {}},                  // scalar
                        {{1, 3, 300, 300}, {1, 3, 1, 1}},  // few large blocks, split across threads
                        {{1, 64, 40, 40}, {1, 64, 1, 1}}}; // many blocks across threads
  const QuantParams qa = qp(0.0235f, -17), qb = qp(0.0117f, 41), qy = qp(0.0391f, 3);
  uint32_t seed = 500;
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul})
    for (const Case& c : cases) {
      const TensorData a = q8(c.a, random_i8(static_cast<size_t>(shape_numel(c.a)), seed++), qa);
      const TensorData b = q8(c.b, random_i8(static_cast<size_t>(shape_numel(c.b)), seed++), qb);
      const Shape out = c.a.size() >= c.b.size() && shape_numel(c.a) >= shape_numel(c.b) ? c.a : c.b;
      const std::vector<int8_t> want = expect_broadcast(op, a, b, qy, out);
      for (int threads : {1, 2}) {
        OpResult fast = run_op(op, Attrs(), {a, b}, 1, kFast, threads, {qy});
        ASSERT_OK(fast.status);
        ASSERT_EQ(fast.kernel_name, kFast);
        ASSERT_EQ(fast.outputs.at(0).shape, out);
        EXPECT_EQ(out_i8(fast), want) << op_name(op) << " threads=" << threads << " a " << c.a.size() << "-D";
      }
    }
}

// The reference kernel takes channels-last activations when both operands have the output's shape
// (element-wise over the bytes; CPUs without AVX-512 run residual Adds on it), and keeps broadcasts
// NCHW; either way the result is the NCHW run's.
TEST(QuantBinaryRef, SameShapeRunsNhwc) {
  const QuantParams qa = qp(0.0235f, -17), qb = qp(0.0117f, 41), qy = qp(0.0391f, 3);
  uint32_t seed = 700;
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul})
    for (const Shape& sb : {Shape{2, 24, 7, 9}, Shape{2, 24, 1, 1}}) {
      const TensorData a = q8({2, 24, 7, 9}, random_i8(2 * 24 * 7 * 9, seed++), qa);
      const TensorData b = q8(sb, random_i8(static_cast<size_t>(shape_numel(sb)), seed++), qb);
      OpResult nchw = run_q(op, a, b, qy, "ref");
      ASSERT_OK(nchw.status);
      int blocked = -1;
      OpResult r = run_op_blocked(op, Attrs(), {a, b}, "ref_int8", 1, &blocked, {qy});
      ASSERT_OK(r.status);
      EXPECT_EQ(blocked, sb == a.shape ? 3 : 0) << op_name(op);
      EXPECT_EQ(out_i8(r), out_i8(nchw)) << op_name(op);
    }
}

// Channels-last INT8 activations (the runtime's blocked layout): the kernel takes them when each
// operand is an activation of the output's shape (element i from element i), a value per image or
// less (a scalar), or a value per (image, channel) (rows of C elements in NHWC), constant or not;
// the result is the reference's. A constant operand of the output's shape, or one that varies
// along H, keeps the node NCHW.
TEST(QuantBinaryFast, Nhwc) {
  const char* kFast = fast_binary_kernel();
  if (!kFast) GTEST_SKIP() << "no AVX-512BW on this CPU";
  const QuantParams qa = qp(0.0235f, -17), qb = qp(0.0117f, 41), qy = qp(0.0391f, 3);
  struct Case {
    Shape a, b;
    bool b_const;
    int blocked;  // tensors the runtime would keep NHWC
  };
  const Case cases[] = {
      {{2, 24, 7, 9}, {2, 24, 7, 9}, false, 3},   // two activations
      {{2, 24, 7, 9}, {2, 24, 1, 1}, false, 3},   // per (image, channel): [N,C,1,1] has NHWC's bytes
      {{1, 24, 7, 9}, {1, 24, 1, 1}, true, 2},    // a constant per-channel operand
      {{2, 24, 1, 1}, {2, 24, 7, 9}, false, 3},   // broadcast operand first
      {{1, 70, 40, 40}, {1, 70, 1, 1}, false, 3}, // rows split over the threads, C off 16
      {{2, 24, 7, 9}, {2, 1, 1, 1}, false, 3},    // per image
      {{2, 24, 7, 9}, {1}, true, 2},              // constant scalar
      {{2, 24, 7, 9}, {2, 24, 7, 9}, true, 0},    // constant of the output's shape: NCHW bytes
      {{2, 24, 7, 9}, {2, 24, 7, 1}, false, 0},   // varies along H
  };
  uint32_t seed = 900;
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul})
    for (const Case& c : cases) {
      const TensorData a = q8(c.a, random_i8(static_cast<size_t>(shape_numel(c.a)), seed++), qa);
      const TensorData b = q8(c.b, random_i8(static_cast<size_t>(shape_numel(c.b)), seed++), qb, c.b_const);
      OpResult ref_r = run_q(op, a, b, qy, "ref");
      ASSERT_OK(ref_r.status);
      for (int threads : {1, 2}) {
        int blocked = -1;
        OpResult r = run_op_blocked(op, Attrs(), {a, b}, kFast, threads, &blocked, {qy});
        ASSERT_OK(r.status);
        EXPECT_EQ(blocked, c.blocked) << op_name(op) << " b " << c.b.size() << "-D, " << shape_numel(c.b);
        EXPECT_EQ(out_i8(r), out_i8(ref_r)) << op_name(op) << " threads=" << threads << " b " << shape_numel(c.b);
      }
    }
}

}  // namespace
}  // namespace orknn::test
