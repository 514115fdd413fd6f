// The matmul API's oneDNN engine (kernels/matmul_engine.h).
// Integer A (types 2, 3, 9, 10, 11, 15): A enters oneDNN as u8 (a + 128, plus one extra row of
// ones whose products are the column sums of B), B as s8 (int8 NORM/TP_NORM straight from the
// user's memory, otherwise decoded/relaid into a context buffer), and the primitive writes the
// raw int32 sums S = sum_k (a + 128) * b. With zU = zA + 128:
//   sum_k (a - zA)(b - zB) = S - zB * rowsum_u8(A)[m] - zU * colsum(B)[n] + K * zU * zB,
// evaluated in int64. |S| <= K * 255 * 128 and the true sum <= K * 255 * 255 (< 2^31 for
// K <= 10240), so nothing overflows and the result is the reference kernel's exact int32 sum; the
// epilogue (store_c) is the reference's. Why u8 and not s8 sources: with an s8 source oneDNN 2.6
// applies its +128 compensation in float32 (inexact above 2^24), see kernels/onednn/int8_common.h;
// only implementations that keep the int32 accumulators exact are accepted (select_exact_int8_impl).
//
// fp16 A (types 1, 4-8, 12): A decoded to fp32 (exact), B decoded (fp16, exact) or dequantised
// (sB * (b - zB) in fp32, as the reference) to fp32, then an f32 oneDNN matmul. Differs from the
// reference only in the fp32 summation order.
//
// Per-group B with an integer A: the same primitive runs once per group on dense K slices of A and
// B (group-major buffers; NORM B's row blocks in place), each partial sum corrected with the
// slice's row/column sums, and the epilogue accumulates
// total += part_g and real += float(part_g) * sB_g in group order, as the reference does.
// Nothing is cached across runs except primitives and buffers: B may change at any time.

// Shapes may differ in M, K and N (a per-channel or per-group B keeps K and N): the buffers are
// sized for the largest, and each shape has its primitives, built on first use: one for a single
// thread, one for the context's thread count (rebuilt when that changes).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "common/log.h"
#include "kernels/kernel.h"
#include "kernels/matmul_engine.h"
#include "kernels/onednn/int8_common.h"
#include "kernels/onednn/onednn_common.h"
#include "kernels/parallel.h"

namespace orknn {
namespace {

// count int4 values starting at the even element index `first` -> int8.
void decode_i4_run(const uint8_t* src, size_t first, size_t count, int8_t* dst) {
  const uint8_t* p = src + first / 2;
  for (size_t j = 0; j + 1 < count; j += 2) {
    const uint8_t byte = p[j / 2];
    dst[j] = static_cast<int8_t>(static_cast<int8_t>(byte << 4) >> 4);
    dst[j + 1] = static_cast<int8_t>(static_cast<int8_t>(byte) >> 4);
  }
  if (count & 1) dst[count - 1] = static_cast<int8_t>(static_cast<int8_t>(p[(count - 1) / 2] << 4) >> 4);
}

struct Buffers {
  bool int_a = false;
  bool b_in_place = false;  // int8 NORM/TP_NORM B: oneDNN reads the user's memory
  bool b_rows_k = true;     // B as seen by oneDNN is [K][N] (NORM) or [groups][N][gs] (TP_NORM, NATIVE)
  int gs = 0, groups = 1;        // int A, per-group B: K slices of gs rows, one primitive run each
  std::vector<uint8_t> a_u8;     // int A: [groups][M + 1][gs], a + 128; row M of each group is ones
  std::vector<int32_t> rowsum;   // int A: [groups][M] sums of (a + 128) over each K slice
  std::vector<int32_t> total;    // int A, groups > 1: [M][N] running int32 sum over groups
  std::vector<float> real;       // int A, groups > 1: [M][N] running sum_g float(part_g) * sB_g
  std::vector<float> a_f32;      // fp16 A: [M][K]
  std::vector<int8_t> b_s8;      // int A, B not in place: int4 decoded / NATIVE relaid out
  std::vector<float> b_f32;      // fp16 A: B decoded / dequantised
  std::vector<int32_t> acc_s32;  // [M + 1][N]; row M holds colsum(B)
  std::vector<float> acc_f32;    // [M][N]
};

struct Prim {
  int threads = 0;      // thread count it was built for; 0: not built yet
  bool usable = false;  // false: oneDNN has no suitable implementation (the next engine runs)
  dnnl::primitive prim;
  dnnl::memory src, wei, dst;
  std::vector<dnnl_exec_arg_t> args;  // prebuilt: execution allocates nothing on our side
  int scratch_arg = -1;
  std::string impl;
};

class OnednnMatmulEngine : public MatmulEngine {
 public:
  explicit OnednnMatmulEngine(const MatmulProblem& p) : p_(p) {}

  Status init() {
    Buffers& f = f_;
    f.int_a = is_int(p_.types.a);
    f.b_rows_k = p_.info.B_layout == RKNN_MM_LAYOUT_NORM;
    const bool per_group = f.int_a && is_per_group(p_.info.B_quant_type);
    f.gs = per_group ? p_.info.group_size : 0;        // per-group B: K is the same in every shape
    f.groups = per_group ? p_.shapes[0].K / f.gs : 1;
    size_t mk1 = 0, mk = 0, kn = 0, m1n = 0, mn = 0, mg = 0;
    for (const rknn_matmul_shape& s : p_.shapes) {
      const size_t M = static_cast<size_t>(s.M), K = static_cast<size_t>(s.K), N = static_cast<size_t>(s.N);
      mk1 = std::max(mk1, (M + 1) * K);
      mk = std::max(mk, M * K);
      kn = std::max(kn, K * N);
      m1n = std::max(m1n, (M + 1) * N);
      mn = std::max(mn, M * N);
      mg = std::max(mg, M * static_cast<size_t>(f.groups));
    }
    if (f.int_a) {
      f.b_in_place = p_.types.b == MmElem::kI8 && p_.info.B_layout != RKNN_MM_LAYOUT_NATIVE &&
                     (f.b_rows_k || f.groups == 1);
      f.a_u8.resize(mk1);
      f.rowsum.resize(mg);
      f.acc_s32.resize(m1n);
      if (f.groups > 1) {
        f.total.resize(mn);
        f.real.resize(mn);
      }
      if (!f.b_in_place) f.b_s8.resize(kn);
    } else {
      f.a_f32.resize(mk);
      f.b_f32.resize(kn);
      f.acc_f32.resize(mn);
    }
    prims_.resize(2 * p_.shapes.size());
    try {
      stream_ = dnnl::stream(onednn::cpu_engine());
    } catch (const dnnl::error& e) {
      return ORKNN_ERR(kFail, "oneDNN stream creation failed: %s", e.what());
    }
    return Status::Ok();
  }

  Status run(size_t shape, void* const data[3], const MatmulQuant quant[3], int threads, bool* handled) override {
    *handled = false;
    Buffers& f = f_;
    Prim& p = prims_[2 * shape + (threads > 1 ? 1 : 0)];
    const int M = p_.shapes[shape].M, K = p_.shapes[shape].K, N = p_.shapes[shape].N;
    if (p.threads != threads) build_prim(p, M, K, N, threads);
    if (!p.usable) return Status::Ok();
    *handled = true;
    const int nt = threads;
    onednn::ScopedOmpThreads omp(nt);
    const MatmulTiles& t = p_.tiles;
    const int acl = p_.info.AC_layout, bl = p_.info.B_layout;
    const MmElem ea = p_.types.a, eb = p_.types.b;
    if (!f.int_a || f.groups == 1) f.gs = K;  // one K slice: all of this shape's K

  // ---- A ----
  if (f.int_a) {
    for (int m = 0; m < M; ++m) {
      // Group-major (dense K slices for oneDNN): element (m, k) of group g = k / gs at
      // [(g * (M + 1) + m) * gs + k % gs]; the same as [M + 1][K] when there is one group.
      for (int g = 0; g < f.groups; ++g) {
        uint8_t* row = &f.a_u8[(static_cast<size_t>(g) * (M + 1) + m) * f.gs];
        const int k0 = g * f.gs;
        if (ea == MmElem::kI8 && acl == RKNN_MM_LAYOUT_NORM) {
          const int8_t* src = static_cast<const int8_t*>(data[0]) + static_cast<size_t>(m) * K + k0;
          for (int k = 0; k < f.gs; ++k) row[k] = static_cast<uint8_t>(src[k] + 128);
        } else {
          for (int k = 0; k < f.gs; ++k)
            row[k] = static_cast<uint8_t>(read_int(ea, data[0], a_index(acl, t, M, K, m, k0 + k)) + 128);
        }
        int32_t sum = 0;
        for (int k = 0; k < f.gs; ++k) sum += row[k];
        f.rowsum[static_cast<size_t>(g) * M + m] = sum;
      }
    }
    for (int g = 0; g < f.groups; ++g)  // ones rows -> column sums of B
      std::memset(&f.a_u8[(static_cast<size_t>(g) * (M + 1) + M) * f.gs], 1, f.gs);
  } else {
    const uint16_t* a16 = static_cast<const uint16_t*>(data[0]);
    for (int m = 0; m < M; ++m) {
      float* row = &f.a_f32[static_cast<size_t>(m) * K];
      if (acl == RKNN_MM_LAYOUT_NORM) fp16_to_fp32(a16 + static_cast<size_t>(m) * K, row, K);
      else
        for (int k = 0; k < K; k += t.a_subk) fp16_to_fp32(a16 + a_index(acl, t, M, K, m, k), row + k, t.a_subk);
    }
  }

  // ---- B ----
  // Rows of the converted B: k for NORM ([K][N]), n otherwise ([groups][N][gs], i.e. [N][K] with
  // one group). Each row is a list of contiguous runs in the user's layout: one run for NORM, gs
  // long for TP_NORM, subK long for NATIVE (subK divides gs).
  const int nrows = f.b_rows_k ? K : N, rowlen = f.b_rows_k ? N : K;
  const int run_len = bl == RKNN_MM_LAYOUT_NATIVE ? t.b_subk : f.b_rows_k ? rowlen : f.gs;
  auto run_dst = [&](int r, int j) -> size_t {
    if (f.b_rows_k) return static_cast<size_t>(r) * rowlen + j;
    return (static_cast<size_t>(j / f.gs) * N + r) * f.gs + j % f.gs;
  };
  auto run_src = [&](int r, int j) -> size_t {  // linear source index of row r, element j (run start)
    if (bl == RKNN_MM_LAYOUT_NATIVE) return b_index(bl, t, K, N, j, r);
    return static_cast<size_t>(r) * rowlen + j;
  };
  if (f.int_a) {
    if (!f.b_in_place) {
      const uint8_t* src = static_cast<const uint8_t*>(data[1]);
      parallel_ranges(nrows, nt, [&](int64_t r0, int64_t r1, int) {
        for (int r = static_cast<int>(r0); r < r1; ++r)
          for (int j = 0; j < rowlen; j += run_len) {
            int8_t* dst = &f.b_s8[run_dst(r, j)];
            const size_t si = run_src(r, j);
            if (eb == MmElem::kI4) decode_i4_run(src, si, run_len, dst);
            else std::memcpy(dst, src + si, run_len);
          }
      });
    }
  } else {
    const int qtype = p_.info.B_quant_type;
    const bool per_ch = !is_per_layer(qtype);
    const int gs = is_per_group(qtype) ? p_.info.group_size : K;
    const int groups = K / gs;
    const float* bs = quant[1].scale.data();
    const int32_t* bz = quant[1].zp.data();
    parallel_ranges(nrows, nt, [&](int64_t r0, int64_t r1, int) {
      for (int r = static_cast<int>(r0); r < r1; ++r)
        for (int j = 0; j < rowlen; j += run_len) {
          float* dst = &f.b_f32[run_dst(r, j)];
          const size_t si = run_src(r, j);
          if (eb == MmElem::kF16) {
            fp16_to_fp32(static_cast<const uint16_t*>(data[1]) + si, dst, run_len);
            continue;
          }
          for (int e = 0; e < run_len; ++e) {
            const int k = f.b_rows_k ? r : j + e, n = f.b_rows_k ? j + e : r;
            const int qi = !per_ch ? 0 : (gs == K ? n : n * groups + k / gs);
            const int v = read_int(eb, data[1], si + e) - bz[qi];
            dst[e] = bs[qi] * static_cast<float>(v);
          }
        }
    });
  }

  auto execute = [&]() -> Status {
    const dnnl_status_t st =
        dnnl_primitive_execute(p.prim.get(), stream_.get(), static_cast<int>(p.args.size()), p.args.data());
    if (st != dnnl_success) return ORKNN_ERR(kFail, "oneDNN matmul execution failed (status %d)", static_cast<int>(st));
    dnnl_stream_wait(stream_.get());
    return Status::Ok();
  };

  // ---- oneDNN + epilogue ----
  const CStore cs{p_.types.c, acl, &t, M, N, quant[2].scale[0], quant[2].zp[0], data[2]};
  if (f.int_a) {
    const int32_t* acc = f.acc_s32.data();
    const int32_t* colsum = acc + static_cast<size_t>(M) * N;
    const bool per_ch = !is_per_layer(p_.info.B_quant_type);
    const int G = f.groups, gs = f.int_a && f.groups > 1 ? f.gs : K;
    const int64_t zu = static_cast<int64_t>(quant[0].zp[0]) + 128;
    const float sa = quant[0].scale[0];
    const bool exact_only = p_.types.c == MmElem::kI32;
    const float* bs = quant[1].scale.data();
    const int32_t* bz = quant[1].zp.data();
    int8_t* b_base = f.b_in_place ? static_cast<int8_t*>(data[1]) : f.b_s8.data();
    for (int g = 0; g < G; ++g) {
      // K slice g: A columns [g*gs, (g+1)*gs), B rows of the same range.
      p.src.set_data_handle(f.a_u8.data() + static_cast<size_t>(g) * (M + 1) * gs);
      p.wei.set_data_handle(b_base + static_cast<size_t>(g) * gs * N);  // [K][N] and [groups][N][gs] alike
      ORKNN_RETURN_IF_ERROR(execute());
      const int32_t* rs = &f.rowsum[static_cast<size_t>(g) * M];
      // part = sum over the slice of (a - zA)(b - zB), exact (see the comment at the top).
      parallel_ranges(M, nt, [&](int64_t m0, int64_t m1, int) {
      for (int m = static_cast<int>(m0); m < m1; ++m)
        for (int n = 0; n < N; ++n) {
          const int qi = !per_ch ? 0 : (G == 1 ? n : n * G + g);
          const int64_t zb = bz[qi];
          const size_t i = static_cast<size_t>(m) * N + n;
          const int32_t part = static_cast<int32_t>(static_cast<int64_t>(acc[i]) - zb * rs[m] - zu * colsum[n] +
                                                    static_cast<int64_t>(gs) * zu * zb);
          if (G == 1) {
            float real = 0.0f;  // the reference's expression, operation for operation
            if (!exact_only) real += static_cast<float>(part) * bs[qi];
            store_c(cs, m, n, sa * real, part);
            continue;
          }
          if (g == 0) {
            f.total[i] = 0;
            f.real[i] = 0.0f;
          }
          f.total[i] += part;
          if (!exact_only) f.real[i] += static_cast<float>(part) * bs[qi];
          if (g == G - 1) store_c(cs, m, n, sa * f.real[i], f.total[i]);
        }
      });
    }
  } else {
    ORKNN_RETURN_IF_ERROR(execute());
    const float* acc = f.acc_f32.data();
    parallel_ranges(M, nt, [&](int64_t m0, int64_t m1, int) {
      for (int m = static_cast<int>(m0); m < m1; ++m)
        for (int n = 0; n < N; ++n) store_c(cs, m, n, acc[static_cast<size_t>(m) * N + n], 0);
    });
  }
    return Status::Ok();
  }

 private:
  // Builds (or rebuilds for another thread count) the primitive of an M x K x N shape. A
  // configuration oneDNN cannot serve exactly/fast leaves p.usable false.
  void build_prim(Prim& p, int M, int K, int N, int threads) {
    using dnnl::memory;
    using dt = memory::data_type;
    Buffers& f = f_;
    p = Prim{};
    p.threads = threads;
    // K slice of gs rows (all of K unless per-group B with an integer A): A's slices are dense
    // (group-major buffer), and so are B's ([K][N] row blocks or [groups][N][gs]).
    const memory::dim n = N, rows = f.int_a ? M + 1 : M, ks = f.int_a && f.groups > 1 ? f.gs : K;
    try {
      onednn::ScopedOmpThreads omp(threads);
      const memory::desc src({rows, ks}, f.int_a ? dt::u8 : dt::f32, memory::format_tag::ab);
      const memory::desc wei({ks, n}, f.int_a ? dt::s8 : dt::f32, f.b_rows_k ? memory::dims{n, 1} : memory::dims{1, ks});
      const memory::desc dst({rows, n}, f.int_a ? dt::s32 : dt::f32, memory::format_tag::ab);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), onednn::user_scratchpad_attr(),
                                      onednn::cpu_engine());
      const bool ok = f.int_a ? onednn::select_exact_int8_impl(pd, ks * 255 * 128) : !onednn::is_reference_impl(pd);
      if (!ok) {
        ORKNN_LOGD("matmul M=%d K=%d N=%d: no suitable oneDNN implementation (%s); scalar kernel", M, K, N,
                   pd.impl_info_str());
        return;
      }
      p.impl = pd.impl_info_str();
      p.prim = dnnl::matmul(pd);
      const dnnl::engine& eng = onednn::cpu_engine();
      void* a = f.int_a ? static_cast<void*>(f.a_u8.data()) : static_cast<void*>(f.a_f32.data());
      void* b = f.int_a ? (f.b_in_place ? nullptr : static_cast<void*>(f.b_s8.data())) : static_cast<void*>(f.b_f32.data());
      void* c = f.int_a ? static_cast<void*>(f.acc_s32.data()) : static_cast<void*>(f.acc_f32.data());
      p.src = memory(src, eng, a);
      p.wei = memory(wei, eng, b);
      p.dst = memory(dst, eng, c);
      p.args = {{DNNL_ARG_SRC, p.src.get()}, {DNNL_ARG_WEIGHTS, p.wei.get()}, {DNNL_ARG_DST, p.dst.get()}};
      const size_t need = pd.scratchpad_desc().get_size();
      if (need > 0) {
        if (need > scratch_bytes_) {
          scratch_ = memory(memory::desc({static_cast<memory::dim>(need)}, dt::u8, memory::format_tag::a), eng);
          scratch_bytes_ = need;
          for (Prim& q : prims_)
            if (q.scratch_arg >= 0) q.args[q.scratch_arg].memory = scratch_.get();
        }
        p.scratch_arg = static_cast<int>(p.args.size());
        p.args.push_back({DNNL_ARG_SCRATCHPAD, scratch_.get()});
      }
      p.usable = true;
      ORKNN_LOGD("matmul M=%d K=%d N=%d, %d thread(s): oneDNN %s, scratchpad %zu bytes", M, K, N, threads,
                 p.impl.c_str(), need);
    } catch (const dnnl::error& e) {
      ORKNN_LOGD("matmul M=%d K=%d N=%d: oneDNN refused (%s); scalar kernel", M, K, N, e.what());
      p.usable = false;
    }
  }

  MatmulProblem p_;
  Buffers f_;
  // Per shape, one for a single thread and one for the context's threads (runs on a busy host go
  // single-threaded, common/threads.h); built on first use.
  std::vector<Prim> prims_;
  dnnl::memory scratch_;     // user scratchpad shared by the primitives (one run at a time)
  size_t scratch_bytes_ = 0;
  dnnl::stream stream_;
};

std::unique_ptr<MatmulEngine> create_onednn_engine(const MatmulProblem& p) {
  auto e = std::make_unique<OnednnMatmulEngine>(p);
  if (!e->init().ok()) return nullptr;
  return e;
}

}  // namespace

ORKNN_REGISTER_MATMUL_ENGINE("onednn_matmul_api", kPriorityGeneral, create_onednn_engine);

}  // namespace orknn
