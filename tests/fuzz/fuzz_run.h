// What the model fuzz targets do with a model that loaded (fuzz_model_loader on the reference
// kernels, fuzz_fast_kernels on the fast ones): a context, a generic implementation registered for
// each of its custom operator types, one inference on inputs made from the input bytes, and the
// outputs read back.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "rknn_custom_op.h"
#include "runtime/context.h"
#include "runtime/custom_ops.h"
#include "runtime/model.h"

namespace orknn_fuzz {

// A few fuzzed bytes can declare gigabyte tensors, which the runtime then rightly allocates (and
// zeroes) as its arena, and the kernels would take minutes over them: that only measures the RSS
// and time limits. Models whose non-constant tensors add up to more than this get no context.
constexpr uint64_t kMaxActivationBytes = uint64_t{4} << 20;

inline uint64_t activation_bytes(const orknn::Graph& g) {
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

// The one custom operator implementation: reads the node's type back as the application would,
// then copies input 0 into every output, as much as fits, and zeroes the rest. Sizes come from the
// tensors the runtime hands over, so a wrong size there is an ASan report.
inline int custom_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                          rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
  rknn_custom_op_attr type;
  orknn::custom_op_get_attr(op_ctx, "custom_type", &type);
  if (type.n_elems == 0 || type.data == nullptr) return RKNN_ERR_FAIL;
  const uint8_t* in = nullptr;
  uint32_t in_size = 0;
  if (n_inputs > 0) {
    in = static_cast<const uint8_t*>(inputs[0].mem.virt_addr) + inputs[0].mem.offset;
    in_size = inputs[0].mem.size;
  }
  for (uint32_t o = 0; o < n_outputs; ++o) {
    uint8_t* out = static_cast<uint8_t*>(outputs[o].mem.virt_addr) + outputs[o].mem.offset;
    const uint32_t n = std::min(in_size, outputs[o].mem.size);
    if (n) std::memcpy(out, in, n);
    std::memset(out + n, 0, outputs[o].mem.size - n);
  }
  return RKNN_SUCC;
}

// Registers custom_compute for every custom operator type of the model (types that do not fit the
// API's name field stay unregistered: rknn_run then refuses the model).
inline orknn::Status register_custom_types(orknn::Context* ctx, const orknn::Graph& g) {
  std::set<std::string> types;
  for (const orknn::Node& n : g.nodes)
    if (n.op == orknn::OpId::Custom) types.insert(n.attrs.get_string("custom_type", ""));
  std::vector<rknn_custom_op> ops;
  for (const std::string& t : types) {
    if (t.empty() || t.size() >= RKNN_MAX_NAME_LEN) continue;
    rknn_custom_op op;
    std::memset(&op, 0, sizeof(op));
    op.target = RKNN_TARGET_TYPE_CPU;
    std::memcpy(op.op_type, t.data(), t.size());
    op.compute = custom_compute;
    ops.push_back(op);
  }
  if (ops.empty()) return orknn::Status::Ok();
  return ctx->register_custom_ops(ops.data(), static_cast<uint32_t>(ops.size()));
}

// Input values, the same for every context given the same input bytes: a generator seeded with
// the size, float values in [-4, 4) or bytes; with bit 1 of the last byte set, NaN, +-Inf and
// +-1e30 lead each float input, values a client may pass.
class InputValues {
 public:
  InputValues(const uint8_t* data, size_t size)
      : state_(0x9E3779B97F4A7C15ull ^ size), uint8_(size > 0 && (data[size - 1] & 1)),
        specials_(size > 0 && (data[size - 1] & 2)) {}
  bool uint8() const { return uint8_; }
  std::vector<uint8_t> make(size_t n_elems) {
    std::vector<uint8_t> bytes(n_elems * (uint8_ ? 1 : sizeof(float)));
    if (uint8_) {
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(next() >> 56);
      return bytes;
    }
    constexpr float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(), 1e30f, -1e30f};
    for (size_t i = 0; i < n_elems; ++i) {
      float v = static_cast<float>(static_cast<int64_t>(next() >> 40) - (int64_t{1} << 23)) / float(1 << 21);
      if (specials_ && i < sizeof(kSpecial) / sizeof(kSpecial[0])) v = kSpecial[i];
      std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof(float));
    }
    return bytes;
  }

 private:
  uint64_t next() {  // xorshift64*
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Dull;
  }
  uint64_t state_;
  bool uint8_, specials_;
};

// Feeds every input (FLOAT32 or UINT8, in the layout the context reports), runs, and reads every
// output as float32 (want_float), copied into *outputs when given. False when a call refused.
inline bool run_once(orknn::Context* ctx, InputValues values, std::vector<std::vector<uint8_t>>* outputs = nullptr) {
  const uint32_t n_in = ctx->n_inputs();
  std::vector<rknn_input> inputs(n_in);
  std::vector<std::vector<uint8_t>> bufs(n_in);
  for (uint32_t i = 0; i < n_in; ++i) {
    rknn_tensor_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.index = i;
    if (!ctx->input_attr(i, &attr).ok()) return false;
    bufs[i] = values.make(attr.n_elems);
    std::memset(&inputs[i], 0, sizeof(rknn_input));
    inputs[i].index = i;
    inputs[i].buf = bufs[i].empty() ? nullptr : bufs[i].data();
    inputs[i].size = static_cast<uint32_t>(bufs[i].size());
    inputs[i].type = values.uint8() ? RKNN_TENSOR_UINT8 : RKNN_TENSOR_FLOAT32;
    inputs[i].fmt = attr.fmt;
  }
  if (!ctx->inputs_set(n_in, inputs.data()).ok()) return false;
  if (!ctx->run().ok()) return false;
  const uint32_t n_out = ctx->n_outputs();
  std::vector<rknn_output> outs(n_out);
  for (uint32_t i = 0; i < n_out; ++i) {
    std::memset(&outs[i], 0, sizeof(rknn_output));
    outs[i].index = i;
    outs[i].want_float = 1;
  }
  if (!ctx->outputs_get(n_out, outs.data()).ok()) return false;
  if (outputs) {
    outputs->clear();
    for (const rknn_output& o : outs) {
      const uint8_t* p = static_cast<const uint8_t*>(o.buf);
      outputs->emplace_back(p, p + o.size);
    }
  }
  return ctx->outputs_release(n_out, outs.data()).ok();
}

// A context on the model with its custom operators registered and, for a dynamic-shape model,
// shape set (input size % sets) selected as a client selects it (rknn_set_input_shapes, NCHW dims),
// then one run_once. False when the runtime refused any step.
inline bool context_and_run(const std::shared_ptr<const orknn::Model>& model, const uint8_t* data, size_t size,
                            std::vector<std::vector<uint8_t>>* outputs = nullptr) {
  std::unique_ptr<orknn::Context> ctx;
  if (!orknn::Context::create(model, 0, &ctx).ok()) return false;
  if (!register_custom_types(ctx.get(), model->graph).ok()) return false;
  const auto& sets = model->dynamic.sets;
  if (sets.size() > 1) {
    const std::vector<orknn::Shape>& shapes = sets[size % sets.size()].input_shapes;
    std::vector<rknn_tensor_attr> attrs(shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      std::memset(&attrs[i], 0, sizeof(rknn_tensor_attr));
      attrs[i].index = static_cast<uint32_t>(i);
      attrs[i].fmt = RKNN_TENSOR_NCHW;
      attrs[i].n_dims = static_cast<uint32_t>(std::min<size_t>(shapes[i].size(), RKNN_MAX_DIMS));
      for (uint32_t d = 0; d < attrs[i].n_dims; ++d) attrs[i].dims[d] = static_cast<uint32_t>(shapes[i][d]);
    }
    if (!ctx->set_input_shapes(static_cast<uint32_t>(attrs.size()), attrs.data()).ok()) return false;
  }
  return run_once(ctx.get(), InputValues(data, size), outputs);
}

}  // namespace orknn_fuzz
