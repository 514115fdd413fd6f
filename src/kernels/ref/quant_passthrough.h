// Quantized reference kernels of the data-movement ops (docs/numerics.md: Reshape, Transpose,
// Slice, Gather, ... move int8 bytes unchanged). They are the ops' byte-moving reference kernels
// with one more check at plan time: the output has exactly the input's quantization parameters
// (the converter guarantees it; a model file that breaks it is refused, naming the node).
#pragma once
#include <cstddef>

#include "kernels/kernel.h"
#include "ops/quant_infer.h"

namespace orknn {

// Kernel class BASE, refusing nodes whose outputs do not carry input DATA's parameters.
template <class Base, size_t kData = 0>
class QuantPassthrough : public Base {
 public:
  Status prepare(const KernelContext& ctx) override {
    ORKNN_RETURN_IF_ERROR(check_quant_passthrough(*ctx.graph, *ctx.node, kData));
    return Base::prepare(ctx);
  }
};

// Same for a stateless kernel function.
template <KernelRunFn kFn, size_t kData = 0>
class QuantPassthroughFn : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override { return check_quant_passthrough(*ctx.graph, *ctx.node, kData); }
  void run(const KernelContext& ctx) override { kFn(ctx); }
};

}  // namespace orknn
