// AVX-512 kernel of float GlobalAveragePool (and ReduceMean over H, W) on 4-D tensors,
// "x86_gap_f32": the squeeze-and-excitation blocks of efficientnet and mobilenet_v3, whose input a
// depthwise convolution has just written. oneDNN's reduction ran them at ~12 GB/s
// (efficientnet_b0's 112x112x32 plane set, 1.6 MB: 104-156 us at one thread).
//
// Bit-identical to the reference (kernels/ref/pool.cc): each channel's float sum runs over the
// pixels in memory order from 0, then one division by the count. Vectorised across channels: on the
// runtime's nChw16c activations (kernel.h, blocked; zero-padded when C is not a multiple of 16) a
// 16-channel block is one vector per pixel, and up to four blocks run side by side (independent
// chains of additions, which hide the add latency); on NCHW 16 planes are read side by side, one
// pixel of each per step. The output [N, C, 1, 1] has the same bytes in both layouts, but for a
// padded one's padding lanes, written as the zero means of the zero (or unread) input lanes.
// fp16 mode: rounded in registers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"

namespace orknn {
namespace {

bool supports_gap_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  return x.shape.size() == 4 && x.numel() > 0 && is_f32(&x) && is_f32(&g.tensor(n.outputs[0]));
}

// ReduceMean over the spatial axes of a 4-D tensor (shufflenet_v2's head) is the same mean. The
// reference ReduceMean sums in double, so there the kernel agrees within float rounding only.
bool supports_spatial_mean_f32(const Graph& g, const Node& n) {
  return supports_gap_f32(g, n) && n.attrs.get_ints("axes") == std::vector<int64_t>{2, 3};
}

// Below this many input floats per thread, waking another thread costs more than it saves.
constexpr int64_t kMinFloatsPerThread = 32768;

// The means of 16 * B channels, B blocks side by side (x: the first block's first pixel; block b
// at x + b * block_stride, pixel p at + p * pixel_stride; lane l of a block is one channel, whose
// pixels lie `lane_stride` apart in NCHW, or are lane l of each vector in nChw16c). Sums in pixel
// order, one accumulator per block. `lanes` channels of the last block are read from NCHW (<= 16)
// and stored, or all 16 when `store_all` (a padded output; the other lanes are 0).
template <int B, bool kBlocked>
__attribute__((target("avx512f"))) void channel_means(const float* x, int64_t pixels, int64_t block_stride,
                                                       int64_t lane_stride, int lanes, bool store_all, bool round,
                                                       float* y) {
  __m512 acc[B];
  for (int b = 0; b < B; ++b) acc[b] = _mm512_setzero_ps();
  const __mmask16 m = static_cast<__mmask16>((1u << lanes) - 1);
  const __m512i lane_index = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                _mm512_set1_epi32(static_cast<int>(lane_stride)));
  for (int64_t p = 0; p < pixels; ++p) {
#pragma GCC unroll 4
    for (int b = 0; b < B; ++b) {
      const float* xb = x + b * block_stride;
      const __m512 v = kBlocked ? _mm512_loadu_ps(xb + p * 16)
                                : _mm512_mask_i32gather_ps(_mm512_setzero_ps(), b == B - 1 ? m : __mmask16(0xFFFF),
                                                           lane_index, xb + p, 4);
      acc[b] = _mm512_add_ps(acc[b], v);
    }
  }
  const __m512 count = _mm512_set1_ps(static_cast<float>(pixels));
  for (int b = 0; b < B; ++b) {
    __m512 mean = _mm512_div_ps(acc[b], count);
    if (round) mean = round_to_fp16_lanes(mean);
    _mm512_mask_storeu_ps(y + 16 * b, b == B - 1 && !store_all ? m : __mmask16(0xFFFF), mean);
  }
}

// Channels [c0, c1) of one image (c0 a multiple of 16): blocks of 16 channels, four at a time.
// Channel c starts at x + c * pixels in both layouts (nChw16c: block c / 16 at x + (c / 16) * 16 *
// pixels), and so does the next block of 16, 16 * pixels further. `store_all`: channel_means.
template <bool kBlocked>
void image_means(const float* x, int64_t pixels, int64_t c0, int64_t c1, bool store_all, bool round, float* y) {
  const int64_t block_stride = 16 * pixels, lane_stride = pixels;
  int64_t c = c0;
  for (; c + 64 <= c1; c += 64)
    channel_means<4, kBlocked>(x + c * pixels, pixels, block_stride, lane_stride, 16, false, round, y + c);
  for (; c + 16 <= c1; c += 16)
    channel_means<1, kBlocked>(x + c * pixels, pixels, block_stride, lane_stride, 16, false, round, y + c);
  if (c < c1)
    channel_means<1, kBlocked>(x + c * pixels, pixels, block_stride, lane_stride, static_cast<int>(c1 - c),
                               store_all, round, y + c);
}

class GlobalAveragePoolF32 : public Kernel {
 public:
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kEachPadded; }
  bool rounds_fp16_outputs() const override { return true; }
  Status prepare(const KernelContext& ctx) override {
    const Shape& s = ctx.in_tensor(0).shape;
    batch_ = s[0];
    channels_ = s[1];
    pixels_ = s[2] * s[3];
    blocked_ = ctx.input_blocked(0);
    // Channels per image as stored: padded to a multiple of 16 where blocked (kernel.h).
    const int64_t padded = (channels_ + 15) / 16 * 16;
    in_channels_ = blocked_ ? padded : channels_;
    out_channels_ = ctx.output_blocked(0) ? padded : channels_;
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const bool round = ctx.round_fp16;
    const int64_t image = in_channels_ * pixels_;
    const bool store_all = out_channels_ != channels_;
    // Jobs: (image, 64 channels).
    const int64_t parts = (channels_ + 63) / 64, jobs = batch_ * parts;
    const int nt = threads_for(batch_ * image, kMinFloatsPerThread, ctx.num_threads);
    parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t n = j / parts, c0 = (j % parts) * 64, c1 = std::min(channels_, c0 + 64);
        float* yn = y + n * out_channels_;
        if (blocked_) image_means<true>(x + n * image, pixels_, c0, c1, store_all, round, yn);
        else image_means<false>(x + n * image, pixels_, c0, c1, store_all, round, yn);
      }
    });
  }

 private:
  int64_t batch_ = 0, channels_ = 0, pixels_ = 0, in_channels_ = 0, out_channels_ = 0;
  bool blocked_ = false;
};

}  // namespace

ORKNN_REGISTER_KERNEL(GlobalAveragePool, "x86_gap_f32", kPrioritySpecialized, supports_gap_f32, GlobalAveragePoolF32);
ORKNN_REGISTER_KERNEL(ReduceMean, "x86_gap_f32", kPrioritySpecialized, supports_spatial_mean_f32, GlobalAveragePoolF32);

}  // namespace orknn
