// Reference Conv and ConvTranspose (float32, NCHW, 1 to 3 spatial dims, any group).
//
// Numerics (the contract fast kernels are compared against): for each output element the
// products are accumulated in a float32 accumulator starting at 0, in this order: input channel
// of the group ascending, then kernel taps in row-major order (depth, height, width); taps that
// fall into the padding are skipped. The bias is added after the sum, then the fused activation.
//
// 1-D and 2-D convolutions run as 3-D ones whose leading spatial dims are 1.
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/ref/activation.h"

namespace orknn {
namespace {

struct ConvGeometry {
  int64_t batch = 0, in_ch = 0, out_ch = 0, group = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, pad_begin[3] = {0, 0, 0};
  FusedAct act = FusedAct::kNone;
  float alpha = 0.f, beta = 0.f;
};

// Reads the normalised node (infer has validated it) into a geometry. `out_ch` comes from the
// output tensor, which works for both ops.
ConvGeometry read_geometry(const KernelContext& ctx) {
  ConvGeometry g;
  const Shape& xs = ctx.in_tensor(0).shape;
  const Shape& ys = ctx.out_tensor(0).shape;
  const Attrs& at = ctx.node->attrs;
  const size_t k = xs.size() - 2;
  const std::vector<int64_t> kernel = at.get_ints("kernel_shape");
  const std::vector<int64_t> strides = at.get_ints("strides");
  const std::vector<int64_t> dilations = at.get_ints("dilations");
  const std::vector<int64_t> pads = at.get_ints("pads");
  g.batch = xs[0];
  g.in_ch = xs[1];
  g.out_ch = ys[1];
  g.group = at.get_int("group", 1);
  for (size_t i = 0; i < k; ++i) {
    const size_t slot = 3 - k + i;  // spatial dims are right-aligned into the 3 slots
    g.in[slot] = xs[2 + i];
    g.out[slot] = ys[2 + i];
    g.kernel[slot] = kernel[i];
    g.stride[slot] = strides[i];
    g.dilation[slot] = dilations[i];
    g.pad_begin[slot] = pads[i];
  }
  g.act = parse_fused_act(at.get_string("fused_act", ""));
  g.alpha = at.get_float("fused_alpha", 0.f);
  g.beta = at.get_float("fused_beta", 0.f);
  return g;
}

class ConvRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    g_ = read_geometry(ctx);
    return Status::Ok();
  }

  // y[n, m, o] = act(bias[m] + sum_{ic, t} x[n, group_base + ic, o * stride - pad + t * dilation] * w[m, ic, t])
  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    const float* w = ctx.in<float>(1);
    const float* bias = ctx.has_input(2) ? ctx.in<float>(2) : nullptr;
    float* y = ctx.out<float>(0);
    const ConvGeometry& g = g_;
    const int64_t in_per_group = g.in_ch / g.group, out_per_group = g.out_ch / g.group;
    const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t m = 0; m < g.out_ch; ++m) {
        const int64_t first_in_ch = (m / out_per_group) * in_per_group;
        for (int64_t od = 0; od < g.out[0]; ++od) {
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            for (int64_t ow = 0; ow < g.out[2]; ++ow) {
              float acc = 0.f;
              for (int64_t ic = 0; ic < in_per_group; ++ic) {
                const float* xc = x + (n * g.in_ch + first_in_ch + ic) * in_plane;
                const float* wc = w + (m * in_per_group + ic) * taps;
                for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
                  const int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
                  if (id < 0 || id >= g.in[0]) continue;
                  for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                    const int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
                    if (ih < 0 || ih >= g.in[1]) continue;
                    for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                      const int64_t iw = ow * g.stride[2] - g.pad_begin[2] + kw * g.dilation[2];
                      if (iw < 0 || iw >= g.in[2]) continue;
                      acc += xc[(id * g.in[1] + ih) * g.in[2] + iw] *
                             wc[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
                    }
                  }
                }
              }
              if (bias) acc += bias[m];
              *y++ = apply_fused_act(acc, g.act, g.alpha, g.beta);
            }
          }
        }
      }
    }
  }

 private:
  ConvGeometry g_;
};

// Gather form of the transposed convolution: output position o receives input position i
// through tap t when o + pad = i * stride + t * dilation.
class ConvTransposeRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    g_ = read_geometry(ctx);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    const float* w = ctx.in<float>(1);  // [C, M / group, k...]
    const float* bias = ctx.has_input(2) ? ctx.in<float>(2) : nullptr;
    float* y = ctx.out<float>(0);
    const ConvGeometry& g = g_;
    const int64_t in_per_group = g.in_ch / g.group, out_per_group = g.out_ch / g.group;
    const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t m = 0; m < g.out_ch; ++m) {
        const int64_t first_in_ch = (m / out_per_group) * in_per_group;
        const int64_t m_in_group = m % out_per_group;
        for (int64_t od = 0; od < g.out[0]; ++od) {
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            for (int64_t ow = 0; ow < g.out[2]; ++ow) {
              float acc = 0.f;
              for (int64_t ic = 0; ic < in_per_group; ++ic) {
                const int64_t c = first_in_ch + ic;
                const float* xc = x + (n * g.in_ch + c) * in_plane;
                const float* wc = w + (c * out_per_group + m_in_group) * taps;
                for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
                  int64_t id;
                  if (!source_index(od, kd, 0, &id)) continue;
                  for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                    int64_t ih;
                    if (!source_index(oh, kh, 1, &ih)) continue;
                    for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                      int64_t iw;
                      if (!source_index(ow, kw, 2, &iw)) continue;
                      acc += xc[(id * g.in[1] + ih) * g.in[2] + iw] *
                             wc[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
                    }
                  }
                }
              }
              if (bias) acc += bias[m];
              *y++ = apply_fused_act(acc, g.act, g.alpha, g.beta);
            }
          }
        }
      }
    }
  }

 private:
  // Input index that reaches output `o` through tap `t` on spatial slot `s`, if any.
  bool source_index(int64_t o, int64_t t, int s, int64_t* i) const {
    const int64_t pos = o + g_.pad_begin[s] - t * g_.dilation[s];
    if (pos < 0 || pos % g_.stride[s] != 0) return false;
    *i = pos / g_.stride[s];
    return *i < g_.in[s];
  }

  ConvGeometry g_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "ref", 0, nullptr, ConvRef);
ORKNN_REGISTER_KERNEL(ConvTranspose, "ref", 0, nullptr, ConvTransposeRef);

}  // namespace orknn
