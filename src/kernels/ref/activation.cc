#include "kernels/ref/activation.h"

#include <limits>

namespace orknn {

FusedAct parse_fused_act(const std::string& name) {
  if (name == "Relu") return FusedAct::kRelu;
  if (name == "Clip") return FusedAct::kClip;
  if (name == "LeakyRelu") return FusedAct::kLeakyRelu;
  if (name == "HardSwish") return FusedAct::kHardSwish;
  if (name == "HardSigmoid") return FusedAct::kHardSigmoid;
  if (name == "Sigmoid") return FusedAct::kSigmoid;
  if (name == "Silu") return FusedAct::kSilu;
  return FusedAct::kNone;
}

ActParams default_act_params(FusedAct act) {
  ActParams p;
  switch (act) {
    case FusedAct::kLeakyRelu: p.alpha = 0.01f; break;
    case FusedAct::kClip:
      p.alpha = -std::numeric_limits<float>::infinity();
      p.beta = std::numeric_limits<float>::infinity();
      break;
    case FusedAct::kHardSigmoid:
      p.alpha = 0.2f;
      p.beta = 0.5f;
      break;
    default: break;
  }
  return p;
}

FusedActivation read_fused_act(const Attrs& attrs) {
  FusedActivation f;
  f.act = parse_fused_act(attrs.get_string("fused_act", ""));
  f.alpha = attrs.get_float("fused_alpha", 0.f);
  f.beta = attrs.get_float("fused_beta", 0.f);
  return f;
}

void apply_fused_act(float* data, size_t n, FusedAct act, float alpha, float beta) {
  if (act == FusedAct::kNone) return;
  for (size_t i = 0; i < n; ++i) data[i] = apply_fused_act(data[i], act, alpha, beta);
}

}  // namespace orknn
