// Reference Conv and ConvTranspose (float32, NCHW, 1 to 3 spatial dims, any group).
//
// Numerics (the contract fast kernels are compared against): for each output element the
// products are accumulated in a float32 accumulator starting at 0, in this order: input channel
// of the group ascending, then kernel taps in row-major order (depth, height, width); taps that
// fall into the padding are skipped. The bias is added after the sum, then the fused activation.
//
// 1-D and 2-D convolutions run as 3-D ones whose leading spatial dims are 1.
#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/nchw.h"

namespace orknn {
namespace {

struct ConvGeometry {
  int64_t batch = 0, in_ch = 0, out_ch = 0, group = 1;
  SpatialGeometry s;
  FusedActivation act;
};

// Reads the normalised node (infer has validated it). `out_ch` comes from the output tensor,
// which works for both ops.
ConvGeometry read_geometry(const KernelContext& ctx) {
  ConvGeometry g;
  g.batch = ctx.in_tensor(0).shape[0];
  g.in_ch = ctx.in_tensor(0).shape[1];
  g.out_ch = ctx.out_tensor(0).shape[1];
  g.group = ctx.node->attrs.get_int("group", 1);
  g.s = read_spatial_geometry(ctx);
  g.act = read_fused_act(ctx.node->attrs);
  return g;
}

// The loop both ops share:
//   y[n, m, o] = act(B[m] + sum over input channels ic of m's group, then taps t (row-major),
//                    of x[n, ic, source(o, t)] * W(m, ic, t))
// `Mode` says which input position output position `o` reads through tap `t` on spatial slot `s`
// (false: none, the tap falls into padding or between strided inputs) and where the taps of
// weight block (m, ic) start.
template <class Mode>
void run_conv(const ConvGeometry& g, const Mode& mode, const KernelContext& ctx) {
  const float* x = ctx.in<float>(0);
  const float* w = ctx.in<float>(1);
  const float* bias = ctx.has_input(2) ? ctx.in<float>(2) : nullptr;
  float* y = ctx.out<float>(0);
  const SpatialGeometry& s = g.s;
  const int64_t in_per_group = g.in_ch / g.group, out_per_group = g.out_ch / g.group;
  const int64_t in_plane = s.in_plane(), taps = s.taps();
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.out_ch; ++m) {
      const int64_t first_in_ch = (m / out_per_group) * in_per_group;
      for (int64_t od = 0; od < s.out[0]; ++od) {
        for (int64_t oh = 0; oh < s.out[1]; ++oh) {
          for (int64_t ow = 0; ow < s.out[2]; ++ow) {
            float acc = 0.f;
            for (int64_t ic = 0; ic < in_per_group; ++ic) {
              const float* xc = x + (n * g.in_ch + first_in_ch + ic) * in_plane;
              const float* wc = w + mode.weight_block(m, first_in_ch + ic, in_per_group, out_per_group) * taps;
              for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
                int64_t id;
                if (!mode.source(s, od, kd, 0, &id)) continue;
                for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
                  int64_t ih;
                  if (!mode.source(s, oh, kh, 1, &ih)) continue;
                  for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                    int64_t iw;
                    if (!mode.source(s, ow, kw, 2, &iw)) continue;
                    acc += xc[(id * s.in[1] + ih) * s.in[2] + iw] * wc[(kd * s.kernel[1] + kh) * s.kernel[2] + kw];
                  }
                }
              }
            }
            if (bias) acc += bias[m];
            *y++ = g.act(acc);
          }
        }
      }
    }
  }
}

// Conv: W is [M, C / group, k...]; output o reads input o * stride - pad_begin + t * dilation.
struct ConvMode {
  static int64_t weight_block(int64_t m, int64_t c, int64_t in_per_group, int64_t /*out_per_group*/) {
    return m * in_per_group + c % in_per_group;
  }
  static bool source(const SpatialGeometry& s, int64_t o, int64_t t, int slot, int64_t* i) {
    *i = s.window_input(slot, o, t);
    return s.inside_input(slot, *i);
  }
};

// ConvTranspose, gather form: W is [C, M / group, k...]; output o receives input i through tap
// t when o + pad_begin = i * stride + t * dilation.
struct ConvTransposeMode {
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

template <class Mode>
class ConvRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    g_ = read_geometry(ctx);
    return Status::Ok();
  }
  void run(const KernelContext& ctx) override { run_conv(g_, Mode(), ctx); }

 private:
  ConvGeometry g_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "ref", 0, nullptr, ConvRef<ConvMode>);
ORKNN_REGISTER_KERNEL(ConvTranspose, "ref", 0, nullptr, ConvRef<ConvTransposeMode>);

}  // namespace orknn
