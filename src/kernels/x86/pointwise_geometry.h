// The geometry of a 1x1 convolution, shared by the hand-written pointwise kernels (INT8:
// pointwise_int8_vnni.cc, float: pointwise_f32_avx512.cc, pointwise16c_f32_avx512.cc), and of the
// stems those files' stem kernels take.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn {

struct PwGeometry {
  int64_t batch = 0, c = 0, oc = 0, pixels = 0;  // pixels: of one output image
  int64_t h = 0, w = 0, ow = 0, sh = 1, sw = 1;  // input H, W; output W; strides (the INT8 NHWC path only)
  bool strided() const { return sh != 1 || sw != 1; }
};

// A 2-D Conv of one group with constant weights (w[1] == x's channels), an optional bias and one
// output: its activation, weights and output, else false. A Conv with a residual input
// (ops/conv.cc) only when the caller's kernel adds it (`residual_ok`).
inline bool plain_conv2d(const Graph& g, const Node& n, const Tensor** x, const Tensor** w, const Tensor** y,
                         bool residual_ok = false) {
  if (n.op != OpId::Conv || n.inputs.size() < 2 || n.inputs.size() > (residual_ok ? 4u : 3u) || n.outputs.size() != 1 ||
      n.outputs[0] < 0)
    return false;
  *x = g.input(n, 0);
  *w = g.input(n, 1);
  if (!*x || !*w || !(*w)->is_const()) return false;
  *y = &g.tensor(n.outputs[0]);
  if ((*x)->shape.size() != 4 || (*w)->shape.size() != 4 || (*y)->shape.size() != 4) return false;
  return n.attrs.get_int("group", 1) == 1 && (*w)->shape[1] == (*x)->shape[1];
}

inline bool pw_geometry(const Graph& g, const Node& n, PwGeometry* geo, bool residual_ok = false) {
  const Tensor *x = nullptr, *w = nullptr, *yp = nullptr;
  if (!plain_conv2d(g, n, &x, &w, &yp, residual_ok) || w->shape[2] != 1 || w->shape[3] != 1) return false;
  const Tensor& y = *yp;
  const std::vector<int64_t> st = n.attrs.get_ints("strides", {1, 1});
  if (st.size() != 2 || st[0] < 1 || st[0] > 2 || st[1] < 1 || st[1] > 2) return false;
  for (int64_t p : n.attrs.get_ints("pads", {0, 0, 0, 0}))
    if (p != 0) return false;
  const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  // A 1x1 window without padding: output pixel (i, j) reads input pixel (i * sh, j * sw).
  if (y.shape[0] != x->shape[0] || y.shape[1] != w->shape[0] || y.shape[2] != (x->shape[2] - 1) / st[0] + 1 ||
      y.shape[3] != (x->shape[3] - 1) / st[1] + 1)
    return false;
  geo->batch = x->shape[0];
  geo->c = x->shape[1];
  geo->oc = w->shape[0];
  geo->pixels = y.shape[2] * y.shape[3];
  geo->h = x->shape[2];
  geo->w = x->shape[3];
  geo->ow = y.shape[3];
  geo->sh = st[0];
  geo->sw = st[1];
  return geo->batch > 0 && geo->c > 0 && geo->oc > 0;
}

// An unstrided 1x1 Conv of float32 tensors (not quantized) with an optional constant bias of one
// value per output channel (and, when `residual_ok`, an optional float32 residual of the output's
// shape): the nodes the float pointwise kernels consider.
inline bool float_pw_geometry(const Graph& g, const Node& n, PwGeometry* geo, bool residual_ok = false) {
  if (is_quantized_node(g, n) || !pw_geometry(g, n, geo, residual_ok) || geo->strided()) return false;
  const Tensor* b = g.input(n, 2);
  if (!is_f32(g.input(n, 0)) || !is_f32(g.input(n, 1)) || (b && !is_f32(b)) || !is_f32(&g.tensor(n.outputs[0])))
    return false;
  const Tensor* r = g.input(n, 3);
  if (r && (!is_f32(r) || r->shape != g.tensor(n.outputs[0]).shape)) return false;
  return !b || (b->is_const() && b->numel() == geo->oc);
}

// The stems (a first convolution of an image of at most kStemMaxChannels channels), taken by
// x86_stem_int8 (pointwise_int8_vnni.cc) and x86_stem_f32 (pointwise_f32_avx512.cc): a 2-D Conv
// of one group with a window other than 1x1 of at most kStemMaxKernel rows and window rows of at
// most kStemMaxRowBytes elements (kw * c; the INT8 kernel copies one as a 64-byte vector),
// dilation 1, strides up to 8.
constexpr int64_t kStemMaxChannels = 4;
constexpr int64_t kStemMaxRowBytes = 64;
constexpr int64_t kStemMaxKernel = 16;

struct StemGeometry {
  int64_t batch = 0, c = 0, h = 0, w = 0, oc = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, pt = 0, pl = 0;
  int64_t hp = 0, wp = 0;  // the padded image: the rows and columns the windows cover
  int64_t row() const { return (kh * kw * c + 3) / 4 * 4; }  // the INT8 kernel's window row of bytes
};

inline bool stem_geometry(const Graph& g, const Node& n, StemGeometry* geo) {
  const Tensor *x = nullptr, *w = nullptr, *yp = nullptr;
  if (!plain_conv2d(g, n, &x, &w, &yp) || x->shape[1] > kStemMaxChannels) return false;
  const Tensor& y = *yp;
  const int64_t kh = w->shape[2], kw = w->shape[3];
  if (kh < 1 || kw < 1 || kh * kw == 1 || kh > kStemMaxKernel || kw * x->shape[1] > kStemMaxRowBytes) return false;
  const std::vector<int64_t> st = n.attrs.get_ints("strides", {1, 1});
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", {0, 0, 0, 0});
  if (st.size() != 2 || pads.size() != 4 || st[0] < 1 || st[1] < 1 || st[0] > 8 || st[1] > 8) return false;
  for (int64_t d : n.attrs.get_ints("dilations", {1, 1}))
    if (d != 1) return false;
  for (int64_t p : pads)
    if (p < 0 || p > kStemMaxKernel) return false;
  const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  const int64_t oh = (x->shape[2] + pads[0] + pads[2] - kh) / st[0] + 1;
  const int64_t ow = (x->shape[3] + pads[1] + pads[3] - kw) / st[1] + 1;
  if (y.shape[0] != x->shape[0] || y.shape[1] != w->shape[0] || y.shape[2] != oh || y.shape[3] != ow) return false;
  *geo = StemGeometry{x->shape[0], x->shape[1], x->shape[2], x->shape[3], w->shape[0], oh, ow, kh, kw, st[0], st[1],
                      pads[0], pads[1], (oh - 1) * st[0] + kh, (ow - 1) * st[1] + kw};
  return geo->batch > 0 && geo->c > 0 && geo->oc > 0 && oh > 0 && ow > 0 && geo->h > 0 && geo->w > 0;
}

}  // namespace orknn
