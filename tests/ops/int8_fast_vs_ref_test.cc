// oneDNN INT8 kernels (onednn_conv_int8, onednn_gemm_int8, onednn_matmul_int8) must be BIT-EXACT
// with the INT8 arithmetic of docs/numerics.md. Each case is checked against
//   * a naive scalar implementation of the spec written here (int64 accumulation, then
//     float(acc) * M -> round half to even -> + zp_y -> saturate -> Relu/Clip clamp), and
//   * the quantized reference kernel ("ref_int8") when it is registered for the op,
// with 1 and 2 threads and with every requantization path the CPU has (AVX-512, AVX2).
//
// The nodes are built by hand with their normalised attributes (what infer writes), so the
// kernels are exercised independently of the infer functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"

#if defined(ORKNN_WITH_ONEDNN)
#include "kernels/x86/int8_requant.h"

namespace orknn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// ------------------------------------------------------------------ the spec, written naively

int8_t spec_quantize(float x, float s, int zp) {  // sat8(rne(x / s) + zp)
  float v = x / s;
  if (std::isnan(v)) return static_cast<int8_t>(zp);
  v = std::max(-1000.f, std::min(1000.f, v));
  const long r = std::lrint(v) + zp;  // lrint: current rounding mode = nearest even
  return static_cast<int8_t>(std::max(-128L, std::min(127L, r)));
}

struct SpecAct {
  std::string name;  // "", "Relu", "Clip"
  float min = -kInf, max = kInf;
};

int8_t spec_requant(int64_t acc, float m, int zp_y, const SpecAct& act, float s_y) {
  EXPECT_TRUE(acc >= INT32_MIN && acc <= INT32_MAX) << "test case overflows int32";
  float v = static_cast<float>(static_cast<int32_t>(acc)) * m;
  v = std::max(-1000.f, std::min(1000.f, v));
  long y = std::lrint(v) + zp_y;
  y = std::max(-128L, std::min(127L, y));
  if (act.name == "Relu") y = std::max<long>(y, zp_y);
  if (act.name == "Clip") {
    y = std::max<long>(y, spec_quantize(act.min, s_y, zp_y));
    y = std::min<long>(y, spec_quantize(act.max, s_y, zp_y));
  }
  return static_cast<int8_t>(y);
}

// ------------------------------------------------------------------ running a kernel by name

// Runs the kernel registered as `name` on node n. Non-constant inputs come from `data` (one entry
// per node input; ignored for constants). Returns false (with *why) if it is not registered or
// declines the node. The output buffer has guard bytes that must stay untouched.
bool run_kernel(const Graph& g, const Node& n, const std::string& name, int threads,
                const std::vector<std::vector<int8_t>>& data, std::vector<int8_t>* out, std::string* why) {
  const KernelEntry* entry = nullptr;
  for (const KernelEntry* e : kernels_for(n.op))
    if (name == e->name) entry = e;
  if (!entry) { *why = "not registered"; return false; }
  if (entry->supports && !entry->supports(g, n)) { *why = "declined"; return false; }
  std::unique_ptr<Kernel> k = entry->create();
  KernelContext ctx;
  ctx.graph = &g;
  ctx.node = &n;
  ctx.num_threads = threads;
  std::vector<std::vector<int8_t>> bufs(n.inputs.size());
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) { ctx.inputs.push_back(nullptr); continue; }
    const Tensor& t = g.tensor(n.inputs[i]);
    if (t.is_const()) { ctx.inputs.push_back(t.data.ptr); continue; }
    bufs[i] = data.at(i);
    ctx.inputs.push_back(bufs[i].data());
  }
  const size_t nbytes = g.tensor(n.outputs[0]).nbytes();
  constexpr size_t kGuard = 64;
  std::vector<int8_t> buf(nbytes + kGuard, 0x5a);
  ctx.outputs.push_back(buf.data());
  Status st = k->prepare(ctx);
  if (!st.ok()) { *why = "prepare: " + st.message(); return false; }
  k->run(ctx);
  k->run(ctx);  // a second run must give the same bytes (nothing stale in the kernel's buffers)
  for (size_t i = nbytes; i < buf.size(); ++i)
    if (buf[i] != 0x5a) { *why = "wrote past the output"; return false; }
  out->assign(buf.begin(), buf.begin() + static_cast<long>(nbytes));
  return true;
}

bool has_kernel(OpId op, const std::string& name) {
  for (const KernelEntry* e : kernels_for(op))
    if (name == e->name) return true;
  return false;
}

std::string first_mismatch(const std::vector<int8_t>& got, const std::vector<int8_t>& want) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  if (!bad) return "";
  std::ostringstream s;
  s << bad << " of " << got.size() << " differ, first at " << first << ": " << int(got[first]) << " vs "
    << int(want[first]);
  return s.str();
}

// The ISA paths to try: the best one and AVX2 below it.
std::vector<x86::Int8Isa> isa_paths() {
  std::vector<x86::Int8Isa> v;
  if (x86::int8_best_isa() == x86::Int8Isa::kAvx512) v.push_back(x86::Int8Isa::kAvx512);
  if (x86::int8_best_isa() != x86::Int8Isa::kNone) v.push_back(x86::Int8Isa::kAvx2);
  return v;
}

struct IsaGuard {
  ~IsaGuard() { x86::int8_set_isa_override(x86::Int8Isa::kNone); }
};

// Checks kernel `fast` (all threads x ISA paths) against `want` and, if registered, "ref_int8".
// Returns false if the fast kernel declined the node.
bool check_fast(const Graph& g, const Node& n, const std::string& fast, const std::vector<std::vector<int8_t>>& data,
                const std::vector<int8_t>& want) {
  IsaGuard guard;
  if (has_kernel(n.op, "ref_int8")) {
    std::vector<int8_t> ref;
    std::string why;
    if (run_kernel(g, n, "ref_int8", 1, data, &ref, &why)) {
      EXPECT_EQ(first_mismatch(ref, want), "") << "ref_int8 vs the naive spec";
    } else {
      ADD_FAILURE() << "ref_int8: " << why;
    }
  }
  bool ran = false;
  for (x86::Int8Isa isa : isa_paths()) {
    x86::int8_set_isa_override(isa);
    for (int threads : {1, 2}) {
      std::vector<int8_t> got;
      std::string why;
      if (!run_kernel(g, n, fast, threads, data, &got, &why)) {
        if (why != "declined") ADD_FAILURE() << fast << ": " << why;
        return false;
      }
      ran = true;
      EXPECT_EQ(first_mismatch(got, want), "") << fast << " threads=" << threads << " isa=" << static_cast<int>(isa);
    }
  }
  return ran;
}

// ------------------------------------------------------------------ data

enum class Data {
  kRandom,   // full int8 range, random weights, scales that put most outputs in range
  kExtreme,  // inputs at the int8 ends, weights near +-127, zp_x = -128: accumulators beyond 2^24
  kTies,     // small values and power-of-two multipliers: many float(acc) * M exactly at k + 0.5
  kSaturate  // large multipliers: most outputs saturate
};

struct Quantized {
  float s_x = 0.05f, s_y = 1.f;
  std::vector<float> s_w;
};

// Fills x (activation), w (weights, |w| <= 127), bias.
void make_data(Data kind, uint32_t seed, int zp_x, std::vector<int8_t>* x, std::vector<int8_t>* w,
               std::vector<int32_t>* bias) {
  std::mt19937 rng(seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (auto& v : *x) {
    switch (kind) {
      case Data::kExtreme: v = static_cast<int8_t>(uni(0, 3) == 0 ? uni(-128, 127) : 127 - uni(0, 2)); break;
      case Data::kTies: v = static_cast<int8_t>(std::max(-128, std::min(127, zp_x + uni(-6, 6)))); break;
      default: v = static_cast<int8_t>(uni(-128, 127)); break;
    }
  }
  for (auto& v : *w) {
    switch (kind) {
      case Data::kExtreme: v = static_cast<int8_t>(uni(0, 5) == 0 ? uni(-127, 127) : 127 - uni(0, 3)); break;
      case Data::kTies: v = static_cast<int8_t>(uni(-3, 3)); break;
      default: v = static_cast<int8_t>(uni(-127, 127)); break;
    }
  }
  for (auto& v : *bias) {
    switch (kind) {
      case Data::kTies: v = uni(-20, 20); break;
      case Data::kExtreme: v = uni(-50000000, 50000000); break;
      default: v = uni(-30000, 30000); break;
    }
  }
}

// Chooses scales: per-channel s_w, and s_y so that the largest |acc| * M is about `target`.
Quantized choose_scales(Data kind, const std::vector<int64_t>& acc, int64_t channels, int64_t channel_stride_of_acc,
                        bool per_channel, uint32_t seed) {
  Quantized q;
  std::mt19937 rng(seed);
  q.s_w.resize(per_channel ? static_cast<size_t>(channels) : 1);
  if (kind == Data::kTies) {
    // M = (0.5 * s_w) / s_y with s_w in {1, 0.5, 0.25}, s_y = 1: M in {1/2, 1/4, 1/8}, exact.
    q.s_x = 0.5f;
    for (size_t c = 0; c < q.s_w.size(); ++c) q.s_w[c] = 1.f / static_cast<float>(1 << (c % 3));
    q.s_y = 1.f;
    return q;
  }
  std::uniform_real_distribution<float> d(0.5f, 2.f);
  for (auto& s : q.s_w) s = 0.003f * d(rng);
  double worst = 1;
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t c = per_channel ? static_cast<size_t>((i / channel_stride_of_acc) % channels) : 0;
    worst = std::max(worst, std::fabs(static_cast<double>(acc[i]) * q.s_x * q.s_w[c]));
  }
  q.s_y = static_cast<float>(worst / (kind == Data::kSaturate ? 8.0 : 150.0));
  return q;
}

QuantParams per_tensor_q(float s, int zp) {
  QuantParams q;
  q.scale = {s};
  q.zero_point = {zp};
  return q;
}

QuantParams weight_q(const std::vector<float>& s_w, int axis) {
  QuantParams q;
  q.scale = s_w;
  q.zero_point.assign(s_w.size(), 0);
  q.axis = s_w.size() == 1 ? -1 : axis;
  return q;
}

void set_act(Node& n, const SpecAct& act) {
  if (act.name.empty()) return;
  n.attrs.set_string("fused_act", act.name);
  n.attrs.set_float("fused_alpha", act.name == "Clip" ? act.min : 0.f);
  n.attrs.set_float("fused_beta", act.name == "Clip" ? act.max : 0.f);
}

// ------------------------------------------------------------------ Conv

struct ConvCase {
  std::string label;
  Shape x;  // N, C, spatial...
  int64_t oc = 0, group = 1;
  std::vector<int64_t> k, strides, dil, pads;  // pads: begins then ends
  int zp_x = 0, zp_y = 0;
  Data data = Data::kRandom;
  SpecAct act;
  bool per_channel = true, bias = true;
  bool must_run = true;  // the fast kernel must accept it
};

void run_conv_case(const ConvCase& cs, uint32_t seed) {
  SCOPED_TRACE(cs.label);
  const size_t sp = cs.x.size() - 2;
  const int64_t n_b = cs.x[0], c_in = cs.x[1], oc = cs.oc, grp = cs.group;
  const int64_t cg = c_in / grp, og = oc / grp;
  Shape wshape = {oc, cg};
  for (int64_t v : cs.k) wshape.push_back(v);
  Shape yshape = {n_b, oc};
  for (size_t i = 0; i < sp; ++i) {
    const int64_t ext = (cs.k[i] - 1) * cs.dil[i] + 1;
    yshape.push_back((cs.x[2 + i] + cs.pads[i] + cs.pads[sp + i] - ext) / cs.strides[i] + 1);
  }
  std::vector<int8_t> x(static_cast<size_t>(shape_numel(cs.x))), w(static_cast<size_t>(shape_numel(wshape)));
  std::vector<int32_t> bias(static_cast<size_t>(oc));
  make_data(cs.data, seed, cs.zp_x, &x, &w, &bias);
  if (!cs.bias) std::fill(bias.begin(), bias.end(), 0);

  // Naive accumulators, padding taps skipped (3 spatial dims with leading ones).
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, ks[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1},
          pb[3] = {0, 0, 0};
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = 3 - sp + i;
    in[j] = cs.x[2 + i];
    out[j] = yshape[2 + i];
    ks[j] = cs.k[i];
    st[j] = cs.strides[i];
    dl[j] = cs.dil[i];
    pb[j] = cs.pads[i];
  }
  const int64_t opix = out[0] * out[1] * out[2], ipix = in[0] * in[1] * in[2], taps = ks[0] * ks[1] * ks[2];
  std::vector<int64_t> acc(static_cast<size_t>(n_b * oc * opix));
  for (int64_t b = 0; b < n_b; ++b)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            int64_t s = cs.bias ? bias[static_cast<size_t>(o)] : 0;
            const int64_t g = o / og;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t kd = 0; kd < ks[0]; ++kd)
                for (int64_t kh = 0; kh < ks[1]; ++kh)
                  for (int64_t kw = 0; kw < ks[2]; ++kw) {
                    const int64_t id = od * st[0] - pb[0] + kd * dl[0];
                    const int64_t ih = oh * st[1] - pb[1] + kh * dl[1];
                    const int64_t iw = ow * st[2] - pb[2] + kw * dl[2];
                    if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                    const int64_t xv = x[static_cast<size_t>(((b * c_in + g * cg + ci) * in[0] + id) * in[1] * in[2] +
                                                             ih * in[2] + iw)];
                    const int64_t wv = w[static_cast<size_t>(((o * cg + ci) * taps) + (kd * ks[1] + kh) * ks[2] + kw)];
                    s += (xv - cs.zp_x) * wv;
                  }
            acc[static_cast<size_t>((b * oc + o) * opix + (od * out[1] + oh) * out[2] + ow)] = s;
          }
  (void)ipix;
  const Quantized q = choose_scales(cs.data, acc, oc, opix, cs.per_channel, seed + 1);
  std::vector<int8_t> want(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t c = (i / static_cast<size_t>(opix)) % static_cast<size_t>(oc);
    const float sw = q.s_w.size() == 1 ? q.s_w[0] : q.s_w[c];
    const float m = (q.s_x * sw) / q.s_y;
    want[i] = spec_requant(acc[i], m, cs.zp_y, cs.act, q.s_y);
  }

  Graph g;
  g.precision = FloatPrecision::kFp32;
  Node n;
  n.name = "conv_int8_" + cs.label;
  n.op = OpId::Conv;
  const int xi = g.add_tensor("x", cs.x, DType::kI8);
  g.tensor(xi).quant = per_tensor_q(q.s_x, cs.zp_x);
  const int wi = g.add_const("w", wshape, DType::kI8, w.data(), w.size());
  g.tensor(wi).quant = weight_q(q.s_w, 0);
  n.inputs = {xi, wi};
  if (cs.bias) {
    const int bi = g.add_const("b", {oc}, DType::kI32, bias.data(), bias.size() * sizeof(int32_t));
    g.tensor(bi).quant = weight_q(std::vector<float>(q.s_w.size(), 1.f), 0);  // s_x * s_w[c]; unused by kernels
    for (size_t c = 0; c < q.s_w.size(); ++c) g.tensor(bi).quant.scale[c] = q.s_x * q.s_w[c];
    n.inputs.push_back(bi);
  }
  const int yi = g.add_tensor("y", yshape, DType::kI8);
  g.tensor(yi).quant = per_tensor_q(q.s_y, cs.zp_y);
  n.outputs = {yi};
  n.attrs.set_ints("kernel_shape", cs.k);
  n.attrs.set_ints("strides", cs.strides);
  n.attrs.set_ints("dilations", cs.dil);
  n.attrs.set_ints("pads", cs.pads);
  n.attrs.set_int("group", cs.group);
  n.attrs.set_string("auto_pad", "NOTSET");
  set_act(n, cs.act);

  const bool ran = check_fast(g, n, "onednn_conv_int8", {x}, want);
  if (cs.must_run) EXPECT_TRUE(ran) << "onednn_conv_int8 declined the node";
}

ConvCase conv2d(const std::string& label, Shape x, int64_t oc, int64_t group, int64_t k, int64_t stride, int64_t pad,
                int64_t dil = 1) {
  ConvCase c;
  c.label = label;
  c.x = std::move(x);
  c.oc = oc;
  c.group = group;
  c.k = {k, k};
  c.strides = {stride, stride};
  c.dil = {dil, dil};
  c.pads = {pad, pad, pad, pad};
  c.zp_x = -7;
  c.zp_y = 5;
  return c;
}

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> v;
  v.push_back(conv2d("resnet3x3", {1, 64, 14, 14}, 64, 1, 3, 1, 1));
  {
    ConvCase c = conv2d("tails_odd_zp", {1, 19, 11, 13}, 37, 1, 3, 1, 1);
    c.zp_x = 33;
    c.zp_y = -77;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("stride2_asym_pads", {1, 24, 13, 17}, 40, 1, 3, 2, 0);
    c.pads = {0, 1, 1, 0};
    v.push_back(c);
  }
  v.push_back(conv2d("grouped4", {1, 32, 12, 12}, 48, 4, 3, 1, 1));
  v.push_back(conv2d("grouped_c16", {1, 64, 10, 10}, 64, 4, 3, 1, 1));
  v.push_back(conv2d("depthwise", {1, 40, 15, 15}, 40, 40, 3, 1, 1));
  v.push_back(conv2d("depthwise_s2", {1, 96, 14, 14}, 96, 96, 3, 2, 1));
  v.push_back(conv2d("depthwise_5x5_d2", {1, 24, 16, 16}, 24, 24, 5, 1, 4, 2));
  {
    ConvCase c = conv2d("depthwise_mult2", {1, 16, 9, 9}, 32, 16, 3, 1, 1);
    c.must_run = false;  // oneDNN has only a GEMM-based implementation (slow): may be declined
    v.push_back(c);
  }
  v.push_back(conv2d("dilated", {1, 32, 15, 15}, 32, 1, 3, 1, 2, 2));
  {
    ConvCase c = conv2d("pointwise_batch2", {2, 64, 9, 9}, 100, 1, 1, 1, 0);
    c.per_channel = false;
    v.push_back(c);
  }
  v.push_back(conv2d("pointwise_s2", {1, 48, 15, 15}, 32, 1, 1, 2, 0));
  v.push_back(conv2d("first_layer_c3", {1, 3, 33, 31}, 16, 1, 3, 2, 1));
  {
    ConvCase c = conv2d("pads_beyond_kernel", {1, 8, 5, 5}, 16, 1, 3, 1, 3);
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("no_bias_relu", {1, 32, 10, 10}, 32, 1, 3, 1, 1);
    c.bias = false;
    c.act.name = "Relu";
    c.zp_y = -3;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("clip", {1, 32, 10, 10}, 48, 1, 3, 1, 1);
    c.act = {"Clip", -0.3f, 0.9f};
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("clip_inf", {1, 16, 8, 8}, 24, 1, 3, 1, 1);
    c.act = {"Clip", -kInf, kInf};
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("clip_min_gt_max", {1, 16, 8, 8}, 24, 1, 3, 1, 1);
    c.act = {"Clip", 0.5f, -0.5f};
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("ties", {1, 16, 9, 9}, 24, 1, 3, 1, 1);
    c.data = Data::kTies;
    c.zp_x = 3;
    c.zp_y = 1;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("ties_depthwise", {1, 32, 9, 9}, 32, 32, 3, 1, 1);
    c.data = Data::kTies;
    c.zp_x = -2;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("large_acc", {1, 512, 5, 5}, 40, 1, 3, 1, 1);
    c.data = Data::kExtreme;
    c.zp_x = -128;
    c.zp_y = 0;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("large_acc_pointwise", {1, 1024, 4, 4}, 24, 1, 1, 1, 0);
    c.data = Data::kExtreme;
    c.zp_x = -128;
    v.push_back(c);
  }
  {
    // Grouped 7x7 with 16 channels per group: oneDNN's only candidate converts through float;
    // beyond 2^24 the kernel must decline (or find an exact implementation).
    ConvCase c = conv2d("large_acc_grouped7x7", {1, 64, 9, 9}, 64, 4, 7, 1, 3);
    c.data = Data::kExtreme;
    c.zp_x = -128;
    c.must_run = false;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("large_acc_depthwise_23x23", {1, 16, 24, 24}, 16, 16, 23, 1, 11);
    c.data = Data::kExtreme;
    c.zp_x = -128;
    c.must_run = false;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("saturate", {1, 32, 8, 8}, 32, 1, 3, 1, 1);
    c.data = Data::kSaturate;
    c.zp_y = 100;
    v.push_back(c);
  }
  {
    ConvCase c;
    c.label = "conv1d";
    c.x = {1, 20, 33};
    c.oc = 24;
    c.k = {5};
    c.strides = {2};
    c.dil = {1};
    c.pads = {2, 1};
    c.zp_x = 11;
    c.zp_y = -9;
    v.push_back(c);
  }
  {
    ConvCase c;
    c.label = "conv3d";
    c.x = {1, 8, 5, 6, 7};
    c.oc = 16;
    c.k = {3, 3, 3};
    c.strides = {1, 2, 1};
    c.dil = {1, 1, 1};
    c.pads = {1, 1, 1, 1, 0, 1};
    c.zp_x = -1;
    c.zp_y = 2;
    v.push_back(c);
  }
  return v;
}

TEST(Int8FastVsRef, Conv) {
  if (!has_kernel(OpId::Conv, "onednn_conv_int8")) GTEST_SKIP() << "onednn_conv_int8 not built";
  uint32_t seed = 100;
  for (const ConvCase& c : conv_cases()) run_conv_case(c, seed++);
}

// ------------------------------------------------------------------ requantization helpers

TEST(Int8FastVsRef, RequantHelpersMatchScalar) {
  IsaGuard guard;
  std::mt19937 rng(7);
  const int64_t pixels = 53, channels = 37;  // both with tails
  std::vector<int32_t> acc(static_cast<size_t>(pixels * channels)), comp(static_cast<size_t>(channels));
  std::vector<float> mult(static_cast<size_t>(channels));
  for (auto& a : acc) a = static_cast<int32_t>(rng());  // any int32, wrap-around sums included
  for (auto& c : comp) c = static_cast<int32_t>(rng());
  for (size_t c = 0; c < mult.size(); ++c) mult[c] = c % 4 == 0 ? 0.5f : std::ldexp(1.f + (rng() % 1000) / 1000.f, -(int)(rng() % 30));
  x86::RequantParams p;
  p.comp = comp.data();
  p.mult = mult.data();
  p.zp = -17;
  p.lo = -100;
  p.hi = 90;
  std::vector<int8_t> want_rows(acc.size()), want_planar(acc.size());
  for (int64_t px = 0; px < pixels; ++px)
    for (int64_t c = 0; c < channels; ++c) {
      const int32_t t = static_cast<int32_t>(static_cast<uint32_t>(acc[px * channels + c]) + static_cast<uint32_t>(comp[c]));
      float v = static_cast<float>(t) * mult[c];
      v = std::max(-1000.f, std::min(1000.f, v));
      long y = std::max(-128L, std::min(127L, std::lrint(v) + p.zp));
      y = std::min<long>(std::max<long>(y, p.lo), p.hi);
      want_rows[px * channels + c] = static_cast<int8_t>(y);
      want_planar[c * pixels + px] = static_cast<int8_t>(y);
    }
  std::vector<int8_t> x8(acc.size());
  for (auto& v : x8) v = static_cast<int8_t>(rng());
  for (x86::Int8Isa isa : isa_paths()) {
    x86::int8_set_isa_override(isa);
    SCOPED_TRACE(static_cast<int>(isa));
    std::vector<int8_t> rows(acc.size()), planar(acc.size());
    x86::requant_rows(acc.data(), pixels, channels, channels, rows.data(), channels, p);
    x86::requant_to_planar(acc.data(), pixels, channels, channels, planar.data(), pixels, p);
    EXPECT_EQ(first_mismatch(rows, want_rows), "");
    EXPECT_EQ(first_mismatch(planar, want_planar), "");
    std::vector<uint8_t> cl(acc.size()), flat(acc.size());
    x86::planar_to_u8_channels_last(x8.data(), channels, pixels, pixels, cl.data(), channels);
    x86::int8_to_u8(x8.data(), static_cast<int64_t>(x8.size()), flat.data());
    for (int64_t px = 0; px < pixels; ++px)
      for (int64_t c = 0; c < channels; ++c) ASSERT_EQ(cl[px * channels + c], uint8_t(x8[c * pixels + px] + 128));
    for (size_t i = 0; i < x8.size(); ++i) ASSERT_EQ(flat[i], uint8_t(x8[i] + 128));
  }
}

}  // namespace
}  // namespace orknn

#endif  // ORKNN_WITH_ONEDNN
