// Constant folding: a node whose inputs are all constant is computed once, here, by its reference
// kernel, and its outputs become constants. The ONNX importer calls try_fold_node on every node as
// it is imported, so PyTorch's Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains disappear
// before the next node needs the shape; the pass version catches what later passes expose.
#include <algorithm>
#include <cstring>
#include <new>

#include "common/log.h"
#include "graph/passes/passes.h"
#include "kernels/kernel.h"

namespace orknn {
namespace {

// Folding must not turn a small model into a huge one (e.g. an Expand of a scalar to a large
// activation-sized tensor); above this the node is kept and computed at run time.
constexpr size_t kMaxFoldedBytes = size_t(64) << 20;

std::shared_ptr<uint8_t> alloc_aligned(size_t nbytes) {
  size_t alloc = (nbytes + 63) / 64 * 64 + 64;  // slack: kernels may read/write whole vectors
  std::shared_ptr<uint8_t> buf(static_cast<uint8_t*>(::operator new[](alloc, std::align_val_t(64))),
                               [](uint8_t* p) { ::operator delete[](p, std::align_val_t(64)); });
  std::memset(buf.get(), 0, alloc);
  return buf;
}

void set_owned(Tensor& t, std::shared_ptr<uint8_t> buf, size_t nbytes) {
  t.data.ptr = buf.get();
  t.data.size = nbytes;
  t.data.owner = std::move(buf);
}

// Shape depends on the input's shape only, which is static after import.
bool fold_shape(Graph& g, const Node& n) {
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1) return false;
  const Shape in = g.tensor(n.inputs[0]).shape;
  int64_t rank = static_cast<int64_t>(in.size());
  int64_t start = n.attrs.get_int("start", 0), end = n.attrs.get_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(in[static_cast<size_t>(i)]);
  Tensor& out = g.tensor(n.outputs[0]);
  out.shape = {static_cast<int64_t>(dims.size())};
  out.dtype = DType::kI64;
  auto buf = alloc_aligned(dims.size() * sizeof(int64_t));
  if (!dims.empty()) std::memcpy(buf.get(), dims.data(), dims.size() * sizeof(int64_t));
  set_owned(out, buf, dims.size() * sizeof(int64_t));
  return true;
}

}  // namespace

Status try_fold_node(Graph& g, const Node& n, bool* folded) {
  *folded = false;
  if (n.outputs.empty()) return Status::Ok();
  for (int t : n.outputs)
    if (t < 0 || g.tensor(t).is_const()) return Status::Ok();
  if (n.op == OpId::Shape) {
    *folded = fold_shape(g, n);
    return Status::Ok();
  }
  // DequantizeLinear of a constant (QDQ weights and biases) stays: the quantizer reads the int8
  // values and parameters it feeds (converter/quant/qdq_import.h).
  if (n.op == OpId::DequantizeLinear) return Status::Ok();
  // A Custom node computes in the application's callbacks, which the converter cannot run.
  if (n.op == OpId::Custom) return Status::Ok();
  for (int t : n.inputs)
    if (t >= 0 && !g.tensor(t).is_const()) return Status::Ok();

  size_t total = 0;
  for (int t : n.outputs) total += g.tensor(t).nbytes();
  size_t in_total = 0;
  for (int t : n.inputs)
    if (t >= 0) in_total += g.tensor(t).nbytes();
  if (total > kMaxFoldedBytes && total > in_total) {
    ORKNN_LOGD("fold: node '%s' (%s) kept: %zu output bytes", n.name.c_str(), op_name(n.op), total);
    return Status::Ok();
  }

  std::unique_ptr<Kernel> kernel = create_kernel(g, n, /*allow_fast=*/false, nullptr);
  if (!kernel) {
    ORKNN_LOGD("fold: node '%s' (%s) kept: no reference kernel", n.name.c_str(), op_name(n.op));
    return Status::Ok();
  }
  KernelContext ctx;
  ctx.graph = &g;
  ctx.node = &n;
  ctx.num_threads = 1;
  for (int t : n.inputs) ctx.inputs.push_back(t >= 0 ? static_cast<const void*>(g.tensor(t).data.ptr) : nullptr);
  std::vector<std::shared_ptr<uint8_t>> bufs;
  for (int t : n.outputs) {
    bufs.push_back(alloc_aligned(g.tensor(t).nbytes()));
    ctx.outputs.push_back(bufs.back().get());
  }
  Status st = kernel->prepare(ctx);
  if (!st.ok())
    return Status(st.code(), strfmt("node '%s' (%s): constant folding failed: %s", n.name.c_str(),
                                    op_name(n.op), st.message().c_str()));
  kernel->run(ctx);
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    Tensor& out = g.tensor(n.outputs[i]);
    set_owned(out, bufs[i], out.nbytes());
  }
  *folded = true;
  return Status::Ok();
}

Status fold_constants(Graph& g, int* changes) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  int folded_count = 0;
  for (Node& n : g.nodes) {
    bool folded = false;
    ORKNN_RETURN_IF_ERROR(try_fold_node(g, n, &folded));
    if (folded) {
      ++folded_count;
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  if (changes) *changes += folded_count;
  return Status::Ok();
}

}  // namespace orknn
