// NEON kernel of quantized (int8) GlobalAveragePool, "neon_gap_int8": the sums of
// kernels/global_pool_int8.h (which has the nodes, layouts, threads and the bit-exact result) with
// NEON. A plane's sum 16 bytes at a time by pairwise widening adds (SADDLP, SADALP) into 64-bit
// lanes; channels-last, 16 channels per job in four vectors of int32 sums (exact below the 2^23
// pixels the shared kernel allows), the last channels of a job narrower than 16 summed in scalar.
#include <arm_neon.h>

#include <cstdint>

#include "kernels/global_pool_int8.h"
#include "kernels/kernel.h"

namespace orknn {
namespace {

// Sum of x[0..count), exact: each step adds 16 int8 values to two 64-bit lanes.
int64_t plane_sum(const int8_t* x, int64_t count) {
  int64x2_t acc = vdupq_n_s64(0);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) acc = vpadalq_s32(acc, vpaddlq_s16(vpaddlq_s8(vld1q_s8(x + i))));
  int64_t sum = vaddvq_s64(acc);
  for (; i < count; ++i) sum += x[i];
  return sum;
}

// sums[i] = sum of x over the pixels of channel i < n <= 16 of an NHWC image (pixels `c` bytes
// apart, x at the first of the n channels).
void channel_sums(const int8_t* x, int64_t pixels, int64_t c, int64_t n, int32_t* sums) {
  if (n < 16) {
    for (int64_t i = 0; i < n; ++i) {
      int32_t s = 0;
      for (int64_t p = 0; p < pixels; ++p) s += x[p * c + i];
      sums[i] = s;
    }
    return;
  }
  int32x4_t acc[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
  for (int64_t p = 0; p < pixels; ++p) {
    const int8x16_t v = vld1q_s8(x + p * c);
    const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_high_s8(v);
    acc[0] = vaddw_s16(acc[0], vget_low_s16(lo));
    acc[1] = vaddw_high_s16(acc[1], lo);
    acc[2] = vaddw_s16(acc[2], vget_low_s16(hi));
    acc[3] = vaddw_high_s16(acc[3], hi);
  }
  for (int k = 0; k < 4; ++k) vst1q_s32(sums + 4 * k, acc[k]);
}

using GlobalAveragePoolInt8 = GlobalAveragePoolInt8Kernel<plane_sum, channel_sums>;

}  // namespace

ORKNN_REGISTER_KERNEL(GlobalAveragePool, "neon_gap_int8", kPriorityGeneral, gap_int8_node, GlobalAveragePoolInt8);

}  // namespace orknn
