// Folds a per-channel (or scalar) constant Mul/Add/Sub that follows a Conv into the Conv's
// weights and bias:  conv(x, W) + b  then  *s  ->  conv(x, W*s) + b*s;   then  +c  ->  b + c.
// paddle2onnx writes PP-OCRv4's learnable affine blocks (scalar scale and bias after a
// convolution) this way. The constant must broadcast along the output channel only (scalar,
// [C], or [1,C,1,...] / [C,1,...] right-aligned with the Conv output), and the elementwise output
// must have the Conv output's shape. New constants are created (the originals may be shared).
#include <algorithm>
#include <vector>

#include "graph/passes/passes.h"

namespace orknn {
namespace {

// Per-output-channel values of constant c for a Conv output of shape `out` (channel axis 1),
// or false when c broadcasts along other axes.
bool channel_values(const Graph& g, int c, const Shape& out, std::vector<double>* v) {
  if (c < 0) return false;
  const Tensor& t = g.tensor(c);
  if (!t.is_const() || t.dtype != DType::kF32 || !t.quant.empty() || out.size() < 2) return false;
  const int64_t oc = out[1];
  if (t.numel() == 1) {
    v->assign(static_cast<size_t>(oc), t.const_ptr<float>()[0]);
    return t.shape.size() <= out.size();
  }
  if (t.numel() != oc || t.shape.size() > out.size()) return false;
  // right-align: the one non-1 dim must land on axis 1
  const size_t offset = out.size() - t.shape.size();
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const size_t axis = d + offset;
    if (t.shape[d] != 1 && axis != 1) return false;
  }
  v->assign(t.const_ptr<float>(), t.const_ptr<float>() + oc);
  return true;
}

}  // namespace

Status fold_mul_add_into_conv(Graph& g, int* changes) {
  int folded = 0;
  bool again = true;
  while (again) {
    again = false;
    std::vector<std::vector<int>> consumers = tensor_consumers(g);
    for (size_t ci = 0; ci < g.nodes.size() && !again; ++ci) {
      Node& conv = g.nodes[ci];
      if (conv.op != OpId::Conv || conv.outputs.size() != 1 || conv.inputs.size() < 2) continue;
      if (!conv.attrs.get_string("fused_act", "").empty()) continue;
      const int y = conv.outputs[0];
      if (consumers[static_cast<size_t>(y)].size() != 1 || is_graph_output(g, y)) continue;
      const size_t ei = static_cast<size_t>(consumers[static_cast<size_t>(y)][0]);
      const Node& el = g.nodes[ei];
      if (el.op != OpId::Mul && el.op != OpId::Add && el.op != OpId::Sub) continue;
      if (el.inputs.size() != 2 || el.outputs.size() != 1) continue;
      const bool y_first = el.inputs[0] == y;
      if (!y_first && (el.op == OpId::Sub || el.inputs[1] != y)) continue;  // c - y is not a bias
      const int c = y_first ? el.inputs[1] : el.inputs[0];
      if (c == y) continue;
      const Tensor& yt = g.tensor(y);
      if (g.tensor(el.outputs[0]).shape != yt.shape || yt.dtype != DType::kF32) continue;
      std::vector<double> v;
      if (!channel_values(g, c, yt.shape, &v)) continue;
      const Tensor& w = g.tensor(conv.inputs[1]);
      if (!w.is_const() || w.dtype != DType::kF32 || !w.quant.empty() || w.shape.empty()) continue;
      const int64_t oc = w.shape[0];
      if (oc != static_cast<int64_t>(v.size())) continue;
      const int bias_id = conv.inputs.size() > 2 ? conv.inputs[2] : -1;
      if (bias_id >= 0) {
        const Tensor& b = g.tensor(bias_id);
        if (!b.is_const() || b.dtype != DType::kF32 || b.numel() != oc) continue;
      }

      std::vector<float> bias(static_cast<size_t>(oc), 0.f);
      if (bias_id >= 0) std::copy(g.tensor(bias_id).const_ptr<float>(), g.tensor(bias_id).const_ptr<float>() + oc, bias.begin());
      int new_w = conv.inputs[1];
      if (el.op == OpId::Mul) {
        const int64_t per = w.numel() / oc;
        std::vector<float> nw(w.const_ptr<float>(), w.const_ptr<float>() + w.numel());
        for (int64_t o = 0; o < oc; ++o) {
          for (int64_t k = 0; k < per; ++k) nw[static_cast<size_t>(o * per + k)] = static_cast<float>(nw[static_cast<size_t>(o * per + k)] * v[static_cast<size_t>(o)]);
          bias[static_cast<size_t>(o)] = static_cast<float>(bias[static_cast<size_t>(o)] * v[static_cast<size_t>(o)]);
        }
        const Shape ws = w.shape;
        const std::string wn = unique_name(g, w.name + "_scaled");
        new_w = g.add_const(wn, ws, DType::kF32, nw.data(), nw.size() * sizeof(float));
      } else {
        const double sign = el.op == OpId::Sub ? -1.0 : 1.0;
        for (int64_t o = 0; o < oc; ++o)
          bias[static_cast<size_t>(o)] = static_cast<float>(bias[static_cast<size_t>(o)] + sign * v[static_cast<size_t>(o)]);
      }
      const std::string bn = unique_name(g, g.nodes[ci].name + "_bias_folded");
      const int new_b = g.add_const(bn, {oc}, DType::kF32, bias.data(), bias.size() * sizeof(float));
      Node& cv = g.nodes[ci];  // re-fetch: add_const does not touch nodes, but keep it obvious
      cv.inputs.resize(3, -1);
      cv.inputs[1] = new_w;
      cv.inputs[2] = new_b;
      cv.outputs[0] = g.nodes[ei].outputs[0];
      g.nodes.erase(g.nodes.begin() + static_cast<long>(ei));
      ++folded;
      again = true;
    }
  }
  if (changes) *changes += folded;
  return Status::Ok();
}

}  // namespace orknn
