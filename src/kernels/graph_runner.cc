#include "kernels/graph_runner.h"

#include <cstring>

#include "common/fp16.h"

namespace orknn {

Status GraphRunner::create(const Graph& g, bool allow_fast, int num_threads, std::unique_ptr<GraphRunner>* out) {
  std::unique_ptr<GraphRunner> r(new GraphRunner());
  r->g_ = &g;
  r->buffers_.resize(g.tensors.size());
  for (size_t id = 0; id < g.tensors.size(); ++id) {
    const Tensor& t = g.tensors[id];
    // 64 spare bytes: fast kernels may read a vector past the end of a tensor.
    if (!t.is_const()) r->buffers_[id].assign(t.nbytes() + 64, 0);
  }
  r->input_set_.assign(g.inputs.size(), false);
  for (const Node& n : g.nodes) {
    Step s;
    s.kernel = create_kernel(g, n, allow_fast, &s.kernel_name);
    if (!s.kernel)
      return ORKNN_ERR(kInvalidModel, "node '%s' (%s): no kernel for this op and these types", n.name.c_str(),
                       op_name(n.op));
    s.ctx.graph = &g;
    s.ctx.node = &n;
    s.ctx.num_threads = num_threads;
    for (int id : n.inputs) s.ctx.inputs.push_back(id >= 0 ? r->data(id) : nullptr);
    for (int id : n.outputs) s.ctx.outputs.push_back(r->mutable_data(id));
    s.ctx.round_fp16 = g.precision == FloatPrecision::kFp16;
    Status st = s.kernel->prepare(s.ctx);
    if (!st.ok())
      return ORKNN_ERR(kInvalidModel, "node '%s' (%s): kernel %s: %s", n.name.c_str(), op_name(n.op),
                       s.kernel_name.c_str(), st.message().c_str());
    r->steps_.push_back(std::move(s));
  }
  *out = std::move(r);
  return Status::Ok();
}

Status GraphRunner::set_input(size_t i, const void* data, size_t nbytes) {
  if (i >= g_->inputs.size())
    return ORKNN_ERR(kInvalidParam, "graph input %zu does not exist (the graph has %zu)", i, g_->inputs.size());
  const Tensor& t = g_->tensor(g_->inputs[i].tensor);
  if (nbytes != t.nbytes())
    return ORKNN_ERR(kInvalidParam, "graph input %zu ('%s' %s %s) needs %zu bytes, got %zu", i, t.name.c_str(),
                     shape_str(t.shape).c_str(), dtype_name(t.dtype), t.nbytes(), nbytes);
  void* dst = mutable_data(g_->inputs[i].tensor);
  std::memcpy(dst, data, nbytes);
  // The runtime holds float inputs as fp16 in fp16 mode; do the same.
  if (t.dtype == DType::kF32 && g_->precision == FloatPrecision::kFp16)
    round_to_fp16(static_cast<float*>(dst), static_cast<size_t>(t.numel()));
  input_set_[i] = true;
  return Status::Ok();
}

void GraphRunner::run_node(size_t k) {
  Step& s = steps_[k];
  s.kernel->run(s.ctx);
  if (!s.ctx.round_fp16 || s.kernel->rounds_fp16_outputs()) return;
  for (size_t o = 0; o < s.ctx.outputs.size(); ++o) {
    const Tensor& t = s.ctx.out_tensor(o);
    if (t.dtype == DType::kF32) round_to_fp16(static_cast<float*>(s.ctx.outputs[o]), static_cast<size_t>(t.numel()));
  }
}

Status GraphRunner::run(const std::function<void(size_t)>& after_node) {
  for (size_t i = 0; i < input_set_.size(); ++i)
    if (!input_set_[i])
      return ORKNN_ERR(kInvalidParam, "graph input %zu ('%s') was not set", i, g_->tensor(g_->inputs[i].tensor).name.c_str());
  for (size_t k = 0; k < steps_.size(); ++k) {
    run_node(k);
    if (after_node) after_node(k);
  }
  return Status::Ok();
}

const void* GraphRunner::data(int id) const {
  const Tensor& t = g_->tensor(id);
  if (t.is_const()) return t.data.ptr;
  return buffers_[static_cast<size_t>(id)].data();
}

void* GraphRunner::mutable_data(int id) {
  if (g_->tensor(id).is_const()) return nullptr;
  return buffers_[static_cast<size_t>(id)].data();
}

}  // namespace orknn
