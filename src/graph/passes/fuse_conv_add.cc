// Fuses a residual Add into the Conv that feeds it: Add(conv(x), r) -> Conv with r as its fourth
// input (ops/conv.cc), y = conv(x) + B + r, so that the sum is made where the convolution writes
// its outputs instead of in one more pass over three tensors (resnet's blocks, PP-OCR cls's). Run
// before fuse_conv_activation, which then fuses the Relu after the Add into the same Conv.
//
// Only float graphs: the converter skips the pass when it quantizes the model afterwards
// (PassOptions::fuse_residual), whose INT8 Add -> Relu runs as an int8 chain. Conditions: the
// Conv's output is read by the Add only and is not a graph output; the Conv has no fused
// activation (act(conv) + r is not conv + r) and no residual yet; r is a float activation (not a
// constant) of exactly the output's shape, no broadcast. When both operands qualify, the Conv
// later in the node order takes the other as its residual. The fused Conv takes the Add's place
// in the node order, after r's producer.
#include <vector>

#include "graph/passes/passes.h"
#include "ops/op.h"

namespace orknn {
namespace {

bool plain_f32_activation(const Graph& g, int t) {
  const Tensor& x = g.tensor(t);
  return x.dtype == DType::kF32 && x.quant.empty() && !x.is_const();
}

bool takes_residual(const Node& conv) {
  return conv.op == OpId::Conv && conv.outputs.size() == 1 && conv.inputs.size() >= 2 && conv.inputs.size() <= 3 &&
         conv.attrs.get_string("fused_act", "").empty();
}

}  // namespace

Status fuse_conv_add(Graph& g, int* changes) {
  const std::vector<std::vector<int>> consumers = tensor_consumers(g);
  std::vector<int> producers = tensor_producers(g);
  std::vector<char> erase(g.nodes.size(), 0);
  int fused = 0;
  for (size_t ai = 0; ai < g.nodes.size(); ++ai) {
    const Node& add = g.nodes[ai];
    if (add.op != OpId::Add || add.inputs.size() != 2 || add.outputs.size() != 1 || add.outputs[0] < 0) continue;
    const int out = add.outputs[0];
    int conv_at = -1, residual = -1;
    for (size_t i = 0; i < 2; ++i) {
      const int y = add.inputs[i], r = add.inputs[1 - i];
      if (y < 0 || r < 0 || y == r) continue;
      const int pi = producers[static_cast<size_t>(y)];
      if (pi < 0 || erase[static_cast<size_t>(pi)] || !takes_residual(g.nodes[static_cast<size_t>(pi)])) continue;
      if (consumers[static_cast<size_t>(y)].size() != 1 || is_graph_output(g, y)) continue;
      if (!plain_f32_activation(g, y) || !plain_f32_activation(g, r) || g.tensor(out).dtype != DType::kF32) continue;
      if (g.tensor(r).shape != g.tensor(y).shape || g.tensor(out).shape != g.tensor(y).shape) continue;
      if (pi > conv_at) conv_at = pi, residual = r;
    }
    if (conv_at < 0) continue;
    Node conv = g.nodes[static_cast<size_t>(conv_at)];
    conv.inputs.resize(3, -1);
    conv.inputs.push_back(residual);
    conv.outputs[0] = out;
    Status st = find_op(OpId::Conv)->infer(g, conv);
    if (!st.ok())
      return Status(st.code(), strfmt("fuse_conv_add at node '%s': %s", conv.name.c_str(), st.message().c_str()));
    g.nodes[ai] = std::move(conv);
    producers[static_cast<size_t>(out)] = static_cast<int>(ai);
    erase[static_cast<size_t>(conv_at)] = 1;
    ++fused;
  }
  if (fused) erase_flagged_nodes(g, erase);
  if (changes) *changes += fused;
  return Status::Ok();
}

}  // namespace orknn
