// Folds an inference BatchNormalization into the Conv that feeds it:
//   y = (conv(x, W) + b - mean) * s + beta,  s = gamma / sqrt(var + eps)
//     = conv(x, W * s[oc]) + ((b - mean) * s + beta)
// Conv weights are [OC, IC/group, k...], so output channel oc scales W's slice oc whatever the
// group count. New weight/bias constants are created (the originals may be shared). A
// BatchNormalization that does not follow a foldable Conv stays (it has its own kernel).
#include <cmath>
#include <vector>

#include "graph/passes/passes.h"

namespace orknn {
namespace {

const float* f32_const(const Graph& g, int t, int64_t numel) {
  if (t < 0) return nullptr;
  const Tensor& c = g.tensor(t);
  if (!c.is_const() || c.dtype != DType::kF32 || !c.quant.empty() || c.numel() != numel) return nullptr;
  return c.const_ptr<float>();
}

}  // namespace

Status fold_batchnorm_into_conv(Graph& g, int* changes) {
  int folded = 0;
  bool again = true;
  while (again) {
    again = false;
    std::vector<std::vector<int>> consumers = tensor_consumers(g);
    std::vector<int> producers = tensor_producers(g);
    for (size_t bi = 0; bi < g.nodes.size(); ++bi) {
      const Node& bn = g.nodes[bi];
      if (bn.op != OpId::BatchNormalization || bn.inputs.size() < 5 || bn.outputs.size() != 1) continue;
      const int x = bn.inputs[0];
      if (x < 0 || producers[static_cast<size_t>(x)] < 0) continue;
      if (consumers[static_cast<size_t>(x)].size() != 1 || is_graph_output(g, x)) continue;
      Node& conv = g.nodes[static_cast<size_t>(producers[static_cast<size_t>(x)])];
      if (conv.op != OpId::Conv || conv.outputs.size() != 1 || conv.inputs.size() < 2) continue;
      if (!conv.attrs.get_string("fused_act", "").empty()) continue;
      const Tensor& w = g.tensor(conv.inputs[1]);
      if (!w.is_const() || w.dtype != DType::kF32 || w.shape.size() < 2 || !w.quant.empty()) continue;
      const int64_t oc = w.shape[0];
      const int64_t per_oc = oc ? w.numel() / oc : 0;
      const int bias_id = conv.inputs.size() > 2 ? conv.inputs[2] : -1;
      const float* bias = bias_id >= 0 ? f32_const(g, bias_id, oc) : nullptr;
      if (bias_id >= 0 && !bias) continue;
      const float* gamma = f32_const(g, bn.inputs[1], oc);
      const float* beta = f32_const(g, bn.inputs[2], oc);
      const float* mean = f32_const(g, bn.inputs[3], oc);
      const float* var = f32_const(g, bn.inputs[4], oc);
      if (!gamma || !beta || !mean || !var) continue;
      const float eps = bn.attrs.get_float("epsilon", 1e-5f);

      const float* wsrc = w.const_ptr<float>();
      std::vector<float> new_w(static_cast<size_t>(w.numel())), new_b(static_cast<size_t>(oc));
      for (int64_t c = 0; c < oc; ++c) {
        // double keeps the fold itself from adding error beyond the final float rounding
        const double s = double(gamma[c]) / std::sqrt(double(var[c]) + double(eps));
        for (int64_t k = 0; k < per_oc; ++k)
          new_w[static_cast<size_t>(c * per_oc + k)] = static_cast<float>(double(wsrc[c * per_oc + k]) * s);
        const double b = bias ? double(bias[c]) : 0.0;
        new_b[static_cast<size_t>(c)] = static_cast<float>((b - double(mean[c])) * s + double(beta[c]));
      }
      const Shape w_shape = w.shape;
      const std::string w_name = unique_name(g, w.name + "_bn_folded");
      const std::string b_name = unique_name(g, (bias_id >= 0 ? g.tensor(bias_id).name : conv.name + "_bias") + "_bn_folded");
      const int bn_out = bn.outputs[0];
      // add_const may reallocate g.tensors; `conv` refers into g.nodes and stays valid.
      int nw = g.add_const(w_name, w_shape, DType::kF32, new_w.data(), new_w.size() * sizeof(float));
      int nb = g.add_const(b_name, {oc}, DType::kF32, new_b.data(), new_b.size() * sizeof(float));
      conv.inputs.resize(3, -1);
      conv.inputs[1] = nw;
      conv.inputs[2] = nb;
      conv.outputs[0] = bn_out;
      g.nodes.erase(g.nodes.begin() + static_cast<long>(bi));
      ++folded;
      again = true;
      break;  // indices changed: recompute consumers/producers
    }
  }
  if (changes) *changes += folded;
  return Status::Ok();
}

}  // namespace orknn
