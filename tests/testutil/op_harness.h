// Runs one IR node in isolation: builds a one-node graph, runs the op's infer function and the
// chosen kernel. Used by tests/ops (parameter matrices, fast kernel vs reference).
#pragma once
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn::test {

struct TensorData {
  Shape shape;
  DType dtype = DType::kF32;
  std::vector<uint8_t> bytes;
  bool is_const = false;  // constant inputs (weights) become graph constants
  bool absent = false;    // optional input left out (-1)
  QuantParams quant;      // set for quantized tensors (docs/numerics.md)

  template <typename T> static TensorData of(const Shape& s, const std::vector<T>& v, DType t, bool c = false) {
    TensorData d; d.shape = s; d.dtype = t; d.is_const = c;
    d.bytes.resize(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(d.bytes.data(), v.data(), v.size() * sizeof(T));
    return d;
  }
  static TensorData f32(const Shape& s, const std::vector<float>& v, bool c = false) { return of(s, v, DType::kF32, c); }
  static TensorData i64(const Shape& s, const std::vector<int64_t>& v, bool c = true) { return of(s, v, DType::kI64, c); }
  static TensorData none() { TensorData d; d.absent = true; return d; }
  template <typename T> std::vector<T> as() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

struct OpResult {
  Status status;              // infer or kernel creation/prepare failure
  std::string kernel_name;
  std::vector<TensorData> outputs;
};

// kernel: "" = best available (fast paths allowed), "ref" = reference only, or a kernel name.
// out_quant: quantization parameters of the outputs (quantized nodes), one per output or empty.
OpResult run_op(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, int n_outputs,
                const std::string& kernel = "ref", int num_threads = 1,
                const std::vector<QuantParams>& out_quant = {});

// True when a kernel named `name` is registered for op (a backend that is not built registers none).
bool kernel_registered(OpId op, const std::string& name);

// run_op with the runtime's blocked activations (kernels/kernel.h BlockedIo): the activations the
// runtime would block for this one node (float32: nChw16c, padded with zeros where the channel
// count is not a multiple of 16, or the build's NHWC; INT8: NHWC), as far as the kernel's blocked_io() takes them, are
// handed to the kernel blocked and converted back to NCHW for the result; *blocked gets the number
// of tensors that were blocked. A padded output must come back with zeros in its padding lanes
// (its buffer holds NaN before the run); otherwise the result's status says where it did not.
OpResult run_op_blocked(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, const std::string& kernel,
                        int num_threads, int* blocked, const std::vector<QuantParams>& out_quant = {},
                        int n_outputs = 1);

// One output written into the bytes of (non-constant) input `input`, as the arena planner places
// a Conv's output on its residual's (graph/planner.h); with `blocked`, as run_op_blocked.
OpResult run_op_in_place(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, const std::string& kernel,
                         int num_threads, size_t input, int* blocked = nullptr);

// A 4-D tensor's bytes NCHW -> its blocked layout (to_blocked) or back: for float32 nChw16c (the
// channels padded to a multiple of 16; to_blocked leaves the padding lanes as dst holds them), or
// NHWC in builds that keep float blocked channels-last (kernels/kernel.h kFloatBlockedNhwc); NHWC
// for 1-byte types. Written here from the layouts' definitions, independently of the kernels.
size_t blocked_bytes(const Tensor& t);  // bytes of that layout
void convert_blocked(const Shape& s, DType dtype, const void* src, void* dst, bool to_blocked);

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f);

// Max |a-b| and cosine similarity.
float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b);
double cosine(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace orknn::test
