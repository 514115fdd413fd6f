// LSTM, GRU and RNN: the parameter matrix (directions, layouts, every optional input, sequence_lens
// shorter than the sequence, clip, input_forget, linear_before_reset) and every activation, against
// a double-precision reference written here from the ONNX specification's equations; infer errors
// and normalisation.
#include <cmath>
#include <string>
#include <vector>

#include "ops/recurrent_test_util.h"
#include "ops/ref_test_helpers.h"

namespace orknn::test {
namespace {
using namespace reft;

struct Case {
  OpId op = OpId::LSTM;
  std::string direction = "forward";
  int64_t layout = 0;
  int64_t seq = 4, batch = 3, input = 3, hidden = 2;
  bool bias = false, lens = false, init_h = false, init_c = false, peephole = false;
  float clip = 0.f;  // 0: attribute absent
  int64_t input_forget = 0, linear_before_reset = 0;
  std::vector<std::string> acts;       // empty: attribute absent
  std::vector<float> alphas, betas;    // activation_alpha / activation_beta as given
};

std::string label(const Case& c) {
  std::string s = std::string(op_name(c.op)) + " " + c.direction + " layout=" + std::to_string(c.layout);
  if (c.bias) s += " B";
  if (c.lens) s += " sequence_lens";
  if (c.init_h) s += " initial_h";
  if (c.init_c) s += " initial_c";
  if (c.peephole) s += " P";
  if (c.clip > 0) s += " clip=" + std::to_string(c.clip);
  if (c.input_forget) s += " input_forget";
  if (c.linear_before_reset) s += " linear_before_reset";
  for (const std::string& a : c.acts) s += " " + a;
  return s;
}

// The spec's activation list (alpha/beta as resolved by params_of).
double activation(const std::string& name, double x, double alpha, double beta) {
  if (name == "Relu") return std::max(0.0, x);
  if (name == "Tanh") return std::tanh(x);
  if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (name == "Affine") return alpha * x + beta;
  if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
  if (name == "ThresholdedRelu") return x > alpha ? x : 0.0;
  if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
  if (name == "HardSigmoid") return std::min(std::max(alpha * x + beta, 0.0), 1.0);
  if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
  if (name == "Softsign") return x / (1.0 + std::fabs(x));
  if (name == "Softplus") return std::log(1.0 + std::exp(x));
  ADD_FAILURE() << "no reference for activation " << name;
  return 0;
}

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
  double operator()(double x) const { return activation(name, x, alpha, beta); }
};

// The alpha/beta lists are consumed in order by the activations that take each parameter; the
// ONNX operators' defaults fill in the rest.
std::vector<Act> params_of(const std::vector<std::string>& names, const std::vector<float>& alphas,
                           const std::vector<float>& betas) {
  std::vector<Act> acts;
  size_t ia = 0, ib = 0;
  for (const std::string& n : names) {
    Act a{n};
    const bool takes_alpha = n == "Affine" || n == "LeakyRelu" || n == "ThresholdedRelu" || n == "ScaledTanh" ||
                             n == "HardSigmoid" || n == "Elu";
    const bool takes_beta = n == "Affine" || n == "ScaledTanh" || n == "HardSigmoid";
    const double default_alpha = n == "LeakyRelu" ? 0.01 : n == "HardSigmoid" ? 0.2 : 1.0;
    const double default_beta = n == "HardSigmoid" ? 0.5 : 0.0;
    if (takes_alpha) a.alpha = ia < alphas.size() ? alphas[ia++] : default_alpha;
    if (takes_beta) a.beta = ib < betas.size() ? betas[ib++] : default_beta;
    acts.push_back(a);
  }
  return acts;
}

struct Inputs {
  std::vector<float> x, w, r, b, h0, c0, p;
  std::vector<int32_t> lens;
};

int64_t gates_of(OpId op) { return op == OpId::LSTM ? 4 : op == OpId::GRU ? 3 : 1; }

struct Expected {
  std::vector<double> y, y_h, y_c;
};

// Straight loops over the ONNX equations, in double.
Expected reference(const Case& c, const Inputs& in) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, H = c.hidden, G = gates_of(c.op);
  const int64_t S = c.seq, N = c.batch, I = c.input;
  const bool bm = c.layout == 1;
  auto X = [&](int64_t t, int64_t b, int64_t k) { return double(in.x[size_t(bm ? (b * S + t) * I + k : (t * N + b) * I + k)]); };
  auto W = [&](int64_t d, int64_t row, int64_t k) { return double(in.w[size_t((d * G * H + row) * I + k)]); };
  auto R = [&](int64_t d, int64_t row, int64_t k) { return double(in.r[size_t((d * G * H + row) * H + k)]); };
  auto Wb = [&](int64_t d, int64_t row) { return c.bias ? double(in.b[size_t(d * 2 * G * H + row)]) : 0.0; };
  auto Rb = [&](int64_t d, int64_t row) { return c.bias ? double(in.b[size_t(d * 2 * G * H + G * H + row)]) : 0.0; };
  auto state_at = [&](int64_t d, int64_t b, int64_t j) { return size_t(bm ? (b * D + d) * H + j : (d * N + b) * H + j); };
  auto y_at = [&](int64_t t, int64_t d, int64_t b, int64_t j) {
    return size_t(bm ? ((b * S + t) * D + d) * H + j : ((t * D + d) * N + b) * H + j);
  };
  auto clip = [&](double v) { return c.clip > 0 ? std::min(std::max(v, -double(c.clip)), double(c.clip)) : v; };

  std::vector<std::string> names = c.acts;
  if (names.empty()) {
    const std::vector<std::string> one = c.op == OpId::LSTM ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                         : c.op == OpId::GRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                             : std::vector<std::string>{"Tanh"};
    for (int64_t d = 0; d < D; ++d) names.insert(names.end(), one.begin(), one.end());
  }
  const std::vector<Act> acts = params_of(names, c.alphas, c.betas);
  const size_t per_dir = acts.size() / size_t(D);

  Expected e;
  e.y.assign(size_t(S * D * N * H), 0.0);
  e.y_h.assign(size_t(D * N * H), 0.0);
  e.y_c.assign(size_t(D * N * H), 0.0);
  for (int64_t d = 0; d < D; ++d) {
    const Act* f = &acts[size_t(d) * per_dir];
    const bool reverse = c.direction == "reverse" || d == 1;
    for (int64_t b = 0; b < N; ++b) {
      std::vector<double> h(static_cast<size_t>(H)), cell(static_cast<size_t>(H));
      for (int64_t j = 0; j < H; ++j) {
        h[size_t(j)] = c.init_h ? in.h0[state_at(d, b, j)] : 0.0;
        cell[size_t(j)] = c.init_c ? in.c0[state_at(d, b, j)] : 0.0;
      }
      const int64_t len = c.lens ? in.lens[size_t(b)] : S;
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        auto xw = [&](int64_t gate, int64_t j) {
          double s = Wb(d, gate * H + j);
          for (int64_t k = 0; k < I; ++k) s += X(t, b, k) * W(d, gate * H + j, k);
          return s;
        };
        auto hr = [&](int64_t gate, int64_t j, const std::vector<double>& state) {
          double s = Rb(d, gate * H + j);
          for (int64_t k = 0; k < H; ++k) s += state[size_t(k)] * R(d, gate * H + j, k);
          return s;
        };
        std::vector<double> nh(static_cast<size_t>(H)), nc(static_cast<size_t>(H));
        if (c.op == OpId::LSTM) {  // gates i, o, f, c; P: i, o, f
          auto P = [&](int64_t which, int64_t j) { return c.peephole ? double(in.p[size_t(d * 3 * H + which * H + j)]) : 0.0; };
          for (int64_t j = 0; j < H; ++j) {
            const double it = f[0](clip(xw(0, j) + hr(0, j, h) + P(0, j) * cell[size_t(j)]));
            const double ft = c.input_forget ? 1.0 - it : f[0](clip(xw(2, j) + hr(2, j, h) + P(2, j) * cell[size_t(j)]));
            const double ct = f[1](clip(xw(3, j) + hr(3, j, h)));
            nc[size_t(j)] = ft * cell[size_t(j)] + it * ct;
            const double ot = f[0](clip(xw(1, j) + hr(1, j, h) + P(1, j) * nc[size_t(j)]));
            nh[size_t(j)] = ot * f[2](nc[size_t(j)]);
          }
        } else if (c.op == OpId::GRU) {  // gates z, r, h
          std::vector<double> z(static_cast<size_t>(H)), rt(static_cast<size_t>(H)), rh(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            z[size_t(j)] = f[0](clip(xw(0, j) + hr(0, j, h)));
            rt[size_t(j)] = f[0](clip(xw(1, j) + hr(1, j, h)));
            rh[size_t(j)] = rt[size_t(j)] * h[size_t(j)];
          }
          for (int64_t j = 0; j < H; ++j) {
            const double pre = c.linear_before_reset ? xw(2, j) + rt[size_t(j)] * hr(2, j, h) : xw(2, j) + hr(2, j, rh);
            const double ht = f[1](clip(pre));
            nh[size_t(j)] = (1 - z[size_t(j)]) * ht + z[size_t(j)] * h[size_t(j)];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) nh[size_t(j)] = f[0](clip(xw(0, j) + hr(0, j, h)));
        }
        h = nh;
        if (c.op == OpId::LSTM) cell = nc;
        for (int64_t j = 0; j < H; ++j) e.y[y_at(t, d, b, j)] = h[size_t(j)];
      }
      for (int64_t j = 0; j < H; ++j) {
        e.y_h[state_at(d, b, j)] = len > 0 ? h[size_t(j)] : 0.0;
        e.y_c[state_at(d, b, j)] = len > 0 ? cell[size_t(j)] : 0.0;
      }
    }
  }
  return e;
}

void run_case(const Case& c, uint32_t seed) {
  SCOPED_TRACE(label(c));
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, H = c.hidden, G = gates_of(c.op);
  const bool bm = c.layout == 1;
  const Shape x_shape = bm ? Shape{c.batch, c.seq, c.input} : Shape{c.seq, c.batch, c.input};
  const Shape state = bm ? Shape{c.batch, D, H} : Shape{D, c.batch, H};
  Inputs in;
  in.x = random_floats(size_t(shape_numel(x_shape)), seed, -1.f, 1.f);
  in.w = random_floats(size_t(D * G * H * c.input), seed + 1, -0.8f, 0.8f);
  in.r = random_floats(size_t(D * G * H * H), seed + 2, -0.8f, 0.8f);
  in.b = random_floats(size_t(D * 2 * G * H), seed + 3, -0.5f, 0.5f);
  in.h0 = random_floats(size_t(D * c.batch * H), seed + 4, -1.f, 1.f);
  in.c0 = random_floats(size_t(D * c.batch * H), seed + 5, -1.f, 1.f);
  in.p = random_floats(size_t(D * 3 * H), seed + 6, -0.5f, 0.5f);
  // Shorter than the sequence, and an empty sequence last.
  for (int64_t b = 0; b < c.batch; ++b) in.lens.push_back(b == c.batch - 1 ? 0 : int32_t(c.seq - 1 - b));

  const Attrs attrs = recurrent_attrs(H, c.direction, c.layout, c.clip, c.input_forget, c.linear_before_reset, c.acts,
                                      c.alphas, c.betas);

  std::vector<TensorData> inputs = {f32(x_shape, in.x), f32({D, G * H, c.input}, in.w, true),
                                    f32({D, G * H, H}, in.r, true),
                                    c.bias ? f32({D, 2 * G * H}, in.b, true) : TensorData::none(),
                                    c.lens ? i32({c.batch}, in.lens) : TensorData::none(),
                                    c.init_h ? f32(state, in.h0) : TensorData::none()};
  if (c.op == OpId::LSTM) {
    inputs.push_back(c.init_c ? f32(state, in.c0) : TensorData::none());
    inputs.push_back(c.peephole ? f32({D, 3 * H}, in.p, true) : TensorData::none());
  }
  while (inputs.back().absent) inputs.pop_back();
  const int outputs = c.op == OpId::LSTM ? 3 : 2;
  OpResult r = ref(c.op, attrs, inputs, outputs);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const Expected e = reference(c, in);
  const Shape y_shape = bm ? Shape{c.batch, c.seq, D, H} : Shape{c.seq, D, c.batch, H};
  EXPECT_EQ(r.outputs[0].shape, y_shape);
  EXPECT_EQ(r.outputs[1].shape, state);
  expect_close(r.outputs[0].as<float>(), e.y, 2e-6, "Y");
  expect_close(r.outputs[1].as<float>(), e.y_h, 2e-6, "Y_h");
  if (c.op == OpId::LSTM) expect_close(r.outputs[2].as<float>(), e.y_c, 2e-6, "Y_c");
  expect_infer_idempotent(c.op, attrs, inputs, outputs);
}

TEST(RecurrentRef, ParameterMatrix) {
  uint32_t seed = 100;
  int cases = 0;
  for (OpId op : {OpId::LSTM, OpId::GRU, OpId::RNN}) {
    for (const char* direction : {"forward", "reverse", "bidirectional"}) {
      for (int64_t layout : {0, 1}) {
        // Each optional input on its own, then all of them with clip (and the op's own flag).
        for (int variant = 0; variant < 7; ++variant) {
          Case c;
          c.op = op;
          c.direction = direction;
          c.layout = layout;
          c.bias = variant == 1 || variant >= 5;
          c.lens = variant == 2 || variant >= 5;
          c.init_h = variant == 3 || variant >= 5;
          c.init_c = op == OpId::LSTM && (variant == 4 || variant >= 5);
          c.peephole = op == OpId::LSTM && variant >= 5;
          if (variant >= 5) c.clip = 0.7f;
          if (variant == 6) {
            c.input_forget = op == OpId::LSTM;
            c.linear_before_reset = op == OpId::GRU;
          }
          run_case(c, seed += 10);
          ++cases;
        }
      }
    }
  }
  // GRU's linear_before_reset without the rest.
  Case c;
  c.op = OpId::GRU;
  c.bias = true;
  c.linear_before_reset = 1;
  run_case(c, seed += 10);
  EXPECT_EQ(cases, 3 * 3 * 2 * 7);
}

TEST(RecurrentRef, EveryActivation) {
  // Each activation in each slot of each op, with the parameters given, then defaulted.
  const std::vector<std::string> all = {"Relu",       "Tanh",        "Sigmoid", "Affine",   "LeakyRelu", "ThresholdedRelu",
                                        "ScaledTanh", "HardSigmoid", "Elu",     "Softsign", "Softplus"};
  uint32_t seed = 900;
  for (OpId op : {OpId::LSTM, OpId::GRU, OpId::RNN}) {
    const std::vector<std::string> base = op == OpId::LSTM ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                          : op == OpId::GRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                            : std::vector<std::string>{"Tanh"};
    for (size_t slot = 0; slot < base.size(); ++slot) {
      for (const std::string& act : all) {
        for (bool given : {true, false}) {
          if (!given && act == "ScaledTanh") continue;  // its parameters have no default (ErrorsNameTheNode)
          Case c;
          c.op = op;
          c.direction = "bidirectional";
          c.bias = c.init_h = true;
          c.acts = base;
          c.acts[slot] = act;
          c.acts.insert(c.acts.end(), base.begin(), base.end());
          c.acts[base.size() + (slot + 1) % base.size()] = act;  // the reverse direction elsewhere
          if (given) {
            c.alphas = {0.3f, 0.6f};
            c.betas = {0.4f, 0.9f};
            const std::vector<Act> used = params_of(c.acts, {}, {});
            size_t takes_alpha = 0, takes_beta = 0;
            for (const Act& a : used) {
              takes_alpha += a.name == "Affine" || a.name == "LeakyRelu" || a.name == "ThresholdedRelu" ||
                             a.name == "ScaledTanh" || a.name == "HardSigmoid" || a.name == "Elu";
              takes_beta += a.name == "Affine" || a.name == "ScaledTanh" || a.name == "HardSigmoid";
            }
            c.alphas.resize(takes_alpha);
            c.betas.resize(takes_beta);
          }
          run_case(c, seed += 10);
        }
      }
    }
  }
}

TEST(RecurrentRef, LowerCaseActivationNamesAreNormalised) {
  Graph g;
  Node n;
  n.name = "rnn";
  n.op = OpId::RNN;
  n.inputs = {g.add_tensor("x", {2, 1, 3}, DType::kF32), g.add_tensor("w", {2, 4, 3}, DType::kF32),
              g.add_tensor("r", {2, 4, 4}, DType::kF32)};
  n.outputs = {g.add_tensor("y", {}, DType::kF32), -1};  // Y_h absent
  n.attrs.set_string("direction", "bidirectional");
  n.attrs.set_string("activations", "leakyrelu,hardsigmoid");
  n.attrs.set_floats("activation_alpha", {0.5f});
  ASSERT_OK(infer_RNN(g, n));
  EXPECT_EQ(n.attrs.get_string("activations", ""), "LeakyRelu,HardSigmoid");
  EXPECT_EQ(n.attrs.get_floats("activation_alpha"), (std::vector<float>{0.5f, 0.2f}));
  EXPECT_EQ(n.attrs.get_floats("activation_beta"), (std::vector<float>{0.5f}));
  EXPECT_EQ(n.attrs.get_int("hidden_size", 0), 4);
  EXPECT_EQ(n.attrs.get_int("layout", -1), 0);
  EXPECT_TRUE(std::isinf(n.attrs.get_float("clip", 0.f)));
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{2, 2, 1, 4}));
  expect_reinfer_unchanged(g, n);
}

TEST(RecurrentInfer, ErrorsNameTheNode) {
  const DType f = DType::kF32;
  Attrs none;
  // LSTM: X [2, 1, 3], hidden 2: every input valid; with(i, ...) keeps inputs 0..max(i, 2), input i replaced.
  const std::vector<std::pair<Shape, DType>> valid = {{{2, 1, 3}, f}, {{1, 8, 3}, f}, {{1, 8, 2}, f},
                                                      {{1, 16}, f},   {{1}, DType::kI32}, {{1, 1, 2}, f},
                                                      {{1, 1, 2}, f}, {{1, 6}, f}};
  const std::vector<std::pair<Shape, DType>> lstm(valid.begin(), valid.begin() + 3);
  auto with = [&](size_t i, Shape s, DType t = DType::kF32) {
    std::vector<std::pair<Shape, DType>> in(valid.begin(), valid.begin() + static_cast<long>(std::max<size_t>(i + 1, 3)));
    in[i] = {s, t};
    return in;
  };
  expect_infer_error(OpId::LSTM, {{{2, 1, 3}, f}, {{1, 8, 3}, f}}, none, "inputs");
  expect_infer_error(OpId::LSTM, with(0, {2, 3}), none, "X must have rank 3");
  expect_infer_error(OpId::LSTM, with(1, {1, 7, 3}), none, "W must have shape");
  expect_infer_error(OpId::LSTM, with(1, {2, 8, 3}), none, "W must have shape");
  expect_infer_error(OpId::LSTM, with(2, {1, 8, 3}), none, "R must have shape [1,8,2]");
  expect_infer_error(OpId::LSTM, with(3, {1, 8}), none, "B must have shape [1,16]");
  expect_infer_error(OpId::LSTM, with(4, {2}, DType::kI32), none, "sequence_lens must have shape [1]");
  expect_infer_error(OpId::LSTM, with(4, {1}, DType::kI64), none, "int32");
  expect_infer_error(OpId::LSTM, with(5, {1, 2, 2}), none, "initial_h must have shape [1,1,2]");
  expect_infer_error(OpId::LSTM, with(6, {1, 1, 3}), none, "initial_c must have shape");
  expect_infer_error(OpId::LSTM, with(7, {1, 8}), none, "P must have shape [1,6]");
  expect_infer_error(OpId::LSTM, with(1, {1, 8, 3}, DType::kI8), none, "float32");
  expect_infer_error(OpId::LSTM, lstm, A().i("hidden_size", 3), "hidden_size 3");
  expect_infer_error(OpId::LSTM, lstm, A().s("direction", "backward"), "direction");
  expect_infer_error(OpId::LSTM, lstm, A().i("layout", 2), "layout");
  expect_infer_error(OpId::LSTM, lstm, A().f("clip", 0.f), "clip must be > 0");
  expect_infer_error(OpId::LSTM, lstm, A().i("input_forget", 2), "input_forget");
  expect_infer_error(OpId::LSTM, lstm, A().s("activations", "Sigmoid,Tanh"), "expected 3");
  expect_infer_error(OpId::LSTM, lstm, A().s("activations", "Sigmoid,Tanh,Gelu"), "activation 'Gelu' is not one of");
  expect_infer_error(OpId::LSTM, lstm, A().s("activations", "Sigmoid,Tanh,ScaledTanh"), "ScaledTanh needs a value");
  Attrs extra = A().s("activations", "Sigmoid,Tanh,LeakyRelu");
  extra.set_floats("activation_alpha", {0.1f, 0.2f});
  expect_infer_error(OpId::LSTM, lstm, extra, "activation_alpha has 2 values");
  expect_infer_error(OpId::LSTM, lstm, none, "outputs", 4);
  // GRU and RNN take no initial_c / P.
  expect_infer_error(OpId::GRU, {{{2, 1, 3}, f}, {{1, 6, 3}, f}, {{1, 6, 2}, f}, {{1, 12}, f}, {{1}, DType::kI32},
                                 {{1, 1, 2}, f}, {{1, 1, 2}, f}},
                     none, "inputs");
  expect_infer_error(OpId::GRU, {{{2, 1, 3}, f}, {{1, 6, 3}, f}, {{1, 6, 2}, f}}, A().i("linear_before_reset", 3),
                     "linear_before_reset");
  expect_infer_error(OpId::RNN, {{{2, 1, 3}, f}, {{1, 2, 3}, f}, {{1, 2, 2}, f}}, A().s("activations", "Tanh,Tanh"),
                     "expected 1");
}

}  // namespace
}  // namespace orknn::test
