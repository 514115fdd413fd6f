// Cast's "to" attribute is the ONNX TensorProto data type enum.
#pragma once
#include <cstdint>

#include "graph/ir.h"

namespace orknn {

// IR dtype that Cast(to=onnx_type) produces; false for types the IR cannot hold. FLOAT16 and
// DOUBLE map to kF32 (the Cast kernel rounds values to fp16 for FLOAT16).
bool cast_target_dtype(int64_t onnx_type, DType* out);

constexpr int64_t kOnnxFloat16 = 10;

}  // namespace orknn
