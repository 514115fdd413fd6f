// Shared pieces of the XNNPACK backend (aarch64 builds; docs/aarch64.md): the library's one-time
// initialisation, which also tells whether XNNPACK runs on this CPU (it needs NEON; it picks its
// dot-product, fp16 and plain NEON microkernels itself from the CPU's features), the parameter
// checks of its QC8 operators, the thread pools, and the owner of an XNNPACK operator.
#pragma once
#include <xnnpack.h>

#include <cstdint>
#include <vector>

#include "graph/ir.h"

namespace orknn::xnnpack {

// True when xnn_initialize succeeded (once per process; thread-safe). Every XNNPACK kernel's
// supports() asks: where it is false, the nodes go to the next kernel.
bool available();

// The pthreadpool an XNNPACK kernel runs on with `threads` threads (ctx.num_threads), nullptr for
// one (XNNPACK then runs on the calling thread). One pool per thread count, made on first use and
// kept for the process, so a model's kernels share its workers; contexts that run at once on the
// same pool take turns (pthreadpool serialises its callers). Kernels create their operators with
// XNN_FLAG_YIELD_WORKERS, so the workers sleep between operators instead of spinning against the
// runtime's OpenMP threads.
pthreadpool_t thread_pool(int threads);

// True when XNNPACK's QC8 operators take these quantization parameters, as its create functions
// check them: positive normal scales, per-channel multipliers (s_x * s_w[c]) / s_y in [2^-32, 256),
// a non-empty output range after the node's fused Relu/Clip. `w` has one scale or `channels`.
bool qc8_params_ok(const Tensor& x, const QuantParams& w, const Tensor& y, const Attrs& attrs, int64_t channels);
// The per-output-channel weight scales XNNPACK's QC8 operators take (one scale repeated).
std::vector<float> qc8_kernel_scales(const QuantParams& w, int64_t channels);

// Owns one xnn_operator_t.
class Operator {
 public:
  Operator() = default;
  ~Operator() { reset(); }
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;
  void reset() {
    if (op_) xnn_delete_operator(op_);
    op_ = nullptr;
  }
  xnn_operator_t get() const { return op_; }
  xnn_operator_t* out() {  // for xnn_create_*
    reset();
    return &op_;
  }

 private:
  xnn_operator_t op_ = nullptr;
};

}  // namespace orknn::xnnpack
