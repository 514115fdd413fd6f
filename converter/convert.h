// ONNX -> graph IR -> .rknn conversion, the library behind tools/rknn_convert.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

struct ConvertOptions {
  std::string platform = "rk3588";                  // one of platform_names() (runtime/platform.h)
  std::map<std::string, Shape> input_shapes;        // pins dynamic dims, by ONNX input name
  // Per-input normalisation applied by the runtime to UINT8 inputs: (x - mean[c]) / std[c].
  // Key "" applies to every input that has no entry of its own.
  std::map<std::string, std::vector<float>> mean_values;
  std::map<std::string, std::vector<float>> std_values;
  std::string custom_string;
  FloatPrecision precision = FloatPrecision::kFp16;
  bool run_passes = true;  // graph passes (folding always runs; this controls fusion/cleanup)
};

// Reads an ONNX file (external data next to it is loaded) into a verified, shape-complete graph.
Status convert_onnx(const std::string& onnx_path, const ConvertOptions& opts, Graph* out);
// Same, from an in-memory ONNX ModelProto serialisation (no external data).
Status convert_onnx_bytes(const void* data, size_t size, const ConvertOptions& opts, Graph* out);

// Reads the vendor toolkit's YAML conversion config (mean_values, std_values, target_platform,
// custom_string, ...) into opts; options already set on the command line win (see docs/convert.md).
Status load_config_yaml(const std::string& path, ConvertOptions* opts);

}  // namespace orknn
