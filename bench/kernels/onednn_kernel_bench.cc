// Microbenchmark of the oneDNN fp32 kernels on the layer shapes of resnet18 and mobilenet_v2
// (224x224 input, batch 1), through the real Kernel interface (prepare once, time run()).
//
// Each conv layer runs with the kernel's own layout choice (layout 0) and with the activation layout
// forced to plain NCHW (1), oneDNN's choice with run-time reorders (2) and nChw16c with run-time
// reorders (3), on 1 and 2 threads. The results decide conv_layout_candidates() in
// src/kernels/onednn/conv.cc; see docs/kernels.md.
//
//   bench/kernels/onednn_kernel_bench [--benchmark_filter=...]
// Reports mean and fastest time per run and GFLOP/s at the fastest run (convs: 2*MACs).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"
#include "kernels/onednn/onednn_common.h"

namespace orknn {
namespace onednn {
int64_t onednn_conv_int8_set_band_bytes(int64_t bytes);  // src/kernels/onednn/conv_int8.cc
}
// src/kernels/x86/pointwise_int8_vnni.cc: the smallest image the kernel takes.
int64_t x86_pointwise_int8_set_min_pixels(int64_t pixels);
}  // namespace orknn

namespace orknn {
namespace {

struct ConvLayer {
  const char* name;
  int64_t c, h, w, oc, k, stride, group;
  int count;  // how often the shape occurs in the network (for per-network totals)
};

// Every distinct conv shape of resnet18 and mobilenet_v2 at 224x224, and shufflenet_v2's
// most frequent ones, batch 1 (pads = k/2).
const ConvLayer kConvLayers[] = {
    {"r18_stem_3_64_k7s2", 3, 224, 224, 64, 7, 2, 1, 1},
    {"r18_l1_64_64_k3", 64, 56, 56, 64, 3, 1, 1, 4},
    {"r18_l2_64_128_k3s2", 64, 56, 56, 128, 3, 2, 1, 1},
    {"r18_l2_128_128_k3", 128, 28, 28, 128, 3, 1, 1, 3},
    {"r18_l2_down_64_128_k1s2", 64, 56, 56, 128, 1, 2, 1, 1},
    {"r18_l3_128_256_k3s2", 128, 28, 28, 256, 3, 2, 1, 1},
    {"r18_l3_256_256_k3", 256, 14, 14, 256, 3, 1, 1, 3},
    {"r18_l3_down_128_256_k1s2", 128, 28, 28, 256, 1, 2, 1, 1},
    {"r18_l4_256_512_k3s2", 256, 14, 14, 512, 3, 2, 1, 1},
    {"r18_l4_512_512_k3", 512, 7, 7, 512, 3, 1, 1, 3},
    {"r18_l4_down_256_512_k1s2", 256, 14, 14, 512, 1, 2, 1, 1},
    {"mv2_stem_3_32_k3s2", 3, 224, 224, 32, 3, 2, 1, 1},
    {"mv2_dw32_k3_112", 32, 112, 112, 32, 3, 1, 32, 1},
    {"mv2_pw_32_16_112", 32, 112, 112, 16, 1, 1, 1, 1},
    {"mv2_pw_16_96_112", 16, 112, 112, 96, 1, 1, 1, 1},
    {"mv2_dw96_k3s2_112", 96, 112, 112, 96, 3, 2, 96, 1},
    {"mv2_pw_96_24_56", 96, 56, 56, 24, 1, 1, 1, 1},
    {"mv2_pw_24_144_56", 24, 56, 56, 144, 1, 1, 1, 2},
    {"mv2_dw144_k3_56", 144, 56, 56, 144, 3, 1, 144, 1},
    {"mv2_pw_144_24_56", 144, 56, 56, 24, 1, 1, 1, 1},
    {"mv2_dw144_k3s2_56", 144, 56, 56, 144, 3, 2, 144, 1},
    {"mv2_pw_144_32_28", 144, 28, 28, 32, 1, 1, 1, 1},
    {"mv2_pw_32_192_28", 32, 28, 28, 192, 1, 1, 1, 3},
    {"mv2_dw192_k3_28", 192, 28, 28, 192, 3, 1, 192, 2},
    {"mv2_pw_192_32_28", 192, 28, 28, 32, 1, 1, 1, 2},
    {"mv2_dw192_k3s2_28", 192, 28, 28, 192, 3, 2, 192, 1},
    {"mv2_pw_192_64_14", 192, 14, 14, 64, 1, 1, 1, 1},
    {"mv2_pw_64_384_14", 64, 14, 14, 384, 1, 1, 1, 4},
    {"mv2_dw384_k3_14", 384, 14, 14, 384, 3, 1, 384, 4},
    {"mv2_pw_384_64_14", 384, 14, 14, 64, 1, 1, 1, 3},
    {"mv2_pw_384_96_14", 384, 14, 14, 96, 1, 1, 1, 1},
    {"mv2_pw_96_576_14", 96, 14, 14, 576, 1, 1, 1, 3},
    {"mv2_dw576_k3_14", 576, 14, 14, 576, 3, 1, 576, 2},
    {"mv2_pw_576_96_14", 576, 14, 14, 96, 1, 1, 1, 2},
    {"mv2_dw576_k3s2_14", 576, 14, 14, 576, 3, 2, 576, 1},
    {"mv2_pw_576_160_7", 576, 7, 7, 160, 1, 1, 1, 1},
    {"mv2_pw_160_960_7", 160, 7, 7, 960, 1, 1, 1, 3},
    {"mv2_dw960_k3_7", 960, 7, 7, 960, 3, 1, 960, 3},
    {"mv2_pw_960_160_7", 960, 7, 7, 160, 1, 1, 1, 2},
    {"mv2_pw_960_320_7", 960, 7, 7, 320, 1, 1, 1, 1},
    {"mv2_pw_320_1280_7", 320, 7, 7, 1280, 1, 1, 1, 1},
    // shufflenet_v2_x1_0: channel counts that are not multiples of 16 (nChw16c pads them).
    {"shuf_pw_58_58_28", 58, 28, 28, 58, 1, 1, 1, 7},
    {"shuf_pw_116_116_14", 116, 14, 14, 116, 1, 1, 1, 15},
    {"shuf_pw_232_232_7", 232, 7, 7, 232, 1, 1, 1, 7},
    {"shuf_dw116_k3_14", 116, 14, 14, 116, 3, 1, 116, 7},
};

std::vector<float> random_vec(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// A one-node graph with its buffers, built without infer (attributes written out here).
struct Harness {
  Graph g;
  Node n;
  std::vector<std::vector<float>> buffers;  // activations, by node input/output order
  KernelContext ctx;
  std::unique_ptr<Kernel> kernel;
  std::string kernel_name;

  bool allow_fast = true;  // false: the reference kernel, for comparison

  bool start(int threads) {
    ctx.graph = &g;
    ctx.node = &n;
    ctx.num_threads = threads;
    for (int id : n.inputs) {
      const Tensor& t = g.tensor(id);
      if (t.is_const()) {
        ctx.inputs.push_back(t.data.ptr);
      } else {
        buffers.push_back(random_vec(static_cast<size_t>(t.numel()), 7));
        ctx.inputs.push_back(buffers.back().data());
      }
    }
    for (int id : n.outputs) {
      buffers.push_back(std::vector<float>(static_cast<size_t>(g.tensor(id).numel())));
      ctx.outputs.push_back(buffers.back().data());
    }
    kernel = create_kernel(g, n, allow_fast, &kernel_name);
    if (!kernel) return false;
    Status st = kernel->prepare(ctx);
    if (!st.ok()) std::fprintf(stderr, "prepare: %s\n", st.message().c_str());
    return st.ok();
  }
};

void build_conv(Harness& h, const ConvLayer& l) {
  const int64_t pad = l.k / 2;
  const int64_t oh = (l.h + 2 * pad - l.k) / l.stride + 1, ow = (l.w + 2 * pad - l.k) / l.stride + 1;
  const Shape ws{l.oc, l.c / l.group, l.k, l.k};
  std::vector<float> w = random_vec(static_cast<size_t>(shape_numel(ws)), 1), b = random_vec(l.oc, 2);
  h.n.op = OpId::Conv;
  h.n.name = l.name;
  h.n.inputs = {h.g.add_tensor("x", {1, l.c, l.h, l.w}, DType::kF32),
                h.g.add_const("w", ws, DType::kF32, w.data(), w.size() * 4),
                h.g.add_const("b", {l.oc}, DType::kF32, b.data(), b.size() * 4)};
  h.n.outputs = {h.g.add_tensor("y", {1, l.oc, oh, ow}, DType::kF32)};
  h.n.attrs.set_ints("kernel_shape", {l.k, l.k});
  h.n.attrs.set_ints("strides", {l.stride, l.stride});
  h.n.attrs.set_ints("dilations", {1, 1});
  h.n.attrs.set_ints("pads", {pad, pad, pad, pad});
  h.n.attrs.set_int("group", l.group);
  h.n.attrs.set_string("fused_act", "Relu");
}

void run_timed(benchmark::State& state, Harness& h, int threads, double flops, const std::string& label) {
  if (!h.start(threads)) {
    state.SkipWithError("no kernel / prepare failed");
    return;
  }
  // The machine is shared: besides the mean, keep the fastest single run, which is the one least
  // disturbed by other processes (docs/kernels.md quotes it).
  double best = 1e30;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    h.kernel->run(h.ctx);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (us < best) best = us;
  }
  state.SetLabel(label + "/" + h.kernel_name);  // a fallback to "ref" shows here
  state.counters["min_us"] = best;
  state.counters["GFLOPs_at_min"] = flops / best * 1e-3;
}

void BM_Conv(benchmark::State& state) {
  const ConvLayer& l = kConvLayers[state.range(0)];
  onednn::set_act_layout_override(static_cast<onednn::ActLayout>(state.range(1)));
  const int threads = static_cast<int>(state.range(2));
  Harness h;
  build_conv(h, l);
  const Tensor& y = h.g.tensor(h.n.outputs[0]);
  const double flops = 2.0 * static_cast<double>(y.numel()) * (l.c / l.group) * l.k * l.k;
  state.counters["count"] = l.count;
  run_timed(state, h, threads, flops, l.name);
  onednn::set_act_layout_override(onednn::ActLayout::kAuto);
}

void conv_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"layer", "layout", "threads"});
  for (int i = 0; i < static_cast<int>(sizeof(kConvLayers) / sizeof(kConvLayers[0])); ++i)
    for (int layout : {0, 1, 2, 3})  // auto, plain NCHW, oneDNN's choice, nChw16c (onednn::ActLayout)
      for (int threads : {1, 2}) b->Args({i, layout, threads});
}
BENCHMARK(BM_Conv)->Apply(conv_args)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The INT8 convolution kernels on the same layers, per-channel weights, fused Relu. mode 0: the
// runtime's choice (x86_pw_int8 for the pointwise layers it takes, else onednn_conv_int8 with its
// bands); 1: onednn_conv_int8 with its default band budget; 2: onednn_conv_int8 as one whole-image
// step. The comparisons behind kDefaultBandAccBytes (src/kernels/onednn/conv_int8.cc) and the
// pointwise kernel's minimum image size.
void BM_ConvInt8(benchmark::State& state) {
  const ConvLayer& l = kConvLayers[state.range(0)];
  const int64_t mode = state.range(1);
  const int64_t previous = onednn::onednn_conv_int8_set_band_bytes(mode == 2 ? int64_t{1} << 40 : 0);
  const int64_t min_pixels = x86_pointwise_int8_set_min_pixels(mode == 0 ? 0 : int64_t{1} << 40);
  const int threads = static_cast<int>(state.range(2));
  const int64_t pad = l.k / 2;
  const int64_t oh = (l.h + 2 * pad - l.k) / l.stride + 1, ow = (l.w + 2 * pad - l.k) / l.stride + 1;
  const Shape ws{l.oc, l.c / l.group, l.k, l.k};
  std::mt19937 rng(3);
  std::vector<int8_t> w(static_cast<size_t>(shape_numel(ws)));
  for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  std::vector<int32_t> bias(static_cast<size_t>(l.oc));
  for (int32_t& v : bias) v = static_cast<int32_t>(rng() % 2001) - 1000;
  Harness h;
  h.n.op = OpId::Conv;
  h.n.name = l.name;
  const int x = h.g.add_tensor("x", {1, l.c, l.h, l.w}, DType::kI8);
  const int wt = h.g.add_const("w", ws, DType::kI8, w.data(), w.size());
  const int b = h.g.add_const("b", {l.oc}, DType::kI32, bias.data(), bias.size() * 4);
  const int y = h.g.add_tensor("y", {1, l.oc, oh, ow}, DType::kI8);
  h.g.tensor(x).quant = QuantParams{{0.02f}, {3}, -1};
  h.g.tensor(wt).quant = QuantParams{std::vector<float>(static_cast<size_t>(l.oc), 0.01f),
                                     std::vector<int32_t>(static_cast<size_t>(l.oc), 0), 0};
  h.g.tensor(b).quant = QuantParams{std::vector<float>(static_cast<size_t>(l.oc), 0.0002f),
                                    std::vector<int32_t>(static_cast<size_t>(l.oc), 0), 0};
  h.g.tensor(y).quant = QuantParams{{0.05f}, {-2}, -1};
  h.n.inputs = {x, wt, b};
  h.n.outputs = {y};
  h.n.attrs.set_ints("kernel_shape", {l.k, l.k});
  h.n.attrs.set_ints("strides", {l.stride, l.stride});
  h.n.attrs.set_ints("dilations", {1, 1});
  h.n.attrs.set_ints("pads", {pad, pad, pad, pad});
  h.n.attrs.set_int("group", l.group);
  h.n.attrs.set_string("fused_act", "Relu");
  const double ops = 2.0 * static_cast<double>(l.oc * oh * ow) * (l.c / l.group) * l.k * l.k;
  state.counters["count"] = l.count;
  run_timed(state, h, threads, ops, l.name);  // int8 activations fit in the float buffers
  onednn::onednn_conv_int8_set_band_bytes(previous);
  x86_pointwise_int8_set_min_pixels(min_pixels);
}

void conv_int8_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"layer", "mode", "threads"});
  for (int i = 0; i < static_cast<int>(sizeof(kConvLayers) / sizeof(kConvLayers[0])); ++i)
    for (int mode : {0, 1, 2})
      for (int threads : {1, 2}) b->Args({i, mode, threads});
}
BENCHMARK(BM_ConvInt8)->Apply(conv_int8_args)->Unit(benchmark::kMicrosecond)->UseRealTime();

struct PoolLayer {
  const char* name;
  OpId op;
  int64_t c, h, k, stride, pad;
};
const PoolLayer kPoolLayers[] = {
    {"r18_maxpool_64_112_k3s2", OpId::MaxPool, 64, 112, 3, 2, 1},
    {"avgpool_256_28_k2s2", OpId::AveragePool, 256, 28, 2, 2, 0},
    {"avgpool_64_56_k3s1p1", OpId::AveragePool, 64, 56, 3, 1, 1},
    {"r18_gap_512_7", OpId::GlobalAveragePool, 512, 7, 0, 0, 0},
    {"mv2_gap_1280_7", OpId::GlobalAveragePool, 1280, 7, 0, 0, 0},
};

void BM_Pool(benchmark::State& state) {
  const PoolLayer& l = kPoolLayers[state.range(0)];
  Harness h;
  h.allow_fast = state.range(2) == 0;
  h.n.op = l.op;
  h.n.name = l.name;
  int64_t oh = 1;
  if (l.k > 0) {
    oh = (l.h + 2 * l.pad - l.k) / l.stride + 1;
    h.n.attrs.set_ints("kernel_shape", {l.k, l.k});
    h.n.attrs.set_ints("strides", {l.stride, l.stride});
    h.n.attrs.set_ints("dilations", {1, 1});
    h.n.attrs.set_ints("pads", {l.pad, l.pad, l.pad, l.pad});
    h.n.attrs.set_int("ceil_mode", 0);
    if (l.op == OpId::AveragePool) h.n.attrs.set_int("count_include_pad", 0);
  }
  h.n.inputs = {h.g.add_tensor("x", {1, l.c, l.h, l.h}, DType::kF32)};
  h.n.outputs = {h.g.add_tensor("y", {1, l.c, oh, oh}, DType::kF32)};
  const double flops = static_cast<double>(l.c) * oh * oh * (l.k > 0 ? l.k * l.k : l.h * l.h);
  run_timed(state, h, static_cast<int>(state.range(1)), flops, l.name);
}

void pool_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"layer", "threads", "ref"});
  for (int i = 0; i < static_cast<int>(sizeof(kPoolLayers) / sizeof(kPoolLayers[0])); ++i) {
    for (int threads : {1, 2}) b->Args({i, threads, 0});
    b->Args({i, 1, 1});  // the reference kernel (single-threaded) for comparison
  }
}
BENCHMARK(BM_Pool)->Apply(pool_args)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_Gemm(benchmark::State& state) {
  // Classifier heads: resnet18 fc 512->1000, mobilenet_v2 1280->1000 (Gemm, transB=1).
  const int64_t k = state.range(0), n = 1000;
  Harness h;
  h.allow_fast = state.range(2) == 0;
  std::vector<float> w = random_vec(static_cast<size_t>(k * n), 3), b = random_vec(n, 4);
  h.n.op = OpId::Gemm;
  h.n.name = "fc";
  h.n.inputs = {h.g.add_tensor("x", {1, k}, DType::kF32), h.g.add_const("w", {n, k}, DType::kF32, w.data(), w.size() * 4),
                h.g.add_const("b", {n}, DType::kF32, b.data(), b.size() * 4)};
  h.n.outputs = {h.g.add_tensor("y", {1, n}, DType::kF32)};
  h.n.attrs.set_int("transB", 1);
  run_timed(state, h, static_cast<int>(state.range(1)), 2.0 * k * n, "fc_" + std::to_string(k) + "_1000");
}
BENCHMARK(BM_Gemm)->ArgNames({"k", "threads", "ref"})->Args({512, 1, 0})->Args({512, 2, 0})->Args({512, 1, 1})
    ->Args({1280, 1, 0})->Args({1280, 2, 0})->Args({1280, 1, 1})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace orknn

BENCHMARK_MAIN();
