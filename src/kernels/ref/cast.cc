// Reference kernel of Cast between every IR dtype.
// float -> integer truncates toward zero (NaN -> 0, values beyond int64 saturate to it) and then
// wraps to the target width, which is what numpy's astype does on x86. integer -> narrower
// integer wraps. Anything -> bool is "!= 0". Cast to ONNX FLOAT16 rounds to fp16 values held in
// fp32 (the IR has no fp16 compute type).
#include "ops/cast.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "common/fp16.h"
#include "kernels/kernel.h"
#include "kernels/ref/float_to_int.h"

namespace orknn {
namespace {

template <typename D, typename S>
D convert(S v) {
  if constexpr (std::is_floating_point_v<D>) {
    return static_cast<D>(v);
  } else if constexpr (std::is_floating_point_v<S>) {
    return float_to_int<D>(static_cast<double>(v));
  } else {
    return static_cast<D>(v);
  }
}

template <typename S, typename D>
void cast_loop(const S* s, D* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = convert<D>(s[i]);
}

// Converts n elements of s into output elements [offset, offset + n).
template <typename S>
void cast_from(const S* s, DType out_type, void* out, int64_t offset, int64_t n) {
  switch (out_type) {
    case DType::kF32: cast_loop(s, static_cast<float*>(out) + offset, n); break;
    case DType::kI8: cast_loop(s, static_cast<int8_t*>(out) + offset, n); break;
    case DType::kU8: cast_loop(s, static_cast<uint8_t*>(out) + offset, n); break;
    case DType::kI16: cast_loop(s, static_cast<int16_t*>(out) + offset, n); break;
    case DType::kU16: cast_loop(s, static_cast<uint16_t*>(out) + offset, n); break;
    case DType::kI32: cast_loop(s, static_cast<int32_t*>(out) + offset, n); break;
    case DType::kU32: cast_loop(s, static_cast<uint32_t*>(out) + offset, n); break;
    case DType::kI64: cast_loop(s, static_cast<int64_t*>(out) + offset, n); break;
    case DType::kBool: {
      uint8_t* d = static_cast<uint8_t*>(out) + offset;
      for (int64_t i = 0; i < n; ++i) d[i] = s[i] != S(0) ? 1 : 0;
      break;
    }
    case DType::kF16: break;  // never an output (infer maps FLOAT16 to kF32)
  }
}

void cast_kernel(const KernelContext& ctx) {
  const Tensor& in = ctx.in_tensor(0);
  const DType ot = ctx.out_tensor(0).dtype;
  void* out = ctx.outputs[0];
  const int64_t n = in.numel();
  const void* x = ctx.inputs[0];
  switch (in.dtype) {
    case DType::kF32: cast_from(static_cast<const float*>(x), ot, out, 0, n); break;
    case DType::kI8: cast_from(static_cast<const int8_t*>(x), ot, out, 0, n); break;
    case DType::kU8: cast_from(static_cast<const uint8_t*>(x), ot, out, 0, n); break;
    case DType::kI16: cast_from(static_cast<const int16_t*>(x), ot, out, 0, n); break;
    case DType::kU16: cast_from(static_cast<const uint16_t*>(x), ot, out, 0, n); break;
    case DType::kI32: cast_from(static_cast<const int32_t*>(x), ot, out, 0, n); break;
    case DType::kU32: cast_from(static_cast<const uint32_t*>(x), ot, out, 0, n); break;
    case DType::kI64: cast_from(static_cast<const int64_t*>(x), ot, out, 0, n); break;
    case DType::kBool: cast_from(static_cast<const uint8_t*>(x), ot, out, 0, n); break;
    case DType::kF16: {
      // fp16 storage (a model input): widen through a stack buffer, no allocation.
      const uint16_t* h = static_cast<const uint16_t*>(x);
      float buf[256];
      for (int64_t i = 0; i < n; i += 256) {
        const int64_t m = n - i < 256 ? n - i : 256;
        fp16_to_fp32(h + i, buf, static_cast<size_t>(m));
        cast_from(static_cast<const float*>(buf), ot, out, i, m);
      }
      break;
    }
  }
  if (ctx.node->attrs.get_int("to", 1) == kOnnxFloat16 && ot == DType::kF32)
    round_to_fp16(static_cast<float*>(out), static_cast<size_t>(n));
}

}  // namespace

ORKNN_REGISTER_REF_KERNEL(Cast, cast_kernel);

}  // namespace orknn
