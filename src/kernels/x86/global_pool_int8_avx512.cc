// AVX-512 kernel of quantized (int8) GlobalAveragePool, "x86_gap_int8" (squeeze-and-excitation
// blocks, classifier heads), run on the node's threads for large tensors.
// Bit-exact against the reference kernel (kernels/ref/pool.cc, docs/numerics.md):
//   acc = sum(x - zp_x) over the plane (an exact integer), Mc = (s_x / s_y) / float(count),
//   y = sat8(rne(float(acc) * Mc) + zp_y)
// The integer sum is formed another way, which gives the same integer: 64 bytes at a time, each
// int8 x biased to the unsigned byte x + 128 (xor 0x80) and summed with vpsadbw into 64-bit lanes,
// then acc = sum - count * (128 + zp_x). The per-plane result uses the reference's scalar float
// operations (quant_util.h).
// Per-axis parameters stay on the reference kernel (the converter never makes them for activations).
// A 4-D input kept channels-last between convolutions (kernel.h, blocked) is summed per channel
// instead, 16 channels per vector of int32 sums (exact below 2^23 pixels, where blocked_io() stops
// offering it); the output [N,C,1,1] has the same bytes in either layout.

// GCC 12 reports the placeholders inside its own AVX-512 intrinsics as "may be used
// uninitialized" (a false positive); the pragma must precede the header to cover them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/x86/cpu_features.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

bool supports_gap_int8(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512bw() || !is_quantized_node(g, n)) return false;
  if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  return x.shape.size() >= 3 && is_q8_per_tensor(x) && is_q8_per_tensor(y);
}

// Sum of x[i] + 128 over [0, count): exact (64-bit lanes).
__attribute__((target("avx512f,avx512bw"))) int64_t biased_sum(const int8_t* x, int64_t count) {
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 64 <= count; i += 64) {
    const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(x + i), bias);
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero));
  }
  if (i < count) {
    const __mmask64 m = (__mmask64(1) << (count - i)) - 1;
    const __m512i v = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), bias));
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero));
  }
  alignas(64) int64_t lanes[8];
  _mm512_store_si512(lanes, acc);
  int64_t sum = 0;
  for (int64_t v : lanes) sum += v;
  return sum;
}

// sums[i] = sum of x over the pixels of channel i < n <= 16 of an NHWC image (pixels `c` bytes
// apart, x at the first of the n channels).
__attribute__((target("avx512f,avx512bw"))) void channel_sums(const int8_t* x, int64_t pixels, int64_t c, int64_t n,
                                                             int32_t* sums) {
  const __mmask64 m = (__mmask64(1) << n) - 1;
  __m512i acc = _mm512_setzero_si512();
  for (int64_t p = 0; p < pixels; ++p)
    acc = _mm512_add_epi32(acc, _mm512_cvtepi8_epi32(_mm512_castsi512_si128(_mm512_maskz_loadu_epi8(m, x + p * c))));
  _mm512_mask_storeu_epi32(sums, static_cast<__mmask16>(m), acc);
}

// Largest image (pixels) summed channels-last: the int32 sums stay exact.
constexpr int64_t kMaxNhwcPixels = int64_t{1} << 23;

// Below this many input bytes per thread, waking another thread costs more than it saves.
constexpr int64_t kMinBytesPerThread = 64 * 1024;

class GlobalAveragePoolInt8 : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    const Shape& s = g.tensor(n.inputs[0]).shape;
    return s.size() == 4 && s[2] * s[3] <= kMaxNhwcPixels ? BlockedIo::kEach : BlockedIo::kNone;
  }
  Status prepare(const KernelContext& ctx) override {
    ORKNN_RETURN_IF_ERROR(check_q8_input(*ctx.graph, *ctx.node, 0));
    ORKNN_RETURN_IF_ERROR(check_q8_output(*ctx.graph, *ctx.node, 0));
    const Shape& s = ctx.in_tensor(0).shape;
    channels_ = s[1];
    planes_ = s[0] * s[1];
    plane_ = 1;
    for (size_t d = 2; d < s.size(); ++d) plane_ *= s[d];
    const QuantScalar qx = per_tensor(ctx.in_tensor(0)), qy = per_tensor(ctx.out_tensor(0));
    zp_x_ = qx.zp;
    zp_y_ = qy.zp;
    const float ratio = qx.scale / qy.scale;
    if (plane_ > 0) mc_ = ratio / static_cast<float>(plane_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    if (plane_ == 0) {  // no elements: the reference's count-0 result
      for (int64_t p = 0; p < planes_; ++p) y[p] = static_cast<int8_t>(sat8(zp_y_));
      return;
    }
    if (ctx.input_blocked(0)) return run_nhwc(x, y, ctx.num_threads);
    const int64_t offset = plane_ * (128 + static_cast<int64_t>(zp_x_));
    parallel_ranges(planes_, threads_for(planes_ * plane_, kMinBytesPerThread, ctx.num_threads),
                    [&](int64_t p0, int64_t p1, int) {
                      for (int64_t p = p0; p < p1; ++p) {
                        const int64_t acc = biased_sum(x + p * plane_, plane_) - offset;
                        y[p] = rne_add_zp_sat8(static_cast<float>(acc) * mc_, zp_y_);
                      }
                    });
  }

 private:
  // Jobs: (image, 16 channels).
  void run_nhwc(const int8_t* x, int8_t* y, int num_threads) const {
    const int64_t c = channels_, chunks = (c + 15) / 16, jobs = (planes_ / c) * chunks;
    const int64_t offset = plane_ * static_cast<int64_t>(zp_x_);
    const int nt = threads_for(planes_ * plane_, kMinBytesPerThread, num_threads);
    parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t b = j / chunks, ch = (j % chunks) * 16, n = std::min<int64_t>(16, c - ch);
        int32_t sums[16];
        channel_sums(x + b * plane_ * c + ch, plane_, c, n, sums);
        for (int64_t i = 0; i < n; ++i) {
          const int64_t acc = static_cast<int64_t>(sums[i]) - offset;
          y[b * c + ch + i] = rne_add_zp_sat8(static_cast<float>(acc) * mc_, zp_y_);
        }
      }
    });
  }

  int64_t channels_ = 0, planes_ = 0, plane_ = 0;
  int32_t zp_x_ = 0, zp_y_ = 0;
  float mc_ = 1.f;
};

}  // namespace

ORKNN_REGISTER_KERNEL(GlobalAveragePool, "x86_gap_int8", kPriorityGeneral, supports_gap_int8, GlobalAveragePoolInt8);

}  // namespace orknn
