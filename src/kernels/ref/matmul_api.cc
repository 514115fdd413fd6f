// The matmul API's reference engine (kernels/matmul_engine.h): a scalar kernel that serves every
// type, layout and quantisation of rknn_matmul_api.h, the oracle the faster engines are tested
// against. Integer operands are summed exactly in int32 (per group for per-group B, each group's
// sum scaled by its B scale in float, in group order); float operands in fp32 with eight lanes
// added in a fixed tree, so the result does not depend on the thread count.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/fp16.h"
#include "kernels/kernel.h"
#include "kernels/matmul_engine.h"
#include "kernels/parallel.h"

namespace orknn {
namespace {

class RefMatmulEngine : public MatmulEngine {
 public:
  explicit RefMatmulEngine(const MatmulProblem& p) : p_(p) {}

  Status run(size_t shape, void* const data[3], const MatmulQuant quant[3], int threads, bool* handled) override {
  *handled = true;
  const MatmulTypeInfo& types_ = p_.types;
  const rknn_matmul_info& info_ = p_.info;
  const int M = p_.shapes[shape].M, K = p_.shapes[shape].K, N = p_.shapes[shape].N;
  const MatmulTiles& t = p_.tiles;
  const int acl = info_.AC_layout, bl = info_.B_layout;
  const bool int_a = is_int(types_.a), int_b = is_int(types_.b);
  const int qtype = info_.B_quant_type;
  const int gs = (int_b && is_per_group(qtype)) ? info_.group_size : K;
  const int groups = K / gs;
  const bool per_ch = qtype != RKNN_QUANT_TYPE_PER_LAYER_SYM && qtype != RKNN_QUANT_TYPE_PER_LAYER_ASYM;
  auto bq = [&](int n, int g) -> int { return !int_b || !per_ch ? 0 : (gs == K ? n : n * groups + g); };
  const float sa = quant[0].scale[0];
  const int zpa = quant[0].zp[0];
  const float sc = quant[2].scale[0];
  const int zpc = quant[2].zp[0];

  // Decode A and B (B transposed to [N][K]) into contiguous working copies: int16 with the zero point
  // removed for integer operands, fp32 for fp16 (and for integer B under an fp16 A, dequantised).
  std::vector<int16_t> ai;
  std::vector<float> af;
  if (int_a) {
    ai.resize(static_cast<size_t>(M) * K);
    for (int m = 0; m < M; ++m)
      for (int k = 0; k < K; ++k)
        ai[static_cast<size_t>(m) * K + k] = static_cast<int16_t>(read_int(types_.a, data[0], a_index(acl, t, M, K, m, k)) - zpa);
  } else {
    af.resize(static_cast<size_t>(M) * K);
    for (int m = 0; m < M; ++m)
      for (int k = 0; k < K; ++k) af[static_cast<size_t>(m) * K + k] = read_f16(data[0], a_index(acl, t, M, K, m, k));
  }
  const bool float_b = !int_a;  // an fp16 A multiplies a float (possibly dequantised) B
  const bool byte_b = types_.b == MmElem::kI8;
  const size_t es = byte_b ? 1 : 2;  // element size of int8/fp16 B (int4 takes the generic path)

  // Copies raw B elements of columns [c0, c1) into rows raw[(n - c0) * K + k]: contiguous runs for
  // TP_NORM and NATIVE (subK values per run), a cache-blocked transpose for NORM.
  const size_t kp = static_cast<size_t>(K) + 32;  // raw row stride: breaks power-of-two cache aliasing
  auto gather_raw = [&](int c0, int c1, uint8_t* raw) {
    const uint8_t* src = static_cast<const uint8_t*>(data[1]);
    if (bl == RKNN_MM_LAYOUT_TP_NORM) {
      for (int n = c0; n < c1; ++n) std::memcpy(raw + static_cast<size_t>(n - c0) * kp * es, src + static_cast<size_t>(n) * K * es, K * es);
    } else if (bl == RKNN_MM_LAYOUT_NATIVE) {
      for (int n = c0; n < c1; ++n)
        for (int k = 0; k < K; k += t.b_subk)
          std::memcpy(raw + (static_cast<size_t>(n - c0) * kp + k) * es, src + b_index(bl, t, K, N, k, n) * es, t.b_subk * es);
    } else if (byte_b) {
      for (int k = 0; k < K; ++k) {
        const uint8_t* row = src + static_cast<size_t>(k) * N;
        for (int n = c0; n < c1; ++n) raw[static_cast<size_t>(n - c0) * kp + k] = row[n];
      }
    } else {
      uint16_t* r16 = reinterpret_cast<uint16_t*>(raw);
      for (int k = 0; k < K; ++k) {
        const uint16_t* row = reinterpret_cast<const uint16_t*>(src) + static_cast<size_t>(k) * N;
        for (int n = c0; n < c1; ++n) r16[static_cast<size_t>(n - c0) * kp + k] = row[n];
      }
    }
  };
  // Decodes columns [c0, c1) of B into rows of bi (int16, zero point removed) or bf (fp32; integer B
  // dequantised with its scale).
  auto decode_b = [&](int c0, int c1, std::vector<uint8_t>& raw, std::vector<int16_t>& bi, std::vector<float>& bf) {
    const size_t rows = static_cast<size_t>(c1 - c0) * K;
    if (float_b) bf.resize(rows);
    else bi.resize(rows);
    if (types_.b == MmElem::kI4) {
      for (int n = c0; n < c1; ++n)
        for (int k = 0; k < K; ++k) {
          const size_t dst = static_cast<size_t>(n - c0) * K + k;
          const int qi = bq(n, k / gs);
          const int v = read_int(MmElem::kI4, data[1], b_index(bl, t, K, N, k, n)) - quant[1].zp[qi];
          if (float_b) bf[dst] = quant[1].scale[qi] * static_cast<float>(v);
          else bi[dst] = static_cast<int16_t>(v);
        }
      return;
    }
    raw.resize(static_cast<size_t>(c1 - c0) * kp * es);
    gather_raw(c0, c1, raw.data());
    for (int n = c0; n < c1; ++n) {
      const size_t row = static_cast<size_t>(n - c0) * K;
      if (!byte_b) {
        fp16_to_fp32(reinterpret_cast<const uint16_t*>(raw.data()) + static_cast<size_t>(n - c0) * kp, &bf[row], K);
        continue;
      }
      const int8_t* r8 = reinterpret_cast<const int8_t*>(raw.data()) + static_cast<size_t>(n - c0) * kp;
      for (int g = 0; g < groups; ++g) {
        const int qi = bq(n, g);
        const int zp = quant[1].zp[qi];
        const float sb = quant[1].scale[qi];
        const int k0 = g * gs;
        if (float_b)
          for (int k = k0; k < k0 + gs; ++k) bf[row + k] = sb * static_cast<float>(r8[k] - zp);
        else
          for (int k = k0; k < k0 + gs; ++k) bi[row + k] = static_cast<int16_t>(r8[k] - zp);
      }
    }
  };

  const CStore cs{types_.c, acl, &t, M, N, sc, zpc, data[2]};
  auto store = [&](int m, int n, float real, int32_t exact) { store_c(cs, m, n, real, exact); };

  // Columns are processed in chunks small enough that the decoded B rows stay in cache while every
  // row of A passes over them. Each thread's buffers are sized before the parallel region, so
  // nothing is allocated (nothing can throw) inside it.
  const int chunk = float_b ? 32 : 64;
  struct Buffers {
    std::vector<uint8_t> raw;
    std::vector<int16_t> bi;
    std::vector<float> bf;
  };
  // K is a multiple of 8 on every platform (alignment >= 16), which the float lanes rely on.
  const int nthreads = std::max(1, std::min(threads, N / 8));
  std::vector<Buffers> buffers(static_cast<size_t>(nthreads));
  for (Buffers& b : buffers) {
    b.raw.reserve(static_cast<size_t>(chunk) * kp * es);
    if (float_b) b.bf.reserve(static_cast<size_t>(chunk) * K);
    else b.bi.reserve(static_cast<size_t>(chunk) * K);
  }
  auto compute = [&](int n0, int n1, Buffers& buf) {
    for (int c0 = n0; c0 < n1; c0 += chunk) {
      const int c1 = std::min(n1, c0 + chunk);
      decode_b(c0, c1, buf.raw, buf.bi, buf.bf);
      for (int n = c0; n < c1; ++n)
        for (int m = 0; m < M; ++m) {
          if (float_b) {
            const float* a = &af[static_cast<size_t>(m) * K];
            const float* b = &buf.bf[static_cast<size_t>(n - c0) * K];
            float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int k = 0; k < K; k += 8)
              for (int j = 0; j < 8; ++j) lane[j] += a[k + j] * b[k + j];
            const float acc = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
            store(m, n, acc, 0);
          } else {
            const int16_t* a = &ai[static_cast<size_t>(m) * K];
            const int16_t* b = &buf.bi[static_cast<size_t>(n - c0) * K];
            int32_t total = 0;
            float real = 0.0f;
            for (int g = 0; g < groups; ++g) {
              int32_t part = 0;
              const int k0 = g * gs;
              for (int k = k0; k < k0 + gs; ++k) part += static_cast<int32_t>(a[k]) * b[k];
              total += part;
              real += static_cast<float>(part) * quant[1].scale[bq(n, g)];
            }
            store(m, n, sa * real, total);
          }
        }
    }
  };
  parallel_ranges(
      N, nthreads, [&](int64_t b, int64_t e, int slot) { compute(static_cast<int>(b), static_cast<int>(e), buffers[slot]); }, 8);
  return Status::Ok();
  }

 private:
  MatmulProblem p_;
};

std::unique_ptr<MatmulEngine> create_ref_engine(const MatmulProblem& p) { return std::make_unique<RefMatmulEngine>(p); }

}  // namespace

ORKNN_REGISTER_MATMUL_ENGINE("ref", kPriorityReference, create_ref_engine);

}  // namespace orknn
