// The INT8 model back as ONNX (rknn_convert --export-qdq; docs/convert.md "QDQ export"): the
// original model with QuantizeLinear/DequantizeLinear pairs carrying our calibration, in the QDQ
// form other toolkits (the vendor's rknn-toolkit2 among them) build INT8 models from without a
// data set of their own.
#pragma once
#include <onnx/onnx_pb.h>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn::onnx_import {

// Rewrites *model (the ONNX model `quantized` was converted from, with the same edits) as QDQ:
//   - a BatchNormalization that alone reads a Conv's output is folded into the Conv (as the
//     converter folds it), so the int8 weights are the ones the INT8 model computes with;
//   - every activation (graph input or node output) that `quantized` holds as int8 under the same
//     name gets QuantizeLinear -> DequantizeLinear with its scale and zero point, and its readers
//     read the DequantizeLinear output (a graph output's name moves to its DequantizeLinear output,
//     so the exported outputs are quantized as the INT8 model's are);
//   - the weights of Conv, ConvTranspose, Gemm and MatMul (float initializers or Constant nodes
//     read by nothing else) whose input and output are quantized become int8 initializers,
//     symmetric per output channel (max |w| / 127), read through DequantizeLinear, as the converter
//     quantizes weights; biases stay float.
// Layers `quantized` keeps in float (hybrid quantization) get no QDQ pair. External data is
// refused (kUnimplemented): the exported file holds every weight; so are opsets below 13 (where
// DequantizeLinear has no per-channel form).
Status export_qdq(const Graph& quantized, onnx::ModelProto* model);

}  // namespace orknn::onnx_import
