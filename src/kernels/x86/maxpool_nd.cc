// "x86_maxpool_nd_f32" and "x86_maxpool_nd_int8": MaxPool with 1-D and 3-D windows (3-D and 5-D
// NCHW tensors), float32 or INT8 whose output keeps the input's parameters, separable: each input
// row's maximum over the window's width, then over its height, then over its depth. The 4-D pools
// keep their kernels (oneDNN's nChw16c, x86_maxpool_int8); on these ranks oneDNN ran plain loops:
// LPRNet's channel-subsampling MaxPool3d over [1, 1, C, H, W] took 0.9 of its 4.3 ms in fp16 and
// 4.1 of 5.4 ms in INT8 (issue 28).
//
// INT8: the largest code, -128 for a window without input, as the reference's same-parameter
// case: the maximum of integers, bit-exact in any order.
// Bit-exact to the reference (kernels/ref/pool.cc): the reference keeps the first tap, in
// row-major tap order (depth, height, width), of those not below every other, skipping NaN
// (`v > max`, starting at -FLT_MAX). max_ps(v, acc) = v > acc ? v : acc is that step; folded
// along the width first, then the height, then the depth, it keeps the same tap (a later row or
// slab replaces the earlier one only when strictly greater), including which zero of -0 and +0.
// Padding taps read -FLT_MAX, which never replaces anything, as the reference skips them.
// AVX2 (8 float or 32 int8 lanes), so AVX2-only CPUs run it too.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/ref/nchw.h"
#include "kernels/x86/cpu_features.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

bool maxpool_nd_node(const Graph& g, const Node& n, DType dtype) {
  if (!x86::cpu_avx2() || n.inputs.empty() || n.inputs[0] < 0) return false;
  if (n.outputs.size() != 1 && !(n.outputs.size() == 2 && n.outputs[1] < 0)) return false;  // no Indices
  const Tensor& x = g.tensor(n.inputs[0]);
  const size_t rank = x.shape.size();
  return (rank == 3 || rank == 5) && x.dtype == dtype && g.tensor(n.outputs[0]).dtype == dtype;
}

bool supports_maxpool_nd_f32(const Graph& g, const Node& n) {
  return !is_quantized_node(g, n) && maxpool_nd_node(g, n, DType::kF32);
}

bool supports_maxpool_nd_int8(const Graph& g, const Node& n) {
  if (!is_quantized_node(g, n) || !maxpool_nd_node(g, n, DType::kI8)) return false;
  const QuantParams& qx = g.tensor(n.inputs[0]).quant;
  return qx.scale.size() == 1 && same_quant(qx, g.tensor(n.outputs[0]).quant);
}

// The vector operations per element type: float (8 lanes, max_ps(v, acc) = v > acc ? v : acc) and
// int8 (32 lanes).
template <typename T>
struct Lanes;

template <>
struct Lanes<float> {
  using V = __m256;
  static constexpr int64_t kN = 8;
  static constexpr float kLowest = std::numeric_limits<float>::lowest();
  static float max1(float v, float acc) { return v > acc ? v : acc; }
  __attribute__((target("avx2"))) static V lowest() { return _mm256_set1_ps(kLowest); }
  __attribute__((target("avx2"))) static V load(const float* p) { return _mm256_loadu_ps(p); }
  __attribute__((target("avx2"))) static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  __attribute__((target("avx2"))) static V max(V v, V acc) { return _mm256_max_ps(v, acc); }
  // The even elements of p[0, 2 kN): [a0 a2 b0 b2 | a4 a6 b4 b6] reordered to a0 a2 a4 a6 b0 ...
  __attribute__((target("avx2"))) static V even(const float* p) {
    const __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  }
};

template <>
struct Lanes<int8_t> {
  using V = __m256i;
  static constexpr int64_t kN = 32;
  static constexpr int8_t kLowest = -128;
  static int8_t max1(int8_t v, int8_t acc) { return v > acc ? v : acc; }
  __attribute__((target("avx2"))) static V lowest() { return _mm256_set1_epi8(-128); }
  __attribute__((target("avx2"))) static V load(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
  __attribute__((target("avx2"))) static void store(int8_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<V*>(p), v); }
  __attribute__((target("avx2"))) static V max(V v, V acc) { return _mm256_max_epi8(v, acc); }
  // Each 16-byte lane's even bytes into its low 8, the two loads' halves interleaved by 8 bytes,
  // then the quarters reordered: a's evens, then b's.
  __attribute__((target("avx2"))) static V even(const int8_t* p) {
    const __m256i pick = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i ea = _mm256_shuffle_epi8(load(p), pick), eb = _mm256_shuffle_epi8(load(p + 32), pick);
    return _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(ea, eb), _MM_SHUFFLE(3, 1, 2, 0));
  }
};

template <typename T>
class MaxPoolNd : public Kernel {
  using L = Lanes<T>;
  static constexpr T kLowest = L::kLowest;
  static constexpr int64_t kN = L::kN;

 public:
 public:
  Status prepare(const KernelContext& ctx) override {
    g_ = read_spatial_geometry(ctx);
    const ChannelPlanes p = channel_planes(ctx.in_tensor(0).shape);
    planes_ = p.batch * p.channels;
    // The padded input row: [pad_begin, pad_begin + W) the row, the rest -FLT_MAX, long enough for
    // every tap and for the last vector's reads.
    row_len_ = std::max((g_.out[2] - 1) * g_.stride[2] + (g_.kernel[2] - 1) * g_.dilation[2] + 1, g_.pad_begin[2] + g_.in[2]);
    row_len_ += 2 * kN;
    slot_elems_ = (row_len_ + g_.in[1] * g_.out[2] + 63) / 64 * 64;
    const size_t bytes = static_cast<size_t>(thread_slots(ctx.num_threads)) * slot_elems_ * sizeof(T);
    request_scratch(ctx, bytes, [this](void* s) { scratch_ = static_cast<T*>(s); }, &own_scratch_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const T* x = ctx.in<T>(0);
    T* y = ctx.out<T>(0);
    const int64_t jobs = planes_ * g_.out[0];  // (plane, output depth)
    const int64_t out_slab = g_.out[1] * g_.out[2];
    const int nt = threads_for(jobs * out_slab, kMinPassElementsPerThread, ctx.num_threads);
    parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int slot) {
      T* rb = scratch_ + static_cast<size_t>(slot) * slot_elems_;
      std::fill_n(rb, row_len_, kLowest);
      T* hb = rb + row_len_;
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t plane = j / g_.out[0], od = j % g_.out[0];
        T* yo = y + j * out_slab;
        bool any = false;
        for (int64_t t = 0; t < g_.kernel[0]; ++t) {
          const int64_t id = g_.window_input(0, od, t);
          if (!g_.inside_input(0, id)) continue;
          slab(x + (plane * g_.in[0] + id) * g_.in[1] * g_.in[2], yo, rb, hb, any);
          any = true;
        }
        if (!any) std::fill_n(yo, out_slab, kLowest);
      }
    });
  }

 private:
  // Pools input slab xs (H x W) into y (OH x OW): y = the result, or max_ps(result, y) when
  // `fold` (a later depth tap).
  __attribute__((target("avx2"))) void slab(const T* xs, T* y, T* rb, T* hb, bool fold) const {
    const int64_t W = g_.in[2], OW = g_.out[2], sw = g_.stride[2], dw = g_.dilation[2], kw = g_.kernel[2];
    const int64_t pb = g_.pad_begin[2];
    // Width: every input row's maximum at each output column, into hb[ih * OW + ow].
    for (int64_t ih = 0; ih < g_.in[1]; ++ih) {
      std::memcpy(rb + pb, xs + ih * W, static_cast<size_t>(W) * sizeof(T));
      T* h = hb + ih * OW;
      int64_t ow = 0;
      // Whole vectors, the last one overlapping the one before (its outputs are written twice,
      // the same values) rather than a scalar tail.
      if (sw == 1 && OW >= kN) {
        for (int64_t o = 0;; o = std::min(o + kN, OW - kN)) {
          auto acc = L::lowest();
          for (int64_t t = 0; t < kw; ++t) acc = L::max(L::load(rb + o + t * dw), acc);
          L::store(h + o, acc);
          if (o == OW - kN) break;
        }
        ow = OW;
      } else if (sw == 2 && OW >= kN) {
        for (int64_t o = 0;; o = std::min(o + kN, OW - kN)) {
          auto acc = L::lowest();
          for (int64_t t = 0; t < kw; ++t) acc = L::max(L::even(rb + 2 * o + t * dw), acc);
          L::store(h + o, acc);
          if (o == OW - kN) break;
        }
        ow = OW;
      }
      for (; ow < OW; ++ow) {
        T acc = kLowest;
        for (int64_t t = 0; t < kw; ++t) acc = L::max1(rb[ow * sw + t * dw], acc);
        h[ow] = acc;
      }
    }
    // Height: the rows' maxima in tap order.
    for (int64_t oh = 0; oh < g_.out[1]; ++oh) {
      int64_t rows[64], nr = 0;
      T* yr = y + oh * OW;
      for (int64_t t = 0; t < g_.kernel[1]; ++t) {
        const int64_t ih = g_.window_input(1, oh, t);
        if (!g_.inside_input(1, ih)) continue;
        if (nr == 64) {  // a tall window: fold what is gathered so far into the row
          fold_rows(hb, rows, nr, yr, OW, fold);
          fold = true;
          nr = 0;
        }
        rows[nr++] = ih;
      }
      fold_rows(hb, rows, nr, yr, OW, fold);
    }
  }

  // yr = max over hb rows `rows` (in order), folded into yr's values when `fold`.
  __attribute__((target("avx2"))) static void fold_rows(const T* hb, const int64_t* rows, int64_t nr, T* yr,
                                                        int64_t OW, bool fold) {
    int64_t ow = 0;
    for (; ow + kN <= OW; ow += kN) {
      auto acc = fold ? L::load(yr + ow) : L::lowest();
      for (int64_t r = 0; r < nr; ++r) acc = L::max(L::load(hb + rows[r] * OW + ow), acc);
      L::store(yr + ow, acc);
    }
    if (ow < OW && OW >= kN) {  // the tail as one vector overlapping the last: folding a row into
      ow = OW - kN;              // an output that already holds it changes nothing (max is idempotent)
      auto acc = fold ? L::load(yr + ow) : L::lowest();
      for (int64_t r = 0; r < nr; ++r) acc = L::max(L::load(hb + rows[r] * OW + ow), acc);
      L::store(yr + ow, acc);
      return;
    }
    for (; ow < OW; ++ow) {
      T acc = fold ? yr[ow] : kLowest;
      for (int64_t r = 0; r < nr; ++r) acc = L::max1(hb[rows[r] * OW + ow], acc);
      yr[ow] = acc;
    }
  }

  SpatialGeometry g_;
  int64_t planes_ = 0, row_len_ = 0, slot_elems_ = 0;
  T* scratch_ = nullptr;
  std::vector<ScratchLine> own_scratch_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(MaxPool, "x86_maxpool_nd_f32", kPrioritySpecialized, supports_maxpool_nd_f32, MaxPoolNd<float>);
ORKNN_REGISTER_KERNEL(MaxPool, "x86_maxpool_nd_int8", kPrioritySpecialized, supports_maxpool_nd_int8, MaxPoolNd<int8_t>);

}  // namespace orknn
