// Reference QuantizeLinear and DequantizeLinear (docs/numerics.md, "Quantize and dequantize"):
//   quantize:   q = sat8(rne(x / s) + zp)      (float32 x / s; NaN gives zp)
//   dequantize: x = float(q - zp) * s          (q int8, or int32 for biases)
// The parameters are the QuantParams of the int8 (or int32) tensor, per tensor or per axis (one
// scale and zero point per index along `axis`, as for per-channel weights).
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"

namespace orknn {
namespace {

// The parameters of a quantized tensor expanded for a walk in memory order: element i uses
// channel (i / inner) % channels.
struct AxisParams {
  std::vector<float> scale;
  std::vector<int32_t> zp;
  int64_t inner = 1;  // elements per step along the axis
  int64_t count = 0;  // elements of the tensor
};

AxisParams axis_params(const Tensor& t) {
  AxisParams p;
  p.scale = t.quant.scale;
  p.zp = t.quant.zero_point;
  p.count = t.numel();
  if (p.scale.size() > 1) {
    for (size_t d = static_cast<size_t>(t.quant.axis) + 1; d < t.shape.size(); ++d) p.inner *= t.shape[d];
  } else {
    p.inner = p.count > 0 ? p.count : 1;  // one channel
  }
  return p;
}

template <class F>
void for_each_channel_run(const AxisParams& p, F&& f) {
  const int64_t channels = static_cast<int64_t>(p.scale.size());
  int64_t c = 0;
  for (int64_t first = 0; first < p.count; first += p.inner) {
    const int64_t end = first + p.inner < p.count ? first + p.inner : p.count;
    f(first, end, p.scale[static_cast<size_t>(c)], p.zp[static_cast<size_t>(c)]);
    if (++c == channels) c = 0;
  }
}

class QuantizeRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    // Parameters belong to the output; its shape equals the input's.
    p_ = axis_params(ctx.out_tensor(0));
    return Status::Ok();
  }
  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    int8_t* y = ctx.out<int8_t>(0);
    for_each_channel_run(p_, [&](int64_t first, int64_t end, float scale, int32_t zp) {
      for (int64_t i = first; i < end; ++i) y[i] = quantize_value(x[i], scale, zp);
    });
  }

 private:
  AxisParams p_;
};

class DequantizeRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    p_ = axis_params(ctx.in_tensor(0));
    int32_input_ = ctx.in_tensor(0).dtype == DType::kI32;
    return Status::Ok();
  }
  void run(const KernelContext& ctx) override {
    float* y = ctx.out<float>(0);
    if (int32_input_) {
      const int32_t* q = ctx.in<int32_t>(0);
      // Biases have zero point 0 (infer checks), so q - zp cannot overflow.
      for_each_channel_run(p_, [&](int64_t first, int64_t end, float scale, int32_t zp) {
        for (int64_t i = first; i < end; ++i) y[i] = dequantize_value(q[i], scale, zp);
      });
    } else {
      const int8_t* q = ctx.in<int8_t>(0);
      for_each_channel_run(p_, [&](int64_t first, int64_t end, float scale, int32_t zp) {
        for (int64_t i = first; i < end; ++i) y[i] = dequantize_value(q[i], scale, zp);
      });
    }
  }

 private:
  AxisParams p_;
  bool int32_input_ = false;
};

}  // namespace

// Both ops always have a quantized tensor (Q: its output, DQ: its input), so these quantized
// reference kernels are their only kernels (find_ref_kernel returns them).
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(QuantizeLinear, QuantizeRef);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(DequantizeLinear, DequantizeRef);

}  // namespace orknn
