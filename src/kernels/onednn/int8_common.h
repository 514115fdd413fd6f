// Shared pieces of the oneDNN INT8 kernels (conv_int8.cc, matmul_int8.cc).
//
// How the kernels stay bit-exact with the quantized reference kernels (docs/numerics.md):
//  * oneDNN computes only the integer part. Activations enter as u8 (x + 128, a sign-bit flip)
//    with weights s8, and the primitive writes int32 accumulators (s32 dst, no bias, no output
//    scales, no post-ops, no zero-point attributes). Since sum((x_u8 - zp_u8) * w) with
//    zp_u8 = zp_x + 128 equals sum((x - zp_x) * w), the true accumulator is
//        acc = oneDNN_s32 + comp[c],   comp[c] = bias_q[c] - zp_u8 * sum(w[c])
//    in wrap-around int32 arithmetic (exact because the true acc fits in int32).
//  * The requantization float(acc) * M[c] -> rne -> + zp_y -> saturate -> Relu/Clip clamp is ours
//    (kernels/x86/int8_requant.h), the spec's operations in the spec's order.
//  * Why not more of oneDNN: with an s8 source, oneDNN 2.6.3 adds its internal +128 compensation
//    in float32 (measured: results off by one ulp of float once |acc| > 2^24). Its bias, output
//    scales and destination zero point are float32 operations in another order than the spec's
//    (the bias is added as a float after the int->float conversion, zp_y is added before the
//    rounding: rne(v + zp) != rne(v) + zp when v + zp rounds), so they cannot be used either.
//  * Which oneDNN implementations deliver exact int32: the brgemm-based ones (brgconv, brdgmm_dw,
//    matmul brg) store the int32 accumulators unconverted when nothing is to be applied to them;
//    the older jit kernels (jit_int8, jit_uni_int8) always pass the accumulators through float32,
//    exact only while |sum(x_u8 * w)| <= 2^24. The products must be VNNI (vpdpbusd, AMX): without
//    VNNI oneDNN multiplies u8 x s8 with vpmaddubsw, which saturates pairs at int16.
//    exact_int8_impl() encodes this, with the worst case computed from the constant weights.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <vector>

#include "graph/ir.h"
#include "kernels/x86/int8_requant.h"

namespace orknn::onednn {

// Largest integer magnitude below which every int32 converts to float32 exactly.
constexpr int64_t kFloatExactInt = int64_t{1} << 24;

// Quantization parameters of a quantized Conv/Gemm/MatMul node with constant int8 weights.
struct Int8Quant {
  float s_x = 1.f, s_y = 1.f;
  int32_t zp_x = 0, zp_y = 0;
  std::vector<float> mult;  // M[c], one per output channel (s_x * s_w[c] with a value activation)
  int32_t lo = -128, hi = 127;  // fused Relu/Clip bounds in the int8 domain
  FusedActivation act;          // a fused value activation (Conv only, docs/numerics.md), or none
};

// Reads and checks the quantization of node n (docs/numerics.md, "Representation in the IR"):
// input 0 an INT8 per-tensor activation, input 1 constant INT8 symmetric weights with one scale or
// one per output channel along `weight_axis`, output 0 an INT8 per-tensor activation, and a fused
// activation that is absent, Relu or Clip, or on a Conv LeakyRelu, HardSwish or HardSigmoid. False
// when the node is not such a node.
bool read_int8_quant(const Graph& g, const Node& n, int64_t out_channels, int weight_axis, Int8Quant* q);

// True when input `i` is absent, or a constant INT32 vector of `len` values (the quantized bias).
bool int8_bias_ok(const Graph& g, const Node& n, size_t i, int64_t len);

// Per output channel c of int8 weights w: sum(w[c]) (for the zero-point compensation), and the
// largest |sum(x_u8 * w[c])| any u8 input can produce (the worst case for exact_int8_impl).
// Element k of channel c is w[c * ch_stride + k * k_stride].
struct WeightSums {
  std::vector<int64_t> sum;
  int64_t worst_u8_acc = 0;
};
WeightSums int8_weight_sums(const int8_t* w, int64_t channels, int64_t k, int64_t ch_stride, int64_t k_stride);

// comp[c] = bias[c] - (zp_x + 128) * wsum[c], wrapped to int32 (bias may be null = 0).
std::vector<int32_t> int8_compensation(const std::vector<int64_t>& wsum, const int32_t* bias, int32_t zp_x);

// True when the primitive's implementation computes exact int32 accumulators for u8 x s8 inputs
// whose worst-case |accumulator| is `worst_acc` (see the file comment).
bool exact_int8_impl(const dnnl::primitive_desc_base& pd, int64_t worst_acc);

// Moves `pd` to the first implementation (in oneDNN's order of preference) that exact_int8_impl
// accepts; false when there is none.
template <typename Pd> bool select_exact_int8_impl(Pd& pd, int64_t worst_acc) {
  for (;;) {
    if (exact_int8_impl(pd, worst_acc)) return true;
    if (!pd.next_impl()) return false;
  }
}

// The requantization parameters for x86::requant_* (pointers into q and comp, which must outlive it).
x86::RequantParams int8_requant_params(const Int8Quant& q, const std::vector<int32_t>& comp);

}  // namespace orknn::onednn
