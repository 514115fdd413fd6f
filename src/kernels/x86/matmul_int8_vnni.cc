// INT8 MatMul of two activations ("x86_matmul_int8_act"): attention's Q x K^T and P x V, batched
// with numpy broadcasting, on AVX-512 VNNI. The oneDNN INT8 MatMul (onednn/matmul_int8.cc) takes a
// constant B only (it reorders the weights once at prepare), so these nodes ran on the scalar
// reference kernel: INT8 Whisper was 6x slower than fp16 (issue 28).
//
// Per batch, B ([K, N] bytes of an activation) is packed at run time into the thread's scratch as
// vpdpbusd's u8 operand: panels of 64 columns, [K/4][64][4] bytes of b + 128 (x86::pack_tile, the
// pointwise convolution's packing; rows past K hold 128 = b 0). A stays as it is: each 4-byte group
// of an A row is broadcast as the s8 operand (rows whose K is not a multiple of 4 are first copied
// into zero-padded rows). A register tile of up to 6 rows x 64 columns accumulates over all of K,
// then is requantized in registers and stored.
//
// Numerics (bit-exact with ref_int8, docs/numerics.md "MatMul of two activations"): with
// bu = b + 128 and zbu = zp_b + 128,
//   acc = sum (a - zp_a)(b - zp_b) = sum a * bu - zbu * sum_k a - zp_a * sum_k bu + K * zp_a * zbu
// in wrap-around int32: the vpdpbusd sum plus a per-row term (- zbu * sum a) and a per-column term,
// exact because infer bounds the true accumulator inside int32. Then x86::requant16_float_bounds,
// the operations of x86::requant_one in its order.
//
// Handles: quantized MatMul, B not constant (constant B is the fully-connected kernels'), A, B and Y
// per tensor, any ranks (1-D operands as numpy), fused Relu/Clip. Needs AVX-512 F/BW/VL and VNNI;
// on other CPUs the node stays on the reference kernel.
// GCC 12 reports the _mm512_undefined_*() placeholders inside its own AVX-512 intrinsics as "may
// be" or, once inlined into the register tile, "is used uninitialized" (false positives); the
// pragmas must precede the header to cover them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/ref/matrix_product.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/int8_pack.h"
#include "kernels/x86/int8_requant.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

#define ORKNN_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

constexpr int64_t kPanel = x86::kPackTilePixels;  // columns per packed panel: 4 vectors of 16
constexpr int kTileRows = 6;                      // A rows per register tile (6 x 4 accumulators)

bool supports_matmul_int8_act(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512vnni() || !is_quantized_node(g, n)) return false;
  if (n.op != OpId::MatMul || n.inputs.size() != 2 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  const Tensor* a = g.input(n, 0);
  const Tensor* b = g.input(n, 1);
  if (!a || !b || b->is_const() || a->shape.empty() || b->shape.empty()) return false;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!is_q8_per_tensor(*a) || !is_q8_per_tensor(*b) || !is_q8_per_tensor(y)) return false;
  const FusedAct act = read_fused_act(n.attrs).act;
  return act == FusedAct::kNone || act == FusedAct::kRelu || act == FusedAct::kClip;
}

struct Epilogue {
  __m512 mult, lo, hi;  // M; output bounds minus zp_y (requant16_float_bounds)
  __m512i zp;
};

// Rows a[0..R) (row stride lda, 4 * k4 bytes each, zero past K) x the packed panel bp ([k4][64][4]
// u8) -> y rows (stride ldy), columns [0, ncols) of the panel. Accumulators start at the column
// terms colc; the row terms rowc[r] are added in the epilogue.
template <int R, int V>
ORKNN_VNNI void mm_tile(const int8_t* a, int64_t lda, const uint8_t* bp, int64_t k4, const int32_t* colc,
                        const int32_t* rowc, const Epilogue& e, int8_t* y, int64_t ldy, int64_t ncols) {
  __m512i acc[R][V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const __m512i c = _mm512_loadu_si512(colc + 16 * v);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) acc[r][v] = c;
  }
  for (int64_t k = 0; k < k4; ++k) {
    __m512i b[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) b[v] = _mm512_loadu_si512(bp + k * 4 * kPanel + 64 * v);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      int32_t d;
      std::memcpy(&d, a + r * lda + 4 * k, 4);
      const __m512i x = _mm512_set1_epi32(d);
      // acc += bu (u8) . a (s8) per 4-byte group. Inline assembly, so that GCC 12 keeps each
      // accumulator in its register across the loop (with the intrinsic it copied them each step,
      // as noted in pointwise_int8_vnni.cc).
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) asm("vpdpbusd %2, %1, %0" : "+v"(acc[r][v]) : "v"(b[v]), "v"(x));
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    const __m512i rc = _mm512_set1_epi32(rowc[r]);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t left = ncols - 16 * v;
      const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1u);
      const __m512i q = x86::requant16_float_bounds(acc[r][v], rc, e.mult, e.lo, e.hi, e.zp);
      _mm_mask_storeu_epi8(y + r * ldy + 16 * v, m, _mm512_cvtepi32_epi8(q));
    }
  }
}

using TileFn = void (*)(const int8_t*, int64_t, const uint8_t*, int64_t, const int32_t*, const int32_t*,
                        const Epilogue&, int8_t*, int64_t, int64_t);

template <int R>
constexpr TileFn tile_for(int v) {
  return v == 1 ? mm_tile<R, 1> : v == 2 ? mm_tile<R, 2> : v == 3 ? mm_tile<R, 3> : mm_tile<R, 4>;
}

// kTiles[R - 1][V - 1]
const TileFn kTiles[kTileRows][4] = {
    {tile_for<1>(1), tile_for<1>(2), tile_for<1>(3), tile_for<1>(4)},
    {tile_for<2>(1), tile_for<2>(2), tile_for<2>(3), tile_for<2>(4)},
    {tile_for<3>(1), tile_for<3>(2), tile_for<3>(3), tile_for<3>(4)},
    {tile_for<4>(1), tile_for<4>(2), tile_for<4>(3), tile_for<4>(4)},
    {tile_for<5>(1), tile_for<5>(2), tile_for<5>(3), tile_for<5>(4)},
    {tile_for<6>(1), tile_for<6>(2), tile_for<6>(3), tile_for<6>(4)},
};

// Sum of the int8 values a[0..n): vpsadbw of a ^ 0x80 (exact), minus 128 n.
ORKNN_VNNI int64_t sum_s8(const int8_t* a, int64_t n) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80)), z = _mm512_setzero_si512();
  __m512i s = z;
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 m = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    s = _mm512_add_epi64(s, _mm512_sad_epu8(_mm512_maskz_mov_epi8(m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, a + i), flip)), z));
  }
  alignas(64) int64_t lanes[8];
  _mm512_store_si512(lanes, s);
  int64_t t = 0;
  for (int64_t v : lanes) t += v;
  return t - 128 * n;
}

// Packs B ([k][n] int8, row stride n) into panels and writes colsum[j] = sum_k (b[k][j] + 128)
// over the k real rows (the padding rows hold 128 each and are taken out).
ORKNN_VNNI void pack_b(const int8_t* b, int64_t k, int64_t n, int64_t k4, uint8_t* packed, int32_t* colsum) {
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i pad = _mm512_set1_epi32(static_cast<int32_t>(128 * (4 * k4 - k)));
  for (int64_t j0 = 0, p = 0; j0 < n; j0 += kPanel, ++p) {
    uint8_t* dst = packed + p * k4 * 4 * kPanel;
    x86::pack_tile(b, k, n, j0, std::min(kPanel, n - j0), dst);
    __m512i s[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int64_t q = 0; q < k4; ++q)
      for (int v = 0; v < 4; ++v) s[v] = _mm512_dpbusd_epi32(s[v], _mm512_loadu_si512(dst + q * 4 * kPanel + 64 * v), ones);
    for (int v = 0; v < 4; ++v) _mm512_storeu_si512(colsum + j0 + 16 * v, _mm512_sub_epi32(s[v], pad));
  }
}

class MatMulInt8Act : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    if (!supports_matmul_int8_act(*ctx.graph, *ctx.node))
      return ORKNN_ERR(kFail, "MatMul '%s': not a node x86_matmul_int8_act handles", ctx.node->name.c_str());
    shape_ = read_matmul_shape(ctx);
    m_ = shape_.mat.m;
    k_ = shape_.mat.k;
    n_ = shape_.mat.n;
    k4_ = (k_ + 3) / 4;
    panels_ = (n_ + kPanel - 1) / kPanel;
    const QuantScalar qa = per_tensor(ctx.in_tensor(0)), qb = per_tensor(ctx.in_tensor(1));
    const Int8Output out = int8_output(qa.scale, ctx.in_tensor(1).quant, ctx.out_tensor(0), ctx.node->attrs, 1);
    mult_ = out.mult[0];
    zp_y_ = out.zp_y;
    lo_ = static_cast<float>(out.clamp.lo - out.zp_y);
    hi_ = static_cast<float>(out.clamp.hi - out.zp_y);
    // The terms of the file comment, modulo 2^32.
    const uint32_t zbu = static_cast<uint32_t>(qb.zp + 128), za = static_cast<uint32_t>(qa.zp);
    row_factor_ = 0u - zbu;
    col_factor_ = 0u - za;
    col_const_ = static_cast<uint32_t>(k_) * za * zbu;
    offsets_.clear();
    shape_.for_each_batch([&](int64_t ao, int64_t bo, int64_t yo) { offsets_.push_back({ao, bo, yo}); });
    // Row blocks per batch: whole batches per thread when there are enough of them, else the rows
    // split so that every thread gets work (each packs the batch's B itself).
    const int nt = std::max(1, ctx.num_threads);
    const int64_t batches = static_cast<int64_t>(offsets_.size());
    const int64_t splits = batches >= nt ? 1
                                         : std::max<int64_t>(1, std::min<int64_t>((nt + batches - 1) / std::max<int64_t>(1, batches),
                                                                                  (m_ + kTileRows - 1) / kTileRows));
    rows_per_job_ = std::max<int64_t>(kTileRows, ((m_ + splits - 1) / splits + kTileRows - 1) / kTileRows * kTileRows);
    // Per thread slot: packed B, column sums (whole panels), row terms, and zero-padded A rows when
    // K is not a multiple of 4.
    packed_bytes_ = align64(static_cast<size_t>(panels_ * k4_ * 4 * kPanel));
    colsum_bytes_ = align64(static_cast<size_t>(panels_ * kPanel) * sizeof(int32_t));
    rowc_bytes_ = align64(static_cast<size_t>(rows_per_job_) * sizeof(int32_t));
    apad_bytes_ = k_ % 4 ? align64(static_cast<size_t>(rows_per_job_ * k4_ * 4)) : 0;
    slot_bytes_ = packed_bytes_ + colsum_bytes_ + rowc_bytes_ + apad_bytes_;
    slots_ = thread_slots(ctx.num_threads);
    request_scratch(ctx, slot_bytes_ * static_cast<size_t>(slots_), [this](void* p) { scratch_ = static_cast<uint8_t*>(p); },
                    &own_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* a = ctx.in<int8_t>(0);
    const int8_t* b = ctx.in<int8_t>(1);
    int8_t* y = ctx.out<int8_t>(0);
    if (m_ == 0 || n_ == 0) return;
    const int64_t blocks = (m_ + rows_per_job_ - 1) / rows_per_job_;
    const int64_t jobs = static_cast<int64_t>(offsets_.size()) * blocks;
    const int nt = std::min(threads_for(jobs * rows_per_job_ * n_ * k_, int64_t{1} << 18, ctx.num_threads), slots_);
    parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int slot) {
      uint8_t* s = scratch_ + static_cast<size_t>(slot) * slot_bytes_;
      int64_t packed_from = -1;  // B offset whose panels the slot holds
      for (int64_t j = j0; j < j1; ++j) {
        const Offsets& o = offsets_[static_cast<size_t>(j / blocks)];
        if (o.b != packed_from) {
          pack_b(b + o.b, k_, n_, k4_, s, reinterpret_cast<int32_t*>(s + packed_bytes_));
          finish_column_terms(reinterpret_cast<int32_t*>(s + packed_bytes_));
          packed_from = o.b;
        }
        const int64_t r0 = (j % blocks) * rows_per_job_, rows = std::min(rows_per_job_, m_ - r0);
        rows_job(a + o.a + r0 * k_, rows, s, y + o.y + r0 * n_);
      }
    });
  }

 private:
  struct Offsets {
    int64_t a, b, y;
  };

  static size_t align64(size_t v) { return (v + 63) / 64 * 64; }

  // colsum[j] = sum_k bu -> the column term K * zp_a * zbu - zp_a * sum_k bu.
  void finish_column_terms(int32_t* colsum) const {
    for (int64_t j = 0; j < panels_ * kPanel; ++j)
      colsum[j] = static_cast<int32_t>(col_const_ + col_factor_ * static_cast<uint32_t>(colsum[j]));
  }

  // Rows [0, rows) of A (row stride K) times the slot's packed B into y (row stride N).
  ORKNN_VNNI void rows_job(const int8_t* a, int64_t rows, uint8_t* s, int8_t* y) const {
    const uint8_t* packed = s;
    const int32_t* colc = reinterpret_cast<const int32_t*>(s + packed_bytes_);
    int32_t* rowc = reinterpret_cast<int32_t*>(s + packed_bytes_ + colsum_bytes_);
    const int8_t* ar = a;
    int64_t lda = k_;
    if (apad_bytes_) {  // rows of 4 * k4 bytes, zero past K: the broadcast groups read no neighbour
      int8_t* pad = reinterpret_cast<int8_t*>(s + packed_bytes_ + colsum_bytes_ + rowc_bytes_);
      lda = 4 * k4_;
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(pad + r * lda, a + r * k_, static_cast<size_t>(k_));
        std::memset(pad + r * lda + k_, 0, static_cast<size_t>(lda - k_));
      }
      ar = pad;
    }
    for (int64_t r = 0; r < rows; ++r)
      rowc[r] = static_cast<int32_t>(row_factor_ * static_cast<uint32_t>(sum_s8(a + r * k_, k_)));
    Epilogue e;
    e.mult = _mm512_set1_ps(mult_);
    e.lo = _mm512_set1_ps(lo_);
    e.hi = _mm512_set1_ps(hi_);
    e.zp = _mm512_set1_epi32(zp_y_);
    for (int64_t p = 0; p < panels_; ++p) {
      const int64_t j0 = p * kPanel, ncols = std::min(kPanel, n_ - j0);
      const int vecs = static_cast<int>((ncols + 15) / 16);
      const uint8_t* bp = packed + p * k4_ * 4 * kPanel;
      for (int64_t r = 0; r < rows; r += kTileRows) {
        const int nr = static_cast<int>(std::min<int64_t>(kTileRows, rows - r));
        kTiles[nr - 1][vecs - 1](ar + r * lda, lda, bp, k4_, colc + j0, rowc + r, e, y + r * n_ + j0, n_, ncols);
      }
    }
  }

  MatMulShape shape_;
  int64_t m_ = 0, k_ = 0, n_ = 0, k4_ = 0, panels_ = 0, rows_per_job_ = 0;
  float mult_ = 1.f, lo_ = -128.f, hi_ = 127.f;
  int32_t zp_y_ = 0;
  uint32_t row_factor_ = 0, col_factor_ = 0, col_const_ = 0;
  std::vector<Offsets> offsets_;
  size_t packed_bytes_ = 0, colsum_bytes_ = 0, rowc_bytes_ = 0, apad_bytes_ = 0, slot_bytes_ = 0;
  int slots_ = 1;
  uint8_t* scratch_ = nullptr;
  std::vector<ScratchLine> own_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(MatMul, "x86_matmul_int8_act", kPriorityGeneral, supports_matmul_int8_act, MatMulInt8Act);

}  // namespace orknn
