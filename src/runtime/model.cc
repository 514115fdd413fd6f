#include "runtime/model.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/large_alloc.h"
#include "model/model_io.h"
#include "ops/op.h"
#include "runtime/platform.h"

namespace orknn {
namespace {

// The model's bytes: written in full right away (read or copied), so pre-faulted huge pages
// (common/large_alloc.h: page faults were most of rknn_init's time).
std::shared_ptr<uint8_t> alloc_aligned(size_t size) {
  size_t alloc = (size + 63) / 64 * 64 + 64;
  return alloc_large_shared(alloc, /*populate=*/true);
}

int64_t graph_macs(const Graph& g) {
  int64_t macs = 0;
  for (const Node& n : g.nodes) macs += node_macs(g, n);
  return macs;
}

// Dynamic-shape models: one Model per shape set s >= 1 (its graph shares the constants).
Status build_shape_set_models(Model* model) {
  model->macs = graph_macs(model->graph);
  if (model->dynamic.empty()) return Status::Ok();
  model->shape_set_models.assign(model->dynamic.sets.size(), nullptr);
  for (size_t s = 1; s < model->dynamic.sets.size(); ++s) {
    auto v = std::make_shared<Model>();
    ORKNN_RETURN_IF_ERROR(make_shape_variant(model->graph, model->dynamic, s, &v->graph));
    v->platform = model->platform;
    v->weight_bytes = model->weight_bytes;
    v->macs = graph_macs(v->graph);
    model->shape_set_models[s] = std::move(v);
  }
  return Status::Ok();
}

Status finish_load(std::shared_ptr<uint8_t> buf, size_t size, std::shared_ptr<const Model>* out) {
  auto model = std::make_shared<Model>();
  ORKNN_RETURN_IF_ERROR(load_model(buf, buf.get(), size, &model->graph, &model->dynamic));
  model->platform = find_platform(model->graph.platform);
  if (!model->platform)
    return ORKNN_ERR(kInvalidModel, "model targets unknown platform '%s'", model->graph.platform.c_str());
  for (const Tensor& t : model->graph.tensors)
    if (t.is_const()) model->weight_bytes += t.data.size;
  ORKNN_RETURN_IF_ERROR(build_shape_set_models(model.get()));
  *out = std::move(model);
  return Status::Ok();
}

}  // namespace

Status load_model_from_buffer(const void* data, size_t size, std::shared_ptr<const Model>* out) {
  auto buf = alloc_aligned(size);
  if (!buf) return ORKNN_ERR(kNoMemory, "cannot allocate %zu bytes for the model", size);
  std::memcpy(buf.get(), data, size);
  return finish_load(std::move(buf), size, out);
}

Status load_model_from_file(const std::string& path, std::shared_ptr<const Model>* out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ORKNN_ERR(kInvalidModel, "cannot open model file '%s': %s", path.c_str(), std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return ORKNN_ERR(kInvalidModel, "model path '%s' is %s, not a model file", path.c_str(),
                     S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return ORKNN_ERR(kInvalidModel, "cannot open model file '%s'", path.c_str());
  std::streamoff len = f.tellg();
  if (len <= 0) return ORKNN_ERR(kInvalidModel, "model file '%s' is empty", path.c_str());
  auto buf = alloc_aligned(static_cast<size_t>(len));
  if (!buf) return ORKNN_ERR(kNoMemory, "cannot allocate %lld bytes for model '%s'", static_cast<long long>(len), path.c_str());
  f.seekg(0);
  if (!f.read(reinterpret_cast<char*>(buf.get()), len))
    return ORKNN_ERR(kInvalidModel, "cannot read model file '%s'", path.c_str());
  return finish_load(std::move(buf), static_cast<size_t>(len), out);
}

Status load_model_in_place(const void* data, size_t size, std::shared_ptr<const Model>* out) {
  if (reinterpret_cast<uintptr_t>(data) % 64 != 0)
    return ORKNN_ERR(kInvalidModel, "MODEL_BUFFER_ZERO_COPY: the model at %p is not 64-byte aligned (use memory from "
                     "rknn_create_mem and a real_model_offset that is a multiple of 64)", data);
  // Non-owning: the client keeps the buffer alive until rknn_destroy (rknn_api.h).
  std::shared_ptr<uint8_t> buf(static_cast<uint8_t*>(const_cast<void*>(data)), [](uint8_t*) {});
  return finish_load(std::move(buf), size, out);
}

Status check_same_network(const Model& cand, const Model& owner) {
  const Graph& a = cand.graph;
  const Graph& b = owner.graph;
  if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size() || a.nodes.size() != b.nodes.size() ||
      a.tensors.size() != b.tensors.size())
    return ORKNN_ERR(kInvalidModel, "SHARE_WEIGHT_MEM: the model is not the network of the weight-owning context "
                     "(%zu/%zu inputs, %zu/%zu outputs, %zu/%zu nodes, %zu/%zu tensors)", a.inputs.size(), b.inputs.size(),
                     a.outputs.size(), b.outputs.size(), a.nodes.size(), b.nodes.size(), a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor& x = a.tensors[i];
    const Tensor& y = b.tensors[i];
    if (x.name != y.name || x.shape != y.shape || x.dtype != y.dtype)
      return ORKNN_ERR(kInvalidModel, "SHARE_WEIGHT_MEM: tensor %zu ('%s') differs from the weight-owning context's ('%s')",
                       i, x.name.c_str(), y.name.c_str());
  }
  for (size_t i = 0; i < a.nodes.size(); ++i)
    if (a.nodes[i].op != b.nodes[i].op || a.nodes[i].inputs != b.nodes[i].inputs || a.nodes[i].outputs != b.nodes[i].outputs)
      return ORKNN_ERR(kInvalidModel, "SHARE_WEIGHT_MEM: node %zu ('%s') differs from the weight-owning context's", i,
                       a.nodes[i].name.c_str());
  return Status::Ok();
}

}  // namespace orknn
