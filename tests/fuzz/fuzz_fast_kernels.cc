// libFuzzer target: a .rknn model on the fast kernels (the x86 and oneDNN backends; XNNPACK on
// aarch64), mutated from small real networks the converter wrote (corpus/fuzz_fast_kernels/:
// float and INT8 convolutions, depthwise, pointwise, pooling, Gemm/MatMul, transposed
// convolution, resize, element-wise chains). Each input goes through the kernels' supports() at
// planning, prepare() when the context binds and run() on one inference (tests/fuzz/fuzz_run.h),
// every context split over two threads. A model whose non-constant tensors are all integers (an
// INT8 graph) is run on the reference kernels as well, and the outputs must be the same bits: the
// fast INT8 kernels are exact by design (docs/kernels.md), so a difference aborts like a crash.
//
// Byte-level mutations of a model mostly break its FlatBuffers or its graph, and the loader
// refuses it before any kernel sees it (fuzz_model_loader is the target for that). So the
// mutator here (LLVMFuzzerCustomMutator) mostly edits the model as a model: it loads it, changes
// one thing (a node attribute, a tensor's quantization, an input's shape with every shape
// re-inferred, the platform, the float precision, an input's mean/std, the graph outputs) and
// writes it back with write_model, which verifies the graph; or it overwrites bytes of the
// weights (the data section), which the loader does not interpret. Plain byte mutations keep a
// share of the inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fuzz_run.h"
#include "graph/ir.h"
#include "graph/passes/passes.h"
#include "model/model_io.h"
#include "runtime/model.h"
#include "runtime/platform.h"

namespace {

// The reference kernels under ASan run INT8 graphs at about 40 M MACs a second (mobilenet_v2's
// 300 M: 7.6 s): larger INT8 graphs run on the fast kernels only, so that no input comes near
// the 10 s limit and the fuzzer keeps its pace.
constexpr int64_t kMaxComparedMacs = 20'000'000;

bool integer_only(const orknn::Graph& g) {
  for (const orknn::Tensor& t : g.tensors)
    if (!t.is_const() && (t.dtype == orknn::DType::kF32 || t.dtype == orknn::DType::kF16)) return false;
  return true;
}

using Rng = std::mt19937;

int64_t pick(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

// A nearby or small value of an integer attribute or dim (v itself where the step would overflow).
int64_t mutate_int(Rng& rng, int64_t v) {
  int64_t r = v;
  switch (pick(rng, 0, 4)) {
    case 0: return __builtin_add_overflow(v, 1, &r) ? v : r;
    case 1: return __builtin_sub_overflow(v, 1, &r) ? v : r;
    case 2: return __builtin_mul_overflow(v, 2, &r) ? v : r;
    case 3: return v / 2;
    default: return pick(rng, -2, 8);
  }
}

float mutate_float(Rng& rng, float v) {
  constexpr float kValues[] = {0.f, 1.f, -1.f, 1e-30f, 1e30f, 6.f, 0.5f};
  switch (pick(rng, 0, 2)) {
    case 0: return v * std::ldexp(1.f, static_cast<int>(pick(rng, -8, 8)));
    case 1: return -v;
    default: return kValues[pick(rng, 0, sizeof(kValues) / sizeof(kValues[0]) - 1)];
  }
}

// One edit of the graph; false when the graph offers nothing for the edit drawn.
bool mutate_graph(Rng& rng, orknn::Graph& g) {
  switch (pick(rng, 0, 6)) {
    case 0: {  // a node attribute
      if (g.nodes.empty()) return false;
      orknn::Node& n = g.nodes[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(g.nodes.size()) - 1))];
      const auto& all = n.attrs.all();
      if (all.empty()) return false;
      auto it = std::next(all.begin(), pick(rng, 0, static_cast<int64_t>(all.size()) - 1));
      orknn::AttrValue v = it->second;
      using K = orknn::AttrValue::Kind;
      if (v.kind == K::kInt) v.i = mutate_int(rng, v.i);
      else if (v.kind == K::kFloat) v.f = mutate_float(rng, v.f);
      else if (v.kind == K::kInts && !v.ints.empty()) {
        int64_t& e = v.ints[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(v.ints.size()) - 1))];
        e = mutate_int(rng, e);
      } else if (v.kind == K::kFloats && !v.floats.empty()) {
        float& e = v.floats[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(v.floats.size()) - 1))];
        e = mutate_float(rng, e);
      } else {
        return false;
      }
      n.attrs.set(it->first, v);
      return true;
    }
    case 1: {  // a tensor's quantization (activations and weights)
      std::vector<orknn::Tensor*> quantized;
      for (orknn::Tensor& t : g.tensors)
        if (!t.quant.empty()) quantized.push_back(&t);
      if (quantized.empty()) return false;
      orknn::QuantParams& q = quantized[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(quantized.size()) - 1))]->quant;
      const size_t i = static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(q.scale.size()) - 1));
      if (pick(rng, 0, 1) && i < q.zero_point.size()) q.zero_point[i] = static_cast<int32_t>(pick(rng, -128, 127));
      else q.scale[i] *= std::ldexp(1.f, static_cast<int>(pick(rng, -12, 12)));
      return true;
    }
    case 2: {  // a dim of an input, every other shape following
      if (g.inputs.empty()) return false;
      orknn::Shape& s = g.tensor(g.inputs[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(g.inputs.size()) - 1))].tensor).shape;
      if (s.empty()) return false;
      int64_t& d = s[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(s.size()) - 1))];
      d = std::max<int64_t>(1, mutate_int(rng, d));
      return true;
    }
    case 3: {
      const std::vector<std::string> names = orknn::platform_names();
      g.platform = names[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(names.size()) - 1))];
      return true;
    }
    case 4:
      g.precision = g.precision == orknn::FloatPrecision::kFp16 ? orknn::FloatPrecision::kFp32 : orknn::FloatPrecision::kFp16;
      return true;
    case 5: {  // an input's mean/std: one value for all channels
      if (g.inputs.empty()) return false;
      orknn::GraphInput& in = g.inputs[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(g.inputs.size()) - 1))];
      in.mean = {mutate_float(rng, 128.f)};
      in.std = {std::fabs(mutate_float(rng, 64.f))};
      return true;
    }
    default: {  // an output of a node also a graph output: models with intermediate outputs
      if (g.nodes.empty()) return false;
      const int t = g.nodes[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(g.nodes.size()) - 1))].outputs[0];
      if (t < 0 || std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) return false;
      g.outputs.push_back(t);
      return true;
    }
  }
}

// Loads the model, applies one graph edit and writes it back (verified) into `data`; 0 when the
// model does not load, the edit does not apply, or the result is refused or too large.
size_t mutate_model(Rng& rng, uint8_t* data, size_t size, size_t max_size) {
  const size_t padded = (size + 63) / 64 * 64;
  std::shared_ptr<uint8_t> owner(static_cast<uint8_t*>(std::aligned_alloc(64, padded ? padded : 64)), std::free);
  if (size) std::memcpy(owner.get(), data, size);
  orknn::Graph g;
  orknn::DynamicShapes dyn;
  if (!orknn::load_model(owner, owner.get(), size, &g, &dyn).ok()) return 0;
  if (!mutate_graph(rng, g) || !orknn::reinfer_graph(g).ok()) return 0;
  std::vector<uint8_t> out;
  // The shape sets describe the graph before the edit; a static model when they no longer fit.
  if (!orknn::write_model(g, dyn, &out).ok() && (dyn.empty() || !orknn::write_model(g, &out).ok())) return 0;
  if (out.size() > max_size) return 0;
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

// Overwrites up to 8 bytes of the data section (constants' bytes, after the 64-byte aligned end of
// the metadata) with boundary bytes or random ones; 0 when the model has no data section.
size_t mutate_weights(Rng& rng, uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint32_t prefix;
  std::memcpy(&prefix, data, sizeof(prefix));
  const uint64_t start = (uint64_t{prefix} + 4 + 63) / 64 * 64;
  if (start >= size) return 0;
  constexpr uint8_t kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe};
  for (int64_t k = pick(rng, 1, 8); k > 0; --k) {
    const size_t at = static_cast<size_t>(pick(rng, static_cast<int64_t>(start), static_cast<int64_t>(size) - 1));
    data[at] = pick(rng, 0, 1) ? kBytes[pick(rng, 0, sizeof(kBytes) - 1)] : static_cast<uint8_t>(pick(rng, 0, 255));
  }
  return size;
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Rng rng(seed);
  const int64_t kind = pick(rng, 0, 9);
  size_t n = 0;
  if (kind < 6) n = mutate_model(rng, data, size, max_size);
  else if (kind < 9) n = mutate_weights(rng, data, size);
  return n ? n : LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Switches read at every plan (docs/kernels.md "Environment switches"): fast kernels, two
  // threads per context whatever the model's size and the host's load, so the kernels' work
  // splits and per-thread scratch are fuzzed too.
  unsetenv("OPENRKNN_REF_KERNELS");
  setenv("OPENRKNN_NUM_THREADS", "2", 1);
  setenv("OPENRKNN_MIN_THREADED_MACS", "0", 1);
  setenv("OPENRKNN_BUSY_HOST", "0", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<const orknn::Model> model;
  if (!orknn::load_model_from_buffer(data, size, &model).ok()) return 0;
  if (orknn_fuzz::activation_bytes(model->graph) > orknn_fuzz::kMaxActivationBytes) return 0;
  std::vector<std::vector<uint8_t>> fast;
  if (!orknn_fuzz::context_and_run(model, data, size, &fast)) return 0;
  if (!integer_only(model->graph) || model->macs > kMaxComparedMacs) return 0;

  std::vector<std::vector<uint8_t>> ref;
  setenv("OPENRKNN_REF_KERNELS", "1", 1);  // for the whole context: plan, I/O conversions and run
  const bool ran = orknn_fuzz::context_and_run(model, data, size, &ref);
  unsetenv("OPENRKNN_REF_KERNELS");
  if (!ran) {
    std::fprintf(stderr, "fuzz_fast_kernels: the reference kernels refused an INT8 model the fast kernels ran\n");
    std::abort();
  }
  if (ref != fast) {
    std::fprintf(stderr, "fuzz_fast_kernels: INT8 outputs of the fast and the reference kernels differ\n");
    std::abort();
  }
  return 0;
}
