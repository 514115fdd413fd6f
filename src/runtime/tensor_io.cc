#include "runtime/tensor_io.h"

#include <cstring>

#include "common/fp16.h"
#include "kernels/io_convert.h"
#include "kernels/quant_util.h"
#include "kernels/ref/float_to_int.h"
#include "runtime/platform.h"

namespace orknn {

rknn_tensor_type reported_type(const Tensor& t) {
  if (is_float(t.dtype)) return RKNN_TENSOR_FLOAT16;
  return static_cast<rknn_tensor_type>(static_cast<int>(t.dtype));
}

size_t rknn_type_size(rknn_tensor_type t) {
  switch (t) {
    case RKNN_TENSOR_FLOAT32: case RKNN_TENSOR_INT32: case RKNN_TENSOR_UINT32: return 4;
    case RKNN_TENSOR_FLOAT16: case RKNN_TENSOR_INT16: case RKNN_TENSOR_UINT16: case RKNN_TENSOR_BFLOAT16: return 2;
    case RKNN_TENSOR_INT8: case RKNN_TENSOR_UINT8: case RKNN_TENSOR_BOOL: return 1;
    case RKNN_TENSOR_INT64: return 8;
    default: return 0;
  }
}

double load_elem(const void* buf, rknn_tensor_type t, size_t i) {
  switch (t) {
    case RKNN_TENSOR_FLOAT32: return static_cast<const float*>(buf)[i];
    case RKNN_TENSOR_FLOAT16: return fp16_to_fp32(static_cast<const uint16_t*>(buf)[i]);
    case RKNN_TENSOR_INT8: return static_cast<const int8_t*>(buf)[i];
    case RKNN_TENSOR_UINT8: return static_cast<const uint8_t*>(buf)[i];
    case RKNN_TENSOR_INT16: return static_cast<const int16_t*>(buf)[i];
    case RKNN_TENSOR_UINT16: return static_cast<const uint16_t*>(buf)[i];
    case RKNN_TENSOR_INT32: return static_cast<const int32_t*>(buf)[i];
    case RKNN_TENSOR_UINT32: return static_cast<const uint32_t*>(buf)[i];
    case RKNN_TENSOR_INT64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case RKNN_TENSOR_BOOL: return static_cast<const uint8_t*>(buf)[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

// Integer tensors take the value as Cast does (kernels/ref/float_to_int.h): a client may pass any
// value of its type (UINT8 216 to an INT8 input, FLOAT32 1e30 to an INT32 one), and a plain
// conversion of one the tensor's type cannot hold is undefined.
void store_elem(void* buf, DType t, size_t i, double v) {
  switch (t) {
    case DType::kF32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case DType::kI8: static_cast<int8_t*>(buf)[i] = float_to_int<int8_t>(v); break;
    case DType::kU8: static_cast<uint8_t*>(buf)[i] = float_to_int<uint8_t>(v); break;
    case DType::kI16: static_cast<int16_t*>(buf)[i] = float_to_int<int16_t>(v); break;
    case DType::kU16: static_cast<uint16_t*>(buf)[i] = float_to_int<uint16_t>(v); break;
    case DType::kI32: static_cast<int32_t*>(buf)[i] = float_to_int<int32_t>(v); break;
    case DType::kU32: static_cast<uint32_t*>(buf)[i] = float_to_int<uint32_t>(v); break;
    case DType::kI64: static_cast<int64_t*>(buf)[i] = float_to_int<int64_t>(v); break;
    case DType::kBool: static_cast<uint8_t*>(buf)[i] = v != 0.0; break;
    case DType::kF16: static_cast<uint16_t*>(buf)[i] = fp32_to_fp16(static_cast<float>(v)); break;
  }
}

bool supported_input_type(rknn_tensor_type t) { return rknn_type_size(t) != 0 && t != RKNN_TENSOR_BFLOAT16; }

void convert_output(const Tensor& t, const void* src, bool want_float, void* dst) {
  const size_t count = static_cast<size_t>(t.numel());
  if (want_float && t.dtype == DType::kF32) {
    std::memcpy(dst, src, count * 4);
  } else if (want_float && !t.quant.empty()) {
    const QuantScalar q = per_tensor(t);
    const int8_t* sq = static_cast<const int8_t*>(src);
    float* y = static_cast<float*>(dst);
    dequantize_s8_f32(sq, y, static_cast<int64_t>(count), q.scale, q.zp);
  } else if (want_float) {
    for (size_t k = 0; k < count; ++k)
      static_cast<float*>(dst)[k] = static_cast<float>(load_elem(src, static_cast<rknn_tensor_type>(static_cast<int>(t.dtype)), k));
  } else if (is_float(t.dtype)) {
    fp32_to_fp16(static_cast<const float*>(src), static_cast<uint16_t*>(dst), count);
  } else {
    std::memcpy(dst, src, count * dtype_size(t.dtype));
  }
}

int native_c2(const PlatformInfo& p, rknn_tensor_type t) {
  if (t == RKNN_TENSOR_INT8) return p.c2_int8;
  if (t == RKNN_TENSOR_FLOAT16) return p.c2_fp16;
  return 0;
}

Nc1hwc2Geometry geometry_of(const Shape& s, int c2, int64_t w_stride) {
  Nc1hwc2Geometry g;
  g.n = s[0]; g.c = s[1]; g.h = s[2]; g.w = s[3];
  g.c2 = c2;
  g.w_stride = w_stride;
  return g;
}

}  // namespace orknn
