// Quantized Add, Sub, Mul (docs/numerics.md, "Op by op"): the per-element formulas, shared by the
// reference kernel (kernels/ref/binary.cc) and the scalar tails of the fast kernels, which must
// agree with it bit for bit.
//   Add/Sub: Ma = s_a / s_y, Mb = s_b / s_y, f = float(a - zp_a) * Ma, g = float(b - zp_b) * Mb,
//            y = sat8(rne(f + g) + zp_y)   (Sub: f - g)
//   Mul:     M = (s_a * s_b) / s_y, y = sat8(rne(float((a - zp_a) * (b - zp_b)) * M) + zp_y)
#pragma once
#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"

namespace orknn {

enum class QuantBinaryKind { kAdd, kSub, kMul };

struct QuantBinaryParams {
  int32_t zp_a = 0, zp_b = 0, zp_y = 0;
  float ma = 1.f, mb = 1.f;  // Add/Sub: s_a / s_y and s_b / s_y; Mul: ma = (s_a * s_b) / s_y
};

inline QuantBinaryParams quant_binary_params(QuantBinaryKind kind, const Tensor& a, const Tensor& b,
                                             const Tensor& y) {
  const QuantScalar qa = per_tensor(a), qb = per_tensor(b), qy = per_tensor(y);
  QuantBinaryParams p;
  p.zp_a = qa.zp;
  p.zp_b = qb.zp;
  p.zp_y = qy.zp;
  if (kind == QuantBinaryKind::kMul) {
    p.ma = (qa.scale * qb.scale) / qy.scale;
  } else {
    p.ma = qa.scale / qy.scale;
    p.mb = qb.scale / qy.scale;
  }
  return p;
}

template <QuantBinaryKind kKind>
inline int8_t quant_binary(int32_t a, int32_t b, const QuantBinaryParams& p) {
  if constexpr (kKind == QuantBinaryKind::kMul) {
    return requantize((a - p.zp_a) * (b - p.zp_b), p.ma, p.zp_y);
  } else {
    const float f = static_cast<float>(a - p.zp_a) * p.ma;
    const float g = static_cast<float>(b - p.zp_b) * p.mb;
    return rne_add_zp_sat8(kKind == QuantBinaryKind::kAdd ? f + g : f - g, p.zp_y);
  }
}

}  // namespace orknn
