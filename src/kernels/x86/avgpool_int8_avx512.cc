// AVX-512 kernel of quantized (int8) AveragePool, "x86_avgpool_int8", on NCHW or on the runtime's
// channels-last INT8 activations (kernel.h, blocked): inception_v3's 3x3 stride-1 pools between
// convolutions, which ran on the scalar reference kernel (issue 28: AveragePool and Pad were 66 % of
// INT8 inception_v3).
//
// Bit-exact with the reference kernel (kernels/ref/pool.cc, docs/numerics.md):
//   acc = sum(x - zp_x) over the taps inside the input, count per count_include_pad,
//   Mc = (s_x / s_y) / float(count), y = sat8(rne(float(acc) * Mc) + zp_y); count 0 gives zp_y.
// acc is an exact integer in any order: here int16 lanes (|x - zp_x| <= 255 and at most 128 taps,
// so |acc| <= 32640). The window is a box, so count = count_h(oh) * count_w(ow); Mc is computed at
// prepare per output position with the reference's float operations (0 for count 0: acc is 0 then,
// and 0 * 0 + zp_y is the reference's result). The requantization is x86::requant16_float_bounds
// (equal to x86::requant_one) or, in the scalar loop of other strides, rne_add_zp_sat8 itself.
//
// NCHW: per output row, the window's input rows are summed into an int16 row whose padding
// columns hold 0; then each output adds its kw columns (shifted loads for stride 1, a scalar loop
// otherwise). NHWC: per output pixel, the window's pixels are summed, 64 channels per step.
//
// Handles: 4-D input, 2-D window of at most 128 taps, no dilation, any strides, pads >= 0,
// count_include_pad either way, ceil_mode (through infer's output size), per-tensor parameters.
// Needs AVX-512 F/BW/VL; on other CPUs the node stays on the reference kernel.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its AVX-512 headers
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/int8_requant.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

#define ORKNN_AVX512BW __attribute__((target("avx512f,avx512bw,avx512vl")))

constexpr int64_t kMaxTaps = 128;  // int16 sums of x - zp_x stay exact
constexpr int64_t kLanes16 = 32;   // int16 lanes per vector

// Per spatial axis a (0: height, 1: width): input in[a], output out[a], window k[a], stride s[a],
// pads begin[a] and end[a].
struct AvgPoolGeometry {
  int64_t batch = 0, channels = 0;
  int64_t in[2] = {}, out[2] = {}, k[2] = {}, s[2] = {}, begin[2] = {}, end[2] = {};
  bool include_pad = false;
};

bool avgpool_geometry(const Graph& g, const Node& n, AvgPoolGeometry* geo) {
  if (n.op != OpId::AveragePool || n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 ||
      n.outputs[0] < 0)
    return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x.shape.size() != 4 || y.shape.size() != 4 || !is_q8_per_tensor(x) || !is_q8_per_tensor(y)) return false;
  const std::vector<int64_t> ks = n.attrs.get_ints("kernel_shape", {});
  const std::vector<int64_t> st = n.attrs.get_ints("strides", {1, 1});
  const std::vector<int64_t> dil = n.attrs.get_ints("dilations", {1, 1});
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", {0, 0, 0, 0});
  if (ks.size() != 2 || st.size() != 2 || dil.size() != 2 || pads.size() != 4) return false;
  if (dil[0] != 1 || dil[1] != 1 || ks[0] < 1 || ks[1] < 1 || ks[0] * ks[1] > kMaxTaps) return false;
  if (st[0] < 1 || st[1] < 1) return false;
  for (int64_t v : pads)
    if (v < 0 || v > 1024) return false;
  if (x.shape[0] != y.shape[0] || x.shape[1] != y.shape[1] || y.numel() <= 0) return false;
  geo->batch = x.shape[0];
  geo->channels = x.shape[1];
  for (size_t a = 0; a < 2; ++a) {
    geo->in[a] = x.shape[2 + a];
    geo->out[a] = y.shape[2 + a];
    geo->k[a] = ks[a];
    geo->s[a] = st[a];
    geo->begin[a] = pads[a];
    geo->end[a] = pads[2 + a];
  }
  geo->include_pad = n.attrs.get_int("count_include_pad", 0) != 0;
  return true;
}

bool supports_avgpool_int8(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512bwvl() || !is_quantized_node(g, n)) return false;
  AvgPoolGeometry geo;
  return avgpool_geometry(g, n, &geo);
}

// Taps of the window of output o on axis a that count: inside [0, in), or with include_pad inside
// the padded axis [-begin, in + end) (taps beyond it, which ceil_mode makes, never).
int64_t axis_count(const AvgPoolGeometry& g, int a, int64_t o) {
  const int64_t first = o * g.s[a] - g.begin[a];
  const int64_t lo = g.include_pad ? -g.begin[a] : 0, hi = g.include_pad ? g.in[a] + g.end[a] : g.in[a];
  return std::max<int64_t>(0, std::min(first + g.k[a], hi) - std::max(first, lo));
}

inline __mmask32 mask32(int64_t n) { return n >= 32 ? ~__mmask32{0} : n <= 0 ? 0 : (__mmask32{1} << n) - 1; }
inline __mmask16 mask16(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u); }

struct Requant {
  __m512 lo, hi;  // output bounds minus zp_y
  __m512i zp;
};

ORKNN_AVX512BW Requant make_requant(int32_t zp_y) {
  return {_mm512_set1_ps(static_cast<float>(-128 - zp_y)), _mm512_set1_ps(static_cast<float>(127 - zp_y)),
          _mm512_set1_epi32(zp_y)};
}

// 16 int32 sums with their multipliers -> 16 int8 outputs.
ORKNN_AVX512BW inline __m128i requant16(__m512i acc, __m512 mc, const Requant& q) {
  return _mm512_cvtepi32_epi8(x86::requant16_float_bounds(acc, _mm512_setzero_si512(), mc, q.lo, q.hi, q.zp));
}

class AveragePoolInt8 : public Kernel {
 public:
  // NCHW in and out, or NHWC in and out.
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kUniform; }

  Status prepare(const KernelContext& ctx) override {
    if (!avgpool_geometry(*ctx.graph, *ctx.node, &g_))
      return ORKNN_ERR(kFail, "AveragePool '%s': not a pooling x86_avgpool_int8 handles", ctx.node->name.c_str());
    ORKNN_RETURN_IF_ERROR(check_q8_input(*ctx.graph, *ctx.node, 0));
    ORKNN_RETURN_IF_ERROR(check_q8_output(*ctx.graph, *ctx.node, 0));
    const QuantScalar qx = per_tensor(ctx.in_tensor(0)), qy = per_tensor(ctx.out_tensor(0));
    zp_x_ = qx.zp;
    zp_y_ = qy.zp;
    const float ratio = qx.scale / qy.scale;
    const int64_t oh = g_.out[0], ow = g_.out[1];
    mc_.assign(static_cast<size_t>(oh * ow), 0.f);
    for (int64_t i = 0; i < oh; ++i) {
      const int64_t ch = axis_count(g_, 0, i);
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t count = ch * axis_count(g_, 1, j);
        if (count > 0) mc_[static_cast<size_t>(i * ow + j)] = ratio / static_cast<float>(count);
      }
    }
    // NCHW row buffer: pad_l zero columns, the image row, zeros up to what the last window and
    // the last vector's shifted loads read.
    row_len_ = std::max(g_.begin[1] + g_.in[1], (ow - 1) * g_.s[1] + g_.k[1]) + g_.k[1] + 2 * kLanes16;
    slots_ = thread_slots(ctx.num_threads);
    rows_.assign(static_cast<size_t>(slots_ * row_len_), 0);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    const int64_t work = g_.batch * g_.channels * g_.out[0] * g_.out[1] * g_.k[0] * g_.k[1];
    const int nt = std::min(threads_for(work, int64_t{1} << 16, ctx.num_threads), slots_);
    if (ctx.input_blocked(0)) {
      parallel_ranges(g_.batch * g_.out[0], nt, [&](int64_t r0, int64_t r1, int) { nhwc_rows(x, y, r0, r1); });
      return;
    }
    const int64_t in_plane = g_.in[0] * g_.in[1], out_plane = g_.out[0] * g_.out[1];
    parallel_ranges(g_.batch * g_.channels, nt, [&](int64_t p0, int64_t p1, int slot) {
      int16_t* row = rows_.data() + static_cast<size_t>(slot) * static_cast<size_t>(row_len_);
      for (int64_t p = p0; p < p1; ++p) plane(x + p * in_plane, y + p * out_plane, row);
    });
  }

 private:
  // One NCHW plane; `row` is the thread's row buffer (zero outside the image's columns).
  ORKNN_AVX512BW void plane(const int8_t* x, int8_t* y, int16_t* row) const {
    const Requant q = make_requant(zp_y_);
    const __m512i zpx = _mm512_set1_epi16(static_cast<int16_t>(zp_x_));
    const int64_t h = g_.in[0], w = g_.in[1], ow = g_.out[1], kw = g_.k[1], sw = g_.s[1];
    int16_t* img = row + g_.begin[1];
    for (int64_t oh = 0; oh < g_.out[0]; ++oh) {
      const int64_t h0 = oh * g_.s[0] - g_.begin[0];
      const int64_t r0 = std::max<int64_t>(0, h0), r1 = std::min(h, h0 + g_.k[0]);
      for (int64_t i = 0; i < w; i += kLanes16) {  // the window's rows, as sums of x - zp_x
        const __mmask32 m = mask32(w - i);
        __m512i s = _mm512_setzero_si512();
        for (int64_t r = r0; r < r1; ++r)
          s = _mm512_add_epi16(s, _mm512_sub_epi16(_mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, x + r * w + i)), zpx));
        _mm512_mask_storeu_epi16(img + i, m, s);
      }
      int8_t* out = y + oh * ow;
      const float* mc = mc_.data() + oh * ow;
      if (sw == 1) {
        for (int64_t o = 0; o < ow; o += kLanes16) {
          __m512i s = _mm512_loadu_si512(row + o);
          for (int64_t t = 1; t < kw; ++t) s = _mm512_add_epi16(s, _mm512_loadu_si512(row + o + t));
          for (int half = 0; half < 2; ++half) {
            const int64_t left = ow - o - 16 * half;
            if (left <= 0) break;
            const __mmask16 m = mask16(left);
            const __m512i acc = _mm512_cvtepi16_epi32(half ? _mm512_extracti64x4_epi64(s, 1) : _mm512_castsi512_si256(s));
            _mm_mask_storeu_epi8(out + o + 16 * half, m, requant16(acc, _mm512_maskz_loadu_ps(m, mc + o + 16 * half), q));
          }
        }
      } else {
        for (int64_t o = 0; o < ow; ++o) {
          int32_t acc = 0;
          for (int64_t t = 0; t < kw; ++t) acc += row[o * sw + t];
          out[o] = rne_add_zp_sat8(static_cast<float>(acc) * mc[o], zp_y_);
        }
      }
    }
  }

  // Output rows [r0, r1) (over the batch) of the NHWC pooling.
  ORKNN_AVX512BW void nhwc_rows(const int8_t* x, int8_t* y, int64_t r0, int64_t r1) const {
    const Requant q = make_requant(zp_y_);
    const __m512i zpx = _mm512_set1_epi16(static_cast<int16_t>(zp_x_));
    const int64_t c = g_.channels, w = g_.in[1];
    // Output pixel p = r * out[1] + ow of the batch's rows; its window's rows [i0, i1) and columns
    // [j0, j1) inside the image.
    for (int64_t p = r0 * g_.out[1]; p < r1 * g_.out[1]; ++p) {
      const int64_t r = p / g_.out[1], ow = p % g_.out[1], b = r / g_.out[0], oh = r % g_.out[0];
      const int64_t h0 = oh * g_.s[0] - g_.begin[0], w0 = ow * g_.s[1] - g_.begin[1];
      const int64_t i0 = std::max<int64_t>(0, h0), i1 = std::min(g_.in[0], h0 + g_.k[0]);
      const int64_t j0 = std::max<int64_t>(0, w0), j1 = std::min(w, w0 + g_.k[1]);
      const int8_t* img = x + b * g_.in[0] * w * c;
      const __m512 mc = _mm512_set1_ps(mc_[static_cast<size_t>(oh * g_.out[1] + ow)]);
      int8_t* out = y + p * c;
      for (int64_t ch = 0; ch < c; ch += 2 * kLanes16) {
        const __mmask32 m0 = mask32(c - ch), m1 = mask32(c - ch - kLanes16);
        __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j) {
            const int8_t* px = img + (i * w + j) * c + ch;
            s0 = _mm512_add_epi16(s0, _mm512_sub_epi16(_mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m0, px)), zpx));
            if (m1)
              s1 = _mm512_add_epi16(
                  s1, _mm512_sub_epi16(_mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m1, px + kLanes16)), zpx));
          }
        const __m512i parts[4] = {_mm512_cvtepi16_epi32(_mm512_castsi512_si256(s0)),
                                  _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(s0, 1)),
                                  _mm512_cvtepi16_epi32(_mm512_castsi512_si256(s1)),
                                  _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(s1, 1))};
        for (int v = 0; v < 4; ++v) {
          const int64_t left = c - ch - 16 * v;
          if (left <= 0) break;
          _mm_mask_storeu_epi8(out + ch + 16 * v, mask16(left), requant16(parts[v], mc, q));
        }
      }
    }
  }

  AvgPoolGeometry g_;
  int32_t zp_x_ = 0, zp_y_ = 0;
  std::vector<float> mc_;  // [oh][ow]: Mc of each output position
  int64_t row_len_ = 0;
  int slots_ = 1;
  std::vector<int16_t> rows_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(AveragePool, "x86_avgpool_int8", kPriorityGeneral, supports_avgpool_int8, AveragePoolInt8);

}  // namespace orknn
