// Conv and ConvTranspose: parameter matrices against naive implementations written here (explicit
// zero-padded input for Conv, scatter-then-crop for ConvTranspose, double accumulation), ONNX
// documentation examples, normalisation/idempotence of infer and error cases.
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

struct ConvCase {
  int64_t n = 1, c = 2, m = 2, group = 1;
  Shape in, kernel;
  std::vector<int64_t> strides, dilations, pads;  // pads: explicit begin/end for the reference
  std::string auto_pad = "NOTSET";                // when set, pads above are what it must resolve to
  bool bias = true;
  std::string act;
  float alpha = 0.f, beta = 0.f;
  std::string label() const {
    std::string s = "in=" + shape_str(in) + " k=" + shape_str(kernel) + " s=" + shape_str(strides) +
                    " d=" + shape_str(dilations) + " p=" + shape_str(pads) + " g=" + std::to_string(group) +
                    " n=" + std::to_string(n) + " c=" + std::to_string(c) + " m=" + std::to_string(m) +
                    " auto_pad=" + auto_pad + " bias=" + std::to_string(bias) + " act=" + act;
    return s;
  }
};

// Conv by materialising the zero-padded input, accumulating in double.
std::vector<double> naive_conv(const ConvCase& cc, const std::vector<float>& x, const std::vector<float>& w,
                               const std::vector<float>& b, Shape* out_shape) {
  const size_t k = cc.in.size();
  Shape padded = {cc.n, cc.c};
  for (size_t i = 0; i < k; ++i) padded.push_back(cc.in[i] + cc.pads[i] + cc.pads[k + i]);
  std::vector<double> xp(static_cast<size_t>(shape_numel(padded)), 0.0);
  Shape xs = {cc.n, cc.c};
  for (int64_t d : cc.in) xs.push_back(d);
  for (int64_t i = 0; i < shape_numel(xs); ++i) {
    std::vector<int64_t> idx = unravel(i, xs);
    for (size_t d = 0; d < k; ++d) idx[2 + d] += cc.pads[d];
    xp[static_cast<size_t>(ravel(idx, padded))] = x[static_cast<size_t>(i)];
  }
  Shape os = {cc.n, cc.m};
  for (size_t i = 0; i < k; ++i)
    os.push_back((padded[2 + i] - ((cc.kernel[i] - 1) * cc.dilations[i] + 1)) / cc.strides[i] + 1);
  *out_shape = os;
  Shape ws = {cc.m, cc.c / cc.group};
  for (int64_t d : cc.kernel) ws.push_back(d);
  Shape taps_shape(cc.kernel.begin(), cc.kernel.end());
  std::vector<double> y(static_cast<size_t>(shape_numel(os)));
  for (int64_t o = 0; o < shape_numel(os); ++o) {
    std::vector<int64_t> oi = unravel(o, os);
    const int64_t n = oi[0], m = oi[1];
    const int64_t cpg = cc.c / cc.group, g = m / (cc.m / cc.group);
    double acc = cc.bias ? b[static_cast<size_t>(m)] : 0.0;
    for (int64_t ic = 0; ic < cpg; ++ic) {
      for (int64_t t = 0; t < shape_numel(taps_shape); ++t) {
        std::vector<int64_t> ti = unravel(t, taps_shape);
        std::vector<int64_t> xi = {n, g * cpg + ic};
        for (size_t d = 0; d < k; ++d) xi.push_back(oi[2 + d] * cc.strides[d] + ti[d] * cc.dilations[d]);
        std::vector<int64_t> wi = {m, ic};
        wi.insert(wi.end(), ti.begin(), ti.end());
        acc += xp[static_cast<size_t>(ravel(xi, padded))] * w[static_cast<size_t>(ravel(wi, ws))];
      }
    }
    y[static_cast<size_t>(o)] = act_ref(cc.act, acc, cc.alpha, cc.beta);
  }
  return y;
}

Attrs conv_attrs(const ConvCase& cc, bool with_kernel_shape) {
  Attrs a;
  a.set_ints("strides", cc.strides);
  a.set_ints("dilations", cc.dilations);
  a.set_int("group", cc.group);
  if (with_kernel_shape) a.set_ints("kernel_shape", cc.kernel);
  if (cc.auto_pad == "NOTSET") {
    a.set_ints("pads", cc.pads);
  } else {
    a.set_string("auto_pad", cc.auto_pad);
  }
  if (!cc.act.empty()) {
    a.set_string("fused_act", cc.act);
    if (cc.act == "LeakyRelu" || cc.act == "Clip" || cc.act == "HardSigmoid") a.set_float("fused_alpha", cc.alpha);
    if (cc.act == "Clip" || cc.act == "HardSigmoid") a.set_float("fused_beta", cc.beta);
  }
  return a;
}

void run_conv_case(const ConvCase& cc, uint32_t seed) {
  SCOPED_TRACE(cc.label());
  Shape xs = {cc.n, cc.c};
  for (int64_t d : cc.in) xs.push_back(d);
  Shape ws = {cc.m, cc.c / cc.group};
  for (int64_t d : cc.kernel) ws.push_back(d);
  std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(xs)), seed);
  std::vector<float> w = random_floats(static_cast<size_t>(shape_numel(ws)), seed + 1);
  std::vector<float> b = random_floats(static_cast<size_t>(cc.m), seed + 2);
  Shape want_shape;
  std::vector<double> want = naive_conv(cc, x, w, b, &want_shape);
  std::vector<TensorData> in = {TensorData::f32(xs, x), TensorData::f32(ws, w, true)};
  if (cc.bias) in.push_back(TensorData::f32({cc.m}, b, true));
  OpResult r = run_op(OpId::Conv, conv_attrs(cc, seed % 2 == 0), in, 1, "ref");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.kernel_name, "ref");
  ASSERT_EQ(r.outputs[0].shape, want_shape);
  expect_close(r.outputs[0].as<float>(), want, 1e-5, "Conv");
}

TEST(ConvRef, ParameterMatrix) {
  uint32_t seed = 1;
  int cases = 0;
  const char* acts[] = {"", "Relu", "Clip", "LeakyRelu", "HardSwish", "HardSigmoid", "Sigmoid", "Silu"};
  for (size_t rank : {1u, 2u, 3u}) {
    for (int group_kind = 0; group_kind < 3; ++group_kind) {  // 1, 2, depthwise
      for (int64_t stride : {1, 2}) {
        for (int64_t dilation : {1, 2}) {
          for (int pad_kind = 0; pad_kind < 3; ++pad_kind) {  // none, symmetric, asymmetric
            ConvCase cc;
            cc.n = (seed % 3 == 0) ? 2 : 1;
            if (group_kind == 0) {
              cc.group = 1;
              cc.c = 3;
              cc.m = 4;
            }
            if (group_kind == 1) {
              cc.group = 2;
              cc.c = 4;
              cc.m = 6;
            }
            if (group_kind == 2) {
              cc.group = 4;
              cc.c = 4;
              cc.m = 8;
            }  // depthwise, multiplier 2
            const int64_t sizes[] = {7, 6};
            const int64_t sizes3[] = {5, 6, 6};
            const int64_t kernels[] = {3, 2, 3};
            for (size_t i = 0; i < rank; ++i) {
              cc.in.push_back(rank == 3 ? sizes3[i] : sizes[i]);
              cc.kernel.push_back(kernels[(i + seed) % 3]);
              cc.strides.push_back(i == 0 ? stride : 1);
              cc.dilations.push_back(i + 1 == rank ? dilation : 1);
            }
            cc.pads.assign(2 * rank, 0);
            for (size_t i = 0; i < rank; ++i) {
              if (pad_kind == 1) cc.pads[i] = cc.pads[rank + i] = 1;
              if (pad_kind == 2) {
                cc.pads[i] = static_cast<int64_t>(i % 2);
                cc.pads[rank + i] = 2;
              }
            }
            cc.bias = seed % 4 != 1;
            cc.act = acts[seed % std::size(acts)];
            if (cc.act == "Clip") {
              cc.alpha = -0.25f;
              cc.beta = 0.5f;
            }
            if (cc.act == "LeakyRelu") cc.alpha = 0.1f;
            if (cc.act == "HardSigmoid") {
              cc.alpha = 0.3f;
              cc.beta = 0.4f;
            }
            run_conv_case(cc, seed++);
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 3 * 2 * 2 * 3);
}

// SAME_UPPER / SAME_LOWER / VALID resolved into explicit pads (values computed by hand).
TEST(ConvRef, AutoPad) {
  struct Case {
    std::string mode;
    int64_t in, k, s, d;
    int64_t pb, pe;
  };
  const Case cases[] = {
      {"SAME_UPPER", 7, 3, 1, 1, 1, 1}, {"SAME_UPPER", 7, 4, 1, 1, 1, 2}, {"SAME_LOWER", 7, 4, 1, 1, 2, 1},
      {"SAME_UPPER", 7, 3, 2, 1, 1, 1}, {"SAME_UPPER", 8, 3, 2, 1, 0, 1}, {"SAME_LOWER", 8, 3, 2, 1, 1, 0},
      {"SAME_UPPER", 6, 3, 1, 2, 2, 2}, {"SAME_UPPER", 5, 1, 3, 1, 0, 0}, {"VALID", 7, 3, 2, 1, 0, 0},
  };
  uint32_t seed = 100;
  for (const Case& c : cases) {
    for (int64_t n : {1, 2}) {
      ConvCase cc;
      cc.n = n;
      cc.in = {c.in, 5};
      cc.kernel = {c.k, 3};
      cc.strides = {c.s, 1};
      cc.dilations = {c.d, 1};
      cc.auto_pad = c.mode;
      // Second dim: kernel 3 stride 1 -> SAME pads 1/1.
      const bool same = c.mode != "VALID";
      cc.pads = {c.pb, same ? 1 : 0, c.pe, same ? 1 : 0};
      run_conv_case(cc, seed++);
    }
  }
}

// ONNX documentation examples (test_basic_conv_with_padding, test_conv_with_strides_padding).
TEST(ConvRef, OnnxExamples) {
  std::vector<float> x25(25), x35(35);
  for (int i = 0; i < 25; ++i) x25[i] = static_cast<float>(i);
  for (int i = 0; i < 35; ++i) x35[i] = static_cast<float>(i);
  std::vector<float> ones(9, 1.f);
  Attrs a;
  a.set_ints("pads", {1, 1, 1, 1});
  OpResult r =
      run_op(OpId::Conv, a, {TensorData::f32({1, 1, 5, 5}, x25), TensorData::f32({1, 1, 3, 3}, ones, true)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const std::vector<float> padded = {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                     117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
  EXPECT_EQ(r.outputs[0].as<float>(), padded);

  Attrs b;
  r = run_op(OpId::Conv, b, {TensorData::f32({1, 1, 5, 5}, x25), TensorData::f32({1, 1, 3, 3}, ones, true)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].shape, (Shape{1, 1, 3, 3}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{54, 63, 72, 99, 108, 117, 144, 153, 162}));

  Attrs c;
  c.set_ints("pads", {1, 1, 1, 1});
  c.set_ints("strides", {2, 2});
  r = run_op(OpId::Conv, c, {TensorData::f32({1, 1, 7, 5}, x35), TensorData::f32({1, 1, 3, 3}, ones, true)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0].shape, (Shape{1, 1, 4, 3}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124}));
}

// Fused activation parameters default to the ONNX defaults of the fused op.
TEST(ConvRef, FusedActivationDefaults) {
  // 1x1 conv with weight 1: y = act(x).
  const std::vector<float> x = {-8.f, -1.f, 0.f, 0.5f, 3.f, 9.f};
  struct Case {
    const char* act;
    std::vector<double> want;
  };
  const Case cases[] = {
      {"Relu", {0, 0, 0, 0.5, 3, 9}},
      {"LeakyRelu", {-0.08, -0.01, 0, 0.5, 3, 9}},  // alpha 0.01
      {"Clip", {-8, -1, 0, 0.5, 3, 9}},             // -inf..inf
      {"HardSigmoid", {0, 0.3, 0.5, 0.6, 1, 1}},    // 0.2 x + 0.5
      {"HardSwish", {0, -1.0 / 3, 0, 0.5 * (0.5 / 6 + 0.5), 3, 9}},
      {"Silu", {-8 / (1 + std::exp(8.0)), -1 / (1 + std::exp(1.0)), 0, 0.5 / (1 + std::exp(-0.5)), 3 / (1 + std::exp(-3.0)),
                9 / (1 + std::exp(-9.0))}},  // x * sigmoid(x)
  };
  for (const Case& c : cases) {
    Attrs a;
    a.set_string("fused_act", c.act);
    OpResult r = run_op(OpId::Conv, a, {TensorData::f32({1, 1, 6}, x), TensorData::f32({1, 1, 1}, {1.f}, true)}, 1);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    expect_close(r.outputs[0].as<float>(), c.want, 1e-6, c.act);
  }
}

// ---------------------------------------------------------------- ConvTranspose

struct DeconvCase {
  int64_t n = 1, c = 2, m = 2, group = 1;
  Shape in, kernel;
  std::vector<int64_t> strides, dilations, pads, out_pad;  // the pads/output_padding the reference uses
  std::vector<int64_t> output_shape;                       // when set: given as attribute, pads not given
  std::string auto_pad = "NOTSET";
  bool bias = true;
  std::string act;
  std::string label() const {
    return "in=" + shape_str(in) + " k=" + shape_str(kernel) + " s=" + shape_str(strides) +
           " d=" + shape_str(dilations) + " p=" + shape_str(pads) + " op=" + shape_str(out_pad) +
           " os=" + shape_str(output_shape) + " g=" + std::to_string(group) + " n=" + std::to_string(n) +
           " auto_pad=" + auto_pad + " act=" + act;
  }
};

// Scatter every input element through every tap into the full (uncropped) output, then crop
// pads_begin and keep the requested size.
std::vector<double> naive_deconv(const DeconvCase& dc, const std::vector<float>& x, const std::vector<float>& w,
                                 const std::vector<float>& b, const Shape& out_spatial) {
  const size_t k = dc.in.size();
  Shape full = {dc.n, dc.m};
  for (size_t i = 0; i < k; ++i)
    full.push_back(dc.strides[i] * (dc.in[i] - 1) + (dc.kernel[i] - 1) * dc.dilations[i] + 1 + dc.out_pad[i]);
  std::vector<double> acc(static_cast<size_t>(shape_numel(full)), 0.0);
  Shape xs = {dc.n, dc.c};
  xs.insert(xs.end(), dc.in.begin(), dc.in.end());
  const int64_t mpg = dc.m / dc.group, cpg = dc.c / dc.group;
  Shape ws = {dc.c, mpg};
  ws.insert(ws.end(), dc.kernel.begin(), dc.kernel.end());
  const Shape taps(dc.kernel.begin(), dc.kernel.end());
  for (int64_t xi = 0; xi < shape_numel(xs); ++xi) {
    std::vector<int64_t> ix = unravel(xi, xs);
    const int64_t n = ix[0], c = ix[1], g = c / cpg;
    for (int64_t ml = 0; ml < mpg; ++ml) {
      for (int64_t t = 0; t < shape_numel(taps); ++t) {
        std::vector<int64_t> it = unravel(t, taps);
        std::vector<int64_t> io = {n, g * mpg + ml};
        for (size_t d = 0; d < k; ++d) io.push_back(ix[2 + d] * dc.strides[d] + it[d] * dc.dilations[d]);
        std::vector<int64_t> iw = {c, ml};
        iw.insert(iw.end(), it.begin(), it.end());
        acc[static_cast<size_t>(ravel(io, full))] +=
            x[static_cast<size_t>(xi)] * static_cast<double>(w[static_cast<size_t>(ravel(iw, ws))]);
      }
    }
  }
  Shape os = {dc.n, dc.m};
  os.insert(os.end(), out_spatial.begin(), out_spatial.end());
  std::vector<double> y(static_cast<size_t>(shape_numel(os)));
  for (int64_t o = 0; o < shape_numel(os); ++o) {
    std::vector<int64_t> io = unravel(o, os);
    bool inside = true;
    for (size_t d = 0; d < k; ++d) {
      io[2 + d] += dc.pads[d];
      inside = inside && io[2 + d] < full[2 + d];
    }
    double v = inside ? acc[static_cast<size_t>(ravel(io, full))] : 0.0;
    if (dc.bias) v += b[static_cast<size_t>(io[1])];
    y[static_cast<size_t>(o)] = act_ref(dc.act, v, 0.0, 6.0);
  }
  return y;
}

void run_deconv_case(const DeconvCase& dc, const Shape& want_spatial, uint32_t seed) {
  SCOPED_TRACE(dc.label());
  Shape xs = {dc.n, dc.c};
  xs.insert(xs.end(), dc.in.begin(), dc.in.end());
  Shape ws = {dc.c, dc.m / dc.group};
  ws.insert(ws.end(), dc.kernel.begin(), dc.kernel.end());
  std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(xs)), seed);
  std::vector<float> w = random_floats(static_cast<size_t>(shape_numel(ws)), seed + 1);
  std::vector<float> b = random_floats(static_cast<size_t>(dc.m), seed + 2);
  Attrs a;
  a.set_ints("strides", dc.strides);
  a.set_ints("dilations", dc.dilations);
  a.set_int("group", dc.group);
  if (!dc.output_shape.empty()) {
    a.set_ints("output_shape", dc.output_shape);
  } else if (dc.auto_pad == "NOTSET") {
    a.set_ints("pads", dc.pads);
  }
  if (dc.auto_pad != "NOTSET") a.set_string("auto_pad", dc.auto_pad);
  bool any_op = false;
  for (int64_t v : dc.out_pad) any_op = any_op || v != 0;
  if (any_op && dc.output_shape.empty()) a.set_ints("output_padding", dc.out_pad);
  if (!dc.act.empty()) {
    a.set_string("fused_act", dc.act);
    if (dc.act == "Clip") {
      a.set_float("fused_alpha", 0.f);
      a.set_float("fused_beta", 6.f);
    }
  }
  std::vector<TensorData> in = {TensorData::f32(xs, x), TensorData::f32(ws, w, true)};
  if (dc.bias) in.push_back(TensorData::f32({dc.m}, b, true));
  OpResult r = run_op(OpId::ConvTranspose, a, in, 1, "ref");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  Shape want_shape = {dc.n, dc.m};
  want_shape.insert(want_shape.end(), want_spatial.begin(), want_spatial.end());
  ASSERT_EQ(r.outputs[0].shape, want_shape);
  expect_close(r.outputs[0].as<float>(), naive_deconv(dc, x, w, b, want_spatial), 1e-5, "ConvTranspose");
}

// The residual input: y = act(conv(x) + B + R), the residual added before the activation.
// 1x1, two output channels of weights 2 and -1, bias 0.5 / 0, R = 1, Relu:
//   channel 0: relu(2x + 0.5 + 1), channel 1: relu(-x + 0 + 1).
TEST(ConvRef, ResidualAddedBeforeTheActivation) {
  const std::vector<float> x = {-2.f, 0.f, 1.f};
  Attrs relu;
  relu.set_string("fused_act", "Relu");
  OpResult r = run_op(OpId::Conv, relu,
                      {TensorData::f32({1, 1, 3}, x), TensorData::f32({2, 1, 1}, {2.f, -1.f}, true),
                       TensorData::f32({2}, {0.5f, 0.f}, true), TensorData::f32({1, 2, 3}, std::vector<float>(6, 1.f))},
                      1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_close(r.outputs[0].as<float>(), {0, 1.5, 3.5, 3, 1, 0}, 0, "conv + bias + residual, relu");
  // Without a bias (absent third input).
  OpResult nb = run_op(OpId::Conv, Attrs(),
                       {TensorData::f32({1, 1, 3}, x), TensorData::f32({1, 1, 1}, {3.f}, true), TensorData::none(),
                        TensorData::f32({1, 1, 3}, {10.f, 20.f, 30.f})},
                       1);
  ASSERT_TRUE(nb.status.ok()) << nb.status.message();
  expect_close(nb.outputs[0].as<float>(), {4, 20, 33}, 0, "conv + residual");
}

TEST(ConvTransposeRef, ParameterMatrix) {
  uint32_t seed = 500;
  const char* acts[] = {"", "Relu", "Clip"};
  for (size_t rank : {1u, 2u, 3u}) {
    for (int group_kind = 0; group_kind < 3; ++group_kind) {
      for (int64_t stride : {1, 2, 3}) {
        for (int64_t dilation : {1, 2}) {
          for (int pad_kind = 0; pad_kind < 3; ++pad_kind) {  // none, pads, pads + output_padding
            DeconvCase dc;
            dc.n = seed % 2 ? 2 : 1;
            if (group_kind == 0) {
              dc.group = 1;
              dc.c = 3;
              dc.m = 2;
            }
            if (group_kind == 1) {
              dc.group = 2;
              dc.c = 4;
              dc.m = 6;
            }
            if (group_kind == 2) {
              dc.group = 3;
              dc.c = 3;
              dc.m = 3;
            }  // depthwise
            Shape spatial;
            for (size_t i = 0; i < rank; ++i) {
              dc.in.push_back(rank == 3 ? 3 : 4 - static_cast<int64_t>(i));
              dc.kernel.push_back(i % 2 ? 2 : 3);
              dc.strides.push_back(i + 1 == rank ? stride : 1);
              dc.dilations.push_back(i == 0 ? dilation : 1);
            }
            dc.pads.assign(2 * rank, 0);
            dc.out_pad.assign(rank, 0);
            for (size_t i = 0; i < rank; ++i) {
              if (pad_kind >= 1) {
                dc.pads[i] = 1;
                dc.pads[rank + i] = static_cast<int64_t>(i % 2);
              }
              if (pad_kind == 2) dc.out_pad[i] = std::max(dc.strides[i], dc.dilations[i]) - 1;
            }
            for (size_t i = 0; i < rank; ++i)
              spatial.push_back(dc.strides[i] * (dc.in[i] - 1) + dc.out_pad[i] + (dc.kernel[i] - 1) * dc.dilations[i] +
                                1 - dc.pads[i] - dc.pads[rank + i]);
            dc.bias = seed % 3 != 0;
            dc.act = acts[seed % 3];
            run_deconv_case(dc, spatial, seed++);
          }
        }
      }
    }
  }
}

// output_shape and auto_pad: the pads follow the ONNX formulas, worked out by hand here.
TEST(ConvTransposeRef, OutputShapeAndAutoPad) {
  struct Case {
    int64_t in, k, s, d, out_pad;
    std::string auto_pad;
    int64_t output_shape;  // 0: not given
    int64_t pb, pe, extra_out_pad, want;
  };
  const Case cases[] = {
      // full = s*(in-1) + out_pad + (k-1)*d + 1
      {3, 3, 2, 1, 0, "NOTSET", 6, 1, 0, 0, 6},      // full 7, total 1 -> begin gets the odd one
      {3, 3, 2, 1, 0, "SAME_UPPER", 6, 0, 1, 0, 6},  // SAME_UPPER: odd one at the end
      {3, 3, 2, 1, 0, "SAME_LOWER", 6, 1, 0, 0, 6},
      {3, 3, 2, 1, 0, "NOTSET", 9, 0, 0, 2, 9},      // larger than full: extended at the end
      {3, 3, 2, 1, 0, "SAME_UPPER", 0, 0, 1, 0, 6},  // auto_pad alone: out = in * s
      {3, 3, 2, 1, 0, "SAME_LOWER", 0, 1, 0, 0, 6},
      {4, 4, 2, 1, 0, "SAME_UPPER", 0, 1, 1, 0, 8},
      {3, 1, 3, 1, 0, "SAME_UPPER", 0, 0, 0, 2, 9},  // k < s: full 7 < 9
      {3, 3, 1, 2, 0, "SAME_LOWER", 0, 2, 2, 0, 3},
      {3, 3, 2, 1, 0, "VALID", 0, 0, 0, 0, 7},
      {3, 3, 2, 1, 1, "NOTSET", 10, 0, 0, 2, 10},  // output_padding plus a larger output_shape
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    for (bool full_rank_output_shape : {false, true}) {
      DeconvCase dc;
      dc.n = 2;
      dc.c = 2;
      dc.m = 3;
      dc.in = {c.in, 2};
      dc.kernel = {c.k, 1};
      dc.strides = {c.s, 1};
      dc.dilations = {c.d, 1};
      dc.auto_pad = c.auto_pad;
      dc.out_pad = {c.out_pad, 0};
      if (c.output_shape) {
        dc.output_shape = {c.output_shape, 2};
        if (full_rank_output_shape) dc.output_shape.insert(dc.output_shape.begin(), {2, 3});
      }
      dc.pads = {c.pb, 0, c.pe, 0};
      // The reference scatters into the full output, which must include the extension.
      DeconvCase ref = dc;
      ref.out_pad[0] += c.extra_out_pad;
      SCOPED_TRACE("case in=" + std::to_string(c.in) + " k=" + std::to_string(c.k) + " " + c.auto_pad +
                   " os=" + std::to_string(c.output_shape));
      Shape xs = {dc.n, dc.c, c.in, 2};
      Shape ws = {dc.c, dc.m, c.k, 1};
      std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(xs)), seed);
      std::vector<float> w = random_floats(static_cast<size_t>(shape_numel(ws)), seed + 1);
      std::vector<float> b = random_floats(static_cast<size_t>(dc.m), seed + 2);
      ++seed;
      Attrs a;
      a.set_ints("strides", dc.strides);
      a.set_ints("dilations", dc.dilations);
      if (c.out_pad) a.set_ints("output_padding", dc.out_pad);
      if (!dc.output_shape.empty()) a.set_ints("output_shape", dc.output_shape);
      if (c.auto_pad != "NOTSET") a.set_string("auto_pad", c.auto_pad);
      OpResult r = run_op(OpId::ConvTranspose, a,
                          {TensorData::f32(xs, x), TensorData::f32(ws, w, true), TensorData::f32({dc.m}, b, true)}, 1);
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      ASSERT_EQ(r.outputs[0].shape, (Shape{2, 3, c.want, 2}));
      expect_close(r.outputs[0].as<float>(), naive_deconv(ref, x, w, b, {c.want, 2}), 1e-5, "ConvTranspose");
    }
  }
}

// ONNX documentation example test_convtranspose_pads.
TEST(ConvTransposeRef, OnnxExamplePads) {
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[i] = static_cast<float>(i);
  std::vector<float> w(18, 1.f);
  Attrs a;
  a.set_ints("strides", {3, 2});
  a.set_ints("pads", {1, 2, 1, 2});
  OpResult r =
      run_op(OpId::ConvTranspose, a, {TensorData::f32({1, 1, 3, 3}, x), TensorData::f32({1, 2, 3, 3}, w, true)}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.outputs[0].shape, (Shape{1, 2, 7, 3}));
  const std::vector<float> plane = {1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
  std::vector<float> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  EXPECT_EQ(r.outputs[0].as<float>(), want);
}

// ---------------------------------------------------------------- infer: normalisation, errors

TEST(ConvInfer, NormalisesAndIsIdempotent) {
  Attrs a;
  a.set_string("auto_pad", "SAME_LOWER");
  a.set_ints("strides", {2, 2});
  a.set_string("fused_act", "HardSigmoid");
  OneNode o = make_node(OpId::Conv, {{{1, 4, 8, 7}, DType::kF32}, {{6, 2, 3, 4}, DType::kF32}}, [&] {
    Attrs b = a;
    b.set_int("group", 2);
    return b;
  }());
  ASSERT_TRUE(infer(o).ok());
  const Attrs& n = o.n.attrs;
  EXPECT_EQ(n.get_ints("kernel_shape"), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(n.get_ints("dilations"), (std::vector<int64_t>{1, 1}));
  // H: out 4, total (4-1)*2+3-8 = 1 -> LOWER puts it first; W: out 4, total 3*2+4-7 = 3 -> 2/1.
  EXPECT_EQ(n.get_ints("pads"), (std::vector<int64_t>{1, 2, 0, 1}));
  EXPECT_EQ(n.get_string("auto_pad", ""), "NOTSET");
  EXPECT_FLOAT_EQ(n.get_float("fused_alpha", 0), 0.2f);
  EXPECT_FLOAT_EQ(n.get_float("fused_beta", 0), 0.5f);
  EXPECT_EQ(o.g.tensor(o.n.outputs[0]).shape, (Shape{1, 6, 4, 4}));
  expect_reinfer_unchanged(o.g, o.n);
}

TEST(ConvTransposeInfer, OutputShapeBecomesPadsAndIsIdempotent) {
  Attrs a;
  a.set_ints("strides", {2});
  a.set_ints("output_shape", {10});
  OneNode o = make_node(OpId::ConvTranspose, {{{1, 2, 4}, DType::kF32}, {{2, 3, 3}, DType::kF32}}, a);
  ASSERT_TRUE(infer(o).ok());
  // full = 2*3 + 3 = 9 < 10: no pads, one extra output_padding.
  EXPECT_FALSE(o.n.attrs.has("output_shape"));
  EXPECT_EQ(o.n.attrs.get_ints("pads"), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(o.n.attrs.get_ints("output_padding"), (std::vector<int64_t>{1}));
  EXPECT_EQ(o.g.tensor(o.n.outputs[0]).shape, (Shape{1, 3, 10}));
  expect_reinfer_unchanged(o.g, o.n);
}

TEST(ConvInfer, Errors) {
  const DType f = DType::kF32;
  Attrs none;
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}}, none, "inputs");
  expect_infer_error(OpId::Conv, {{{3, 5}, f}, {{2, 3}, f}}, none, "rank");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3}, f}}, none, "rank");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 2, 3, 3}, f}}, none, "channels");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, DType::kI8}, {{2, 3, 3, 3}, f}}, none, "float32");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, DType::kI64}}, none, "float32");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}, {{3}, f}}, none, "bias");
  expect_infer_error(OpId::Conv, {{{1, 3, 2, 2}, f}, {{2, 3, 3, 3}, f}}, none, "smaller than the dilated kernel");
  expect_infer_error(OpId::Conv, {{{1, 1, 2, 2, 2, 2}, f}, {{1, 1, 1, 1, 1, 1}, f}}, none, "spatial dims");
  Attrs a;
  a.set_int("group", 2);
  expect_infer_error(OpId::Conv, {{{1, 4, 5, 5}, f}, {{3, 2, 3, 3}, f}}, a, "divisible by group");
  Attrs bad_pad;
  bad_pad.set_string("auto_pad", "SAME");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}}, bad_pad, "auto_pad");
  Attrs ks;
  ks.set_ints("kernel_shape", {2, 2});
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}}, ks, "kernel_shape");
  Attrs st;
  st.set_ints("strides", {0, 1});
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}}, st, "strides");
  Attrs st3;
  st3.set_ints("strides", {1, 1, 1});
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}}, st3, "strides");
  Attrs neg;
  neg.set_ints("pads", {-1, 0, 0, 0});
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}}, neg, "pads");
  Attrs act;
  act.set_string("fused_act", "Softplus");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}}, act, "fused_act");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}}, none, "output", 2);
  // The residual (fourth input) must have the output's shape and be float32.
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}, {{2}, f}, {{1, 2, 5, 5}, f}}, none,
                     "residual R must have the output's shape [1,2,3,3]");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}, {{2}, f}, {{1, 2, 3, 3}, DType::kI8}}, none,
                     "float32");
  expect_infer_error(OpId::Conv, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}, {{2}, f}, {{1, 2, 3, 3}, f}, {{1}, f}}, none,
                     "inputs");
}

TEST(ConvTransposeInfer, Errors) {
  const DType f = DType::kF32;
  Attrs none;
  expect_infer_error(OpId::ConvTranspose, {{{1, 3, 5, 5}, f}}, none, "inputs");
  // No residual input on ConvTranspose.
  expect_infer_error(OpId::ConvTranspose, {{{1, 3, 5, 5}, f}, {{3, 2, 3, 3}, f}, {{2}, f}, {{1, 2, 7, 7}, f}}, none,
                     "inputs");
  expect_infer_error(OpId::ConvTranspose, {{{1, 3, 5, 5}, f}, {{2, 3, 3, 3}, f}}, none, "channels");
  expect_infer_error(OpId::ConvTranspose, {{{1, 3, 5, 5}, DType::kU8}, {{3, 2, 3, 3}, f}}, none, "float32");
  expect_infer_error(OpId::ConvTranspose, {{{1, 3, 5, 5}, f}, {{3, 2, 3, 3}, f}, {{3}, f}}, none, "bias");
  Attrs g;
  g.set_int("group", 2);
  expect_infer_error(OpId::ConvTranspose, {{{1, 3, 5, 5}, f}, {{3, 2, 3, 3}, f}}, g, "group");
  Attrs os;
  os.set_ints("output_shape", {5, 5, 5});
  expect_infer_error(OpId::ConvTranspose, {{{1, 3, 5, 5}, f}, {{3, 2, 3, 3}, f}}, os, "output_shape");
  Attrs big;
  big.set_ints("pads", {4, 4, 4, 4});
  expect_infer_error(OpId::ConvTranspose, {{{1, 3, 2, 2}, f}, {{3, 2, 3, 3}, f}}, big, "pads");
  Attrs op;
  op.set_ints("output_padding", {-1, 0});
  expect_infer_error(OpId::ConvTranspose, {{{1, 3, 2, 2}, f}, {{3, 2, 3, 3}, f}}, op, "output_padding");
}

}  // namespace
}  // namespace orknn::test
