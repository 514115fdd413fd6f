// What the fast INT8 MaxPool kernels of every backend share (x86_maxpool_int8, neon_maxpool_int8):
// the nodes (2-D windows without dilation on 4-D int8 activations whose output keeps the input's
// parameters, so that the result is the largest code of the window, exact in any order:
// docs/numerics.md, kernels/ref/pool.cc), their geometry, and the kernel around a backend's two
// loops (NCHW planes through a row buffer, NHWC output rows).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"

namespace orknn {

struct MaxPoolGeometry {
  int64_t batch = 0, channels = 0, planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, pad_t = 0, pad_l = 0;
  int64_t row_len = 0;  // row buffer: -128 | image row | -128, plus the slack of the last vector's loads
};

// False for a node the kernels do not take. `vec`: the backend's vector bytes (row buffer slack).
inline bool maxpool_int8_geometry(const Graph& g, const Node& n, int64_t vec, MaxPoolGeometry* geo) {
  if (n.op != OpId::MaxPool || n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0)
    return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x.shape.size() != 4 || y.shape.size() != 4 || x.dtype != DType::kI8 || y.dtype != DType::kI8) return false;
  if (x.quant.scale.size() != 1 || x.quant.zero_point.size() != 1 || x.quant.scale != y.quant.scale ||
      x.quant.zero_point != y.quant.zero_point)
    return false;  // a node that requantizes stays on the reference kernel
  const std::vector<int64_t> ks = n.attrs.get_ints("kernel_shape", {});
  const std::vector<int64_t> st = n.attrs.get_ints("strides", {1, 1});
  const std::vector<int64_t> dil = n.attrs.get_ints("dilations", {1, 1});
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", {0, 0, 0, 0});
  if (ks.size() != 2 || st.size() != 2 || dil.size() != 2 || pads.size() != 4) return false;
  if (dil[0] != 1 || dil[1] != 1 || n.attrs.get_int("storage_order", 0) != 0) return false;
  for (int64_t v : ks)
    if (v < 1 || v > 64) return false;
  for (int64_t v : st)
    if (v < 1 || v > 64) return false;
  for (int64_t v : pads)
    if (v < 0 || v > 64) return false;
  if (x.shape[0] != y.shape[0] || x.shape[1] != y.shape[1] || y.numel() <= 0) return false;
  geo->batch = x.shape[0];
  geo->channels = x.shape[1];
  geo->planes = x.shape[0] * x.shape[1];
  geo->h = x.shape[2];
  geo->w = x.shape[3];
  geo->oh = y.shape[2];
  geo->ow = y.shape[3];
  geo->kh = ks[0];
  geo->kw = ks[1];
  geo->sh = st[0];
  geo->sw = st[1];
  geo->pad_t = pads[0];
  geo->pad_l = pads[1];
  // Windows reach (OW - 1) * sw + kw columns of the padded row (ceil_mode may pass the right pad);
  // the vector loops read up to 2 * vec + kw bytes past the last output's window start.
  geo->row_len = std::max(geo->pad_l + geo->w, (geo->ow - 1) * geo->sw + geo->kw) + 2 * vec + geo->kw + vec;
  return true;
}

// NHWC, output rows [r0, r1) over the batch: calls pixel(img, out, i0, i1, j0, j1) for each output
// pixel, whose window is the input pixels (i, j), i in [i0, i1), j in [j0, j1), of image `img`
// (its channels at img + (i * w + j) * channels), and whose channels go to `out`.
template <class Pixel>
void maxpool_nhwc_windows(const int8_t* x, int8_t* y, const MaxPoolGeometry& g, int64_t r0, int64_t r1,
                          Pixel&& pixel) {
  const int64_t c = g.channels;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / g.oh, oh = r % g.oh;
    const int64_t h0 = oh * g.sh - g.pad_t;
    const int64_t i0 = std::max<int64_t>(0, h0), i1 = std::min(g.h, h0 + g.kh);
    const int8_t* img = x + b * g.h * g.w * c;
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t w0 = ow * g.sw - g.pad_l;
      pixel(img, y + (r * g.ow + ow) * c, i0, i1, std::max<int64_t>(0, w0), std::min(g.w, w0 + g.kw));
    }
  }
}

// One plane: x (h x w) -> y (oh x ow), with `row`, a thread's row buffer of geo.row_len bytes that
// holds -128 outside the image's columns (where the loop writes nothing).
using MaxPoolPlaneFn = void (*)(const int8_t* x, int8_t* y, const MaxPoolGeometry& geo, int8_t* row);
// NHWC: output rows [r0, r1) over the batch.
using MaxPoolNhwcRowsFn = void (*)(const int8_t* x, int8_t* y, const MaxPoolGeometry& geo, int64_t r0, int64_t r1);

// The kernel: kVec, the backend's vector bytes; kPlane and kNhwcRows its loops.
template <int64_t kVec, MaxPoolPlaneFn kPlane, MaxPoolNhwcRowsFn kNhwcRows>
class MaxPoolInt8Kernel : public Kernel {
 public:
  // NCHW in and out, or NHWC in and out (kernel.h).
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kUniform; }

  Status prepare(const KernelContext& ctx) override {
    if (!maxpool_int8_geometry(*ctx.graph, *ctx.node, kVec, &geo_))
      return ORKNN_ERR(kFail, "MaxPool '%s': not a pooling this kernel handles", ctx.node->name.c_str());
    // One row buffer per thread slot, -128 everywhere; run() writes only the image's columns.
    slots_ = thread_slots(ctx.num_threads);
    rows_.assign(static_cast<size_t>(slots_ * geo_.row_len), static_cast<int8_t>(-128));
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    if (ctx.input_blocked(0)) {
      parallel_ranges(geo_.batch * geo_.oh, ctx.num_threads,
                      [&](int64_t r0, int64_t r1, int) { kNhwcRows(x, y, geo_, r0, r1); });
      return;
    }
    const int64_t in_plane = geo_.h * geo_.w, out_plane = geo_.oh * geo_.ow;
    parallel_ranges(geo_.planes, std::min(ctx.num_threads, slots_), [&](int64_t p0, int64_t p1, int slot) {
      int8_t* row = rows_.data() + static_cast<size_t>(slot) * static_cast<size_t>(geo_.row_len);
      for (int64_t p = p0; p < p1; ++p) kPlane(x + p * in_plane, y + p * out_plane, geo_, row);
    });
  }

 private:
  MaxPoolGeometry geo_;
  int slots_ = 1;
  std::vector<int8_t> rows_;
};

}  // namespace orknn
