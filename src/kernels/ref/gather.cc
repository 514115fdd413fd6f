// Reference kernel of Gather, any data dtype (moved by size), int32/int64 indices. Quantized
// int8 data uses the same kernel once the output is known to carry the data's parameters.
#include <cstring>

#include "kernels/kernel.h"
#include "kernels/ref/quant_passthrough.h"

namespace orknn {
namespace {

template <typename I>
void gather_typed(const KernelContext& ctx) {
  const Tensor& data = ctx.in_tensor(0);
  const size_t axis = static_cast<size_t>(ctx.node->attrs.get_int("axis", 0));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= data.shape[d];
  for (size_t d = axis + 1; d < data.shape.size(); ++d) inner *= data.shape[d];
  const int64_t dim = data.shape[axis];
  const int64_t count = ctx.in_tensor(1).numel();
  const size_t row = static_cast<size_t>(inner) * dtype_size(data.dtype);
  const uint8_t* src = ctx.in<uint8_t>(0);
  const I* idx = ctx.in<I>(1);
  uint8_t* dst = ctx.out<uint8_t>(0);
  if (row == 0) return;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      int64_t k = static_cast<int64_t>(idx[j]);
      if (k < 0) k += dim;
      uint8_t* d = dst + static_cast<size_t>(o * count + j) * row;
      if (k < 0 || k >= dim) {
        std::memset(d, 0, row);  // infer rejects constant out-of-range indices; runtime ones give zeros
        continue;
      }
      std::memcpy(d, src + static_cast<size_t>(o * dim + k) * row, row);
    }
  }
}

void gather_kernel(const KernelContext& ctx) {
  if (ctx.in_tensor(1).dtype == DType::kI32)
    gather_typed<int32_t>(ctx);
  else
    gather_typed<int64_t>(ctx);
}

}  // namespace

ORKNN_REGISTER_REF_KERNEL(Gather, gather_kernel);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Gather, QuantPassthroughFn<gather_kernel>);

}  // namespace orknn
