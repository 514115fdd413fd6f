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

// MaxPool (kMax) and AveragePool.
template <bool kMax>
class WindowPoolRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    g_ = read_spatial_geometry(ctx);
    const ChannelPlanes p = channel_planes(ctx.in_tensor(0).shape);
    planes_ = p.batch * p.channels;
    count_include_pad_ = ctx.node->attrs.get_int("count_include_pad", 0) != 0;
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const SpatialGeometry& g = g_;
    const int64_t in_plane = g.in_plane();
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    for (int64_t p = 0; p < planes_; ++p) {
      const float* xp = x + p * in_plane;
      for (int64_t od = 0; od < g.out[0]; ++od) {
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            float sum = 0.f;
            float max = std::numeric_limits<float>::lowest();
            int64_t count = 0;
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
              const int64_t id = g.window_input(0, od, kd);
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                const int64_t ih = g.window_input(1, oh, kh);
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const int64_t iw = g.window_input(2, ow, kw);
                  const bool inside = g.inside_input(0, id) && g.inside_input(1, ih) && g.inside_input(2, iw);
                  if (inside) {
                    const float v = xp[(id * g.in[1] + ih) * g.in[2] + iw];
                    sum += v;
                    if (v > max) max = v;
                  }
                  if (count_include_pad_ ? g.inside_padded(0, id) && g.inside_padded(1, ih) && g.inside_padded(2, iw)
                                         : inside)
                    ++count;
                }
              }
            }
            if (kMax) {
              *y++ = max;
            } else {
              *y++ = count > 0 ? sum / static_cast<float>(count) : 0.f;
            }
          }
        }
      }
    }
  }

 private:
  bool count_include_pad_ = false;
  int64_t planes_ = 0;  // N * C
  SpatialGeometry g_;
};

// GlobalMaxPool (kMax) and GlobalAveragePool.
template <bool kMax>
class GlobalPoolRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const ChannelPlanes p = channel_planes(ctx.in_tensor(0).shape);
    planes_ = p.batch * p.channels;
    plane_size_ = p.plane;
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    for (int64_t p = 0; p < planes_; ++p) {
      const float* xp = x + p * plane_size_;
      if (kMax) {
        float max = std::numeric_limits<float>::lowest();
        for (int64_t i = 0; i < plane_size_; ++i)
          if (xp[i] > max) max = xp[i];
        y[p] = max;
      } else {
        float sum = 0.f;
        for (int64_t i = 0; i < plane_size_; ++i) sum += xp[i];
        y[p] = sum / static_cast<float>(plane_size_);
      }
    }
  }

 private:
  int64_t planes_ = 0, plane_size_ = 1;
};

// Parameters shared by the quantized pools.
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
  int8_t max_result(int32_t m) const { return same ? static_cast<int8_t>(m) : requantize(m - zp_x, ratio, zp_y); }
  int8_t average_result(int64_t acc, int64_t count) const {
    if (count == 0) return static_cast<int8_t>(sat8(zp_y));
    const float mc = ratio / static_cast<float>(count);
    return rne_add_zp_sat8(static_cast<float>(acc) * mc, zp_y);
  }
};

template <bool kMax>
class WindowPoolQ8 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    ORKNN_RETURN_IF_ERROR(q_.init(ctx));
    g_ = read_spatial_geometry(ctx);
    const ChannelPlanes p = channel_planes(ctx.in_tensor(0).shape);
    planes_ = p.batch * p.channels;
    count_include_pad_ = ctx.node->attrs.get_int("count_include_pad", 0) != 0;
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const SpatialGeometry& g = g_;
    const int64_t in_plane = g.in_plane();
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    for (int64_t p = 0; p < planes_; ++p) {
      const int8_t* xp = x + p * in_plane;
      for (int64_t od = 0; od < g.out[0]; ++od) {
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            int64_t acc = 0, count = 0;
            int32_t max = -128;
            bool any = false;
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
              const int64_t id = g.window_input(0, od, kd);
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                const int64_t ih = g.window_input(1, oh, kh);
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const int64_t iw = g.window_input(2, ow, kw);
                  const bool inside = g.inside_input(0, id) && g.inside_input(1, ih) && g.inside_input(2, iw);
                  if (inside) {
                    const int32_t v = xp[(id * g.in[1] + ih) * g.in[2] + iw];
                    acc += v - q_.zp_x;
                    if (v > max) max = v;
                    any = true;
                  }
                  if (count_include_pad_ ? g.inside_padded(0, id) && g.inside_padded(1, ih) && g.inside_padded(2, iw)
                                         : inside)
                    ++count;
                }
              }
            }
            if (kMax) {
              *y++ = any ? q_.max_result(max) : int8_t{-128};
            } else {
              *y++ = q_.average_result(acc, count);
            }
          }
        }
      }
    }
  }

 private:
  PoolQuant q_;
  bool count_include_pad_ = false;
  int64_t planes_ = 0;
  SpatialGeometry g_;
};

template <bool kMax>
class GlobalPoolQ8 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    ORKNN_RETURN_IF_ERROR(q_.init(ctx));
    const ChannelPlanes p = channel_planes(ctx.in_tensor(0).shape);
    planes_ = p.batch * p.channels;
    plane_size_ = p.plane;
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    for (int64_t p = 0; p < planes_; ++p) {
      const int8_t* xp = x + p * plane_size_;
      if (kMax) {
        int32_t max = -128;
        for (int64_t i = 0; i < plane_size_; ++i)
          if (xp[i] > max) max = xp[i];
        y[p] = plane_size_ > 0 ? q_.max_result(max) : int8_t{-128};
      } else {
        int64_t acc = 0;
        for (int64_t i = 0; i < plane_size_; ++i) acc += xp[i] - q_.zp_x;
        y[p] = q_.average_result(acc, plane_size_);
      }
    }
  }

 private:
  PoolQuant q_;
  int64_t planes_ = 0, plane_size_ = 1;
};

}  // namespace

ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(MaxPool, WindowPoolQ8<true>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(AveragePool, WindowPoolQ8<false>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(GlobalMaxPool, GlobalPoolQ8<true>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(GlobalAveragePool, GlobalPoolQ8<false>);
ORKNN_REGISTER_KERNEL(MaxPool, "ref", 0, nullptr, WindowPoolRef<true>);
ORKNN_REGISTER_KERNEL(AveragePool, "ref", 0, nullptr, WindowPoolRef<false>);
ORKNN_REGISTER_KERNEL(GlobalMaxPool, "ref", 0, nullptr, GlobalPoolRef<true>);
ORKNN_REGISTER_KERNEL(GlobalAveragePool, "ref", 0, nullptr, GlobalPoolRef<false>);

}  // namespace orknn
