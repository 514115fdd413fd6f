// Reference kernels of ConstantOfShape and Range.
#include <cstring>
#include <type_traits>

#include "kernels/kernel.h"
#include "kernels/ref/float_to_int.h"

namespace orknn {
namespace {

template <typename T>
void fill(void* out, int64_t n, T v) {
  T* p = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}

void constant_of_shape_kernel(const KernelContext& ctx) {
  const Tensor& out = ctx.out_tensor(0);
  const float v = ctx.node->attrs.get_float("value", 0.f);
  const int64_t n = out.numel();
  void* o = ctx.outputs[0];
  switch (out.dtype) {
    case DType::kF32: fill<float>(o, n, v); break;
    case DType::kI8: fill<int8_t>(o, n, float_to_int<int8_t>(v)); break;
    case DType::kU8: fill<uint8_t>(o, n, float_to_int<uint8_t>(v)); break;
    case DType::kI16: fill<int16_t>(o, n, float_to_int<int16_t>(v)); break;
    case DType::kU16: fill<uint16_t>(o, n, float_to_int<uint16_t>(v)); break;
    case DType::kI32: fill<int32_t>(o, n, float_to_int<int32_t>(v)); break;
    case DType::kU32: fill<uint32_t>(o, n, float_to_int<uint32_t>(v)); break;
    case DType::kI64: fill<int64_t>(o, n, float_to_int<int64_t>(v)); break;
    case DType::kBool: fill<uint8_t>(o, n, v != 0.f ? 1 : 0); break;
    case DType::kF16: break;  // rejected by infer
  }
}

// out[i] = start + i * delta, computed per element (not accumulated) so float error does not grow.
// Integers: in wrapping (unsigned) arithmetic. Every element lies between start and limit, but
// i * delta alone can exceed the type (start = INT64_MIN, delta = INT64_MAX).
template <typename T>
void range_typed(const KernelContext& ctx) {
  const T start = *ctx.in<T>(0);
  const T delta = *ctx.in<T>(2);
  T* out = ctx.out<T>(0);
  const int64_t n = ctx.out_tensor(0).numel();
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      out[i] = static_cast<T>(static_cast<U>(start) + static_cast<U>(i) * static_cast<U>(delta));
    } else {
      out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    }
  }
}

void range_kernel(const KernelContext& ctx) {
  switch (ctx.out_tensor(0).dtype) {
    case DType::kF32: range_typed<float>(ctx); break;
    case DType::kI32: range_typed<int32_t>(ctx); break;
    case DType::kI64: range_typed<int64_t>(ctx); break;
    default: break;
  }
}

}  // namespace

ORKNN_REGISTER_REF_KERNEL(ConstantOfShape, constant_of_shape_kernel);
ORKNN_REGISTER_REF_KERNEL(Range, range_kernel);

}  // namespace orknn
