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
#include "rknn_custom_op.h"

namespace orknn {

// Runs a copy of `float_graph` in pure fp32 (precision kFp32; the best registered kernels, fast ones
// included) once per sample and pass (Observer::passes(): 1 for normal, 2 for kl/mmse), observing
// every non-constant float32 tensor without quantization parameters: graph inputs and node outputs.
// ranges: tensor id -> [lo, hi] with lo <= 0 <= hi (Observer::range). Samples must match the graph
// (one buffer of numel values per input, g.inputs order). Logs one line per pass at info level.
// custom_ops: the application's operators (--custom-op-lib, converter/quant/custom_op_lib.h); the
// Custom nodes of their types run through their callbacks as in the runtime (init before the
// first sample, destroy at the end; a failing callback fails calibration naming the node). Custom
// nodes of other types run the registry's stand-in (src/kernels/ref/custom.cc).
// kl_keep_tails: Observer's option of that name (--kl-keep-tails).
Status calibrate(const Graph& float_graph, const std::vector<CalibrationSample>& samples, CalibAlgorithm alg,
                 std::map<int, std::pair<float, float>>* ranges,
                 const std::vector<rknn_custom_op>& custom_ops = {}, bool kl_keep_tails = false);

// --clip-saturated: narrows the calibrated range of every tensor that only saturating activations
// read (as their input) to the inputs where they are not constant: HardSwish is 0 below -3, Relu
// below 0, HardSigmoid 0 below -beta / alpha and 1 above (1 - beta) / alpha. The values cut off
// give those activations the same output as the new range's end, so the int8 grid only spends
// its steps where they change the result. Ranges keep 0 inside. Graph outputs and tensors any
// other node reads keep their ranges. Returns the number of ranges narrowed.
int narrow_saturated_ranges(const Graph& g, std::map<int, std::pair<float, float>>* ranges);

}  // namespace orknn
