#include "kernels/ref/activation.h"

namespace orknn {

FusedAct parse_fused_act(const std::string& name) {
  if (name == "Relu") return FusedAct::kRelu;
  if (name == "Clip") return FusedAct::kClip;
  if (name == "LeakyRelu") return FusedAct::kLeakyRelu;
  if (name == "HardSwish") return FusedAct::kHardSwish;
  if (name == "HardSigmoid") return FusedAct::kHardSigmoid;
  if (name == "Sigmoid") return FusedAct::kSigmoid;
  return FusedAct::kNone;
}

void apply_fused_act(float* data, size_t n, FusedAct act, float alpha, float beta) {
  if (act == FusedAct::kNone) return;
  for (size_t i = 0; i < n; ++i) data[i] = apply_fused_act(data[i], act, alpha, beta);
}

}  // namespace orknn
