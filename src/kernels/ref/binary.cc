// Reference kernels of the broadcasting ops: Add Sub Mul Div Pow Min Max Equal Less Greater Where
// PRelu. Arithmetic works on float32, int32 and int64 (the converter folds shape arithmetic with
// these kernels); integer arithmetic wraps, integer division truncates toward zero.
// Quantized int8 Add, Sub, Mul follow docs/numerics.md (formulas in kernels/ref/binary_int8.h).
#include <cmath>
#include <type_traits>

#include "kernels/kernel.h"
#include "kernels/ref/binary_int8.h"
#include "kernels/ref/float_to_int.h"
#include "kernels/ref/strided_loop.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

struct AddOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
    else
      return a + b;
  }
};
struct SubOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
    else
      return a - b;
  }
};
struct MulOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Unsigned<T>>(a) * static_cast<Unsigned<T>>(b));
    else
      return a * b;
  }
};
struct DivOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      // C++ division truncates toward zero, like ONNX (numpy true divide, then cast). Division
      // by zero has no defined result; 0 keeps the kernel from trapping.
      if (b == 0) return 0;
      if (b == -1) return static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(a));  // INT_MIN / -1 wraps
      return a / b;
    } else {
      return a / b;
    }
  }
};
// Min/Max propagate NaN like numpy.minimum/maximum.
struct MinOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return a + b;
    }
    return b < a ? b : a;
  }
};
struct MaxOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return a + b;
    }
    return a < b ? b : a;
  }
};
struct EqualOp {
  template <typename T>
  static uint8_t apply(T a, T b) {
    return a == b ? 1 : 0;
  }
};
struct LessOp {
  template <typename T>
  static uint8_t apply(T a, T b) {
    return a < b ? 1 : 0;
  }
};
struct GreaterOp {
  template <typename T>
  static uint8_t apply(T a, T b) {
    return a > b ? 1 : 0;
  }
};
struct PReluOp {
  template <typename T>
  static T apply(T x, T slope) {
    return x < T(0) ? x * slope : x;
  }
};

// out[i] = f(a[...], b[...]) along a loop with operands (out, a, b); out is dense.
template <typename A, typename B, typename R, class F>
void binary_loop(const StridedLoop& loop, const A* a, const B* b, R* out, F f) {
  loop.run([&](const int64_t* off, const int64_t* st, int64_t n) {
    R* o = out + off[0];
    const A* pa = a + off[1];
    const B* pb = b + off[2];
    const int64_t sa = st[1], sb = st[2];
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i], pb[i]);
    } else if (sa == 1 && sb == 0) {
      const B vb = pb[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i], vb);
    } else if (sa == 0 && sb == 1) {
      const A va = pa[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(va, pb[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i * sa], pb[i * sb]);
    }
  });
}

Status init_broadcast_loop(const KernelContext& ctx, StridedLoop* loop) {
  const Shape& out = ctx.out_tensor(0).shape;
  std::vector<std::vector<int64_t>> strides{dense_strides(out)};
  for (size_t i = 0; i < ctx.node->inputs.size(); ++i)
    strides.push_back(broadcast_strides(ctx.in_tensor(i).shape, out));
  loop->init(out, strides);
  return Status::Ok();
}

// Inputs and output of one shape: the op is element-wise over the bytes, so it runs in any layout
// the three share (kernel.h, BlockedIo::kUniform); a residual Add then does not hold its operands
// NCHW between convolutions that keep activations blocked.
BlockedIo same_shape_blocked_io(const Graph& g, const Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1 || n.outputs[0] < 0) return BlockedIo::kNone;
  const Tensor *a = g.input(n, 0), *b = g.input(n, 1);
  const Tensor& y = g.tensor(n.outputs[0]);
  return a && b && a->shape == y.shape && b->shape == y.shape ? BlockedIo::kUniform : BlockedIo::kNone;
}

template <class Op>
class BinaryKernel : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return same_shape_blocked_io(g, n); }
  Status prepare(const KernelContext& ctx) override { return init_broadcast_loop(ctx, &loop_); }
  void run(const KernelContext& ctx) override {
    switch (ctx.in_tensor(0).dtype) {
      case DType::kF32: typed<float>(ctx); break;
      case DType::kI32: typed<int32_t>(ctx); break;
      case DType::kI64: typed<int64_t>(ctx); break;
      case DType::kBool: typed<uint8_t>(ctx); break;  // Equal only (infer checks)
      default: break;
    }
  }

 private:
  template <typename T>
  void typed(const KernelContext& ctx) {
    using R = decltype(Op::apply(T(), T()));
    binary_loop(loop_, ctx.in<T>(0), ctx.in<T>(1), ctx.out<R>(0), [](T a, T b) { return Op::apply(a, b); });
  }
  StridedLoop loop_;
};

// Quantized Add/Sub/Mul with numpy broadcasting.
template <QuantBinaryKind kKind>
class QuantBinaryKernel : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return same_shape_blocked_io(g, n); }
  Status prepare(const KernelContext& ctx) override {
    for (size_t i = 0; i < 2; ++i) ORKNN_RETURN_IF_ERROR(check_q8_input(*ctx.graph, *ctx.node, i));
    ORKNN_RETURN_IF_ERROR(check_q8_output(*ctx.graph, *ctx.node, 0));
    p_ = quant_binary_params(kKind, ctx.in_tensor(0), ctx.in_tensor(1), ctx.out_tensor(0));
    return init_broadcast_loop(ctx, &loop_);
  }
  void run(const KernelContext& ctx) override {
    const QuantBinaryParams p = p_;
    binary_loop(loop_, ctx.in<int8_t>(0), ctx.in<int8_t>(1), ctx.out<int8_t>(0),
                [&p](int8_t a, int8_t b) { return quant_binary<kKind>(a, b, p); });
  }

 private:
  QuantBinaryParams p_;
  StridedLoop loop_;
};

// Variadic Min/Max: out = in0 broadcast, then out = op(out, in_k) for each further input.
template <class Op>
class VariadicKernel : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& out = ctx.out_tensor(0).shape;
    loops_.resize(ctx.node->inputs.size());
    for (size_t i = 0; i < loops_.size(); ++i)
      loops_[i].init(out, {dense_strides(out), broadcast_strides(ctx.in_tensor(i).shape, out)});
    return Status::Ok();
  }
  void run(const KernelContext& ctx) override {
    switch (ctx.in_tensor(0).dtype) {
      case DType::kF32: typed<float>(ctx); break;
      case DType::kI32: typed<int32_t>(ctx); break;
      case DType::kI64: typed<int64_t>(ctx); break;
      default: break;
    }
  }

 private:
  template <typename T>
  void typed(const KernelContext& ctx) {
    T* out = ctx.out<T>(0);
    strided_copy(loops_[0], out, ctx.in<T>(0), sizeof(T));
    for (size_t k = 1; k < loops_.size(); ++k) {
      const T* in = ctx.in<T>(k);
      loops_[k].run([&](const int64_t* off, const int64_t* st, int64_t n) {
        T* o = out + off[0];
        const T* p = in + off[1];
        const int64_t s = st[1];
        for (int64_t i = 0; i < n; ++i) o[i] = Op::apply(o[i], p[i * s]);
      });
    }
  }
  std::vector<StridedLoop> loops_;
};

class PowKernel : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override { return init_broadcast_loop(ctx, &loop_); }
  void run(const KernelContext& ctx) override {
    switch (ctx.in_tensor(0).dtype) {
      case DType::kF32: by_exponent<float>(ctx); break;
      case DType::kI32: by_exponent<int32_t>(ctx); break;
      case DType::kI64: by_exponent<int64_t>(ctx); break;
      default: break;
    }
  }

 private:
  template <typename B>
  void by_exponent(const KernelContext& ctx) {
    switch (ctx.in_tensor(1).dtype) {
      case DType::kF32: typed<B, float>(ctx); break;
      case DType::kI32: typed<B, int32_t>(ctx); break;
      case DType::kI64: typed<B, int64_t>(ctx); break;
      default: break;
    }
  }
  template <typename B, typename E>
  void typed(const KernelContext& ctx) {
    binary_loop(loop_, ctx.in<B>(0), ctx.in<E>(1), ctx.out<B>(0), [](B b, E e) -> B {
      if constexpr (std::is_same_v<B, float> && std::is_same_v<E, float>) {
        return std::pow(b, e);
      } else if constexpr (std::is_floating_point_v<B>) {
        return static_cast<B>(std::pow(static_cast<double>(b), static_cast<double>(e)));
      } else {
        // Integer base: computed in double and truncated, like numpy's power followed by a cast.
        return float_to_int<B>(std::pow(static_cast<double>(b), static_cast<double>(e)));
      }
    });
  }
  StridedLoop loop_;
};

// Where(cond, X, Y) on any dtype: moves elements by size.
class WhereKernel : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override { return init_broadcast_loop(ctx, &loop_); }
  void run(const KernelContext& ctx) override {
    switch (dtype_size(ctx.out_tensor(0).dtype)) {
      case 1: typed<uint8_t>(ctx); break;
      case 2: typed<uint16_t>(ctx); break;
      case 4: typed<uint32_t>(ctx); break;
      case 8: typed<uint64_t>(ctx); break;
      default: break;
    }
  }

 private:
  template <typename T>
  void typed(const KernelContext& ctx) {
    const uint8_t* c = ctx.in<uint8_t>(0);
    const T* x = ctx.in<T>(1);
    const T* y = ctx.in<T>(2);
    T* out = ctx.out<T>(0);
    loop_.run([&](const int64_t* off, const int64_t* st, int64_t n) {
      T* o = out + off[0];
      const uint8_t* pc = c + off[1];
      const T* px = x + off[2];
      const T* py = y + off[3];
      for (int64_t i = 0; i < n; ++i) o[i] = pc[i * st[1]] ? px[i * st[2]] : py[i * st[3]];
    });
  }
  StridedLoop loop_;
};

// The slope broadcasts with "slope_shape" when infer recorded one (a per-channel [C] slope of
// opset < 7, read as [C, 1, ..., 1]), else with its own shape.
class PReluKernel : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& out = ctx.out_tensor(0).shape;
    const Shape slope = ctx.node->attrs.get_ints("slope_shape", ctx.in_tensor(1).shape);
    loop_.init(out,
               {dense_strides(out), broadcast_strides(ctx.in_tensor(0).shape, out), broadcast_strides(slope, out)});
    return Status::Ok();
  }
  void run(const KernelContext& ctx) override {
    binary_loop(loop_, ctx.in<float>(0), ctx.in<float>(1), ctx.out<float>(0),
                [](float x, float s) { return PReluOp::apply(x, s); });
  }

 private:
  StridedLoop loop_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Add, "ref", kPriorityReference, nullptr, BinaryKernel<AddOp>);
ORKNN_REGISTER_KERNEL(Sub, "ref", kPriorityReference, nullptr, BinaryKernel<SubOp>);
ORKNN_REGISTER_KERNEL(Mul, "ref", kPriorityReference, nullptr, BinaryKernel<MulOp>);
ORKNN_REGISTER_KERNEL(Div, "ref", kPriorityReference, nullptr, BinaryKernel<DivOp>);
ORKNN_REGISTER_KERNEL(Equal, "ref", kPriorityReference, nullptr, BinaryKernel<EqualOp>);
ORKNN_REGISTER_KERNEL(Less, "ref", kPriorityReference, nullptr, BinaryKernel<LessOp>);
ORKNN_REGISTER_KERNEL(Greater, "ref", kPriorityReference, nullptr, BinaryKernel<GreaterOp>);
ORKNN_REGISTER_KERNEL(Min, "ref", kPriorityReference, nullptr, VariadicKernel<MinOp>);
ORKNN_REGISTER_KERNEL(Max, "ref", kPriorityReference, nullptr, VariadicKernel<MaxOp>);
ORKNN_REGISTER_KERNEL(Pow, "ref", kPriorityReference, nullptr, PowKernel);
ORKNN_REGISTER_KERNEL(Where, "ref", kPriorityReference, nullptr, WhereKernel);
ORKNN_REGISTER_KERNEL(PRelu, "ref", kPriorityReference, nullptr, PReluKernel);

ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Add, QuantBinaryKernel<QuantBinaryKind::kAdd>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Sub, QuantBinaryKernel<QuantBinaryKind::kSub>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Mul, QuantBinaryKernel<QuantBinaryKind::kMul>);

}  // namespace orknn
