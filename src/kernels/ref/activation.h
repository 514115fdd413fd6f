// Activations that the converter fuses into Conv/ConvTranspose/Gemm/MatMul (attribute "fused_act").
#pragma once
#include <cmath>
#include <cstddef>
#include <string>

namespace orknn {

// Attribute "fused_act" holds one of these ONNX op names; "fused_alpha"/"fused_beta" hold its
// parameters (LeakyRelu: alpha; Clip: min, max; HardSigmoid: alpha, beta).
enum class FusedAct { kNone, kRelu, kClip, kLeakyRelu, kHardSwish, kHardSigmoid, kSigmoid };

FusedAct parse_fused_act(const std::string& name);  // kNone for "" or unknown

inline float apply_fused_act(float x, FusedAct act, float alpha, float beta) {
  switch (act) {
    case FusedAct::kNone: return x;
    case FusedAct::kRelu: return x > 0.f ? x : 0.f;
    case FusedAct::kClip: {  // ONNX order: max with min first, then min with max (min > max gives max)
      float t = x < alpha ? alpha : x;
      return t > beta ? beta : t;
    }
    case FusedAct::kLeakyRelu: return x >= 0.f ? x : x * alpha;
    case FusedAct::kHardSwish: {
      float t = x / 6.f + 0.5f;
      t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
      return x * t;
    }
    case FusedAct::kHardSigmoid: {
      float t = alpha * x + beta;
      return t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    }
    case FusedAct::kSigmoid: return 1.f / (1.f + std::exp(-x));
  }
  return x;
}

void apply_fused_act(float* data, size_t n, FusedAct act, float alpha, float beta);

}  // namespace orknn
