// libFuzzer target: arbitrary bytes as a .rknn model. Exercises the FlatBuffers + graph verifier
// (load_model), the runtime's own load path (load_model_from_buffer, which re-runs infer on every
// node), Context::create (planning, kernel selection, prepare) and, when a context comes up, one
// inputs_set + run + outputs_get with zeroed inputs (models with more than kMaxActivationBytes of
// non-constant tensors stop after loading). Any Status error is fine; crashes, leaks,
// sanitizer reports and hangs are findings.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "graph/ir.h"
#include "model/model_io.h"
#include "runtime/context.h"

namespace {

// A few fuzzed bytes can declare gigabyte tensors, which the runtime then rightly allocates (and
// zeroes) as its arena, and reference kernels would take minutes over them: that only measures
// the RSS and time limits. Models whose non-constant tensors add up to more than this are loaded
// and verified but get no context.
constexpr uint64_t kMaxActivationBytes = uint64_t{4} << 20;

uint64_t activation_bytes(const orknn::Graph& g) {
  uint64_t total = 0;
  for (const orknn::Tensor& t : g.tensors) {
    if (t.is_const()) continue;
    const int64_t numel = t.numel();
    if (numel < 0) return UINT64_MAX;
    const uint64_t bytes = static_cast<uint64_t>(numel) * orknn::dtype_size(t.dtype);
    if (bytes > kMaxActivationBytes) return UINT64_MAX;  // also keeps the sum from overflowing
    total += bytes;
  }
  return total;
}

void run_once(orknn::Context* ctx, bool uint8_inputs) {
  const uint32_t n_in = ctx->n_inputs();
  std::vector<rknn_input> inputs(n_in);
  std::vector<std::vector<uint8_t>> bufs(n_in);
  for (uint32_t i = 0; i < n_in; ++i) {
    rknn_tensor_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.index = i;
    if (!ctx->input_attr(i, &attr).ok()) return;
    const size_t elem_bytes = uint8_inputs ? 1 : sizeof(float);
    bufs[i].assign(static_cast<size_t>(attr.n_elems) * elem_bytes, 0);
    std::memset(&inputs[i], 0, sizeof(rknn_input));
    inputs[i].index = i;
    inputs[i].buf = bufs[i].empty() ? nullptr : bufs[i].data();
    inputs[i].size = static_cast<uint32_t>(bufs[i].size());
    inputs[i].type = uint8_inputs ? RKNN_TENSOR_UINT8 : RKNN_TENSOR_FLOAT32;
    inputs[i].fmt = attr.fmt;
  }
  if (!ctx->inputs_set(n_in, inputs.data()).ok()) return;
  if (!ctx->run().ok()) return;
  const uint32_t n_out = ctx->n_outputs();
  std::vector<rknn_output> outputs(n_out);
  for (uint32_t i = 0; i < n_out; ++i) {
    std::memset(&outputs[i], 0, sizeof(rknn_output));
    outputs[i].index = i;
    outputs[i].want_float = 1;
  }
  if (ctx->outputs_get(n_out, outputs.data()).ok()) (void)ctx->outputs_release(n_out, outputs.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // 1. The format loader + graph verifier on its own, from 64-byte aligned storage as it requires.
  {
    const size_t padded = (size + 63) / 64 * 64;
    std::shared_ptr<uint8_t> owner(static_cast<uint8_t*>(std::aligned_alloc(64, padded ? padded : 64)), std::free);
    if (size) std::memcpy(owner.get(), data, size);
    orknn::Graph g;
    (void)orknn::load_model(owner, owner.get(), size, &g);
  }
  // 2. The runtime's path: copy + load + re-verify, then a context and one inference.
  std::shared_ptr<const orknn::Model> model;
  if (!orknn::load_model_from_buffer(data, size, &model).ok()) return 0;
  if (activation_bytes(model->graph) > kMaxActivationBytes) return 0;
  std::unique_ptr<orknn::Context> ctx;
  if (!orknn::Context::create(model, 0, &ctx).ok()) return 0;
  // Alternate FLOAT32 and UINT8 inputs on the last byte so both conversion paths are covered.
  run_once(ctx.get(), size > 0 && (data[size - 1] & 1));
  return 0;
}
