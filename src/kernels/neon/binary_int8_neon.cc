// NEON kernels of quantized Add, Sub and Mul, "neon_int8": the nodes, layouts and thread split of
// x86's avx512_int8 (kernels/binary_int8_walk.h: inputs of the output's shape or constant along a
// trailing block of it, such as squeeze-and-excitation scales and scalars; NHWC between the INT8
// convolutions). Bit-exact against the reference kernel (kernels/ref/binary_int8.h): the same
// float32 operations in the same order, 16 elements at a time (docs/numerics.md):
//   Add/Sub: f = float(a - zp_a) * Ma, g = float(b - zp_b) * Mb, v = f +/- g
//   Mul:     v = float((a - zp_a) * (b - zp_b)) * M     (the product exact in int32: vmull_s16)
//   then y = sat8(rne(v) + zp_y) by neon::rne_add_zp_sat8_x16 (requant_neon.h: NaN and the
//   reference's clamp come out of the instructions' saturation, so no multiplier needs a slow path).
// The build's -ffp-contract=off keeps GCC from fusing the multiplies and the add into an FMA
// (arm_neon.h writes vmulq_f32 and vaddq_f32 as plain vector arithmetic). The last n % 16 elements
// of a block use the reference's scalar formula.
#include <arm_neon.h>

#include <cstdint>

#include "kernels/binary_int8_walk.h"
#include "kernels/kernel.h"
#include "kernels/neon/requant_neon.h"
#include "kernels/quant_util.h"
#include "kernels/ref/binary_int8.h"

namespace orknn {
namespace {

// v for 16 elements whose differences from the zero points are (da_lo, da_hi) and (db_lo, db_hi).
template <QuantBinaryKind kKind>
inline void binary_values(int16x8_t da_lo, int16x8_t da_hi, int16x8_t db_lo, int16x8_t db_hi, float32x4_t ma,
                          float32x4_t mb, float32x4_t v[4]) {
  if constexpr (kKind == QuantBinaryKind::kMul) {
    const int32x4_t p[4] = {vmull_s16(vget_low_s16(da_lo), vget_low_s16(db_lo)), vmull_high_s16(da_lo, db_lo),
                            vmull_s16(vget_low_s16(da_hi), vget_low_s16(db_hi)), vmull_high_s16(da_hi, db_hi)};
    for (int k = 0; k < 4; ++k) v[k] = vmulq_f32(vcvtq_f32_s32(p[k]), ma);
  } else {
    const neon::F32x16 fa = neon::to_f32(da_lo, da_hi), fb = neon::to_f32(db_lo, db_hi);
    for (int k = 0; k < 4; ++k) {
      const float32x4_t f = vmulq_f32(fa.v[k], ma), g = vmulq_f32(fb.v[k], mb);
      v[k] = kKind == QuantBinaryKind::kAdd ? vaddq_f32(f, g) : vsubq_f32(f, g);
    }
  }
}

// Elements [begin, end) of block `o` (Q8BinaryWalk::run): a full input advances per element, a
// block-constant one gives its block's value to every lane.
template <QuantBinaryKind kKind>
void quant_binary_block(const int8_t* a, const int8_t* b, int8_t* y, int64_t o, int64_t inner, int64_t begin,
                        int64_t end, bool a_full, bool b_full, const QuantBinaryParams& p) {
  if (begin >= end) return;
  const int8_t* pa = a_full ? a + o * inner : a + o;
  const int8_t* pb = b_full ? b + o * inner : b + o;
  int8_t* py = y + o * inner;
  const int16x8_t zp_a = vdupq_n_s16(static_cast<int16_t>(p.zp_a)), zp_b = vdupq_n_s16(static_cast<int16_t>(p.zp_b));
  const int32x4_t zp_y = vdupq_n_s32(p.zp_y);
  const float32x4_t ma = vdupq_n_f32(p.ma), mb = vdupq_n_f32(p.mb);
  const int16x8_t ca = vdupq_n_s16(static_cast<int16_t>(pa[0] - p.zp_a));  // used when !a_full
  const int16x8_t cb = vdupq_n_s16(static_cast<int16_t>(pb[0] - p.zp_b));
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    int16x8_t da_lo = ca, da_hi = ca, db_lo = cb, db_hi = cb;
    if (a_full) neon::sub_zp(vld1q_s8(pa + i), zp_a, &da_lo, &da_hi);
    if (b_full) neon::sub_zp(vld1q_s8(pb + i), zp_b, &db_lo, &db_hi);
    float32x4_t v[4];
    binary_values<kKind>(da_lo, da_hi, db_lo, db_hi, ma, mb, v);
    vst1q_s8(py + i, neon::rne_add_zp_sat8_x16(v[0], v[1], v[2], v[3], zp_y));
  }
  for (; i < end; ++i) py[i] = quant_binary<kKind>(a_full ? pa[i] : pa[0], b_full ? pb[i] : pb[0], p);
}

template <QuantBinaryKind kKind>
class QuantBinaryNeon : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return q8_binary_blocked_io(g, n); }
  Status prepare(const KernelContext& ctx) override { return walk_.init(ctx, kKind, &p_); }
  void run(const KernelContext& ctx) override {
    walk_.run(ctx.in<int8_t>(0), ctx.in<int8_t>(1), ctx.out<int8_t>(0), ctx.num_threads,
              [this](const int8_t* a, const int8_t* b, int8_t* y, int64_t o, int64_t inner, int64_t begin,
                     int64_t end, bool a_full, bool b_full) {
                quant_binary_block<kKind>(a, b, y, o, inner, begin, end, a_full, b_full, p_);
              });
  }

 private:
  QuantBinaryParams p_;
  Q8BinaryWalk walk_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Add, "neon_int8", kPriorityGeneral, q8_binary_shapes_ok, QuantBinaryNeon<QuantBinaryKind::kAdd>);
ORKNN_REGISTER_KERNEL(Sub, "neon_int8", kPriorityGeneral, q8_binary_shapes_ok, QuantBinaryNeon<QuantBinaryKind::kSub>);
ORKNN_REGISTER_KERNEL(Mul, "neon_int8", kPriorityGeneral, q8_binary_shapes_ok, QuantBinaryNeon<QuantBinaryKind::kMul>);

}  // namespace orknn
