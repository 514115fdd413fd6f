// Reference kernels of Reshape, Flatten, Squeeze, Unsqueeze (the data is unchanged: a copy, any
// dtype) and Shape. Quantized int8 nodes use the same copy once the output is known to carry the
// input's quantization parameters.
#include <cstring>

#include "kernels/kernel.h"
#include "kernels/ref/quant_passthrough.h"

namespace orknn {
namespace {

void copy_bytes(const KernelContext& ctx) {
  const size_t bytes = ctx.in_tensor(0).nbytes();
  if (ctx.outputs[0] != ctx.inputs[0] && bytes) std::memcpy(ctx.outputs[0], ctx.inputs[0], bytes);
}

void shape_kernel(const KernelContext& ctx) {
  const Shape& s = ctx.in_tensor(0).shape;
  const int64_t start = ctx.node->attrs.get_int("start", 0);
  const int64_t end = ctx.node->attrs.get_int("end", static_cast<int64_t>(s.size()));
  int64_t* out = ctx.out<int64_t>(0);
  for (int64_t d = start; d < end; ++d) out[d - start] = s[static_cast<size_t>(d)];
}

}  // namespace

ORKNN_REGISTER_REF_KERNEL(Reshape, copy_bytes);
ORKNN_REGISTER_REF_KERNEL(Flatten, copy_bytes);
ORKNN_REGISTER_REF_KERNEL(Squeeze, copy_bytes);
ORKNN_REGISTER_REF_KERNEL(Unsqueeze, copy_bytes);
ORKNN_REGISTER_REF_KERNEL(Shape, shape_kernel);

ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Reshape, QuantPassthroughFn<copy_bytes>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Flatten, QuantPassthroughFn<copy_bytes>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Squeeze, QuantPassthroughFn<copy_bytes>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Unsqueeze, QuantPassthroughFn<copy_bytes>);
ORKNN_REGISTER_QUANT_REF_KERNEL(Shape, shape_kernel);  // reads only the quantized input's shape

}  // namespace orknn
