// runtime::Context: lifecycle, planning, runs, thread counts and the client's memory blocks.
#include "runtime/context.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "common/large_alloc.h"
#include "common/log.h"
#include "common/threads.h"
#include "runtime/custom_ops.h"
#include "runtime/platform.h"
#include "runtime/tensor_mem.h"

namespace orknn {

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
  execs_.clear();  // the kernels point into the arena
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
  Status st = plan();  // the kernels' tensor pointers point into the new block
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


void* Context::tensor_ptr(int id) const { return exec().tensor_ptr(id); }

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

Status Context::set_threads_from_mask(rknn_core_mask mask) {
  const rknn_core_mask old = core_mask_;
  core_mask_ = mask;
  if (num_threads() == planned_threads_ || execs_.empty()) return Status::Ok();
  Status st = plan();  // kernels plan their work for a thread count at prepare
  if (!st.ok()) {
    core_mask_ = old;
    ORKNN_RETURN_IF_ERROR(plan());
  }
  return st;
}

int Context::threads_asked() const {
  if (const char* v = std::getenv("OPENRKNN_NUM_THREADS")) {
    int n = std::atoi(v);
    if (n > 0) return n;
  }
  return core_mask_threads(*model_->platform, static_cast<uint32_t>(core_mask_));
}

Status Context::plan() {
  const Graph& g = model_->graph;
  planned_threads_ = num_threads();
  exec_opts_ = ExecOptions();
  exec_opts_.allow_fast = !reference_kernels_only();
  exec_opts_.num_threads = planned_threads_;
  if (custom_ops_)
    exec_opts_.custom_kernel = [this](const Graph& graph, const Node& n) { return custom_ops_->make_kernel(graph, n); };
  // Every shape set's executor is planned now: the arena (one per context) must fit the largest.
  execs_.clear();  // before the scratch they may point into is reset
  single_execs_.clear();
  last_run_exec_ = nullptr;
  scratch_.reset();
  execs_.resize(n_shape_sets());
  single_execs_.resize(n_shape_sets());
  single_failed_.assign(n_shape_sets(), 0);
  size_t arena_size = 0;
  for (size_t s = 0; s < execs_.size(); ++s) {
    ORKNN_RETURN_IF_ERROR(Executor::plan(shape_set_model(s)->graph, exec_opts_, &execs_[s]));
    arena_size = std::max(arena_size, execs_[s]->arena_bytes());
  }
  if (internal_mem_ && internal_mem_->size < arena_size)
    return ORKNN_ERR(kInvalidParam, "the internal mem set with rknn_set_internal_mem has %u bytes, the model now needs %zu",
                     internal_mem_->size, arena_size);
  if (!internal_outside() && !info_only() && (!arena_ || arena_size > arena_size_)) {
    // Zero-filled (alloc_large); huge pages pre-faulted, as the first run writes all of it anyway.
    uint8_t* arena = static_cast<uint8_t*>(alloc_large(std::max<size_t>(arena_size, 64), /*populate=*/true));
    if (!arena) return ORKNN_ERR(kNoMemory, "cannot allocate the %zu-byte activation arena", arena_size);
    free_large(arena_, std::max<size_t>(arena_size_, 64));
    arena_ = arena;
  }
  arena_size_ = std::max(arena_size_, arena_size);
  if (input_set_.size() != g.inputs.size()) input_set_.assign(g.inputs.size(), false);
  if (info_only()) {
    ORKNN_LOGI("model info context: %zu nodes, %zu weight bytes, %zu arena bytes (no kernels, cannot run)", g.nodes.size(),
               model_->weight_bytes, arena_size_);
    return Status::Ok();
  }
  if (async() && async_latest_.empty()) {
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
  if (!arena_) {
    ORKNN_LOGI("model loaded: %zu nodes, %zu arena bytes to be provided by rknn_set_internal_mem", g.nodes.size(), arena_size_);
    return Status::Ok();  // kernels are prepared when the arena arrives
  }
  ORKNN_RETURN_IF_ERROR(bind_active());
  ORKNN_LOGI("model loaded: %zu nodes, %zu weight bytes, %zu arena bytes, %.1f M MACs on %d thread(s), platform %s",
             g.nodes.size(), model_->weight_bytes, arena_size_, static_cast<double>(model_->macs) / 1e6, planned_threads_,
             model_->platform->name);
  return Status::Ok();
}

Executor* Context::single_thread_exec() {
  // Custom nodes keep one kernel each: the application's init/prepare run once per node.
  if (planned_threads_ <= 1 || custom_ops_ || single_failed_[active_set_]) return nullptr;
  std::unique_ptr<Executor>& one = single_execs_[active_set_];
  if (!one) {
    ExecOptions opts = exec_opts_;
    opts.num_threads = 1;
    Status st = Executor::plan(exec().graph(), opts, &one);
    if (st.ok() && !one->same_arena_plan(exec()))
      st = ORKNN_ERR(kFail, "its arena plan differs from the context's");
    if (st.ok()) st = one->bind(arena_, &scratch_);
    if (!st.ok()) {
      ORKNN_LOGW("runs on a busy host keep %d threads: no one-thread executor (%s)", planned_threads_,
                 st.message().c_str());
      one.reset();
      single_failed_[active_set_] = 1;
      return nullptr;
    }
    ORKNN_LOGI("busy host: this context's runs go single-threaded while the CPUs are taken");
  }
  return one.get();
}

Status Context::bind_active() {
  Executor& e = exec();
  if (e.bound() || info_only() || !arena_) return Status::Ok();
  Status st = e.bind(arena_, &scratch_);
  if (!st.ok()) {
    // No half-prepared executor is ever run: the set's executor is planned again, unbound.
    std::unique_ptr<Executor> fresh;
    if (Executor::plan(e.graph(), exec_opts_, &fresh).ok()) execs_[active_set_] = std::move(fresh);
  }
  return st;
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
  return set_threads_from_mask(static_cast<rknn_core_mask>(mask));
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
  return set_threads_from_mask(static_cast<rknn_core_mask>(kMaskForCores[core_num]));
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
  const auto t0 = clock::now();
  // One thread instead of the planned ones while the CPUs are taken (common/threads.h).
  const RunThreads threads(planned_threads_);
  Executor* one = threads.threads() < planned_threads_ ? single_thread_exec() : nullptr;
  Executor& e = one ? *one : exec();
  last_run_exec_ = &e;
  ORKNN_RETURN_IF_ERROR(e.run(timed, [&](size_t k) {
    // A custom operator's callback failure ends the run with its code (runtime/custom_ops.h).
    return custom_ops_ && e.step_node(k).op == OpId::Custom ? custom_ops_->take_run_error() : Status::Ok();
  }));
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
  return write_bound_outputs();  // zero-copy outputs land in their mems (docs/api-contract.md §1.4 rknn_run)
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
