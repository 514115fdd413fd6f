#include "runtime/context.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "common/env.h"
#include "common/large_alloc.h"
#include "common/fp16.h"
#include "common/log.h"
#include "common/raw_enum.h"
#include "graph/planner.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/x86/int8_chain.h"
#include "kernels/x86/quantize_avx512.h"
#include "kernels/x86/silu_fusion.h"
#include "model/model_io.h"
#include "ops/op.h"
#include "runtime/blocked_layout.h"
#include "runtime/custom_ops.h"
#include "runtime/layouts.h"
#include "runtime/platform.h"
#include "runtime/tensor_mem.h"
#include "common/version.h"

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

// Dynamic-shape models: one Model per shape set s >= 1 (its graph shares the constants), and the
// largest arena over all sets, which every set's plan then uses (one arena per context).
Status build_shape_set_models(Model* model) {
  model->max_arena_bytes = plan_arena(model->graph, chain_reads(find_int8_chains(model->graph))).arena_size;
  model->macs = graph_macs(model->graph);
  if (model->dynamic.empty()) return Status::Ok();
  model->shape_set_models.assign(model->dynamic.sets.size(), nullptr);
  for (size_t s = 1; s < model->dynamic.sets.size(); ++s) {
    auto v = std::make_shared<Model>();
    ORKNN_RETURN_IF_ERROR(make_shape_variant(model->graph, model->dynamic, s, &v->graph));
    v->platform = model->platform;
    v->weight_bytes = model->weight_bytes;
    v->max_arena_bytes = plan_arena(v->graph, chain_reads(find_int8_chains(v->graph))).arena_size;
    v->macs = graph_macs(v->graph);
    model->max_arena_bytes = std::max(model->max_arena_bytes, v->max_arena_bytes);
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

bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16; }

// The type a tensor is reported as (contract §4.1): float tensors as FLOAT16, as the NPU holds them.
rknn_tensor_type reported_type(const Tensor& t) {
  if (is_float(t.dtype)) return RKNN_TENSOR_FLOAT16;
  return static_cast<rknn_tensor_type>(static_cast<int>(t.dtype));
}

size_t rknn_type_size(rknn_tensor_type t) {
  switch (t) {
    case RKNN_TENSOR_FLOAT32: case RKNN_TENSOR_INT32: case RKNN_TENSOR_UINT32: return 4;
    case RKNN_TENSOR_FLOAT16: case RKNN_TENSOR_INT16: case RKNN_TENSOR_UINT16: case RKNN_TENSOR_BFLOAT16: return 2;
    case RKNN_TENSOR_INT8: case RKNN_TENSOR_UINT8: case RKNN_TENSOR_BOOL: return 1;
    case RKNN_TENSOR_INT64: return 8;
    default: return 0;
  }
}

// Reads element i of a buffer of rknn type `t` as double (lossless for every supported type).
inline double load_elem(const void* buf, rknn_tensor_type t, size_t i) {
  switch (t) {
    case RKNN_TENSOR_FLOAT32: return static_cast<const float*>(buf)[i];
    case RKNN_TENSOR_FLOAT16: return fp16_to_fp32(static_cast<const uint16_t*>(buf)[i]);
    case RKNN_TENSOR_INT8: return static_cast<const int8_t*>(buf)[i];
    case RKNN_TENSOR_UINT8: return static_cast<const uint8_t*>(buf)[i];
    case RKNN_TENSOR_INT16: return static_cast<const int16_t*>(buf)[i];
    case RKNN_TENSOR_UINT16: return static_cast<const uint16_t*>(buf)[i];
    case RKNN_TENSOR_INT32: return static_cast<const int32_t*>(buf)[i];
    case RKNN_TENSOR_UINT32: return static_cast<const uint32_t*>(buf)[i];
    case RKNN_TENSOR_INT64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case RKNN_TENSOR_BOOL: return static_cast<const uint8_t*>(buf)[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

inline void store_elem(void* buf, DType t, size_t i, double v) {
  switch (t) {
    case DType::kF32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case DType::kI8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(v); break;
    case DType::kU8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(v); break;
    case DType::kI16: static_cast<int16_t*>(buf)[i] = static_cast<int16_t>(v); break;
    case DType::kU16: static_cast<uint16_t*>(buf)[i] = static_cast<uint16_t>(v); break;
    case DType::kI32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v); break;
    case DType::kU32: static_cast<uint32_t*>(buf)[i] = static_cast<uint32_t>(v); break;
    case DType::kI64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); break;
    case DType::kBool: static_cast<uint8_t*>(buf)[i] = v != 0.0; break;
    case DType::kF16: static_cast<uint16_t*>(buf)[i] = fp32_to_fp16(static_cast<float>(v)); break;
  }
}

bool supported_input_type(rknn_tensor_type t) { return rknn_type_size(t) != 0 && t != RKNN_TENSOR_BFLOAT16; }

// fp16 mode: rounds a step's float output to fp16 values, split over the step's threads when it
// is large enough for that to pay (a pass over memory, like the kernels' element-wise ops).
void round_output_to_fp16(float* data, size_t n, int threads) {
  const int nt = n >= (size_t{1} << 16) ? threads : 1;
  parallel_ranges(
      static_cast<int64_t>(n), nt,
      [&](int64_t b, int64_t e, int) { round_to_fp16(data + b, static_cast<size_t>(e - b)); }, 16);
}

// Output tensor t (arena data, NCHW) -> dst in NCHW order: float32 when want_float, else the
// reported type (FLOAT16 for float tensors, raw codes otherwise). Used by rknn_outputs_get and the
// zero-copy outputs.
void convert_output(const Tensor& t, const void* src, bool want_float, void* dst) {
  const size_t count = static_cast<size_t>(t.numel());
  if (want_float && t.dtype == DType::kF32) {
    std::memcpy(dst, src, count * 4);
  } else if (want_float && !t.quant.empty()) {
    const QuantScalar q = per_tensor(t);
    const int8_t* sq = static_cast<const int8_t*>(src);
    float* y = static_cast<float*>(dst);
    if (!x86_dequantize_s8_f32(sq, y, static_cast<int64_t>(count), q.scale, q.zp))
      for (size_t k = 0; k < count; ++k) y[k] = dequantize_value(sq[k], q.scale, q.zp);
  } else if (want_float) {
    for (size_t k = 0; k < count; ++k)
      static_cast<float*>(dst)[k] = static_cast<float>(load_elem(src, static_cast<rknn_tensor_type>(static_cast<int>(t.dtype)), k));
  } else if (is_float(t.dtype)) {
    fp32_to_fp16(static_cast<const float*>(src), static_cast<uint16_t*>(dst), count);
  } else {
    std::memcpy(dst, src, count * dtype_size(t.dtype));
  }
}

}  // namespace

Status load_model_from_buffer(const void* data, size_t size, std::shared_ptr<const Model>* out) {
  auto buf = alloc_aligned(size);
  if (!buf) return ORKNN_ERR(kNoMemory, "cannot allocate %zu bytes for the model", size);
  std::memcpy(buf.get(), data, size);
  return finish_load(std::move(buf), size, out);
}

Status load_model_from_file(const std::string& path, std::shared_ptr<const Model>* out) {
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

Status Context::create(std::shared_ptr<const Model> model, uint32_t flags, std::unique_ptr<Context>* out) {
  std::unique_ptr<Context> ctx(new Context());
  ctx->model_ = std::move(model);
  ctx->base_model_ = ctx->model_;
  ctx->flags_ = flags;
  ctx->make_custom_ops();
  ORKNN_RETURN_IF_ERROR(ctx->plan());
  *out = std::move(ctx);
  return Status::Ok();
}

Status Context::dup(std::unique_ptr<Context>* out) const {
  std::unique_ptr<Context> ctx(new Context());
  ctx->model_ = base_model_;
  ctx->base_model_ = base_model_;
  ctx->flags_ = flags_;
  ctx->core_mask_ = core_mask_;  // before plan(): kernels take their thread count from it
  ctx->make_custom_ops();  // custom operator registrations are not inherited (docs/custom_ops.md)
  ORKNN_RETURN_IF_ERROR(ctx->plan());
  // Dynamic shapes: the copy starts in this context's active shape set (docs/decisions.md).
  if (active_set_ != 0) ORKNN_RETURN_IF_ERROR(ctx->select_shape_set(active_set_));
  *out = std::move(ctx);
  return Status::Ok();
}

Context::~Context() {
  for (void* p : owned_output_bufs_) std::free(p);
  if (!internal_outside()) free_large(arena_, std::max<size_t>(arena_size_, 64));  // else the client's memory
}

Status Context::check_runnable(const char* fn, bool need_weights) const {
  if (info_only())
    return ORKNN_ERR(kInvalidContext, "%s: the context was created with RKNN_FLAG_COLLECT_MODEL_INFO_ONLY; it answers "
                     "queries only and cannot take inputs or run", fn);
  if (internal_outside()) {
    if (!internal_mem_)
      return ORKNN_ERR(kFail, "%s: the context was created with %s; call rknn_set_internal_mem first (%zu bytes)", fn,
                       (flags_ & RKNN_FLAG_MEM_ALLOC_OUTSIDE) ? "RKNN_FLAG_MEM_ALLOC_OUTSIDE" : "RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE",
                       arena_size_);
    if (tensor_mem_serial(internal_mem_) != internal_serial_)
      return ORKNN_ERR(kFail, "%s: the internal mem set with rknn_set_internal_mem was destroyed; set a live one", fn);
  }
  if (need_weights && (flags_ & RKNN_FLAG_MEM_ALLOC_OUTSIDE)) {
    if (!weight_mem_)
      return ORKNN_ERR(kFail, "%s: the context was created with RKNN_FLAG_MEM_ALLOC_OUTSIDE; call rknn_set_weight_mem first "
                       "(%zu bytes)", fn, model_->weight_bytes);
    if (tensor_mem_serial(weight_mem_) != weight_serial_)
      return ORKNN_ERR(kFail, "%s: the weight mem set with rknn_set_weight_mem was destroyed; set a live one", fn);
  }
  return Status::Ok();
}

Status Context::set_internal_mem(rknn_tensor_mem* mem) {
  if (info_only())
    return ORKNN_ERR(kInvalidContext, "rknn_set_internal_mem: the context was created with RKNN_FLAG_COLLECT_MODEL_INFO_ONLY");
  if (!internal_outside())
    return ORKNN_ERR(kInvalidParam, "rknn_set_internal_mem: the context owns its internal memory; pass "
                     "RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE or RKNN_FLAG_MEM_ALLOC_OUTSIDE to rknn_init to provide it");
  const uint64_t serial = tensor_mem_serial(mem);
  if (!serial)
    return ORKNN_ERR(kInvalidParam, "rknn_set_internal_mem: mem %p was not created by rknn_create_mem* or was destroyed",
                     static_cast<void*>(mem));
  if (!mem->virt_addr) return ORKNN_ERR(kInvalidParam, "rknn_set_internal_mem: mem->virt_addr is NULL");
  if (mem->size < arena_size_)
    return ORKNN_ERR(kInvalidParam, "rknn_set_internal_mem: mem size %u is smaller than total_internal_size %zu", mem->size,
                     arena_size_);
  uint8_t* base = static_cast<uint8_t*>(mem->virt_addr) + mem->offset;
  if (reinterpret_cast<uintptr_t>(base) % 64 != 0)
    return ORKNN_ERR(kInvalidParam, "rknn_set_internal_mem: virt_addr + offset (%p) is not 64-byte aligned",
                     static_cast<void*>(base));
  arena_ = base;
  internal_mem_ = mem;
  internal_serial_ = serial;
  // Inputs written into a previous block are not in this one.
  input_set_.assign(model_->graph.inputs.size(), false);
  has_run_ = false;
  set_plans_.clear();  // other shape sets' kernels point into the previous block
  steps_.clear();
  scratch_.reset();    // every kernel that asked for scratch is gone
  Status st = build_steps();  // the kernels' tensor pointers point into the new block
  if (!st.ok()) internal_mem_ = nullptr;  // not runnable until a block is set that plans
  return st;
}

Status Context::set_weight_mem(rknn_tensor_mem* mem) {
  if (!(flags_ & RKNN_FLAG_MEM_ALLOC_OUTSIDE))
    return ORKNN_ERR(kInvalidParam, "rknn_set_weight_mem: the context owns its weights; pass RKNN_FLAG_MEM_ALLOC_OUTSIDE "
                     "to rknn_init to provide them");
  const uint64_t serial = tensor_mem_serial(mem);
  if (!serial)
    return ORKNN_ERR(kInvalidParam, "rknn_set_weight_mem: mem %p was not created by rknn_create_mem* or was destroyed",
                     static_cast<void*>(mem));
  if (!mem->virt_addr) return ORKNN_ERR(kInvalidParam, "rknn_set_weight_mem: mem->virt_addr is NULL");
  if (mem->size < model_->weight_bytes)
    return ORKNN_ERR(kInvalidParam, "rknn_set_weight_mem: mem size %u is smaller than total_weight_size %zu", mem->size,
                     model_->weight_bytes);
  // Weights stay in the immutable Model (shared by dup'd contexts); the block is checked and
  // recorded, not written (docs/decisions.md).
  weight_mem_ = mem;
  weight_serial_ = serial;
  return Status::Ok();
}

const void* Context::output_src(uint32_t index) const {
  if (async()) return async_delivered_[index].data();
  return tensor_ptr(model_->graph.outputs[index]);
}

void* Context::tensor_ptr(int id) const {
  const Tensor& t = model_->graph.tensor(id);
  if (t.is_const()) return const_cast<uint8_t*>(t.data.ptr);
  return arena_ + arena_offset_[static_cast<size_t>(id)];
}

int threads_for_model(int asked, int64_t macs) {
  int64_t min_macs = kMinThreadedMacs;
  if (const char* v = std::getenv("OPENRKNN_MIN_THREADED_MACS")) {
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (end != v && *end == '\0' && n >= 0) min_macs = n;
  }
  return asked > 1 && macs < min_macs ? 1 : std::max(1, asked);
}

int Context::num_threads() const { return threads_for_model(threads_asked(), model_->macs); }

int Context::threads_asked() const {
  if (const char* v = std::getenv("OPENRKNN_NUM_THREADS")) {
    int n = std::atoi(v);
    if (n > 0) return n;
  }
  // Each emulated NPU core gets an equal share of the host's threads (at least one); AUTO = one core.
  int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int cores = model_->platform->npu_cores;
  int share = std::max(1, hw / cores);
  int used = 1;
  uint32_t m = static_cast<uint32_t>(core_mask_);
  if (m == RKNN_NPU_CORE_ALL) used = cores;
  else if (m != RKNN_NPU_CORE_AUTO) used = __builtin_popcount(m & ((1u << cores) - 1));
  return std::min(hw, std::max(1, used * share));
}

Status Context::plan() {
  const Graph& g = model_->graph;
  chains_ = find_int8_chains(g);
  ArenaPlan ap = plan_arena(g, chain_reads(chains_));
  arena_size_ = std::max(ap.arena_size, model_->max_arena_bytes);  // dynamic shapes: every set fits
  arena_offset_ = std::move(ap.offset);
  input_set_.assign(g.inputs.size(), false);
  if (info_only()) {
    ORKNN_LOGI("model info context: %zu nodes, %zu weight bytes, %zu arena bytes (no kernels, cannot run)", g.nodes.size(),
               model_->weight_bytes, arena_size_);
    return Status::Ok();
  }
  if (async()) {
    // Two output sets, allocated here so that run() allocates nothing; the first frame's
    // "previous outputs" are zeros (docs/decisions.md).
    async_latest_.resize(g.outputs.size());
    async_delivered_.resize(g.outputs.size());
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      const Tensor& t = g.tensor(g.outputs[i]);
      const size_t bytes = static_cast<size_t>(t.numel()) * dtype_size(t.dtype);
      async_latest_[i].assign(bytes, 0);
      async_delivered_[i].assign(bytes, 0);
    }
  }
  if (internal_outside()) {
    ORKNN_LOGI("model loaded: %zu nodes, %zu arena bytes to be provided by rknn_set_internal_mem", g.nodes.size(), arena_size_);
    return Status::Ok();  // kernels are built when the arena arrives
  }
  // Zero-filled (alloc_large); huge pages pre-faulted, as the first run writes all of it anyway.
  arena_ = static_cast<uint8_t*>(alloc_large(std::max<size_t>(arena_size_, 64), /*populate=*/true));
  if (!arena_) return ORKNN_ERR(kNoMemory, "cannot allocate the %zu-byte activation arena", arena_size_);
  return build_steps();
}

Status Context::build_steps() {
  const Graph& g = model_->graph;
  const bool allow_fast = !env_flag("OPENRKNN_REF_KERNELS");
  const bool keep_blocked = allow_fast && !blocked_layout_disabled();
  steps_.clear();
  steps_.reserve(g.nodes.size());
  // Fused Sigmoid -> Mul pairs (kernels/x86/silu_fusion.h): 1 marks the Sigmoid, 2 the Mul.
  std::vector<uint8_t> silu_role(g.nodes.size(), 0);
  if (allow_fast)
    for (const SiluPair& p : find_silu_pairs(g)) {
      silu_role[static_cast<size_t>(p.sigmoid_node)] = 1;
      silu_role[static_cast<size_t>(p.mul_node)] = 2;
    }
  // INT8 chains (kernels/x86/int8_chain.h, found by plan()): per node, its chain (index + 1).
  std::vector<size_t> chain_of(g.nodes.size(), 0);
  for (size_t i = 0; i < chains_.size(); ++i)
    for (int k : chains_[i].nodes) chain_of[static_cast<size_t>(k)] = i + 1;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    Step s;
    if (n.op == OpId::Custom && custom_ops_) {  // the application's callbacks (runtime/custom_ops.h)
      s.kernel = custom_ops_->make_kernel(g, n);
      s.kernel_name = "custom_callbacks";
    } else if (silu_role[k]) {
      s.kernel = silu_role[k] == 1 ? make_silu_sigmoid_kernel() : make_silu_mul_kernel();
      s.kernel_name = "avx512_f32_silu";
    } else if (chain_of[k]) {
      const Int8Chain& c = chains_[chain_of[k] - 1];
      if (static_cast<int>(k) == c.nodes.back()) {
        s.kernel = make_int8_chain_kernel(c);
      } else {  // takes the layouts the node's own kernel would
        std::string own;
        const std::unique_ptr<Kernel> kernel = create_kernel(g, n, allow_fast, &own);
        s.kernel = make_fused_away_kernel(kernel ? kernel->blocked_io(g, n) : BlockedIo::kNone);
      }
      s.kernel_name = "avx512_int8_chain";
    } else {
      s.kernel = create_kernel(g, n, allow_fast, &s.kernel_name, keep_blocked ? ActLayout::kUndecided : ActLayout::kNchw);
      s.from_registry = true;
    }
    if (!s.kernel)
      return ORKNN_ERR(kInvalidModel, "node '%s' (%s): no kernel for this op", n.name.c_str(), op_name(n.op));
    s.kctx.graph = &g;
    s.kctx.node = &n;
    s.kctx.num_threads = num_threads();
    for (int t : n.inputs) s.kctx.inputs.push_back(t >= 0 ? tensor_ptr(t) : nullptr);
    if (chain_of[k] && static_cast<int>(k) == chains_[chain_of[k] - 1].nodes.back())
      for (int t : chains_[chain_of[k] - 1].inputs) s.kctx.inputs.push_back(tensor_ptr(t));  // what the chain reads
    for (int t : n.outputs) {
      s.kctx.outputs.push_back(tensor_ptr(t));
      if (g.precision == FloatPrecision::kFp16 && g.tensor(t).dtype == DType::kF32) s.round_outputs_fp16 = true;
    }
    s.kctx.round_fp16 = s.round_outputs_fp16;
    // An op that copies elements of activations (fp16 values, as every step's outputs and the
    // inputs are) writes fp16 values: no pass. A float constant input may not be fp16-exact.
    if (s.round_outputs_fp16 && op_copies_input_values(n.op)) {
      bool from_activations = true;
      for (int t : n.inputs)
        if (t >= 0 && g.tensor(t).is_const() && g.tensor(t).dtype == DType::kF32) from_activations = false;
      s.round_outputs_fp16 = !from_activations;
    }
    s.kctx.scratch = &scratch_;
    steps_.push_back(std::move(s));
  }
  // Tensors kept blocked (nChw16c / NHWC) between the kernels that take it (runtime/blocked_layout.h).
  // Then every node that writes its first output NCHW gets the best kernel for NCHW (LayoutFit); when
  // that kernel takes other layouts than the one it replaces (blocked_io), the layouts are chosen
  // again. A node is replaced at most once (the NCHW pick stays), so this ends.
  if (keep_blocked) {
    std::vector<BlockedIo> io(g.nodes.size());
    std::vector<uint8_t> blocked;
    for (bool again = true; again;) {
      for (size_t k = 0; k < g.nodes.size(); ++k) io[k] = steps_[k].kernel->blocked_io(g, g.nodes[k]);
      blocked = choose_blocked_tensors(g, io);
      again = false;
      for (size_t k = 0; k < g.nodes.size(); ++k) {
        const Node& n = g.nodes[k];
        Step& s = steps_[k];
        if (!s.from_registry || n.outputs.empty() || n.outputs[0] < 0 || blocked[static_cast<size_t>(n.outputs[0])])
          continue;
        std::string name;
        std::unique_ptr<Kernel> nchw = create_kernel(g, n, allow_fast, &name, ActLayout::kNchw);
        if (!nchw)
          return ORKNN_ERR(kInvalidModel, "node '%s' (%s): no kernel for this op", n.name.c_str(), op_name(n.op));
        if (name == s.kernel_name) continue;
        again |= nchw->blocked_io(g, n) != io[k];
        s.kernel = std::move(nchw);
        s.kernel_name = name;
      }
    }
    for (Step& s : steps_) {
      for (int t : s.kctx.node->inputs) s.kctx.in_blocked.push_back(t >= 0 && blocked[static_cast<size_t>(t)]);
      for (int t : s.kctx.node->outputs) s.kctx.out_blocked.push_back(t >= 0 && blocked[static_cast<size_t>(t)]);
    }
  }
  for (Step& s : steps_) {
    Status st = s.kernel->prepare(s.kctx);
    if (!st.ok()) {
      Status err = ORKNN_ERR(kInvalidModel, "node '%s' (%s): kernel %s: %s", s.kctx.node->name.c_str(),
                             op_name(s.kctx.node->op), s.kernel_name.c_str(), st.message().c_str());
      steps_.clear();  // no half-prepared plan is ever run
      return err;
    }
  }
  if (!scratch_.allocate())
    return ORKNN_ERR(kNoMemory, "cannot allocate the kernels' %zu-byte scratch buffer", scratch_.bytes());
  ORKNN_LOGI("model loaded: %zu nodes, %zu weight bytes, %zu arena bytes, %.1f M MACs on %d thread(s), platform %s",
             g.nodes.size(), model_->weight_bytes, arena_size_, static_cast<double>(model_->macs) / 1e6, num_threads(),
             model_->platform->name);
  return Status::Ok();
}

Status Context::set_core_mask(int mask) {
  const int cores = model_->platform->npu_cores;
  if (cores == 1)
    return ORKNN_ERR(kInvalidParam, "rknn_set_core_mask: platform %s has a single NPU core; core masks are not supported",
                     model_->platform->name);
  const uint32_t m = static_cast<uint32_t>(mask);
  const uint32_t all_bits = (1u << cores) - 1u;
  bool valid = m == RKNN_NPU_CORE_AUTO || m == RKNN_NPU_CORE_ALL || (m != 0 && (m & ~all_bits) == 0 &&
               (m == 1 || m == 2 || m == 4 || m == 3 || m == 7));
  if (!valid)
    return ORKNN_ERR(kInvalidParam, "rknn_set_core_mask: mask 0x%x is not valid on %s (%d NPU cores)", m,
                     model_->platform->name, cores);
  core_mask_ = static_cast<rknn_core_mask>(mask);
  for (Step& s : steps_) s.kctx.num_threads = num_threads();
  return Status::Ok();
}

Status Context::set_batch_core_num(int core_num) {
  const int cores = model_->platform->npu_cores;
  if (cores == 1)
    return ORKNN_ERR(kInvalidParam, "rknn_set_batch_core_num: platform %s has a single NPU core", model_->platform->name);
  if (core_num < 1 || core_num > cores)
    return ORKNN_ERR(kInvalidParam, "rknn_set_batch_core_num: core_num %d is not in [1, %d] on %s", core_num, cores,
                     model_->platform->name);
  const Graph& g = model_->graph;
  const int64_t batch = g.inputs.empty() || g.tensor(g.inputs[0].tensor).shape.empty() ? 1 : g.tensor(g.inputs[0].tensor).shape[0];
  if (batch <= 1)
    return ORKNN_ERR(kInvalidParam, "rknn_set_batch_core_num: the model's batch is %lld; this is for multi-batch models",
                     static_cast<long long>(batch));
  // The batch is split over core_num emulated cores = the threads of that many cores (§6).
  static const int kMaskForCores[4] = {0, RKNN_NPU_CORE_0, RKNN_NPU_CORE_0_1, RKNN_NPU_CORE_0_1_2};
  core_mask_ = static_cast<rknn_core_mask>(kMaskForCores[core_num]);
  for (Step& s : steps_) s.kctx.num_threads = num_threads();
  return Status::Ok();
}

static void fill_common_attr(const Tensor& t, uint32_t index, rknn_tensor_attr* a) {
  std::memset(a, 0, sizeof(*a));
  a->index = index;
  std::snprintf(a->name, sizeof(a->name), "%s", t.name.c_str());
  a->type = reported_type(t);
  if (is_float(t.dtype)) {
    a->qnt_type = RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
    a->zp = 0;
    a->scale = 1.0f;
  } else if (!t.quant.empty()) {
    a->qnt_type = RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
    a->zp = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
    a->scale = t.quant.scale[0];
  } else {
    a->qnt_type = RKNN_TENSOR_QNT_NONE;
    a->scale = 1.0f;
  }
  a->n_elems = static_cast<uint32_t>(t.numel());
  a->size = static_cast<uint32_t>(t.numel() * rknn_type_size(a->type));
  a->size_with_stride = a->size;
}

Status Context::input_attr(uint32_t index, rknn_tensor_attr* a, const Model* m) const {
  if (index >= n_inputs())
    return ORKNN_ERR(kInvalidParam, "rknn_query(INPUT_ATTR): index %u out of range (model has %u inputs)", index, n_inputs());
  const Model& md = m ? *m : *model_;
  const Tensor& t = md.graph.tensor(md.graph.inputs[index].tensor);
  fill_common_attr(t, index, a);
  const Shape& s = t.shape;
  a->n_dims = static_cast<uint32_t>(s.size());
  if (s.size() == 4) {  // 4-D inputs are reported NHWC (contract §4.1)
    a->fmt = RKNN_TENSOR_NHWC;
    a->dims[0] = static_cast<uint32_t>(s[0]); a->dims[1] = static_cast<uint32_t>(s[2]);
    a->dims[2] = static_cast<uint32_t>(s[3]); a->dims[3] = static_cast<uint32_t>(s[1]);
    a->w_stride = static_cast<uint32_t>(s[3]);
  } else {
    a->fmt = RKNN_TENSOR_UNDEFINED;
    for (size_t i = 0; i < s.size() && i < RKNN_MAX_DIMS; ++i) a->dims[i] = static_cast<uint32_t>(s[i]);
  }
  return Status::Ok();
}

Status Context::output_attr(uint32_t index, rknn_tensor_attr* a, const Model* m) const {
  if (index >= n_outputs())
    return ORKNN_ERR(kInvalidParam, "rknn_query(OUTPUT_ATTR): index %u out of range (model has %u outputs)", index, n_outputs());
  const Model& md = m ? *m : *model_;
  const Tensor& t = md.graph.tensor(md.graph.outputs[index]);
  fill_common_attr(t, index, a);
  const Shape& s = t.shape;
  a->n_dims = static_cast<uint32_t>(s.size());
  a->fmt = s.size() == 4 ? RKNN_TENSOR_NCHW : RKNN_TENSOR_UNDEFINED;  // outputs keep their layout
  for (size_t i = 0; i < s.size() && i < RKNN_MAX_DIMS; ++i) a->dims[i] = static_cast<uint32_t>(s[i]);
  if (s.size() == 4) a->w_stride = static_cast<uint32_t>(s[3]);
  return Status::Ok();
}

const Context::UInt8InputTable& Context::uint8_table(uint32_t index) {
  if (uint8_tables_.size() != n_inputs()) uint8_tables_.resize(n_inputs());
  UInt8InputTable& tab = uint8_tables_[index];
  if (!tab.f32.empty()) return tab;
  const GraphInput& gi = model_->graph.inputs[index];
  const Tensor& t = model_->graph.tensor(gi.tensor);
  // One table per channel when mean/std differ per channel, else one for all.
  const size_t per_channel = std::max(gi.mean.size(), gi.std.size());
  tab.channels = per_channel > 1 ? per_channel : 1;
  tab.f32.resize(tab.channels * 256);
  tab.q8.resize(tab.channels * 256);
  const QuantScalar q = per_tensor(t);
  for (size_t c = 0; c < tab.channels; ++c) {
    const float m = gi.mean.empty() ? 0.f : gi.mean[gi.mean.size() == 1 ? 0 : c];
    const float sd = gi.std.empty() ? 1.f : gi.std[gi.std.size() == 1 ? 0 : c];
    for (int u = 0; u < 256; ++u) {
      const float v = (static_cast<float>(u) - m) / sd;
      tab.f32[c * 256 + static_cast<size_t>(u)] = v;
      tab.q8[c * 256 + static_cast<size_t>(u)] = quantize_value(v, q.scale, q.zp);
    }
  }
  return tab;
}

Status Context::inputs_set(uint32_t n, const rknn_input* inputs) {
  ORKNN_RETURN_IF_ERROR(check_runnable("rknn_inputs_set", false));
  if (n == 0 || n > n_inputs())
    return ORKNN_ERR(kInvalidParam, "rknn_inputs_set: n_inputs %u, the model has %u inputs", n, n_inputs());
  const Graph& g = model_->graph;
  for (uint32_t k = 0; k < n; ++k) {
    const rknn_input& in = inputs[k];
    if (in.index >= n_inputs())
      return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: inputs[%u].index %u out of range (model has %u inputs)", k, in.index, n_inputs());
    const GraphInput& gi = g.inputs[in.index];
    const Tensor& t = g.tensor(gi.tensor);
    if (!in.buf) return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: input %u ('%s'): buf is NULL", in.index, t.name.c_str());
    rknn_tensor_attr attr;
    ORKNN_RETURN_IF_ERROR(input_attr(in.index, &attr));
    const bool pass = in.pass_through != 0;
    // pass_through: the buffer already holds the reported (native) type and layout.
    const int raw_type = pass ? static_cast<int>(attr.type) : raw_enum(in.type);
    const int raw_fmt = pass ? static_cast<int>(attr.fmt) : raw_enum(in.fmt);
    if (raw_type < 0 || raw_type >= RKNN_TENSOR_TYPE_MAX || !supported_input_type(static_cast<rknn_tensor_type>(raw_type)))
      return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: input %u ('%s'): unsupported type %d", in.index, t.name.c_str(), raw_type);
    if (raw_fmt != RKNN_TENSOR_NCHW && raw_fmt != RKNN_TENSOR_NHWC && raw_fmt != RKNN_TENSOR_UNDEFINED)
      return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: input %u ('%s'): format %d is not accepted here (use NHWC or NCHW)",
                       in.index, t.name.c_str(), raw_fmt);
    const rknn_tensor_type type = static_cast<rknn_tensor_type>(raw_type);
    const rknn_tensor_format fmt = static_cast<rknn_tensor_format>(raw_fmt);
    const size_t count = static_cast<size_t>(t.numel());
    const size_t need = count * rknn_type_size(type);
    if (in.size < need)
      return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: input %u ('%s'): size %u is smaller than %zu (%zu elements of %s)",
                       in.index, t.name.c_str(), in.size, need, count, get_type_string(type));

    void* dst = tensor_ptr(gi.tensor);
    const Shape& s = t.shape;
    const bool nhwc = s.size() == 4 && fmt == RKNN_TENSOR_NHWC;
    const int64_t C = s.size() == 4 ? s[1] : 1, H = s.size() == 4 ? s[2] : 1, W = s.size() == 4 ? s[3] : 1;
    const int64_t plane = H * W;
    // Quantized inputs take real values and quantize them (docs/numerics.md), unless the data is
    // already native (pass_through).
    const bool quantize = !pass && !t.quant.empty();
    if (!pass && type == RKNN_TENSOR_UINT8 && (t.dtype == DType::kF32 || quantize)) {
      // Images: mean/std (per channel, dim 1 of the model's NCHW input) and quantization through a
      // per-channel table of the 256 byte values, computed once with the same arithmetic.
      const UInt8InputTable& tab = uint8_table(in.index);
      const uint8_t* src = static_cast<const uint8_t*>(in.buf);
      const int64_t N = static_cast<int64_t>(count) / (C * plane);
      for (int64_t nn = 0; nn < N; ++nn) {
        for (int64_t c = 0; c < C; ++c) {
          const size_t base = static_cast<size_t>((nn * C + c) * plane);
          const size_t tc = tab.channels == 1 ? 0 : static_cast<size_t>(c) * 256;
          for (int64_t i = 0; i < plane; ++i) {
            const size_t si = nhwc ? static_cast<size_t>((nn * plane + i) * C + c) : base + static_cast<size_t>(i);
            if (quantize) static_cast<int8_t*>(dst)[base + i] = tab.q8[tc + src[si]];
            else static_cast<float*>(dst)[base + i] = tab.f32[tc + src[si]];
          }
        }
      }
    } else if (!nhwc && type == RKNN_TENSOR_FLOAT32 && t.dtype == DType::kF32) {
      std::memcpy(dst, in.buf, count * 4);  // the common float32 NCHW case: a copy
    } else if (!nhwc && type == RKNN_TENSOR_FLOAT32 && quantize && t.dtype == DType::kI8 &&
               x86_quantize_f32_s8(static_cast<const float*>(in.buf), static_cast<int8_t*>(dst),
                                   static_cast<int64_t>(count), per_tensor(t).scale, per_tensor(t).zp)) {
      // float32 NCHW into an int8 input: the vectorised quantize_value
    } else {
      const QuantScalar q = per_tensor(t);
      for (size_t i = 0; i < count; ++i) {
        // i is the destination (NCHW) index; find the source index.
        size_t src = i;
        if (nhwc) {
          int64_t w = static_cast<int64_t>(i) % W, h = (static_cast<int64_t>(i) / W) % H;
          int64_t c = (static_cast<int64_t>(i) / plane) % C;
          int64_t nn = static_cast<int64_t>(i) / (plane * C);
          src = static_cast<size_t>(((nn * H + h) * W + w) * C + c);
        }
        const double v = load_elem(in.buf, type, src);
        if (quantize) static_cast<int8_t*>(dst)[i] = quantize_value(static_cast<float>(v), q.scale, q.zp);
        else store_elem(dst, t.dtype, i, v);
      }
    }
    if (t.dtype == DType::kF32 && g.precision == FloatPrecision::kFp16)
      round_to_fp16(static_cast<float*>(dst), count);  // the NPU holds its inputs as fp16
    input_set_[in.index] = true;
  }
  return Status::Ok();
}

Status Context::run() {
  ORKNN_RETURN_IF_ERROR(check_runnable("rknn_run", true));
  ORKNN_RETURN_IF_ERROR(read_bound_inputs());  // zero-copy inputs (rknn_set_io_mem)
  for (size_t i = 0; i < input_set_.size(); ++i)
    if (!input_set_[i])
      return ORKNN_ERR(kInvalidInput, "rknn_run: input %zu ('%s') was never set (call rknn_inputs_set first)", i,
                       model_->graph.tensor(model_->graph.inputs[i].tensor).name.c_str());
  if (custom_ops_) ORKNN_RETURN_IF_ERROR(custom_ops_->begin_run());  // every custom type registered
  const bool timed = (flags_ & RKNN_FLAG_COLLECT_PERF_MASK) || log_enabled(LogLevel::kTrace);
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  for (Step& s : steps_) {
    auto ts = timed ? clock::now() : clock::time_point();
    s.kernel->run(s.kctx);
    if (custom_ops_ && s.kctx.node->op == OpId::Custom) ORKNN_RETURN_IF_ERROR(custom_ops_->take_run_error());
    if (s.round_outputs_fp16 && !s.kernel->rounds_fp16_outputs()) {
      for (size_t o = 0; o < s.kctx.outputs.size(); ++o) {
        const Tensor& t = s.kctx.out_tensor(o);
        if (t.dtype != DType::kF32) continue;
        // A padded nChw16c output (kernels/kernel.h) holds its values among the zeros of the padding.
        const int64_t n = s.kctx.output_blocked(o) && t.shape[1] % 16 != 0 ? nchw16c_padded_numel(t.shape) : t.numel();
        round_output_to_fp16(static_cast<float*>(s.kctx.outputs[o]), static_cast<size_t>(n), s.kctx.num_threads);
      }
    }
    if (timed) {
      s.last_us = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - ts).count();
      s.total_us += s.last_us;
      if (log_enabled(LogLevel::kTrace))
        log(LogLevel::kTrace, "layer %-24s %-20s kernel %-16s out %-18s %6lld us", s.kctx.node->name.c_str(),
            op_name(s.kctx.node->op), s.kernel_name.c_str(), shape_str(s.kctx.out_tensor(0).shape).c_str(),
            static_cast<long long>(s.last_us));
    }
  }
  last_run_us_ = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - t0).count();
  has_run_ = true;
  if (async()) {
    // Pipelined mode: outputs_get now delivers the previous run's outputs.
    std::swap(async_delivered_, async_latest_);
    const Graph& g = model_->graph;
    for (size_t i = 0; i < g.outputs.size(); ++i)
      std::memcpy(async_latest_[i].data(), tensor_ptr(g.outputs[i]), async_latest_[i].size());
    delivered_frame_id_ = frame_id_;
  }
  ++frame_id_;
  return write_bound_outputs();  // zero-copy outputs land in their mems (contract §1.4 rknn_run)
}

Status Context::outputs_get(uint32_t n, rknn_output* outputs) {
  if (n == 0 || n > n_outputs())
    return ORKNN_ERR(kInvalidOutput, "rknn_outputs_get: n_outputs %u, the model has %u outputs", n, n_outputs());
  if (!has_run_) return ORKNN_ERR(kInvalidOutput, "rknn_outputs_get: rknn_run has not been called");
  ORKNN_RETURN_IF_ERROR(check_runnable("rknn_outputs_get", false));  // the arena may be a destroyed client mem
  const Graph& g = model_->graph;
  for (uint32_t i = 0; i < n; ++i) {
    rknn_output& o = outputs[i];
    o.index = i;  // the array position identifies the output (contract §4.3)
    const Tensor& t = g.tensor(g.outputs[i]);
    const size_t count = static_cast<size_t>(t.numel());
    const void* src = output_src(i);
    size_t need;
    if (o.want_float) need = count * 4;
    else if (is_float(t.dtype)) need = count * 2;  // FLOAT16, the reported type
    else need = count * dtype_size(t.dtype);
    void* dst;
    if (o.is_prealloc) {
      if (!o.buf) return ORKNN_ERR(kInvalidOutput, "rknn_outputs_get: output %u: is_prealloc set but buf is NULL", i);
      if (o.size < need)
        return ORKNN_ERR(kInvalidOutput, "rknn_outputs_get: output %u ('%s'): buffer size %u is smaller than %zu",
                         i, t.name.c_str(), o.size, need);
      dst = o.buf;
    } else {
      dst = std::malloc(std::max<size_t>(need, 1));
      if (!dst) return ORKNN_ERR(kNoMemory, "rknn_outputs_get: cannot allocate %zu bytes for output %u", need, i);
      owned_output_bufs_.push_back(dst);
      o.buf = dst;
      o.size = static_cast<uint32_t>(need);
    }
    convert_output(t, src, o.want_float != 0, dst);
  }
  return Status::Ok();
}

Status Context::outputs_release(uint32_t n, rknn_output* outputs) {
  if (n > n_outputs())
    return ORKNN_ERR(kInvalidOutput, "rknn_outputs_release: n_outputs %u, the model has %u outputs", n, n_outputs());
  for (uint32_t i = 0; i < n; ++i) {
    rknn_output& o = outputs[i];
    if (o.is_prealloc || !o.buf) continue;
    auto it = std::find(owned_output_bufs_.begin(), owned_output_bufs_.end(), o.buf);
    if (it == owned_output_bufs_.end()) continue;  // not ours (or already released): leave it alone
    std::free(*it);
    owned_output_bufs_.erase(it);
    o.buf = nullptr;
  }
  return Status::Ok();
}

Status Context::query(int cmd, void* info, uint32_t size) {
  auto need = [&](size_t n, const char* what) -> Status {
    if (size < n)
      return ORKNN_ERR(kInvalidParam, "rknn_query(%s): size %u is smaller than sizeof(%s) = %zu", what, size, what, n);
    return Status::Ok();
  };
  const Graph& g = model_->graph;
  switch (cmd) {
    case RKNN_QUERY_IN_OUT_NUM: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_input_output_num), "rknn_input_output_num"));
      auto* p = static_cast<rknn_input_output_num*>(info);
      p->n_input = n_inputs();
      p->n_output = n_outputs();
      return Status::Ok();
    }
    case RKNN_QUERY_INPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      if (!base_model_->dynamic.empty()) return static_attr(cmd, static_cast<rknn_tensor_attr*>(info));
      return input_attr(static_cast<rknn_tensor_attr*>(info)->index, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_OUTPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      if (!base_model_->dynamic.empty()) return static_attr(cmd, static_cast<rknn_tensor_attr*>(info));
      return output_attr(static_cast<rknn_tensor_attr*>(info)->index, static_cast<rknn_tensor_attr*>(info));
    // Dynamic shapes (contract §4.4): the active shape set; on a static model, its only shapes.
    case RKNN_QUERY_CURRENT_INPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      return input_attr(static_cast<rknn_tensor_attr*>(info)->index, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_CURRENT_OUTPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      return output_attr(static_cast<rknn_tensor_attr*>(info)->index, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      return native_input_attr(static_cast<rknn_tensor_attr*>(info)->index, false, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      return native_output_attr(static_cast<rknn_tensor_attr*>(info)->index, false, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_INPUT_DYNAMIC_RANGE:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_input_range), "rknn_input_range"));
      return input_range(static_cast<rknn_input_range*>(info));
    case RKNN_QUERY_NATIVE_INPUT_ATTR:
    case RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      if (!base_model_->dynamic.empty()) return static_attr(cmd, static_cast<rknn_tensor_attr*>(info));
      return native_input_attr(static_cast<rknn_tensor_attr*>(info)->index, cmd == RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR,
                               static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_NATIVE_OUTPUT_ATTR:
    case RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      if (!base_model_->dynamic.empty()) return static_attr(cmd, static_cast<rknn_tensor_attr*>(info));
      return native_output_attr(static_cast<rknn_tensor_attr*>(info)->index, cmd == RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR,
                                static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_SDK_VERSION: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_sdk_version), "rknn_sdk_version"));
      auto* p = static_cast<rknn_sdk_version*>(info);
      std::memset(p, 0, sizeof(*p));
      std::snprintf(p->api_version, sizeof(p->api_version), "%s", kApiVersionString);
      std::snprintf(p->drv_version, sizeof(p->drv_version), "%s", kDriverVersionString);
      return Status::Ok();
    }
    // DEVICE_MEM_INFO fills the same rknn_mem_size (the header gives it no struct of its own): the
    // context's sizes, and no on-chip SRAM on a CPU (total/free_sram_size 0). docs/decisions.md.
    case RKNN_QUERY_DEVICE_MEM_INFO:
    case RKNN_QUERY_MEM_SIZE: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_mem_size), "rknn_mem_size"));
      auto* p = static_cast<rknn_mem_size*>(info);
      std::memset(p, 0, sizeof(*p));
      p->total_weight_size = static_cast<uint32_t>(model_->weight_bytes);
      p->total_internal_size = static_cast<uint32_t>(arena_size_);
      p->total_dma_allocated_size = model_->weight_bytes + arena_size_;
      return Status::Ok();
    }
    case RKNN_QUERY_CUSTOM_STRING: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_custom_string), "rknn_custom_string"));
      auto* p = static_cast<rknn_custom_string*>(info);
      std::memset(p, 0, sizeof(*p));
      std::snprintf(p->string, sizeof(p->string), "%s", g.custom_string.c_str());
      return Status::Ok();
    }
    case RKNN_QUERY_PERF_RUN: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_perf_run), "rknn_perf_run"));
      static_cast<rknn_perf_run*>(info)->run_duration = last_run_us_;
      return Status::Ok();
    }
    case RKNN_QUERY_PERF_DETAIL: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_perf_detail), "rknn_perf_detail"));
      auto* p = static_cast<rknn_perf_detail*>(info);
      if (!(flags_ & RKNN_FLAG_COLLECT_PERF_MASK)) {
        perf_detail_ = "per-layer timing is collected when rknn_init is given RKNN_FLAG_COLLECT_PERF_MASK\n";
      } else {
        // Layout: how the runtime holds the output between kernels (NCHW order, or blocked: nChw16c
        // for float, nhwc for INT8).
        // MACs: multiply-accumulates of the layer (convolutions and matrix products; 0 otherwise).
        perf_detail_ = strfmt("%-5s %-22s %-32s %-18s %-20s %-8s %12s %10s\n", "ID", "OpType", "Name", "Kernel",
                              "OutputShape", "Layout", "MACs", "Time(us)");
        int64_t total = 0;
        for (size_t i = 0; i < steps_.size(); ++i) {
          const Step& s = steps_[i];
          perf_detail_ += strfmt("%-5zu %-22s %-32s %-18s %-20s %-8s %12lld %10lld\n", i, op_name(s.kctx.node->op),
                                 s.kctx.node->name.c_str(), s.kernel_name.c_str(),
                                 shape_str(s.kctx.out_tensor(0).shape).c_str(),
                                 s.kctx.output_blocked(0) ? blocked_layout_name(s.kctx.out_tensor(0).dtype) : "plain",
                                 static_cast<long long>(node_macs(model_->graph, *s.kctx.node)),
                                 static_cast<long long>(s.last_us));
          total += s.last_us;
        }
        perf_detail_ += strfmt("Total operator time (us): %lld\n", static_cast<long long>(total));
      }
      p->perf_data = perf_detail_.data();
      p->data_len = perf_detail_.size();
      return Status::Ok();
    }
    default:
      return ORKNN_ERR(kUnimplemented, "rknn_query: command %d is not implemented yet in OpenRKNN (see the README status table)",
                       cmd);
  }
}

// ---- Native attributes and zero-copy bindings (contract §4.4) ----

namespace {

// NC1HWC2 C2 of the platform for a reported type (0: no native NC1HWC2 layout for it).
int native_c2(const PlatformInfo& p, rknn_tensor_type t) {
  if (t == RKNN_TENSOR_INT8) return p.c2_int8;
  if (t == RKNN_TENSOR_FLOAT16) return p.c2_fp16;
  return 0;
}

void set_nhwc_dims(const Shape& s, rknn_tensor_attr* a) {
  a->fmt = RKNN_TENSOR_NHWC;
  a->n_dims = 4;
  a->dims[0] = static_cast<uint32_t>(s[0]); a->dims[1] = static_cast<uint32_t>(s[2]);
  a->dims[2] = static_cast<uint32_t>(s[3]); a->dims[3] = static_cast<uint32_t>(s[1]);
  a->w_stride = static_cast<uint32_t>(s[3]);
}


Nc1hwc2Geometry geometry_of(const Shape& s, int c2, int64_t w_stride) {
  Nc1hwc2Geometry g;
  g.n = s[0]; g.c = s[1]; g.h = s[2]; g.w = s[3];
  g.c2 = c2;
  g.w_stride = w_stride;
  return g;
}

}  // namespace

Status Context::native_input_attr(uint32_t index, bool nhwc, rknn_tensor_attr* a, const Model* m) const {
  (void)nhwc;  // both native input views are NHWC (contract §4.4): the normal attribute already is
  if (index >= n_inputs())
    return ORKNN_ERR(kInvalidParam, "rknn_query(NATIVE_INPUT_ATTR): index %u out of range (model has %u inputs)", index, n_inputs());
  ORKNN_RETURN_IF_ERROR(input_attr(index, a, m));
  a->pass_through = 0;
  return Status::Ok();
}

Status Context::native_output_attr(uint32_t index, bool nhwc, rknn_tensor_attr* a, const Model* m) const {
  if (index >= n_outputs())
    return ORKNN_ERR(kInvalidParam, "rknn_query(NATIVE_OUTPUT_ATTR): index %u out of range (model has %u outputs)", index,
                     n_outputs());
  ORKNN_RETURN_IF_ERROR(output_attr(index, a, m));
  const Model& md = m ? *m : *model_;
  const Tensor& t = md.graph.tensor(md.graph.outputs[index]);
  const Shape& s = t.shape;
  if (s.size() != 4) return Status::Ok();  // non-4-D outputs have no other native layout
  const int c2 = native_c2(*md.platform, a->type);
  if (!nhwc && c2 > 0) {
    const Nc1hwc2Geometry g = geometry_of(s, c2, 0);
    a->fmt = RKNN_TENSOR_NC1HWC2;
    a->n_dims = 5;
    a->dims[0] = static_cast<uint32_t>(g.n); a->dims[1] = static_cast<uint32_t>(g.c1());
    a->dims[2] = static_cast<uint32_t>(g.h); a->dims[3] = static_cast<uint32_t>(g.w);
    a->dims[4] = static_cast<uint32_t>(c2);
    a->n_elems = static_cast<uint32_t>(g.num_elements());  // padding included, as the vendor reports
    a->size = static_cast<uint32_t>(g.num_elements() * static_cast<int64_t>(rknn_type_size(a->type)));
    a->size_with_stride = a->size;
    a->w_stride = static_cast<uint32_t>(g.w);
  } else if (nhwc || a->type == RKNN_TENSOR_INT8 || a->type == RKNN_TENSOR_FLOAT16) {
    // NATIVE_NHWC_OUTPUT_ATTR, or a platform without NC1HWC2 for this dtype (docs/decisions.md).
    set_nhwc_dims(s, a);
  }
  return Status::Ok();
}

Status Context::set_io_mem(rknn_tensor_mem* mem, const rknn_tensor_attr* attr) {
  const uint64_t serial = tensor_mem_serial(mem);
  if (!serial)
    return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: mem %p was not created by rknn_create_mem* or was destroyed",
                     static_cast<void*>(mem));
  if (!mem->virt_addr) return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: mem->virt_addr is NULL");
  // Matching rule (docs/decisions.md): the attr names a tensor by index AND name; inputs are tried
  // first, then outputs. An empty name means the input with that index.
  const Graph& g = model_->graph;
  const size_t name_len = strnlen(attr->name, sizeof(attr->name));
  const std::string name(attr->name, name_len);
  if (name.empty()) {
    if (attr->index >= n_inputs())
      return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: attr has no name and index %u is not an input (model has %u inputs); "
                       "pass the attr returned by an input/output query", attr->index, n_inputs());
    return bind_input(attr->index, mem, serial, *attr);
  }
  if (attr->index < n_inputs() && g.tensor(g.inputs[attr->index].tensor).name == name)
    return bind_input(attr->index, mem, serial, *attr);
  if (attr->index < n_outputs() && g.tensor(g.outputs[attr->index]).name == name)
    return bind_output(attr->index, mem, serial, *attr);
  return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: no input or output has index %u and name '%s'", attr->index, name.c_str());
}

Status Context::bind_input(uint32_t index, rknn_tensor_mem* mem, uint64_t serial, const rknn_tensor_attr& attr) {
  const Tensor& t = model_->graph.tensor(model_->graph.inputs[index].tensor);
  rknn_tensor_attr native;
  ORKNN_RETURN_IF_ERROR(native_input_attr(index, false, &native));
  const int raw_type = raw_enum(attr.type), raw_fmt = raw_enum(attr.fmt);
  IoBinding b;
  b.mem = mem;
  b.serial = serial;
  // Native data: pass_through, or INT8 codes for a quantized input (the vendor's zero-copy contract:
  // an INT8 input buffer is already normalised and quantized by the client).
  b.native = attr.pass_through != 0 || (raw_type == RKNN_TENSOR_INT8 && !t.quant.empty());
  b.type = b.native ? native.type : static_cast<rknn_tensor_type>(raw_type);
  if (!b.native && (raw_type < 0 || raw_type >= RKNN_TENSOR_TYPE_MAX || !supported_input_type(b.type)))
    return ORKNN_ERR(kInvalidInput, "rknn_set_io_mem: input %u ('%s'): unsupported type %d", index, t.name.c_str(), raw_type);
  if (attr.pass_through) b.fmt = native.fmt;
  else if (raw_fmt == RKNN_TENSOR_NCHW || raw_fmt == RKNN_TENSOR_NHWC || raw_fmt == RKNN_TENSOR_UNDEFINED)
    b.fmt = static_cast<rknn_tensor_format>(raw_fmt);
  else
    return ORKNN_ERR(kInvalidInput, "rknn_set_io_mem: input %u ('%s'): format %d is not accepted for inputs (use NHWC or NCHW)",
                     index, t.name.c_str(), raw_fmt);
  const size_t need = b.native ? native.size_with_stride : static_cast<size_t>(t.numel()) * rknn_type_size(b.type);
  if (mem->size < need)
    return ORKNN_ERR(kInvalidInput, "rknn_set_io_mem: input %u ('%s'): mem size %u is smaller than %zu (%lld elements of %s%s)",
                     index, t.name.c_str(), mem->size, need, static_cast<long long>(t.numel()), get_type_string(b.type),
                     b.native ? ", native" : "");
  if (input_bindings_.size() != n_inputs()) input_bindings_.resize(n_inputs());
  input_bindings_[index] = std::move(b);
  return Status::Ok();
}

Status Context::bind_output(uint32_t index, rknn_tensor_mem* mem, uint64_t serial, const rknn_tensor_attr& attr) {
  const Tensor& t = model_->graph.tensor(model_->graph.outputs[index]);
  rknn_tensor_attr normal;
  ORKNN_RETURN_IF_ERROR(output_attr(index, &normal));
  const int raw_type = raw_enum(attr.type), raw_fmt = raw_enum(attr.fmt);
  IoBinding b;
  b.mem = mem;
  b.serial = serial;
  if (raw_type != RKNN_TENSOR_FLOAT32 && raw_type != static_cast<int>(normal.type))
    return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): type %d cannot be produced (use FLOAT32 or %s)", index,
                     t.name.c_str(), raw_type, get_type_string(normal.type));
  b.type = static_cast<rknn_tensor_type>(raw_type);
  const bool four_d = t.shape.size() == 4;
  const size_t es = rknn_type_size(b.type);
  size_t need = static_cast<size_t>(t.numel()) * es;
  if (raw_fmt == RKNN_TENSOR_NC1HWC2) {
    const int c2 = native_c2(*model_->platform, b.type);
    if (!four_d || c2 == 0)
      return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): no NC1HWC2 layout for a %zu-D %s tensor on %s", index,
                       t.name.c_str(), t.shape.size(), get_type_string(b.type), model_->platform->name);
    b.w_stride = attr.w_stride > static_cast<uint32_t>(t.shape[3]) ? attr.w_stride : 0;
    need = static_cast<size_t>(geometry_of(t.shape, c2, b.w_stride).num_elements()) * es;
  } else if (raw_fmt == RKNN_TENSOR_NHWC) {
    if (!four_d)
      return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): NHWC needs a 4-D tensor (it has %zu dims)", index,
                       t.name.c_str(), t.shape.size());
  } else if (raw_fmt != RKNN_TENSOR_NCHW && raw_fmt != RKNN_TENSOR_UNDEFINED) {
    return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): unknown format %d", index, t.name.c_str(), raw_fmt);
  }
  b.fmt = static_cast<rknn_tensor_format>(raw_fmt);
  if (mem->size < need)
    return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): mem size %u is smaller than %zu (%s %s)", index,
                     t.name.c_str(), mem->size, need, get_type_string(b.type), get_format_string(b.fmt));
  if (b.fmt == RKNN_TENSOR_NC1HWC2 || (b.fmt == RKNN_TENSOR_NHWC && four_d))
    b.staging.resize(static_cast<size_t>(t.numel()) * es);  // allocated here: run() allocates nothing
  if (output_bindings_.size() != n_outputs()) output_bindings_.resize(n_outputs());
  output_bindings_[index] = std::move(b);
  return Status::Ok();
}

Status Context::read_bound_inputs() {
  const Graph& g = model_->graph;
  for (uint32_t i = 0; i < input_bindings_.size(); ++i) {
    const IoBinding& b = input_bindings_[i];
    if (!b.mem) continue;
    const Tensor& t = g.tensor(g.inputs[i].tensor);
    if (tensor_mem_serial(b.mem) != b.serial)
      return ORKNN_ERR(kInvalidInput, "rknn_run: the mem bound to input %u ('%s') was destroyed; bind a live mem with rknn_set_io_mem",
                       i, t.name.c_str());
    const uint8_t* data = static_cast<const uint8_t*>(b.mem->virt_addr) + b.mem->offset;
    if (b.native && !t.quant.empty()) {
      // Quantized codes: copy (NHWC -> the arena's NCHW for 4-D tensors).
      void* dst = tensor_ptr(g.inputs[i].tensor);
      const Shape& s = t.shape;
      if (s.size() == 4 && b.fmt == RKNN_TENSOR_NHWC) nhwc_to_nchw(data, dst, s[0], s[1], s[2], s[3], 1);
      else std::memcpy(dst, data, static_cast<size_t>(t.numel()));
      input_set_[i] = true;
      continue;
    }
    rknn_input in;
    std::memset(&in, 0, sizeof(in));
    in.index = i;
    in.buf = const_cast<uint8_t*>(data);
    in.size = b.mem->size;
    in.pass_through = b.native ? 1 : 0;
    in.type = b.type;
    in.fmt = b.fmt;
    ORKNN_RETURN_IF_ERROR(inputs_set(1, &in));
  }
  return Status::Ok();
}

Status Context::write_bound_outputs() {
  const Graph& g = model_->graph;
  for (uint32_t i = 0; i < output_bindings_.size(); ++i) {
    IoBinding& b = output_bindings_[i];
    if (!b.mem) continue;
    const Tensor& t = g.tensor(g.outputs[i]);
    if (tensor_mem_serial(b.mem) != b.serial)
      return ORKNN_ERR(kInvalidOutput, "rknn_run: the mem bound to output %u ('%s') was destroyed; bind a live mem with rknn_set_io_mem",
                       i, t.name.c_str());
    uint8_t* data = static_cast<uint8_t*>(b.mem->virt_addr) + b.mem->offset;
    const bool want_float = b.type == RKNN_TENSOR_FLOAT32;
    const size_t es = rknn_type_size(b.type);
    const Shape& s = t.shape;
    if (b.staging.empty()) {
      convert_output(t, tensor_ptr(g.outputs[i]), want_float, data);
    } else {
      convert_output(t, tensor_ptr(g.outputs[i]), want_float, b.staging.data());
      if (b.fmt == RKNN_TENSOR_NHWC) {
        nchw_to_nhwc(b.staging.data(), data, s[0], s[1], s[2], s[3], es);
      } else {
        const Nc1hwc2Geometry geo = geometry_of(s, native_c2(*model_->platform, b.type), b.w_stride);
        if (!nchw_to_nc1hwc2(b.staging.data(), data, geo, es))
          return ORKNN_ERR(kInvalidOutput, "rknn_run: output %u ('%s'): invalid NC1HWC2 geometry", i, t.name.c_str());
      }
    }
  }
  return Status::Ok();
}

void Context::make_custom_ops() {
  for (const Node& n : base_model_->graph.nodes)
    if (n.op == OpId::Custom) {
      custom_ops_ = std::make_unique<CustomOps>(base_model_->graph);
      return;
    }
}

Status Context::register_custom_ops(const rknn_custom_op* ops, uint32_t n) {
  if (!custom_ops_)
    return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: the model has no custom operators");
  return custom_ops_->register_ops(ops, n);
}

int Context::custom_op_error_code() const { return custom_ops_ ? custom_ops_->callback_error_code() : 0; }

}  // namespace orknn
