#include "converter/quant/bias_correction.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <atomic>
#include <memory>
#include <thread>

#include "common/log.h"
#include "common/threads.h"
#include "converter/quant/accuracy.h"
#include "kernels/quant_util.h"
#include "kernels/ref/nchw.h"
#include "runtime/executor.h"

namespace orknn {

namespace {

// A corrected node: its index in both graphs and the geometry that maps its input to its taps.
struct Target {
  std::string name;
  size_t qnode = 0, fnode = 0;
  bool conv = false;
  // Conv: input [batch, in_ch, spatial...], weight taps = s.taps(); Gemm: input [rows, in_ch].
  SpatialGeometry s;
  int64_t batch = 1, in_ch = 0, out_ch = 0, group = 1;
  bool trans_b = false;  // Gemm
  // Sum over the samples of the mean input value each tap sees (over output positions and batch
  // items): in_ch * taps values (Gemm: in_ch). float: the float graph's input; quant: the same
  // values quantized with the int8 input's parameters and dequantized.
  std::vector<double> float_taps, quant_taps;
  double items = 0.0;  // samples
};

int64_t taps_of(const Target& t) { return t.conv ? t.s.taps() : 1; }

// The node's constant input `i` when it has dtype `dt`, else nullptr.
const Tensor* const_input(const Graph& g, const Node& n, size_t i, DType dt) {
  const Tensor* t = i < n.inputs.size() ? g.input(n, static_cast<int>(i)) : nullptr;
  return t && t->is_const() && t->dtype == dt ? t : nullptr;
}

bool is_int8_activation(const Tensor& t) { return t.dtype == DType::kI8 && !t.is_const() && t.quant.scale.size() == 1; }

// Fills t.s from the Conv's attributes (normalised by shape inference) and its input and output
// shapes; false for shapes it does not handle (more than 3 spatial dims).
bool conv_geometry(const Node& n, const Shape& xs, const Shape& ys, Target* t) {
  if (xs.size() < 3 || xs.size() > 5 || ys.size() != xs.size()) return false;
  const size_t k = xs.size() - 2;
  const std::vector<int64_t> kernel = n.attrs.get_ints("kernel_shape");
  const std::vector<int64_t> strides = n.attrs.get_ints("strides");
  const std::vector<int64_t> dilations = n.attrs.get_ints("dilations");
  const std::vector<int64_t> pads = n.attrs.get_ints("pads");
  if (kernel.size() != k || strides.size() != k || dilations.size() != k || pads.size() != 2 * k) return false;
  for (size_t i = 0; i < k; ++i) {
    const size_t slot = 3 - k + i;
    t->s.in[slot] = xs[2 + i];
    t->s.out[slot] = ys[2 + i];
    t->s.kernel[slot] = kernel[i];
    t->s.stride[slot] = strides[i];
    t->s.dilation[slot] = dilations[i];
    t->s.pad_begin[slot] = pads[i];
    t->s.pad_end[slot] = pads[k + i];
  }
  t->batch = xs[0];
  t->in_ch = xs[1];
  t->out_ch = ys[1];
  t->group = std::max<int64_t>(n.attrs.get_int("group", 1), 1);
  return t->out_ch % t->group == 0 && t->in_ch % t->group == 0;
}

// Finds the nodes to correct: int8 Conv/Gemm of qg (with an int32 bias when need_bias) and their
// float originals. Their float_taps and quant_taps are sized when with_taps.
std::vector<Target> find_targets(const Graph& fg, const Graph& qg, bool need_bias, bool with_taps) {
  std::map<std::string, size_t> float_node;
  for (size_t i = 0; i < fg.nodes.size(); ++i) float_node.emplace(fg.nodes[i].name, i);
  std::vector<Target> targets;
  for (size_t i = 0; i < qg.nodes.size(); ++i) {
    const Node& n = qg.nodes[i];
    if (n.op != OpId::Conv && n.op != OpId::Gemm) continue;
    if (n.inputs.size() < 3 || n.inputs[0] < 0 || !is_int8_activation(qg.tensor(n.inputs[0]))) continue;
    if (!const_input(qg, n, 1, DType::kI8) || (need_bias && !const_input(qg, n, 2, DType::kI32))) continue;
    auto f = float_node.find(n.name);
    if (f == float_node.end()) continue;
    const Node& fn = fg.nodes[f->second];
    if (fn.op != n.op || fn.inputs.empty() || fn.inputs[0] < 0 || fn.outputs.empty() || fn.outputs[0] < 0) continue;
    if (!const_input(fg, fn, 1, DType::kF32)) continue;
    const Shape& xs = fg.tensor(fn.inputs[0]).shape;
    if (xs != qg.tensor(n.inputs[0]).shape || fg.tensor(fn.inputs[0]).dtype != DType::kF32) continue;
    Target t;
    t.name = n.name;
    t.qnode = i;
    t.fnode = f->second;
    if (n.op == OpId::Conv) {
      t.conv = true;
      if (!conv_geometry(fn, xs, fg.tensor(fn.outputs[0]).shape, &t)) continue;
    } else {
      if (xs.size() != 2 || n.attrs.get_int("transA", 0) != 0) continue;
      t.trans_b = n.attrs.get_int("transB", 0) != 0;
      t.batch = xs[0];
      t.in_ch = xs[1];
      const Shape& ws = fg.tensor(fn.inputs[1]).shape;
      if (ws.size() != 2) continue;
      t.out_ch = t.trans_b ? ws[0] : ws[1];
    }
    if (with_taps) {
      const int64_t width = t.in_ch * taps_of(t);
      t.float_taps.assign(static_cast<size_t>(width), 0.0);
      t.quant_taps.assign(static_cast<size_t>(width), 0.0);
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

// Adds to `acc` (in_ch * taps) the mean over the output positions and batch items of the input
// value each tap reads (x: real values, NCHW). Padding reads 0. Separable: along each
// spatial slot, tap k of output o reads position o * stride - pad + k * dilation, so the sum over
// output positions factors into one 0/1 weight per (slot, tap, input position).
void add_conv_taps(const Target& t, const std::vector<float>& x, std::vector<double>* acc) {
  const SpatialGeometry& s = t.s;
  std::vector<double> reads[3];  // reads[slot][k * in + i]: some output position's tap k reads i
  for (int slot = 0; slot < 3; ++slot) {
    reads[slot].assign(static_cast<size_t>(s.kernel[slot] * s.in[slot]), 0.0);
    for (int64_t k = 0; k < s.kernel[slot]; ++k)
      for (int64_t o = 0; o < s.out[slot]; ++o) {
        const int64_t i = s.window_input(slot, o, k);
        if (s.inside_input(slot, i)) reads[slot][static_cast<size_t>(k * s.in[slot] + i)] += 1.0;
      }
  }
  const int64_t in0 = s.in[0], in1 = s.in[1], in2 = s.in[2];
  const int64_t k0 = s.kernel[0], k1 = s.kernel[1], k2 = s.kernel[2];
  const double positions = static_cast<double>(s.out[0] * s.out[1] * s.out[2] * t.batch);
  std::vector<double> a(static_cast<size_t>(in0 * in1 * k2)), b(static_cast<size_t>(in0 * k1 * k2));
  for (int64_t n = 0; n < t.batch; ++n)
    for (int64_t c = 0; c < t.in_ch; ++c) {
      const float* p = x.data() + (n * t.in_ch + c) * s.in_plane();
      // a[i0, i1, k2] = sum over i2; b[i0, k1, k2] = sum over i1; then sum over i0.
      for (int64_t r = 0; r < in0 * in1; ++r)
        for (int64_t k = 0; k < k2; ++k) {
          const double* w = reads[2].data() + k * in2;
          double sum = 0.0;
          for (int64_t i = 0; i < in2; ++i) sum += w[i] * p[r * in2 + i];
          a[static_cast<size_t>(r * k2 + k)] = sum;
        }
      for (int64_t i0 = 0; i0 < in0; ++i0)
        for (int64_t k = 0; k < k1; ++k)
          for (int64_t kk = 0; kk < k2; ++kk) {
            double sum = 0.0;
            for (int64_t i = 0; i < in1; ++i)
              sum += reads[1][static_cast<size_t>(k * in1 + i)] * a[static_cast<size_t>((i0 * in1 + i) * k2 + kk)];
            b[static_cast<size_t>((i0 * k1 + k) * k2 + kk)] = sum;
          }
      double* out = acc->data() + c * t.s.taps();
      for (int64_t k = 0; k < k0; ++k)
        for (int64_t j = 0; j < k1 * k2; ++j) {
          double sum = 0.0;
          for (int64_t i0 = 0; i0 < in0; ++i0)
            sum += reads[0][static_cast<size_t>(k * in0 + i0)] * b[static_cast<size_t>(i0 * k1 * k2 + j)];
          out[k * k1 * k2 + j] += sum / positions;
        }
    }
}

// Gemm: the mean of every input column over the rows.
void add_gemm_taps(const Target& t, const std::vector<float>& x, std::vector<double>* acc) {
  for (int64_t r = 0; r < t.batch; ++r)
    for (int64_t k = 0; k < t.in_ch; ++k)
      (*acc)[static_cast<size_t>(k)] += x[static_cast<size_t>(r * t.in_ch + k)] / static_cast<double>(t.batch);
}

void add_taps(const Target& t, const std::vector<float>& x, std::vector<double>* acc) {
  if (t.conv) add_conv_taps(t, x, acc);
  else add_gemm_taps(t, x, acc);
}

// Output channel m's weight on input channel c (absolute, 0..in_ch-1) at tap k, or whether c feeds m.
struct WeightIndex {
  const Target& t;
  bool feeds(int64_t m, int64_t c) const {
    if (!t.conv) return true;
    return c / (t.in_ch / t.group) == m / (t.out_ch / t.group);
  }
  int64_t at(int64_t m, int64_t c, int64_t k) const {
    if (!t.conv) return t.trans_b ? m * t.in_ch + c : c * t.out_ch + m;
    const int64_t per_group = t.in_ch / t.group;
    return (m * per_group + c % per_group) * t.s.taps() + k;
  }
};

// Mean output of channel m before the activation: sum over taps of weight(index) * taps + bias.
template <class WeightAt>
double mean_output(const Target& t, int64_t m, const std::vector<double>& taps, WeightAt&& weight, double bias) {
  const WeightIndex wi{t};
  const int64_t nt = taps_of(t);
  double sum = bias;
  for (int64_t c = 0; c < t.in_ch; ++c) {
    if (!wi.feeds(m, c)) continue;
    for (int64_t k = 0; k < nt; ++k) sum += weight(wi.at(m, c, k)) * taps[static_cast<size_t>(c * nt + k)];
  }
  return sum;
}

float scale_at(const QuantParams& q, int64_t m) {
  return q.scale.size() == 1 ? q.scale[0] : q.scale[static_cast<size_t>(m)];
}

// sum |w_q| of output channel m, for the accumulator bound.
int64_t abs_weight_sum(const Target& t, const int8_t* w, int64_t m) {
  const WeightIndex wi{t};
  const int64_t nt = taps_of(t);
  int64_t sum = 0;
  for (int64_t c = 0; c < t.in_ch; ++c) {
    if (!wi.feeds(m, c)) continue;
    for (int64_t k = 0; k < nt; ++k) sum += std::abs(static_cast<int>(w[wi.at(m, c, k)]));
  }
  return sum;
}

// bias + delta when it stays in int32 and keeps 255 * sum|w| + |bias| within INT32_MAX (the bound
// the quantizer and the int8 kernels rely on); else the bias unchanged.
int32_t moved_bias(int32_t bias, int64_t delta, int64_t abs_weights) {
  const int64_t v = static_cast<int64_t>(bias) + delta;
  if (v < INT32_MIN || v > INT32_MAX || 255 * abs_weights + std::abs(v) > INT32_MAX) return bias;
  return static_cast<int32_t>(v);
}

// Replaces the bias constant of qg's node with `values` (a fresh buffer: constants may be shared
// with other copies of the graph).
void set_bias(Graph& qg, const Node& n, const std::vector<int32_t>& values) {
  Tensor& b = qg.tensor(n.inputs[2]);
  set_const_data(b, values.data(), values.size() * sizeof(int32_t));
}

Status run_float_graph(const Graph& g, const std::vector<CalibrationSample>& samples,
                       const std::function<void(Executor&)>& after_run) {
  std::unique_ptr<Executor> ex;
  Status st = Executor::create_keep_all(g, true, usable_cpus(), &ex);
  if (!st.ok()) return Status(st.code(), "bias correction: " + st.message());
  std::vector<uint8_t> bytes;
  for (const CalibrationSample& sample : samples) {
    if (sample.inputs.size() != g.inputs.size())
      return ORKNN_ERR(kInvalidParam, "bias correction: a sample has %zu inputs, the model %zu", sample.inputs.size(),
                       g.inputs.size());
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      ORKNN_RETURN_IF_ERROR(graph_input_bytes(g.tensor(g.inputs[i].tensor), sample.inputs[i], "float", &bytes));
      ORKNN_RETURN_IF_ERROR(ex->set_input(i, bytes.data(), bytes.size()));
    }
    ORKNN_RETURN_IF_ERROR(ex->run());
    after_run(*ex);
  }
  return Status::Ok();
}

// Custom operators run the application's callbacks in calibration; the executor here would run
// the registry's stand-ins, whose values mean nothing.
bool has_custom_nodes(const Graph& g, const char* what) {
  for (const Node& n : g.nodes)
    if (n.op == OpId::Custom) {
      ORKNN_LOGI("%s skipped: the model has custom operators", what);
      return true;
    }
  return false;
}

// Values quantized with an int8 activation's parameters and dequantized.
void quantize_dequantize(const QuantParams& p, std::vector<float>* v) {
  const float s_x = p.scale[0];
  const int32_t zp_x = p.zero_point[0];
  for (float& e : *v) e = dequantize_value(quantize_value(e, s_x, zp_x), s_x, zp_x);
}

}  // namespace

Status correct_biases(const Graph& float_graph, Graph& quant_graph, const std::vector<CalibrationSample>& samples,
                      BiasDeltas* applied) {
  if (applied) applied->clear();
  if (samples.empty()) return Status::Ok();
  if (has_custom_nodes(float_graph, "bias correction")) return Status::Ok();
  Graph fg = float_graph;  // constants are shared, not copied
  fg.precision = FloatPrecision::kFp32;
  Graph& qg = quant_graph;
  std::vector<Target> targets = find_targets(fg, qg, true, true);
  if (targets.empty()) return Status::Ok();

  // One float run per sample gives both sides: the float input, and the same values quantized
  // with the int8 input's parameters and dequantized (what the int8 node reads when everything
  // before it is exact).
  ORKNN_RETURN_IF_ERROR(run_float_graph(fg, samples, [&](Executor& ex) {
    for (Target& t : targets) {
      const int x = fg.nodes[t.fnode].inputs[0];
      std::vector<float> v = real_values(fg.tensor(x), ex.data(x));
      add_taps(t, v, &t.float_taps);
      quantize_dequantize(qg.tensor(qg.nodes[t.qnode].inputs[0]).quant, &v);
      add_taps(t, v, &t.quant_taps);
      t.items += 1.0;
    }
  }));

  int moved = 0;
  for (Target& t : targets) {
    const Node& fn = fg.nodes[t.fnode];
    const Node& n = qg.nodes[t.qnode];
    const Tensor& fw = fg.tensor(fn.inputs[1]);
    const Tensor* fb = fn.inputs.size() > 2 ? const_input(fg, fn, 2, DType::kF32) : nullptr;
    const float alpha = fn.op == OpId::Gemm ? fn.attrs.get_float("alpha", 1.f) : 1.f;
    const float beta = fn.op == OpId::Gemm ? fn.attrs.get_float("beta", 1.f) : 1.f;
    const Tensor& w = qg.tensor(n.inputs[1]);
    const Tensor& b = qg.tensor(n.inputs[2]);
    if (b.numel() != t.out_ch || b.quant.scale.size() != static_cast<size_t>(t.out_ch)) continue;
    for (double& v : t.float_taps) v /= t.items;
    for (double& v : t.quant_taps) v /= t.items;
    const float* wf = fw.const_ptr<float>();
    const int8_t* wq = w.const_ptr<int8_t>();
    std::vector<int32_t> bias(b.const_ptr<int32_t>(), b.const_ptr<int32_t>() + t.out_ch);
    std::vector<int32_t> delta(static_cast<size_t>(t.out_ch), 0);
    bool changed = false;
    for (int64_t m = 0; m < t.out_ch; ++m) {
      const size_t mi = static_cast<size_t>(m);
      const double fbias = fb ? static_cast<double>(fb->const_ptr<float>()[fb->numel() == 1 ? 0 : m]) * beta : 0.0;
      const double f_mean =
          mean_output(t, m, t.float_taps, [&](int64_t i) { return static_cast<double>(wf[i]) * alpha; }, fbias);
      const double sw = scale_at(w.quant, m), sb = b.quant.scale[mi];
      const double q_mean = mean_output(t, m, t.quant_taps, [&](int64_t i) { return static_cast<double>(wq[i]) * sw; },
                                        static_cast<double>(bias[mi]) * sb);
      const double steps = std::nearbyint((q_mean - f_mean) / sb);
      if (!(std::fabs(steps) >= 1.0) || std::fabs(steps) > 2147483647.0) continue;  // also NaN
      const int32_t before = bias[mi];
      bias[mi] = moved_bias(before, -static_cast<int64_t>(steps), abs_weight_sum(t, wq, m));
      delta[mi] = bias[mi] - before;
      changed |= delta[mi] != 0;
      moved += delta[mi] != 0;
    }
    if (changed) set_bias(qg, n, bias);
    if (applied) (*applied)[t.name] = std::move(delta);
  }
  ORKNN_LOGI("bias correction: %zu int8 Conv/Gemm layers measured on %zu samples, %d channel biases moved",
             targets.size(), samples.size(), moved);
  return Status::Ok();
}

namespace {

// t's weight layout (out_ch, in_ch, group, tap count) from the quantized node alone; false when the
// weight is not a Conv's [out, in / group, k...] or a Gemm's 2-D B.
bool weight_layout_of(const Node& n, const Tensor& w, Target* t) {
  const Shape& ws = w.shape;
  t->conv = n.op == OpId::Conv;
  if (t->conv) {
    if (ws.size() < 3) return false;
    t->group = std::max<int64_t>(n.attrs.get_int("group", 1), 1);
    t->out_ch = ws[0];
    t->in_ch = ws[1] * t->group;
    int64_t taps = 1;
    for (size_t d = 2; d < ws.size(); ++d) taps *= ws[d];
    t->s.kernel[2] = taps;  // the tap count is all the index needs
    return t->out_ch % t->group == 0;
  }
  if (n.op != OpId::Gemm || ws.size() != 2) return false;
  t->trans_b = n.attrs.get_int("transB", 0) != 0;
  t->out_ch = t->trans_b ? ws[0] : ws[1];
  t->in_ch = t->trans_b ? ws[1] : ws[0];
  return true;
}

// |bias[m]| of node n's int32 bias (0 without one), for the accumulator bound.
int64_t abs_bias(const Graph& g, const Node& n, int64_t m) {
  const Tensor* b = n.inputs.size() > 2 ? const_input(g, n, 2, DType::kI32) : nullptr;
  if (!b || b->numel() <= m) return 0;
  return std::abs(static_cast<int64_t>(b->const_ptr<int32_t>()[m]));
}

}  // namespace

Status apply_bias_deltas(Graph& quant_graph, const BiasDeltas& deltas) {
  for (const Node& n : quant_graph.nodes) {
    auto it = deltas.find(n.name);
    if (it == deltas.end() || (n.op != OpId::Conv && n.op != OpId::Gemm) || n.inputs.size() < 3) continue;
    const Tensor* w = const_input(quant_graph, n, 1, DType::kI8);
    const Tensor* b = const_input(quant_graph, n, 2, DType::kI32);
    Target t;
    if (!w || !b || !weight_layout_of(n, *w, &t) || b->numel() != t.out_ch ||
        static_cast<size_t>(b->numel()) != it->second.size())
      continue;
    std::vector<int32_t> bias(b->const_ptr<int32_t>(), b->const_ptr<int32_t>() + b->numel());
    for (int64_t m = 0; m < t.out_ch; ++m)
      bias[static_cast<size_t>(m)] = moved_bias(bias[static_cast<size_t>(m)], it->second[static_cast<size_t>(m)],
                                                abs_weight_sum(t, w->const_ptr<int8_t>(), m));
    set_bias(quant_graph, n, bias);
  }
  return Status::Ok();
}

namespace {

// The input patches adaptive rounding measures a target on: x[(c * taps + k) * rows + r] is the
// value tap k of input channel c reads at the r-th chosen output position (0 in the padding).
struct Patches {
  int64_t rows = 0, per_sample = 0;
  std::vector<float> x;
};

// Adds sample `index`'s rows to p: per_sample output positions (batch items included) spread evenly.
void add_patches(const Target& t, const std::vector<float>& x, size_t index, Patches* p) {
  const int64_t taps = taps_of(t);
  if (!t.conv) {
    for (int64_t r = 0; r < p->per_sample; ++r) {
      const int64_t row = (2 * r + 1) * t.batch / (2 * p->per_sample);
      const int64_t dst_row = static_cast<int64_t>(index) * p->per_sample + r;
      for (int64_t c = 0; c < t.in_ch; ++c) p->x[static_cast<size_t>(c * p->rows + dst_row)] = x[static_cast<size_t>(row * t.in_ch + c)];
    }
    return;
  }
  const SpatialGeometry& s = t.s;
  const int64_t plane = s.out[0] * s.out[1] * s.out[2], positions = t.batch * plane;
  for (int64_t r = 0; r < p->per_sample; ++r) {
    const int64_t pos = (2 * r + 1) * positions / (2 * p->per_sample);
    const int64_t n = pos / plane;
    const int64_t o[3] = {pos % plane / (s.out[1] * s.out[2]), pos % (s.out[1] * s.out[2]) / s.out[2], pos % s.out[2]};
    const int64_t dst_row = static_cast<int64_t>(index) * p->per_sample + r;
    for (int64_t c = 0; c < t.in_ch; ++c) {
      const float* plane_in = x.data() + (n * t.in_ch + c) * s.in_plane();
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t kk[3] = {k / (s.kernel[1] * s.kernel[2]), k % (s.kernel[1] * s.kernel[2]) / s.kernel[2],
                               k % s.kernel[2]};
        int64_t at = 0;
        bool inside = true;
        for (int slot = 0; slot < 3; ++slot) {
          const int64_t i = s.window_input(slot, o[slot], kk[slot]);
          inside &= s.inside_input(slot, i);
          at = at * s.in[slot] + i;
        }
        p->x[static_cast<size_t>((c * taps + k) * p->rows + dst_row)] = inside ? plane_in[at] : 0.f;
      }
    }
  }
}

double dot(const float* a, const float* b, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

// The greedy rounding of one output channel: q (its int8 weights, in tap order), w_over_s = w / s,
// x = the first patch column of its group. Returns the number of flips.
int round_channel(const float* x, int64_t rows, const std::vector<double>& w_over_s, int8_t* q) {
  const int64_t width = static_cast<int64_t>(w_over_s.size());
  std::vector<double> r(static_cast<size_t>(width)), norm(static_cast<size_t>(width));
  std::vector<double> e(static_cast<size_t>(rows), 0.0);
  for (int64_t j = 0; j < width; ++j) {
    const float* xj = x + j * rows;
    r[static_cast<size_t>(j)] = q[j] - w_over_s[static_cast<size_t>(j)];
    norm[static_cast<size_t>(j)] = dot(xj, xj, rows);
    for (int64_t i = 0; i < rows; ++i) e[static_cast<size_t>(i)] += r[static_cast<size_t>(j)] * xj[i];
  }

  int flips = 0;
  for (int sweep = 0; sweep < kAdaptiveRoundingSweeps; ++sweep) {
    int flipped = 0;
    for (int64_t j = 0; j < width; ++j) {
      const double rj = r[static_cast<size_t>(j)];
      if (rj == 0.0) continue;  // on the grid: the other neighbours are a whole step away
      const int d = rj > 0.0 ? -1 : 1;
      if (q[j] + d < -127 || q[j] + d > 127) continue;
      const float* xj = x + j * rows;
      double ex = 0.0;
      for (int64_t i = 0; i < rows; ++i) ex += e[static_cast<size_t>(i)] * xj[i];
      const double gain = 2.0 * d * ex + norm[static_cast<size_t>(j)];  // |X (r + d e_j)|^2 - |X r|^2
      if (!(gain < 0.0)) continue;
      q[j] = static_cast<int8_t>(q[j] + d);
      r[static_cast<size_t>(j)] = rj + d;
      for (int64_t i = 0; i < rows; ++i) e[static_cast<size_t>(i)] += d * xj[i];
      ++flipped;
    }
    flips += flipped;
    if (flipped == 0) break;
  }
  return flips;
}

// Rounds target t's weights on its patches; false when nothing changed.
bool round_target(const Graph& fg, Graph& qg, const Target& t, const Patches& p, std::vector<int8_t>* rounded) {
  const Node& fn = fg.nodes[t.fnode];
  const Node& n = qg.nodes[t.qnode];
  const Tensor& fw = fg.tensor(fn.inputs[1]);
  const Tensor& w = qg.tensor(n.inputs[1]);
  if (fw.numel() != w.numel() || w.numel() != t.out_ch * (t.in_ch / (t.conv ? t.group : 1)) * taps_of(t)) return false;
  const float alpha = fn.op == OpId::Gemm ? fn.attrs.get_float("alpha", 1.f) : 1.f;
  const float* wf = fw.const_ptr<float>();
  rounded->assign(w.const_ptr<int8_t>(), w.const_ptr<int8_t>() + w.numel());
  const WeightIndex wi{t};
  const int64_t taps = taps_of(t), groups = t.conv ? t.group : 1, per_group = t.in_ch / groups;
  const int64_t width = per_group * taps;
  std::atomic<int64_t> next{0};
  std::atomic<int> flips{0};
  auto worker = [&] {
    std::vector<double> w_over_s(static_cast<size_t>(width));
    std::vector<int8_t> q(static_cast<size_t>(width));
    for (int64_t m = next++; m < t.out_ch; m = next++) {
      const double s = scale_at(w.quant, m);
      const int64_t first = m / (t.out_ch / groups) * per_group;  // the group's first input channel
      for (int64_t j = 0; j < width; ++j) {
        const int64_t at = wi.at(m, first + j / taps, j % taps);
        w_over_s[static_cast<size_t>(j)] = static_cast<double>(wf[at]) * alpha / s;
        q[static_cast<size_t>(j)] = (*rounded)[static_cast<size_t>(at)];
      }
      const int f = round_channel(p.x.data() + first * taps * p.rows, p.rows, w_over_s, q.data());
      if (f == 0) continue;
      int64_t abs_sum = 0;
      for (int8_t v : q) abs_sum += std::abs(static_cast<int>(v));
      if (255 * abs_sum + abs_bias(qg, n, m) > INT32_MAX) continue;
      for (int64_t j = 0; j < width; ++j) (*rounded)[static_cast<size_t>(wi.at(m, first + j / taps, j % taps))] = q[static_cast<size_t>(j)];
      flips += f;
    }
  };
  std::vector<std::thread> pool;
  const int threads = std::max(1, std::min<int>(usable_cpus(), static_cast<int>(t.out_ch)));
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (std::thread& th : pool) th.join();
  return flips > 0;
}

// Replaces node n's int8 weight constant with `values` (a fresh buffer, as set_bias).
void set_weights(Graph& qg, const Node& n, const std::vector<int8_t>& values) {
  set_const_data(qg.tensor(n.inputs[1]), values.data(), values.size());
}

}  // namespace

Status round_weights_adaptively(const Graph& float_graph, Graph& quant_graph,
                                const std::vector<CalibrationSample>& samples, RoundedWeights* applied) {
  if (applied) applied->clear();
  if (samples.empty() || has_custom_nodes(float_graph, "adaptive rounding")) return Status::Ok();
  Graph fg = float_graph;  // constants are shared, not copied
  fg.precision = FloatPrecision::kFp32;
  Graph& qg = quant_graph;
  std::vector<Target> targets = find_targets(fg, qg, false, false);
  if (targets.empty()) return Status::Ok();
  const int64_t count = static_cast<int64_t>(samples.size());
  std::vector<Patches> patches(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    const Target& t = targets[i];
    const int64_t positions = t.batch * (t.conv ? t.s.out[0] * t.s.out[1] * t.s.out[2] : 1);
    Patches& p = patches[i];
    p.per_sample = std::max<int64_t>(1, std::min(positions, (kAdaptiveRoundingRows + count - 1) / count));
    p.rows = p.per_sample * count;
    p.x.assign(static_cast<size_t>(t.in_ch * taps_of(t) * p.rows), 0.f);
  }
  size_t index = 0;
  ORKNN_RETURN_IF_ERROR(run_float_graph(fg, samples, [&](Executor& ex) {
    for (size_t i = 0; i < targets.size(); ++i) {
      const Target& t = targets[i];
      const int x = fg.nodes[t.fnode].inputs[0];
      std::vector<float> v = real_values(fg.tensor(x), ex.data(x));
      quantize_dequantize(qg.tensor(qg.nodes[t.qnode].inputs[0]).quant, &v);
      add_patches(t, v, index, &patches[i]);
    }
    ++index;
  }));
  int changed = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    std::vector<int8_t> rounded;
    const bool moved = round_target(fg, qg, targets[i], patches[i], &rounded);
    std::vector<float>().swap(patches[i].x);
    if (!moved) continue;
    set_weights(qg, qg.nodes[targets[i].qnode], rounded);
    if (applied) (*applied)[targets[i].name] = std::move(rounded);
    ++changed;
  }
  ORKNN_LOGI("adaptive rounding: %zu int8 Conv/Gemm layers measured on %zu samples, %d rounded differently",
             targets.size(), samples.size(), changed);
  return Status::Ok();
}

Status apply_rounded_weights(Graph& quant_graph, const RoundedWeights& weights) {
  for (const Node& n : quant_graph.nodes) {
    auto it = weights.find(n.name);
    if (it == weights.end() || (n.op != OpId::Conv && n.op != OpId::Gemm) || n.inputs.size() < 2) continue;
    const Tensor* w = const_input(quant_graph, n, 1, DType::kI8);
    Target t;
    if (!w || !weight_layout_of(n, *w, &t) || static_cast<size_t>(w->numel()) != it->second.size()) continue;
    bool fits = true;
    for (int64_t m = 0; m < t.out_ch && fits; ++m)
      fits = 255 * abs_weight_sum(t, it->second.data(), m) + abs_bias(quant_graph, n, m) <= INT32_MAX;
    if (fits) set_weights(quant_graph, n, it->second);
  }
  return Status::Ok();
}

}  // namespace orknn
