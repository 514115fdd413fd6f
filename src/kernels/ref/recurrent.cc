// Reference LSTM, GRU and RNN (float32), the ONNX equations step by step.
//
// Each direction d and batch row b runs on its own: the state starts at initial_h/initial_c (zeros
// when absent) and steps through the first len = sequence_lens[b] time steps (all of them when
// absent; values outside [0, seq] are clamped, infer cannot see them), forward or, for the
// reverse direction, from t = len-1 down to 0. Y holds the state after each step at that step's
// t and zeros for t >= len; Y_h / Y_c the state after the last step (zeros when len is 0, as
// ONNX Runtime gives; the specification does not say). Per step, gate pre-activations are float32 sums, k ascending: X_t * W^T + Wb, then
// H_{t-1} * R^T + Rb, added together (plus the peephole term), clipped to [-clip, clip], then
// activated. Gate order in W/R/B: LSTM i, o, f, c (P: i, o, f); GRU z, r, h; RNN i.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/ref/recurrent_activation.h"

namespace orknn {
namespace {

class RecurrentRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Attrs& at = ctx.node->attrs;
    op_ = ctx.node->op;
    gates_ = op_ == OpId::LSTM ? 4 : (op_ == OpId::GRU ? 3 : 1);
    batch_major_ = at.get_int("layout", 0) == 1;
    const Shape& x = ctx.in_tensor(0).shape;
    seq_ = batch_major_ ? x[1] : x[0];
    batch_ = batch_major_ ? x[0] : x[1];
    input_ = x[2];
    hidden_ = at.get_int("hidden_size", 0);
    const std::string direction = at.get_string("direction", "forward");
    dirs_ = direction == "bidirectional" ? 2 : 1;
    reverse_first_ = direction == "reverse";
    clip_ = at.get_float("clip", std::numeric_limits<float>::infinity());
    input_forget_ = at.get_int("input_forget", 0) == 1;
    linear_before_reset_ = at.get_int("linear_before_reset", 0) == 1;
    std::vector<float> alphas = at.get_floats("activation_alpha"), betas = at.get_floats("activation_beta");
    ORKNN_RETURN_IF_ERROR(
        resolve_rnn_activations(split_rnn_activations(at.get_string("activations", "")), &alphas, &betas, &acts_));
    const size_t per_dir = static_cast<size_t>(op_ == OpId::LSTM ? 3 : (op_ == OpId::GRU ? 2 : 1));
    if (acts_.size() != per_dir * static_cast<size_t>(dirs_))
      return ORKNN_ERR(kInvalidModel, "%s node '%s': activations are not normalised", op_name(op_),
                       ctx.node->name.c_str());
    const size_t h = static_cast<size_t>(hidden_), gh = static_cast<size_t>(gates_ * hidden_);
    h_.resize(h);
    c_.resize(h);
    x_part_.resize(gh);
    h_part_.resize(gh);
    update_.resize(h);
    gated_h_.resize(h);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    for (int64_t d = 0; d < dirs_; ++d)
      for (int64_t b = 0; b < batch_; ++b) run_sequence(ctx, d, b);
  }

 private:
  int64_t x_offset(int64_t t, int64_t b) const { return (batch_major_ ? b * seq_ + t : t * batch_ + b) * input_; }
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return (batch_major_ ? (b * seq_ + t) * dirs_ + d : (t * dirs_ + d) * batch_ + b) * hidden_;
  }
  int64_t state_offset(int64_t d, int64_t b) const { return (batch_major_ ? b * dirs_ + d : d * batch_ + b) * hidden_; }
  float clip(float v) const { return v > clip_ ? clip_ : (v < -clip_ ? -clip_ : v); }

  // out[r] = bias[r] + sum_k m[r][k] * v[k] for the rows of one direction's W or R; no bias when
  // B is absent.
  void affine(const float* m, const float* v, int64_t cols, const float* bias, float* out) const {
    for (int64_t r = 0; r < gates_ * hidden_; ++r) {
      float acc = 0.f;
      for (int64_t k = 0; k < cols; ++k) acc += m[r * cols + k] * v[k];
      out[r] = bias ? acc + bias[r] : acc;
    }
  }

  void run_sequence(const KernelContext& ctx, int64_t d, int64_t b) {
    const int64_t gh = gates_ * hidden_;
    const float* x = ctx.in<float>(0);
    const float* w = ctx.in<float>(1) + d * gh * input_;
    const float* r = ctx.in<float>(2) + d * gh * hidden_;
    const float* bias = ctx.has_input(3) ? ctx.in<float>(3) + d * 2 * gh : nullptr;
    const int32_t* lens = ctx.has_input(4) ? ctx.in<int32_t>(4) : nullptr;
    const bool lstm = op_ == OpId::LSTM;
    const float* init_h = ctx.has_input(5) ? ctx.in<float>(5) + state_offset(d, b) : nullptr;
    const float* init_c = lstm && ctx.has_input(6) ? ctx.in<float>(6) + state_offset(d, b) : nullptr;
    const float* peephole = lstm && ctx.has_input(7) ? ctx.in<float>(7) + d * 3 * hidden_ : nullptr;
    float* y = ctx.out<float>(0);  // Y is always there (infer); Y_h and Y_c are optional
    float* y_h = ctx.outputs.size() > 1 ? ctx.out<float>(1) : nullptr;
    float* y_c = ctx.outputs.size() > 2 ? ctx.out<float>(2) : nullptr;
    const RnnActivationFn* act = &acts_[static_cast<size_t>(d) * acts_.size() / static_cast<size_t>(dirs_)];

    for (int64_t j = 0; j < hidden_; ++j) {
      h_[j] = init_h ? init_h[j] : 0.f;
      c_[j] = init_c ? init_c[j] : 0.f;
    }
    const int64_t len = lens ? std::clamp<int64_t>(lens[b], 0, seq_) : seq_;
    const bool reverse = reverse_first_ || d == 1;
    for (int64_t s = 0; s < len; ++s) {
      const int64_t t = reverse ? len - 1 - s : s;
      affine(w, x + x_offset(t, b), input_, bias, x_part_.data());
      affine(r, h_.data(), hidden_, bias ? bias + gh : nullptr, h_part_.data());
      if (op_ == OpId::LSTM) lstm_step(act, peephole);
      else if (op_ == OpId::GRU) gru_step(act, r, bias ? bias + gh : nullptr);
      else rnn_step(act);
      std::copy(h_.begin(), h_.end(), y + y_offset(t, d, b));
    }
    for (int64_t t = len; t < seq_; ++t) std::fill_n(y + y_offset(t, d, b), hidden_, 0.f);
    if (len == 0) {  // as ONNX Runtime: an empty sequence ends in zeros, not in its initial state
      std::fill(h_.begin(), h_.end(), 0.f);
      std::fill(c_.begin(), c_.end(), 0.f);
    }
    if (y_h) std::copy(h_.begin(), h_.end(), y_h + state_offset(d, b));
    if (y_c) std::copy(c_.begin(), c_.end(), y_c + state_offset(d, b));
  }

  // act: f, g, h. Gates i, o, f, c at rows 0, H, 2H, 3H.
  void lstm_step(const RnnActivationFn* act, const float* peephole) {
    const int64_t H = hidden_;
    for (int64_t j = 0; j < H; ++j) {
      const float c_prev = c_[j];
      const float p_i = peephole ? peephole[j] : 0.f, p_o = peephole ? peephole[H + j] : 0.f,
                  p_f = peephole ? peephole[2 * H + j] : 0.f;
      const float i = act[0](clip(x_part_[j] + h_part_[j] + p_i * c_prev));
      const float f = input_forget_ ? 1.f - i : act[0](clip(x_part_[2 * H + j] + h_part_[2 * H + j] + p_f * c_prev));
      const float g = act[1](clip(x_part_[3 * H + j] + h_part_[3 * H + j]));
      const float c = f * c_prev + i * g;
      const float o = act[0](clip(x_part_[H + j] + h_part_[H + j] + p_o * c));
      c_[j] = c;
      h_[j] = o * act[2](c);
    }
  }

  // act: f, g. Gates z, r, h at rows 0, H, 2H. Without linear_before_reset the h gate's
  // recurrent term is (r . H_{t-1}) * Rh^T + Rbh, so it is recomputed from the gated state.
  void gru_step(const RnnActivationFn* act, const float* r, const float* r_bias) {
    const int64_t H = hidden_;
    for (int64_t j = 0; j < H; ++j) {
      update_[j] = act[0](clip(x_part_[j] + h_part_[j]));
      const float reset = act[0](clip(x_part_[H + j] + h_part_[H + j]));
      gated_h_[j] = reset * h_[j];
      if (linear_before_reset_) h_part_[2 * H + j] *= reset;  // r . (H_{t-1} * Rh^T + Rbh)
    }
    if (!linear_before_reset_) {
      const float* rh = r + 2 * H * H;
      for (int64_t j = 0; j < H; ++j) {
        float acc = 0.f;
        for (int64_t k = 0; k < H; ++k) acc += rh[j * H + k] * gated_h_[k];
        h_part_[2 * H + j] = r_bias ? acc + r_bias[2 * H + j] : acc;
      }
    }
    for (int64_t j = 0; j < H; ++j) {
      const float candidate = act[1](clip(x_part_[2 * H + j] + h_part_[2 * H + j]));
      h_[j] = (1.f - update_[j]) * candidate + update_[j] * h_[j];
    }
  }

  void rnn_step(const RnnActivationFn* act) {
    for (int64_t j = 0; j < hidden_; ++j) h_[j] = act[0](clip(x_part_[j] + h_part_[j]));
  }

  OpId op_ = OpId::RNN;
  int64_t gates_ = 1, seq_ = 0, batch_ = 0, input_ = 0, hidden_ = 0, dirs_ = 1;
  bool batch_major_ = false, reverse_first_ = false, input_forget_ = false, linear_before_reset_ = false;
  float clip_ = 0.f;
  std::vector<RnnActivationFn> acts_;  // per direction: LSTM f, g, h; GRU f, g; RNN f
  std::vector<float> h_, c_;           // the state of the sequence being run
  std::vector<float> x_part_, h_part_;  // gate pre-activations: X_t * W^T + Wb, H_{t-1} * R^T + Rb
  std::vector<float> update_, gated_h_;  // GRU: z, r . H_{t-1}
};

}  // namespace

ORKNN_REGISTER_KERNEL(LSTM, "ref", kPriorityReference, nullptr, RecurrentRef);
ORKNN_REGISTER_KERNEL(GRU, "ref", kPriorityReference, nullptr, RecurrentRef);
ORKNN_REGISTER_KERNEL(RNN, "ref", kPriorityReference, nullptr, RecurrentRef);

}  // namespace orknn
