// The final step of the INT8 requantizations (kernels/quant_util.h, rne_add_zp_sat8) on 16 float
// lanes, shared by the NEON kernels: y = sat8(rne(v) + zp).
//
// Bit-exact with the scalar function without its two special cases, because the instructions
// already give their results: FCVTNS (vcvtnq_s32_f32) rounds to nearest even whatever FPCR says,
// gives 0 for NaN (so NaN -> zp, as the reference) and saturates beyond int32; the saturating add
// and the saturating narrowings to int16 and int8 then take any |v| > 512 to the bound the
// reference's clamp to [-512, 512] leads to (zp is an int8 zero point).
#pragma once
#include <arm_neon.h>

#include <cstdint>

namespace orknn::neon {

inline int8x16_t rne_add_zp_sat8_x16(float32x4_t v0, float32x4_t v1, float32x4_t v2, float32x4_t v3, int32x4_t zp) {
  const int16x8_t lo = vcombine_s16(vqmovn_s32(vqaddq_s32(vcvtnq_s32_f32(v0), zp)),
                                    vqmovn_s32(vqaddq_s32(vcvtnq_s32_f32(v1), zp)));
  const int16x8_t hi = vcombine_s16(vqmovn_s32(vqaddq_s32(vcvtnq_s32_f32(v2), zp)),
                                    vqmovn_s32(vqaddq_s32(vcvtnq_s32_f32(v3), zp)));
  return vcombine_s8(vqmovn_s16(lo), vqmovn_s16(hi));
}

// float(d) for the four int32 lanes of each quarter of 16 int16 values (two int16x8_t).
struct F32x16 {
  float32x4_t v[4];
};
inline F32x16 to_f32(int16x8_t lo, int16x8_t hi) {
  return {{vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), vcvtq_f32_s32(vmovl_high_s16(lo)),
           vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), vcvtq_f32_s32(vmovl_high_s16(hi))}};
}

// x - zp for 16 int8 values, as int16 (exact: |x - zp| <= 255).
inline void sub_zp(int8x16_t x, int16x8_t zp, int16x8_t* lo, int16x8_t* hi) {
  *lo = vsubq_s16(vmovl_s8(vget_low_s8(x)), zp);
  *hi = vsubq_s16(vmovl_high_s8(x), zp);
}

// requantize(x - zp_x, m, zp_y) = sat8(rne(float(x - zp_x) * m) + zp_y) for 16 int8 values (the
// reference's ScalarRequant in kernels/ref/concat.h). Any m: a non-finite product is NaN or +-inf
// there as here.
inline int8x16_t requant_x16(int8x16_t x, int16x8_t zp_x, float32x4_t m, int32x4_t zp_y) {
  int16x8_t lo, hi;
  sub_zp(x, zp_x, &lo, &hi);
  const F32x16 f = to_f32(lo, hi);
  return rne_add_zp_sat8_x16(vmulq_f32(f.v[0], m), vmulq_f32(f.v[1], m), vmulq_f32(f.v[2], m), vmulq_f32(f.v[3], m),
                             zp_y);
}

}  // namespace orknn::neon
