// AVX-512 kernels of quantized Add, Sub and Mul when each input has the output's shape or is
// constant along a trailing block of it (kernels/broadcast_blocks.h: the squeeze-and-excitation
// scale [N,C,1,1] * [N,C,H,W], a scalar), run on the node's threads. Bit-exact against the reference kernel (kernels/ref/binary.cc): the same float32
// operations in the same order, 16 lanes at a time (docs/numerics.md):
//   Add/Sub: f = float(a - zp_a) * Ma, g = float(b - zp_b) * Mb, v = f +/- g
//   Mul:     v = float((a - zp_a) * (b - zp_b)) * M
//   then y = sat8(rne(v) + zp_y), where, as rne_add_zp_sat8 does, NaN counts as 0 (so y = zp_y)
//   and v is clamped to [-512, 512] before the conversion (which changes no saturated result).
// rne is the conversion under the current rounding mode, as std::nearbyint in the reference
// (round to nearest even; nothing in the project changes the mode). The remaining n % 16 elements
// use the reference's scalar formula; a block-constant input is the same value in every lane.
//
// Compiled with function target attributes, so the rest of the library does not require
// AVX-512; supports() checks the CPU at run time.
#include <immintrin.h>


#include <algorithm>
#include <cmath>
#include <cstdint>

// GCC 12 reports the _mm512_undefined_*() placeholders inside its own intrinsics as
// "may be used uninitialized" (a known false positive of those headers).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/binary_int8_walk.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/binary_int8.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fusions.h"
#include "ops/quant_infer.h"

namespace orknn {

// Quantized node, inputs full or block-constant (binary_int8_walk.h), AVX-512BW available.
bool supports_q8_binary(const Graph& g, const Node& n) { return x86::cpu_avx512bw() && q8_binary_shapes_ok(g, n); }

namespace {

// True when |v| < 512 for every pair of codes (|x - zp| <= 255, finite multipliers): then v is
// never NaN and the clamp to [-512, 512] changes nothing, so quant_binary_block<kKind, true> skips
// both. Typical residual Adds (multipliers near 1) qualify.
bool bounded(QuantBinaryKind kind, const QuantBinaryParams& p) {
  if (!std::isfinite(p.ma) || !std::isfinite(p.mb)) return false;
  const double bound = kind == QuantBinaryKind::kMul ? 255.0 * 255.0 * std::fabs(p.ma)
                                                     : 255.0 * (std::fabs(p.ma) + std::fabs(p.mb));
  return bound < 511.0;  // margin for the float rounding of the products and the sum
}

// Elements [begin, end) of block `o`: a full input advances per element, a block-constant one
// gives its block's value to every lane.
template <QuantBinaryKind kKind, bool kBounded>
__attribute__((target("avx512f,avx512bw"))) void quant_binary_block(const int8_t* a, const int8_t* b, int8_t* y,
                                                                     int64_t o, int64_t inner, int64_t begin,
                                                                     int64_t end, bool a_full, bool b_full,
                                                                     const QuantBinaryParams& p) {
  const int8_t* pa = a_full ? a + o * inner : a + o;
  const int8_t* pb = b_full ? b + o * inner : b + o;
  int8_t* py = y + o * inner;
  const __m512i zp_a = _mm512_set1_epi32(p.zp_a);
  const __m512i zp_b = _mm512_set1_epi32(p.zp_b);
  const __m512i zp_y = _mm512_set1_epi32(p.zp_y);
  const __m512 ma = _mm512_set1_ps(p.ma);
  const __m512 mb = _mm512_set1_ps(p.mb);
  const __m512 lo = _mm512_set1_ps(-512.f);
  const __m512 hi = _mm512_set1_ps(512.f);
  const __m512i ca = _mm512_sub_epi32(_mm512_set1_epi32(pa[0]), zp_a);  // used when !a_full
  const __m512i cb = _mm512_sub_epi32(_mm512_set1_epi32(pb[0]), zp_b);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512i da =
        a_full ? _mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(pa + i))), zp_a)
               : ca;
    const __m512i db =
        b_full ? _mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + i))), zp_b)
               : cb;
    __m512 v;
    if constexpr (kKind == QuantBinaryKind::kMul) {
      v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(da, db)), ma);
    } else {
      const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(da), ma);
      const __m512 g = _mm512_mul_ps(_mm512_cvtepi32_ps(db), mb);
      v = kKind == QuantBinaryKind::kAdd ? _mm512_add_ps(f, g) : _mm512_sub_ps(f, g);
    }
    if constexpr (!kBounded) {
      v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0
      v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    }
    const __m512i r = _mm512_add_epi32(_mm512_cvtps_epi32(v), zp_y);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(py + i), _mm512_cvtsepi32_epi8(r));  // signed saturation
  }
  for (; i < end; ++i) py[i] = quant_binary<kKind>(a_full ? pa[i] : pa[0], b_full ? pb[i] : pb[0], p);
}

// An INT8 chain's table is applied to pieces of this many results, while they are in L1.
constexpr int64_t kTablePiece = 4096;

template <QuantBinaryKind kKind>
class QuantBinaryAvx512 : public Kernel {
 public:
  // `table`: 256 bytes applied to every result (an INT8 chain's tail, fusions.h), or nullptr.
  explicit QuantBinaryAvx512(const uint8_t* table = nullptr) : table_(table) {}

  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return q8_binary_blocked_io(g, n); }
  Status prepare(const KernelContext& ctx) override {
    ORKNN_RETURN_IF_ERROR(walk_.init(ctx, kKind, &p_));
    bounded_ = bounded(kKind, p_);
    return Status::Ok();
  }
  void run(const KernelContext& ctx) override {
    walk_.run(ctx.in<int8_t>(0), ctx.in<int8_t>(1), ctx.out<int8_t>(0), ctx.num_threads,
              [this](const int8_t* a, const int8_t* b, int8_t* y, int64_t o, int64_t inner, int64_t begin,
                     int64_t end, bool a_full, bool b_full) { block(a, b, y, o, inner, begin, end, a_full, b_full); });
  }

 private:
  QuantBinaryParams p_;
  Q8BinaryWalk walk_;
  bool bounded_ = false;
  const uint8_t* table_ = nullptr;

  void compute(const int8_t* a, const int8_t* b, int8_t* y, int64_t o, int64_t inner, int64_t begin, int64_t end,
               bool a_full, bool b_full) const {
    if (bounded_) quant_binary_block<kKind, true>(a, b, y, o, inner, begin, end, a_full, b_full, p_);
    else quant_binary_block<kKind, false>(a, b, y, o, inner, begin, end, a_full, b_full, p_);
  }

  // compute, then the chain's table on each piece of kTablePiece results.
  void block(const int8_t* a, const int8_t* b, int8_t* y, int64_t o, int64_t inner, int64_t begin, int64_t end,
             bool a_full, bool b_full) const {
    if (!table_) return compute(a, b, y, o, inner, begin, end, a_full, b_full);
    uint8_t* yo = reinterpret_cast<uint8_t*>(y + o * inner);
    for (int64_t i = begin; i < end; i += kTablePiece) {
      const int64_t e = std::min(end, i + kTablePiece);
      compute(a, b, y, o, inner, i, e, a_full, b_full);
      int8_lookup_range(table_, yo, yo, i, e);
    }
  }
};

}  // namespace

std::unique_ptr<Kernel> make_q8_binary_kernel(OpId op, const uint8_t* table) {
  switch (op) {
    case OpId::Add: return std::make_unique<QuantBinaryAvx512<QuantBinaryKind::kAdd>>(table);
    case OpId::Sub: return std::make_unique<QuantBinaryAvx512<QuantBinaryKind::kSub>>(table);
    case OpId::Mul: return std::make_unique<QuantBinaryAvx512<QuantBinaryKind::kMul>>(table);
    default: return nullptr;
  }
}

ORKNN_REGISTER_KERNEL(Add, "avx512_int8", kPriorityGeneral, supports_q8_binary, QuantBinaryAvx512<QuantBinaryKind::kAdd>);
ORKNN_REGISTER_KERNEL(Sub, "avx512_int8", kPriorityGeneral, supports_q8_binary, QuantBinaryAvx512<QuantBinaryKind::kSub>);
ORKNN_REGISTER_KERNEL(Mul, "avx512_int8", kPriorityGeneral, supports_q8_binary, QuantBinaryAvx512<QuantBinaryKind::kMul>);

}  // namespace orknn
