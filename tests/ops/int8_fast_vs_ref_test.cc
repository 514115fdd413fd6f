// oneDNN INT8 kernels (onednn_conv_int8, onednn_deconv_int8, onednn_gemm_int8, onednn_matmul_int8)
// must be BIT-EXACT with the INT8 arithmetic of docs/numerics.md. Each case is checked against
//   * a naive scalar implementation of the spec written here (int64 accumulation, then
//     float(acc) * M -> round half to even -> + zp_y -> saturate -> Relu/Clip clamp), and
//   * the quantized reference kernel ("ref_int8") when it is registered for the op,
// with 1 and 2 threads and with every requantization path the CPU has (AVX-512, AVX2).
//
// The nodes are built by hand with their normalised attributes (what infer writes), so the
// kernels are exercised independently of the infer functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"
#include "ops/op.h"
#include "runtime/layout_assignment.h"
#include "testutil/op_harness.h"
#include "int8_test_helpers.h"

#if defined(ORKNN_WITH_ONEDNN)
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/int8_requant.h"
#include "testutil/cpu.h"

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
  std::string name;  // "", "Relu", "Clip", or a value activation: "LeakyRelu", "HardSwish", "HardSigmoid"
  float min = -kInf, max = kInf;  // Clip's bounds; LeakyRelu's alpha (min); HardSigmoid's alpha, beta
  bool value() const { return test::q8t::is_value_act_name(name); }
};

// pre = s_x * s_w[c]. A value activation is applied to the dequantized accumulator and its result
// quantized once (times 1 / s_y); Relu/Clip clamp the requantized value.
int8_t spec_requant(int64_t acc, float pre, int zp_y, const SpecAct& act, float s_y) {
  EXPECT_TRUE(acc >= INT32_MIN && acc <= INT32_MAX) << "test case overflows int32";
  if (act.value()) {
    const float a = test::q8t::value_act_naive(static_cast<float>(static_cast<int32_t>(acc)) * pre, act.name, act.min,
                                               act.max);
    return spec_quantize(a * (1.f / s_y), 1.f, zp_y);
  }
  const float m = pre / s_y;
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
// declines the node. The output buffer has guard bytes that must stay untouched. With `blocked`,
// the activations the runtime would keep blocked (NHWC) for this node are handed over so, and
// *n_blocked counts them; the result is NCHW either way. `outputs_only` keeps the inputs NCHW (a
// kernel that takes each tensor's layout on its own, BlockedIo::kEach, as after a graph input).
bool run_kernel(const Graph& g, const Node& n, const std::string& name, int threads,
                const std::vector<std::vector<int8_t>>& data, std::vector<int8_t>* out, std::string* why,
                bool blocked = false, int* n_blocked = nullptr, bool outputs_only = false) {
  const KernelEntry* entry = nullptr;
  for (const KernelEntry* e : kernels_for(n.op))
    if (name == e->name) entry = e;
  if (!entry) { *why = "not registered"; return false; }
  if (entry->supports && !entry->supports(g, n)) { *why = "declined"; return false; }
  std::unique_ptr<Kernel> k = entry->create();
  // The runtime never runs such a kernel on NCHW activations (Kernel::layout_fit).
  if (!blocked && k->layout_fit(g, n) == LayoutFit::kBlockedOnly) { *why = "blocked only"; return false; }
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
  if (blocked) {
    Graph one = g;
    one.nodes = {n};
    if (outputs_only && k->blocked_io(g, n) != BlockedIo::kEach) { *why = "not each"; return false; }
    const std::vector<uint8_t> b = choose_blocked_tensors(one, {k->blocked_io(g, n)});
    int count = 0;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int t = n.inputs[i];
      ctx.in_blocked.push_back(!outputs_only && t >= 0 && b[static_cast<size_t>(t)]);
      if (!ctx.in_blocked.back()) continue;
      const std::vector<int8_t> plain = bufs[i];
      test::convert_blocked(g.tensor(t).shape, g.tensor(t).dtype, plain.data(), bufs[i].data(), true);
      ++count;
    }
    ctx.out_blocked.push_back(b[static_cast<size_t>(n.outputs[0])]);
    count += ctx.out_blocked.back();
    if (n_blocked) *n_blocked = count;
  }
  Status st = k->prepare(ctx);
  if (!st.ok()) { *why = "prepare: " + st.message(); return false; }
  k->run(ctx);
  k->run(ctx);  // a second run must give the same bytes (nothing stale in the kernel's buffers)
  for (size_t i = nbytes; i < buf.size(); ++i)
    if (buf[i] != 0x5a) { *why = "wrote past the output"; return false; }
  out->assign(buf.begin(), buf.begin() + static_cast<long>(nbytes));
  if (ctx.output_blocked(0)) {
    const std::vector<int8_t> b = *out;
    test::convert_blocked(g.tensor(n.outputs[0]).shape, DType::kI8, b.data(), out->data(), false);
  }
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

// oneDNN 2.6 keeps u8 x s8 products exact (int32 sums, no intermediate saturation) only in its VNNI
// and AMX implementations, so the onednn_*_int8 kernels take nodes only on such CPUs
// (src/kernels/onednn/int8_common.cc, exact_int8_impl). Where the CPU has AVX-512 VNNI they must
// take the cases marked must_run; where it has no VNNI at all they must decline every node.
bool onednn_int8_must_run() { return ORKNN_X86_HAS("avx512vnni"); }
bool onednn_int8_must_decline() {
  return !ORKNN_X86_HAS("avx512vnni") && !ORKNN_X86_HAS_AVXVNNI() &&
         !ORKNN_X86_HAS("amx-int8");
}

// Checks whether kernel `fast` ran where it must, and declined where it must (see above).
void expect_ran_as_the_cpu_allows(const std::string& fast, bool must_run, bool ran) {
  const bool onednn = fast.rfind("onednn_", 0) == 0;
  if (must_run && (!onednn || onednn_int8_must_run())) EXPECT_TRUE(ran) << fast << " declined the node";
  if (onednn && onednn_int8_must_decline()) EXPECT_FALSE(ran) << fast << " ran on a CPU without VNNI";
}

struct IsaGuard {
  ~IsaGuard() { x86::int8_set_isa_override(x86::Int8Isa::kNone); }
};

// Checks kernel `fast` (all threads x ISA paths) against `want` and, if registered, "ref_int8".
// Returns false if the fast kernel declined the node.
int g_ref_comparisons = 0;  // cases also checked against ref_int8

bool check_fast(const Graph& g, const Node& n, const std::string& fast, const std::vector<std::vector<int8_t>>& data,
                const std::vector<int8_t>& want) {
  IsaGuard guard;
  if (has_kernel(n.op, "ref_int8")) {
    std::vector<int8_t> ref;
    std::string why;
    if (run_kernel(g, n, "ref_int8", 1, data, &ref, &why)) {
      ++g_ref_comparisons;
      EXPECT_EQ(first_mismatch(ref, want), "") << "ref_int8 vs the naive spec";
    } else {
      ADD_FAILURE() << "ref_int8: " << why;
    }
  }
  bool ran = false;
  for (x86::Int8Isa isa : isa_paths()) {
    x86::int8_set_isa_override(isa);
    for (int threads : {1, 2})
      for (int layouts : {0, 1, 2}) {  // NCHW, the blocked tensors, blocked outputs only
        const bool blocked = layouts > 0;
        std::vector<int8_t> got;
        std::string why;
        int n_blocked = 0;
        if (!run_kernel(g, n, fast, threads, data, &got, &why, blocked, &n_blocked, layouts == 2)) {
          if (why == "blocked only" || why == "not each") continue;
          if (why != "declined") ADD_FAILURE() << fast << ": " << why;
          return false;
        }
        if (blocked && n_blocked == 0) continue;  // the kernel takes NCHW only here: run already
        ran = true;
        EXPECT_EQ(first_mismatch(got, want), "")
            << fast << " threads=" << threads << " isa=" << static_cast<int>(isa) << " nhwc tensors=" << n_blocked
            << (layouts == 2 ? " (outputs only)" : "");
      }
  }
  return ran;
}

// ------------------------------------------------------------------ data

enum class Data {
  kRandom,   // full int8 range, random weights, scales that put most outputs in range
  kExtreme,  // inputs at the int8 ends, weights near +-127, zp_x = -128: accumulators beyond 2^24
  kTies,     // small values and power-of-two multipliers: many float(acc) * M exactly at k + 0.5
  kSaturate,  // large multipliers: most outputs saturate
  // x close to zp_x = 124 and weights near 127: the true accumulator is small but oneDNN's u8
  // intermediate sum((x + 128) * w) is far beyond 2^24, and power-of-two multipliers make the
  // output sensitive to an accumulator off by one (catches a float32 pass inside oneDNN).
  kBigIntermediate
};
constexpr int kBigIntermediateZp = 124;

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
      case Data::kBigIntermediate:
        v = static_cast<int8_t>(std::max(-128, std::min(127, zp_x + (uni(0, 9) == 0 ? uni(-3, 3) : 0))));
        break;
      default: v = static_cast<int8_t>(uni(-128, 127)); break;
    }
  }
  for (auto& v : *w) {
    switch (kind) {
      case Data::kExtreme: v = static_cast<int8_t>(uni(0, 5) == 0 ? uni(-127, 127) : 127 - uni(0, 3)); break;
      case Data::kTies: v = static_cast<int8_t>(uni(-3, 3)); break;
      case Data::kBigIntermediate: v = static_cast<int8_t>(127 - uni(0, 3)); break;
      default: v = static_cast<int8_t>(uni(-127, 127)); break;
    }
  }
  for (auto& v : *bias) {
    switch (kind) {
      case Data::kTies: v = uni(-20, 20); break;
      case Data::kBigIntermediate: v = uni(-300, 300); break;
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
  if (kind == Data::kBigIntermediate) {
    // Powers of two throughout: M = (0.5 * s_w) / s_y is exact, with max |acc| * M about 64..128.
    q.s_x = 0.5f;
    double worst = 1;
    for (size_t c = 0; c < q.s_w.size(); ++c) q.s_w[c] = 1.f / static_cast<float>(1 << (c % 3));
    for (size_t i = 0; i < acc.size(); ++i) {
      const size_t c = per_channel ? static_cast<size_t>((i / channel_stride_of_acc) % channels) : 0;
      worst = std::max(worst, std::fabs(static_cast<double>(acc[i]) * q.s_x * q.s_w[c]));
    }
    q.s_y = std::ldexp(1.f, static_cast<int>(std::ceil(std::log2(worst / 128.0))));
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
  const bool params = act.name == "Clip" || act.name == "LeakyRelu" || act.name == "HardSigmoid";
  n.attrs.set_float("fused_alpha", params ? act.min : 0.f);
  n.attrs.set_float("fused_beta", params ? act.max : 0.f);
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
  bool transposed = false;        // ConvTranspose (weights [C, OC/G, k...])
  bool big_u8_sums = true;        // kBigIntermediate: the u8 sums must exceed 2^24
  std::vector<int64_t> out_pad;  // ConvTranspose output_padding
};

// `kernel`: the fast kernel to check (default: the oneDNN one for the op).
void run_conv_case(const ConvCase& cs, uint32_t seed, const char* kernel = nullptr) {
  SCOPED_TRACE(cs.label);
  const size_t sp = cs.x.size() - 2;
  const test::q8t::NaiveConvGeometry geo{cs.x,   cs.oc,      cs.group, cs.k,         cs.strides,
                                         cs.dil, cs.pads, cs.out_pad, cs.transposed};
  const Shape wshape = test::q8t::naive_conv_weight_shape(geo), yshape = test::q8t::naive_conv_output_shape(geo);
  const int64_t oc = cs.oc;
  std::vector<int8_t> x(static_cast<size_t>(shape_numel(cs.x))), w(static_cast<size_t>(shape_numel(wshape)));
  std::vector<int32_t> bias(static_cast<size_t>(oc));
  make_data(cs.data, seed, cs.zp_x, &x, &w, &bias);
  if (!cs.bias) bias.clear();
  int64_t max_u8_sum = 0;
  const std::vector<int64_t> acc = test::q8t::naive_conv_acc(geo, x, w, bias, cs.zp_x, &max_u8_sum);
  const int64_t opix = shape_numel(yshape) / (yshape[0] * oc);
  Quantized q = choose_scales(cs.data, acc, oc, opix, cs.per_channel, seed + 1);
  if (cs.act.name == "HardSigmoid") q.s_y = 1.f / 255.f;  // its output lies in [0, 1]
  std::vector<int8_t> want(acc.size());
  int64_t ties = 0, beyond_2_24 = 0;
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t c = (i / static_cast<size_t>(opix)) % static_cast<size_t>(oc);
    const float sw = q.s_w.size() == 1 ? q.s_w[0] : q.s_w[c];
    const float m = (q.s_x * sw) / q.s_y;
    want[i] = spec_requant(acc[i], q.s_x * sw, cs.zp_y, cs.act, q.s_y);
    const float v = static_cast<float>(acc[i]) * m;
    if (v - std::floor(v) == 0.5f && std::fabs(v) < 128.f) ++ties;
    if (std::llabs(acc[i]) > (1 << 24)) ++beyond_2_24;
  }
  if (cs.data == Data::kTies) EXPECT_GT(ties, 20) << "the ties case has too few exact .5 products";
  if (cs.data == Data::kExtreme) EXPECT_GT(beyond_2_24, 0) << "the large-accumulator case stays below 2^24";
  if (cs.data == Data::kBigIntermediate && cs.big_u8_sums)
    EXPECT_GT(max_u8_sum, 1 << 24) << "the u8 sums stay below 2^24";

  Graph g;
  g.precision = FloatPrecision::kFp32;
  Node n;
  n.name = "conv_int8_" + cs.label;
  n.op = cs.transposed ? OpId::ConvTranspose : OpId::Conv;
  const int xi = g.add_tensor("x", cs.x, DType::kI8);
  g.tensor(xi).quant = per_tensor_q(q.s_x, cs.zp_x);
  const int wi = g.add_const("w", wshape, DType::kI8, w.data(), w.size());
  g.tensor(wi).quant = weight_q(q.s_w, cs.transposed ? 1 : 0);
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
  if (cs.transposed) n.attrs.set_ints("output_padding", cs.out_pad.empty() ? std::vector<int64_t>(sp, 0) : cs.out_pad);
  set_act(n, cs.act);

  const std::string fast = kernel ? kernel : cs.transposed ? "onednn_deconv_int8" : "onednn_conv_int8";
  const bool ran = check_fast(g, n, fast, {x}, want);
  expect_ran_as_the_cpu_allows(fast, cs.must_run, ran);
  if (!ran) std::printf("  [info] %s: %s declined the node\n", cs.label.c_str(), fast.c_str());
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
  // Value activations (applied before the output's quantization), over the tails of the vectors.
  {
    ConvCase c = conv2d("leaky_relu", {1, 19, 11, 13}, 37, 1, 3, 1, 1);
    c.act = {"LeakyRelu", 0.1f, 0.f};
    c.zp_y = -70;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("hardswish_depthwise", {1, 40, 10, 9}, 40, 40, 3, 2, 1);
    c.act = {"HardSwish", 0.f, 0.f};
    c.zp_y = -110;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("hardswish_1x1", {1, 24, 9, 9}, 72, 1, 1, 1, 0);
    c.act = {"HardSwish", 0.f, 0.f};
    c.zp_y = -100;
    v.push_back(c);
  }
  {
    ConvCase c = conv2d("hardsigmoid", {1, 16, 8, 8}, 24, 1, 3, 1, 1);
    c.act = {"HardSigmoid", 0.2f, 0.5f};
    c.zp_y = -128;
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
  for (const ConvCase& base : {conv2d("big_intermediate", {1, 512, 6, 6}, 40, 1, 3, 1, 1),
                               conv2d("big_intermediate_pointwise", {1, 1024, 5, 5}, 24, 1, 1, 1, 0),
                               conv2d("big_intermediate_grouped7x7", {1, 64, 9, 9}, 64, 4, 7, 1, 3),
                               conv2d("big_intermediate_depthwise_25x25", {1, 16, 26, 26}, 16, 16, 25, 1, 12)}) {
    ConvCase c = base;
    c.data = Data::kBigIntermediate;
    c.zp_x = kBigIntermediateZp;
    c.zp_y = -3;
    c.must_run = c.group == 1;
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

std::vector<ConvCase> deconv_cases() {
  std::vector<ConvCase> v;
  auto deconv = [](const std::string& label, Shape x, int64_t oc, int64_t group, int64_t k, int64_t stride,
                   int64_t pad) {
    ConvCase c = conv2d(label, std::move(x), oc, group, k, stride, pad);
    c.transposed = true;
    c.per_channel = group == 1;  // per-channel ConvTranspose weights only with one group
    return c;
  };
  v.push_back(deconv("upsample_k4_s2", {1, 32, 9, 10}, 24, 1, 4, 2, 1));
  v.push_back(deconv("k2_s2_db_head", {1, 64, 8, 8}, 16, 1, 2, 2, 0));
  {
    ConvCase c = deconv("out_pad_asym", {1, 16, 7, 6}, 20, 1, 3, 2, 1);
    c.out_pad = {1, 0};
    c.pads = {1, 0, 2, 1};
    c.zp_x = 45;
    c.zp_y = -100;
    v.push_back(c);
  }
  v.push_back(deconv("grouped", {1, 32, 6, 6}, 16, 4, 3, 2, 1));
  v.push_back(deconv("depthwise", {1, 24, 6, 6}, 24, 24, 4, 2, 1));
  {
    ConvCase c = deconv("dilated_relu", {1, 16, 6, 7}, 16, 1, 3, 1, 2);
    c.dil = {2, 2};
    c.act.name = "Relu";
    v.push_back(c);
  }
  {
    ConvCase c = deconv("stride3_clip_ties", {1, 8, 5, 5}, 12, 1, 5, 3, 1);
    c.data = Data::kTies;
    c.act = {"Clip", -2.f, 3.f};
    v.push_back(c);
  }
  {
    ConvCase c = deconv("no_bias_batch2", {2, 12, 5, 5}, 8, 1, 3, 1, 0);
    c.bias = false;
    v.push_back(c);
  }
  {
    ConvCase c = deconv("big_intermediate", {1, 600, 4, 4}, 16, 1, 3, 1, 1);
    c.data = Data::kBigIntermediate;
    c.zp_x = kBigIntermediateZp;
    c.must_run = false;  // oneDNN's deconvolution converts through float: declined beyond 2^24
    v.push_back(c);
  }
  {
    // Stride 2, 4x4 kernel: one output sees only one of the 4 tap phases, 4 x 128 products at most
    // (255 * 127 * 512 < 2^24) while all taps together would pass 2^24: the phase bound accepts it.
    ConvCase c = deconv("phase_bound", {1, 128, 5, 5}, 16, 1, 4, 2, 1);
    c.data = Data::kBigIntermediate;
    c.zp_x = kBigIntermediateZp;
    c.big_u8_sums = false;
    v.push_back(c);
  }
  {
    ConvCase c;
    c.label = "deconv1d";
    c.transposed = true;
    c.x = {1, 10, 17};
    c.oc = 6;
    c.k = {4};
    c.strides = {2};
    c.dil = {1};
    c.pads = {1, 2};
    c.out_pad = {1};
    v.push_back(c);
  }
  {
    ConvCase c;
    c.label = "deconv3d";
    c.transposed = true;
    c.x = {1, 8, 3, 4, 5};
    c.oc = 8;
    c.k = {2, 2, 2};
    c.strides = {2, 2, 2};
    c.dil = {1, 1, 1};
    c.pads = {0, 0, 0, 0, 0, 0};
    v.push_back(c);
  }
  return v;
}

TEST(Int8FastVsRef, ConvTranspose) {
  if (!has_kernel(OpId::ConvTranspose, "onednn_deconv_int8")) GTEST_SKIP() << "onednn_deconv_int8 not built";
  uint32_t seed = 300;
  g_ref_comparisons = 0;
  for (const ConvCase& c : deconv_cases()) run_conv_case(c, seed++);
  std::printf("  [info] %d cases also compared with ref_int8\n", g_ref_comparisons);
}

TEST(Int8FastVsRef, Conv) {
  if (!has_kernel(OpId::Conv, "onednn_conv_int8")) GTEST_SKIP() << "onednn_conv_int8 not built";
  uint32_t seed = 100;
  g_ref_comparisons = 0;
  for (const ConvCase& c : conv_cases()) run_conv_case(c, seed++);
  std::printf("  [info] %d cases also compared with ref_int8\n", g_ref_comparisons);
}

}  // namespace
namespace onednn {
int64_t onednn_conv_int8_set_band_bytes(int64_t bytes);  // src/kernels/onednn/conv_int8.cc
}
int64_t x86_pointwise_int8_set_min_pixels(int64_t pixels);  // src/kernels/x86/pointwise_int8_vnni.cc
namespace {

// The banded execution of onednn_conv_int8 (bands of output rows, each convolved and requantized
// on its own): every case again with band budgets that give one row per band, a few rows with a
// shorter last band, and the default budget on layers big enough to use it.
TEST(Int8FastVsRef, ConvInBands) {
  if (!has_kernel(OpId::Conv, "onednn_conv_int8")) GTEST_SKIP() << "onednn_conv_int8 not built";
  struct RestoreBudget {
    ~RestoreBudget() { onednn::onednn_conv_int8_set_band_bytes(0); }
  } restore;
  uint32_t seed = 700;
  for (int64_t budget : {int64_t{1}, int64_t{1500}}) {
    SCOPED_TRACE("band budget " + std::to_string(budget));
    onednn::onednn_conv_int8_set_band_bytes(budget);
    for (const ConvCase& c : conv_cases()) run_conv_case(c, seed++);
  }
  onednn::onednn_conv_int8_set_band_bytes(0);
  // mobilenet_v2-like layers whose accumulators exceed the default threshold: 1x1 16 -> 96 at
  // 112x112 (7 bands of 16 rows), and a strided 3x3 stem with padding (3 -> 32, 224 -> 112).
  run_conv_case(conv2d("pointwise_112", {1, 16, 112, 112}, 96, 1, 1, 1, 0), seed++);
  run_conv_case(conv2d("stem_stride2", {1, 3, 224, 224}, 32, 1, 3, 2, 1), seed++);
}

// x86_pw_int8 (src/kernels/x86/pointwise_int8_vnni.cc): 1x1 convolutions on NCHW with VNNI.
// Channel counts off the 4-channel groups and the 4-row blocks, pixel counts off the 64-pixel
// tiles (16 is the smallest the kernel takes), batch 2, both zero-point extremes, per-tensor
// weights, fused Relu/Clip, no bias, ties, accumulators beyond 2^24, and few tiles with many rows
// (the row blocks are split between threads). Images down to 16 pixels (the default minimum is
// larger: see the kernel's file comment).
// Each case must be declined by `kernel` (the log line of run_conv_case says so).
void expect_declined(const std::vector<ConvCase>& cases, uint32_t seed, const char* kernel) {
  for (ConvCase d : cases) {
    d.must_run = false;
    testing::internal::CaptureStdout();
    run_conv_case(d, seed++, kernel);
    const std::string out = testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("declined"), std::string::npos) << d.label << ": " << kernel << " took the node";
  }
}

// Runs the cases on the kernel's VNNI loops and, on a CPU with AMX-INT8, again on its AMX tiles
// (which take rows of 64 bytes and more there): both paths are checked on such a CPU.
void run_vnni_and_amx(const std::vector<ConvCase>& v, uint32_t seed, const char* kernel) {
  if (x86::cpu_amx_int8()) {
    SCOPED_TRACE("AMX");
    for (const ConvCase& c : v) run_conv_case(c, seed++, kernel);
  }
  SCOPED_TRACE("VNNI");
  setenv("OPENRKNN_DISABLE_KERNELS", "x86_amx", 1);
  for (const ConvCase& c : v) run_conv_case(c, seed++, kernel);
  unsetenv("OPENRKNN_DISABLE_KERNELS");
}

// x86::int8_sign_sums (the weight sums behind every u8 x s8 kernel's compensation): on every
// path, equal to the sums taken one value at a time; lengths around the 64-byte vectors and the
// scalar path's 2^16-value chunks, -128 and 127 runs.
TEST(Int8SignSums, EveryPathExact) {
  IsaGuard guard;
  std::vector<int8_t> w(200000);
  uint32_t state = 7;
  for (int8_t& v : w) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<int8_t>(state >> 24);
  }
  std::fill(w.begin() + 1000, w.begin() + 1300, int8_t{-128});
  std::fill(w.begin() + 2000, w.begin() + 2300, int8_t{127});
  std::vector<x86::Int8Isa> paths = isa_paths();
  paths.push_back(x86::Int8Isa::kNone);  // the automatic choice (the scalar loop on CPUs without AVX2)
  for (x86::Int8Isa isa : paths) {
    x86::int8_set_isa_override(isa);
    for (int64_t n : {0, 1, 63, 64, 65, 1299, 65535, 65536, 65537, 200000}) {
      int64_t want_pos = 0, want_neg = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (w[i] > 0) want_pos += w[i];
        else want_neg -= w[i];
      }
      int64_t pos = -1, neg = -1;
      x86::int8_sign_sums(w.data(), n, &pos, &neg);
      EXPECT_EQ(pos, want_pos) << "n=" << n << " isa=" << static_cast<int>(isa);
      EXPECT_EQ(neg, want_neg) << "n=" << n << " isa=" << static_cast<int>(isa);
    }
  }
}

TEST(Int8FastVsRef, PointwiseVnni) {
  if (!has_kernel(OpId::Conv, "x86_pw_int8")) GTEST_SKIP() << "x86_pw_int8 not built";
  if (!ORKNN_X86_HAS("avx512vnni") || !ORKNN_X86_HAS("avx512bw"))
    GTEST_SKIP() << "the CPU has no AVX-512 VNNI";
  struct AllSizes {
    int64_t previous = x86_pointwise_int8_set_min_pixels(16);
    ~AllSizes() { x86_pointwise_int8_set_min_pixels(previous); }
  } all_sizes;
  std::vector<ConvCase> v;
  auto pw = [&](const std::string& label, Shape x, int64_t oc) -> ConvCase& {
    v.push_back(conv2d(label, std::move(x), oc, 1, 1, 1, 0));
    return v.back();
  };
  pw("c3_oc5_p16", {1, 3, 4, 4}, 5);
  pw("c19_oc37_p143", {1, 19, 11, 13}, 37);
  pw("c16_oc96_p4096", {1, 16, 64, 64}, 96);
  pw("c64_oc8_p49", {1, 64, 7, 7}, 8);
  pw("c320_oc1280_p49_row_split", {1, 320, 7, 7}, 1280);  // threads split 64-channel tiles
  pw("c960_oc170_p49_vector_split", {1, 960, 7, 7}, 170);  // 11 vectors of 16: threads split vectors
  pw("batch2_p65", {2, 24, 5, 13}, 30);
  pw("zp_min", {1, 8, 9, 9}, 12).zp_x = -128;
  pw("zp_max", {1, 8, 9, 9}, 12).zp_x = 127;
  pw("per_tensor_weights", {1, 32, 8, 8}, 24).per_channel = false;
  {
    ConvCase& c = pw("relu_no_bias", {1, 40, 9, 9}, 20);
    c.bias = false;
    c.act.name = "Relu";
    c.zp_y = -3;
  }
  pw("clip", {1, 40, 9, 9}, 20).act = {"Clip", -0.3f, 0.9f};
  pw("clip_min_gt_max", {1, 16, 8, 8}, 24).act = {"Clip", 0.5f, -0.5f};
  pw("hardswish", {1, 40, 9, 9}, 72).act = {"HardSwish", 0.f, 0.f};
  pw("leaky_relu_c320", {1, 320, 7, 7}, 100).act = {"LeakyRelu", 0.1f, 0.f};
  pw("hardsigmoid", {1, 24, 8, 8}, 40).act = {"HardSigmoid", 0.2f, 0.5f};
  {
    ConvCase& c = pw("ties", {1, 16, 9, 9}, 24);
    c.data = Data::kTies;
    c.zp_x = 3;
    c.zp_y = 1;
  }
  {
    ConvCase& c = pw("large_acc", {1, 1024, 4, 4}, 24);
    c.data = Data::kExtreme;
    c.zp_x = -128;
  }
  // Small images: the NHWC path's row tails (6-pixel tiles) and output-channel tails (16-channel
  // vectors, 64-channel tiles); the runtime runs them only NHWC (LayoutFit::kBlockedOnly below
  // 256 pixels), but the NCHW path computes them right too.
  pw("p9_oc200", {1, 16, 3, 3}, 200);
  pw("p1_c5", {1, 5, 1, 1}, 17);
  pw("batch2_p49_c70", {2, 70, 7, 7}, 130);
  // On CPUs with AMX-INT8, rows of 64 bytes and more take the tile path: K padded to 64-byte
  // blocks (70, 100), jobs of 64 pixels with 1-4 tiles of 16 (1, 35, 64, 98 pixels), output
  // vector tails, the fused bounds and zero points. Elsewhere these run the VNNI loops.
  pw("amx_c64_p1", {1, 64, 1, 1}, 16);
  pw("amx_c128_p64_oc48", {1, 128, 8, 8}, 48);
  {
    ConvCase& c = pw("amx_c100_p35_relu", {1, 100, 5, 7}, 33);
    c.act.name = "Relu";
    c.zp_x = -7;
    c.zp_y = 5;
  }
  pw("amx_c200_clip", {1, 200, 6, 6}, 40).act = {"Clip", -0.4f, 0.6f};
  // Strides (NHWC only): output pixel (i, j) reads input pixel (2i, 2j), odd input sizes too.
  v.push_back(conv2d("stride2", {1, 16, 8, 8}, 16, 1, 1, 2, 0));
  v.push_back(conv2d("stride2_batch2_odd", {2, 40, 9, 7}, 70, 1, 1, 2, 0));
  v.push_back(conv2d("stride2_c72", {1, 72, 9, 9}, 40, 1, 1, 2, 0));
  uint32_t seed = 900;
  run_vnni_and_amx(v, seed, "x86_pw_int8");
  seed += 2 * static_cast<uint32_t>(v.size());
  // What the kernel must decline: padding, groups, stride 3.
  expect_declined({conv2d("padded", {1, 16, 8, 8}, 16, 1, 1, 1, 1), conv2d("grouped", {1, 16, 8, 8}, 16, 2, 1, 1, 0),
                   conv2d("stride3", {1, 16, 8, 8}, 16, 1, 1, 3, 0)},
                  seed, "x86_pw_int8");
}

TEST(Int8FastVsRef, Deconv2x2Vnni) {
  if (!has_kernel(OpId::ConvTranspose, "x86_deconv2x2_int8")) GTEST_SKIP() << "x86_deconv2x2_int8 not built";
  if (!ORKNN_X86_HAS("avx512vnni") || !ORKNN_X86_HAS("avx512bw"))
    GTEST_SKIP() << "the CPU has no AVX-512 VNNI";
  auto deconv = [](const std::string& label, Shape x, int64_t oc) {
    ConvCase c = conv2d(label, std::move(x), oc, 1, 2, 2, 0);
    c.transposed = true;
    return c;
  };
  std::vector<ConvCase> v;
  v.push_back(deconv("db_head_24_24", {1, 24, 7, 9}, 24));
  v.push_back(deconv("db_head_24_1_width_tail", {1, 24, 5, 37}, 1));  // 3 groups of 16 pixels, the last of 5
  v.push_back(deconv("c5_width16", {1, 5, 3, 16}, 7));                // a channel group of 1, one full group
  v.push_back(deconv("width70_two_tiles", {1, 8, 2, 70}, 6));         // two 64-pixel packed tiles
  v.push_back(deconv("batch2", {2, 12, 4, 6}, 10));
  {
    ConvCase c = deconv("zp_min_relu", {1, 16, 6, 6}, 8);
    c.zp_x = -128;
    c.zp_y = -20;
    c.act.name = "Relu";
    v.push_back(c);
  }
  {
    ConvCase c = deconv("zp_max_clip_per_tensor", {1, 16, 6, 6}, 8);
    c.zp_x = 127;
    c.per_channel = false;
    c.act = {"Clip", -0.5f, 0.8f};
    v.push_back(c);
  }
  {
    ConvCase c = deconv("ties_no_bias", {1, 16, 9, 9}, 12);
    c.data = Data::kTies;
    c.bias = false;
    c.zp_x = 3;
    c.zp_y = 1;
    v.push_back(c);
  }
  {
    ConvCase c = deconv("large_acc", {1, 1024, 3, 3}, 8);
    c.data = Data::kExtreme;
    c.zp_x = -128;
    v.push_back(c);
  }
  uint32_t seed = 1700;
  for (const ConvCase& c : v) run_conv_case(c, seed++, "x86_deconv2x2_int8");
  // What the kernel must decline: another kernel size, stride, padding or output padding, groups.
  ConvCase k3 = deconv("k3", {1, 8, 5, 5}, 8);
  k3.k = {3, 3};
  ConvCase s1 = deconv("stride1", {1, 8, 5, 5}, 8);
  s1.strides = {1, 1};
  ConvCase padded = deconv("padded", {1, 8, 5, 5}, 8);
  padded.pads = {1, 1, 1, 1};
  ConvCase out_pad = deconv("output_padding", {1, 8, 5, 5}, 8);
  out_pad.out_pad = {1, 1};
  ConvCase grouped = deconv("grouped", {1, 8, 5, 5}, 8);
  grouped.group = 2;
  grouped.per_channel = false;
  expect_declined({k3, s1, padded, out_pad, grouped}, seed, "x86_deconv2x2_int8");
}

TEST(Int8FastVsRef, StemVnni) {
  if (!has_kernel(OpId::Conv, "x86_stem_int8")) GTEST_SKIP() << "x86_stem_int8 not built";
  if (!ORKNN_X86_HAS("avx512vnni") || !ORKNN_X86_HAS("avx512bw"))
    GTEST_SKIP() << "the CPU has no AVX-512 VNNI";
  std::vector<ConvCase> v;
  auto add = [&](ConvCase c) -> ConvCase& {
    v.push_back(std::move(c));
    return v.back();
  };
  // The image networks' stems: 3x3 stride 2 (mobilenet_v2 at full size), 7x7 stride 2 (resnet).
  add(conv2d("mobilenet_v2_stem", {1, 3, 224, 224}, 32, 1, 3, 2, 1));
  add(conv2d("resnet_stem", {1, 3, 40, 36}, 64, 1, 7, 2, 3)).act.name = "Relu";
  add(conv2d("gray_k5_s1", {1, 1, 19, 23}, 20, 1, 5, 1, 2));
  add(conv2d("gray_wide_rows", {1, 1, 6, 150}, 20, 1, 3, 1, 1));  // several 64-byte stores per row
  add(conv2d("c4_k3_oc70_tails", {1, 4, 9, 11}, 70, 1, 3, 1, 0));
  add(conv2d("c2_k2_s2", {1, 2, 10, 10}, 24, 1, 2, 2, 0));
  add(conv2d("patch_k4_s4", {1, 3, 32, 28}, 48, 1, 4, 4, 0));
  add(conv2d("batch2_odd", {2, 3, 17, 13}, 24, 1, 3, 2, 1));
  {
    ConvCase& c = add(conv2d("asymmetric_pads_wide_window", {1, 3, 12, 30}, 20, 1, 3, 1, 0));
    c.k = {3, 11};  // window rows of 33 bytes: the 64-byte copies
    c.pads = {0, 5, 2, 1};
    c.strides = {2, 3};
  }
  add(conv2d("pads_past_the_window", {1, 3, 6, 6}, 20, 1, 3, 1, 4));  // outputs entirely in the border
  add(conv2d("zp_min", {1, 3, 9, 9}, 20, 1, 3, 1, 1)).zp_x = -128;
  add(conv2d("zp_max", {1, 3, 9, 9}, 20, 1, 3, 1, 1)).zp_x = 127;
  add(conv2d("per_tensor_weights", {1, 3, 16, 16}, 24, 1, 3, 2, 1)).per_channel = false;
  add(conv2d("clip", {1, 3, 16, 16}, 20, 1, 3, 2, 1)).act = {"Clip", -0.3f, 0.9f};
  add(conv2d("hardswish_pp_lcnet_stem", {1, 3, 32, 30}, 16, 1, 3, 2, 1)).act = {"HardSwish", 0.f, 0.f};
  add(conv2d("leaky_relu", {1, 3, 16, 16}, 24, 1, 3, 2, 1)).act = {"LeakyRelu", 0.1f, 0.f};
  add(conv2d("oc16_mobilenet_v3_stem", {1, 3, 32, 30}, 16, 1, 3, 2, 1)).act.name = "Relu";
  {
    ConvCase& c = add(conv2d("relu_no_bias", {1, 3, 16, 16}, 24, 1, 3, 2, 1));
    c.bias = false;
    c.act.name = "Relu";
    c.zp_y = -3;
  }
  {
    ConvCase& c = add(conv2d("ties", {1, 3, 16, 16}, 17, 1, 3, 1, 1));
    c.data = Data::kTies;
    c.zp_x = 3;
    c.zp_y = 1;
  }
  {
    ConvCase& c = add(conv2d("large_acc", {1, 4, 20, 20}, 24, 1, 16, 1, 0));  // 1024 products per output
    c.data = Data::kExtreme;
    c.zp_x = -128;
  }
  uint32_t seed = 1300;
  run_vnni_and_amx(v, seed, "x86_stem_int8");
  seed += 2 * static_cast<uint32_t>(v.size());
  // What the kernel must decline: 1x1 (the pointwise kernel's), 5 channels, under 16 output
  // channels, window rows past 64 bytes, groups, dilations.
  expect_declined({conv2d("k1", {1, 3, 8, 8}, 24, 1, 1, 1, 0), conv2d("c5", {1, 5, 8, 8}, 24, 1, 3, 1, 1),
                   conv2d("oc15", {1, 3, 8, 8}, 15, 1, 3, 2, 1),
                   conv2d("window_row_68_bytes", {1, 4, 20, 20}, 24, 1, 17, 1, 0),
                   conv2d("grouped", {1, 4, 8, 8}, 24, 2, 3, 1, 1), conv2d("dilated", {1, 3, 12, 12}, 24, 1, 3, 1, 2, 2)},
                  seed, "x86_stem_int8");
}

// ------------------------------------------------------------------ Gemm and MatMul

struct FcCase {
  std::string label;
  OpId op = OpId::Gemm;
  Shape a;  // Gemm: [M, K]; MatMul: any rank >= 1, K last
  int64_t n = 0;
  bool trans_b = false, bias = true, per_channel = true;
  int zp_x = -5, zp_y = 9;
  Data data = Data::kRandom;
  SpecAct act;
};

void run_fc_case(const FcCase& cs, uint32_t seed) {
  SCOPED_TRACE(cs.label);
  const int64_t k = cs.a.back(), n = cs.n, m = shape_numel(cs.a) / k;
  const bool gemm = cs.op == OpId::Gemm;
  const Shape bshape = cs.trans_b ? Shape{n, k} : Shape{k, n};
  Shape yshape;
  if (gemm) {
    yshape = {m, n};
  } else {
    yshape.assign(cs.a.begin(), cs.a.end() - 1);
    yshape.push_back(n);
  }
  std::vector<int8_t> a(static_cast<size_t>(m * k)), w(static_cast<size_t>(k * n));
  std::vector<int32_t> bias(static_cast<size_t>(n));
  make_data(cs.data, seed, cs.zp_x, &a, &w, &bias);
  const bool with_bias = gemm && cs.bias;
  std::vector<int64_t> acc(static_cast<size_t>(m * n));
  int64_t max_u8_sum = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = with_bias ? bias[static_cast<size_t>(j)] : 0, u8_sum = 0;
      for (int64_t t = 0; t < k; ++t) {
        const int64_t av = a[static_cast<size_t>(i * k + t)];
        const int64_t wv = w[static_cast<size_t>(cs.trans_b ? j * k + t : t * n + j)];
        s += (av - cs.zp_x) * wv;
        u8_sum += (av + 128) * wv;
      }
      acc[static_cast<size_t>(i * n + j)] = s;
      max_u8_sum = std::max<int64_t>(max_u8_sum, std::llabs(u8_sum));
    }
  if (cs.data == Data::kBigIntermediate) EXPECT_GT(max_u8_sum, 1 << 24) << "the u8 sums stay below 2^24";
  const Quantized q = choose_scales(cs.data, acc, n, 1, cs.per_channel, seed + 1);
  std::vector<int8_t> want(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    const float sw = q.s_w.size() == 1 ? q.s_w[0] : q.s_w[i % static_cast<size_t>(n)];
    want[i] = spec_requant(acc[i], q.s_x * sw, cs.zp_y, cs.act, q.s_y);
  }

  Graph g;
  g.precision = FloatPrecision::kFp32;
  Node node;
  node.name = std::string(gemm ? "gemm_int8_" : "matmul_int8_") + cs.label;
  node.op = cs.op;
  const int ai = g.add_tensor("a", cs.a, DType::kI8);
  g.tensor(ai).quant = per_tensor_q(q.s_x, cs.zp_x);
  const int wi = g.add_const("b", bshape, DType::kI8, w.data(), w.size());
  g.tensor(wi).quant = weight_q(q.s_w, cs.trans_b ? 0 : 1);
  node.inputs = {ai, wi};
  if (with_bias) {
    const int bi = g.add_const("c", {n}, DType::kI32, bias.data(), bias.size() * sizeof(int32_t));
    g.tensor(bi).quant = weight_q(q.s_w, 0);
    for (auto& s : g.tensor(bi).quant.scale) s *= q.s_x;
    node.inputs.push_back(bi);
  }
  const int yi = g.add_tensor("y", yshape, DType::kI8);
  g.tensor(yi).quant = per_tensor_q(q.s_y, cs.zp_y);
  node.outputs = {yi};
  if (gemm) {
    node.attrs.set_int("transA", 0);
    node.attrs.set_int("transB", cs.trans_b ? 1 : 0);
    node.attrs.set_float("alpha", 1.f);
    node.attrs.set_float("beta", 1.f);
  }
  set_act(node, cs.act);
  const std::string fast = gemm ? "onednn_gemm_int8" : "onednn_matmul_int8";
  expect_ran_as_the_cpu_allows(fast, /*must_run=*/true, check_fast(g, node, fast, {a}, want));
}

std::vector<FcCase> fc_cases() {
  std::vector<FcCase> v;
  auto gemm = [](const std::string& label, int64_t m, int64_t k, int64_t n, bool trans_b) {
    FcCase c;
    c.label = label;
    c.a = {m, k};
    c.n = n;
    c.trans_b = trans_b;
    return c;
  };
  v.push_back(gemm("fc1000", 1, 2048, 1000, true));
  {
    FcCase c = gemm("tails_relu", 7, 33, 19, false);
    c.zp_x = 77;
    c.zp_y = -31;
    c.act.name = "Relu";
    v.push_back(c);
  }
  {
    FcCase c = gemm("clip_per_tensor", 4, 64, 40, true);
    c.per_channel = false;
    c.act = {"Clip", -0.25f, 0.5f};
    v.push_back(c);
  }
  {
    FcCase c = gemm("ties", 5, 40, 24, true);
    c.data = Data::kTies;
    c.zp_x = 1;
    v.push_back(c);
  }
  {
    FcCase c = gemm("big_intermediate", 3, 4096, 70, true);
    c.data = Data::kBigIntermediate;
    c.zp_x = kBigIntermediateZp;
    v.push_back(c);
  }
  {
    FcCase c = gemm("large_acc", 2, 2048, 33, false);
    c.data = Data::kExtreme;
    c.zp_x = -128;
    v.push_back(c);
  }
  {
    FcCase c = gemm("no_bias_saturate", 9, 100, 50, false);
    c.bias = false;
    c.data = Data::kSaturate;
    v.push_back(c);
  }
  v.push_back(gemm("rows64", 64, 256, 130, true));
  auto matmul = [](const std::string& label, Shape a, int64_t n) {
    FcCase c;
    c.label = label;
    c.op = OpId::MatMul;
    c.a = std::move(a);
    c.n = n;
    return c;
  };
  v.push_back(matmul("3d", {2, 3, 50}, 37));
  v.push_back(matmul("1d", {64}, 10));
  {
    FcCase c = matmul("big_intermediate", {4, 3000}, 17);
    c.data = Data::kBigIntermediate;
    c.zp_x = kBigIntermediateZp;
    v.push_back(c);
  }
  {
    FcCase c = matmul("clip_ties", {3, 8, 48}, 16);
    c.data = Data::kTies;
    c.act = {"Clip", -3.f, 2.5f};
    v.push_back(c);
  }
  return v;
}

TEST(Int8FastVsRef, GemmMatMul) {
  if (!has_kernel(OpId::Gemm, "onednn_gemm_int8")) GTEST_SKIP() << "onednn_gemm_int8 not built";
  uint32_t seed = 500;
  g_ref_comparisons = 0;
  for (const FcCase& c : fc_cases()) run_fc_case(c, seed++);
  std::printf("  [info] %d cases also compared with ref_int8\n", g_ref_comparisons);
}

// Through infer and the kernel registry (tests/testutil/op_harness.h): the best kernel for a
// quantized node is the oneDNN one on CPUs with AVX-512 VNNI (another one on CPUs without VNNI),
// and its bytes equal the reference kernel's.
TEST(Int8FastVsRef, ThroughInferAndRegistry) {
  if (!has_kernel(OpId::Conv, "ref_int8") || !has_kernel(OpId::Gemm, "ref_int8"))
    GTEST_SKIP() << "quantized reference kernels not built";
  using test::TensorData;
  std::mt19937 rng(3);
  auto bytes = [&](size_t n, int lo, int hi) {
    std::vector<int8_t> v(n);
    for (auto& x : v) x = static_cast<int8_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
    return v;
  };
  auto bias_tensor = [&](int64_t n) {  // a constant int32 vector
    TensorData d;
    d.shape = {n};
    d.dtype = DType::kI32;
    d.is_const = true;
    for (int64_t i = 0; i < n; ++i) {
      const int32_t v = std::uniform_int_distribution<int>(-5000, 5000)(rng);
      const uint8_t* p = reinterpret_cast<const uint8_t*>(&v);
      d.bytes.insert(d.bytes.end(), p, p + sizeof(v));
    }
    return d;
  };
  struct Case { OpId op; Attrs attrs; std::vector<TensorData> in; std::string fast; };
  std::vector<Case> cases;
  {
    Case c{OpId::Conv, {}, {}, "onednn_conv_int8"};
    c.attrs.set_string("auto_pad", "SAME_UPPER");
    c.attrs.set_ints("strides", {2, 2});
    c.attrs.set_string("fused_act", "Relu");
    TensorData x = TensorData::of<int8_t>({1, 24, 15, 16}, bytes(24 * 15 * 16, -128, 127), DType::kI8);
    x.quant = per_tensor_q(0.03f, 7);
    TensorData w = TensorData::of<int8_t>({40, 24, 3, 3}, bytes(40 * 24 * 9, -127, 127), DType::kI8, true);
    std::vector<float> sw(40);
    for (size_t i = 0; i < sw.size(); ++i) sw[i] = 0.002f + 0.0001f * static_cast<float>(i);
    w.quant = weight_q(sw, 0);
    TensorData b = bias_tensor(40);
    c.in = {x, w, b};
    cases.push_back(c);
  }
  {
    Case c{OpId::Gemm, {}, {}, "onednn_gemm_int8"};
    c.attrs.set_int("transB", 1);
    TensorData a = TensorData::of<int8_t>({3, 300}, bytes(3 * 300, -128, 127), DType::kI8);
    a.quant = per_tensor_q(0.05f, -20);
    TensorData w = TensorData::of<int8_t>({70, 300}, bytes(70 * 300, -127, 127), DType::kI8, true);
    w.quant = weight_q(std::vector<float>(70, 0.001f), 0);
    TensorData b = bias_tensor(70);
    c.in = {a, w, b};
    cases.push_back(c);
  }
  {
    Case c{OpId::MatMul, {}, {}, "onednn_matmul_int8"};
    TensorData a = TensorData::of<int8_t>({2, 5, 64}, bytes(2 * 5 * 64, -128, 127), DType::kI8);
    a.quant = per_tensor_q(0.05f, 3);
    TensorData w = TensorData::of<int8_t>({64, 33}, bytes(64 * 33, -127, 127), DType::kI8, true);
    w.quant = weight_q(std::vector<float>(33, 0.004f), 1);
    c.in = {a, w};
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(op_name(c.op));
    const std::vector<QuantParams> out_q = {per_tensor_q(0.4f, -9)};
    test::OpResult ref = test::run_op(c.op, c.attrs, c.in, 1, "ref", 1, out_q);
    ASSERT_TRUE(ref.status.ok()) << ref.status.message();
    EXPECT_EQ(ref.kernel_name, "ref_int8");
    for (int threads : {1, 2}) {
      test::OpResult best = test::run_op(c.op, c.attrs, c.in, 1, "", threads, out_q);
      ASSERT_TRUE(best.status.ok()) << best.status.message();
      if (onednn_int8_must_run()) EXPECT_EQ(best.kernel_name, c.fast);
      if (onednn_int8_must_decline()) EXPECT_NE(best.kernel_name, c.fast);
      ASSERT_EQ(best.outputs.at(0).dtype, DType::kI8);
      EXPECT_EQ(first_mismatch(best.outputs.at(0).as<int8_t>(), ref.outputs.at(0).as<int8_t>()), "");
    }
  }
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
    // With each value activation (mult = s_x * s_w[c], then act, / s_y): against requant_one.
    for (const auto& [act, name] : {std::pair{FusedAct::kLeakyRelu, "LeakyRelu"}, std::pair{FusedAct::kHardSwish, "HardSwish"},
                                    std::pair{FusedAct::kHardSigmoid, "HardSigmoid"}}) {
      x86::RequantParams pa = p;
      pa.lo = -128;
      pa.hi = 127;
      pa.act = act;
      pa.alpha = act == FusedAct::kLeakyRelu ? 0.1f : 0.2f;
      pa.beta = 0.5f;
      pa.inv_s_y = 1.f / 0.037f;
      std::vector<float> pre(mult.size());
      for (size_t c = 0; c < pre.size(); ++c) pre[c] = std::ldexp(1.f + (c * 37 % 100) / 100.f, -36 + int(c % 6));
      pa.mult = pre.data();
      std::vector<int8_t> want_act(acc.size()), got_rows(acc.size()), got_planar(acc.size()), want_planar_act(acc.size());
      int saturated = 0, inside = 0;
      for (int64_t px = 0; px < pixels; ++px)
        for (int64_t c = 0; c < channels; ++c) {
          const int32_t t = static_cast<int32_t>(static_cast<uint32_t>(acc[px * channels + c]) + static_cast<uint32_t>(comp[c]));
          const float a = test::q8t::value_act_naive(static_cast<float>(t) * pre[c], name, pa.alpha, pa.beta);
          const long y =
              std::max(-128L, std::min(127L, std::lrint(std::max(-1000.f, std::min(1000.f, a * pa.inv_s_y))) + pa.zp));
          saturated += y == -128 || y == 127;
          inside += y > -128 && y < 127;
          want_act[px * channels + c] = static_cast<int8_t>(y);
          want_planar_act[c * pixels + px] = static_cast<int8_t>(y);
        }
      EXPECT_GT(inside, 100) << "too few outputs inside the int8 range";
      x86::requant_rows(acc.data(), pixels, channels, channels, got_rows.data(), channels, pa);
      x86::requant_to_planar(acc.data(), pixels, channels, channels, got_planar.data(), pixels, pa);
      EXPECT_EQ(first_mismatch(got_rows, want_act), "") << "act " << static_cast<int>(act);
      EXPECT_EQ(first_mismatch(got_planar, want_planar_act), "") << "act " << static_cast<int>(act);
    }
    std::vector<uint8_t> cl(acc.size()), flat(acc.size());
    x86::planar_to_u8_channels_last(x8.data(), channels, pixels, pixels, cl.data(), channels);
    x86::int8_to_u8(x8.data(), static_cast<int64_t>(x8.size()), flat.data());
    for (int64_t px = 0; px < pixels; ++px)
      for (int64_t c = 0; c < channels; ++c) ASSERT_EQ(cl[px * channels + c], uint8_t(x8[c * pixels + px] + 128));
    for (size_t i = 0; i < x8.size(); ++i) ASSERT_EQ(flat[i], uint8_t(x8[i] + 128));
  }
}

// ------------------------------------------------------------------ throughput (not a test)

// Time per run of a prepared kernel, best of several 0.3 s rounds.
double seconds_per_run(Kernel& k, const KernelContext& ctx) {
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    int runs = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double el = 0;
    do {
      k.run(ctx);
      ++runs;
      el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (el < 0.3);
    best = std::min(best, el / runs);
  }
  return best;
}

// Int8 vs fp32 oneDNN convolution on a ResNet-like layer (1x64x56x56, 64 out, 3x3, pad 1), whole
// kernel run (NCHW in and out, reorders/packing and requantization included), 1 thread.
// Run with --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'.
TEST(Int8FastVsRef, DISABLED_ConvThroughput) {
  const int threads = std::getenv("BENCH_THREADS") ? std::atoi(std::getenv("BENCH_THREADS")) : 1;
  struct Layer { const char* name; int64_t c, hw, oc, k, stride, pad, group; };
  const Layer layers[] = {{"resnet 64x56x56 -> 64, 3x3", 64, 56, 64, 3, 1, 1, 1},
                          {"resnet 256x14x14 -> 256, 3x3", 256, 14, 256, 3, 1, 1, 1},
                          {"pointwise 128x28x28 -> 512, 1x1", 128, 28, 512, 1, 1, 0, 1},
                          {"depthwise 144x56x56, 3x3", 144, 56, 144, 3, 1, 1, 144}};
  for (const Layer& L : layers) {
    const int64_t cg = L.c / L.group;
    const int64_t oh = (L.hw + 2 * L.pad - L.k) / L.stride + 1;
    const double ops = 2.0 * L.oc * cg * L.k * L.k * oh * oh;
    double t[2] = {0, 0};
    for (int quant = 0; quant < 2; ++quant) {
      Graph g;
      g.precision = FloatPrecision::kFp32;
      Node n;
      n.op = OpId::Conv;
      n.name = "bench";
      const DType dt = quant ? DType::kI8 : DType::kF32;
      const size_t es = quant ? 1 : 4;
      std::vector<uint8_t> wbytes(static_cast<size_t>(L.oc * cg * L.k * L.k) * es, 1);
      const int xi = g.add_tensor("x", {1, L.c, L.hw, L.hw}, dt);
      const int wi = g.add_const("w", {L.oc, cg, L.k, L.k}, dt, wbytes.data(), wbytes.size());
      const int yi = g.add_tensor("y", {1, L.oc, oh, oh}, dt);
      if (quant) {
        g.tensor(xi).quant = per_tensor_q(0.02f, 3);
        g.tensor(wi).quant = weight_q(std::vector<float>(static_cast<size_t>(L.oc), 0.01f), 0);
        g.tensor(yi).quant = per_tensor_q(0.05f, -2);
      }
      n.inputs = {xi, wi};
      n.outputs = {yi};
      n.attrs.set_ints("kernel_shape", {L.k, L.k});
      n.attrs.set_ints("strides", {L.stride, L.stride});
      n.attrs.set_ints("dilations", {1, 1});
      n.attrs.set_ints("pads", {L.pad, L.pad, L.pad, L.pad});
      n.attrs.set_int("group", L.group);
      const std::string name = quant ? "onednn_conv_int8" : "onednn_conv_f32";
      const KernelEntry* e = nullptr;
      for (const KernelEntry* k : kernels_for(OpId::Conv))
        if (name == k->name && (!k->supports || k->supports(g, n))) e = k;
      ASSERT_NE(e, nullptr) << name;
      std::unique_ptr<Kernel> k = e->create();
      std::vector<uint8_t> xb(g.tensor(xi).nbytes(), 1), yb(g.tensor(yi).nbytes());
      KernelContext ctx;
      ctx.graph = &g;
      ctx.node = &n;
      ctx.num_threads = threads;
      ctx.inputs = {xb.data(), g.tensor(wi).data.ptr};
      ctx.outputs = {yb.data()};
      ASSERT_TRUE(k->prepare(ctx).ok());
      t[quant] = seconds_per_run(*k, ctx);
    }
    std::printf("%-34s threads=%d  fp32 %.3f ms %.1f GFLOPS | int8 %.3f ms %.1f GOPS | x%.2f\n", L.name, threads,
                t[0] * 1e3, ops / t[0] * 1e-9, t[1] * 1e3, ops / t[1] * 1e-9, t[0] / t[1]);
  }
}

}  // namespace
}  // namespace orknn

#endif  // ORKNN_WITH_ONEDNN
