#include "runtime/blocked_layout.h"

#include "common/env.h"
#include "graph/planner.h"

namespace orknn {

namespace {

bool blockable(const Tensor& t) {
  if (t.is_const() || t.shape.size() != 4 || t.numel() <= 0) return false;
  if (t.dtype == DType::kF32) return t.shape[1] % 16 == 0 || may_block_padded(t);  // nChw16c, padded or not
  return t.dtype == DType::kI8;                                                   // NHWC
}

// A float32 tensor that nChw16c would pad.
bool pads(const Tensor& t) { return t.dtype == DType::kF32 && t.shape.size() == 4 && t.shape[1] % 16 != 0; }

}  // namespace

std::vector<uint8_t> choose_blocked_tensors(const Graph& g, const std::vector<BlockedIo>& node_io) {
  std::vector<uint8_t> blocked(g.tensors.size(), 0);
  for (size_t t = 0; t < g.tensors.size(); ++t) blocked[t] = blockable(g.tensors[t]) ? 1 : 0;
  for (const GraphInput& in : g.inputs) blocked[static_cast<size_t>(in.tensor)] = 0;
  for (int t : g.outputs) blocked[static_cast<size_t>(t)] = 0;
  // A node that takes no blocked tensor makes its tensors NCHW; one that takes no padded tensor,
  // those of its tensors that would be padded.
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (node_io[k] == BlockedIo::kEachPadded) continue;
    const bool none = node_io[k] == BlockedIo::kNone;
    const Node& n = g.nodes[k];
    for (const std::vector<int>* ts : {&n.inputs, &n.outputs})
      for (int t : *ts)
        if (t >= 0 && (none || pads(g.tensor(t)))) blocked[static_cast<size_t>(t)] = 0;
  }
  // kUniform nodes: all their activations or none; a Conv's residual input (ops/conv.cc) and its
  // output: both or neither (the planner may give them the same bytes, and the kernels read the
  // residual where they write the output). Clearing one may break another such group, so repeat
  // until nothing changes (each pass clears at least one flag or ends).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const Node& n = g.nodes[k];
      if (conv_residual(n) >= 0 && !n.outputs.empty() && n.outputs[0] >= 0) {
        uint8_t& r = blocked[static_cast<size_t>(conv_residual(n))];
        uint8_t& y = blocked[static_cast<size_t>(n.outputs[0])];
        if (r != y) r = y = 0, changed = true;
      }
      if (node_io[k] != BlockedIo::kUniform) continue;
      bool all = true;
      for (int t : n.inputs)
        if (t >= 0 && !g.tensor(t).is_const() && !blocked[static_cast<size_t>(t)]) all = false;
      for (int t : n.outputs)
        if (t >= 0 && !blocked[static_cast<size_t>(t)]) all = false;
      if (all) continue;
      for (int t : n.inputs)
        if (t >= 0 && blocked[static_cast<size_t>(t)]) blocked[static_cast<size_t>(t)] = 0, changed = true;
      for (int t : n.outputs)
        if (t >= 0 && blocked[static_cast<size_t>(t)]) blocked[static_cast<size_t>(t)] = 0, changed = true;
    }
  }
  return blocked;
}

const char* blocked_layout_name(DType dtype) { return dtype == DType::kI8 ? "nhwc" : "nChw16c"; }

bool blocked_layout_disabled() { return env_flag("OPENRKNN_DISABLE_BLOCKED_LAYOUT"); }

}  // namespace orknn
