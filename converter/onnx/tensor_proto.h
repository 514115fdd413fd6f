// ONNX TensorProto -> IR constant bytes (internal to the ONNX importer).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn::onnx_import {

// IR dtype for an ONNX element type. float16, bfloat16 and double map to float32 (kernels compute
// float in fp32); uint64 maps to int64. *widened is set when the ONNX type was not kept as is.
// Returns false for types the IR cannot hold (string, complex, 8/4-bit floats and ints).
bool dtype_from_onnx(int elem_type, DType* out, bool* widened = nullptr);
const char* onnx_type_name(int elem_type);

struct TensorBytes {
  Shape shape;
  DType dtype = DType::kF32;
  std::vector<uint8_t> bytes;  // numel * dtype_size(dtype), little endian
};

// Decodes raw_data or the typed fields, converting float16/bfloat16/double to float32.
// External data (data_location EXTERNAL) is read from `model_dir`; an empty model_dir means the
// model came from memory and external data is refused. `what` names the tensor in errors
// (e.g. "initializer 'conv1.weight'").
Status read_tensor_proto(const onnx::TensorProto& t, const std::string& model_dir, const std::string& what,
                         TensorBytes* out);

}  // namespace orknn::onnx_import
