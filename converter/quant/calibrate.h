// Calibration: runs the float graph on every calibration sample and chooses a clipping range per
// activation tensor (docs/numerics.md, "Calibration (converter)").
#pragma once
#include <map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "converter/quant/dataset.h"
#include "converter/quant/observer.h"
#include "graph/ir.h"

namespace orknn {

// Runs a copy of `float_graph` in pure fp32 (precision kFp32; the best registered kernels, fast ones
// included) once per sample and pass (Observer::passes(): 1 for normal, 2 for kl/mmse), observing
// every non-constant float32 tensor without quantization parameters: graph inputs and node outputs.
// ranges: tensor id -> [lo, hi] with lo <= 0 <= hi (Observer::range). Samples must match the graph
// (one buffer of numel values per input, g.inputs order). Logs one line per pass at info level.
Status calibrate(const Graph& float_graph, const std::vector<CalibrationSample>& samples, CalibAlgorithm alg,
                 std::map<int, std::pair<float, float>>* ranges);

}  // namespace orknn
