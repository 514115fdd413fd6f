// Layout helpers shared by the reference kernels of N x C x spatial... tensors: the per-channel
// plane view (BatchNormalization, InstanceNormalization, global pools) and the window geometry
// of Conv, ConvTranspose and the pools.
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

}  // namespace orknn
