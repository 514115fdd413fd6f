// Reference kernels of Gather, any data dtype (moved by size), int32/int64 indices (quantized
// int8 data uses the same kernel once the output is known to carry the data's parameters), and of
// ScatterND (float32, integer and bool data; no int8 kernel).
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/ref/quant_passthrough.h"

namespace orknn {
namespace {

template <typename I>
void gather_typed(const KernelContext& ctx) {
  const Tensor& data = ctx.in_tensor(0);
  const size_t axis = static_cast<size_t>(ctx.node->attrs.get_int("axis", 0));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= data.shape[d];
  for (size_t d = axis + 1; d < data.shape.size(); ++d) inner *= data.shape[d];
  const int64_t dim = data.shape[axis];
  const int64_t count = ctx.in_tensor(1).numel();
  const size_t row = static_cast<size_t>(inner) * dtype_size(data.dtype);
  const uint8_t* src = ctx.in<uint8_t>(0);
  const I* idx = ctx.in<I>(1);
  uint8_t* dst = ctx.out<uint8_t>(0);
  if (row == 0) return;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      int64_t k = static_cast<int64_t>(idx[j]);
      if (k < 0) k += dim;
      uint8_t* d = dst + static_cast<size_t>(o * count + j) * row;
      if (k < 0 || k >= dim) {
        std::memset(d, 0, row);  // infer rejects constant out-of-range indices; runtime ones give zeros
        continue;
      }
      std::memcpy(d, src + static_cast<size_t>(o * dim + k) * row, row);
    }
  }
}

void gather_kernel(const KernelContext& ctx) {
  if (ctx.in_tensor(1).dtype == DType::kI32)
    gather_typed<int32_t>(ctx);
  else
    gather_typed<int64_t>(ctx);
}

// ScatterND: the output is data with each index tuple's slice (the data dims after the first k)
// replaced by, or combined with, the matching slice of updates, the tuples taken in order: with
// reduction none a position written twice keeps the last write (ONNX leaves it undefined; ONNX
// Runtime's order). Negative indices count from the end; a tuple out of range at run time is
// skipped (infer refuses constant ones), so nothing outside the output is ever written.
class ScatterNDKernel : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Tensor& data = ctx.in_tensor(0);
    const std::string r = ctx.node->attrs.get_string("reduction", "none");
    reduction_ = r == "add" ? kAdd : r == "mul" ? kMul : r == "max" ? kMax : r == "min" ? kMin : kNone;
    k_ = static_cast<size_t>(ctx.in_tensor(1).shape.back());
    dims_.assign(data.shape.begin(), data.shape.begin() + static_cast<long>(k_));
    strides_.assign(k_, 1);
    slice_ = 1;
    for (size_t d = k_; d < data.shape.size(); ++d) slice_ *= data.shape[d];
    for (size_t d = k_; d-- > 0;) strides_[d] = d + 1 < k_ ? strides_[d + 1] * dims_[d + 1] : slice_;
    tuples_ = ctx.in_tensor(1).numel() / static_cast<int64_t>(k_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const Tensor& data = ctx.in_tensor(0);
    if (data.nbytes() != 0 && ctx.outputs[0] != ctx.inputs[0]) std::memcpy(ctx.outputs[0], ctx.inputs[0], data.nbytes());
    if (ctx.in_tensor(1).dtype == DType::kI32)
      by_type<int32_t>(ctx, data.dtype);
    else
      by_type<int64_t>(ctx, data.dtype);
  }

 private:
  enum Reduction { kNone, kAdd, kMul, kMax, kMin };
  struct Bool {};  // bool data: add and max are "or", mul and min "and"

  template <typename I>
  void by_type(const KernelContext& ctx, DType t) {
    if (reduction_ == kNone) return scatter<I, void>(ctx);
    switch (t) {
      case DType::kF32: return scatter<I, float>(ctx);
      case DType::kI8: return scatter<I, int8_t>(ctx);
      case DType::kU8: return scatter<I, uint8_t>(ctx);
      case DType::kI16: return scatter<I, int16_t>(ctx);
      case DType::kU16: return scatter<I, uint16_t>(ctx);
      case DType::kI32: return scatter<I, int32_t>(ctx);
      case DType::kU32: return scatter<I, uint32_t>(ctx);
      case DType::kI64: return scatter<I, int64_t>(ctx);
      case DType::kBool: return scatter<I, Bool>(ctx);
      case DType::kF16: return;  // infer refuses reductions on float16
    }
  }

  // T void: reduction none, slices moved by size.
  template <typename I, typename T>
  void scatter(const KernelContext& ctx) {
    const I* idx = ctx.in<I>(1);
    const size_t es = dtype_size(ctx.in_tensor(0).dtype);
    const uint8_t* upd = ctx.in<uint8_t>(2);
    uint8_t* out = ctx.out<uint8_t>(0);
    for (int64_t t = 0; t < tuples_; ++t) {
      int64_t base = 0;
      bool in_range = true;
      for (size_t d = 0; d < k_; ++d) {
        int64_t v = static_cast<int64_t>(idx[static_cast<size_t>(t) * k_ + d]);
        if (v < 0) v += dims_[d];
        in_range = in_range && v >= 0 && v < dims_[d];
        base += v * strides_[d];
      }
      if (!in_range || slice_ == 0) continue;
      const uint8_t* src = upd + static_cast<size_t>(t * slice_) * es;
      uint8_t* dst = out + static_cast<size_t>(base) * es;
      if constexpr (std::is_void_v<T>) {
        std::memcpy(dst, src, static_cast<size_t>(slice_) * es);
      } else {
        using S = std::conditional_t<std::is_same_v<T, Bool>, uint8_t, T>;
        for (int64_t e = 0; e < slice_; ++e) {
          S a, b;
          std::memcpy(&a, dst + e * sizeof(S), sizeof(S));
          std::memcpy(&b, src + e * sizeof(S), sizeof(S));
          a = combine<T>(a, b);
          std::memcpy(dst + e * sizeof(S), &a, sizeof(S));
        }
      }
    }
  }

  // max / min: the update unless the existing value compares greater / less (a NaN update is taken,
  // a NaN in the output replaced), as ONNX Runtime 1.30 computes them; integers wrap.
  template <typename T, typename S>
  S combine(S a, S b) const {
    if constexpr (std::is_same_v<T, Bool>) {
      return (reduction_ == kAdd || reduction_ == kMax) ? static_cast<S>((a | b) != 0) : static_cast<S>((a & b) != 0);
    } else if constexpr (std::is_floating_point_v<T>) {
      switch (reduction_) {
        case kAdd: return a + b;
        case kMul: return a * b;
        case kMax: return std::max(b, a);
        default: return std::min(b, a);
      }
    } else {
      using U = std::make_unsigned_t<T>;
      switch (reduction_) {
        case kAdd: return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
        case kMul: return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
        case kMax: return std::max(a, b);
        default: return std::min(a, b);
      }
    }
  }

  Reduction reduction_ = kNone;
  size_t k_ = 1;
  std::vector<int64_t> dims_, strides_;  // the first k dims of data and their element strides
  int64_t slice_ = 1;                     // elements per index tuple
  int64_t tuples_ = 0;
};

}  // namespace

ORKNN_REGISTER_REF_KERNEL(Gather, gather_kernel);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Gather, QuantPassthroughFn<gather_kernel>);
ORKNN_REGISTER_KERNEL(ScatterND, "ref", kPriorityReference, nullptr, ScatterNDKernel);

}  // namespace orknn
