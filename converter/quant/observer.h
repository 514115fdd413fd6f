// Calibration observers (the clipping range of each activation tensor) and the formulas that turn a
// range or a weight tensor into INT8 quantization parameters. Specified in docs/numerics.md,
// "Calibration (converter)"; the INT8 arithmetic they feed is in the section above it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

// --algorithm: how an activation's clipping range is chosen from the calibration data.
enum class CalibAlgorithm {
  kNormal,  // min/max of every value seen
  kKl,      // threshold minimising the KL divergence between the |x| histogram and its quantized copy
  kMmse,    // range minimising the expected squared quantize->dequantize error over a grid
};

// "normal", "kl" (also the vendor name "kl_divergence") or "mmse", case-insensitive.
Status parse_calib_algorithm(const std::string& text, CalibAlgorithm* out);
const char* calib_algorithm_name(CalibAlgorithm alg);

// Observes every value of one tensor over all calibration samples and chooses its range.
// Usage: for pass in [0, passes()): observe() every sample's values, then end_pass().
// kNormal needs one pass (min/max). kKl and kMmse need two: pass 0 finds min/max, which fixes the
// histogram's bin edges; pass 1 fills the histogram. Nothing but min/max and one histogram is kept.
// NaN and +-inf values are skipped (counted in nonfinite()).
class Observer {
 public:
  static constexpr int kHistogramBins = 2048;

  // kl_keep_tails (--kl-keep-tails): kl also refuses thresholds whose clipping error passes 1e-4
  // of the tensor's energy (docs/numerics.md, "kl"). Ignored by normal and mmse.
  explicit Observer(CalibAlgorithm alg, bool kl_keep_tails = false) : alg_(alg), kl_keep_tails_(kl_keep_tails) {}

  int passes() const { return alg_ == CalibAlgorithm::kNormal ? 1 : 2; }
  // Values of one sample (or part of one) for the current pass.
  void observe(const float* x, size_t n);
  void end_pass();
  // The chosen range, with 0 included: lo <= 0 <= hi. Call after the last end_pass().
  // A tensor that never held a finite value gives [0, 0].
  void range(float* lo, float* hi) const;

  // Min/max of the finite values seen (0, 0 before any).
  float min_seen() const { return seen_ ? min_ : 0.f; }
  float max_seen() const { return seen_ ? max_ : 0.f; }
  uint64_t nonfinite() const { return nonfinite_; }

 private:
  void range_kl(float* lo, float* hi) const;
  void range_mmse(float* lo, float* hi) const;

  CalibAlgorithm alg_;
  bool kl_keep_tails_ = false;
  int pass_ = 0;
  bool seen_ = false;
  float min_ = 0.f, max_ = 0.f;
  uint64_t nonfinite_ = 0;
  // Pass 1 (kl: |x| over [0, amax]; mmse: x over [lo0, hi0], lo0 = min(min,0), hi0 = max(max,0)).
  float hist_lo_ = 0.f, hist_width_ = 0.f;
  std::vector<double> hist_;
};

// Activation parameters (int8 asymmetric, per tensor) for the range [lo, hi]:
//   lo = min(lo, 0), hi = max(hi, 0), scale = (hi - lo) / 255, zp = sat8(rne(-128 - lo / scale))
// in float32, in that order. When (hi - lo) / 255 is below 1e-12 (all-zero tensor) or not finite,
// scale = 1 and zp = sat8(rne(-128 - lo)) (see docs/numerics.md).
void activation_qparams(float lo, float hi, float* scale, int32_t* zp);

// Symmetric weight scale for one channel (or tensor) whose largest magnitude is max_abs:
// max_abs / 127 (float32); 1 when max_abs is 0 (an all-zero channel quantizes to zeros with any
// scale, and 1 keeps bias_q = bias / s_x representable).
float weight_scale_symmetric(float max_abs);

// Per-channel (axis >= 0) or per-tensor (axis = -1) symmetric scales of a float32 weight tensor:
// scales->size() is w.shape[axis] or 1.
Status weight_qparams_symmetric(const Tensor& w, int axis, std::vector<float>* scales);

// Quantizes a float32 constant weight tensor: q = clamp(rne(w / scale[c]), -127, 127) (w / scale in
// float32), with p = {scales, zero points 0, axis} (axis -1: one scale). q has w's element order.
// Errors: not a float32 constant, axis out of range, a NaN or infinite weight.
Status quantize_weights(const Tensor& w, int axis, std::vector<int8_t>* q, QuantParams* p);

}  // namespace orknn
