// The x86 backend's fusions (fusions.h): the graph finders of the SiLU pairs and the INT8
// element-wise chains, registered with the kernel registry.
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fusions.h"

namespace orknn {
namespace {

// An Add/Sub/Mul of two different activations the avx512_int8 kernel takes: a chain's binary head.
bool binary_head(const Graph& g, const Node& n) {
  if ((n.op != OpId::Add && n.op != OpId::Sub && n.op != OpId::Mul) || n.inputs.size() != 2) return false;
  const int a = n.inputs[0], b = n.inputs[1];
  if (a < 0 || b < 0 || a == b || g.tensor(a).is_const() || g.tensor(b).is_const()) return false;
  return is_quantized_node(g, n) && !kernel_disabled("avx512_int8") && supports_q8_binary(g, n);
}

// A node of an INT8 chain: quantized, one int8 per-tensor output of `shape`; every input either a
// value of the chain (`in_chain`: int8 per-tensor, `shape`) or a constant int8 per-tensor scalar;
// an op whose quantized reference kernel is a per-element table (one data input), or Add/Sub/Mul.
bool chain_node(const Graph& g, const Node& n, const Shape& shape, const std::vector<uint8_t>& in_chain) {
  if (n.outputs.size() != 1 || n.outputs[0] < 0 || !is_quantized_node(g, n)) return false;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!is_q8_per_tensor(y) || y.shape != shape) return false;
  size_t activations = 0;
  for (int t : n.inputs) {
    if (t < 0) continue;
    const Tensor& x = g.tensor(t);
    if (!is_q8_per_tensor(x)) return false;
    if (x.is_const()) {
      if (x.numel() != 1 || x.shape.size() > shape.size() || x.data.size < x.nbytes()) return false;
      continue;
    }
    if (!in_chain[static_cast<size_t>(t)] || x.shape != shape) return false;
    ++activations;
  }
  if (activations == 0) return false;
  if (n.op == OpId::Add || n.op == OpId::Sub || n.op == OpId::Mul) return n.inputs.size() == 2;
  for (const KernelEntry* e : kernels_for(n.op))
    if (std::string(e->name) == "avx512_int8_table") return !kernel_disabled(e->name) && e->supports(g, n);
  return false;
}

std::vector<Int8Chain> find_int8_chains(const Graph& g) {
  std::vector<Int8Chain> chains;
  if (!x86::cpu_avx512vbmi()) return chains;
  // Readers per tensor (a graph output counts as one, with no reader node) and the last reader.
  std::vector<int> readers(g.tensors.size(), 0), reader(g.tensors.size(), -1);
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (int t : g.nodes[k].inputs)
      if (t >= 0) ++readers[static_cast<size_t>(t)], reader[static_cast<size_t>(t)] = static_cast<int>(k);
  for (int t : g.outputs) ++readers[static_cast<size_t>(t)], reader[static_cast<size_t>(t)] = -1;
  std::vector<uint8_t> taken(g.nodes.size(), 0), in_chain(g.tensors.size(), 0);
  auto next_reader = [&](int t) { return readers[static_cast<size_t>(t)] == 1 ? reader[static_cast<size_t>(t)] : -1; };
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& first = g.nodes[k];
    // Its first activation input (a Mul or Add may take the constant first: PP-LCNetV3's affine
    // block after a Conv that applies the HardSwish itself).
    int a = -1;
    for (int t : first.inputs)
      if (t >= 0 && !g.tensor(t).is_const()) {
        a = t;
        break;
      }
    if (taken[k] || a < 0) continue;
    // Grow from `first`, whose activation inputs must all be one tensor x, along single readers; or
    // from the reader of a binary head's output, which is then x.
    Int8Chain c;
    c.binary_head = binary_head(g, first);
    const int x = c.binary_head ? first.outputs[0] : a;
    c.inputs = c.binary_head ? first.inputs : std::vector<int>{x};
    if (c.binary_head) c.nodes.push_back(static_cast<int>(k));
    const Shape& shape = g.tensor(x).shape;
    std::vector<int> values = {x};
    in_chain[static_cast<size_t>(x)] = 1;
    for (int n = c.binary_head ? next_reader(x) : static_cast<int>(k); n >= 0 && !taken[static_cast<size_t>(n)];) {
      const Node& node = g.nodes[static_cast<size_t>(n)];
      if (!chain_node(g, node, shape, in_chain)) break;
      c.nodes.push_back(n);
      const int out = node.outputs[0];
      values.push_back(out);
      in_chain[static_cast<size_t>(out)] = 1;
      n = next_reader(out);
    }
    for (int t : values) in_chain[static_cast<size_t>(t)] = 0;
    if (c.nodes.size() < 2) continue;
    for (int n : c.nodes) taken[static_cast<size_t>(n)] = 1;
    chains.push_back(std::move(c));
  }
  return chains;
}

std::vector<FusedGroup> int8_chains(const Graph& g) {
  std::vector<FusedGroup> groups;
  for (Int8Chain& c : find_int8_chains(g)) {
    std::vector<int> nodes = c.nodes, inputs = c.inputs;
    groups.push_back(FusedGroup{std::move(nodes), std::move(inputs),
                                [chain = std::move(c)] { return make_int8_chain_kernel(chain); }, nullptr});
  }
  return groups;
}

std::vector<FusedGroup> silu_pairs(const Graph& g) {
  std::vector<FusedGroup> pairs;
  if (!x86::cpu_avx512f()) return pairs;
  std::vector<int> readers(g.tensors.size(), 0), producer(g.tensors.size(), -1);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    for (int t : g.nodes[k].inputs)
      if (t >= 0) ++readers[static_cast<size_t>(t)];
    for (int t : g.nodes[k].outputs)
      if (t >= 0) producer[static_cast<size_t>(t)] = static_cast<int>(k);
  }
  for (int t : g.outputs) ++readers[static_cast<size_t>(t)];  // a graph output is read by the client
  for (size_t m = 0; m < g.nodes.size(); ++m) {
    const Node& mul = g.nodes[m];
    if (mul.op != OpId::Mul || mul.inputs.size() != 2 || mul.outputs.size() != 1 || is_quantized_node(g, mul)) continue;
    for (size_t i = 0; i < 2; ++i) {
      const int s = mul.inputs[i], x = mul.inputs[1 - i];
      if (s < 0 || x < 0 || readers[static_cast<size_t>(s)] != 1) continue;
      const int sg = producer[static_cast<size_t>(s)];
      if (sg < 0) continue;
      const Node& sig = g.nodes[static_cast<size_t>(sg)];
      if (sig.op != OpId::Sigmoid || sig.inputs.size() != 1 || sig.inputs[0] != x || is_quantized_node(g, sig)) continue;
      const Tensor& tx = g.tensor(x);
      const Tensor& ts = g.tensor(s);
      const Tensor& ty = g.tensor(mul.outputs[0]);
      if (tx.dtype != DType::kF32 || ts.dtype != DType::kF32 || ty.dtype != DType::kF32) continue;
      if (tx.shape != ts.shape || tx.shape != ty.shape) continue;
      pairs.push_back(FusedGroup{{sg, static_cast<int>(m)}, {}, make_silu_mul_kernel, nullptr});
      break;
    }
  }
  return pairs;
}

}  // namespace

// Both fusions are bit-identical to their nodes' own kernels, so the order only decides which
// takes a node both would: the chains (an INT8 node never is a SiLU pair's).
ORKNN_REGISTER_FUSION("avx512_int8_chain", kPriorityGeneral, int8_chains);
ORKNN_REGISTER_FUSION("avx512_f32_silu", kPriorityGeneral, silu_pairs);

}  // namespace orknn
