// The INT8 rewrite of a float graph; see quantize.h and docs/convert.md ("Quantization").
//
// Order of work: (1) candidate nodes (an int8 reference kernel, not a --float-layers name, float
// data); (2) activation parameters from ranges or given ones; (3) propagation (Concat inputs share
// the output's parameters, data movement keeps its input's); (4) each candidate is tried in its
// quantized form on a small copy of itself through its op's infer, which accepts exactly what the
// int8 kernel handles; a refusal keeps the node float and steps 3-4 repeat; (5) the graph is
// rewritten: quantized constants, int8 tensors, QuantizeLinear/DequantizeLinear on the edges.
#include "converter/quant/quantize.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <tuple>

#include "common/log.h"
#include "converter/quant/observer.h"
#include "graph/passes/passes.h"
#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"

namespace orknn {
namespace {

using Ranges = std::map<int, std::pair<float, float>>;
using ParamMap = std::map<int, QuantParams>;

bool is_compute_op(OpId op) {
  return op == OpId::Conv || op == OpId::ConvTranspose || op == OpId::Gemm || op == OpId::MatMul;
}

bool is_qdq_op(OpId op) { return op == OpId::QuantizeLinear || op == OpId::DequantizeLinear; }

// Ops whose int8 outputs carry their input 0's parameters (the bytes move unchanged; MaxPool's
// maximum of int8 values is itself one of them).
bool keeps_input_params(const Node& n) {
  switch (n.op) {
    case OpId::Reshape: case OpId::Flatten: case OpId::Transpose: case OpId::Squeeze: case OpId::Unsqueeze:
    case OpId::Slice: case OpId::Split: case OpId::Identity: case OpId::Dropout: case OpId::DepthToSpace:
    case OpId::SpaceToDepth: case OpId::Gather: case OpId::Tile: case OpId::Expand: case OpId::Pad:
    case OpId::MaxPool: case OpId::GlobalMaxPool:
      return true;
    case OpId::Resize:
      return n.attrs.get_string("mode", "nearest") == "nearest";
    default:
      return false;
  }
}

bool is_activation(const Tensor& t) { return t.dtype == DType::kF32 && !t.is_const() && t.quant.empty(); }
bool is_float_const(const Tensor& t) { return t.dtype == DType::kF32 && t.is_const(); }

QuantParams per_tensor_params(float scale, int32_t zp) {
  QuantParams q;
  q.scale = {scale};
  q.zero_point = {zp};
  q.axis = -1;
  return q;
}

QuantParams params_from_range(float lo, float hi) {
  float scale = 1.f;
  int32_t zp = 0;
  activation_qparams(lo, hi, &scale, &zp);
  return per_tensor_params(scale, zp);
}

std::string join_names(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "'" : ", '") + s + "'";
  return r;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// --float-layers names -> node indices. A name is a node's name or the name of a tensor a node
// writes (fusion keeps the node but its output may carry the fused activation's tensor name).
Status resolve_float_layers(const Graph& g, const std::vector<std::string>& names, std::vector<char>* keep_float) {
  keep_float->assign(g.nodes.size(), 0);
  for (const std::string& name : names) {
    bool found = false;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i].name == name) { (*keep_float)[i] = 1; found = true; }
    if (!found) {
      for (size_t i = 0; i < g.nodes.size() && !found; ++i)
        for (int t : g.nodes[i].outputs)
          if (t >= 0 && g.tensor(t).name == name) { (*keep_float)[i] = 1; found = true; }
    }
    if (found) continue;
    // The nearest names help with typos and with nodes renamed or fused by the passes.
    std::vector<std::pair<size_t, std::string>> near;
    for (const Node& n : g.nodes)
      if (!is_qdq_op(n.op)) near.emplace_back(edit_distance(name, n.name), n.name);
    std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> some;
    for (size_t i = 0; i < near.size() && some.size() < 6; ++i) some.push_back(near[i].second);
    return ORKNN_ERR(kInvalidParam,
                     "--float-layers: no node named '%s' in the converted graph (%zu nodes; nodes the graph passes "
                     "fused away, such as BatchNormalization or an activation after a Conv, no longer exist; "
                     "name the node they were fused into). Nearest names: %s",
                     name.c_str(), g.nodes.size(), join_names(some).c_str());
  }
  return Status::Ok();
}

// ---- quantized constants ----

// Shape of one output channel's weights, for the int32 overflow bound and the weight axis.
struct ComputeLayout {
  int weight_input = -1;  // input index of the constant weight, -1 when there is none
  int axis = -1;          // output-channel axis of the weight, -1: per tensor only
  int bias_input = -1;    // input index of a constant bias, -1 when absent
};

ComputeLayout compute_layout(const Graph& g, const Node& n) {
  ComputeLayout l;
  const Tensor* w = g.input(n, 1);
  if (!w || !is_float_const(*w)) return l;
  l.weight_input = 1;
  switch (n.op) {
    case OpId::Conv:
      l.axis = 0;
      break;
    case OpId::ConvTranspose:
      l.axis = n.attrs.get_int("group", 1) == 1 ? 1 : -1;
      break;
    case OpId::Gemm:
      l.axis = n.attrs.get_int("transB", 0) ? 0 : 1;
      break;
    case OpId::MatMul:
      l.axis = w->shape.size() == 2 ? 1 : -1;
      break;
    default:
      break;
  }
  if (n.op != OpId::MatMul) {
    const Tensor* b = g.input(n, 2);
    if (b && is_float_const(*b)) l.bias_input = 2;
  }
  return l;
}

// Float values of a constant after Gemm's alpha/beta are folded in.
std::vector<float> const_values(const Tensor& t, float factor) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  const float* p = t.const_ptr<float>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = factor == 1.f ? p[i] : p[i] * factor;
  return v;
}

bool symmetric_int8_weights(const QuantizedConstant& c, int64_t numel) {
  if (c.dtype != DType::kI8 || c.params.scale.empty() || static_cast<int64_t>(c.bytes.size()) != numel) return false;
  for (int32_t zp : c.params.zero_point)
    if (zp != 0) return false;
  for (float s : c.params.scale)
    if (!(s > 0.f) || !std::isfinite(s)) return false;
  for (uint8_t b : c.bytes)
    if (static_cast<int8_t>(b) == -128) return false;
  return true;
}

class ConstQuantizer {
 public:
  ConstQuantizer(const QuantizeSettings& s) : s_(s) {}

  // Each function reads constant `id` of g (the graph being rewritten, or a scratch copy of one
  // node) and looks up given values and earlier results under `key`, the tensor's id in the graph
  // quantize_graph was called with.

  // Symmetric int8 weights (values scaled by `factor`), per channel along `axis` (-1: per tensor).
  // *given: the model's own values were used (they must stay as they are).
  Status weights(const Graph& g, int id, int key, float factor, int axis, QuantizedConstant* out, bool* given_used) {
    const Tensor& w = g.tensor(id);
    *given_used = false;
    if (factor == 1.f) {
      auto given = s_.given_constants.find(key);
      if (given != s_.given_constants.end()) {
        const QuantizedConstant& c = given->second;
        const bool axis_ok = c.params.scale.size() == 1 ||
                             (c.params.axis >= 0 && static_cast<size_t>(c.params.axis) < w.shape.size() &&
                              static_cast<int64_t>(c.params.scale.size()) == w.shape[static_cast<size_t>(c.params.axis)] &&
                              (c.params.axis == axis));
        if (symmetric_int8_weights(c, w.numel()) && axis_ok) {
          *out = c;
          *given_used = true;
          return Status::Ok();
        }
        if (warned_.insert(key).second)
          ORKNN_LOGW("weights '%s': the model's quantized values are not symmetric int8 in [-127, 127] per output "
                     "channel; quantizing the float values again", w.name.c_str());
      }
    }
    const int use_axis = s_.weights == WeightGranularity::kPerTensor ? -1 : axis;
    const auto cache_key = std::make_tuple(key, use_axis, factor);
    auto it = cache_.find(cache_key);
    if (it != cache_.end()) {
      *out = it->second;
      return Status::Ok();
    }
    Tensor tmp = w;
    std::vector<float> scaled;
    if (factor != 1.f) {
      scaled = const_values(w, factor);
      tmp.data = ConstData{};
      set_const_data(tmp, scaled.data(), scaled.size() * sizeof(float));
    }
    std::vector<int8_t> q;
    QuantParams params;
    ORKNN_RETURN_IF_ERROR(quantize_weights(tmp, use_axis, &q, &params));
    QuantizedConstant c;
    c.dtype = DType::kI8;
    c.bytes.assign(reinterpret_cast<const uint8_t*>(q.data()), reinterpret_cast<const uint8_t*>(q.data()) + q.size());
    c.params = params;
    cache_.emplace(cache_key, c);
    *out = std::move(c);
    return Status::Ok();
  }

  // Per-tensor asymmetric int8 of an operand constant (its own min/max).
  QuantizedConstant operand(const Graph& g, int id, int key) {
    const Tensor& t = g.tensor(id);
    auto given = s_.given_constants.find(key);
    if (given != s_.given_constants.end() && given->second.dtype == DType::kI8 &&
        given->second.params.scale.size() == 1 && static_cast<int64_t>(given->second.bytes.size()) == t.numel())
      return given->second;
    const float* p = t.const_ptr<float>();
    float lo = 0.f, hi = 0.f;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (!std::isfinite(p[i])) continue;
      lo = std::min(lo, p[i]);
      hi = std::max(hi, p[i]);
    }
    QuantizedConstant c;
    c.dtype = DType::kI8;
    c.params = params_from_range(lo, hi);
    c.bytes.resize(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i)
      c.bytes[static_cast<size_t>(i)] =
          static_cast<uint8_t>(quantize_value(p[i], c.params.scale[0], c.params.zero_point[0]));
    return c;
  }

  // int32 bias: scale s_x * s_w[c], bias_q[c] = clamp_int32(rne(bias[c] / scale[c])) in float64.
  // `channels` output channels; a bias of one value is broadcast to all of them.
  Status bias(const Graph& g, int id, int key, float factor, float s_x, const QuantParams& w, int64_t channels,
              QuantizedConstant* out, std::string* why) {
    const Tensor& b = g.tensor(id);
    if (b.numel() != channels && b.numel() != 1) {
      *why = strfmt("bias '%s' %s is not one value per output channel (%lld)", b.name.c_str(), shape_str(b.shape).c_str(),
                    static_cast<long long>(channels));
      return Status::Ok();
    }
    QuantParams params;
    params.axis = 0;
    params.scale.resize(static_cast<size_t>(channels));
    params.zero_point.assign(static_cast<size_t>(channels), 0);
    for (int64_t c = 0; c < channels; ++c)
      params.scale[static_cast<size_t>(c)] = s_x * (w.scale.size() == 1 ? w.scale[0] : w.scale[static_cast<size_t>(c)]);
    if (factor == 1.f && b.numel() == channels) {
      auto given = s_.given_constants.find(key);
      if (given != s_.given_constants.end() && given->second.dtype == DType::kI32 &&
          static_cast<int64_t>(given->second.bytes.size()) == channels * 4) {
        const QuantParams& gp = given->second.params;
        bool same = true;
        for (int64_t c = 0; c < channels && same; ++c) {
          const float gs = gp.scale.size() == 1 ? gp.scale[0] : (static_cast<int64_t>(gp.scale.size()) == channels
                                                                      ? gp.scale[static_cast<size_t>(c)] : -1.f);
          same = gs == params.scale[static_cast<size_t>(c)];
        }
        for (int32_t zp : gp.zero_point) same = same && zp == 0;
        if (same) {
          *out = given->second;
          out->params = params;
          return Status::Ok();
        }
      }
    }
    const float* p = b.const_ptr<float>();
    std::vector<int32_t> q(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      const float v = p[b.numel() == 1 ? 0 : c] * factor;
      const double r = std::nearbyint(static_cast<double>(v) / static_cast<double>(params.scale[static_cast<size_t>(c)]));
      q[static_cast<size_t>(c)] = !(r == r) ? 0 : (r > INT32_MAX ? INT32_MAX : (r < INT32_MIN ? INT32_MIN : static_cast<int32_t>(r)));
    }
    out->dtype = DType::kI32;
    out->params = std::move(params);
    out->bytes.assign(reinterpret_cast<const uint8_t*>(q.data()), reinterpret_cast<const uint8_t*>(q.data()) + q.size() * 4);
    return Status::Ok();
  }

 private:
  const QuantizeSettings& s_;
  std::map<std::tuple<int, int, float>, QuantizedConstant> cache_;
  std::set<int> warned_;
};

// A channel whose weights are all nearly zero gets a tiny s_w, and its bias b / (s_x * s_w) may not
// fit int32 next to the accumulation. Such a channel's weight scale is raised until
// |b| / (s_x * s_w) <= 2^30 and its weights are quantized again with it (q = clamp(rne(w / s),
// -127, 127), as quantize_weights does); other channels keep theirs.
void fit_bias(const Tensor& w, float w_factor, int axis, const Tensor& b, float b_factor, float s_x, int64_t channels,
              QuantizedConstant* qw) {
  constexpr double kMaxBias = 1073741824.0;  // 2^30
  std::vector<float>& scale = qw->params.scale;
  const bool per_channel = scale.size() > 1;
  bool changed = false;
  for (int64_t c = 0; c < channels; ++c) {
    const double bias = std::fabs(static_cast<double>(b.const_ptr<float>()[b.numel() == 1 ? 0 : c] * b_factor));
    float& s = scale[per_channel ? static_cast<size_t>(c) : 0];
    if (!(bias / (static_cast<double>(s_x) * static_cast<double>(s)) > kMaxBias)) continue;
    float needed = static_cast<float>(bias / (static_cast<double>(s_x) * kMaxBias));
    while (bias / (static_cast<double>(s_x) * static_cast<double>(needed)) > kMaxBias)
      needed = std::nextafter(needed, std::numeric_limits<float>::infinity());
    s = std::max(s, needed);
    changed = true;
  }
  if (!changed) return;
  ORKNN_LOGI("weights '%s': weight scale raised on channels whose bias would overflow int32", w.name.c_str());
  const float* p = w.const_ptr<float>();
  int64_t inner = 1, dim = 1;
  if (per_channel && axis >= 0) {
    dim = w.shape[static_cast<size_t>(axis)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < w.shape.size(); ++d) inner *= w.shape[d];
  }
  for (int64_t i = 0; i < w.numel(); ++i) {
    const float v = w_factor == 1.f ? p[i] : p[i] * w_factor;
    const float s = scale[per_channel ? static_cast<size_t>((i / inner) % dim) : 0];
    const float q = std::max(-127.f, std::min(127.f, std::nearbyint(v / s)));
    qw->bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(static_cast<int8_t>(q));
  }
}

// Largest |accumulator| a compute node can reach: per output channel, 255 * sum|w| over the
// weights that feed one output value, plus |bias|. `w` has the weight's shape.
int64_t worst_case_accumulator(const Node& n, const Shape& shape, const int8_t* w, const int32_t* bias) {
  const int64_t numel = shape_numel(shape);
  auto at = [&](int64_t i) { return static_cast<int64_t>(std::abs(static_cast<int>(w[i]))); };
  std::vector<int64_t> sums;      // per output (channel, or batch x column for MatMul)
  std::vector<int64_t> channel;   // its bias channel
  if (n.op == OpId::Conv) {
    const int64_t m = std::max<int64_t>(shape[0], 1), inner = numel / m;
    sums.assign(static_cast<size_t>(m), 0);
    for (int64_t i = 0; i < numel; ++i) sums[static_cast<size_t>(i / inner)] += at(i);
    for (int64_t c = 0; c < m; ++c) channel.push_back(c);
  } else if (n.op == OpId::ConvTranspose) {
    // W [C, M/group, k...]: output channel g*(M/group)+j reads W[c, j, :] for the c of group g.
    const int64_t c = shape[0], mg = shape[1], group = std::max<int64_t>(n.attrs.get_int("group", 1), 1);
    const int64_t k = numel / std::max<int64_t>(c * mg, 1), cg = std::max<int64_t>(c / group, 1);
    sums.assign(static_cast<size_t>(mg * group), 0);
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t j = 0; j < mg; ++j)
        for (int64_t t = 0; t < k; ++t) sums[static_cast<size_t>((ci / cg) * mg + j)] += at((ci * mg + j) * k + t);
    for (int64_t o = 0; o < mg * group; ++o) channel.push_back(o);
  } else if (n.op == OpId::Gemm && n.attrs.get_int("transB", 0) != 0) {
    const int64_t nn = shape[0], kk = shape[1];
    sums.assign(static_cast<size_t>(nn), 0);
    for (int64_t i = 0; i < nn * kk; ++i) sums[static_cast<size_t>(i / kk)] += at(i);
    for (int64_t o = 0; o < nn; ++o) channel.push_back(o);
  } else {
    // Columns of [..., K, N] (a 1-D B is one column).
    const int64_t cols = shape.size() >= 2 ? shape.back() : 1;
    const int64_t kk = shape.size() >= 2 ? shape[shape.size() - 2] : shape[0];
    const int64_t batches = numel / std::max<int64_t>(kk * cols, 1);
    sums.assign(static_cast<size_t>(batches * cols), 0);
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t r = 0; r < kk; ++r)
        for (int64_t c = 0; c < cols; ++c) sums[static_cast<size_t>(b * cols + c)] += at((b * kk + r) * cols + c);
    for (int64_t o = 0; o < batches * cols; ++o) channel.push_back(o % cols);
  }
  int64_t worst = 0;
  for (size_t o = 0; o < sums.size(); ++o) {
    const int64_t b = bias ? std::abs(static_cast<int64_t>(bias[channel[o]])) : 0;
    worst = std::max(worst, 255 * sums[o] + b);
  }
  return worst;
}

// Rewrites node n of g into its quantized form (constants only; activation tensors are set by the
// caller): weights int8, bias int32, operand constants int8, Gemm alpha/beta folded. `act_params`
// gives the parameters of n's activation inputs. *why is set (and g left partly changed, which
// callers only allow on scratch graphs) when the node cannot be quantized.
using NameFn = std::function<std::string(const std::string&)>;
using KeyFn = std::function<int(int)>;

// `key_of` maps a tensor id of g to its id in the graph quantize_graph was called with.
Status quantize_node_constants(Graph& g, Node& n, const std::function<const QuantParams*(int)>& act_params,
                               ConstQuantizer& cq, const NameFn& unique_name, const KeyFn& key_of, std::string* why) {
  why->clear();
  std::vector<char> done(n.inputs.size(), 0);
  if (is_compute_op(n.op)) {
    const ComputeLayout l = compute_layout(g, n);
    float w_factor = 1.f, b_factor = 1.f;
    if (n.op == OpId::Gemm) {
      const float alpha = n.attrs.get_float("alpha", 1.f), beta = n.attrs.get_float("beta", 1.f);
      if (alpha != 1.f && l.weight_input < 0) {
        *why = "Gemm alpha != 1 with a non-constant B";
        return Status::Ok();
      }
      const Tensor* c = g.input(n, 2);
      if (beta != 1.f && c && !c->is_const()) {
        *why = "Gemm beta != 1 with a non-constant C";
        return Status::Ok();
      }
      w_factor = alpha;
      b_factor = beta;
    }
    if (l.weight_input >= 0) {
      const int wid = n.inputs[static_cast<size_t>(l.weight_input)];
      QuantizedConstant qw;
      bool weights_given = false;
      ORKNN_RETURN_IF_ERROR(cq.weights(g, wid, key_of(wid), w_factor, l.axis, &qw, &weights_given));
      const std::string wname = g.tensor(wid).name;
      const Shape wshape = g.tensor(wid).shape;

      int64_t channels = 1;
      if (n.op == OpId::ConvTranspose) channels = wshape[1] * std::max<int64_t>(n.attrs.get_int("group", 1), 1);
      else if (n.op == OpId::Conv) channels = wshape[0];
      else if (n.op == OpId::Gemm) channels = n.attrs.get_int("transB", 0) ? wshape[0] : wshape[1];
      else channels = wshape.size() >= 2 ? wshape.back() : 1;

      QuantizedConstant qb;
      int bid = -1;
      if (l.bias_input >= 0) {
        const QuantParams* x = act_params(n.inputs[0]);
        if (!x) {
          *why = strfmt("no parameters for input '%s'", g.tensor(n.inputs[0]).name.c_str());
          return Status::Ok();
        }
        bid = n.inputs[static_cast<size_t>(l.bias_input)];
        const Tensor& bt = g.tensor(bid);
        // Gemm's C must broadcast along the output channels: [N], [1, N] or a single value
        // ([M, 1] broadcasts along rows and has no per-channel int32 form).
        if (bt.numel() != 1 && (bt.shape.empty() || bt.shape.back() != channels || bt.numel() != channels)) {
          *why = strfmt("bias '%s' %s is not one value per output channel (%lld)", bt.name.c_str(),
                        shape_str(bt.shape).c_str(), static_cast<long long>(channels));
          return Status::Ok();
        }
        if (!weights_given) fit_bias(g.tensor(wid), w_factor, l.axis, bt, b_factor, x->scale[0], channels, &qw);
        ORKNN_RETURN_IF_ERROR(cq.bias(g, bid, key_of(bid), b_factor, x->scale[0], qw.params, channels, &qb, why));
        if (!why->empty()) return Status::Ok();
      }
      const int64_t worst = worst_case_accumulator(n, wshape, reinterpret_cast<const int8_t*>(qw.bytes.data()),
                                                   bid < 0 ? nullptr : reinterpret_cast<const int32_t*>(qb.bytes.data()));
      if (worst > INT32_MAX) {
        *why = "the int32 accumulator could overflow (reduction too long)";
        return Status::Ok();
      }
      const int qid = g.add_const(unique_name(wname + "_int8"), wshape, DType::kI8, qw.bytes.data(), qw.bytes.size());
      g.tensor(qid).quant = qw.params;
      n.inputs[static_cast<size_t>(l.weight_input)] = qid;
      done[static_cast<size_t>(l.weight_input)] = 1;
      if (bid >= 0) {
        const int qbid = g.add_const(unique_name(g.tensor(bid).name + "_int32"), {channels}, DType::kI32,
                                     qb.bytes.data(), qb.bytes.size());
        g.tensor(qbid).quant = qb.params;
        n.inputs[static_cast<size_t>(l.bias_input)] = qbid;
        done[static_cast<size_t>(l.bias_input)] = 1;
      }
      if (n.op == OpId::Gemm) {
        n.attrs.set_float("alpha", 1.f);
        n.attrs.set_float("beta", 1.f);
      }
    } else if (n.op == OpId::MatMul || n.op == OpId::Gemm) {
      // Two activations: K terms of at most 255 * 255 each.
      const Tensor* a = g.input(n, 0);
      const int64_t k = a && !a->shape.empty()
                            ? (n.op == OpId::Gemm && n.attrs.get_int("transA", 0) ? a->shape[0] : a->shape.back())
                            : 0;
      if (k * 255 * 255 > INT32_MAX) {
        *why = "the int32 accumulator could overflow (reduction too long)";
        return Status::Ok();
      }
    }
  }
  // Any other float constant (Add/Sub/Mul operands, Concat pieces, a constant MatMul A, Gemm's C
  // beside a non-constant B): per tensor, its own min/max.
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (done[i] || n.inputs[i] < 0) continue;
    const int id = n.inputs[i];
    if (!is_float_const(g.tensor(id))) continue;
    QuantizedConstant c = cq.operand(g, id, key_of(id));
    const Tensor& t = g.tensor(id);
    const std::string qname = unique_name(t.name + "_int8");
    const Shape shape = t.shape;
    const int qid = g.add_const(qname, shape, DType::kI8, c.bytes.data(), c.bytes.size());
    g.tensor(qid).quant = c.params;
    n.inputs[i] = qid;
  }
  return Status::Ok();
}

// ---- decisions ----

struct Decision {
  bool int8 = false;
  std::string why;  // float nodes
};

class Quantizer {
 public:
  Quantizer(Graph& g, const Ranges& ranges, const QuantizeSettings& s) : g_(g), ranges_(ranges), s_(s), cq_(s) {}

  Status run(std::vector<ConvertReport::LayerPrecision>* table);

 private:
  bool narrow_piece_of_output_concat(const Node& n) const;
  void base_params();
  void propagate();
  bool activation_param(int t, QuantParams* out) const;
  Status try_node(size_t i, std::string* why);
  Status rewrite();
  int new_tensor_name_id(const std::string& base, const Shape& shape, DType dtype);
  std::string unique_tensor_name(const std::string& base);
  std::string unique_node_name(const std::string& base);

  Graph& g_;
  const Ranges& ranges_;
  const QuantizeSettings& s_;
  ConstQuantizer cq_;
  std::vector<Decision> dec_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> producers_;
  ParamMap base_, params_;
  std::set<std::string> tensor_names_, node_names_;
};

void Quantizer::base_params() {
  base_.clear();
  for (size_t t = 0; t < g_.tensors.size(); ++t) {
    const Tensor& tensor = g_.tensors[t];
    if (!is_activation(tensor)) continue;
    const int id = static_cast<int>(t);
    auto given = s_.given_activations.find(id);
    if (given != s_.given_activations.end()) {
      base_[id] = given->second;
      continue;
    }
    auto r = ranges_.find(id);
    if (r != ranges_.end() && std::isfinite(r->second.first) && std::isfinite(r->second.second) &&
        r->second.first <= r->second.second)
      base_[id] = params_from_range(r->second.first, r->second.second);
  }
}

// A Concat that writes a graph output, with an input whose range spans less than 1/32 of the
// output's: 8 steps or fewer of the one int8 scale the int8 Concat writes. A YOLO head's output
// joins box coordinates (up to the image size) and class scores (near 1e-4 on fresh weights, and
// small for a trained model's background): in int8 every score would be 0. Kept float, each piece
// keeps its own scale, and the Concat only moves the dequantized values into the output, which is
// float in any case.
bool Quantizer::narrow_piece_of_output_concat(const Node& n) const {
  constexpr float kSpanRatio = 32.f;
  if (n.outputs.empty() || !is_graph_output(g_, n.outputs[0])) return false;
  auto span = [&](int t) {
    auto r = ranges_.find(t);
    if (r == ranges_.end() || !std::isfinite(r->second.first) || !std::isfinite(r->second.second)) return -1.f;
    return std::max(r->second.second, 0.f) - std::min(r->second.first, 0.f);  // the observer's range has 0
  };
  const float out = span(n.outputs[0]);
  if (out <= 0) return false;
  for (int t : n.inputs)
    if (t >= 0 && is_activation(g_.tensor(t)) && span(t) >= 0 && span(t) * kSpanRatio < out) return true;
  return false;
}

// Parameters after the sharing rules, for the current int8 decisions.
void Quantizer::propagate() {
  params_ = base_;
  // Concat: an input whose only reader is this Concat takes the Concat output's parameters when
  // what writes it requantizes anyway (an int8 compute/table op, a float node followed by a
  // QuantizeLinear, a graph input), looking through data movement of one output and one reader.
  // Outer Concats first, so that a Concat feeding another passes the outer parameters on.
  if (s_.share_concat_params) {
    for (size_t i = g_.nodes.size(); i-- > 0;) {
      const Node& n = g_.nodes[i];
      if (n.op != OpId::Concat || !dec_[i].int8) continue;
      auto out = params_.find(n.outputs[0]);
      if (out == params_.end()) continue;
      const QuantParams shared = out->second;
      for (int x : n.inputs) {
        if (x < 0 || !is_activation(g_.tensor(x))) continue;
        std::vector<int> chain;
        int t = x;
        bool ok = false;
        for (int guard = 0; guard < 64; ++guard) {
          if (s_.given_activations.count(t) || consumers_[static_cast<size_t>(t)].size() != 1 || is_graph_output(g_, t))
            break;
          chain.push_back(t);
          const int p = producers_[static_cast<size_t>(t)];
          if (p >= 0 && dec_[static_cast<size_t>(p)].int8 && keeps_input_params(g_.nodes[static_cast<size_t>(p)])) {
            const Node& mover = g_.nodes[static_cast<size_t>(p)];
            const int src = mover.inputs.empty() ? -1 : mover.inputs[0];
            if (mover.outputs.size() != 1 || src < 0 || !is_activation(g_.tensor(src))) break;
            t = src;
            continue;
          }
          ok = true;
          break;
        }
        if (!ok) continue;
        for (int c : chain) params_[c] = shared;
      }
    }
  }
  // Data movement, MaxPool, Resize nearest: outputs carry the input's parameters.
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const Node& n = g_.nodes[i];
    if (!dec_[i].int8 || !keeps_input_params(n) || n.inputs.empty() || n.inputs[0] < 0) continue;
    auto in = params_.find(n.inputs[0]);
    if (in == params_.end()) continue;
    const QuantParams p = in->second;
    for (int o : n.outputs)
      if (o >= 0 && !s_.given_activations.count(o)) params_[o] = p;
  }
}

bool Quantizer::activation_param(int t, QuantParams* out) const {
  auto it = params_.find(t);
  if (it == params_.end()) return false;
  *out = it->second;
  return true;
}

// Builds node i's quantized form on a scratch graph holding only its tensors and runs its infer.
Status Quantizer::try_node(size_t i, std::string* why) {
  const Node& n = g_.nodes[i];
  Graph scratch;
  scratch.precision = g_.precision;
  std::map<int, int> remap;
  auto copy = [&](int t) -> int {
    if (t < 0) return -1;
    auto it = remap.find(t);
    if (it != remap.end()) return it->second;
    scratch.tensors.push_back(g_.tensor(t));
    const int id = static_cast<int>(scratch.tensors.size()) - 1;
    remap[t] = id;
    return id;
  };
  Node q = n;
  for (int& t : q.inputs) t = copy(t);
  for (int& t : q.outputs) t = copy(t);
  for (const auto& kv : remap) {
    Tensor& t = scratch.tensors[static_cast<size_t>(kv.second)];
    if (!is_activation(t)) continue;
    QuantParams p;
    if (!activation_param(kv.first, &p)) {
      *why = ranges_.empty()
                 ? strfmt("no quantization parameters for tensor '%s' in the model", t.name.c_str())
                 : strfmt("no range for tensor '%s' (the calibration data never reached it)", t.name.c_str());
      return Status::Ok();
    }
    t.dtype = DType::kI8;
    t.quant = p;
  }
  auto lookup = [&](int scratch_id) -> const QuantParams* {
    const Tensor& t = scratch.tensor(scratch_id);
    return t.quant.empty() ? nullptr : &t.quant;
  };
  std::map<int, int> original;  // scratch id -> id in g_
  for (const auto& kv : remap) original[kv.second] = kv.first;
  ORKNN_RETURN_IF_ERROR(quantize_node_constants(
      scratch, q, lookup, cq_, [](const std::string& s) { return s; },
      [&](int id) {
        auto it = original.find(id);
        return it == original.end() ? -1 : it->second;
      },
      why));
  if (!why->empty()) return Status::Ok();
  const OpDef* def = find_op(q.op);
  if (!def || !def->infer) {
    *why = "op has no shape inference";
    return Status::Ok();
  }
  Status st = def->infer(scratch, q);
  if (!st.ok()) {
    *why = "int8 form refused: " + st.message();
    return Status::Ok();
  }
  for (int o : q.outputs)
    if (o >= 0 && scratch.tensor(o).dtype != DType::kI8) {
      *why = strfmt("int8 form refused: output '%s' would be %s", scratch.tensor(o).name.c_str(),
                    dtype_name(scratch.tensor(o).dtype));
      return Status::Ok();
    }
  return Status::Ok();
}

std::string Quantizer::unique_tensor_name(const std::string& base) {
  std::string name = base;
  for (int k = 1; tensor_names_.count(name); ++k) name = base + "_" + std::to_string(k);
  tensor_names_.insert(name);
  return name;
}

int Quantizer::new_tensor_name_id(const std::string& base, const Shape& shape, DType dtype) {
  return g_.add_tensor(unique_tensor_name(base), shape, dtype);
}

std::string Quantizer::unique_node_name(const std::string& base) {
  std::string name = base;
  for (int k = 1; node_names_.count(name); ++k) name = base + "_" + std::to_string(k);
  node_names_.insert(name);
  return name;
}

Status Quantizer::run(std::vector<ConvertReport::LayerPrecision>* table) {
  std::vector<char> keep_float;
  ORKNN_RETURN_IF_ERROR(resolve_float_layers(g_, s_.float_layers, &keep_float));
  consumers_ = tensor_consumers(g_);
  producers_ = tensor_producers(g_);

  // 1. candidates
  dec_.assign(g_.nodes.size(), Decision{});
  // Custom nodes compute in the application's callbacks, in float. Calibration runs a stand-in
  // (src/kernels/ref/custom.cc) for the types no --custom-op-lib gave: every node computed from
  // their outputs stays float, so no quantization parameter comes from stand-in values
  // (docs/custom_ops.md).
  std::vector<char> after_custom(g_.tensors.size(), 0);
  for (const Node& n : g_.nodes) {
    bool tainted = n.op == OpId::Custom && !s_.calibrated_custom_types.count(n.attrs.get_string("custom_type", ""));
    for (int t : n.inputs) tainted |= t >= 0 && after_custom[static_cast<size_t>(t)];
    if (tainted)
      for (int t : n.outputs)
        if (t >= 0) after_custom[static_cast<size_t>(t)] = 1;
  }
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const Node& n = g_.nodes[i];
    Decision& d = dec_[i];
    if (is_qdq_op(n.op)) {
      d.why = "quantize/dequantize";
      continue;
    }
    if (n.op == OpId::Custom) { d.why = "custom operator (runs in float)"; continue; }
    bool from_custom = false;
    for (int t : n.inputs) from_custom |= t >= 0 && after_custom[static_cast<size_t>(t)];
    if (from_custom) {
      d.why = "computed from a custom operator's output (not calibrated: give its callbacks with --custom-op-lib)";
      continue;
    }
    if (keep_float[i]) { d.why = "--float-layers"; continue; }
    if (!has_quantized_ref_kernel(n.op)) { d.why = "no int8 kernel"; continue; }
    bool outputs_float = !n.outputs.empty(), has_activation_input = false;
    for (int o : n.outputs)
      if (o >= 0 && !is_activation(g_.tensor(o))) outputs_float = false;
    for (int t : n.inputs)
      if (t >= 0 && is_activation(g_.tensor(t))) has_activation_input = true;
    if (!outputs_float) {
      d.why = "not float data";
      continue;
    }
    if (!has_activation_input) {
      d.why = "no float activation input";
      continue;
    }
    if (n.op == OpId::Concat && narrow_piece_of_output_concat(n)) {
      d.why = "writes a graph output from pieces of very different ranges (a narrow piece would round to a few "
              "int8 steps of the shared scale)";
      continue;
    }
    d.int8 = true;
  }

  // 2-4. parameters, then each candidate's int8 form; a refusal changes what is shared, so repeat.
  base_params();
  for (size_t round = 0; round <= g_.nodes.size(); ++round) {
    propagate();
    bool changed = false;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (!dec_[i].int8) continue;
      std::string why;
      ORKNN_RETURN_IF_ERROR(try_node(i, &why));
      if (!why.empty()) {
        dec_[i].int8 = false;
        dec_[i].why = why;
        changed = true;
        ORKNN_LOGI("node '%s' (%s) stays float: %s", g_.nodes[i].name.c_str(), op_name(g_.nodes[i].op), why.c_str());
      }
    }
    if (!changed) break;
  }

  // 5. rewrite
  const size_t original_nodes = g_.nodes.size();
  std::vector<std::string> node_name_of(original_nodes);
  for (size_t i = 0; i < original_nodes; ++i) node_name_of[i] = g_.nodes[i].name;
  ORKNN_RETURN_IF_ERROR(rewrite());

  if (table) {
    table->clear();
    // rewrite() keeps original nodes in order with inserted ones between them; node names of
    // the originals are unchanged, so match them in order.
    size_t k = 0;
    for (const Node& n : g_.nodes) {
      size_t j = k;
      while (j < original_nodes && node_name_of[j] != n.name) ++j;
      if (j == original_nodes) continue;  // inserted QuantizeLinear/DequantizeLinear (unique names)
      k = j + 1;
      if (is_qdq_op(n.op)) continue;
      ConvertReport::LayerPrecision lp;
      lp.node = n.name;
      lp.op = op_name(n.op);
      lp.precision = dec_[j].int8 ? "int8" : "float";
      lp.why = dec_[j].int8 ? "" : dec_[j].why;
      table->push_back(std::move(lp));
    }
  }
  return Status::Ok();
}

Status Quantizer::rewrite() {
  for (const Tensor& t : g_.tensors) tensor_names_.insert(t.name);
  for (const Node& n : g_.nodes) node_names_.insert(n.name);

  // Constants of int8 nodes.
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (!dec_[i].int8) continue;
    auto lookup = [&](int t) -> const QuantParams* {
      auto it = params_.find(t);
      return it == params_.end() ? nullptr : &it->second;
    };
    std::string why;
    Node n = g_.nodes[i];
    ORKNN_RETURN_IF_ERROR(quantize_node_constants(
        g_, n, lookup, cq_, [&](const std::string& base) { return unique_tensor_name(base); }, [](int id) { return id; },
        &why));
    if (!why.empty())  // try_node accepted the same node with the same parameters
      return ORKNN_ERR(kFail, "quantizer: node '%s' (%s) changed its mind: %s", n.name.c_str(), op_name(n.op),
                       why.c_str());
    g_.nodes[i] = std::move(n);
  }
  consumers_ = tensor_consumers(g_);
  producers_ = tensor_producers(g_);

  // Which float activation tensors become int8: outputs of int8 nodes, and graph inputs read only
  // by int8 nodes (the runtime quantizes those in rknn_inputs_set).
  const size_t ntensors = g_.tensors.size();
  std::vector<char> to_int8(ntensors, 0);
  for (size_t i = 0; i < g_.nodes.size(); ++i)
    if (dec_[i].int8)
      for (int o : g_.nodes[i].outputs)
        if (o >= 0) to_int8[static_cast<size_t>(o)] = 1;
  for (const GraphInput& in : g_.inputs) {
    const int t = in.tensor;
    if (!is_activation(g_.tensor(t)) || is_graph_output(g_, t) || !params_.count(t)) continue;
    const auto& readers = consumers_[static_cast<size_t>(t)];
    bool all_int8 = !readers.empty();
    for (int r : readers) all_int8 = all_int8 && dec_[static_cast<size_t>(r)].int8;
    if (all_int8) to_int8[static_cast<size_t>(t)] = 1;
  }

  // Edge tensors: "<x>_quant" for float x read by int8 nodes, "<x>_dequant" for int8 x read by
  // float nodes. One per tensor, shared by all such readers.
  std::map<int, int> quant_of, dequant_of;
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    for (int& x : g_.nodes[i].inputs) {
      if (x < 0 || static_cast<size_t>(x) >= ntensors) continue;
      const Tensor& t = g_.tensor(x);
      if (!is_activation(t)) continue;
      if (dec_[i].int8 && !to_int8[static_cast<size_t>(x)]) {
        auto it = quant_of.find(x);
        if (it == quant_of.end()) {
          const std::string name = t.name + "_quant";
          const Shape shape = t.shape;
          const int q = new_tensor_name_id(name, shape, DType::kI8);
          g_.tensor(q).quant = params_.at(x);
          it = quant_of.emplace(x, q).first;
        }
        x = it->second;
      } else if (!dec_[i].int8 && to_int8[static_cast<size_t>(x)]) {
        auto it = dequant_of.find(x);
        if (it == dequant_of.end()) {
          const std::string name = t.name + "_dequant";
          const Shape shape = t.shape;
          it = dequant_of.emplace(x, new_tensor_name_id(name, shape, DType::kF32)).first;
        }
        x = it->second;
      }
    }
  }
  for (size_t t = 0; t < ntensors; ++t) {
    if (!to_int8[t]) continue;
    Tensor& tensor = g_.tensors[t];
    tensor.dtype = DType::kI8;
    tensor.quant = params_.at(static_cast<int>(t));
  }

  auto edge_nodes = [&](int t, std::vector<Node>* out) {
    auto d = dequant_of.find(t);
    if (d != dequant_of.end()) {
      Node n;
      n.op = OpId::DequantizeLinear;
      n.name = unique_node_name(g_.tensor(d->second).name);
      n.inputs = {t};
      n.outputs = {d->second};
      out->push_back(std::move(n));
    }
    auto q = quant_of.find(t);
    if (q != quant_of.end()) {
      Node n;
      n.op = OpId::QuantizeLinear;
      n.name = unique_node_name(g_.tensor(q->second).name);
      n.inputs = {t};
      n.outputs = {q->second};
      out->push_back(std::move(n));
    }
  };
  std::vector<Node> nodes;
  nodes.reserve(g_.nodes.size() + quant_of.size() + dequant_of.size());
  for (const GraphInput& in : g_.inputs) edge_nodes(in.tensor, &nodes);
  for (Node& n : g_.nodes) {
    std::vector<int> outs = n.outputs;
    nodes.push_back(std::move(n));
    for (int o : outs)
      if (o >= 0) edge_nodes(o, &nodes);
  }
  g_.nodes = std::move(nodes);

  Status st = reinfer_graph(g_);
  if (!st.ok())
    return Status(st.code(), "the quantized graph failed shape inference (a converter bug; please report it with the "
                             "model): " + st.message());
  return remove_dead_code(g_, nullptr);
}

}  // namespace

Status prepare_for_quantization(Graph& g, const std::function<bool(const Node&)>& keep_value_act) {
  std::set<std::string> tensor_names, node_names;
  for (const Tensor& t : g.tensors) tensor_names.insert(t.name);
  for (const Node& n : g.nodes) node_names.insert(n.name);
  auto unique = [](std::set<std::string>& names, const std::string& base) {
    std::string name = base;
    for (int k = 1; names.count(name); ++k) name = base + "_" + std::to_string(k);
    names.insert(name);
    return name;
  };
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  int split = 0;
  for (Node& n : g.nodes) {
    const std::string act = n.attrs.get_string("fused_act", "");
    const bool value_act_kept = n.op == OpId::Conv && is_int8_value_act(parse_fused_act(act)) && keep_value_act(n);
    if (!is_compute_op(n.op) || act.empty() || act == "Relu" || act == "Clip" || value_act_kept || n.outputs.empty() ||
        n.outputs[0] < 0) {
      nodes.push_back(std::move(n));
      continue;
    }
    // Silu (x * Sigmoid(x), fuse_conv_activation) goes back to its Sigmoid and Mul.
    const bool silu = act == "Silu";
    const OpDef* def = find_op(silu ? "Sigmoid" : act);
    if (!def) return ORKNN_ERR(kInvalidModel, "node '%s' (%s): unknown fused activation '%s'", n.name.c_str(),
                               op_name(n.op), act.c_str());
    const float alpha = n.attrs.get_float("fused_alpha", 0.f), beta = n.attrs.get_float("fused_beta", 0.f);
    const int out = n.outputs[0];
    const Tensor& t = g.tensor(out);
    const std::string pre_name = unique(tensor_names, t.name + "_preact");
    const std::string sig_name = silu ? unique(tensor_names, t.name + "_sigmoid") : "";
    const Shape shape = t.shape;
    const DType dtype = t.dtype;
    const int pre = g.add_tensor(pre_name, shape, dtype);
    const int sig = silu ? g.add_tensor(sig_name, shape, dtype) : -1;
    Node a;
    a.op = def->id;
    a.name = unique(node_names, n.name + "_" + (silu ? std::string("Sigmoid") : act));
    a.inputs = {pre};
    a.outputs = {silu ? sig : out};
    if (a.op == OpId::LeakyRelu) a.attrs.set_float("alpha", alpha);
    if (a.op == OpId::HardSigmoid) {
      a.attrs.set_float("alpha", alpha);
      a.attrs.set_float("beta", beta);
    }
    n.attrs.erase("fused_act");
    n.attrs.erase("fused_alpha");
    n.attrs.erase("fused_beta");
    n.outputs[0] = pre;
    nodes.push_back(std::move(n));
    nodes.push_back(std::move(a));
    if (silu) {
      Node mul;
      mul.op = OpId::Mul;
      mul.name = unique(node_names, nodes[nodes.size() - 2].name + "_Mul");
      mul.inputs = {pre, sig};
      mul.outputs = {out};
      nodes.push_back(std::move(mul));
    }
    ++split;
  }
  g.nodes = std::move(nodes);
  if (split) ORKNN_RETURN_IF_ERROR(reinfer_graph(g));
  return Status::Ok();
}

Status check_float_layers(const Graph& g, const std::vector<std::string>& float_layers) {
  std::vector<char> unused;
  return resolve_float_layers(g, float_layers, &unused);
}

Status quantize_graph(Graph& g, const std::map<int, std::pair<float, float>>& ranges, const QuantizeSettings& s,
                      std::vector<ConvertReport::LayerPrecision>* table) {
  Quantizer q(g, ranges, s);
  return q.run(table);
}

}  // namespace orknn
