// Reference kernels of ReduceMean/Sum/Max/Min/Prod/L2 and ArgMax.
// Float reductions accumulate in double (in input order) and round once at the end, so the
// reference is as exact as a float32 result can be; integer reductions accumulate in int64.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernel.h"
#include "kernels/ref/strided_loop.h"

namespace orknn {
namespace {

enum class ReduceKind { kMean, kSum, kMax, kMin, kProd, kL2 };

template <ReduceKind K>
class ReduceKernel : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Tensor& in = ctx.in_tensor(0);
    const std::vector<int64_t> axes = ctx.node->attrs.get_ints("axes");
    noop_ = axes.empty();
    if (noop_) return Status::Ok();
    // The output seen with keepdims: reduced axes have size 1, so they broadcast (stride 0) over
    // the input space.
    Shape kept = in.shape;
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
    out_count_ = shape_numel(kept);
    count_ = out_count_ ? in.numel() / out_count_ : 0;
    loop_.init(in.shape, {broadcast_strides(kept, in.shape), dense_strides(in.shape)});
    if (in.dtype == DType::kF32)
      acc_f_.assign(static_cast<size_t>(out_count_), 0.0);
    else
      acc_i_.assign(static_cast<size_t>(out_count_), 0);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const Tensor& in = ctx.in_tensor(0);
    if (noop_) {
      if (ctx.outputs[0] != ctx.inputs[0]) std::memcpy(ctx.outputs[0], ctx.inputs[0], in.nbytes());
      return;
    }
    switch (in.dtype) {
      case DType::kF32: typed<float, double>(ctx, acc_f_.data()); break;
      case DType::kI32: typed<int32_t, int64_t>(ctx, acc_i_.data()); break;
      case DType::kI64: typed<int64_t, int64_t>(ctx, acc_i_.data()); break;
      default: break;
    }
  }

 private:
  template <typename Acc>
  static Acc identity() {
    switch (K) {
      case ReduceKind::kProd: return Acc(1);
      case ReduceKind::kMax:
        return std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                      : std::numeric_limits<Acc>::lowest();
      case ReduceKind::kMin:
        return std::numeric_limits<Acc>::has_infinity ? std::numeric_limits<Acc>::infinity()
                                                      : std::numeric_limits<Acc>::max();
      default: return Acc(0);
    }
  }

  template <typename Acc>
  static void combine(Acc& a, Acc v) {
    switch (K) {
      case ReduceKind::kMean:
      case ReduceKind::kSum: a += v; break;
      case ReduceKind::kL2: a += v * v; break;
      case ReduceKind::kProd: a *= v; break;
      case ReduceKind::kMax:
        if (v > a || v != v) a = v;
        break;  // NaN sticks
      case ReduceKind::kMin:
        if (v < a || v != v) a = v;
        break;
    }
  }

  template <typename T, typename Acc>
  void typed(const KernelContext& ctx, Acc* acc) {
    const T* x = ctx.in<T>(0);
    T* y = ctx.out<T>(0);
    const Acc init = identity<Acc>();
    for (int64_t j = 0; j < out_count_; ++j) acc[j] = init;
    loop_.run([&](const int64_t* off, const int64_t* st, int64_t n) {
      Acc* a = acc + off[0];
      const T* p = x + off[1];
      const int64_t sa = st[0], sp = st[1];
      for (int64_t i = 0; i < n; ++i) combine<Acc>(a[i * sa], static_cast<Acc>(p[i * sp]));
    });
    for (int64_t j = 0; j < out_count_; ++j) {
      Acc v = acc[j];
      if (K == ReduceKind::kMean) {
        if constexpr (std::is_floating_point_v<Acc>)
          v = v / static_cast<Acc>(count_);
        else
          v = count_ ? v / count_ : 0;
      } else if (K == ReduceKind::kL2) {
        v = static_cast<Acc>(std::sqrt(static_cast<double>(v)));
      }
      y[j] = static_cast<T>(v);
    }
  }

  bool noop_ = false;
  int64_t out_count_ = 0, count_ = 0;
  StridedLoop loop_;
  std::vector<double> acc_f_;
  std::vector<int64_t> acc_i_;
};

template <typename T>
void argmax_typed(const KernelContext& ctx) {
  const Tensor& in = ctx.in_tensor(0);
  const size_t axis = static_cast<size_t>(ctx.node->attrs.get_int("axis", 0));
  const bool last = ctx.node->attrs.get_int("select_last_index", 0) != 0;
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= in.shape[d];
  for (size_t d = axis + 1; d < in.shape.size(); ++d) inner *= in.shape[d];
  const int64_t len = in.shape[axis];
  const T* x = ctx.in<T>(0);
  int64_t* y = ctx.out<int64_t>(0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* p = x + o * len * inner + i;
      int64_t best = 0;
      T best_v = p[0];
      for (int64_t k = 1; k < len; ++k) {
        const T v = p[k * inner];
        if (v > best_v || (last && v == best_v)) {
          best_v = v;
          best = k;
        }
      }
      y[o * inner + i] = best;
    }
  }
}

void argmax_kernel(const KernelContext& ctx) {
  switch (ctx.in_tensor(0).dtype) {
    case DType::kF32: argmax_typed<float>(ctx); break;
    case DType::kI32: argmax_typed<int32_t>(ctx); break;
    case DType::kI64: argmax_typed<int64_t>(ctx); break;
    default: break;
  }
}

}  // namespace

ORKNN_REGISTER_KERNEL(ReduceMean, "ref", kPriorityReference, nullptr, ReduceKernel<ReduceKind::kMean>);
ORKNN_REGISTER_KERNEL(ReduceSum, "ref", kPriorityReference, nullptr, ReduceKernel<ReduceKind::kSum>);
ORKNN_REGISTER_KERNEL(ReduceMax, "ref", kPriorityReference, nullptr, ReduceKernel<ReduceKind::kMax>);
ORKNN_REGISTER_KERNEL(ReduceMin, "ref", kPriorityReference, nullptr, ReduceKernel<ReduceKind::kMin>);
ORKNN_REGISTER_KERNEL(ReduceProd, "ref", kPriorityReference, nullptr, ReduceKernel<ReduceKind::kProd>);
ORKNN_REGISTER_KERNEL(ReduceL2, "ref", kPriorityReference, nullptr, ReduceKernel<ReduceKind::kL2>);
ORKNN_REGISTER_REF_KERNEL(ArgMax, argmax_kernel);

}  // namespace orknn
