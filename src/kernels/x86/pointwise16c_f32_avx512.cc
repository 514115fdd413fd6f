// AVX-512 float 1x1 convolution for nChw16c activations of small images, "x86_pw16c_f32": the
// pointwise layers of the last stages of image networks (7x7 and 14x14 images: mobilenet_v2's
// 320 -> 1280 at 7x7, resnet50's 512 -> 2048), both channel counts multiples of 16 (blocked on
// both sides, runtime/layout_assignment.h). There each weight serves only a few dozen pixels, and
// the weights of a layer (1-4 MB in float32) come from L3 or memory in every run: oneDNN ran these
// layers at 60-66% of the FP32 FMA peak (perf_detail --gops, one thread), against 75-85% for the
// same products on larger images.
//
// The product Y[p][oc] = sum_c X[p][c] W[c][oc] per image, as the NHWC INT8 kernel
// (pointwise_int8_vnni.cc) does it: a register tile of kPixels pixels x kVectors x 16 output
// channels (24 accumulators); per input channel, kVectors weight vectors (packed [16-channel
// output vector][c][16]) and one broadcast input value per pixel feed 24 fused multiply-adds. In
// nChw16c the 16 channels of a block of one pixel are contiguous, and the tile's pixels are
// neighbours, so the broadcasts read kPixels x 64 bytes per 16 channels. The weights of one block
// of kVectors output vectors serve every pixel of a job (up to kJobPixels pixels of one image)
// before the next block's are read, and while a block runs its first tiles prefetch the next
// block into L2 (one 64-byte line per input channel, the next block's vector t in tile t).
//
// Numerics: each output sums its C products in channel order from +0 with fused multiply-adds,
// as x86_pw_f32 (within the float tolerance of docs/kernels.md), then + bias, + Conv's residual
// input when it has one (ops/conv.cc; in the output's layout, read where the output is written,
// so the output may share its bytes), the fused activation, and in fp16 mode the rounding, in
// registers (fused_act_avx512.h).
//
// Threads take jobs when there are at least two per thread, else ranges of the output vectors
// over every job (a 7x7 image is one job); see run().
//
// NCHW input or output too (BlockedIo::kEach), so that a network computes these layers the same
// way whichever layout its neighbours leave them (the blocked run must equal the all-NCHW one bit
// for bit: tests/models/blocked_layout_test.cc): an NCHW input is read with the same broadcasts
// (pixel r of channel c at x[c * P + p + r]), an NCHW output is written with one 16-lane scatter
// per accumulator (16 channel rows, P floats apart). Networks keep these tensors blocked.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positive in its AVX-512 headers
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"
#include "kernels/x86/pointwise_geometry.h"

namespace orknn {
namespace {

constexpr int kPixels = 6;            // pixels per register tile
constexpr int kVectors = 4;           // 16-channel output vectors per register tile
constexpr int64_t kJobPixels = 64;    // at most, per job (the jobs of an image are of equal size)
constexpr int64_t kMinJobPixels = 32; // when an image is cut into more jobs for the threads
constexpr int64_t kMaxPixels = 196;   // images up to 14x14; see supports_pw16c_f32
// Below this many multiply-adds per thread, waking another thread costs more than it saves.
constexpr int64_t kMinMacsPerThread = 256 * 1024;

#define ORKNN_AVX512 __attribute__((target("avx512f")))

bool supports_pw16c_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f()) return false;
  PwGeometry geo;
  if (!float_pw_geometry(g, n, &geo, /*residual_ok=*/true)) return false;
  // One-pixel images are x86_pw_f32's (a matrix-vector product). Above 14x14 each weight serves
  // enough pixels for oneDNN's kernels to run near the peak.
  return geo.c % 16 == 0 && geo.oc % 16 == 0 && geo.pixels > 1 && geo.pixels <= kMaxPixels;
}

class Pointwise16cF32 : public Kernel {
 public:
  bool rounds_fp16_outputs() const override { return true; }
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kEach; }

  Status prepare(const KernelContext& ctx) override {
    if (!pw_geometry(*ctx.graph, *ctx.node, &geo_, /*residual_ok=*/true) || geo_.strided())
      return ORKNN_ERR(kFail, "Conv '%s': not an unstrided 1x1 convolution this kernel handles", ctx.node->name.c_str());
    in_blocked_ = ctx.input_blocked(0);
    out_blocked_ = ctx.output_blocked(0);
    if (ctx.has_input(3) && ctx.input_blocked(3) != out_blocked_)
      return ORKNN_ERR(kFail, "Conv '%s': the residual's layout differs from the output's (a runtime bug)",
                       ctx.node->name.c_str());
    act_ = read_act_vec(ctx.node->attrs);
    ocv_ = geo_.oc / 16;
    const float* w = ctx.in<float>(1);
    // Written in order (16 rows of w read side by side), which at rknn_init is several times
    // faster than scattering each row.
    weights_.resize(static_cast<size_t>(geo_.oc * geo_.c));
    float* packed = weights_.data();
    for (int64_t ov = 0; ov < ocv_; ++ov)
      for (int64_t c = 0; c < geo_.c; ++c)
        for (int64_t l = 0; l < 16; ++l) *packed++ = w[(ov * 16 + l) * geo_.c + c];
    bias_.assign(static_cast<size_t>(geo_.oc), 0.f);
    if (ctx.has_input(2)) std::copy(ctx.in<float>(2), ctx.in<float>(2) + geo_.oc, bias_.begin());
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const float* res = ctx.has_input(3) ? ctx.in<float>(3) : nullptr;
    const int64_t P = geo_.pixels;
    const int nt = threads_for(geo_.batch * P * geo_.c * geo_.oc, kMinMacsPerThread, ctx.num_threads);
    // Threads take jobs when there are at least two per thread, else ranges of the output vectors
    // (whole blocks of kVectors when there are at least two per thread). With few of both, an
    // image of at least 2 * kMinJobPixels pixels per thread is cut into two jobs per thread:
    // squeezenet1_1's 512 -> 64 at 13x13 (3 jobs, one block) ran at 1.5x its one-thread speed
    // with the 4 output vectors split, while mobilenet_v2's 960 -> 160 at 7x7 (10 vectors) was
    // slower in 4 jobs of 13 pixels than with 5 vectors per thread.
    int64_t per_image = (P + kJobPixels - 1) / kJobPixels;
    if (geo_.batch * per_image < 2 * nt && ocv_ < 2 * kVectors * nt && P >= 2 * nt * kMinJobPixels)
      per_image = std::max(per_image, (2 * nt + geo_.batch - 1) / geo_.batch);
    const int64_t job_pixels = (P + per_image - 1) / per_image;
    per_image = (P + job_pixels - 1) / job_pixels;
    const int64_t jobs = geo_.batch * per_image;
    auto job = [&](int64_t j, int64_t v0, int64_t v1) {
      const int64_t n = j / per_image, p0 = (j % per_image) * job_pixels;
      run_rows(x + n * geo_.c * P, y + n * geo_.oc * P, res ? res + n * geo_.oc * P : nullptr, p0,
               std::min(job_pixels, P - p0), v0, v1, ctx.round_fp16);
    };
    if (jobs >= 2 * nt) {
      parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int) {
        for (int64_t j = j0; j < j1; ++j) job(j, 0, ocv_);
      });
      return;
    }
    parallel_ranges(
        ocv_, nt,
        [&](int64_t v0, int64_t v1, int) {
          for (int64_t j = 0; j < jobs; ++j) job(j, v0, v1);
        },
        ocv_ >= 2 * kVectors * nt ? kVectors : 1);
  }

 private:
  // Pixels [p0, p0 + np) of one image (x, y, res: its input, output and residual or nullptr) x
  // output vectors [v0, v1), block by block of kVectors (see the file comment for the prefetch).
  void run_rows(const float* x, float* y, const float* res, int64_t p0, int64_t np, int64_t v0, int64_t v1,
                bool round) const {
    const int64_t vector_floats = geo_.c * 16;
    for (int64_t v = v0; v < v1; v += kVectors) {
      const int64_t V = std::min<int64_t>(kVectors, v1 - v);
      const int64_t next = v + kVectors, next_vectors = std::min<int64_t>(kVectors, v1 - next);
      int64_t t = 0;
      for (int64_t p = p0; p < p0 + np; p += kPixels, ++t) {
        const float* prefetch = t < next_vectors ? weights_.data() + (next + t) * vector_floats : nullptr;
        switch (std::min<int64_t>(kPixels, p0 + np - p)) {
          case 6: tiles<6>(x, y, res, p, v, V, prefetch, round); break;
          case 5: tiles<5>(x, y, res, p, v, V, prefetch, round); break;
          case 4: tiles<4>(x, y, res, p, v, V, prefetch, round); break;
          case 3: tiles<3>(x, y, res, p, v, V, prefetch, round); break;
          case 2: tiles<2>(x, y, res, p, v, V, prefetch, round); break;
          default: tiles<1>(x, y, res, p, v, V, prefetch, round); break;
        }
      }
    }
  }

  template <int R>
  void tiles(const float* x, float* y, const float* res, int64_t p, int64_t v, int64_t V, const float* prefetch,
             bool round) const {
    if (in_blocked_) return tiles<R, true>(x, y, res, p, v, V, prefetch, round);
    tiles<R, false>(x, y, res, p, v, V, prefetch, round);
  }
  template <int R, bool kInBlocked>
  void tiles(const float* x, float* y, const float* res, int64_t p, int64_t v, int64_t V, const float* prefetch,
             bool round) const {
    switch (V) {
      case 4: tile<R, 4, kInBlocked>(x, y, res, p, v, prefetch, round); break;
      case 3: tile<R, 3, kInBlocked>(x, y, res, p, v, prefetch, round); break;
      case 2: tile<R, 2, kInBlocked>(x, y, res, p, v, prefetch, round); break;
      default: tile<R, 1, kInBlocked>(x, y, res, p, v, prefetch, round); break;
    }
  }

  // Pixels [p, p + R) x output vectors [v, v + V) of one image, R <= 6, V <= 4. The 24
  // accumulators are named variables updated by inline assembly, as in the INT8 NHWC tile
  // (pointwise_int8_vnni.cc): with an array and the intrinsic, GCC 12 moved accumulators between
  // registers on every step and kept some on the stack.
  template <int R, int V, bool kInBlocked>
  ORKNN_AVX512 void tile(const float* x, float* y, const float* res, int64_t p, int64_t v, const float* prefetch,
                         bool round) const {
    static_assert(R >= 1 && R <= 6 && V >= 1 && V <= 4, "register tile of at most 6 x 4 vectors");
    const int64_t P = geo_.pixels, C = geo_.c;
    const __m512 z = _mm512_setzero_ps();
    __m512 a00 = z, a01 = z, a02 = z, a03 = z, a10 = z, a11 = z, a12 = z, a13 = z;
    __m512 a20 = z, a21 = z, a22 = z, a23 = z, a30 = z, a31 = z, a32 = z, a33 = z;
    __m512 a40 = z, a41 = z, a42 = z, a43 = z, a50 = z, a51 = z, a52 = z, a53 = z;
    const float* w = weights_.data() + v * C * 16;
    for (int64_t cb = 0; cb < C / 16; ++cb) {
      // Block cb of pixel p: nChw16c, its 16 channels then those of pixel p + 1, ...; NCHW, the
      // pixels of channel 16 cb from p on, then those of the next channel P floats further.
      const float* xb = x + cb * 16 * P + p * (kInBlocked ? 16 : 1);
#pragma GCC unroll 16
      for (int l = 0; l < 16; ++l) {
        const int64_t c = cb * 16 + l;
        if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(prefetch + c * 16), _MM_HINT_T1);
        const __m512 w0 = _mm512_loadu_ps(w + c * 16);
        const __m512 w1 = V > 1 ? _mm512_loadu_ps(w + (C + c) * 16) : z;
        const __m512 w2 = V > 2 ? _mm512_loadu_ps(w + (2 * C + c) * 16) : z;
        const __m512 w3 = V > 3 ? _mm512_loadu_ps(w + (3 * C + c) * 16) : z;
// acc += x * w, AT&T operand order.
#define ORKNN_FMA(acc, x, w) asm("vfmadd231ps %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w))
#define ORKNN_PW_ROW(r)                                                                   \
  if constexpr (R > r) {                                                                  \
    const __m512 xv = _mm512_set1_ps(kInBlocked ? xb[r * 16 + l] : xb[l * P + r]);        \
    ORKNN_FMA(a##r##0, xv, w0);                                                           \
    if constexpr (V > 1) ORKNN_FMA(a##r##1, xv, w1);                                      \
    if constexpr (V > 2) ORKNN_FMA(a##r##2, xv, w2);                                      \
    if constexpr (V > 3) ORKNN_FMA(a##r##3, xv, w3);                                      \
  }
        ORKNN_PW_ROW(0) ORKNN_PW_ROW(1) ORKNN_PW_ROW(2) ORKNN_PW_ROW(3) ORKNN_PW_ROW(4) ORKNN_PW_ROW(5)
#undef ORKNN_PW_ROW
#undef ORKNN_FMA
      }
    }
    const __m512 acc[6][4] = {{a00, a01, a02, a03}, {a10, a11, a12, a13}, {a20, a21, a22, a23},
                              {a30, a31, a32, a33}, {a40, a41, a42, a43}, {a50, a51, a52, a53}};
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(static_cast<int>(P)));  // NCHW output
#pragma GCC unroll 4
    for (int j = 0; j < V; ++j) {
      const __m512 bias = _mm512_loadu_ps(bias_.data() + (v + j) * 16);
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) {
        // Where output vector (v + j, pixel p + r) goes, in either layout; the residual's is the same.
        const int64_t at = out_blocked_ ? ((v + j) * P + p + r) * 16 : (v + j) * 16 * P + p + r;
        __m512 sum = _mm512_add_ps(acc[r][j], bias);
        if (res)
          sum = _mm512_add_ps(sum, out_blocked_ ? _mm512_loadu_ps(res + at) : _mm512_i32gather_ps(rows, res + at, 4));
        __m512 out = apply_act(sum, act_);
        if (round) out = round_to_fp16_lanes(out);
        if (out_blocked_) _mm512_storeu_ps(y + at, out);
        else _mm512_i32scatter_ps(y + at, rows, out, 4);
      }
    }
  }

  PwGeometry geo_;
  ActVec act_;
  bool in_blocked_ = false, out_blocked_ = false;  // nChw16c (else NCHW) input / output
  int64_t ocv_ = 0;                       // output vectors of 16 channels
  std::vector<float> weights_;            // [ocv_][c][16]
  std::vector<float> bias_;               // [oc], zero without a bias
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "x86_pw16c_f32", kPrioritySpecialized, supports_pw16c_f32, Pointwise16cF32);

}  // namespace orknn
