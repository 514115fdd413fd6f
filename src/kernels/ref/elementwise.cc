// Reference kernels of the unary element-wise ops, Not, Identity and Dropout.
// Float math is fp32 with the formulas of the ONNX operator specs. Per-tensor quantized
// int8/uint8 inputs go through a 256-entry table: dequantize, the float function, requantize
// with round-half-to-even and saturation (docs/numerics.md).
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernel.h"
#include "kernels/ref/quant_passthrough.h"

namespace orknn {
namespace {

// ---- the functions; each is built from the node's attributes ----

struct ReluFn {
  static constexpr bool kInts = true;
  explicit ReluFn(const Attrs&) {}
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? T(0) : x;
  }  // NaN stays NaN
};
struct NegFn {
  static constexpr bool kInts = true;
  explicit NegFn(const Attrs&) {}
  template <typename T>
  T operator()(T x) const {
    return -x;
  }
};
struct AbsFn {
  static constexpr bool kInts = true;
  explicit AbsFn(const Attrs&) {}
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? T(-x) : x;
  }
};
struct SignFn {
  static constexpr bool kInts = true;
  explicit SignFn(const Attrs&) {}
  template <typename T>
  T operator()(T x) const {
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
  }  // 0, NaN kept
};
struct ClipFn {
  static constexpr bool kInts = true;
  float lo, hi;
  explicit ClipFn(const Attrs& a)
      : lo(a.get_float("min", -std::numeric_limits<float>::infinity())),
        hi(a.get_float("max", std::numeric_limits<float>::infinity())) {}
  // max first, then min: with min > max every value becomes max, as ONNX specifies.
  float operator()(float x) const {
    if (x < lo) x = lo;
    if (x > hi) x = hi;
    return x;
  }
  template <typename T>
  T operator()(T x) const {
    if (!std::isinf(lo) && static_cast<double>(x) < lo) x = static_cast<T>(lo);
    if (!std::isinf(hi) && static_cast<double>(x) > hi) x = static_cast<T>(hi);
    return x;
  }
};

#define ORKNN_FLOAT_FN(NAME, EXPR)                   \
  struct NAME {                                      \
    static constexpr bool kInts = false;             \
    explicit NAME(const Attrs&) {}                   \
    float operator()(float x) const { return EXPR; } \
  };
ORKNN_FLOAT_FN(SigmoidFn, 1.f / (1.f + std::exp(-x)))
ORKNN_FLOAT_FN(TanhFn, std::tanh(x))
ORKNN_FLOAT_FN(ErfFn, std::erf(x))
ORKNN_FLOAT_FN(ExpFn, std::exp(x))
ORKNN_FLOAT_FN(LogFn, std::log(x))
ORKNN_FLOAT_FN(SqrtFn, std::sqrt(x))
ORKNN_FLOAT_FN(ReciprocalFn, 1.f / x)
ORKNN_FLOAT_FN(FloorFn, std::floor(x))
ORKNN_FLOAT_FN(CeilFn, std::ceil(x))
ORKNN_FLOAT_FN(SinFn, std::sin(x))
ORKNN_FLOAT_FN(CosFn, std::cos(x))
ORKNN_FLOAT_FN(RoundFn, std::nearbyint(x))  // default rounding mode: half to even, as ONNX Round
#undef ORKNN_FLOAT_FN

// log(1 + e^x) without overflow for large x.
inline float softplus(float x) { return x > 0.f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

struct SoftplusFn {
  static constexpr bool kInts = false;
  explicit SoftplusFn(const Attrs&) {}
  float operator()(float x) const { return softplus(x); }
};
struct MishFn {
  static constexpr bool kInts = false;
  explicit MishFn(const Attrs&) {}
  float operator()(float x) const { return x * std::tanh(softplus(x)); }
};
struct LeakyReluFn {
  static constexpr bool kInts = false;
  float alpha;
  explicit LeakyReluFn(const Attrs& a) : alpha(a.get_float("alpha", 0.01f)) {}
  float operator()(float x) const { return x < 0.f ? alpha * x : x; }
};
struct EluFn {
  static constexpr bool kInts = false;
  float alpha;
  explicit EluFn(const Attrs& a) : alpha(a.get_float("alpha", 1.f)) {}
  float operator()(float x) const { return x < 0.f ? alpha * (std::exp(x) - 1.f) : x; }
};
struct SeluFn {
  static constexpr bool kInts = false;
  float alpha, gamma;
  explicit SeluFn(const Attrs& a)
      : alpha(a.get_float("alpha", 1.67326319217681884765625f)),
        gamma(a.get_float("gamma", 1.05070102214813232421875f)) {}
  float operator()(float x) const { return x > 0.f ? gamma * x : gamma * (alpha * std::exp(x) - alpha); }
};
struct HardSigmoidFn {
  static constexpr bool kInts = false;
  float alpha, beta;
  explicit HardSigmoidFn(const Attrs& a) : alpha(a.get_float("alpha", 0.2f)), beta(a.get_float("beta", 0.5f)) {}
  float operator()(float x) const { return std::fmax(0.f, std::fmin(1.f, alpha * x + beta)); }
};
struct HardSwishFn {
  static constexpr bool kInts = false;
  explicit HardSwishFn(const Attrs&) {}
  float operator()(float x) const { return x * std::fmax(0.f, std::fmin(1.f, x * (1.f / 6.f) + 0.5f)); }
};
struct GeluFn {
  static constexpr bool kInts = false;
  bool tanh_approx;
  explicit GeluFn(const Attrs& a) : tanh_approx(a.get_string("approximate", "none") == "tanh") {}
  float operator()(float x) const {
    if (tanh_approx) {
      const float k = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * x * (1.f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    return 0.5f * x * (1.f + std::erf(x * 0.7071067811865476f));
  }
};

template <typename T, class F>
void apply(const F& f, const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

template <class F>
class UnaryKernel : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    fn_ = std::make_unique<F>(ctx.node->attrs);
    const Tensor& in = ctx.in_tensor(0);
    quantized_ = in.dtype == DType::kI8 || in.dtype == DType::kU8;
    if (!quantized_) return Status::Ok();
    const Tensor& out = ctx.out_tensor(0);
    if (in.quant.scale.size() != 1 || out.quant.scale.size() != 1 || out.dtype != in.dtype)
      return ORKNN_ERR(kInvalidModel,
                       "%s node '%s': quantized %s input needs per-tensor quantization on input and output",
                       op_name(ctx.node->op), ctx.node->name.c_str(), dtype_name(in.dtype));
    const bool is_signed = in.dtype == DType::kI8;
    const int qmin = is_signed ? -128 : 0, qmax = is_signed ? 127 : 255;
    const float s_in = in.quant.scale[0], s_out = out.quant.scale[0];
    const int zp_in = in.quant.zero_point.empty() ? 0 : in.quant.zero_point[0];
    const int zp_out = out.quant.zero_point.empty() ? 0 : out.quant.zero_point[0];
    for (int q = qmin; q <= qmax; ++q) {
      const float y = (*fn_)(s_in * static_cast<float>(q - zp_in));
      const float v = y / s_out;
      // A NaN result quantizes to the zero point (docs/numerics.md, ONNX QuantizeLinear).
      float r = std::isnan(v) ? static_cast<float>(zp_out) : std::nearbyint(v) + static_cast<float>(zp_out);
      if (r < qmin) r = static_cast<float>(qmin);
      if (r > qmax) r = static_cast<float>(qmax);
      table_[static_cast<uint8_t>(q)] = static_cast<uint8_t>(static_cast<int>(r));
    }
    return Status::Ok();
  }

  // One function per element: any layout, as long as input and output share it (kernel.h).
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kUniform; }

  void run(const KernelContext& ctx) override {
    const Tensor& in = ctx.in_tensor(0);
    const int64_t n = in.numel();
    if (quantized_) {
      const uint8_t* x = ctx.in<uint8_t>(0);
      uint8_t* y = ctx.out<uint8_t>(0);
      for (int64_t i = 0; i < n; ++i) y[i] = table_[x[i]];
      return;
    }
    switch (in.dtype) {
      case DType::kF32: apply(*fn_, ctx.in<float>(0), ctx.out<float>(0), n); break;
      case DType::kI32:
        if constexpr (F::kInts) apply(*fn_, ctx.in<int32_t>(0), ctx.out<int32_t>(0), n);
        break;
      case DType::kI64:
        if constexpr (F::kInts) apply(*fn_, ctx.in<int64_t>(0), ctx.out<int64_t>(0), n);
        break;
      default: break;  // rejected by infer
    }
  }

 private:
  std::unique_ptr<F> fn_;
  bool quantized_ = false;
  uint8_t table_[256] = {};
};

void not_kernel(const KernelContext& ctx) {
  const int64_t n = ctx.in_tensor(0).numel();
  const uint8_t* x = ctx.in<uint8_t>(0);
  uint8_t* y = ctx.out<uint8_t>(0);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] ? 0 : 1;
}

void copy_input0(const KernelContext& ctx) {
  const size_t bytes = ctx.in_tensor(0).nbytes();
  if (ctx.outputs[0] != ctx.inputs[0] && bytes) std::memcpy(ctx.outputs[0], ctx.inputs[0], bytes);
}

void dropout_kernel(const KernelContext& ctx) {
  copy_input0(ctx);
  if (ctx.outputs.size() > 1 && ctx.outputs[1]) {
    std::memset(ctx.outputs[1], 1, static_cast<size_t>(ctx.out_tensor(1).numel()));
  }
}

}  // namespace

// Each unary op: the plain reference kernel and, the same class, its quantized (table) kernel.
#define ORKNN_REGISTER_UNARY(OPNAME, FN)                               \
  ORKNN_REGISTER_KERNEL(OPNAME, "ref", kPriorityReference, nullptr, UnaryKernel<FN>); \
  ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(OPNAME, UnaryKernel<FN>)

ORKNN_REGISTER_UNARY(Relu, ReluFn);
ORKNN_REGISTER_UNARY(Neg, NegFn);
ORKNN_REGISTER_UNARY(Abs, AbsFn);
ORKNN_REGISTER_UNARY(Sign, SignFn);
ORKNN_REGISTER_UNARY(Clip, ClipFn);
ORKNN_REGISTER_UNARY(Sigmoid, SigmoidFn);
ORKNN_REGISTER_UNARY(Tanh, TanhFn);
ORKNN_REGISTER_UNARY(Erf, ErfFn);
ORKNN_REGISTER_UNARY(Exp, ExpFn);
ORKNN_REGISTER_UNARY(Log, LogFn);
ORKNN_REGISTER_UNARY(Sqrt, SqrtFn);
ORKNN_REGISTER_UNARY(Reciprocal, ReciprocalFn);
ORKNN_REGISTER_UNARY(Floor, FloorFn);
ORKNN_REGISTER_UNARY(Ceil, CeilFn);
ORKNN_REGISTER_UNARY(Sin, SinFn);
ORKNN_REGISTER_UNARY(Cos, CosFn);
ORKNN_REGISTER_UNARY(Round, RoundFn);
ORKNN_REGISTER_UNARY(Softplus, SoftplusFn);
ORKNN_REGISTER_UNARY(Mish, MishFn);
ORKNN_REGISTER_UNARY(LeakyRelu, LeakyReluFn);
ORKNN_REGISTER_UNARY(Elu, EluFn);
ORKNN_REGISTER_UNARY(Selu, SeluFn);
ORKNN_REGISTER_UNARY(HardSigmoid, HardSigmoidFn);
ORKNN_REGISTER_UNARY(HardSwish, HardSwishFn);
ORKNN_REGISTER_UNARY(Gelu, GeluFn);
ORKNN_REGISTER_REF_KERNEL(Not, not_kernel);
ORKNN_REGISTER_REF_KERNEL(Identity, copy_input0);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Identity, QuantPassthroughFn<copy_input0>);
ORKNN_REGISTER_REF_KERNEL(Dropout, dropout_kernel);
ORKNN_REGISTER_QUANT_REF_KERNEL(Dropout, dropout_kernel);

}  // namespace orknn
