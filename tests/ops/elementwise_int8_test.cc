// Quantized (INT8) unary ops through their 256-entry tables: every input code against
// table[q] = sat8(rne(f(float(q - zp_x) * s_x) / s_y) + zp_y) written out here (docs/numerics.md),
// for Clip, LeakyRelu, HardSigmoid, Relu, Sigmoid; NaN results give zp_y; the fast table kernels
// bit-exact against the reference; infer errors.
#include <cmath>
#include <functional>
#include <limits>

#include "ops/int8_test_helpers.h"
#include "ops/ref_test_helpers.h"
#include "testutil/cpu.h"

namespace orknn::test {
namespace {
using namespace reft;
using namespace q8t;

std::vector<int8_t> all_codes() {
  std::vector<int8_t> v;
  for (int q = -128; q < 128; ++q) v.push_back(static_cast<int8_t>(q));
  return v;
}

void expect_table(OpId op, const Attrs& attrs, std::vector<TensorData> extra, const QuantParams& qx,
                  const QuantParams& qy, const std::function<float(float)>& f) {
  std::vector<TensorData> ins = {q8({256}, all_codes(), qx)};
  for (auto& e : extra) ins.push_back(e);
  OpResult r = run_op(op, attrs, ins, 1, "ref", 1, {qy});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.kernel_name, "ref_int8");
  EXPECT_EQ(r.outputs[0].dtype, DType::kI8);
  EXPECT_TRUE(same_params(r.outputs[0].quant, qy));
  const std::vector<int8_t> got = out_i8(r);
  for (int q = -128; q < 128; ++q) {
    const float x = static_cast<float>(q - qx.zero_point[0]) * qx.scale[0];
    const float v = f(x) / qy.scale[0];
    EXPECT_EQ(got[static_cast<size_t>(q + 128)], rne_zp_naive(v, qy.zero_point[0])) << op_name(op) << " q=" << q;
  }
}

TEST(QuantUnaryRef, ClipLeakyReluHardSigmoidReluSigmoid) {
  const QuantParams qx = qp(0.05f, -7), qy = qp(0.027f, 11);
  expect_table(OpId::Clip, A(), {f32({}, {-1.f}, true), f32({}, {2.5f}, true)}, qx, qy,
               [](float x) { return x < -1.f ? -1.f : (x > 2.5f ? 2.5f : x); });
  expect_table(OpId::Clip, A(), {}, qx, qy, [](float x) { return x; });  // no bounds
  expect_table(OpId::LeakyRelu, A().f("alpha", 0.1f), {}, qx, qy, [](float x) { return x < 0.f ? 0.1f * x : x; });
  expect_table(OpId::HardSigmoid, A().f("alpha", 0.2f).f("beta", 0.5f), {}, qx, qp(0.004f, -128),
               [](float x) { return std::fmax(0.f, std::fmin(1.f, 0.2f * x + 0.5f)); });
  expect_table(OpId::Relu, A(), {}, qx, qx, [](float x) { return x < 0.f ? 0.f : x; });
  expect_table(OpId::Sigmoid, A(), {}, qx, qp(1.f / 256.f, -128), [](float x) { return 1.f / (1.f + std::exp(-x)); });
}

TEST(QuantUnaryRef, NanGivesZeroPoint) {
  // sqrt and log of negative reals are NaN: quantized to the zero point; log(0) = -inf saturates.
  const QuantParams qx = qp(0.1f, 0), qy = qp(0.05f, 9);
  expect_table(OpId::Sqrt, A(), {}, qx, qy, [](float x) { return std::sqrt(x); });
  expect_table(OpId::Log, A(), {}, qx, qy, [](float x) { return std::log(x); });
  OpResult r = run_op(OpId::Sqrt, A(), {q8({3}, {-5, 0, 40}, qx)}, 1, "ref", 1, {qy});
  ASSERT_OK(r.status);
  EXPECT_EQ(out_i8(r), (std::vector<int8_t>{9, 9, 49}));  // NaN -> 9; 0 -> 9; sqrt(4) / 0.05 = 40 -> 49
}

// The table kernel of the build and CPU (x86: avx512_int8_table, aarch64: neon_int8_table) against the
// reference, bit for bit (tests/ops/int8_test_helpers.h fast_int8_kernel).
TEST(QuantUnaryFast, TableIsBitExactWithReference) {
  const char* kFast = fast_int8_kernel(OpId::Sigmoid, "avx512_int8_table",
                                       ORKNN_X86_HAS("avx512bw") && ORKNN_X86_HAS("avx512vbmi"), "neon_int8_table");
  if (!kFast) GTEST_SKIP() << "no AVX-512 VBMI";
  struct Case {
    OpId op;
    Attrs attrs;
    float s_x, s_y;
    int32_t zp_x, zp_y;
  };
  Attrs leaky;
  leaky.set_float("alpha", 0.1f);
  Attrs clip;
  clip.set_float("min", -0.5f);
  clip.set_float("max", 1.5f);
  const Case cases[] = {{OpId::Sigmoid, Attrs(), 0.05f, 1.f / 256, 3, -128},
                        {OpId::Tanh, Attrs(), 0.03f, 1.f / 128, -7, 0},
                        {OpId::HardSwish, Attrs(), 0.04f, 0.035f, 11, -101},
                        {OpId::LeakyRelu, leaky, 0.02f, 0.02f, -1, -1},
                        {OpId::Clip, clip, 0.01f, 0.008f, 0, -64},
                        {OpId::Exp, Attrs(), 0.02f, 0.05f, 5, -128}};
  // Every code, several times over, then lengths around the 16- and 64-byte vectors (tails) and a
  // large tensor for 2 threads.
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(find_op(c.op)->name));
    QuantParams qy;
    qy.scale = {c.s_y};
    qy.zero_point = {c.zp_y};
    auto input = [&](const Shape& s, int64_t step) {  // codes (i * step + 11) mod 256
      std::vector<int8_t> x(static_cast<size_t>(shape_numel(s)));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((static_cast<int64_t>(i) * step + 11) & 0xFF);
      TensorData in = TensorData::of(s, x, DType::kI8);
      in.quant.scale = {c.s_x};
      in.quant.zero_point = {c.zp_x};
      return in;
    };
    for (int64_t n : {int64_t(1), int64_t(15), int64_t(17), int64_t(63), int64_t(64), int64_t(65), int64_t(256 * 5 + 17),
                      int64_t(300000)}) {
      const TensorData in = input(Shape{n}, 37);
      const OpResult ref = test::run_op(c.op, c.attrs, {in}, 1, "ref", 1, {qy});
      ASSERT_TRUE(ref.status.ok()) << ref.status.message();
      ASSERT_EQ(ref.kernel_name, "ref_int8");
      for (int threads : {1, 2}) {
        const OpResult got = test::run_op(c.op, c.attrs, {in}, 1, kFast, threads, {qy});
        ASSERT_TRUE(got.status.ok()) << got.status.message();
        ASSERT_EQ(got.kernel_name, kFast);
        EXPECT_EQ(got.outputs.at(0).as<int8_t>(), ref.outputs.at(0).as<int8_t>()) << "n=" << n << " threads=" << threads;
      }
    }
    // A 4-D activation channels-last (the runtime's blocked INT8 layout): the same map per element.
    const TensorData in = input(Shape{2, 5, 6, 7}, 53);
    const OpResult ref = test::run_op(c.op, c.attrs, {in}, 1, "ref", 1, {qy});
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    int blocked = 0;
    const OpResult got = test::run_op_blocked(c.op, c.attrs, {in}, kFast, 1, &blocked, {qy});
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(blocked, 2);
    EXPECT_EQ(got.outputs.at(0).as<int8_t>(), ref.outputs.at(0).as<int8_t>()) << "NHWC";
  }
}

TEST(QuantUnaryInfer, Errors) {
  const QuantParams q = qp(0.1f, 0);
  OpResult r = run_op(OpId::Sigmoid, A(), {q8({2}, {1, 2}, q)}, 1, "ref", 1, {});
  expect_invalid_model(r.status, "no quantization parameters", "Sigmoid_under_test");
  r = run_op(OpId::Relu, A(), {f32({2}, {1.f, 2.f})}, 1, "ref", 1, {q});
  expect_invalid_model(r.status, "is not a quantized int8/uint8 tensor", "Relu_under_test");
  r = run_op(OpId::Tanh, A(), {q8({2}, {1, 2}, q)}, 1, "ref", 1, {qp(0.1f, 200)});
  expect_invalid_model(r.status, "zero point 200", "Tanh_under_test");
}

}  // namespace
}  // namespace orknn::test
