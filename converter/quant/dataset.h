// The calibration data set of `rknn_convert --quantize --dataset LIST.txt` (format: docs/convert.md,
// "Calibration data set"; preprocessing: docs/numerics.md, "Calibration (converter)").
#pragma once
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

// One calibration sample: inputs[i] holds graph input i (g.inputs order) as float32 in the input's
// NCHW shape (numel values), already preprocessed as the runtime would preprocess it: images and
// uint8 .npy are normalised with the input's mean/std, float32 .npy are used as they are. Integer
// graph inputs (token ids) carry their integer values as floats.
struct CalibrationSample {
  std::vector<std::vector<float>> inputs;
};

// Reads the list file: one sample per line, one file per graph input on that line (separated by
// spaces or tabs, in g.inputs order). Relative paths are relative to the list file's directory.
// Blank lines and lines whose first non-blank character is '#' are skipped. Files: images
// (anything stb_image decodes: .jpg, .png, .bmp, ...) or .npy (float32 '<f4', uint8 '|u1', and for
// integer inputs int64 '<i8' / int32 '<i4'). Errors name the list file, the line and the file.
Status load_calibration_set(const std::string& list_path, const Graph& g, std::vector<CalibrationSample>* out);

// One file of a sample, for graph input `input_index` (exposed for tests and tools).
Status load_calibration_file(const std::string& path, const Graph& g, size_t input_index, std::vector<float>* out);

}  // namespace orknn
