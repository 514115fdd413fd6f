// AVX-512 kernels of QuantizeLinear (float32 -> int8, "x86_quantize_int8") and DequantizeLinear
// (int8 or int32 -> float32, "x86_dequantize_f32") with per-tensor parameters, run on the node's
// threads for large tensors (a quantized model's input image, the float islands of a mixed model).
// Bit-exact against the reference kernels (kernels/ref/quantize.cc, docs/numerics.md): the same
// float32 operations in the same order, 16 lanes at a time:
//   quantize:   v = x / s (IEEE division); NaN -> zp; v clamped to [-512, 512] (changes no
//               saturated result, as rne_add_zp_sat8 does); q = sat8(rne(v) + zp)
//   dequantize: x = float(q - zp) * s
// rne is vcvtps2dq under the default rounding mode (round to nearest even, as std::nearbyint in the
// reference; nothing in the project changes the mode); sat8 is the signed-saturating narrowing.
// Per-axis parameters stay on the reference kernels. The same loops serve the runtime's I/O
// conversions (kernels/io_convert.h, "x86_io_convert").

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
#include "kernels/io_convert.h"

namespace orknn {
namespace {

bool is_per_tensor(const Tensor& t) { return t.quant.scale.size() == 1 && t.quant.zero_point.size() == 1; }

bool single_io(const Node& n) {
  return n.inputs.size() == 1 && n.outputs.size() == 1 && n.inputs[0] >= 0 && n.outputs[0] >= 0;
}

bool supports_quantize(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512bwvl() || !single_io(n)) return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  return x.dtype == DType::kF32 && x.quant.empty() && y.dtype == DType::kI8 && is_per_tensor(y) &&
         y.quant.zero_point[0] >= -128 && y.quant.zero_point[0] <= 127;
}

bool supports_dequantize(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512bwvl() || !single_io(n)) return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  return (x.dtype == DType::kI8 || x.dtype == DType::kI32) && is_per_tensor(x) && y.dtype == DType::kF32 &&
         y.quant.empty();
}

inline __mmask16 mask16(int64_t count) { return count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1); }

// One vector of quantize: 16 floats -> 16 int32 codes (not yet narrowed).
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512i quantize16(__m512 x, __m512 s, __m512i vzp) {
  __m512 v = _mm512_div_ps(x, s);
  v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0, so q = zp
  v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-512.f)), _mm512_set1_ps(512.f));
  return _mm512_add_epi32(_mm512_cvtps_epi32(v), vzp);
}

// Full vectors use plain loads and stores: masked stores that miss the cache are far slower
// (measured: 1.6x on a 5.5 MB output), so only the tail is masked.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void quantize_range(const float* x, int8_t* y, int64_t begin,
                                                                         int64_t end, float scale, int32_t zp) {
  const __m512 s = _mm512_set1_ps(scale);
  const __m512i vzp = _mm512_set1_epi32(zp);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm512_cvtsepi32_epi8(quantize16(_mm512_loadu_ps(x + i), s, vzp)));
  if (i < end) {
    const __mmask16 m = mask16(end - i);
    _mm512_mask_cvtsepi32_storeu_epi8(y + i, m, quantize16(_mm512_maskz_loadu_ps(m, x + i), s, vzp));
  }
}

template <class Q>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512i load_codes(const Q* x, __mmask16 m) {
  if constexpr (sizeof(Q) == 1)
    return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, x));
  else
    return _mm512_maskz_loadu_epi32(m, x);
}

template <class Q>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void dequantize_range(const Q* x, float* y, int64_t begin,
                                                                           int64_t end, float scale, int32_t zp) {
  const __m512 s = _mm512_set1_ps(scale);
  const __m512i vzp = _mm512_set1_epi32(zp);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16)
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(load_codes(x + i, 0xFFFF), vzp)), s));
  if (i < end) {
    const __mmask16 m = mask16(end - i);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(load_codes(x + i, m), vzp)), s));
  }
}

// Below this many elements per thread, waking another thread costs more than it saves.
constexpr int64_t kMinElementsPerThread = 32768;

// Runs f(begin, end) over [0, n) in 16-aligned ranges on the threads n is worth.
template <class F>
void run_ranges(int64_t n, int num_threads, F&& f) {
  parallel_ranges(
      n, threads_for(n, kMinElementsPerThread, num_threads), [&](int64_t b, int64_t e, int) { f(b, e); }, 16);
}

class QuantizeAvx512 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const QuantScalar q = per_tensor(ctx.out_tensor(0));
    scale_ = q.scale;
    zp_ = q.zp;
    return Status::Ok();
  }
  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    int8_t* y = ctx.out<int8_t>(0);
    run_ranges(ctx.out_tensor(0).numel(), ctx.num_threads,
               [&](int64_t b, int64_t e) { quantize_range(x, y, b, e, scale_, zp_); });
  }

 private:
  float scale_ = 1.f;
  int32_t zp_ = 0;
};

class DequantizeAvx512 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const QuantScalar q = per_tensor(ctx.in_tensor(0));
    scale_ = q.scale;
    zp_ = q.zp;
    int32_input_ = ctx.in_tensor(0).dtype == DType::kI32;
    return Status::Ok();
  }
  void run(const KernelContext& ctx) override {
    float* y = ctx.out<float>(0);
    const int64_t n = ctx.out_tensor(0).numel();
    if (int32_input_) {
      const int32_t* q = ctx.in<int32_t>(0);
      run_ranges(n, ctx.num_threads, [&](int64_t b, int64_t e) { dequantize_range(q, y, b, e, scale_, zp_); });
    } else {
      const int8_t* q = ctx.in<int8_t>(0);
      run_ranges(n, ctx.num_threads, [&](int64_t b, int64_t e) { dequantize_range(q, y, b, e, scale_, zp_); });
    }
  }

 private:
  float scale_ = 1.f;
  int32_t zp_ = 0;
  bool int32_input_ = false;
};

void io_quantize(const float* x, int8_t* y, int64_t n, float scale, int32_t zp) { quantize_range(x, y, 0, n, scale, zp); }
void io_dequantize(const int8_t* x, float* y, int64_t n, float scale, int32_t zp) {
  dequantize_range(x, y, 0, n, scale, zp);
}
ORKNN_REGISTER_IO_CONVERT((IoConvertEntry{"x86_io_convert", kPriorityGeneral, [] { return x86::cpu_avx512bwvl(); },
                                          io_quantize, io_dequantize}));

}  // namespace

ORKNN_REGISTER_KERNEL(QuantizeLinear, "x86_quantize_int8", kPriorityGeneral, supports_quantize, QuantizeAvx512);
ORKNN_REGISTER_KERNEL(DequantizeLinear, "x86_dequantize_f32", kPriorityGeneral, supports_dequantize, DequantizeAvx512);

}  // namespace orknn
