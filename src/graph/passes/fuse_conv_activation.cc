// Fuses an activation into the Conv/ConvTranspose/Gemm/MatMul that feeds it (attributes
// "fused_act", "fused_alpha", "fused_beta"; see kernels/ref/activation.h), as the NPU applies the
// activation on the accumulator's way out. Only when the producer's output has exactly one reader
// and is not a graph output, so no tensor that anyone can observe disappears. SiLU, written as
// y = Mul(x, Sigmoid(x)), fuses as "Silu" when x is read by those two nodes only and the Sigmoid's
// output by the Mul only (efficientnet's activation after every convolution).
#include <cmath>
#include <limits>

#include "graph/passes/passes.h"

namespace orknn {
namespace {

bool is_fusable_producer(OpId op) {
  return op == OpId::Conv || op == OpId::ConvTranspose || op == OpId::Gemm || op == OpId::MatMul;
}

// Fills alpha/beta for activation node `a`; false when it cannot be fused.
bool activation_params(const Graph& g, const Node& a, float* alpha, float* beta) {
  *alpha = 0.f;
  *beta = 0.f;
  switch (a.op) {
    case OpId::Relu: case OpId::HardSwish: case OpId::Sigmoid:
      return true;
    case OpId::LeakyRelu:
      *alpha = a.attrs.get_float("alpha", 0.01f);
      return true;
    case OpId::HardSigmoid:
      *alpha = a.attrs.get_float("alpha", 0.2f);
      *beta = a.attrs.get_float("beta", 0.5f);
      return true;
    case OpId::Clip:
      // infer moved constant min/max inputs into attributes; a run-time min/max cannot be fused
      for (size_t i = 1; i < a.inputs.size(); ++i)
        if (a.inputs[i] >= 0) return false;
      *alpha = a.attrs.get_float("min", -std::numeric_limits<float>::infinity());
      *beta = a.attrs.get_float("max", std::numeric_limits<float>::infinity());
      return true;
    default:
      return false;
  }
}

bool plain_f32(const Graph& g, int t) { return g.tensor(t).dtype == DType::kF32 && g.tensor(t).quant.empty(); }

// The Mul at `mi` as y = x * Sigmoid(x): *sig gets the Sigmoid's node index and *x its input; false
// when it is not that pattern with single readers (see the file comment).
bool silu_pattern(const Graph& g, size_t mi, const std::vector<std::vector<int>>& consumers,
                  const std::vector<int>& producers, int* sig, int* x) {
  const Node& mul = g.nodes[mi];
  if (mul.op != OpId::Mul || mul.inputs.size() != 2 || mul.outputs.size() != 1) return false;
  for (size_t i = 0; i < 2; ++i) {
    const int s = mul.inputs[i], other = mul.inputs[1 - i];
    if (s < 0 || other < 0 || producers[static_cast<size_t>(s)] < 0) continue;
    const Node& sn = g.nodes[static_cast<size_t>(producers[static_cast<size_t>(s)])];
    if (sn.op != OpId::Sigmoid || sn.inputs.size() != 1 || sn.inputs[0] != other) continue;
    if (consumers[static_cast<size_t>(s)].size() != 1 || is_graph_output(g, s)) continue;
    if (consumers[static_cast<size_t>(other)].size() != 2 || !plain_f32(g, other) || !plain_f32(g, s)) continue;
    *sig = producers[static_cast<size_t>(s)];
    *x = other;
    return true;
  }
  return false;
}

}  // namespace

Status fuse_conv_activation(Graph& g, int* changes) {
  std::vector<std::vector<int>> consumers = tensor_consumers(g);
  std::vector<int> producers = tensor_producers(g);
  std::vector<char> erase(g.nodes.size(), 0);
  int fused = 0;
  for (size_t mi = 0; mi < g.nodes.size(); ++mi) {
    int sig = -1, x = -1;
    if (!silu_pattern(g, mi, consumers, producers, &sig, &x)) continue;
    const int pi = producers[static_cast<size_t>(x)];
    if (pi < 0 || erase[static_cast<size_t>(pi)] || is_graph_output(g, x)) continue;
    Node& prod = g.nodes[static_cast<size_t>(pi)];
    if (!is_fusable_producer(prod.op) || prod.outputs.size() != 1 || !prod.attrs.get_string("fused_act", "").empty())
      continue;
    prod.attrs.set_string("fused_act", "Silu");
    prod.attrs.set_float("fused_alpha", 0.f);
    prod.attrs.set_float("fused_beta", 0.f);
    prod.outputs[0] = g.nodes[mi].outputs[0];
    producers[static_cast<size_t>(prod.outputs[0])] = pi;
    erase[static_cast<size_t>(sig)] = erase[mi] = 1;
    ++fused;
  }
  for (size_t ai = 0; ai < g.nodes.size(); ++ai) {
    if (erase[ai]) continue;
    const Node& act = g.nodes[ai];
    if (act.inputs.empty() || act.inputs[0] < 0 || act.outputs.size() != 1) continue;
    float alpha, beta;
    if (!activation_params(g, act, &alpha, &beta)) continue;
    const int x = act.inputs[0];
    const int pi = producers[static_cast<size_t>(x)];
    if (pi < 0 || erase[static_cast<size_t>(pi)]) continue;
    Node& prod = g.nodes[static_cast<size_t>(pi)];
    if (!is_fusable_producer(prod.op) || prod.outputs.size() != 1) continue;
    if (!prod.attrs.get_string("fused_act", "").empty()) continue;
    if (consumers[static_cast<size_t>(x)].size() != 1 || is_graph_output(g, x)) continue;
    if (!plain_f32(g, x)) continue;
    prod.attrs.set_string("fused_act", op_name(act.op));
    prod.attrs.set_float("fused_alpha", alpha);
    prod.attrs.set_float("fused_beta", beta);
    prod.outputs[0] = act.outputs[0];
    // The producer now writes the activation's output; its old output tensor is left unused
    // and dropped by dead_code. Producer indices of other tensors are unaffected.
    producers[static_cast<size_t>(act.outputs[0])] = pi;
    erase[ai] = 1;
    ++fused;
  }
  if (fused) erase_flagged_nodes(g, erase);
  if (changes) *changes += fused;
  return Status::Ok();
}

}  // namespace orknn
