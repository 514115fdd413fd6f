// Two float passes that exported normalisations are built from (issue 28: LPRNet's global
// context, x / mean(x^2), and decomposed LayerNorm / RMSNorm in transformer exports), which ran on
// the reference kernels' per-element loops. AVX2, so AVX2-only CPUs run them too.
//
// "x86_pow2_f32": Pow whose exponent is a constant scalar 2.0 (float): y = x * x, the correctly
// rounded square. The reference calls std::pow (glibc's powf, within 0.82 ulp of the exact value,
// not always correctly rounded: 4097^2, a tie, and about 0.1% of random values), so the two agree
// within 1 ulp, bit for bit elsewhere.
//
// "x86_reduce_sum_f32": ReduceMean and ReduceSum of float over a trailing block of axes (each
// output the reduction of one contiguous run of the input: all axes, the last one, ...). As the
// reference, the sum is in double and rounded once (a mean divided in double first), in 4 x 4
// lanes instead of input order: the double sums differ by reassociation only (relative 2^-53 per
// addition, against float's 2^-24), so the float results are the reference's or a neighbour at a
// rounding tie: within 1 ulp.
#include <immintrin.h>

#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/x86/cpu_features.h"

namespace orknn {
namespace {

bool float_node(const Graph& g, const Node& n) {
  if (!x86::cpu_avx2() || is_quantized_node(g, n) || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1)
    return false;
  return g.tensor(n.inputs[0]).dtype == DType::kF32 && g.tensor(n.outputs[0]).dtype == DType::kF32;
}

bool supports_pow2(const Graph& g, const Node& n) {
  if (!float_node(g, n) || n.inputs.size() != 2 || n.inputs[1] < 0) return false;
  const Tensor& e = g.tensor(n.inputs[1]);
  if (!e.is_const() || e.dtype != DType::kF32 || e.numel() != 1) return false;
  if (g.tensor(n.outputs[0]).shape != g.tensor(n.inputs[0]).shape) return false;  // no broadcast by the exponent
  return e.const_ptr<float>()[0] == 2.f;
}

class Pow2F32 : public Kernel {
 public:
  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const int64_t n = ctx.out_tensor(0).numel();
    const int nt = threads_for(n, kMinPassElementsPerThread, ctx.num_threads);
    parallel_ranges(n, nt, [&](int64_t b, int64_t e, int) { square(x, y, b, e); }, 16);
  }

 private:
  __attribute__((target("avx2"))) static void square(const float* x, float* y, int64_t b, int64_t e) {
    int64_t i = b;
    for (; i + 8 <= e; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      _mm256_storeu_ps(y + i, _mm256_mul_ps(v, v));
    }
    for (; i < e; ++i) y[i] = x[i] * x[i];
  }
};

// The reduced axes, sorted by infer, are the last ones: the runs are contiguous.
bool supports_trailing_reduce(const Graph& g, const Node& n) {
  if (!float_node(g, n) || (n.inputs.size() > 1 && n.inputs[1] >= 0)) return false;
  const std::vector<int64_t> axes = n.attrs.get_ints("axes", {});
  const int64_t rank = static_cast<int64_t>(g.tensor(n.inputs[0]).shape.size());
  if (axes.empty() || axes.back() != rank - 1) return false;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1) return false;
  return true;
}

template <bool kMean>
class ReduceSumF32 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    outputs_ = ctx.out_tensor(0).numel();
    run_ = outputs_ ? ctx.in_tensor(0).numel() / outputs_ : 0;
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const int nt = threads_for(outputs_ * run_, kMinPassElementsPerThread, ctx.num_threads);
    parallel_ranges(outputs_, nt, [&](int64_t b, int64_t e, int) {
      for (int64_t o = b; o < e; ++o) {
        double s = sum(x + o * run_, run_);
        if (kMean) s /= static_cast<double>(run_);
        y[o] = static_cast<float>(s);
      }
    });
  }

 private:
  __attribute__((target("avx2"))) static double sum(const float* x, int64_t n) {
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
      a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
      a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 8)));
      a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 12)));
    }
    alignas(32) double l[4];
    _mm256_store_pd(l, _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
    double s = (l[0] + l[1]) + (l[2] + l[3]);
    for (; i < n; ++i) s += static_cast<double>(x[i]);
    return s;
  }

  int64_t outputs_ = 0, run_ = 0;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Pow, "x86_pow2_f32", kPriorityGeneral, supports_pow2, Pow2F32);
ORKNN_REGISTER_KERNEL(ReduceMean, "x86_reduce_sum_f32", kPriorityGeneral, supports_trailing_reduce, ReduceSumF32<true>);
ORKNN_REGISTER_KERNEL(ReduceSum, "x86_reduce_sum_f32", kPriorityGeneral, supports_trailing_reduce, ReduceSumF32<false>);

}  // namespace orknn
