// Layout helpers shared by the reference kernels of N x C x spatial... tensors: the per-channel
// plane view (BatchNormalization, InstanceNormalization, global pools), the window geometry of
// Conv, ConvTranspose and the pools, and the loops of the pools and convolutions. The float and
// the int8 reference kernels share these loops, so that they differ only in their arithmetic
// (what an accumulator starts from, how a tap is added, how the result is made).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"

namespace orknn {

// x viewed as batch x channels planes of `plane` contiguous elements (the spatial dims).
struct ChannelPlanes {
  int64_t batch = 0, channels = 0, plane = 1;
};

inline ChannelPlanes channel_planes(const Shape& x) {
  ChannelPlanes p;
  p.batch = x[0];
  p.channels = x[1];
  for (size_t i = 2; i < x.size(); ++i) p.plane *= x[i];
  return p;
}

// Calls f(c, first) for every (n, c) plane of `p` in memory order: the plane of channel c starts
// at element `first`.
template <class F>
void for_each_plane(const ChannelPlanes& p, F&& f) {
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) f(c, (n * p.channels + c) * p.plane);
}

// Spatial geometry of a windowed op (1 to 3 spatial dims) from its normalised attributes
// "kernel_shape", "strides", "dilations", "pads" and the input/output shapes. Spatial dims are
// right-aligned into 3 slots; the leading unused slots have size 1 (so 1-D and 2-D ops run as
// 3-D ones). Window tap t of output position o on slot s reads input o * stride - pad_begin + t * dilation.
struct SpatialGeometry {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, pad_begin[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  // Input position read by tap t of output position o on slot s (may lie in the padding).
  int64_t window_input(int s, int64_t o, int64_t t) const { return o * stride[s] - pad_begin[s] + t * dilation[s]; }
  bool inside_input(int s, int64_t i) const { return i >= 0 && i < in[s]; }
  // Inside the padded input [-pad_begin, in + pad_end).
  bool inside_padded(int s, int64_t i) const { return i >= -pad_begin[s] && i < in[s] + pad_end[s]; }
};

inline SpatialGeometry read_spatial_geometry(const KernelContext& ctx) {
  SpatialGeometry g;
  const Shape& xs = ctx.in_tensor(0).shape;
  const Shape& ys = ctx.out_tensor(0).shape;
  const Attrs& at = ctx.node->attrs;
  const size_t k = xs.size() - 2;
  const std::vector<int64_t> kernel = at.get_ints("kernel_shape");
  const std::vector<int64_t> strides = at.get_ints("strides");
  const std::vector<int64_t> dilations = at.get_ints("dilations");
  const std::vector<int64_t> pads = at.get_ints("pads");
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

// ---- pools ----

// MaxPool and AveragePool: every N x C plane is pooled over the windows of `g`.
struct PoolWindows {
  SpatialGeometry g;
  int64_t planes = 0;              // N * C
  bool count_include_pad = false;  // AveragePool's divisor counts padding taps

  // For each output element in memory order: acc = start(); add(acc, x) for every window tap
  // that falls inside the input, taps in row-major order (depth, height, width); then
  // *y++ = finish(acc, count), where count is the number of taps inside the input or, with
  // count_include_pad, inside the padded input [-pad_begin, in + pad_end) (taps beyond the end
  // padding, which ceil_mode can create, never count).
  template <class In, class Out, class Start, class Add, class Finish>
  void run(const In* x, Out* y, Start&& start, Add&& add, Finish&& finish) const {
    const int64_t in_plane = g.in_plane();
    for (int64_t p = 0; p < planes; ++p) {
      const In* xp = x + p * in_plane;
      for (int64_t od = 0; od < g.out[0]; ++od) {
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            auto acc = start();
            int64_t count = 0;
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
              const int64_t id = g.window_input(0, od, kd);
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                const int64_t ih = g.window_input(1, oh, kh);
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const int64_t iw = g.window_input(2, ow, kw);
                  const bool inside = g.inside_input(0, id) && g.inside_input(1, ih) && g.inside_input(2, iw);
                  if (inside) add(acc, xp[(id * g.in[1] + ih) * g.in[2] + iw]);
                  if (count_include_pad ? g.inside_padded(0, id) && g.inside_padded(1, ih) && g.inside_padded(2, iw)
                                        : inside)
                    ++count;
                }
              }
            }
            *y++ = finish(acc, count);
          }
        }
      }
    }
  }
};

inline PoolWindows read_pool_windows(const KernelContext& ctx) {
  PoolWindows w;
  w.g = read_spatial_geometry(ctx);
  const ChannelPlanes p = channel_planes(ctx.in_tensor(0).shape);
  w.planes = p.batch * p.channels;
  w.count_include_pad = ctx.node->attrs.get_int("count_include_pad", 0) != 0;
  return w;
}

// GlobalMaxPool and GlobalAveragePool: each N x C plane is one window. For plane p:
// acc = start(); add(acc, x) for its elements in memory order; y[p] = finish(acc, plane size).
template <class In, class Out, class Start, class Add, class Finish>
void pool_planes(const ChannelPlanes& p, const In* x, Out* y, Start&& start, Add&& add, Finish&& finish) {
  const int64_t planes = p.batch * p.channels;
  for (int64_t i = 0; i < planes; ++i) {
    const In* xp = x + i * p.plane;
    auto acc = start();
    for (int64_t e = 0; e < p.plane; ++e) add(acc, xp[e]);
    y[i] = finish(acc, p.plane);
  }
}

// ---- Conv and ConvTranspose ----

// Channels and groups of a normalised Conv/ConvTranspose node (infer has validated it). `out_ch`
// comes from the output tensor, which works for both ops.
struct ConvShape {
  int64_t batch = 0, in_ch = 0, out_ch = 0, group = 1;
  SpatialGeometry s;
};

inline ConvShape read_conv_shape(const KernelContext& ctx) {
  ConvShape c;
  c.batch = ctx.in_tensor(0).shape[0];
  c.in_ch = ctx.in_tensor(0).shape[1];
  c.out_ch = ctx.out_tensor(0).shape[1];
  c.group = ctx.node->attrs.get_int("group", 1);
  c.s = read_spatial_geometry(ctx);
  return c;
}

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

// ConvTranspose, gather form: W is [C, M / group, k...]; output o receives input i through tap
// t when o + pad_begin = i * stride + t * dilation.
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

// The loop both ops share, for output element y[n, m, o] in memory order:
//   acc = start(m); then for the input channels ic of m's group ascending, then the taps t in
//   row-major order (depth, height, width): mac(acc, x[n, ic, source(o, t)], W(m, ic, t)),
//   skipping taps without a source; then *y++ = finish(m, acc).
// `Taps` says which input position output position `o` reads through tap `t` on spatial slot `s`
// (none: the tap falls into padding or between strided inputs) and where the taps of weight
// block (m, ic) start.
template <class Taps, class In, class W, class Out, class Start, class Mac, class Finish>
void conv_loop(const ConvShape& g, const In* x, const W* w, Out* y, Start&& start, Mac&& mac, Finish&& finish) {
  const SpatialGeometry& s = g.s;
  const int64_t in_per_group = g.in_ch / g.group, out_per_group = g.out_ch / g.group;
  const int64_t in_plane = s.in_plane(), taps = s.taps();
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.out_ch; ++m) {
      const int64_t first_in_ch = (m / out_per_group) * in_per_group;
      for (int64_t od = 0; od < s.out[0]; ++od) {
        for (int64_t oh = 0; oh < s.out[1]; ++oh) {
          for (int64_t ow = 0; ow < s.out[2]; ++ow) {
            auto acc = start(m);
            for (int64_t ic = 0; ic < in_per_group; ++ic) {
              const In* xc = x + (n * g.in_ch + first_in_ch + ic) * in_plane;
              const W* wc = w + Taps::weight_block(m, first_in_ch + ic, in_per_group, out_per_group) * taps;
              for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
                int64_t id;
                if (!Taps::source(s, od, kd, 0, &id)) continue;
                for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
                  int64_t ih;
                  if (!Taps::source(s, oh, kh, 1, &ih)) continue;
                  for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                    int64_t iw;
                    if (!Taps::source(s, ow, kw, 2, &iw)) continue;
                    mac(acc, xc[(id * s.in[1] + ih) * s.in[2] + iw], wc[(kd * s.kernel[1] + kh) * s.kernel[2] + kw]);
                  }
                }
              }
            }
            *y++ = finish(m, acc);
          }
        }
      }
    }
  }
}

}  // namespace orknn
