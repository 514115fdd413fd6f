// AVX-512 kernel of float GlobalAveragePool on 4-D tensors, "x86_gap_f32": the squeeze-and-
// excitation blocks of efficientnet and mobilenet_v3, whose input a depthwise convolution has just
// written. oneDNN's reduction ran them at ~12 GB/s (efficientnet_b0's 112x112x32 plane set, 1.6
// MB: 104-156 us at one thread).
//
// On the runtime's nChw16c activations (kernel.h, blocked) each 16-channel block is one vector per
// pixel: four vector accumulators run over the pixels, then they are added and divided by the
// count. On NCHW each plane is summed the same way, 16 pixels per vector, then across the lanes.
// The output [N, C, 1, 1] has the same bytes in both layouts. Float sums in another order than
// the reference's (a pass over the plane in memory order): within the fast-kernel tolerance
// (docs/kernels.md), as oneDNN's reduction. fp16 mode: rounded in registers.
// OPENRKNN_DISABLE_X86_GAP_F32=1 leaves every node to the other kernels (A/B measurements).
// GCC 12 reports the placeholders inside its own AVX-512 intrinsics (vcvtps2ph, the lane
// reduction) as "may be" or "is used uninitialized" (false positives); the pragmas must precede
// the header to cover them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>

#include "common/env.h"
#include "common/fp16.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"

namespace orknn {
namespace {

bool supports_gap_f32(const Graph& g, const Node& n) {
  if (env_flag("OPENRKNN_DISABLE_X86_GAP_F32") || !x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  return x.shape.size() == 4 && x.numel() > 0 && is_f32(&x) && is_f32(&g.tensor(n.outputs[0]));
}

// Below this many input floats per thread, waking another thread costs more than it saves.
constexpr int64_t kMinFloatsPerThread = 32768;

// Sum of `count` vectors of 16 floats, `stride` floats apart.
__attribute__((target("avx512f"))) __m512 sum_vectors(const float* x, int64_t count, int64_t stride) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i * stride));
    a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + (i + 1) * stride));
    a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + (i + 2) * stride));
    a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + (i + 3) * stride));
  }
  for (; i < count; ++i) a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i * stride));
  return _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
}

// Mean of n contiguous floats (a plane of NCHW), rounded to fp16 when `round`.
__attribute__((target("avx512f"))) float plane_mean(const float* x, int64_t n, bool round) {
  const __m512 v = sum_vectors(x, n / 16, 16);
  const int64_t done = n / 16 * 16;
  const __mmask16 m = static_cast<__mmask16>((1u << (n - done)) - 1);
  const float mean = _mm512_reduce_add_ps(_mm512_add_ps(v, _mm512_maskz_loadu_ps(m, x + done))) / static_cast<float>(n);
  return round ? fp16_to_fp32(fp32_to_fp16(mean)) : mean;
}

// Means of one 16-channel block of nChw16c (`pixels` vectors) into y[0..16).
__attribute__((target("avx512f"))) void block_means(const float* x, int64_t pixels, bool round, float* y) {
  __m512 mean = _mm512_div_ps(sum_vectors(x, pixels, 16), _mm512_set1_ps(static_cast<float>(pixels)));
  if (round) mean = round_to_fp16_lanes(mean);
  _mm512_storeu_ps(y, mean);
}

class GlobalAveragePoolF32 : public Kernel {
 public:
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kEach; }
  bool rounds_fp16_outputs() const override { return true; }
  Status prepare(const KernelContext& ctx) override {
    const Shape& s = ctx.in_tensor(0).shape;
    batch_ = s[0];
    channels_ = s[1];
    pixels_ = s[2] * s[3];
    blocked_ = ctx.input_blocked(0);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const bool round = ctx.round_fp16;
    const int nt = threads_for(batch_ * channels_ * pixels_, kMinFloatsPerThread, ctx.num_threads);
    if (blocked_) {  // jobs: (image, 16-channel block); nChw16c has channels % 16 == 0
      parallel_ranges(batch_ * channels_ / 16, nt, [&](int64_t j0, int64_t j1, int) {
        for (int64_t j = j0; j < j1; ++j) block_means(x + j * pixels_ * 16, pixels_, round, y + j * 16);
      });
      return;
    }
    parallel_ranges(batch_ * channels_, nt, [&](int64_t p0, int64_t p1, int) {
      for (int64_t p = p0; p < p1; ++p) y[p] = plane_mean(x + p * pixels_, pixels_, round);
    });
  }

 private:
  int64_t batch_ = 0, channels_ = 0, pixels_ = 0;
  bool blocked_ = false;
};

}  // namespace

ORKNN_REGISTER_KERNEL(GlobalAveragePool, "x86_gap_f32", 20, supports_gap_f32, GlobalAveragePoolF32);

}  // namespace orknn
