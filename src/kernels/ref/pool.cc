// Reference MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool (float32, NCHW).
//
// Window of output o on a spatial dim: taps o * stride - pad_begin + t * dilation, t = 0..k-1.
// Taps outside the input are skipped (MaxPool: padding never wins).
// Numerics:
//  - AveragePool: float32 sum starting at 0 over the window taps in row-major order, then one
//    division by the count. The count is the number of taps inside the input, or with
//    count_include_pad=1 the number of taps inside the padded input [-pad_begin, in + pad_end)
//    (taps beyond the end padding, which ceil_mode can create, never count). A window without
//    any input element gives 0.
//  - MaxPool: maximum of the taps inside the input; a window without any gives -FLT_MAX
//    (std::numeric_limits<float>::lowest()). A NaN tap never wins (the
//    comparison is `v > max`).
//  - GlobalAveragePool: float32 sum over the spatial elements in memory order / their count.
//  - GlobalMaxPool: maximum over the spatial elements (same comparison).
// Quantized int8 (docs/numerics.md), same windows and counts:
//  - MaxPool, GlobalMaxPool: m = the largest int8 tap (dequantization is monotonic); when the
//    output's parameters differ from the input's, y = sat8(rne(float(m - zp_x) * (s_x / s_y)) + zp_y),
//    else y = m. A window without any input element gives -128 (the float kernel's -FLT_MAX,
//    quantized).
//  - AveragePool, GlobalAveragePool: acc = sum(x - zp_x) over the taps inside the input (padding
//    adds 0), Mc = (s_x / s_y) / float(count), y = sat8(rne(float(acc) * Mc) + zp_y); count 0
//    gives zp_y (the float kernel's 0, quantized).
#include <cstdint>
#include <limits>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/nchw.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// The windows and planes are walked by PoolWindows::run and pool_planes (kernels/ref/nchw.h); the
// float and the int8 kernels differ only in the accumulator below and the result.

// float32: the sum (in tap order) and the maximum of the taps inside the input.
struct FloatPoolAcc {
  float sum = 0.f;
  float max = std::numeric_limits<float>::lowest();
};

inline void add_float(FloatPoolAcc& a, float v) {
  a.sum += v;
  if (v > a.max) a.max = v;
}

// MaxPool (kMax) and AveragePool.
template <bool kMax>
class WindowPoolRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    w_ = read_pool_windows(ctx);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    w_.run(ctx.in<float>(0), ctx.out<float>(0), [] { return FloatPoolAcc(); }, add_float,
           [](const FloatPoolAcc& a, int64_t count) {
             if (kMax) return a.max;
             return count > 0 ? a.sum / static_cast<float>(count) : 0.f;
           });
  }

 private:
  PoolWindows w_;
};

// GlobalMaxPool (kMax) and GlobalAveragePool.
template <bool kMax>
class GlobalPoolRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    p_ = channel_planes(ctx.in_tensor(0).shape);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    pool_planes(p_, ctx.in<float>(0), ctx.out<float>(0), [] { return FloatPoolAcc(); }, add_float,
                [](const FloatPoolAcc& a, int64_t count) { return kMax ? a.max : a.sum / static_cast<float>(count); });
  }

 private:
  ChannelPlanes p_;
};

// int8: the sum of x - zp_x and the largest int8 tap of the taps inside the input.
struct Q8PoolAcc {
  int64_t acc = 0;
  int32_t max = -128;
  bool any = false;
};

// Parameters shared by the quantized pools, and their results.
struct PoolQuant {
  int32_t zp_x = 0, zp_y = 0;
  float ratio = 1.f;   // s_x / s_y
  bool same = true;    // output has the input's parameters (MaxPool copies the maximum)

  Status init(const KernelContext& ctx) {
    ORKNN_RETURN_IF_ERROR(check_q8_input(*ctx.graph, *ctx.node, 0));
    ORKNN_RETURN_IF_ERROR(check_q8_output(*ctx.graph, *ctx.node, 0));
    const QuantScalar qx = per_tensor(ctx.in_tensor(0)), qy = per_tensor(ctx.out_tensor(0));
    zp_x = qx.zp;
    zp_y = qy.zp;
    ratio = qx.scale / qy.scale;
    same = same_quant(ctx.in_tensor(0).quant, ctx.out_tensor(0).quant);
    return Status::Ok();
  }
  void add(Q8PoolAcc& a, int32_t v) const {
    a.acc += v - zp_x;
    if (v > a.max) a.max = v;
    a.any = true;
  }
  int8_t max_result(int32_t m) const { return same ? static_cast<int8_t>(m) : requantize(m - zp_x, ratio, zp_y); }
  int8_t average_result(int64_t acc, int64_t count) const {
    if (count == 0) return static_cast<int8_t>(sat8(zp_y));
    const float mc = ratio / static_cast<float>(count);
    return rne_add_zp_sat8(static_cast<float>(acc) * mc, zp_y);
  }
  // A max window without any input element gives -128 (the float kernel's -FLT_MAX, quantized).
  template <bool kMax>
  int8_t result(const Q8PoolAcc& a, int64_t count) const {
    if (kMax) return a.any ? max_result(a.max) : int8_t{-128};
    return average_result(a.acc, count);
  }
};

template <bool kMax>
class WindowPoolQ8 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    ORKNN_RETURN_IF_ERROR(q_.init(ctx));
    w_ = read_pool_windows(ctx);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    w_.run(ctx.in<int8_t>(0), ctx.out<int8_t>(0), [] { return Q8PoolAcc(); },
           [this](Q8PoolAcc& a, int32_t v) { q_.add(a, v); },
           [this](const Q8PoolAcc& a, int64_t count) { return q_.result<kMax>(a, count); });
  }

 private:
  PoolQuant q_;
  PoolWindows w_;
};

template <bool kMax>
class GlobalPoolQ8 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    ORKNN_RETURN_IF_ERROR(q_.init(ctx));
    p_ = channel_planes(ctx.in_tensor(0).shape);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    pool_planes(p_, ctx.in<int8_t>(0), ctx.out<int8_t>(0), [] { return Q8PoolAcc(); },
                [this](Q8PoolAcc& a, int32_t v) { q_.add(a, v); },
                [this](const Q8PoolAcc& a, int64_t count) { return q_.result<kMax>(a, count); });
  }

 private:
  PoolQuant q_;
  ChannelPlanes p_;
};

}  // namespace

ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(MaxPool, WindowPoolQ8<true>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(AveragePool, WindowPoolQ8<false>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(GlobalMaxPool, GlobalPoolQ8<true>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(GlobalAveragePool, GlobalPoolQ8<false>);
ORKNN_REGISTER_KERNEL(MaxPool, "ref", kPriorityReference, nullptr, WindowPoolRef<true>);
ORKNN_REGISTER_KERNEL(AveragePool, "ref", kPriorityReference, nullptr, WindowPoolRef<false>);
ORKNN_REGISTER_KERNEL(GlobalMaxPool, "ref", kPriorityReference, nullptr, GlobalPoolRef<true>);
ORKNN_REGISTER_KERNEL(GlobalAveragePool, "ref", kPriorityReference, nullptr, GlobalPoolRef<false>);

}  // namespace orknn
