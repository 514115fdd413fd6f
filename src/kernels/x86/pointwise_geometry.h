// The geometry of a 1x1 convolution, shared by the hand-written pointwise kernels (INT8:
// pointwise_int8_vnni.cc, float: pointwise_f32_avx512.cc, pointwise16c_f32_avx512.cc).
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
// output: its activation, weights and output, else false.
inline bool plain_conv2d(const Graph& g, const Node& n, const Tensor** x, const Tensor** w, const Tensor** y) {
  if (n.op != OpId::Conv || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1 || n.outputs[0] < 0)
    return false;
  *x = g.input(n, 0);
  *w = g.input(n, 1);
  if (!*x || !*w || !(*w)->is_const()) return false;
  *y = &g.tensor(n.outputs[0]);
  if ((*x)->shape.size() != 4 || (*w)->shape.size() != 4 || (*y)->shape.size() != 4) return false;
  return n.attrs.get_int("group", 1) == 1 && (*w)->shape[1] == (*x)->shape[1];
}

inline bool pw_geometry(const Graph& g, const Node& n, PwGeometry* geo) {
  const Tensor *x = nullptr, *w = nullptr, *yp = nullptr;
  if (!plain_conv2d(g, n, &x, &w, &yp) || w->shape[2] != 1 || w->shape[3] != 1) return false;
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
// value per output channel: the nodes the float pointwise kernels consider.
inline bool float_pw_geometry(const Graph& g, const Node& n, PwGeometry* geo) {
  if (is_quantized_node(g, n) || !pw_geometry(g, n, geo) || geo->strided()) return false;
  const Tensor* b = g.input(n, 2);
  if (!is_f32(g.input(n, 0)) || !is_f32(g.input(n, 1)) || (b && !is_f32(b)) || !is_f32(&g.tensor(n.outputs[0])))
    return false;
  return !b || (b->is_const() && b->numel() == geo->oc);
}

}  // namespace orknn
