// AVX-512 float LSTM, GRU and RNN ("x86_recurrent_f32"): the reference's equations
// (kernels/ref/recurrent.cc) with the default activations (LSTM Sigmoid, Tanh, Tanh; GRU Sigmoid,
// Tanh; RNN Tanh, per direction), every other attribute and input: directions, both layouts,
// sequence_lens, initial_h / initial_c, peepholes, clip, input_forget, linear_before_reset. Other
// activations, and nodes whose W, R, B or P are not constants, stay on the reference kernel.
//
// The reference computes X_t * W^T and H_{t-1} * R^T per step with scalar sums; the time of a
// CRNN went there (crnn_lstm: 90 %). Here:
//   1. the input part of every gate for every time step and batch row, X * W^T + Wb + Rb, is one
//      product over all rows of X (rows of 4 sharing each weight load), before the recurrence;
//      GRU's Rbh stays out of it with linear_before_reset (it is multiplied by r);
//   2. per step, the recurrent part H_{t-1} * R^T for up to 4 batch rows at once, and the gates
//      with sigmoid_lanes / tanh_lanes (fused_act_avx512.h) in registers.
// W and R are packed at prepare per 16 hidden units: [chunk][k][gate][16], so one chunk's sums are
// every gate of those 16 units (zeros past hidden_size) and the cell update needs no shuffles;
// as fp16 when every weight is an fp16 value (fp16 mode), widened exactly in registers (the
// recurrent weights are read once per step: half the bytes, and one direction's 256-unit LSTM R
// then fits in a 1 MB L2). GRU without linear_before_reset needs r before (r . H_{t-1}) * Rh^T:
// its R is packed as z, r and as h, two passes per step.
// Sums differ from the reference's by the order of additions (FMA, two partial sums per
// accumulator, biases added first), sigmoid and tanh by a few ulps: the float tolerance of
// docs/kernels.md. Bidirectional nodes run their directions on two threads.
// Outputs are rounded to fp16 by the executor in fp16 mode; the state stays float32, as in the
// reference.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its AVX-512 headers
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/ref/recurrent_activation.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"
#include "kernels/x86/gemv_f32_blocks.h"

namespace orknn {
namespace {

constexpr int64_t kLanes = 16;
constexpr int kMaxRows = 4;   // rows sharing each weight load
constexpr int kMaxGates = 4;  // LSTM

int gates_of(OpId op) { return op == OpId::LSTM ? 4 : (op == OpId::GRU ? 3 : 1); }

// The default activations of the op, per direction.
bool default_activations(const Node& n, int64_t dirs) {
  std::vector<float> alphas = n.attrs.get_floats("activation_alpha"), betas = n.attrs.get_floats("activation_beta");
  std::vector<RnnActivationFn> acts;
  if (!resolve_rnn_activations(split_rnn_activations(n.attrs.get_string("activations", "")), &alphas, &betas, &acts)
           .ok())
    return false;
  std::vector<RnnActivation> want;
  if (n.op == OpId::LSTM) want = {RnnActivation::kSigmoid, RnnActivation::kTanh, RnnActivation::kTanh};
  else if (n.op == OpId::GRU) want = {RnnActivation::kSigmoid, RnnActivation::kTanh};
  else want = {RnnActivation::kTanh};
  if (acts.size() != want.size() * static_cast<size_t>(dirs)) return false;
  for (size_t i = 0; i < acts.size(); ++i)
    if (acts[i].kind != want[i % want.size()]) return false;
  return true;
}

bool supports_recurrent(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  const size_t max_inputs = n.op == OpId::LSTM ? 8 : 6;
  if (n.inputs.size() < 3 || n.inputs.size() > max_inputs || n.outputs.empty()) return false;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Tensor* t = g.input(n, i);
    if (!t) {
      if (i < 3) return false;
      continue;
    }
    if (i == 4 ? t->dtype != DType::kI32 : !is_f32(t)) return false;
    // W, R, B, P packed at prepare.
    if ((i == 1 || i == 2 || i == 3 || i == 7) && (!t->is_const() || t->data.size < t->nbytes())) return false;
  }
  for (int o : n.outputs)
    if (o >= 0 && !is_f32(&g.tensor(o))) return false;
  if (n.outputs[0] < 0 || n.attrs.get_int("hidden_size", 0) <= 0) return false;
  const std::string direction = n.attrs.get_string("direction", "forward");
  return default_activations(n, direction == "bidirectional" ? 2 : 1);
}

// One direction's W or R, gates [g0, g0 + ng) of its [G * H][K] rows, as [chunk][K][ng][16] with
// chunk = 16 hidden units (zeros past H); fp16 when every value is one.
struct PackedGates {
  int ng = 0;
  int64_t k = 0;
  std::vector<uint16_t> w16;
  std::vector<float> w32;

  void pack(const float* m, int64_t hidden, int64_t k_, int g0, int ng_) {
    ng = ng_;
    k = k_;
    const int64_t chunks = (hidden + kLanes - 1) / kLanes;
    std::vector<float> p(static_cast<size_t>(chunks * k * ng * kLanes), 0.f);
    for (int64_t jc = 0; jc < chunks; ++jc)
      for (int64_t kk = 0; kk < k; ++kk)
        for (int g = 0; g < ng; ++g)
          for (int64_t l = 0; l < kLanes && jc * kLanes + l < hidden; ++l)
            p[static_cast<size_t>(((jc * k + kk) * ng + g) * kLanes + l)] =
                m[((g0 + g) * hidden + jc * kLanes + l) * k + kk];
    w32.clear();
    w16.assign(p.size(), 0);
    if (!x86::to_fp16_if_exact(p.data(), w16.data(), p.size())) {
      w16.clear();
      w32 = std::move(p);
    }
  }
  int64_t chunk_offset(int64_t jc) const { return jc * k * ng * kLanes; }
};

// out[r][g][lane] = init[g][lane] (0 without init) + sum over k of a[r][k] * w[k][g][lane], for R
// rows and G gates of one chunk (w: [k][G][16]); out rows `stride` floats apart. With one or two
// rows the even and odd k run in separate accumulators (8 or more chains for the FMA latency).
template <int R, int G, class W>
__attribute__((target("avx512f"))) void gate_sums(const float* const* a, int64_t k, const W* w, const float* init,
                                                  float* out, int64_t stride) {
  __m512 acc[R][G], acc2[R][G];
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) {
      acc[r][g] = init ? _mm512_loadu_ps(init + g * kLanes) : _mm512_setzero_ps();
      acc2[r][g] = _mm512_setzero_ps();
    }
  int64_t i = 0;
  if constexpr (R <= 2) {
    for (; i + 2 <= k; i += 2) {
      const W* wk = w + i * G * kLanes;
      __m512 w0[G], w1[G];
      for (int g = 0; g < G; ++g) {
        w0[g] = x86::load_weights(wk + g * kLanes);
        w1[g] = x86::load_weights(wk + (G + g) * kLanes);
      }
      for (int r = 0; r < R; ++r) {
        const __m512 a0 = _mm512_set1_ps(a[r][i]), a1 = _mm512_set1_ps(a[r][i + 1]);
        for (int g = 0; g < G; ++g) {
          acc[r][g] = _mm512_fmadd_ps(a0, w0[g], acc[r][g]);
          acc2[r][g] = _mm512_fmadd_ps(a1, w1[g], acc2[r][g]);
        }
      }
    }
  }
  for (; i < k; ++i) {
    const W* wk = w + i * G * kLanes;
    __m512 w0[G];
    for (int g = 0; g < G; ++g) w0[g] = x86::load_weights(wk + g * kLanes);
    for (int r = 0; r < R; ++r) {
      const __m512 a0 = _mm512_set1_ps(a[r][i]);
      for (int g = 0; g < G; ++g) acc[r][g] = _mm512_fmadd_ps(a0, w0[g], acc[r][g]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) _mm512_storeu_ps(out + r * stride + g * kLanes, _mm512_add_ps(acc[r][g], acc2[r][g]));
}

template <int G, class W>
void gate_sums_rows(int rows, const float* const* a, int64_t k, const W* w, const float* init, float* out,
                    int64_t stride) {
  switch (rows) {
    case 1: return gate_sums<1, G>(a, k, w, init, out, stride);
    case 2: return gate_sums<2, G>(a, k, w, init, out, stride);
    case 3: return gate_sums<3, G>(a, k, w, init, out, stride);
    default: return gate_sums<4, G>(a, k, w, init, out, stride);
  }
}

// gate_sums over one chunk of `p` for 1..kMaxRows rows.
void chunk_sums(const PackedGates& p, int64_t jc, int rows, const float* const* a, const float* init, float* out,
                int64_t stride) {
  auto run = [&](auto* w) {
    switch (p.ng) {
      case 1: return gate_sums_rows<1>(rows, a, p.k, w, init, out, stride);
      case 2: return gate_sums_rows<2>(rows, a, p.k, w, init, out, stride);
      case 3: return gate_sums_rows<3>(rows, a, p.k, w, init, out, stride);
      default: return gate_sums_rows<4>(rows, a, p.k, w, init, out, stride);
    }
  };
  if (p.w16.empty()) run(p.w32.data() + p.chunk_offset(jc));
  else run(p.w16.data() + p.chunk_offset(jc));
}

class RecurrentAvx512 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Node& n = *ctx.node;
    if (!supports_recurrent(*ctx.graph, n))
      return ORKNN_ERR(kFail, "%s '%s': not a node this kernel handles", op_name(n.op), n.name.c_str());
    op_ = n.op;
    gates_ = gates_of(op_);
    batch_major_ = n.attrs.get_int("layout", 0) == 1;
    const Shape& x = ctx.in_tensor(0).shape;
    seq_ = batch_major_ ? x[1] : x[0];
    batch_ = batch_major_ ? x[0] : x[1];
    input_ = x[2];
    hidden_ = n.attrs.get_int("hidden_size", 0);
    chunks_ = (hidden_ + kLanes - 1) / kLanes;
    hp_ = chunks_ * kLanes;
    const std::string direction = n.attrs.get_string("direction", "forward");
    dirs_ = direction == "bidirectional" ? 2 : 1;
    reverse_first_ = direction == "reverse";
    clip_ = n.attrs.get_float("clip", std::numeric_limits<float>::infinity());
    input_forget_ = n.attrs.get_int("input_forget", 0) == 1;
    linear_before_reset_ = n.attrs.get_int("linear_before_reset", 0) == 1;
    two_pass_ = op_ == OpId::GRU && !linear_before_reset_;

    const int64_t gh = gates_ * hidden_;
    const float* w = ctx.in<float>(1);
    const float* r = ctx.in<float>(2);
    const float* b = ctx.has_input(3) ? ctx.in<float>(3) : nullptr;
    const float* p = op_ == OpId::LSTM && ctx.has_input(7) ? ctx.in<float>(7) : nullptr;
    w_.resize(static_cast<size_t>(dirs_));
    r_.resize(static_cast<size_t>(dirs_));
    rh_.resize(static_cast<size_t>(dirs_));
    // Per direction and chunk: the input part's bias [G][16], GRU's Rbh [16], the peepholes [3][16].
    x_bias_.assign(static_cast<size_t>(dirs_ * chunks_ * gates_ * kLanes), 0.f);
    rbh_.assign(static_cast<size_t>(dirs_ * hp_), 0.f);
    peephole_.assign(p ? static_cast<size_t>(dirs_ * chunks_ * 3 * kLanes) : 0, 0.f);
    for (int64_t d = 0; d < dirs_; ++d) {
      const size_t du = static_cast<size_t>(d);
      w_[du].pack(w + d * gh * input_, hidden_, input_, 0, gates_);
      if (two_pass_) {
        r_[du].pack(r + d * gh * hidden_, hidden_, hidden_, 0, 2);
        rh_[du].pack(r + d * gh * hidden_, hidden_, hidden_, 2, 1);
      } else {
        r_[du].pack(r + d * gh * hidden_, hidden_, hidden_, 0, gates_);
      }
      for (int64_t g = 0; g < gates_; ++g)
        for (int64_t j = 0; j < hidden_; ++j) {
          const int64_t jc = j / kLanes, l = j % kLanes;
          float v = 0.f;
          if (b) {
            const float wb = b[d * 2 * gh + g * hidden_ + j], rb = b[d * 2 * gh + gh + g * hidden_ + j];
            const bool rb_apart = op_ == OpId::GRU && linear_before_reset_ && g == 2;  // multiplied by r
            v = rb_apart ? wb : wb + rb;
            if (rb_apart) rbh_[static_cast<size_t>(d * hp_ + j)] = rb;
          }
          x_bias_[static_cast<size_t>(((d * chunks_ + jc) * gates_ + g) * kLanes + l)] = v;
        }
      if (p)
        for (int64_t g = 0; g < 3; ++g)
          for (int64_t j = 0; j < hidden_; ++j)
            peephole_[static_cast<size_t>(((d * chunks_ + j / kLanes) * 3 + g) * kLanes + j % kLanes)] =
                p[(d * 3 + g) * hidden_ + j];
    }

    // Scratch: the input parts [dirs][rows of X][chunk][G][16], then per direction the state:
    // h twice (this step's and the next), c (LSTM), z and r . h (GRU in two passes), [batch][hp].
    xw_floats_ = dirs_ * seq_ * batch_ * chunks_ * gates_ * kLanes;
    state_floats_ = batch_ * hp_ * (op_ == OpId::LSTM ? 3 : (two_pass_ ? 4 : 2));
    cur_.assign(static_cast<size_t>(dirs_ * batch_), 0);
    len_.assign(static_cast<size_t>(dirs_ * batch_), 0);
    active_.assign(static_cast<size_t>(dirs_ * batch_), 0);
    request_scratch(ctx, static_cast<size_t>(xw_floats_ + dirs_ * state_floats_) * sizeof(float),
                    [this](void* s) { scratch_ = static_cast<float*>(s); }, &own_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    // 1. The input parts of every gate, per (direction, chunk) job.
    const int64_t macs = dirs_ * seq_ * batch_ * gates_ * hidden_ * input_;
    const int64_t jobs = dirs_ * chunks_;
    parallel_ranges(jobs, threads_for(macs, kMinMacsPerThread, ctx.num_threads), [&](int64_t j0, int64_t j1, int) {
      for (int64_t job = j0; job < j1; ++job) input_parts(ctx, job / chunks_, job % chunks_);
    });
    // 2. The recurrence, directions on their own threads; on one thread one direction after the
    // other, each keeping its R in L2 (alternating them step by step measured the same).
    const int64_t step_macs = dirs_ * seq_ * batch_ * gates_ * hidden_ * hidden_;
    parallel_ranges(dirs_, threads_for(step_macs, kMinMacsPerThread, ctx.num_threads),
                    [&](int64_t d0, int64_t d1, int) {
                      for (int64_t d = d0; d < d1; ++d) recurrence(ctx, d);
                    });
  }

 private:
  // Below this many multiply-adds per thread, waking another costs more than it saves.
  static constexpr int64_t kMinMacsPerThread = 256 * 1024;

  int64_t x_row(int64_t t, int64_t b) const { return batch_major_ ? b * seq_ + t : t * batch_ + b; }
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return (batch_major_ ? (b * seq_ + t) * dirs_ + d : (t * dirs_ + d) * batch_ + b) * hidden_;
  }
  int64_t state_offset(int64_t d, int64_t b) const { return (batch_major_ ? b * dirs_ + d : d * batch_ + b) * hidden_; }
  int64_t xw_row_floats() const { return chunks_ * gates_ * kLanes; }
  float* xw(int64_t d, int64_t row) const { return scratch_ + (d * seq_ * batch_ + row) * xw_row_floats(); }

  void input_parts(const KernelContext& ctx, int64_t d, int64_t jc) const {
    const float* x = ctx.in<float>(0);
    const int64_t rows = seq_ * batch_, stride = xw_row_floats();
    const float* bias = x_bias_.data() + (d * chunks_ + jc) * gates_ * kLanes;
    const float* a[kMaxRows];
    for (int64_t r0 = 0; r0 < rows; r0 += kMaxRows) {
      const int n = static_cast<int>(std::min<int64_t>(kMaxRows, rows - r0));
      for (int i = 0; i < n; ++i) a[i] = x + (r0 + i) * input_;
      chunk_sums(w_[static_cast<size_t>(d)], jc, n, a, bias, xw(d, r0) + jc * gates_ * kLanes, stride);
    }
  }

  __attribute__((target("avx512f"))) __m512 clip(__m512 v) const {
    // max / min return the second operand for a NaN: NaN passes as in the reference.
    return _mm512_min_ps(_mm512_set1_ps(clip_), _mm512_max_ps(_mm512_set1_ps(-clip_), v));
  }

  // Direction d over every batch row.
  void recurrence(const KernelContext& ctx, int64_t d) {
    const int64_t max_len = begin_sequences(ctx, d);
    for (int64_t s = 0; s < max_len; ++s) step(ctx, d, s);
    end_sequences(ctx, d);
  }

  // Direction d's state in the scratch: h twice (the current one of row b is hbuf[cur[b]]), c
  // (LSTM), z and r . h (GRU in two passes); its rows' lengths and the rows still running.
  struct DirState {
    float* hbuf[2];
    float* cell;
    float* zbuf;
    float* gated;
    int* cur;
    int* len;
    int* active;
  };
  DirState dir_state(int64_t d) {
    float* state = scratch_ + xw_floats_ + d * state_floats_;
    return DirState{{state, state + batch_ * hp_}, state + 2 * batch_ * hp_, state + 2 * batch_ * hp_,
                    state + 3 * batch_ * hp_,      cur_.data() + d * batch_,  len_.data() + d * batch_,
                    active_.data() + d * batch_};
  }

  // The initial state of direction d; returns its longest sequence.
  int64_t begin_sequences(const KernelContext& ctx, int64_t d) {
    const DirState st = dir_state(d);
    float* const* hbuf = st.hbuf;
    float* cell = st.cell;
    int* cur = st.cur;
    int* len = st.len;
    const int32_t* lens = ctx.has_input(4) ? ctx.in<int32_t>(4) : nullptr;
    const float* init_h = ctx.has_input(5) ? ctx.in<float>(5) : nullptr;
    const float* init_c = op_ == OpId::LSTM && ctx.has_input(6) ? ctx.in<float>(6) : nullptr;
    int64_t max_len = 0;
    for (int64_t b = 0; b < batch_; ++b) {
      cur[b] = 0;
      len[b] = static_cast<int>(lens ? std::clamp<int64_t>(lens[b], 0, seq_) : seq_);
      max_len = std::max<int64_t>(max_len, len[b]);
      std::fill_n(hbuf[0] + b * hp_, hp_, 0.f);
      if (init_h) std::memcpy(hbuf[0] + b * hp_, init_h + state_offset(d, b), static_cast<size_t>(hidden_) * 4);
      if (op_ == OpId::LSTM) {
        std::fill_n(cell + b * hp_, hp_, 0.f);
        if (init_c) std::memcpy(cell + b * hp_, init_c + state_offset(d, b), static_cast<size_t>(hidden_) * 4);
      }
    }
    return max_len;
  }

  // Step s of direction d for its rows still running.
  __attribute__((target("avx512f"))) void step(const KernelContext& ctx, int64_t d, int64_t s) {
    const DirState st = dir_state(d);
    float* const* hbuf = st.hbuf;
    float* cell = st.cell;
    float* zbuf = st.zbuf;
    float* gated = st.gated;
    int* cur = st.cur;
    const int* len = st.len;
    int* active = st.active;
    float* y = ctx.out<float>(0);
    const bool reverse = reverse_first_ || d == 1;
    const __mmask16 tail = hidden_ % kLanes ? __mmask16((1u << (hidden_ % kLanes)) - 1) : __mmask16(0xFFFF);
    alignas(64) float sums[kMaxRows * kMaxGates * kLanes];
    const float* a[kMaxRows];
    {
      int n_active = 0;
      for (int64_t b = 0; b < batch_; ++b)
        if (len[b] > s) active[n_active++] = static_cast<int>(b);
      for (int i0 = 0; i0 < n_active; i0 += kMaxRows) {
        const int rows = std::min(kMaxRows, n_active - i0);
        const int* rb = active + i0;
        int64_t t[kMaxRows];
        for (int i = 0; i < rows; ++i) {
          t[i] = reverse ? len[rb[i]] - 1 - s : s;
          a[i] = hbuf[cur[rb[i]]] + rb[i] * hp_;
        }
        const int64_t stride = gates_ * kLanes;
        for (int64_t jc = 0; jc < chunks_; ++jc) {
          const int64_t j = jc * kLanes;
          if (op_ == OpId::LSTM) {
            chunk_sums(r_[static_cast<size_t>(d)], jc, rows, a, nullptr, sums, stride);
            const float* pp = peephole_.empty() ? nullptr : peephole_.data() + (d * chunks_ + jc) * 3 * kLanes;
            for (int i = 0; i < rows; ++i)
              lstm_gates(xw(d, x_row(t[i], rb[i])) + jc * stride, sums + i * stride, pp, cell + rb[i] * hp_ + j,
                         hbuf[1 - cur[rb[i]]] + rb[i] * hp_ + j);
          } else if (op_ == OpId::RNN) {
            chunk_sums(r_[static_cast<size_t>(d)], jc, rows, a, nullptr, sums, stride);
            for (int i = 0; i < rows; ++i) {
              const __m512 v = _mm512_add_ps(_mm512_loadu_ps(xw(d, x_row(t[i], rb[i])) + jc * stride),
                                             _mm512_loadu_ps(sums + i * stride));
              _mm512_storeu_ps(hbuf[1 - cur[rb[i]]] + rb[i] * hp_ + j, tanh_lanes(clip(v)));
            }
          } else if (!two_pass_) {
            chunk_sums(r_[static_cast<size_t>(d)], jc, rows, a, nullptr, sums, stride);
            for (int i = 0; i < rows; ++i)
              gru_gates(xw(d, x_row(t[i], rb[i])) + jc * stride, sums + i * stride, rbh_.data() + d * hp_ + j,
                        a[i] + j, hbuf[1 - cur[rb[i]]] + rb[i] * hp_ + j);
          } else {  // z and r, then r . h
            chunk_sums(r_[static_cast<size_t>(d)], jc, rows, a, nullptr, sums, stride);
            for (int i = 0; i < rows; ++i) {
              const float* xi = xw(d, x_row(t[i], rb[i])) + jc * stride;
              const float* si = sums + i * stride;
              const __m512 z = sigmoid_lanes(clip(_mm512_add_ps(_mm512_loadu_ps(xi), _mm512_loadu_ps(si))));
              const __m512 r = sigmoid_lanes(
                  clip(_mm512_add_ps(_mm512_loadu_ps(xi + kLanes), _mm512_loadu_ps(si + kLanes))));
              _mm512_storeu_ps(zbuf + rb[i] * hp_ + j, z);
              _mm512_storeu_ps(gated + rb[i] * hp_ + j, _mm512_mul_ps(r, _mm512_loadu_ps(a[i] + j)));
            }
          }
        }
        if (two_pass_) {
          const float* g[kMaxRows];
          for (int i = 0; i < rows; ++i) g[i] = gated + rb[i] * hp_;
          for (int64_t jc = 0; jc < chunks_; ++jc) {
            const int64_t j = jc * kLanes;
            chunk_sums(rh_[static_cast<size_t>(d)], jc, rows, g, nullptr, sums, kLanes);
            for (int i = 0; i < rows; ++i) {
              const float* xi = xw(d, x_row(t[i], rb[i])) + jc * gates_ * kLanes;
              const __m512 hcand = tanh_lanes(
                  clip(_mm512_add_ps(_mm512_loadu_ps(xi + 2 * kLanes), _mm512_loadu_ps(sums + i * kLanes))));
              const __m512 z = _mm512_loadu_ps(zbuf + rb[i] * hp_ + j);
              _mm512_storeu_ps(hbuf[1 - cur[rb[i]]] + rb[i] * hp_ + j, gru_blend(z, hcand, _mm512_loadu_ps(a[i] + j)));
            }
          }
        }
        for (int i = 0; i < rows; ++i) {
          cur[rb[i]] = 1 - cur[rb[i]];
          const float* h = hbuf[cur[rb[i]]] + rb[i] * hp_;
          float* yt = y + y_offset(t[i], d, rb[i]);
          for (int64_t jc = 0; jc < chunks_; ++jc)
            _mm512_mask_storeu_ps(yt + jc * kLanes, jc == chunks_ - 1 ? tail : __mmask16(0xFFFF),
                                  _mm512_loadu_ps(h + jc * kLanes));
        }
      }
    }
  }

  // Direction d's zeros past each row's length, Y_h and Y_c.
  void end_sequences(const KernelContext& ctx, int64_t d) {
    const DirState st = dir_state(d);
    const int* cur = st.cur;
    const int* len = st.len;
    float* y = ctx.out<float>(0);
    float* y_h = ctx.outputs.size() > 1 ? ctx.out<float>(1) : nullptr;
    float* y_c = ctx.outputs.size() > 2 ? ctx.out<float>(2) : nullptr;
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t tt = len[b]; tt < seq_; ++tt) std::fill_n(y + y_offset(tt, d, b), hidden_, 0.f);
      // As the reference: an empty sequence ends in zeros, not in its initial state.
      if (y_h) {
        if (len[b] == 0) std::fill_n(y_h + state_offset(d, b), hidden_, 0.f);
        else std::memcpy(y_h + state_offset(d, b), st.hbuf[cur[b]] + b * hp_, static_cast<size_t>(hidden_) * 4);
      }
      if (y_c) {
        if (len[b] == 0) std::fill_n(y_c + state_offset(d, b), hidden_, 0.f);
        else std::memcpy(y_c + state_offset(d, b), st.cell + b * hp_, static_cast<size_t>(hidden_) * 4);
      }
    }
  }

  // A gate's pre-activation: input part plus recurrent sum.
  __attribute__((target("avx512f"))) static __m512 pre(const float* xi, const float* si, int g) {
    return _mm512_add_ps(_mm512_loadu_ps(xi + g * kLanes), _mm512_loadu_ps(si + g * kLanes));
  }

  // Gates i, o, f, c of 16 units: xi the input parts (biases in), si the recurrent sums, pp the
  // peepholes i, o, f (or null); c updated in place, h_out the new state.
  __attribute__((target("avx512f"))) void lstm_gates(const float* xi, const float* si, const float* pp, float* c,
                                                     float* h_out) const {
    const __m512 c_prev = _mm512_loadu_ps(c);
    __m512 pi = pre(xi, si, 0), pf = pre(xi, si, 2);
    if (pp) {
      pi = _mm512_fmadd_ps(_mm512_loadu_ps(pp), c_prev, pi);
      pf = _mm512_fmadd_ps(_mm512_loadu_ps(pp + 2 * kLanes), c_prev, pf);
    }
    const __m512 i = sigmoid_lanes(clip(pi));
    const __m512 f = input_forget_ ? _mm512_sub_ps(_mm512_set1_ps(1.f), i) : sigmoid_lanes(clip(pf));
    const __m512 g = tanh_lanes(clip(pre(xi, si, 3)));
    const __m512 cn = _mm512_fmadd_ps(f, c_prev, _mm512_mul_ps(i, g));
    __m512 po = pre(xi, si, 1);
    if (pp) po = _mm512_fmadd_ps(_mm512_loadu_ps(pp + kLanes), cn, po);
    const __m512 o = sigmoid_lanes(clip(po));
    _mm512_storeu_ps(c, cn);
    _mm512_storeu_ps(h_out, _mm512_mul_ps(o, tanh_lanes(cn)));
  }

  // (1 - z) * candidate + z * h_prev.
  __attribute__((target("avx512f"))) static __m512 gru_blend(__m512 z, __m512 cand, __m512 h_prev) {
    return _mm512_fmadd_ps(z, h_prev, _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(1.f), z), cand));
  }

  // GRU with linear_before_reset: gates z, r, h of 16 units; rbh the h gate's recurrent bias.
  __attribute__((target("avx512f"))) void gru_gates(const float* xi, const float* si, const float* rbh,
                                                    const float* h_prev, float* h_out) const {
    const __m512 z = sigmoid_lanes(clip(pre(xi, si, 0)));
    const __m512 r = sigmoid_lanes(clip(pre(xi, si, 1)));
    const __m512 rh = _mm512_mul_ps(r, _mm512_add_ps(_mm512_loadu_ps(si + 2 * kLanes), _mm512_loadu_ps(rbh)));
    const __m512 cand = tanh_lanes(clip(_mm512_add_ps(_mm512_loadu_ps(xi + 2 * kLanes), rh)));
    _mm512_storeu_ps(h_out, gru_blend(z, cand, _mm512_loadu_ps(h_prev)));
  }

  OpId op_ = OpId::RNN;
  int gates_ = 1;
  int64_t seq_ = 0, batch_ = 0, input_ = 0, hidden_ = 0, chunks_ = 0, hp_ = 0, dirs_ = 1;
  bool batch_major_ = false, reverse_first_ = false, input_forget_ = false, linear_before_reset_ = false;
  bool two_pass_ = false;  // GRU without linear_before_reset
  float clip_ = 0.f;
  std::vector<PackedGates> w_, r_, rh_;  // per direction: W; R (GRU in two passes: z, r); Rh
  std::vector<float> x_bias_, rbh_, peephole_;
  std::vector<int> cur_, len_, active_;  // per direction and batch row: which h buffer is current, the length
  int64_t xw_floats_ = 0, state_floats_ = 0;
  float* scratch_ = nullptr;
  std::vector<ScratchLine> own_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(LSTM, "x86_recurrent_f32", kPriorityGeneral, supports_recurrent, RecurrentAvx512);
ORKNN_REGISTER_KERNEL(GRU, "x86_recurrent_f32", kPriorityGeneral, supports_recurrent, RecurrentAvx512);
ORKNN_REGISTER_KERNEL(RNN, "x86_recurrent_f32", kPriorityGeneral, supports_recurrent, RecurrentAvx512);

}  // namespace orknn
