// INT8 pointwise (1x1) Conv with AVX-512 VNNI, requantization fused, on NCHW or on NHWC tensors
// (the runtime's channels-last INT8 activations; NhwcPw below).
//
// NCHW. Why: a 1x1 convolution is the product W[OC][C] x X[C][P] (P = H*W pixels), and in NCHW the
// pixels of a channel are contiguous, so it needs no channels-last layout. The oneDNN kernel
// (onednn_conv_int8) transposes the input into a channels-last u8 buffer, writes 4-byte int32
// accumulators and transposes them back while requantizing; for the cheap pointwise layers of
// mobile networks those passes cost several times the product itself. Here:
//   * a tile of 64 pixels of the input is packed per group of 4 channels into [C/4][64][4] u8
//     (x + 128, the sign-bit flip): the operand layout of vpdpbusd, 64 bytes per pixel vector;
//   * each vpdpbusd adds, for 16 pixels, 4 products u8 x s8 into int32 lanes (wrap-around, no
//     saturation); weights are 4 channels of one output row broadcast as one dword;
//   * 4 output rows x 64 pixels of accumulators stay in registers over all of C and are
//     requantized there and stored as 16-byte rows of the NCHW output.
//
// Numerics (bit-exact with ref_int8, docs/numerics.md): sum(x_u8 * w) + comp[oc] with
// comp[oc] = bias_q[oc] - (zp_x + 128) * sum(w[oc]) is the exact accumulator
// sum((x - zp_x) * w) + bias_q modulo 2^32, and the true value fits in int32 (infer bounds it), so
// the wrapped sum is exact. Then the operations of x86::requant_one in its order:
// float(acc) * M[oc], clamp to [-512, 512], round half to even (vcvtps2dq, default MXCSR), + zp_y,
// then the Relu/Clip bounds.
//
// Handles: quantized 2-D Conv, 1x1 kernel, stride 1, no padding, group 1, per-tensor or
// per-output-channel weights; the NCHW path from g_min_pixels pixels per image (LayoutFit): vectors
// of 16 pixels waste the lanes past the last pixel (a 7x7 image fills 49 of 64); measured on
// mobilenet_v2 (docs/kernels.md, "INT8 pointwise"), that path wins over oneDNN at 28x28 and up,
// ties at 14x14 and loses ~40% at 7x7. The NHWC path vectorises over output channels and takes
// every size. Needs AVX-512 F/BW/VL and VNNI.
// GCC 12 reports the _mm512_undefined_*() placeholders inside its own AVX-512 intrinsics as "may
// be" or, once inlined into the NHWC tile, "is used uninitialized" (false positives); the pragmas
// must precede the header to cover them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/int8_pack.h"
#include "kernels/x86/int8_requant.h"
#include "kernels/x86/pointwise_geometry.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

constexpr int64_t kTilePixels = x86::kPackTilePixels;  // 4 vectors of 16 pixels
constexpr int kRows = 4;             // output rows per register block
int64_t g_min_pixels = 256;          // see the file comment; tests lower it

bool supports_pw_int8(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512vnni() || !is_quantized_node(g, n)) return false;
  PwGeometry geo;
  return pw_geometry(g, n, &geo) && is_q8_conv_form(g, n, geo.oc, 0, /*value_act=*/true);
}

#define ORKNN_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define ORKNN_AMX __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,amx-tile,amx-int8")))

// The AMX paths below (NhwcPw::run_rows_amx, PointwiseInt8::amx_rows) on CPUs with AMX-INT8;
// OPENRKNN_DISABLE_KERNELS=x86_amx keeps the VNNI loops (A/B measurements, tests of both paths).
bool amx_enabled() { return x86::cpu_amx_int8() && !kernel_disabled("x86_amx"); }

// Palette 1 with all 8 tiles of 16 rows of 64 bytes. The configuration is per thread; each AMX
// product call loads it (a few dozen cycles) and releases the tiles at its end, because other code
// on the thread (oneDNN's AMX kernels) loads its own.
ORKNN_AMX void load_amx_tile_config() {
  alignas(64) uint8_t cfg[64] = {};
  cfg[0] = 1;  // palette
  for (int t = 0; t < 8; ++t) {
    const uint16_t colsb = 64;
    std::memcpy(cfg + 16 + 2 * t, &colsb, 2);
    cfg[48 + t] = 16;
  }
  _tile_loadconfig(cfg);
}

struct Epilogue {
  const int32_t* comp;
  const float* mult;
  int32_t zp, lo, hi;
  FusedActivation act;  // a value activation (docs/numerics.md), or none
  float inv_s_y;
};

// 16 accumulators of output channel o -> int8 (in [-128, 127]): x86::requant_one's operations
// in its order.
ORKNN_VNNI inline __m128i requant_nchw16(__m512i acc, int64_t o, const Epilogue& e) {
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc, _mm512_set1_epi32(e.comp[o]))),
                           _mm512_set1_ps(e.mult[o]));
  if (e.act.act != FusedAct::kNone)
    f = x86::value_act16(f, x86::value_act16_of(e.act.act, e.act.alpha, e.act.beta, e.inv_s_y));
  f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(-512.f)), _mm512_set1_ps(512.f));
  const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), _mm512_set1_epi32(e.zp));
  return _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(q, _mm512_set1_epi32(e.lo)), _mm512_set1_epi32(e.hi)));
}

// Output rows [r0, r0 + kRows) (weights block `wb`: [c4][kRows] dwords) x the packed tile:
// accumulate, requantize and store np pixels of each row that exists (< oc).
ORKNN_VNNI void row_block(const uint8_t* tile, int64_t c4, const int32_t* wb, int64_t r0, int64_t oc, int64_t np,
                          const Epilogue& e, int8_t* y, int64_t pixels) {
  __m512i acc[kRows][4];
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < 4; ++v) acc[r][v] = _mm512_setzero_si512();
  for (int64_t k = 0; k < c4; ++k) {
    const uint8_t* t = tile + k * kTilePixels * 4;
    const __m512i x0 = _mm512_loadu_si512(t), x1 = _mm512_loadu_si512(t + 64);
    const __m512i x2 = _mm512_loadu_si512(t + 128), x3 = _mm512_loadu_si512(t + 192);
    const int32_t* w = wb + k * kRows;
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m512i wr = _mm512_set1_epi32(w[r]);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], x0, wr);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], x1, wr);
      acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], x2, wr);
      acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], x3, wr);
    }
  }
  for (int r = 0; r < kRows && r0 + r < oc; ++r) {
    const int64_t o = r0 + r;
    int8_t* out = y + o * pixels;
    for (int v = 0; v < 4 && v * 16 < np; ++v) {
      const __m128i b = requant_nchw16(acc[r][v], o, e);
      const int64_t left = np - v * 16;
      if (left >= 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + v * 16), b);
      else _mm_mask_storeu_epi8(out + v * 16, static_cast<__mmask16>((1u << left) - 1u), b);
    }
  }
}


// ---- NHWC activations: Y[P][OC] = X[P][C] x W, P = all pixels of all images ----
// The product of channels-last rows: for 4 channels of a pixel (one dword of its row, broadcast)
// and 16 output channels (one 64-byte vector of weights packed [c4][16 oc][4 channels]), one
// vpdpbusd adds 64 products. A register tile of kNhwcRows pixels x kNhwcVecs x 16 output channels
// runs over all of C, then is requantized in registers and stored as rows of the NHWC output. The
// tile's input rows are first flipped to u8 (x ^ 0x80) into a per-thread buffer. Same numerics as
// the NCHW path (comp), requantized by x86::requant16_float_bounds (equal to requant_one).

constexpr int kNhwcRows = 6;  // pixels per register tile
constexpr int kNhwcVecs = 4;  // 16-channel output vectors per register tile (64 channels)
constexpr int64_t kNhwcMaxPixelsPerJob = 64;
constexpr int64_t kAmxPixelsPerJob = 64;

struct NhwcPw {
  int64_t c = 0, c4 = 0, oc = 0, ocv = 0;  // ocv: 16-channel output vectors (last one padded)
  bool amx = false;           // run_rows_amx instead of run_rows; c4 is then a multiple of 16
  std::vector<int8_t> w;      // [ocv][c4][16][4], zero past oc and c
  std::vector<int32_t> comp;  // [ocv * 16]
  std::vector<float> mult;    // [ocv * 16]
  int32_t zp_y = 0;
  float lo = -128.f, hi = 127.f;  // output bounds minus zp_y
  FusedActivation act;            // a value activation (docs/numerics.md), or none
  float inv_s_y = 1.f;

  // Rows of `row` bytes (a multiple of 4 past the last weight) into `oc` outputs; the weights are
  // set with set_weight.
  void init(int64_t row, int64_t out_channels, const std::vector<int32_t>& comp_oc, const Int8Output& out) {
    c = row;
    // Rows shorter than one 64-byte block leave most of each AMX tile padding: mobilenet_v2 int8's
    // 16 -> 96 at 112x112 ran 394 us with AMX against 301 with VNNI, 24 -> 144 at 56x56 148 against
    // 119, where 96 -> 24 at 56x56 ran 57 against 70 and 576 -> 96 at 14x14 30 against 66 (one
    // thread).
    amx = row >= 64 && amx_enabled();
    // AMX: whole 64-byte blocks of K, so that every B tile is 16 rows of 4-byte groups.
    c4 = amx ? (row + 63) / 64 * 16 : (row + 3) / 4;
    oc = out_channels;
    ocv = (oc + 15) / 16;
    w.assign(static_cast<size_t>(ocv * c4 * 64), 0);
    comp.assign(static_cast<size_t>(ocv * 16), 0);
    mult.assign(static_cast<size_t>(ocv * 16), 0.f);
    std::copy(comp_oc.begin(), comp_oc.end(), comp.begin());
    std::copy(out.mult.begin(), out.mult.end(), mult.begin());
    zp_y = out.zp_y;
    lo = static_cast<float>(out.clamp.lo - out.zp_y);
    hi = static_cast<float>(out.clamp.hi - out.zp_y);
    act = out.act;
    inv_s_y = out.inv_s_y;
  }
  // The weight output o applies to byte k of an input row.
  void set_weight(int64_t o, int64_t k, int8_t v) {
    w[static_cast<size_t>(((o / 16) * c4 + k / 4) * 64 + (o % 16) * 4 + k % 4)] = v;
  }
  // Every weight from rows of c bytes, src[o * c + k]: set_weight's layout, 4 bytes at a time (a
  // byte at a time this was 15% of resnet50 int8's rknn_init).
  void set_weight_rows(const int8_t* src) {
    for (int64_t o = 0; o < oc; ++o) {
      int8_t* dst = w.data() + (o / 16) * c4 * 64 + (o % 16) * 4;
      const int8_t* row = src + o * c;
      int64_t k = 0;
      for (; k + 4 <= c; k += 4) std::memcpy(dst + k * 16, row + k, 4);
      for (; k < c; ++k) set_weight(o, k, row[k]);
    }
  }

  // Pixels xu[0..R) (u8 rows of c bytes) x output vectors [v0, v0 + V) -> y rows (stride oc),
  // R <= 6, V <= 4. The 24 accumulators are named variables updated by inline assembly: given the
  // intrinsic (or an array) in the loop over the channels, GCC 12 copies every accumulator to a
  // new register, or keeps them on the stack, on each step; the "+v" operands keep each one in
  // its register.
  template <int R, int V>
  ORKNN_VNNI void tile(const uint8_t* xu, int64_t v0, int8_t* y, const int8_t* prefetch) const {
    static_assert(R >= 1 && R <= 6 && V >= 1 && V <= 4, "register tile of at most 6 x 4 vectors");
    // The accumulators start at comp (the sum is modulo 2^32 either way), which takes one add
    // per vector out of the requantization.
    const __m512i z = _mm512_setzero_si512();
    const __m512i c0 = _mm512_loadu_si512(comp.data() + v0 * 16);
    const __m512i c1 = V > 1 ? _mm512_loadu_si512(comp.data() + (v0 + 1) * 16) : z;
    const __m512i c2 = V > 2 ? _mm512_loadu_si512(comp.data() + (v0 + 2) * 16) : z;
    const __m512i c3 = V > 3 ? _mm512_loadu_si512(comp.data() + (v0 + 3) * 16) : z;
    __m512i a00 = c0, a01 = c1, a02 = c2, a03 = c3, a10 = c0, a11 = c1, a12 = c2, a13 = c3;
    __m512i a20 = c0, a21 = c1, a22 = c2, a23 = c3, a30 = c0, a31 = c1, a32 = c2, a33 = c3;
    __m512i a40 = c0, a41 = c1, a42 = c2, a43 = c3, a50 = c0, a51 = c1, a52 = c2, a53 = c3;
    const int8_t* wp = w.data() + v0 * c4 * 64;
    const int64_t wstep = c4 * 64;
    for (int64_t k = 0; k < c4; ++k, wp += 64) {
      if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(prefetch + k * 64), _MM_HINT_T1);
      const __m512i w0 = _mm512_loadu_si512(wp);
      const __m512i w1 = V > 1 ? _mm512_loadu_si512(wp + wstep) : z;
      const __m512i w2 = V > 2 ? _mm512_loadu_si512(wp + 2 * wstep) : z;
      const __m512i w3 = V > 3 ? _mm512_loadu_si512(wp + 3 * wstep) : z;
// acc += the products of x (u8) and w (s8), AT&T operand order.
#define ORKNN_DPBUSD(acc, x, w) asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w))
#define ORKNN_PW_ROW(r)                                        \
  if constexpr (R > r) {                                       \
    int32_t d;                                                 \
    std::memcpy(&d, xu + r * c + 4 * k, 4);                    \
    const __m512i x = _mm512_set1_epi32(d);                    \
    ORKNN_DPBUSD(a##r##0, x, w0);                              \
    if constexpr (V > 1) ORKNN_DPBUSD(a##r##1, x, w1);         \
    if constexpr (V > 2) ORKNN_DPBUSD(a##r##2, x, w2);         \
    if constexpr (V > 3) ORKNN_DPBUSD(a##r##3, x, w3);         \
  }
      ORKNN_PW_ROW(0) ORKNN_PW_ROW(1) ORKNN_PW_ROW(2) ORKNN_PW_ROW(3) ORKNN_PW_ROW(4) ORKNN_PW_ROW(5)
#undef ORKNN_PW_ROW
#undef ORKNN_DPBUSD
    }
    const __m512i acc[6][4] = {{a00, a01, a02, a03}, {a10, a11, a12, a13}, {a20, a21, a22, a23},
                               {a30, a31, a32, a33}, {a40, a41, a42, a43}, {a50, a51, a52, a53}};
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const __m512i zp = _mm512_set1_epi32(zp_y);
    const x86::ValueAct16 va = x86::value_act16_of(act.act, act.alpha, act.beta, inv_s_y);
    if (V == 4 && oc - v0 * 16 >= 64) {
      // 64 output channels of each pixel, one 64-byte store: the four int32 vectors (in
      // [-128, 127] already, so the saturating packs change nothing) packed to bytes, which leaves
      // 128-bit lane i holding dword k = channels 16k + 4i .. 16k + 4i + 3; a dword permute puts
      // them in channel order. (Four vpmovdb and 16-byte stores instead: mobilenet_v2 int8's
      // 16 -> 96 at 112x112 took 102-104 against 93-95 us.)
      const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
      __m512i q[4];
      __m512 mv[4];
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) mv[v] = _mm512_loadu_ps(mult.data() + (v0 + v) * 16);
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) q[v] = x86::requant16_float_bounds(acc[r][v], z, mv[v], vlo, vhi, zp, &va);
        const __m512i bytes = _mm512_packs_epi16(_mm512_packs_epi32(q[0], q[1]), _mm512_packs_epi32(q[2], q[3]));
        _mm512_storeu_si512(y + r * oc + v0 * 16, _mm512_permutexvar_epi32(order, bytes));
      }
      return;
    }
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t o = (v0 + v) * 16;
      const __m512 mv = _mm512_loadu_ps(mult.data() + o);
      const int64_t left = oc - o;
      const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
        _mm_mask_storeu_epi8(y + r * oc + o, m,
                             _mm512_cvtepi32_epi8(x86::requant16_float_bounds(acc[r][v], z, mv, vlo, vhi, zp, &va)));
    }
  }

  // R pixels of the flipped rows xu x the V (<= kNhwcVecs) output vectors from v.
  template <int R>
  ORKNN_VNNI void tiles(const uint8_t* xu, int64_t v, int64_t V, int8_t* y, const int8_t* prefetch) const {
    switch (V) {
      case 4: tile<R, 4>(xu, v, y, prefetch); break;
      case 3: tile<R, 3>(xu, v, y, prefetch); break;
      case 2: tile<R, 2>(xu, v, y, prefetch); break;
      case 1: tile<R, 1>(xu, v, y, prefetch); break;
      default: break;
    }
  }

  // Pixels [0, np) of the flipped rows xu (row p at xu + p * c) x output vectors [v0, v1). The
  // weights of one block of kNhwcVecs vectors (c4 x 256 bytes) serve every pixel of the job before
  // the next block's are read, so each weight comes from memory once per job and from L1 or L2
  // for the job's other register tiles. While a block runs, its first register tiles prefetch the
  // next block into L2 (one 64-byte line per step over the channels, the next block's vector t in
  // tile t): a 7x7 image has 9 tiles per block, and without the prefetch the first of them
  // waited on memory, which held resnet50 int8's 512 -> 2048 at 7x7 (1 MB of weights, from L3
  // or DRAM in every run) to about 60% of the VNNI peak. (With the pixel loop outside, the whole
  // weight matrix streamed once per 6-pixel tile: that layer took 196 us, now 138-153.)
  void run_rows(const uint8_t* xu, int64_t np, int64_t v0, int64_t v1, int8_t* y) const {
    const int64_t vector_bytes = c4 * 64;
    for (int64_t v = v0; v < v1; v += kNhwcVecs) {
      const int64_t V = std::min<int64_t>(kNhwcVecs, v1 - v);
      const int64_t next = v + kNhwcVecs, next_vectors = std::min<int64_t>(kNhwcVecs, v1 - next);
      int64_t p = 0, t = 0;
      auto prefetch = [&]() -> const int8_t* {
        const int64_t k = t++;
        return k < next_vectors ? w.data() + (next + k) * vector_bytes : nullptr;
      };
      for (; p + kNhwcRows <= np; p += kNhwcRows) tiles<kNhwcRows>(xu + p * c, v, V, y + p * oc, prefetch());
      switch (np - p) {
        case 5: tiles<5>(xu + p * c, v, V, y + p * oc, prefetch()); break;
        case 4: tiles<4>(xu + p * c, v, V, y + p * oc, prefetch()); break;
        case 3: tiles<3>(xu + p * c, v, V, y + p * oc, prefetch()); break;
        case 2: tiles<2>(xu + p * c, v, V, y + p * oc, prefetch()); break;
        case 1: tiles<1>(xu + p * c, v, V, y + p * oc, prefetch()); break;
        default: break;
      }
    }
  }

  // The same product with AMX tiles: C[16 pixels][16 outputs] += A[16 pixels][64 bytes of the
  // rows] x B[16 groups of 4 bytes][16 outputs] (tdpbusd: u8 x s8, summed in int32 with
  // wrap-around, as vpdpbusd). Up to 4 C tiles (64 pixels, a whole AMX job) per output vector, so
  // that each weight tile is loaded once per job: the weights of the deep layers come from L2 or
  // L3, the input rows from L1. The accumulators leave through a 4 KB block in L1 and are
  // requantized from there like the VNNI tile's. A tiles read 64 bytes of each of 16 rows whatever
  // np and c are: the bytes past a row's end meet zero weights (c4 is padded to whole 64-byte
  // blocks), the rows past np are not stored, and the row buffer leaves room for both
  // (nhwc_row_bytes).
  // Tiles 0-3: the int32 accumulators; 4, 5, 7: input rows; 6: weights.
  ORKNN_AMX void run_rows_amx(const uint8_t* xu, int64_t np, int64_t v0, int64_t v1, int8_t* y) const {
    alignas(64) int32_t acc[4][16][16];
    load_amx_tile_config();
    const int64_t kblocks = c4 / 16, wstep = c4 * 64;
    const int tiles = static_cast<int>((np + 15) / 16);
    const uint8_t* a = xu;
    for (int64_t v = v0; v < v1; ++v) {
      const int8_t* b = w.data() + v * wstep;
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int64_t k = 0; k < kblocks; ++k) {
        // The weight tile after next: measured 5-10% on resnet50's 2048-channel layers.
        const char* next = reinterpret_cast<const char*>(b + (k + 2) * 1024);
        for (int l = 0; l < 16; ++l) _mm_prefetch(next + l * 64, _MM_HINT_T0);
        _tile_loadd(6, b + k * 1024, 64);
        _tile_loadd(4, a + k * 64, c);
        _tile_dpbusd(0, 4, 6);
        if (tiles > 1) {
          _tile_loadd(5, a + 16 * c + k * 64, c);
          _tile_dpbusd(1, 5, 6);
        }
        if (tiles > 2) {
          _tile_loadd(7, a + 32 * c + k * 64, c);
          _tile_dpbusd(2, 7, 6);
        }
        if (tiles > 3) {
          _tile_loadd(4, a + 48 * c + k * 64, c);
          _tile_dpbusd(3, 4, 6);
        }
      }
      _tile_stored(0, acc[0], 64);
      if (tiles > 1) _tile_stored(1, acc[1], 64);
      if (tiles > 2) _tile_stored(2, acc[2], 64);
      if (tiles > 3) _tile_stored(3, acc[3], 64);
      for (int t = 0; t < tiles; ++t) requant_tile(acc[t], std::min<int64_t>(16, np - 16 * t), v, y + 16 * t * oc);
    }
    _tile_release();
  }

  // Pixels per job of run_nhwc_product for `pixels` output rows: 64 with AMX (4 C tiles); with
  // VNNI at most kNhwcMaxPixelsPerJob, the jobs of equal size, so that a small image is one job
  // (each job reads every weight once) and a 49-pixel one no job of 1 pixel.
  int64_t pixels_per_job(int64_t pixels) const {
    if (amx) return kAmxPixelsPerJob;
    const int64_t jobs = std::max<int64_t>(1, (pixels + kNhwcMaxPixelsPerJob - 1) / kNhwcMaxPixelsPerJob);
    return (pixels + jobs - 1) / jobs;
  }

 private:
  // Rows [0, rows) of one accumulator tile (pixel r, outputs 16 tv .. 16 tv + 15) -> int8 y + r * oc.
  ORKNN_VNNI void requant_tile(const int32_t (*acc)[16], int64_t rows, int64_t tv, int8_t* y) const {
    const int64_t o = tv * 16, left = oc - o;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    const __m512i cv = _mm512_loadu_si512(comp.data() + o);
    const __m512 mv = _mm512_loadu_ps(mult.data() + o);
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const __m512i zp = _mm512_set1_epi32(zp_y);
    const x86::ValueAct16 va = x86::value_act16_of(act.act, act.alpha, act.beta, inv_s_y);
    for (int64_t r = 0; r < rows; ++r)
      _mm_mask_storeu_epi8(y + r * oc + o, m,
                           _mm512_cvtepi32_epi8(x86::requant16_float_bounds(_mm512_load_si512(acc[r]), cv, mv, vlo,
                                                                            vhi, zp, &va)));
  }
};

// One thread slot's input rows for a job of NhwcPw: + 64 because the last pixel's last 4-byte
// group (VNNI) or 64-byte block (AMX) may read past its row (those weights are 0); whole cache
// lines, so that the slots share none.
size_t nhwc_row_bytes(int64_t row) {
  return static_cast<size_t>((std::max(kNhwcMaxPixelsPerJob, kAmxPixelsPerJob) * row + 64 + 63) / 64 * 64);
}

// Y = X x W over `pixels` output rows: blocks of d.pixels_per_job(pixels) pixels, whose u8 input rows
// fill(p0, np, xu) writes into the thread slot's buffer (rows_buf: slots x row_bytes bytes + 64
// for the alignment; row_bytes at least nhwc_row_bytes(d.c)).
template <class Fill>
void run_nhwc_product(const NhwcPw& d, int64_t pixels, int num_threads, int slots, uint8_t* rows_buf,
                      size_t row_bytes, Fill&& fill, int8_t* y) {
  const int64_t job = d.pixels_per_job(pixels), blocks = (pixels + job - 1) / job;
  const int nt = std::min(threads_for(pixels * d.c * d.oc, int64_t{1} << 20, num_threads), slots);
  uint8_t* rows_base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(rows_buf) + 63) & ~uintptr_t{63});
  auto block = [&](int64_t b, int64_t v0, int64_t v1, uint8_t* xu) {
    const int64_t p0 = b * job, np = std::min(job, pixels - p0);
    fill(p0, np, xu);
    if (d.amx)
      d.run_rows_amx(xu, np, v0, v1, y + p0 * d.oc);
    else
      d.run_rows(xu, np, v0, v1, y + p0 * d.oc);
  };
  if (blocks >= 2 * nt) {
    // A contiguous range of pixel blocks per thread: measured faster here than claiming jobs
    // (mobilenet_v2 int8, 2 threads: 112x112 16 -> 96 channels 134 -> 98-106 us, 56x56 144 -> 24
    // 33 -> 25 us).
    parallel_ranges(blocks, nt, [&](int64_t b0, int64_t b1, int slot) {
      for (int64_t b = b0; b < b1; ++b) block(b, 0, d.ocv, rows_base + static_cast<size_t>(slot) * row_bytes);
    });
    return;
  }
  // Few pixel blocks (7x7 and 14x14 images): each thread takes a range of the output channels over
  // every block (and fills the blocks' rows itself). Whole 64-channel tiles when there are enough,
  // so that the threads' parts of a pixel row share no cache line. (Ranges of (block, channel
  // tile) jobs left 48 of 49 pixels of a 7x7 image to one thread: 320 -> 1280 ran 52 us at one
  // thread and at two.)
  const int64_t align = d.ocv >= 2 * kNhwcVecs * nt ? kNhwcVecs : 1;
  parallel_ranges(
      d.ocv, nt,
      [&](int64_t v0, int64_t v1, int slot) {
        for (int64_t b = 0; b < blocks; ++b) block(b, v0, v1, rows_base + static_cast<size_t>(slot) * row_bytes);
      },
      align);
}

// comp[o] = x86::u8_compensation of output o, w: `per_oc` weights per output.
std::vector<int32_t> compensations(const int8_t* w, int64_t oc, int64_t per_oc, const int32_t* bias, int32_t zp_x) {
  std::vector<int32_t> comp(static_cast<size_t>(oc));
  for (int64_t o = 0; o < oc; ++o) {
    int64_t pos = 0, neg = 0;
    x86::int8_sign_sums(w + o * per_oc, per_oc, &pos, &neg);
    comp[static_cast<size_t>(o)] = x86::u8_compensation(bias ? bias[o] : 0, pos - neg, zp_x);
  }
  return comp;
}

class PointwiseInt8 : public Kernel {
 public:
  // Input and output NCHW (pixel tiles) or both NHWC (NhwcPw); the NCHW path only unstrided and
  // from g_min_pixels up.
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kUniform; }
  LayoutFit layout_fit(const Graph& g, const Node& n) const override {
    PwGeometry geo;
    const bool nchw = pw_geometry(g, n, &geo) && !geo.strided() && geo.pixels >= g_min_pixels;
    return nchw ? LayoutFit::kAny : LayoutFit::kBlockedOnly;
  }

  Status prepare(const KernelContext& ctx) override {
    if (!pw_geometry(*ctx.graph, *ctx.node, &geo_))
      return ORKNN_ERR(kFail, "Conv '%s': not a pointwise convolution this kernel handles", ctx.node->name.c_str());
    const QuantScalar qx = per_tensor(ctx.in_tensor(0));
    const Int8Output out = int8_output(qx.scale, ctx.in_tensor(1).quant, ctx.out_tensor(0), ctx.node->attrs, geo_.oc);
    blocked_ = ctx.input_blocked(0);
    if (blocked_ != ctx.output_blocked(0))
      return ORKNN_ERR(kFail, "Conv '%s': input and output must share their layout", ctx.node->name.c_str());
    if (!blocked_ && geo_.strided())
      return ORKNN_ERR(kFail, "Conv '%s': strides on NCHW activations are not handled", ctx.node->name.c_str());
    c4_ = (geo_.c + 3) / 4;
    blocks_ = (geo_.oc + kRows - 1) / kRows;
    const int8_t* w = ctx.in<int8_t>(1);
    comp_ = compensations(w, geo_.oc, geo_.c, ctx.has_input(2) ? ctx.in<int32_t>(2) : nullptr, qx.zp);
    mult_ = out.mult;
    zp_y_ = out.zp_y;
    lo_ = out.clamp.lo;
    hi_ = out.clamp.hi;
    act_ = out.act;
    inv_s_y_ = out.inv_s_y;
    slots_ = thread_slots(ctx.num_threads);
    if (blocked_) {
      prepare_nhwc(w, out);
      return Status::Ok();
    }
    // AMX (rows of 64 bytes and more, as the NHWC path): weights row-major [oc padded to 16][C
    // padded to 64], zero in the padding; the tiles get the padded channel groups (their bytes
    // meet zero weights).
    amx_ = geo_.c >= 64 && amx_enabled();
    if (amx_) {
      cpad_ = (geo_.c + 63) / 64 * 64;
      w_amx_.assign(static_cast<size_t>((geo_.oc + 15) / 16 * 16 * cpad_), 0);
      for (int64_t o = 0; o < geo_.oc; ++o) std::memcpy(&w_amx_[static_cast<size_t>(o * cpad_)], w + o * geo_.c, geo_.c);
    } else {
      // VNNI: weights as [block][c4][row] dwords of 4 channels; missing rows/channels are 0.
      weights_.assign(static_cast<size_t>(blocks_ * c4_ * kRows), 0);
      for (int64_t o = 0; o < geo_.oc; ++o)
        for (int64_t ch = 0; ch < geo_.c; ++ch) {
          const size_t dw = static_cast<size_t>(((o / kRows) * c4_ + ch / 4) * kRows + o % kRows);
          reinterpret_cast<int8_t*>(&weights_[dw])[ch % 4] = w[o * geo_.c + ch];
        }
    }
    tile_bytes_ = (amx_ ? cpad_ / 4 : c4_) * kTilePixels * 4;
    tiles_.assign(static_cast<size_t>(slots_ * tile_bytes_), 0);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    if (blocked_) return run_nhwc(ctx);
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    const int64_t tiles_per_image = (geo_.pixels + kTilePixels - 1) / kTilePixels;
    const int64_t tiles = geo_.batch * tiles_per_image;
    const int nt = std::min(std::max(1, ctx.num_threads), slots_);
    // Jobs are (pixel tile, range of row blocks); with few tiles (7x7 layers) the rows are split
    // too, so that every thread gets work. Each job packs its tile (cheap next to the product).
    const int64_t row_parts = std::min<int64_t>(blocks_, std::max<int64_t>(1, (4 * nt + tiles - 1) / tiles));
    const int64_t jobs = tiles * row_parts;
    const Epilogue e{comp_.data(), mult_.data(), zp_y_, lo_, hi_, act_, inv_s_y_};
    // Claimed a few consecutive jobs at a time: neighbouring tiles (whose output rows share cache
    // lines when the image is not a multiple of 64 pixels) mostly stay on one thread.
    parallel_claimed(jobs, nt, jobs / (8 * nt), [&](int64_t j, int slot) {
      uint8_t* tile = tiles_.data() + static_cast<size_t>(slot * tile_bytes_);
      const int64_t t = j / row_parts, part = j % row_parts;
      const int64_t b = t / tiles_per_image, p0 = (t % tiles_per_image) * kTilePixels;
      const int64_t np = std::min(kTilePixels, geo_.pixels - p0);
      const int8_t* xb = x + b * geo_.c * geo_.pixels;
      int8_t* yb = y + b * geo_.oc * geo_.pixels + p0;
      x86::pack_tile(xb, geo_.c, geo_.pixels, p0, np, tile);
      const int64_t blk0 = blocks_ * part / row_parts, blk1 = blocks_ * (part + 1) / row_parts;
      if (amx_) {
        // Blocks of 16 output channels on AMX: the row blocks [blk0, blk1) of 4 rows, rounded to 16.
        amx_rows(tile, (blk0 * kRows + 15) / 16, (blk1 * kRows + 15) / 16, np, yb);
        return;
      }
      for (int64_t blk = blk0; blk < blk1; ++blk)
        row_block(tile, c4_, weights_.data() + blk * c4_ * kRows, blk * kRows, geo_.oc, np, e, yb, geo_.pixels);
    });
  }

 private:
  PwGeometry geo_;
  int64_t c4_ = 0, blocks_ = 0;
  std::vector<int32_t> weights_;  // the NCHW VNNI path's [block][c4][row] (empty with AMX)
  std::vector<int32_t> comp_;
  std::vector<float> mult_;
  int32_t zp_y_ = 0, lo_ = -128, hi_ = 127;
  FusedActivation act_;  // a value activation (docs/numerics.md), or none
  float inv_s_y_ = 1.f;
  int slots_ = 1;
  std::vector<uint8_t> tiles_;  // one packed tile (tile_bytes_) per thread slot
  int64_t tile_bytes_ = 0;
  bool amx_ = false;            // the NCHW product on AMX tiles (amx_rows)
  int64_t cpad_ = 0;            // channels padded to 64 (AMX)
  std::vector<int8_t> w_amx_;   // [oc padded to 16][cpad_]

  // The NCHW product on AMX: C[16 output channels][16 pixels] += A[16 output channels][64
  // weight bytes] x B[16 channel groups][16 pixels x 4], tdpbsud (signed weights, unsigned
  // activations). The packed tile ([c4][64 pixels][4]) holds 4 B tiles side by side (row stride
  // 256 bytes), and a C tile's rows are 16 pixels of one output channel: NCHW output rows. Output
  // channel blocks [ob0, ob1) of 16 (the last may be partial), np pixels of the tile.
  // Tiles 0-3: the int32 accumulators; 4: weights; 5-7: input pixels.
  ORKNN_AMX void amx_rows(const uint8_t* tile, int64_t ob0, int64_t ob1, int64_t np, int8_t* yb) const {
    alignas(64) int32_t acc[4][16][16];
    load_amx_tile_config();
    const int64_t kblocks = cpad_ / 64, tiles = (np + 15) / 16;
    const Epilogue e{comp_.data(), mult_.data(), zp_y_, lo_, hi_, act_, inv_s_y_};
    for (int64_t ob = ob0; ob < ob1; ++ob) {
      const int8_t* a = w_amx_.data() + ob * 16 * cpad_;
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int64_t k = 0; k < kblocks; ++k) {
        _tile_loadd(4, a + k * 64, cpad_);
        const uint8_t* b = tile + k * 16 * kTilePixels * 4;  // 16 channel groups of 64 pixels
        _tile_loadd(5, b, kTilePixels * 4);
        _tile_dpbsud(0, 4, 5);
        if (tiles > 1) {
          _tile_loadd(6, b + 64, kTilePixels * 4);
          _tile_dpbsud(1, 4, 6);
        }
        if (tiles > 2) {
          _tile_loadd(7, b + 128, kTilePixels * 4);
          _tile_dpbsud(2, 4, 7);
        }
        if (tiles > 3) {
          _tile_loadd(5, b + 192, kTilePixels * 4);
          _tile_dpbsud(3, 4, 5);
        }
      }
      _tile_stored(0, acc[0], 64);
      if (tiles > 1) _tile_stored(1, acc[1], 64);
      if (tiles > 2) _tile_stored(2, acc[2], 64);
      if (tiles > 3) _tile_stored(3, acc[3], 64);
      // Requantized as row_block does (requant_nchw16).
      const int64_t rows = std::min<int64_t>(16, geo_.oc - ob * 16);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t o = ob * 16 + r;
        for (int64_t t = 0; t < tiles; ++t) {
          const int64_t left = np - 16 * t;
          const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
          _mm_mask_storeu_epi8(yb + o * geo_.pixels + 16 * t, m, requant_nchw16(_mm512_load_si512(acc[t][r]), o, e));
        }
      }
    }
    _tile_release();
  }
  // NHWC activations (NhwcPw).
  bool blocked_ = false;
  NhwcPw nhwc_;
  std::vector<uint8_t> rows_;  // per thread slot: one job's input rows flipped to u8

  void prepare_nhwc(const int8_t* w, const Int8Output& out) {
    nhwc_.init(geo_.c, geo_.oc, comp_, out);
    nhwc_.set_weight_rows(w);
    rows_.assign(static_cast<size_t>(slots_) * nhwc_row_bytes(geo_.c) + 64, 0);  // + alignment
  }

  // Output pixels [p0, p0 + np) of all images: their input rows (x ^ 0x80) into xu.
  void flip_rows(const int8_t* x, int64_t p0, int64_t np, uint8_t* xu) const {
    const int64_t c = geo_.c;
    if (!geo_.strided()) return x86::int8_to_u8(x + p0 * c, np * c, xu);
    for (int64_t p = p0; p < p0 + np; ++p, xu += c) {
      const int64_t b = p / geo_.pixels, i = (p % geo_.pixels) / geo_.ow, j = p % geo_.ow;
      x86::int8_to_u8(x + ((b * geo_.h + i * geo_.sh) * geo_.w + j * geo_.sw) * c, c, xu);
    }
  }

  void run_nhwc(const KernelContext& ctx) {
    const int8_t* x = ctx.in<int8_t>(0);
    run_nhwc_product(nhwc_, geo_.batch * geo_.pixels, ctx.num_threads, slots_, rows_.data(), nhwc_row_bytes(geo_.c),
                     [&](int64_t p0, int64_t np, uint8_t* xu) { flip_rows(x, p0, np, xu); }, ctx.out<int8_t>(0));
  }
};


// ---- Convolutions of at most 4 input channels: the stems of image networks ----
// An image of 3 channels has 3 bytes per channels-last pixel, short of vpdpbusd's groups of 4, and
// oneDNN runs such layers well below its usual rate (mobilenet_v2's 3 -> 32 3x3 stride-2 stem:
// ~120 us for 10.8 M MACs at one thread; resnet's 7x7 one ~510 us for 118 M). Here each image is
// first copied into a padded channels-last buffer of c bytes per pixel (x ^ 0x80; the borders
// hold zp_x ^ 0x80, so one compensation serves them as in the NHWC depthwise kernel). Then every
// output pixel's window becomes one row of kh * kw * c bytes, rounded up to 4 (kw * c contiguous
// bytes per window row, one vector copy each), and the rows go through the NHWC product above with
// weights laid out [ky][kx][c] (0 past the window). Same numerics as the pointwise kernel:
// bit-exact. A 3x3 window of 3 channels is 7 groups of 4 bytes; 4-byte pixels would take 9.
// Output channels-last only (LayoutFit::kBlockedOnly: the layers after a stem keep INT8
// activations NHWC); the input is the graph's image, NCHW, or NHWC when a producer keeps it so.

bool supports_stem_int8(const Graph& g, const Node& n) {
  // vpermb packs the pixels (nchw_row_to_u8).
  if (!x86::cpu_avx512vnni() || !x86::cpu_avx512vbmi()) return false;
  if (!is_quantized_node(g, n)) return false;
  StemGeometry geo;
  // Below 16 output channels the product's register tile holds only 6 accumulators or fewer. At
  // 16, oneDNN was as fast on an AMD Zen CPU (mobilenet_v3_small's 3 -> 16 stem, one thread: 90 vs
  // 87 us) and slower on a Xeon with AMX (276-280 vs 197-200 us).
  return stem_geometry(g, n, &geo) && geo.oc >= 16 && is_q8_conv_form(g, n, geo.oc, 0, /*value_act=*/true);
}

// n pixels of one NCHW image row (channel ch at x + ch * plane, c <= 4) -> n channels-last pixels
// of c bytes, x ^ 0x80: 16 pixels as 4-byte lanes, then vpermb keeps c bytes of each
// (StemInt8::pack_index_). While 64 bytes of the row remain, a store writes 64 bytes: past its
// 16 * c, into what the next ones write. The last stores are masked to the row.
// (One target attribute with every feature: clang honours only one per function.)
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void nchw_row_to_u8(
    const int8_t* x, int64_t c, int64_t plane, int64_t n, const uint8_t* pack_index, uint8_t* dst) {
  const __m512i pack = _mm512_loadu_si512(pack_index);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t left = std::min<int64_t>(16, n - i);
    const __mmask16 m = static_cast<__mmask16>((1u << left) - 1);
    __m512i v = _mm512_setzero_si512();
    for (int64_t ch = 0; ch < c; ++ch) {
      const __m128i bytes = left == 16 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + ch * plane + i))
                                       : _mm_maskz_loadu_epi8(m, x + ch * plane + i);
      v = _mm512_or_si512(v, _mm512_sllv_epi32(_mm512_cvtepu8_epi32(bytes), _mm512_set1_epi32(static_cast<int>(8 * ch))));
    }
    v = _mm512_xor_si512(_mm512_permutexvar_epi8(pack, v), flip);
    if (c * (n - i) >= 64) {
      _mm512_storeu_si512(dst + c * i, v);
    } else {
      const int64_t bytes = left * c;
      _mm512_mask_storeu_epi8(dst + c * i, bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1, v);
    }
  }
}

// Copies V bytes (one vector): a window row of kw * c <= V bytes and what follows it.
template <int V>
ORKNN_VNNI inline void copy_vector(const uint8_t* s, uint8_t* d) {
  if constexpr (V == 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  else if constexpr (V == 32)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
  else _mm512_storeu_si512(d, _mm512_loadu_si512(s));
}

class StemInt8 : public Kernel {
 public:
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kEach; }
  LayoutFit layout_fit(const Graph&, const Node&) const override { return LayoutFit::kBlockedOnly; }

  Status prepare(const KernelContext& ctx) override {
    if (!stem_geometry(*ctx.graph, *ctx.node, &geo_))
      return ORKNN_ERR(kFail, "Conv '%s': not a convolution this kernel handles", ctx.node->name.c_str());
    if (!ctx.output_blocked(0))
      return ORKNN_ERR(kFail, "Conv '%s': the output must be channels-last", ctx.node->name.c_str());
    in_nhwc_ = ctx.input_blocked(0);
    const QuantScalar qx = per_tensor(ctx.in_tensor(0));
    const Int8Output out = int8_output(qx.scale, ctx.in_tensor(1).quant, ctx.out_tensor(0), ctx.node->attrs, geo_.oc);
    const int8_t* w = ctx.in<int8_t>(1);
    const int64_t taps = geo_.kh * geo_.kw;
    const uint8_t zp_u8 = static_cast<uint8_t>(qx.zp + 128);
    nhwc_.init(geo_.row(), geo_.oc,
               compensations(w, geo_.oc, geo_.c * taps, ctx.has_input(2) ? ctx.in<int32_t>(2) : nullptr, qx.zp),
               out);
    for (int64_t o = 0; o < geo_.oc; ++o)
      for (int64_t ch = 0; ch < geo_.c; ++ch)
        for (int64_t t = 0; t < taps; ++t) nhwc_.set_weight(o, t * geo_.c + ch, w[(o * geo_.c + ch) * taps + t]);
    // The borders keep zp_x ^ 0x80 from here on; run() rewrites the image inside them. + 64: the
    // window copies read up to one vector past a row.
    padded_.assign(static_cast<size_t>(geo_.batch * geo_.hp * geo_.wp * geo_.c + 64), zp_u8);
    for (int j = 0; j < 64; ++j)
      pack_index_[j] = static_cast<uint8_t>(j < 16 * geo_.c ? 4 * (j / geo_.c) + j % geo_.c : 0);
    slots_ = thread_slots(ctx.num_threads);
    row_bytes_ = nhwc_row_bytes(geo_.row()) + 64;  // the last copy of a job writes past its rows
    rows_.assign(static_cast<size_t>(slots_) * row_bytes_ + 64, 0);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    const int64_t rows = geo_.batch * geo_.h;
    parallel_ranges(rows, threads_for(rows * geo_.w, kMinPassElementsPerThread, ctx.num_threads), [&](int64_t r0, int64_t r1, int) {
      for (int64_t r = r0; r < r1; ++r) copy_image_row(x, r / geo_.h, r % geo_.h);
    });
    const int64_t window_row = geo_.kw * geo_.c;
    auto product = [&](auto vector_bytes) {
      constexpr int V = decltype(vector_bytes)::value;
      run_nhwc_product(nhwc_, geo_.batch * geo_.oh * geo_.ow, ctx.num_threads, slots_, rows_.data(), row_bytes_,
                       [&](int64_t p0, int64_t np, uint8_t* xu) { gather_windows<V>(p0, np, xu); }, ctx.out<int8_t>(0));
    };
    if (window_row <= 16) product(std::integral_constant<int, 16>{});
    else if (window_row <= 32) product(std::integral_constant<int, 32>{});
    else product(std::integral_constant<int, 64>{});
  }

 private:
  StemGeometry geo_;
  bool in_nhwc_ = false;
  NhwcPw nhwc_;
  std::vector<uint8_t> padded_;  // [batch][hp][wp][c] u8
  uint8_t pack_index_[64] = {};  // nchw_row_to_u8: byte j of 16 packed pixels <- byte 4 (j / c) + j % c
  int slots_ = 1;
  size_t row_bytes_ = 0;
  std::vector<uint8_t> rows_;  // per thread slot: one job's window rows

  // Input row iy of image b into the padded buffer (columns past wp are never read).
  void copy_image_row(const int8_t* x, int64_t b, int64_t iy) {
    const int64_t py = iy + geo_.pt;
    const int64_t n = std::min(geo_.w, geo_.wp - geo_.pl);
    if (py >= geo_.hp || n <= 0) return;
    uint8_t* dst = padded_.data() + ((b * geo_.hp + py) * geo_.wp + geo_.pl) * geo_.c;
    if (!in_nhwc_)
      return nchw_row_to_u8(x + (b * geo_.c * geo_.h + iy) * geo_.w, geo_.c, geo_.h * geo_.w, n, pack_index_, dst);
    x86::int8_to_u8(x + (b * geo_.h + iy) * geo_.w * geo_.c, n * geo_.c, dst);
  }

  // The windows of output pixels [p0, p0 + np) (all images, row-major) as rows of geo_.row()
  // bytes: window row ky of a pixel is kw * c contiguous bytes of the padded image. Each copy
  // writes V bytes; the next one (or the next pixel's) overwrites what lies past kw * c, and the
  // bytes between kh * kw * c and the row's end meet zero weights.
  template <int V>
  ORKNN_VNNI void gather_windows(int64_t p0, int64_t np, uint8_t* xu) const {
    const int64_t per_image = geo_.oh * geo_.ow, row = geo_.row(), window_row = geo_.kw * geo_.c;
    const int64_t line = geo_.wp * geo_.c;
    int64_t b = p0 / per_image, oy = (p0 % per_image) / geo_.ow, ox = p0 % geo_.ow;
    for (int64_t p = 0; p < np; ++p, xu += row) {
      const uint8_t* src = padded_.data() + ((b * geo_.hp + oy * geo_.sh) * geo_.wp + ox * geo_.sw) * geo_.c;
      for (int64_t ky = 0; ky < geo_.kh; ++ky) copy_vector<V>(src + ky * line, xu + ky * window_row);
      if (++ox == geo_.ow) {
        ox = 0;
        if (++oy == geo_.oh) oy = 0, ++b;
      }
    }
  }
};

}  // namespace

// Tests: the smallest image (pixels) the NCHW path is chosen for (LayoutFit); < 16 restores the
// default. Returns the previous value. Call before kernels are selected.
int64_t x86_pointwise_int8_set_min_pixels(int64_t pixels) {
  const int64_t previous = g_min_pixels;
  g_min_pixels = pixels < 16 ? 256 : pixels;
  return previous;
}

ORKNN_REGISTER_KERNEL(Conv, "x86_pw_int8", kPrioritySpecialized, supports_pw_int8, PointwiseInt8);
ORKNN_REGISTER_KERNEL(Conv, "x86_stem_int8", kPrioritySpecialized, supports_stem_int8, StemInt8);

}  // namespace orknn
