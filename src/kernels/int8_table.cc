// The shared pieces of the INT8 table kernels (int8_table.h).
#include "kernels/int8_table.h"

#include <algorithm>
#include <memory>
#include <string>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"

namespace orknn {

bool int8_table_node(const Graph& g, const Node& n) {
  if (!is_quantized_node(g, n)) return false;
  if (n.inputs.empty() || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0) return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  return is_q8_per_tensor(x) && is_q8_per_tensor(y) && x.shape == y.shape;
}

Status run_ref_on_codes(const Graph& graph, const Node& like, const std::vector<const uint8_t*>& in, uint8_t* out) {
  Graph g;
  Node n;
  n.name = like.name;
  n.op = like.op;
  n.attrs = like.attrs;
  // The codes as [1, ..., 1, 256] of the output's rank: a constant operand (a scalar of any rank
  // up to it) broadcasts against them as against the real tensors.
  Shape shape(std::max<size_t>(1, graph.tensor(like.outputs[0]).shape.size()), 1);
  shape.back() = 256;
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = graph.tensor(like.inputs[i]);
    n.inputs.push_back(in[i] ? g.add_tensor("codes" + std::to_string(i), shape, DType::kI8)
                             : g.add_const(t.name, t.shape, t.dtype, t.data.ptr, t.nbytes()));
    g.tensor(n.inputs.back()).quant = t.quant;
  }
  n.outputs = {g.add_tensor("table", shape, DType::kI8)};
  g.tensor(n.outputs[0]).quant = graph.tensor(like.outputs[0]).quant;
  std::string name;
  std::unique_ptr<Kernel> ref = create_kernel(g, n, /*allow_fast=*/false, &name);
  if (!ref) return ORKNN_ERR(kFail, "node '%s': no reference kernel to build the int8 table from", n.name.c_str());
  KernelContext rc;
  rc.graph = &g;
  rc.node = &n;
  for (size_t i = 0; i < in.size(); ++i) rc.inputs.push_back(in[i] ? in[i] : g.tensor(n.inputs[i]).data.ptr);
  rc.outputs = {out};
  ORKNN_RETURN_IF_ERROR(ref->prepare(rc));
  ref->run(rc);
  return Status::Ok();
}

}  // namespace orknn
