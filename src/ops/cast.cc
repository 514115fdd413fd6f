// Cast. "to" keeps the ONNX TensorProto data type enum; cast_target_dtype() maps it to the IR.
#include "ops/cast.h"

#include "ops/infer_util.h"

namespace orknn {

bool cast_target_dtype(int64_t onnx_type, DType* out) {
  switch (onnx_type) {
    case 1: *out = DType::kF32; return true;   // FLOAT
    case 2: *out = DType::kU8; return true;    // UINT8
    case 3: *out = DType::kI8; return true;    // INT8
    case 4: *out = DType::kU16; return true;   // UINT16
    case 5: *out = DType::kI16; return true;   // INT16
    case 6: *out = DType::kI32; return true;   // INT32
    case 7: *out = DType::kI64; return true;   // INT64
    case 9: *out = DType::kBool; return true;  // BOOL
    case 10: *out = DType::kF32; return true;  // FLOAT16: fp32 storage, values rounded to fp16
    case 11: *out = DType::kF32; return true;  // DOUBLE: computed as fp32
    case 12: *out = DType::kU32; return true;  // UINT32
    default: return false;
  }
}

Status infer_Cast(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 1));
  if (!n.attrs.has("to")) return ORKNN_NODE_ERR(n, "attribute 'to' is required");
  const int64_t to = n.attrs.get_int("to", 0);
  DType t = DType::kF32;
  if (!cast_target_dtype(to, &t))
    return ORKNN_NODE_ERR(n,
                          "cast to ONNX data type %lld is not supported (supported: float, double, float16, "
                          "int8/16/32/64, uint8/16/32, bool)",
                          (long long)to);
  const Tensor& x = *g.input(n, 0);
  if (dtype_size(x.dtype) == 0) return ORKNN_NODE_ERR(n, "input has an unknown dtype");
  return set_output(g, n, 0, x.shape, t);
}

}  // namespace orknn
