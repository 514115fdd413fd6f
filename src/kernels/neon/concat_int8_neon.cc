// NEON quantized Concat, "neon_int8": the reference's ConcatQ8 (kernels/ref/concat.h: the same
// pieces, threads and blocked layouts) with the requantization of an input whose parameters differ
// from the output's done 16 values at a time by neon::requant_x16 (requant_neon.h), the
// reference's requantize(x - zp_x, M, zp_y) for every M, finite or not; the last n % 16 values
// take the reference's loop.
#include <arm_neon.h>

#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/neon/requant_neon.h"
#include "kernels/ref/concat.h"

namespace orknn {
namespace {

struct NeonRequant {
  static void run(const int8_t* x, int8_t* y, int64_t n, int32_t zp_x, float m, int32_t zp_y) {
    const int16x8_t zx = vdupq_n_s16(static_cast<int16_t>(zp_x));
    const int32x4_t zy = vdupq_n_s32(zp_y);
    const float32x4_t mult = vdupq_n_f32(m);
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) vst1q_s8(y + k, neon::requant_x16(vld1q_s8(x + k), zx, mult, zy));
    ScalarRequant::run(x + k, y + k, n - k, zp_x, m, zp_y);
  }
};

}  // namespace

ORKNN_REGISTER_KERNEL(Concat, "neon_int8", kPrioritySpecialized, concat_q8_per_tensor_node, ConcatQ8<NeonRequant>);

}  // namespace orknn
