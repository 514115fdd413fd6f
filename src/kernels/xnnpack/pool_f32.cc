// Float 2-D MaxPool and AveragePool, and GlobalAveragePool, on XNNPACK's NHWC pooling operators.
//
// Windows as the reference's (kernels/ref/pool.cc): ceil_mode's extra windows are XNNPACK's
// padding grown at the end until its floor gives infer's output size. XNNPACK's max pooling reads
// a padding tap as the nearest input element of the same row or column, which lies inside the
// window as long as there is no dilation and every window holds an input element; its average
// pooling divides by the number of taps inside the input, which is count_include_pad = 0 (or 1
// without declared pads: then the two counts are equal). supports() declines the rest: dilation,
// 1x1 windows (XNNPACK refuses them), count_include_pad = 1 with pads, windows without an input
// element, MaxPool's Indices output.
//
// Numerics: MaxPool picks the same element (bit-identical, NaN inputs aside: XNNPACK's max
// propagates them, the reference skips them); averages sum in another order and multiply by the
// reciprocal of the count where the reference divides, within docs/kernels.md's float tolerance.
// Layout: NHWC in and out, the runtime's float blocked layout here, NCHW through the shared scratch
// (xnnpack::ChannelsLastIo).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/ref/nchw.h"
#include "kernels/xnnpack/xnnpack_common.h"
#include "ops/op.h"

namespace orknn {
namespace {

bool float_node(const Graph& g, const Node& n) {
  if (n.outputs.empty() || n.outputs[0] < 0 || is_quantized_node(g, n)) return false;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) return false;  // MaxPool's Indices
  return is_f32(g.input(n, 0)) && is_f32(&g.tensor(n.outputs[0])) && xnnpack::available();
}

SpatialGeometry pool_geometry(const Graph& g, const Node& n) {
  KernelContext c;
  c.graph = &g;
  c.node = &n;
  return read_spatial_geometry(c);
}

// XNNPACK's bottom and right padding: the declared one, grown for ceil_mode's extra windows.
int64_t end_padding(const SpatialGeometry& s, int slot) {
  const int64_t needed = (s.out[slot] - 1) * s.stride[slot] + s.kernel[slot] - s.in[slot] - s.pad_begin[slot];
  return std::max(s.pad_end[slot], needed);
}

bool supports_window_pool(const Graph& g, const Node& n) {
  if (!float_node(g, n) || g.input(n, 0)->shape.size() != 4) return false;
  const SpatialGeometry s = pool_geometry(g, n);
  if (s.kernel[1] * s.kernel[2] == 1) return false;
  for (int slot : {1, 2}) {
    if (s.dilation[slot] != 1) return false;
    // Every window holds an input element: the first starts before the input ends its first
    // window, the last starts inside the input.
    if (s.pad_begin[slot] >= s.kernel[slot] || (s.out[slot] - 1) * s.stride[slot] - s.pad_begin[slot] >= s.in[slot])
      return false;
  }
  if (n.op == OpId::AveragePool && n.attrs.get_int("count_include_pad", 0) != 0)
    for (int slot : {1, 2})
      if (s.pad_begin[slot] != 0 || s.pad_end[slot] != 0) return false;
  return true;
}

bool supports_global_average(const Graph& g, const Node& n) {
  return float_node(g, n) && g.input(n, 0)->shape.size() >= 3;
}

class PoolF32Xnnpack : public xnnpack::ImageKernel<float> {
 public:

  Status prepare(const KernelContext& ctx) override {
    const Node& n = *ctx.node;
    const bool global = n.op == OpId::GlobalAveragePool;
    if (!(global ? supports_global_average(*ctx.graph, n) : supports_window_pool(*ctx.graph, n)))
      return ORKNN_ERR(kFail, "%s '%s': not a float pooling XNNPACK takes", op_name(n.op), n.name.c_str());
    const Shape& xs = ctx.in_tensor(0).shape;
    const int64_t batch = xs[0], channels = xs[1];
    const size_t c = static_cast<size_t>(channels);
    xnn_status st;
    xnnpack::ChannelsLastIo<float>::Dims d;
    size_t h = 1, w = 1;
    if (global) {
      const int64_t pixels = shape_numel(xs) / (batch * channels);
      st = xnn_create_global_average_pooling_nwc_f32(c, c, c, -INFINITY, INFINITY, XNN_FLAG_YIELD_WORKERS, op_.out());
      d = {batch, channels, pixels, channels, 1};
      w = static_cast<size_t>(pixels);  // one row of H*W pixels
    } else {
      const SpatialGeometry s = read_spatial_geometry(ctx);
      const uint32_t top = static_cast<uint32_t>(s.pad_begin[1]), left = static_cast<uint32_t>(s.pad_begin[2]);
      const uint32_t bottom = static_cast<uint32_t>(end_padding(s, 1));
      const uint32_t right = static_cast<uint32_t>(end_padding(s, 2));
      const uint32_t kh = static_cast<uint32_t>(s.kernel[1]), kw = static_cast<uint32_t>(s.kernel[2]);
      const uint32_t sh = static_cast<uint32_t>(s.stride[1]), sw = static_cast<uint32_t>(s.stride[2]);
      if (n.op == OpId::MaxPool)
        st = xnn_create_max_pooling2d_nhwc_f32(top, right, bottom, left, kh, kw, sh, sw, 1, 1, c, c, c, -INFINITY,
                                               INFINITY, XNN_FLAG_YIELD_WORKERS, op_.out());
      else
        st = xnn_create_average_pooling2d_nhwc_f32(top, right, bottom, left, kh, kw, sh, sw, c, c, c, -INFINITY,
                                                   INFINITY, XNN_FLAG_YIELD_WORKERS, op_.out());
      d = {batch, channels, s.in[1] * s.in[2], channels, s.out[1] * s.out[2]};
      h = static_cast<size_t>(s.in[1]);
      w = static_cast<size_t>(s.in[2]);
    }
    if (st != xnn_status_success)
      return ORKNN_ERR(kFail, "%s '%s': XNNPACK refused the pooling (status %d)", op_name(n.op), n.name.c_str(),
                       int(st));
    pool_ = xnnpack::thread_pool(ctx.num_threads);
    const OpId op = n.op;
    const size_t nb = static_cast<size_t>(batch);
    // Setup sizes XNNPACK's indirection buffer (window pooling) on its first call and keeps it for
    // the same shape; it checks only what create() checked, so it cannot fail on a created operator.
    io_.prepare(ctx, d, false, &own_, [this, op, nb, h, w](const float* in, float* out) {
      if (op == OpId::GlobalAveragePool)
        xnn_setup_global_average_pooling_nwc_f32(op_.get(), nb, w, in, out, pool_);
      else if (op == OpId::MaxPool)
        xnn_setup_max_pooling2d_nhwc_f32(op_.get(), nb, h, w, in, out, pool_);
      else
        xnn_setup_average_pooling2d_nhwc_f32(op_.get(), nb, h, w, in, out, pool_);
    });
    return Status::Ok();
  }
};

}  // namespace

ORKNN_REGISTER_KERNEL(MaxPool, "xnnpack_pool_f32", kPriorityGeneral, supports_window_pool, PoolF32Xnnpack);
ORKNN_REGISTER_KERNEL(AveragePool, "xnnpack_pool_f32", kPriorityGeneral, supports_window_pool, PoolF32Xnnpack);
ORKNN_REGISTER_KERNEL(GlobalAveragePool, "xnnpack_global_pool_f32", kPriorityGeneral, supports_global_average,
                      PoolF32Xnnpack);

}  // namespace orknn
