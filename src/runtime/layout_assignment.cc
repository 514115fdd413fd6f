#include "runtime/layout_assignment.h"

#include "runtime/layouts.h"

namespace orknn {

namespace {

// A float32 tensor that nChw16c would pad (NHWC pads nothing).
bool pads(const Tensor& t) {
  return !blocked_channels_last(t.dtype) && t.dtype == DType::kF32 && t.shape.size() == 4 && t.shape[1] % 16 != 0;
}

bool blockable(const Tensor& t) {
  if (t.is_const() || t.shape.size() != 4 || t.numel() <= 0) return false;
  if (blocked_channels_last(t.dtype)) return true;  // NHWC: INT8, and float32 where the build chose it
  // nChw16c; padded only above 16 channels, where the padding adds less than half.
  if (t.dtype == DType::kF32) return t.shape[1] % 16 == 0 || (t.quant.empty() && t.shape[1] > 16);
  return false;
}

Nc1hwc2Geometry nchw16c(const Shape& s) {
  Nc1hwc2Geometry g;
  g.n = s[0]; g.c = s[1]; g.h = s[2]; g.w = s[3];
  g.c2 = 16;
  return g;
}

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

Status assign_layouts(const Graph& g, std::vector<NodeKernel>* kernels, const NchwKernelFn& nchw_kernel,
                      std::vector<uint8_t>* blocked) {
  std::vector<BlockedIo> io(g.nodes.size());
  for (bool again = true; again;) {
    for (size_t k = 0; k < g.nodes.size(); ++k) io[k] = (*kernels)[k].kernel->blocked_io(g, g.nodes[k]);
    *blocked = choose_blocked_tensors(g, io);
    again = false;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const Node& n = g.nodes[k];
      NodeKernel& nk = (*kernels)[k];
      if (!nk.from_registry || n.outputs.empty() || n.outputs[0] < 0 || (*blocked)[static_cast<size_t>(n.outputs[0])])
        continue;
      std::string name;
      std::unique_ptr<Kernel> nchw = nchw_kernel(n, &name);
      if (!nchw) return ORKNN_ERR(kInvalidModel, "node '%s' (%s): no kernel for this op", n.name.c_str(), op_name(n.op));
      if (name == nk.name) continue;
      again |= nchw->blocked_io(g, n) != io[k];
      nk.kernel = std::move(nchw);
      nk.name = std::move(name);
    }
  }
  return Status::Ok();
}

int64_t stored_numel(const Tensor& t, bool blocked) {
  if (blocked && pads(t)) return nchw16c(t.shape).num_elements();
  return t.numel();
}

size_t stored_bytes(const Tensor& t, bool blocked) {
  return static_cast<size_t>(stored_numel(t, blocked)) * dtype_size(t.dtype);
}

const char* blocked_layout_name(DType dtype) { return blocked_channels_last(dtype) ? "nhwc" : "nChw16c"; }

void blocked_to_nchw(const Tensor& t, const void* blocked, void* nchw) {
  const Shape& s = t.shape;
  if (blocked_channels_last(t.dtype)) nhwc_to_nchw(blocked, nchw, s[0], s[1], s[2], s[3], dtype_size(t.dtype));
  else nc1hwc2_to_nchw(blocked, nchw, nchw16c(s), dtype_size(t.dtype));
}

void nchw_to_blocked(const Tensor& t, const void* nchw, void* blocked) {
  const Shape& s = t.shape;
  if (blocked_channels_last(t.dtype)) nchw_to_nhwc(nchw, blocked, s[0], s[1], s[2], s[3], dtype_size(t.dtype));
  else nchw_to_nc1hwc2(nchw, blocked, nchw16c(s), dtype_size(t.dtype));
}

}  // namespace orknn
