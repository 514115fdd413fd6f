// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: parameter matrices against a naive
// implementation written here (explicit padded grid with a real/pad mask), ONNX documentation
// examples, hand-computed ceil_mode/count_include_pad cases, normalisation and errors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/int8_test_helpers.h"
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

struct PoolCase {
  bool is_max = true;
  Shape x;  // N, C, spatial...
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool ceil_mode = false, count_include_pad = false;
  std::string label() const {
    return std::string(is_max ? "max" : "avg") + " x=" + shape_str(x) + " k=" + shape_str(kernel) +
           " s=" + shape_str(strides) + " d=" + shape_str(dilations) + " p=" + shape_str(pads) +
           " ceil=" + std::to_string(ceil_mode) + " cip=" + std::to_string(count_include_pad);
  }
};

// Window starts are counted in padded coordinates: floor mode keeps full windows; ceil mode
// keeps every start up to the last partial window, provided it starts before the end padding.
int64_t naive_out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil_mode) {
  const int64_t padded = in + pb + pe, eff = (k - 1) * d + 1;
  int64_t count = 0;
  for (int64_t p = 0;; p += s) {
    const bool full = p + eff <= padded;
    const bool partial_ok = ceil_mode && p + eff - padded < s && p < in + pb;
    if (!full && !partial_ok) break;
    ++count;
  }
  return count;
}

std::vector<double> naive_pool(const PoolCase& pc, const std::vector<float>& x, Shape* out_shape) {
  const size_t k = pc.x.size() - 2;
  Shape padded = {pc.x[0], pc.x[1]};
  for (size_t i = 0; i < k; ++i) padded.push_back(pc.x[2 + i] + pc.pads[i] + pc.pads[k + i]);
  // 1 = real element, 0 = padding.
  std::vector<double> value(static_cast<size_t>(shape_numel(padded)), 0.0);
  std::vector<int> real(value.size(), 0);
  for (int64_t i = 0; i < shape_numel(pc.x); ++i) {
    std::vector<int64_t> idx = unravel(i, pc.x);
    for (size_t d = 0; d < k; ++d) idx[2 + d] += pc.pads[d];
    const size_t p = static_cast<size_t>(ravel(idx, padded));
    value[p] = x[static_cast<size_t>(i)];
    real[p] = 1;
  }
  Shape os = {pc.x[0], pc.x[1]};
  for (size_t i = 0; i < k; ++i)
    os.push_back(naive_out_size(pc.x[2 + i], pc.kernel[i], pc.strides[i], pc.dilations[i], pc.pads[i], pc.pads[k + i],
                                pc.ceil_mode));
  *out_shape = os;
  const Shape taps(pc.kernel.begin(), pc.kernel.end());
  std::vector<double> y;
  for (int64_t o = 0; o < shape_numel(os); ++o) {
    std::vector<int64_t> oi = unravel(o, os);
    double best = -INFINITY, sum = 0;
    int reals = 0, present = 0;
    for (int64_t t = 0; t < shape_numel(taps); ++t) {
      std::vector<int64_t> ti = unravel(t, taps);
      std::vector<int64_t> pi = {oi[0], oi[1]};
      bool inside_grid = true;
      for (size_t d = 0; d < k; ++d) {
        const int64_t p = oi[2 + d] * pc.strides[d] + ti[d] * pc.dilations[d];
        inside_grid = inside_grid && p < padded[2 + d];
        pi.push_back(p);
      }
      if (!inside_grid) continue;  // beyond the end padding (ceil_mode)
      ++present;
      const size_t p = static_cast<size_t>(ravel(pi, padded));
      if (!real[p]) continue;
      ++reals;
      sum += value[p];
      best = std::max(best, value[p]);
    }
    y.push_back(pc.is_max ? best : sum / (pc.count_include_pad ? present : reals));
  }
  return y;
}

Attrs pool_attrs(const PoolCase& pc) {
  Attrs a;
  a.set_ints("kernel_shape", pc.kernel);
  a.set_ints("strides", pc.strides);
  a.set_ints("pads", pc.pads);
  bool dilated = false;
  for (int64_t d : pc.dilations) dilated = dilated || d != 1;
  if (dilated) a.set_ints("dilations", pc.dilations);
  if (pc.ceil_mode) a.set_int("ceil_mode", 1);
  if (pc.count_include_pad) a.set_int("count_include_pad", 1);
  return a;
}

void run_pool_case(const PoolCase& pc, uint32_t seed) {
  SCOPED_TRACE(pc.label());
  std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(pc.x)), seed, -2.f, 2.f);
  Shape want_shape;
  std::vector<double> want = naive_pool(pc, x, &want_shape);
  OpResult r =
      run_op(pc.is_max ? OpId::MaxPool : OpId::AveragePool, pool_attrs(pc), {TensorData::f32(pc.x, x)}, 1, "ref");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.outputs[0].shape, want_shape);
  expect_close(r.outputs[0].as<float>(), want, 1e-6, "pool");
}

TEST(PoolRef, ParameterMatrix) {
  uint32_t seed = 3;
  int cases = 0;
  for (bool is_max : {true, false}) {
    for (size_t rank : {1u, 2u, 3u}) {
      for (int64_t kernel : {2, 3}) {
        for (int64_t stride : {1, 2, 3}) {
          for (int64_t dilation : {1, 2}) {
            for (int pad_kind = 0; pad_kind < 3; ++pad_kind) {  // none, symmetric 1, asymmetric (0, k-1)
              for (bool ceil_mode : {false, true}) {
                PoolCase pc;
                pc.is_max = is_max;
                pc.x = {seed % 2 ? 2 : 1, 3};
                for (size_t i = 0; i < rank; ++i) {
                  pc.x.push_back(rank == 3 ? 5 + static_cast<int64_t>(i) : 7 + static_cast<int64_t>(i));
                  pc.kernel.push_back(i == 0 ? kernel : 2);
                  pc.strides.push_back(i + 1 == rank ? stride : 1 + static_cast<int64_t>(i % 2));
                  pc.dilations.push_back(i == 0 ? dilation : 1);
                }
                pc.pads.assign(2 * rank, 0);
                for (size_t i = 0; i < rank; ++i) {
                  if (pad_kind == 1) pc.pads[i] = pc.pads[rank + i] = 1;
                  if (pad_kind == 2) pc.pads[rank + i] = pc.kernel[i] - 1;
                }
                pc.ceil_mode = ceil_mode;
                pc.count_include_pad = !is_max && seed % 3 == 0;
                run_pool_case(pc, seed++);
                ++cases;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 2 * 3 * 2 * 3 * 2);
}

// The x86 separable MaxPool (1-D and 3-D windows; float, and INT8 keeping its parameters) against
// the reference, bit for bit: a
// parameter matrix (kernels 1-5, strides 1-4, dilations, pads, ceil mode), LPRNet's channel-
// subsampling MaxPool3d, a window taller than 64 rows; the data hold -0/+0 ties, NaN and -inf
// (neither wins, as in the reference), INT8 random codes; 1 and 2 threads, with the kernel the
// registry picks.
TEST(MaxPoolX86, MatchesReferenceBitExactly) {
  const std::string kernel = "x86_maxpool_nd_f32", kernel_q8 = "x86_maxpool_nd_int8";
  if (!kernel_registered(OpId::MaxPool, kernel)) GTEST_SKIP() << kernel << " not built";
  std::vector<PoolCase> cases;
  for (size_t rank : {1u, 3u})
    for (int64_t k : {1, 2, 3, 5})
      for (int64_t s : {1, 2, 3, 4})
        for (int64_t d : {1, 2})
          for (int pad_kind = 0; pad_kind < 3; ++pad_kind)
            for (bool ceil_mode : {false, true}) {
              PoolCase pc;
              pc.x = {1, 2};
              for (size_t i = 0; i < rank; ++i) {
                pc.x.push_back(i + 1 == rank ? 37 : 6 + static_cast<int64_t>(i));
                pc.kernel.push_back(i + 1 == rank ? k : 2 + static_cast<int64_t>(i));
                pc.strides.push_back(i + 1 == rank ? s : 1 + static_cast<int64_t>(i));
                pc.dilations.push_back(i == 1 ? d : 1);
              }
              pc.dilations.back() = d;
              pc.pads.assign(2 * rank, 0);
              for (size_t i = 0; i < rank; ++i) {
                if (pad_kind == 1) pc.pads[i] = pc.pads[rank + i] = std::min<int64_t>(1, pc.kernel[i] - 1);
                if (pad_kind == 2) pc.pads[rank + i] = pc.kernel[i] - 1;
              }
              pc.ceil_mode = ceil_mode;
              cases.push_back(pc);
            }
  for (int64_t sc : {1, 2, 4}) {  // LPRNet: [1, 1, C, H, W], windows (1, 3, 3), strides (sc, 1, sw)
    PoolCase pc;
    pc.x = {1, 1, 64 * sc, 22, 92};
    pc.kernel = {1, 3, 3};
    pc.strides = {sc, 1, sc == 1 ? 1 : 2};
    pc.dilations = {1, 1, 1};
    pc.pads.assign(6, 0);
    cases.push_back(pc);
  }
  PoolCase tall;
  tall.x = {2, 3, 2, 80, 9};
  tall.kernel = {2, 70, 2};
  tall.strides = {1, 3, 1};
  tall.dilations = {1, 1, 1};
  tall.pads = {1, 2, 0, 0, 1, 1};
  cases.push_back(tall);
  uint32_t seed = 41;
  size_t compared = 0;
  for (const PoolCase& pc : cases) {
    // Coarse values (many ties), signed zeros, some NaN and -inf.
    std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(pc.x)), seed++, -3.f, 3.f);
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = std::round(x[i]);
      if (x[i] == 0.f && i % 2) x[i] = -0.f;
      if (i % 97 == 5) x[i] = std::numeric_limits<float>::quiet_NaN();
      if (i % 89 == 7) x[i] = -std::numeric_limits<float>::infinity();
    }
    const TensorData in = TensorData::f32(pc.x, x);
    const OpResult want = run_op(OpId::MaxPool, pool_attrs(pc), {in}, 1, "ref");
    if (!want.status.ok()) continue;  // a geometry infer refuses (ceil mode past the padding)
    ++compared;
    for (int threads : {1, 2}) {
      SCOPED_TRACE(pc.label() + " threads " + std::to_string(threads));
      const OpResult r = run_op(OpId::MaxPool, pool_attrs(pc), {in}, 1, "", threads);
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      EXPECT_EQ(r.kernel_name, kernel);
      EXPECT_EQ(r.outputs[0].shape, want.outputs[0].shape);
      EXPECT_EQ(r.outputs[0].bytes, want.outputs[0].bytes);
    }
    const QuantParams q = q8t::qp(0.05f, 3);
    const TensorData qin = q8t::q8(pc.x, q8t::random_i8(static_cast<size_t>(shape_numel(pc.x)), seed++), q);
    const OpResult want_q8 = run_op(OpId::MaxPool, pool_attrs(pc), {qin}, 1, "ref_int8", 1, {q});
    ASSERT_TRUE(want_q8.status.ok()) << want_q8.status.message();
    for (int threads : {1, 2}) {
      SCOPED_TRACE(pc.label() + " int8 threads " + std::to_string(threads));
      const OpResult r = run_op(OpId::MaxPool, pool_attrs(pc), {qin}, 1, "", threads, {q});
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      EXPECT_EQ(r.kernel_name, kernel_q8);
      EXPECT_EQ(r.outputs[0].bytes, want_q8.outputs[0].bytes);
    }
  }
  EXPECT_GT(compared, cases.size() * 3 / 4);
}

TEST(PoolRef, CountIncludePadBothWays) {
  for (bool cip : {false, true}) {
    for (bool ceil_mode : {false, true}) {
      PoolCase pc;
      pc.is_max = false;
      pc.x = {2, 2, 6, 5};
      pc.kernel = {3, 2};
      pc.strides = {2, 2};
      pc.dilations = {1, 1};
      pc.pads = {1, 0, 2, 1};
      pc.ceil_mode = ceil_mode;
      pc.count_include_pad = cip;
      run_pool_case(pc, 42);
    }
  }
}

TEST(PoolRef, AutoPad) {
  // SAME_UPPER/LOWER: out = ceil(in / s), padding split with the odd pixel at the end/beginning.
  struct Case {
    std::string mode;
    int64_t in, k, s;
    int64_t pb, pe;
  };
  const Case cases[] = {{"SAME_UPPER", 5, 2, 1, 0, 1}, {"SAME_LOWER", 5, 2, 1, 1, 0}, {"SAME_UPPER", 7, 3, 2, 1, 1},
                        {"SAME_UPPER", 6, 3, 2, 0, 1}, {"SAME_LOWER", 6, 3, 2, 1, 0}, {"VALID", 7, 3, 2, 0, 0},
                        {"SAME_UPPER", 6, 1, 4, 0, 0}};
  uint32_t seed = 9;
  for (const Case& c : cases) {
    for (bool is_max : {true, false}) {
      PoolCase pc;
      pc.is_max = is_max;
      pc.x = {1, 2, c.in, 4};
      pc.kernel = {c.k, 1};
      pc.strides = {c.s, 1};
      pc.dilations = {1, 1};
      pc.pads = {c.pb, 0, c.pe, 0};
      std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(pc.x)), seed++);
      Shape want_shape;
      std::vector<double> want = naive_pool(pc, x, &want_shape);
      Attrs a;
      a.set_ints("kernel_shape", pc.kernel);
      a.set_ints("strides", pc.strides);
      a.set_string("auto_pad", c.mode);
      a.set_int("ceil_mode", 1);  // ignored with auto_pad
      SCOPED_TRACE(c.mode + " in=" + std::to_string(c.in) + " k=" + std::to_string(c.k) + " s=" + std::to_string(c.s));
      OpResult r = run_op(is_max ? OpId::MaxPool : OpId::AveragePool, a, {TensorData::f32(pc.x, x)}, 1);
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      ASSERT_EQ(r.outputs[0].shape, want_shape);
      expect_close(r.outputs[0].as<float>(), want, 1e-6, "auto_pad");
    }
  }
}

TEST(PoolRef, OnnxExamples) {
  // test_maxpool_2d_ceil / test_averagepool_2d_ceil: 4x4 of 1..16, kernel 3, stride 2, ceil_mode.
  Attrs a;
  a.set_ints("kernel_shape", {3, 3});
  a.set_ints("strides", {2, 2});
  a.set_int("ceil_mode", 1);
  OpResult r = run_op(OpId::MaxPool, a, {TensorData::f32({1, 1, 4, 4}, iota_f(16, 1.f))}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{11, 12, 15, 16}));
  r = run_op(OpId::AveragePool, a, {TensorData::f32({1, 1, 4, 4}, iota_f(16, 1.f))}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{6, 7.5f, 12, 13.5f}));
  // test_maxpool_2d_dilations: kernel 2, dilation 2.
  Attrs d;
  d.set_ints("kernel_shape", {2, 2});
  d.set_ints("dilations", {2, 2});
  r = run_op(OpId::MaxPool, d, {TensorData::f32({1, 1, 4, 4}, iota_f(16, 1.f))}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{11, 12, 15, 16}));
}

TEST(PoolRef, HandComputedPadsAndCeil) {
  // 3x3 of 1..9, kernel 3, pads 1: top-left window holds 1,2,4,5 (sum 12).
  Attrs a;
  a.set_ints("kernel_shape", {3, 3});
  a.set_ints("pads", {1, 1, 1, 1});
  OpResult r = run_op(OpId::AveragePool, a, {TensorData::f32({1, 1, 3, 3}, iota_f(9, 1.f))}, 1);
  ASSERT_TRUE(r.status.ok());
  EXPECT_FLOAT_EQ(r.outputs[0].as<float>()[0], 3.f);
  a.set_int("count_include_pad", 1);
  r = run_op(OpId::AveragePool, a, {TensorData::f32({1, 1, 3, 3}, iota_f(9, 1.f))}, 1);
  ASSERT_TRUE(r.status.ok());
  EXPECT_FLOAT_EQ(r.outputs[0].as<float>()[0], 12.f / 9.f);
  EXPECT_FLOAT_EQ(r.outputs[0].as<float>()[4], 5.f);

  // 1-D [1..5], kernel 2, stride 2, pads 1/1, ceil_mode: a 4th window would start in the end
  // padding and is dropped, so 3 outputs.
  Attrs c;
  c.set_ints("kernel_shape", {2});
  c.set_ints("strides", {2});
  c.set_ints("pads", {1, 1});
  c.set_int("ceil_mode", 1);
  r = run_op(OpId::MaxPool, c, {TensorData::f32({1, 1, 5}, iota_f(5, 1.f))}, 1);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 3, 5}));
  r = run_op(OpId::AveragePool, c, {TensorData::f32({1, 1, 5}, iota_f(5, 1.f))}, 1);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2.5f, 4.5f}));
  c.set_int("count_include_pad", 1);
  r = run_op(OpId::AveragePool, c, {TensorData::f32({1, 1, 5}, iota_f(5, 1.f))}, 1);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0.5f, 2.5f, 4.5f}));

  // No padding, ceil_mode: the last window [4, 5] is partial; position 5 is beyond the input
  // and beyond the (empty) end padding, so it never counts.
  Attrs e;
  e.set_ints("kernel_shape", {2});
  e.set_ints("strides", {2});
  e.set_int("ceil_mode", 1);
  e.set_int("count_include_pad", 1);
  r = run_op(OpId::AveragePool, e, {TensorData::f32({1, 1, 5}, iota_f(5, 1.f))}, 1);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1.5f, 3.5f, 5.f}));
}

TEST(PoolRef, GlobalPools) {
  for (const Shape& s : {Shape{2, 3, 5}, Shape{2, 3, 4, 5}, Shape{1, 2, 3, 2, 4}, Shape{3, 1, 1, 1}}) {
    SCOPED_TRACE(shape_str(s));
    std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(s)), 11);
    const int64_t planes = s[0] * s[1], len = shape_numel(s) / planes;
    std::vector<double> mean, max;
    for (int64_t p = 0; p < planes; ++p) {
      double sum = 0, best = -INFINITY;
      for (int64_t i = 0; i < len; ++i) {
        sum += x[static_cast<size_t>(p * len + i)];
        best = std::max<double>(best, x[static_cast<size_t>(p * len + i)]);
      }
      mean.push_back(sum / static_cast<double>(len));
      max.push_back(best);
    }
    Shape want_shape = s;
    for (size_t i = 2; i < s.size(); ++i) want_shape[i] = 1;
    OpResult r = run_op(OpId::GlobalAveragePool, Attrs(), {TensorData::f32(s, x)}, 1);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.outputs[0].shape, want_shape);
    expect_close(r.outputs[0].as<float>(), mean, 1e-6, "GlobalAveragePool");
    r = run_op(OpId::GlobalMaxPool, Attrs(), {TensorData::f32(s, x)}, 1);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.outputs[0].shape, want_shape);
    expect_close(r.outputs[0].as<float>(), max, 0, "GlobalMaxPool");
  }
}

// ---------------------------------------------------------------- infer

TEST(PoolInfer, NormalisesAndIsIdempotent) {
  Attrs a;
  a.set_ints("kernel_shape", {3, 2});
  a.set_ints("strides", {2, 2});
  a.set_string("auto_pad", "SAME_LOWER");
  OneNode o = make_node(OpId::AveragePool, {{{1, 2, 8, 5}, DType::kF32}}, a);
  ASSERT_TRUE(infer_AveragePool(o.g, o.n).ok());
  // H: out 4, total 3*2+3-8 = 1 -> begin; W: out 3, total 2*2+2-5 = 1 -> begin.
  EXPECT_EQ(o.n.attrs.get_ints("pads"), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(o.n.attrs.get_string("auto_pad", ""), "NOTSET");
  EXPECT_EQ(o.n.attrs.get_int("ceil_mode", -1), 0);
  EXPECT_EQ(o.n.attrs.get_int("count_include_pad", -1), 0);
  EXPECT_EQ(o.n.attrs.get_ints("dilations"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(o.g.tensor(o.n.outputs[0]).shape, (Shape{1, 2, 4, 3}));
  expect_reinfer_unchanged(o.g, o.n);

  // MaxPool with an absent Indices output is fine.
  Attrs m;
  m.set_ints("kernel_shape", {2});
  OneNode mp = make_node(OpId::MaxPool, {{{1, 1, 4}, DType::kF32}}, m, 1);
  mp.n.outputs.push_back(-1);
  EXPECT_TRUE(infer_MaxPool(mp.g, mp.n).ok());
}

TEST(PoolInfer, Errors) {
  const DType f = DType::kF32;
  Attrs k2;
  k2.set_ints("kernel_shape", {2, 2});
  expect_infer_error(OpId::MaxPool, {{{1, 1, 4, 4}, f}}, k2, "Indices", 2);
  expect_infer_error(OpId::MaxPool, {{{1, 1, 4, 4}, f}}, Attrs(), "kernel_shape");
  Attrs k1;
  k1.set_ints("kernel_shape", {2});
  expect_infer_error(OpId::AveragePool, {{{1, 1, 4, 4}, f}}, k1, "kernel_shape");
  expect_infer_error(OpId::MaxPool, {{{1, 1, 4, 4}, DType::kI8}}, k2, "float32");
  expect_infer_error(OpId::MaxPool, {{{4, 4}, f}}, k2, "N x C");
  expect_infer_error(OpId::AveragePool, {{{1, 1, 2, 2, 2, 2}, f}}, k2, "N x C");
  expect_infer_error(OpId::AveragePool, {{{1, 1, 1, 4}, f}}, k2, "smaller than the dilated kernel");
  Attrs c = k2;
  c.set_int("ceil_mode", 2);
  expect_infer_error(OpId::MaxPool, {{{1, 1, 4, 4}, f}}, c, "ceil_mode");
  Attrs cip = k2;
  cip.set_int("count_include_pad", 3);
  expect_infer_error(OpId::AveragePool, {{{1, 1, 4, 4}, f}}, cip, "count_include_pad");
  Attrs ap = k2;
  ap.set_string("auto_pad", "FULL");
  expect_infer_error(OpId::MaxPool, {{{1, 1, 4, 4}, f}}, ap, "auto_pad");
  Attrs st = k2;
  st.set_ints("strides", {1, 0});
  expect_infer_error(OpId::MaxPool, {{{1, 1, 4, 4}, f}}, st, "strides");
  Attrs pd = k2;
  pd.set_ints("pads", {1, 1});
  expect_infer_error(OpId::MaxPool, {{{1, 1, 4, 4}, f}}, pd, "pads");
  expect_infer_error(OpId::GlobalAveragePool, {{{2, 3}, f}}, Attrs(), "N x C");
  expect_infer_error(OpId::GlobalMaxPool, {{{1, 2, 3, 3}, DType::kU8}}, Attrs(), "float32");
  expect_infer_error(OpId::GlobalMaxPool, {{{1, 2, 3, 3}, f}}, Attrs(), "output", 2);
}

}  // namespace
}  // namespace orknn::test
