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
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/kernel.h"

namespace orknn {
namespace {

// 1-D and 2-D pools run as 3-D ones whose leading spatial dims are 1.
struct PoolGeometry {
  int64_t planes = 0;  // N * C
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, pad_begin[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
};

PoolGeometry read_geometry(const KernelContext& ctx) {
  PoolGeometry g;
  const Shape& xs = ctx.in_tensor(0).shape;
  const Shape& ys = ctx.out_tensor(0).shape;
  const Attrs& at = ctx.node->attrs;
  const size_t k = xs.size() - 2;
  const std::vector<int64_t> kernel = at.get_ints("kernel_shape");
  const std::vector<int64_t> strides = at.get_ints("strides");
  const std::vector<int64_t> dilations = at.get_ints("dilations");
  const std::vector<int64_t> pads = at.get_ints("pads");
  g.planes = xs[0] * xs[1];
  for (size_t i = 0; i < k; ++i) {
    const size_t slot = 3 - k + i;
    g.in[slot] = xs[2 + i];
    g.out[slot] = ys[2 + i];
    g.kernel[slot] = kernel[i];
    g.stride[slot] = strides[i];
    g.dilation[slot] = dilations[i];
    g.pad_begin[slot] = pads[i];
    g.pad_end[slot] = pads[k + i];
  }
  return g;
}

class WindowPoolRef : public Kernel {
 public:
  explicit WindowPoolRef(bool is_max) : is_max_(is_max) {}

  Status prepare(const KernelContext& ctx) override {
    g_ = read_geometry(ctx);
    count_include_pad_ = ctx.node->attrs.get_int("count_include_pad", 0) != 0;
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const PoolGeometry& g = g_;
    const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    for (int64_t p = 0; p < g.planes; ++p) {
      const float* xp = x + p * in_plane;
      for (int64_t od = 0; od < g.out[0]; ++od) {
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            float sum = 0.f;
            float max = std::numeric_limits<float>::lowest();
            int64_t count = 0;
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
              const int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                const int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const int64_t iw = ow * g.stride[2] - g.pad_begin[2] + kw * g.dilation[2];
                  const bool inside = inside_input(id, 0) && inside_input(ih, 1) && inside_input(iw, 2);
                  if (inside) {
                    const float v = xp[(id * g.in[1] + ih) * g.in[2] + iw];
                    sum += v;
                    if (v > max) max = v;
                  }
                  if (count_include_pad_ ? inside_padded(id, 0) && inside_padded(ih, 1) && inside_padded(iw, 2) : inside)
                    ++count;
                }
              }
            }
            if (is_max_) {
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
  bool inside_input(int64_t i, int s) const { return i >= 0 && i < g_.in[s]; }
  bool inside_padded(int64_t i, int s) const { return i >= -g_.pad_begin[s] && i < g_.in[s] + g_.pad_end[s]; }

  bool is_max_;
  bool count_include_pad_ = false;
  PoolGeometry g_;
};

class MaxPoolRef : public WindowPoolRef {
 public:
  MaxPoolRef() : WindowPoolRef(true) {}
};
class AveragePoolRef : public WindowPoolRef {
 public:
  AveragePoolRef() : WindowPoolRef(false) {}
};

class GlobalPoolRef : public Kernel {
 public:
  explicit GlobalPoolRef(bool is_max) : is_max_(is_max) {}

  Status prepare(const KernelContext& ctx) override {
    const Shape& x = ctx.in_tensor(0).shape;
    planes_ = x[0] * x[1];
    plane_size_ = 1;
    for (size_t i = 2; i < x.size(); ++i) plane_size_ *= x[i];
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    for (int64_t p = 0; p < planes_; ++p) {
      const float* xp = x + p * plane_size_;
      if (is_max_) {
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
  bool is_max_;
  int64_t planes_ = 0, plane_size_ = 1;
};

class GlobalMaxPoolRef : public GlobalPoolRef {
 public:
  GlobalMaxPoolRef() : GlobalPoolRef(true) {}
};
class GlobalAveragePoolRef : public GlobalPoolRef {
 public:
  GlobalAveragePoolRef() : GlobalPoolRef(false) {}
};

}  // namespace

ORKNN_REGISTER_KERNEL(MaxPool, "ref", 0, nullptr, MaxPoolRef);
ORKNN_REGISTER_KERNEL(AveragePool, "ref", 0, nullptr, AveragePoolRef);
ORKNN_REGISTER_KERNEL(GlobalMaxPool, "ref", 0, nullptr, GlobalMaxPoolRef);
ORKNN_REGISTER_KERNEL(GlobalAveragePool, "ref", 0, nullptr, GlobalAveragePoolRef);

}  // namespace orknn
