// LSTM, GRU and RNN (ONNX opset 14 semantics): validation, normalisation, shapes.
//
// Inputs: X, W, R, B, sequence_lens, initial_h (all three), initial_c, P (LSTM); outputs Y, Y_h,
// Y_c (LSTM). Y is always present in the IR (the converter gives an unnamed ONNX Y a tensor of
// its own), Y_h and Y_c are optional. Float32 except sequence_lens (int32). With G gates (LSTM 4, GRU 3,
// RNN 1), D directions and layout 0 (1):
//   X [seq, batch, input]   ([batch, seq, input])
//   W [D, G*hidden, input], R [D, G*hidden, hidden], B [D, 2*G*hidden], P [D, 3*hidden]
//   initial_h, initial_c, Y_h, Y_c [D, batch, hidden]   ([batch, D, hidden])
//   Y [seq, D, batch, hidden]   ([batch, seq, D, hidden])
//   sequence_lens [batch]
// Normalised form: "direction", "hidden_size", "layout", "activations" (the D * (LSTM 3, GRU 2,
// RNN 1) names in canonical spelling, comma-separated: the IR has no string lists),
// "activation_alpha" / "activation_beta" (exactly the values the activations consume, defaults
// filled in; absent when none does: kernels/ref/recurrent_activation.h), "clip" (+inf: no clip),
// and "input_forget" (LSTM) / "linear_before_reset" (GRU) as 0 or 1.
#include <limits>
#include <string>
#include <vector>

#include "kernels/ref/recurrent_activation.h"
#include "ops/infer_util.h"

namespace orknn {
namespace {

struct RecurrentForm {
  int64_t gates;                             // rows of W per hidden unit
  std::vector<std::string> default_acts;     // one direction's activations
  size_t max_inputs, max_outputs;
};

const RecurrentForm kLstm{4, {"Sigmoid", "Tanh", "Tanh"}, 8, 3};
const RecurrentForm kGru{3, {"Sigmoid", "Tanh"}, 6, 2};
const RecurrentForm kRnn{1, {"Tanh"}, 6, 2};

constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSequenceLens = 4, kInitialH = 5, kInitialC = 6, kP = 7;

Status check_input_shape(const Graph& g, const Node& n, size_t i, const char* role, const Shape& want) {
  const Tensor* t = g.input(n, i);
  if (t && t->shape != want)
    return ORKNN_NODE_ERR(n, "%s must have shape %s, got %s", role, shape_str(want).c_str(), shape_str(t->shape).c_str());
  return Status::Ok();
}

// 0 or 1 attribute (default 0), written explicitly.
Status normalise_flag(Node& n, const char* name) {
  const int64_t v = n.attrs.get_int(name, 0);
  if (v != 0 && v != 1) return ORKNN_NODE_ERR(n, "%s must be 0 or 1, got %lld", name, (long long)v);
  n.attrs.set_int(name, v);
  return Status::Ok();
}

Status normalise_activations(Node& n, const RecurrentForm& form, int64_t directions) {
  std::vector<std::string> names;
  if (n.attrs.has("activations")) {
    names = split_rnn_activations(n.attrs.get_string("activations", ""));
    const size_t want = form.default_acts.size() * static_cast<size_t>(directions);
    if (names.size() != want)
      return ORKNN_NODE_ERR(n, "activations has %zu functions, expected %zu (%zu per direction, %lld direction%s)",
                            names.size(), want, form.default_acts.size(), (long long)directions,
                            directions > 1 ? "s" : "");
  } else {
    for (int64_t d = 0; d < directions; ++d) names.insert(names.end(), form.default_acts.begin(), form.default_acts.end());
  }
  std::vector<float> alphas = n.attrs.get_floats("activation_alpha"), betas = n.attrs.get_floats("activation_beta");
  std::vector<RnnActivationFn> fns;
  const Status st = resolve_rnn_activations(names, &alphas, &betas, &fns);
  if (!st.ok()) return ORKNN_NODE_ERR(n, "%s", st.message().c_str());
  for (size_t i = 0; i < fns.size(); ++i) names[i] = rnn_activation_name(fns[i].kind);
  n.attrs.set_string("activations", join_rnn_activations(names));
  for (const auto& [attr, values] : {std::pair<const char*, const std::vector<float>&>{"activation_alpha", alphas},
                                     {"activation_beta", betas}}) {
    if (values.empty()) n.attrs.erase(attr);
    else n.attrs.set_floats(attr, values);
  }
  return Status::Ok();
}

Status infer_recurrent(Graph& g, Node& n, const RecurrentForm& form) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 3, form.max_inputs, 1, form.max_outputs, 3));
  const char* const roles[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (i == kSequenceLens) {
      if (has_input(n, i)) ORKNN_RETURN_IF_ERROR(check_dtype(g, n, i, {DType::kI32}));
    } else {
      ORKNN_RETURN_IF_ERROR(check_f32(g, n, i, roles[i]));
    }
  }
  ORKNN_RETURN_IF_ERROR(normalise_flag(n, "layout"));
  const bool batch_major = n.attrs.get_int("layout", 0) == 1;

  const Shape& x = g.input(n, kX)->shape;
  if (x.size() != 3) return ORKNN_NODE_ERR(n, "X must have rank 3, got %s", shape_str(x).c_str());
  const int64_t seq = batch_major ? x[1] : x[0], batch = batch_major ? x[0] : x[1], input = x[2];

  const std::string direction = n.attrs.get_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ORKNN_NODE_ERR(n, "direction must be forward, reverse or bidirectional, got '%s'", direction.c_str());
  n.attrs.set_string("direction", direction);
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;

  const Shape& w = g.input(n, kW)->shape;
  if (w.size() != 3 || w[0] != dirs || w[1] % form.gates != 0 || w[1] == 0 || w[2] != input)
    return ORKNN_NODE_ERR(n, "W must have shape [%lld, %lld*hidden_size, %lld], got %s", (long long)dirs,
                          (long long)form.gates, (long long)input, shape_str(w).c_str());
  const int64_t hidden = w[1] / form.gates;
  if (n.attrs.has("hidden_size") && n.attrs.get_int("hidden_size", 0) != hidden)
    return ORKNN_NODE_ERR(n, "hidden_size %lld does not match W %s (%lld gates)",
                          (long long)n.attrs.get_int("hidden_size", 0), shape_str(w).c_str(), (long long)form.gates);
  n.attrs.set_int("hidden_size", hidden);

  const Shape state = batch_major ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  ORKNN_RETURN_IF_ERROR(check_input_shape(g, n, kR, "R", {dirs, form.gates * hidden, hidden}));
  ORKNN_RETURN_IF_ERROR(check_input_shape(g, n, kB, "B", {dirs, 2 * form.gates * hidden}));
  ORKNN_RETURN_IF_ERROR(check_input_shape(g, n, kSequenceLens, "sequence_lens", {batch}));
  ORKNN_RETURN_IF_ERROR(check_input_shape(g, n, kInitialH, "initial_h", state));
  ORKNN_RETURN_IF_ERROR(check_input_shape(g, n, kInitialC, "initial_c", state));
  ORKNN_RETURN_IF_ERROR(check_input_shape(g, n, kP, "P", {dirs, 3 * hidden}));

  ORKNN_RETURN_IF_ERROR(normalise_activations(n, form, dirs));
  const float clip = n.attrs.get_float("clip", std::numeric_limits<float>::infinity());
  if (!(clip > 0.f)) return ORKNN_NODE_ERR(n, "clip must be > 0, got %g", clip);
  n.attrs.set_float("clip", clip);
  if (n.op == OpId::LSTM) ORKNN_RETURN_IF_ERROR(normalise_flag(n, "input_forget"));
  if (n.op == OpId::GRU) ORKNN_RETURN_IF_ERROR(normalise_flag(n, "linear_before_reset"));

  const Shape y = batch_major ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  ORKNN_RETURN_IF_ERROR(set_output(g, n, 0, y, DType::kF32));
  for (size_t i = 1; i < n.outputs.size(); ++i) ORKNN_RETURN_IF_ERROR(set_output(g, n, i, state, DType::kF32));
  return Status::Ok();
}

}  // namespace

Status infer_LSTM(Graph& g, Node& n) { return infer_recurrent(g, n, kLstm); }
Status infer_GRU(Graph& g, Node& n) { return infer_recurrent(g, n, kGru); }
Status infer_RNN(Graph& g, Node& n) { return infer_recurrent(g, n, kRnn); }

}  // namespace orknn
