// fp16 mode: the NPU stores float weights as fp16, so float constants take their fp16 values here,
// once, and the runtime computes with exactly the weights the board would use. Storage stays
// float32 (kernels compute in fp32; the runtime rounds op outputs itself).
//
// One exception to nearest rounding (docs/numerics.md, "Tiny constants"): a nonzero constant or
// Clip bound below the smallest fp16 subnormal (2^-24) keeps that subnormal, with its sign, instead
// of becoming 0. Such values are epsilons and clamp bounds that keep a division finite
// (F.normalize's clamp_min(1e-12)): at 0, Swin v2's zero-padded window tokens compute 0/0.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/fp16.h"
#include "graph/passes/passes.h"

namespace orknn {
namespace {

constexpr float kSmallestFp16 = 5.9604644775390625e-08f;  // 2^-24

float to_fp16_keeping_nonzero(float orig, float rounded) {
  return rounded == 0.f && orig != 0.f && !std::isnan(orig) ? std::copysign(kSmallestFp16, orig) : rounded;
}

}  // namespace

Status round_weights_fp16(Graph& g, int* changes) {
  int changed = 0;
  for (Tensor& t : g.tensors) {
    if (!t.is_const() || t.dtype != DType::kF32 || !t.quant.empty() || t.numel() == 0) continue;
    const size_t n = static_cast<size_t>(t.numel());
    const float* orig = t.const_ptr<float>();
    std::vector<float> v(orig, orig + n);
    round_to_fp16(v.data(), n);
    for (size_t i = 0; i < n; ++i) v[i] = to_fp16_keeping_nonzero(orig[i], v[i]);
    if (std::equal(v.begin(), v.end(), orig)) continue;
    set_const_data(t, v.data(), n * sizeof(float));
    ++changed;
  }
  for (Node& n : g.nodes) {
    // A Clip's bounds, or those of a Clip fused into its producer.
    const bool clip = n.op == OpId::Clip, fused = n.attrs.get_string("fused_act", "") == "Clip";
    if (!clip && !fused) continue;
    static const char* const kClipBounds[2] = {"min", "max"}, *const kFusedBounds[2] = {"fused_alpha", "fused_beta"};
    for (const char* bound : clip ? kClipBounds : kFusedBounds) {
      if (!n.attrs.has(bound)) continue;
      const float b = n.attrs.get_float(bound, 0.f);
      float r = b;
      round_to_fp16(&r, 1);
      r = to_fp16_keeping_nonzero(b, r);
      if (r == b || (std::isnan(r) && std::isnan(b))) continue;
      n.attrs.set_float(bound, r);
      ++changed;
    }
  }
  if (changes) *changes += changed;
  return Status::Ok();
}

}  // namespace orknn
