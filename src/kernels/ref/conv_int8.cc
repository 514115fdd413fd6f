// Reference quantized Conv and ConvTranspose (docs/numerics.md, "Quantized (INT8) models"; NCHW,
// 1 to 3 spatial dims, any group, stride, dilation and padding).
//
// For output channel c of a quantized node (infer has checked the form):
//   acc = bias_q[c] + sum over the taps that fall inside the input of (x - zp_x) * w     (int32, exact)
//   y   = sat8(rne(float(acc) * M[c]) + zp_y),   M[c] = (s_x * s_w[c]) / s_y   (float32, at prepare)
// then the fused activation clamps y (Relu, Clip: kernels/ref/int8_compute.h). Padding taps are
// skipped, which equals padding with zp_x. Integer sums are exact, so their order does not
// matter; infer guarantees that |acc| fits in int32 (the kernel accumulates in int64 all the same,
// so no sum is ever undefined behaviour).
//
// The loops mirror the float reference kernel (kernels/ref/conv.cc): 1-D and 2-D convolutions run
// as 3-D ones whose leading spatial dims are 1, and ConvTranspose is written in gather form.
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/int8_compute.h"
#include "kernels/ref/nchw.h"

namespace orknn {
namespace {

// Conv: W is [M, C / group, k...]; output o reads input o * stride - pad_begin + t * dilation.
struct ConvTaps {
  static int64_t weight_block(int64_t m, int64_t c, int64_t in_per_group, int64_t /*out_per_group*/) {
    return m * in_per_group + c % in_per_group;
  }
  static bool source(const SpatialGeometry& s, int64_t o, int64_t t, int slot, int64_t* i) {
    *i = s.window_input(slot, o, t);
    return s.inside_input(slot, *i);
  }
};

// ConvTranspose, gather form: W is [C, M / group, k...]; output o receives input i through tap t
// when o + pad_begin = i * stride + t * dilation.
struct ConvTransposeTaps {
  static int64_t weight_block(int64_t m, int64_t c, int64_t /*in_per_group*/, int64_t out_per_group) {
    return c * out_per_group + m % out_per_group;
  }
  static bool source(const SpatialGeometry& s, int64_t o, int64_t t, int slot, int64_t* i) {
    const int64_t pos = o + s.pad_begin[slot] - t * s.dilation[slot];
    if (pos < 0 || pos % s.stride[slot] != 0) return false;
    *i = pos / s.stride[slot];
    return *i < s.in[slot];
  }
};

template <class Taps>
class ConvInt8Ref : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Tensor& x = ctx.in_tensor(0);
    const Tensor& y = ctx.out_tensor(0);
    batch_ = x.shape[0];
    in_ch_ = x.shape[1];
    out_ch_ = y.shape[1];
    group_ = ctx.node->attrs.get_int("group", 1);
    s_ = read_spatial_geometry(ctx);
    const QuantScalar qx = per_tensor(x), qy = per_tensor(y);
    zp_x_ = qx.zp;
    zp_y_ = qy.zp;
    // With per-channel ConvTranspose weights (group 1) axis 1 has M entries: one per output channel.
    mult_ = requant_multipliers(qx.scale, ctx.in_tensor(1).quant, qy.scale, out_ch_);
    clamp_ = int8_clamp_of_fused_act(ctx.node->attrs, qy.scale, qy.zp);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    const int8_t* w = ctx.in<int8_t>(1);
    const int32_t* bias = ctx.has_input(2) ? ctx.in<int32_t>(2) : nullptr;
    int8_t* y = ctx.out<int8_t>(0);
    const SpatialGeometry& s = s_;
    const int64_t in_per_group = in_ch_ / group_, out_per_group = out_ch_ / group_;
    const int64_t in_plane = s.in_plane(), taps = s.taps();
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t m = 0; m < out_ch_; ++m) {
        const int64_t first_in_ch = (m / out_per_group) * in_per_group;
        const float mult = mult_[static_cast<size_t>(m)];
        for (int64_t od = 0; od < s.out[0]; ++od) {
          for (int64_t oh = 0; oh < s.out[1]; ++oh) {
            for (int64_t ow = 0; ow < s.out[2]; ++ow) {
              int64_t acc = bias ? bias[m] : 0;
              for (int64_t ic = 0; ic < in_per_group; ++ic) {
                const int8_t* xc = x + (n * in_ch_ + first_in_ch + ic) * in_plane;
                const int8_t* wc = w + Taps::weight_block(m, first_in_ch + ic, in_per_group, out_per_group) * taps;
                for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
                  int64_t id;
                  if (!Taps::source(s, od, kd, 0, &id)) continue;
                  for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
                    int64_t ih;
                    if (!Taps::source(s, oh, kh, 1, &ih)) continue;
                    for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                      int64_t iw;
                      if (!Taps::source(s, ow, kw, 2, &iw)) continue;
                      const int32_t xv = xc[(id * s.in[1] + ih) * s.in[2] + iw];
                      const int32_t wv = wc[(kd * s.kernel[1] + kh) * s.kernel[2] + kw];
                      acc += (xv - zp_x_) * wv;
                    }
                  }
                }
              }
              // Infer bounds |acc| by INT32_MAX, so the conversion keeps the value.
              *y++ = clamp_(requantize(static_cast<int32_t>(acc), mult, zp_y_));
            }
          }
        }
      }
    }
  }

 private:
  int64_t batch_ = 0, in_ch_ = 0, out_ch_ = 0, group_ = 1;
  SpatialGeometry s_;
  int32_t zp_x_ = 0, zp_y_ = 0;
  std::vector<float> mult_;
  Int8Clamp clamp_;
};

}  // namespace

ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Conv, ConvInt8Ref<ConvTaps>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(ConvTranspose, ConvInt8Ref<ConvTransposeTaps>);

}  // namespace orknn
