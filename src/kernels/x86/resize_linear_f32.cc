// Float32 Resize with mode "linear" resizing the last two axes (bilinear), "x86_resize_linear_f32":
// the segmentation heads' upsampling (lraspp and deeplabv3 spent 70-83 % of their time in the
// reference kernel's per-element tap loop). Every coordinate transformation but
// tf_crop_and_resize, any scales (up or down, no antialias), rank >= 2 with the leading axes not
// resized; AVX-512F, or AVX2 on CPUs without it.
//
// Bit-identical to the reference (kernels/ref/resize.cc): the taps (index, weight) of H and W come
// from the same functions (kernels/ref/resize_taps.h), and each output is the reference's sum in
// its order: with taps (h0, a0) [, (h1, a1)] of the row and (w0, b0) [, (w1, b1)] of the column,
//   y = (a0*b0)*x[h0][w0] + (a0*b1)*x[h0][w1] + (a1*b0)*x[h1][w0] + (a1*b1)*x[h1][w1]
// left to right, every product and sum rounded to float (no FMA), the first term starting the sum,
// and a term of an absent tap (zero weight) left out rather than added as 0 (which would change
// -0 and propagate a neighbour's inf or NaN). The weight products a*b equal the reference's
// 1*...*1*a*b: the leading axes have one tap of weight 1.
//
// NCHW: per thread, the two input rows an output row reads are first gathered along W into
// x[h][w0[ow]] and x[h][w1[ow]] (two permutes of a 32-float window per 16 outputs where the
// window holds them, i.e. every upscale and downscales to 1/2; a gather instruction otherwise),
// and kept while the following output rows read them (an upscale by k reuses each k times); each
// output row is then 16 (8 with AVX2) columns per vector. nChw16c (the runtime's blocked layout,
// C a multiple of 16; AVX-512 only): each output pixel is one vector of 16 channels with its four
// weight products broadcast, no gathers. Threads take contiguous ranges of output rows.
// fp16 mode: rounded in registers. OPENRKNN_DISABLE_KERNELS=x86_resize_linear_avx512 runs the AVX2
// loops on an AVX-512 CPU (tests of both paths, A/B measurements).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its intrinsics
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/ref/resize_taps.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"

namespace orknn {
namespace {

bool use_avx512() { return x86::cpu_avx512f() && !kernel_disabled("x86_resize_linear_avx512"); }

// One or two taps per output coordinate of an axis; an absent second tap repeats the first index
// with weight 0 and `two` 0 (-1: present, a lane mask).
struct AxisTaps2 {
  std::vector<int32_t> i0, i1;
  std::vector<float> w0, w1;
  std::vector<int32_t> two;
};

// The taps of each output coordinate, as the reference builds them: resize_linear_taps gives the
// tap at floor(x), whose weight 1 - r never rounds to 0, and the next one unless r does.
AxisTaps2 linear_axis_taps(const std::string& ctm, int64_t in, int64_t out, float scale) {
  ResizeAxisMap map;
  map.ctm = ctm;
  map.in = in;
  map.out = out;
  map.scale = scale;
  AxisTaps2 t;
  std::vector<ResizeTap> taps;
  for (int64_t o = 0; o < out; ++o) {
    taps.clear();
    resize_linear_taps(resize_source_coordinate(map, o), in, &taps);
    const bool two = taps.size() == 2;
    t.i0.push_back(static_cast<int32_t>(taps[0].index));
    t.w0.push_back(taps[0].weight);
    t.i1.push_back(static_cast<int32_t>(taps.back().index));
    t.w1.push_back(two ? taps.back().weight : 0.f);
    t.two.push_back(two ? -1 : 0);
  }
  return t;
}

// A node this kernel takes: its planes (the leading axes, each output coordinate one tap of
// weight 1 at the same index) and the taps of H (rows) and W (columns).
struct LinearPlan {
  bool ok = false;
  int64_t planes = 1, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  AxisTaps2 h, w;
};

LinearPlan plan_linear(const Graph& g, const Node& n) {
  LinearPlan p;
  if (n.inputs.empty() || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) return p;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  const size_t rank = x.shape.size();
  if (rank < 2 || y.shape.size() != rank) return p;
  const Attrs& at = n.attrs;
  if (at.get_string("mode", "nearest") != "linear") return p;
  const std::string ctm = at.get_string("coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "half_pixel_symmetric" && ctm != "pytorch_half_pixel" &&
      ctm != "align_corners" && ctm != "asymmetric" && ctm != "tf_half_pixel_for_nn")
    return p;
  const std::vector<float> scales = at.get_floats("scales");
  if (scales.size() != rank) return p;
  for (size_t d = 0; d < rank; ++d)
    if (x.shape[d] <= 0 || y.shape[d] <= 0 || x.shape[d] > INT32_MAX || y.shape[d] > INT32_MAX) return p;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (x.shape[d] != y.shape[d]) return p;
    const AxisTaps2 t = linear_axis_taps(ctm, x.shape[d], y.shape[d], scales[d]);
    for (size_t o = 0; o < t.i0.size(); ++o)
      if (t.two[o] || t.i0[o] != static_cast<int32_t>(o) || t.w0[o] != 1.f) return p;
    p.planes *= x.shape[d];
  }
  p.in_h = x.shape[rank - 2];
  p.in_w = x.shape[rank - 1];
  p.out_h = y.shape[rank - 2];
  p.out_w = y.shape[rank - 1];
  p.h = linear_axis_taps(ctm, p.in_h, p.out_h, scales[rank - 2]);
  p.w = linear_axis_taps(ctm, p.in_w, p.out_w, scales[rank - 1]);
  p.ok = true;
  return p;
}

bool supports_linear_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx2() || is_quantized_node(g, n)) return false;
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  if (!is_f32(&g.tensor(n.inputs[0])) || !is_f32(&g.tensor(n.outputs[0]))) return false;
  return plan_linear(g, n).ok;
}

// ------------------------------------------------------------------------- row pieces

// The columns' taps padded to a multiple of 16 (index 0, weight 0, one tap), so that whole
// vectors can be read; and, per block of 16 columns, the first input column of a 32-float window
// holding all the block's taps (-1: none does, gather instead) and the taps' offsets in it.
struct ColumnTables {
  int64_t padded = 0;
  AxisTaps2 w;
  std::vector<int32_t> window, rel0, rel1;
};

ColumnTables column_tables(const LinearPlan& p) {
  ColumnTables t;
  t.padded = (p.out_w + 15) / 16 * 16;
  t.w = p.w;
  const size_t n = static_cast<size_t>(t.padded);
  t.w.i0.resize(n, 0);
  t.w.i1.resize(n, 0);
  t.w.w0.resize(n, 0.f);
  t.w.w1.resize(n, 0.f);
  t.w.two.resize(n, 0);
  t.rel0.resize(n, 0);
  t.rel1.resize(n, 0);
  for (size_t b = 0; b < n; b += 16) {
    const int64_t end = std::min<int64_t>(static_cast<int64_t>(b) + 16, p.out_w);
    int32_t lo = INT32_MAX, hi = 0;
    for (int64_t c = static_cast<int64_t>(b); c < end; ++c) {
      lo = std::min({lo, t.w.i0[static_cast<size_t>(c)], t.w.i1[static_cast<size_t>(c)]});
      hi = std::max({hi, t.w.i0[static_cast<size_t>(c)], t.w.i1[static_cast<size_t>(c)]});
    }
    const bool fits = hi - lo < 32;
    t.window.push_back(fits ? lo : -1);
    for (size_t c = b; c < b + 16 && fits; ++c) {
      t.rel0[c] = static_cast<int32_t>(c) < end ? t.w.i0[c] - lo : 0;
      t.rel1[c] = static_cast<int32_t>(c) < end ? t.w.i1[c] - lo : 0;
    }
  }
  return t;
}

// g0[c] = x[i0[c]], g1[c] = x[i1[c]] for the padded columns of one input row x of `in_w` floats.
__attribute__((target("avx512f"))) void gather_row_avx512(const float* x, int64_t in_w, const ColumnTables& t,
                                                          float* g0, float* g1) {
  for (int64_t c = 0; c < t.padded; c += 16) {
    const int32_t base = t.window[static_cast<size_t>(c / 16)];
    if (base >= 0) {
      // The window's floats that lie in the row: the first `left`.
      const int64_t left = in_w - base;
      auto mask = [](int64_t n) {
        return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
      };
      const __m512 lo = _mm512_maskz_loadu_ps(mask(left), x + base);
      const __m512 hi = _mm512_maskz_loadu_ps(mask(left - 16), x + base + 16);
      _mm512_storeu_ps(g0 + c, _mm512_permutex2var_ps(lo, _mm512_loadu_si512(t.rel0.data() + c), hi));
      _mm512_storeu_ps(g1 + c, _mm512_permutex2var_ps(lo, _mm512_loadu_si512(t.rel1.data() + c), hi));
    } else {
      _mm512_storeu_ps(g0 + c, _mm512_i32gather_ps(_mm512_loadu_si512(t.w.i0.data() + c), x, 4));
      _mm512_storeu_ps(g1 + c, _mm512_i32gather_ps(_mm512_loadu_si512(t.w.i1.data() + c), x, 4));
    }
  }
}

__attribute__((target("avx2"))) void gather_row_avx2(const float* x, const ColumnTables& t, float* g0, float* g1) {
  for (int64_t c = 0; c < t.padded; c += 8) {
    const __m256i i0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.w.i0.data() + c));
    const __m256i i1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.w.i1.data() + c));
    _mm256_storeu_ps(g0 + c, _mm256_i32gather_ps(x, i0, 4));
    _mm256_storeu_ps(g1 + c, _mm256_i32gather_ps(x, i1, 4));
  }
}

// One output row from the gathered input rows (r0: row h0's g0, g1; r1: row h1's, or null when
// the row has one tap) and the row's weights a0, a1: the sum of the file comment per column.
struct RowArgs {
  const float *r0g0, *r0g1, *r1g0, *r1g1;  // r1*: null for a one-tap row
  float a0, a1;
};

__attribute__((target("avx512f"))) void blend_row_avx512(const RowArgs& r, const ColumnTables& t, int64_t out_w,
                                                         bool round_fp16, float* y) {
  const __m512 a0 = _mm512_set1_ps(r.a0), a1 = _mm512_set1_ps(r.a1);
  for (int64_t c = 0; c < out_w; c += 16) {
    const __m512 b0 = _mm512_loadu_ps(t.w.w0.data() + c), b1 = _mm512_loadu_ps(t.w.w1.data() + c);
    const __mmask16 two = _mm512_test_epi32_mask(_mm512_loadu_si512(t.w.two.data() + c), _mm512_set1_epi32(-1));
    __m512 acc = _mm512_mul_ps(_mm512_mul_ps(a0, b0), _mm512_loadu_ps(r.r0g0 + c));
    acc = _mm512_mask_add_ps(acc, two, acc, _mm512_mul_ps(_mm512_mul_ps(a0, b1), _mm512_loadu_ps(r.r0g1 + c)));
    if (r.r1g0) {
      acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_mul_ps(a1, b0), _mm512_loadu_ps(r.r1g0 + c)));
      acc = _mm512_mask_add_ps(acc, two, acc, _mm512_mul_ps(_mm512_mul_ps(a1, b1), _mm512_loadu_ps(r.r1g1 + c)));
    }
    if (round_fp16) acc = round_to_fp16_lanes(acc);
    // Full vectors unmasked (masked stores missing the cache are slower), the tail masked.
    if (out_w - c >= 16) _mm512_storeu_ps(y + c, acc);
    else _mm512_mask_storeu_ps(y + c, static_cast<__mmask16>((1u << (out_w - c)) - 1), acc);
  }
}

__attribute__((target("avx2"))) void blend_row_avx2(const RowArgs& r, const ColumnTables& t, int64_t out_w,
                                                    bool round_fp16, float* y) {
  const __m256 a0 = _mm256_set1_ps(r.a0), a1 = _mm256_set1_ps(r.a1);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t c = 0; c < out_w; c += 8) {
    const __m256 b0 = _mm256_loadu_ps(t.w.w0.data() + c), b1 = _mm256_loadu_ps(t.w.w1.data() + c);
    const __m256 two = _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.w.two.data() + c)));
    __m256 acc = _mm256_mul_ps(_mm256_mul_ps(a0, b0), _mm256_loadu_ps(r.r0g0 + c));
    acc = _mm256_blendv_ps(acc, _mm256_add_ps(acc, _mm256_mul_ps(_mm256_mul_ps(a0, b1), _mm256_loadu_ps(r.r0g1 + c))),
                           two);
    if (r.r1g0) {
      acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_mul_ps(a1, b0), _mm256_loadu_ps(r.r1g0 + c)));
      acc = _mm256_blendv_ps(acc, _mm256_add_ps(acc, _mm256_mul_ps(_mm256_mul_ps(a1, b1), _mm256_loadu_ps(r.r1g1 + c))),
                             two);
    }
    if (round_fp16) acc = _mm256_cvtph_ps(_mm256_cvtps_ph(acc, _MM_FROUND_TO_NEAREST_INT));
    if (out_w - c >= 8) _mm256_storeu_ps(y + c, acc);
    else _mm256_maskstore_ps(y + c, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(out_w - c)), lane), acc);
  }
}

// nChw16c: one output row of a 16-channel block; x0, x1: input rows h0, h1 (x1 null: one tap).
__attribute__((target("avx512f"))) void blocked_row_avx512(const float* x0, const float* x1, float a0, float a1,
                                                           const AxisTaps2& w, int64_t out_w, bool round_fp16,
                                                           float* y) {
  for (int64_t c = 0; c < out_w; ++c) {
    const size_t k = static_cast<size_t>(c);
    const int64_t i0 = 16 * int64_t{w.i0[k]}, i1 = 16 * int64_t{w.i1[k]};
    const float b0 = w.w0[k], b1 = w.w1[k];
    __m512 acc = _mm512_mul_ps(_mm512_set1_ps(a0 * b0), _mm512_loadu_ps(x0 + i0));
    if (w.two[k]) acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(a0 * b1), _mm512_loadu_ps(x0 + i1)));
    if (x1) {
      acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(a1 * b0), _mm512_loadu_ps(x1 + i0)));
      if (w.two[k]) acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(a1 * b1), _mm512_loadu_ps(x1 + i1)));
    }
    if (round_fp16) acc = round_to_fp16_lanes(acc);
    _mm512_storeu_ps(y + 16 * c, acc);
  }
}

class ResizeLinearF32 : public Kernel {
 public:
  bool rounds_fp16_outputs() const override { return true; }
  // nChw16c in and out, or NCHW in and out (the blocked path is AVX-512's).
  BlockedIo blocked_io(const Graph&, const Node&) const override {
    return use_avx512() ? BlockedIo::kUniform : BlockedIo::kNone;
  }

  Status prepare(const KernelContext& ctx) override {
    p_ = plan_linear(*ctx.graph, *ctx.node);
    if (!p_.ok)
      return ORKNN_ERR(kFail, "Resize node '%s': x86 linear kernel given a node it does not support",
                       ctx.node->name.c_str());
    avx512_ = use_avx512();
    blocked_ = ctx.input_blocked(0);
    cols_ = column_tables(p_);
    if (!blocked_) {
      // Per thread: two cached input rows, each gathered twice (taps w0 and w1).
      slot_floats_ = 4 * cols_.padded;
      const size_t bytes = static_cast<size_t>(thread_slots(ctx.num_threads)) * slot_floats_ * sizeof(float);
      request_scratch(ctx, bytes, [this](void* s) { scratch_ = static_cast<float*>(s); }, &own_scratch_);
    }
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const bool round = ctx.round_fp16;
    // Rows of output: per plane (NCHW) or per 16-channel block (nChw16c, 16 floats per pixel).
    const int64_t lanes = blocked_ ? 16 : 1;
    const int64_t rows = p_.planes / lanes * p_.out_h;
    const int nt = threads_for(rows * p_.out_w * lanes, kMinPassElementsPerThread, ctx.num_threads);
    parallel_ranges(rows, nt, [&](int64_t r0, int64_t r1, int slot) {
      if (blocked_) blocked_rows(x, y, r0, r1, round);
      else plane_rows(x, y, r0, r1, scratch_ + static_cast<size_t>(slot) * slot_floats_, round);
    });
  }

 private:
  void blocked_rows(const float* x, float* y, int64_t r0, int64_t r1, bool round) const {
    const int64_t in_block = p_.in_h * p_.in_w * 16, out_row = p_.out_w * 16;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t block = r / p_.out_h;
      const size_t oh = static_cast<size_t>(r % p_.out_h);
      const float* xb = x + block * in_block;
      const float* x1 = p_.h.two[oh] ? xb + p_.h.i1[oh] * p_.in_w * 16 : nullptr;
      blocked_row_avx512(xb + p_.h.i0[oh] * p_.in_w * 16, x1, p_.h.w0[oh], p_.h.w1[oh], p_.w, p_.out_w, round,
                         y + r * out_row);
    }
  }

  // Output rows [r0, r1) of the NCHW planes; cache: this thread's two gathered input rows.
  void plane_rows(const float* x, float* y, int64_t r0, int64_t r1, float* cache, bool round) const {
    const int64_t pw = cols_.padded;
    int64_t held[2] = {-1, -1};  // plane * in_h + h of the input row each cache slot holds
    // The cache slot holding input row `key`, gathered if needed into the slot other than `keep`.
    auto row = [&](int64_t key, int keep) -> int {
      for (int s = 0; s < 2; ++s)
        if (held[s] == key) return s;
      const int s = keep == 0 ? 1 : 0;
      const float* xr = x + key * p_.in_w;
      float* g = cache + 2 * s * pw;
      if (avx512_) gather_row_avx512(xr, p_.in_w, cols_, g, g + pw);
      else gather_row_avx2(xr, cols_, g, g + pw);
      held[s] = key;
      return s;
    };
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t plane = r / p_.out_h;
      const size_t oh = static_cast<size_t>(r % p_.out_h);
      const int64_t key0 = plane * p_.in_h + p_.h.i0[oh];
      const bool two = p_.h.two[oh] != 0;
      const int64_t key1 = two ? plane * p_.in_h + p_.h.i1[oh] : -1;
      // Row h1 is needed along with h0: when it is cached, h0 must not replace it.
      const int s0 = row(key0, held[0] == key1 && two ? 0 : (held[1] == key1 && two ? 1 : -1));
      const int s1 = two ? row(key1, s0) : -1;
      RowArgs a{cache + 2 * s0 * pw, cache + (2 * s0 + 1) * pw, nullptr, nullptr, p_.h.w0[oh], p_.h.w1[oh]};
      if (two) {
        a.r1g0 = cache + 2 * s1 * pw;
        a.r1g1 = a.r1g0 + pw;
      }
      if (avx512_) blend_row_avx512(a, cols_, p_.out_w, round, y + r * p_.out_w);
      else blend_row_avx2(a, cols_, p_.out_w, round, y + r * p_.out_w);
    }
  }

  LinearPlan p_;
  ColumnTables cols_;
  bool avx512_ = false, blocked_ = false;
  int64_t slot_floats_ = 0;
  float* scratch_ = nullptr;
  std::vector<ScratchLine> own_scratch_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Resize, "x86_resize_linear_f32", kPriorityGeneral, supports_linear_f32, ResizeLinearF32);

}  // namespace orknn
