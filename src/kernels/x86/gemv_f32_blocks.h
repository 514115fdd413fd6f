// The one-row product of the float kernels that stream their weights once per run: the one-row
// Gemm (x86_gemv_f32, gemv_avx512.cc) and the one-pixel 1x1 convolutions (x86_pw_f32's
// squeeze-and-excitation path, pointwise_f32_avx512.cc). Each weight serves one multiply-add, so
// the time is the time to stream the weights from L2, L3 or memory.
//
// Weights in blocks of 64 outputs, each [K][64] (one block streams contiguously). In fp16 mode
// the converter has already rounded the weights to fp16 values, so they are stored as fp16 (half
// the bytes) and widened exactly in registers (vcvtph2ps); weights that are not all fp16 values
// (pure fp32 models) stay fp32. Per block four 16-lane accumulators run over k ascending with
// fused multiply-adds (one rounding less per step than the reference: the float tolerance of
// docs/kernels.md); the kernel's own epilogue follows.
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <vector>

namespace orknn {
namespace x86 {

constexpr int64_t kGemvBlock = 64;  // outputs per block: 4 vectors of 16

// dst = src as fp16 (nearest), n a multiple of 16; false unless every value comes back equal (a
// NaN never does).
__attribute__((target("avx512f"))) inline bool to_fp16_if_exact(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    const __m512 v = _mm512_loadu_ps(src + i);
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    if (_mm512_cmp_ps_mask(_mm512_cvtph_ps(h), v, _CMP_EQ_OQ) != 0xFFFF) return false;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), h);
  }
  return true;
}

// 16 weights as floats: fp16 storage widened exactly, or fp32.
__attribute__((target("avx512f"))) inline __m512 load_weights(const uint16_t* w) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
}
__attribute__((target("avx512f"))) inline __m512 load_weights(const float* w) { return _mm512_loadu_ps(w); }

// The packed weights: fp16 when every one is an fp16 value, else fp32.
struct GemvWeights {
  int64_t k = 0, blocks = 0;
  std::vector<uint16_t> w16;
  std::vector<float> w32;

  // packed: [blocks][k][64] floats, zeros past the outputs.
  void set(std::vector<float> packed, int64_t k_, int64_t blocks_) {
    k = k_;
    blocks = blocks_;
    w32.clear();
    w16.assign(packed.size(), 0);  // a multiple of kGemvBlock
    if (!to_fp16_if_exact(packed.data(), w16.data(), packed.size())) {
      w16.clear();
      w32 = std::move(packed);
    }
  }

  // acc[v] = sum over k of a[k] * w[block][k][16 v + lane].
  __attribute__((target("avx512f"))) void block_sums(const float* a, int64_t block, __m512 acc[4]) const {
    if (w16.empty()) sums(a, w32.data() + block * k * kGemvBlock, acc);
    else sums(a, w16.data() + block * k * kGemvBlock, acc);
  }

 private:
  template <class W>
  __attribute__((target("avx512f"))) void sums(const float* a, const W* wb, __m512 acc[4]) const {
    for (int v = 0; v < 4; ++v) acc[v] = _mm512_setzero_ps();
    for (int64_t i = 0; i < k; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
      const W* wk = wb + i * kGemvBlock;
      for (int v = 0; v < 4; ++v) acc[v] = _mm512_fmadd_ps(av, load_weights(wk + 16 * v), acc[v]);
    }
  }
};

}  // namespace x86
}  // namespace orknn
