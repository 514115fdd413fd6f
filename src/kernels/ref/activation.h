// Activations that the converter fuses into Conv/ConvTranspose/Gemm/MatMul (attribute "fused_act").
#pragma once
#include <cmath>
#include <cstddef>
#include <string>

#include "graph/ir.h"

namespace orknn {

// Attribute "fused_act" holds one of these ONNX op names, or "Silu" (x * Sigmoid(x): the
// Sigmoid -> Mul pair the converter fuses); "fused_alpha"/"fused_beta" hold its parameters
// (LeakyRelu: alpha; Clip: min, max; HardSigmoid: alpha, beta).
enum class FusedAct { kNone, kRelu, kClip, kLeakyRelu, kHardSwish, kHardSigmoid, kSigmoid, kSilu };

FusedAct parse_fused_act(const std::string& name);  // kNone for "" or unknown

// The ONNX default (alpha, beta) of each activation: LeakyRelu alpha 0.01, Clip min/max -inf/+inf,
// HardSigmoid 0.2/0.5, 0 for parameters an activation does not have. The one place these
// defaults live: the activation ops' infer and the fused form both fill them from here.
struct ActParams {
  float alpha = 0.f, beta = 0.f;
};
ActParams default_act_params(FusedAct act);

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
    case FusedAct::kSilu: return x * (1.f / (1.f + std::exp(-x)));  // the Sigmoid, then the Mul
  }
  return x;
}

void apply_fused_act(float* data, size_t n, FusedAct act, float alpha, float beta);

// A node's fused activation as the kernels read it ("fused_act", "fused_alpha", "fused_beta";
// infer has validated and completed them).
struct FusedActivation {
  FusedAct act = FusedAct::kNone;
  float alpha = 0.f, beta = 0.f;
  float operator()(float x) const { return apply_fused_act(x, act, alpha, beta); }
};
FusedActivation read_fused_act(const Attrs& attrs);

}  // namespace orknn
