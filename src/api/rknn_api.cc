// extern "C" entry points of librknnrt.so: argument checks and the handle table; each runs in
// guarded() (api/guarded.h: Status -> RKNN_ERR_*, one log line per failure, no exception across
// the C ABI).
#include "rknn_api.h"

#include <new>
#include <string>

#include "api/guarded.h"
#include "api/handles.h"
#include "api/matmul_handles.h"
#include "common/log.h"
#include "common/raw_enum.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"
#include "runtime/context.h"
#include "runtime/custom_ops.h"
#include "runtime/tensor_mem.h"

using orknn::Context;
using orknn::Status;
using orknn::guarded;
using orknn::report;

namespace {

orknn::HandleTable<Context>& contexts() {
  static orknn::HandleTable<Context> t;
  return t;
}

// Runs `body(Context&)` on a live context, holding that context's lock.
template <typename F>
int with_context(const char* fn, rknn_context ctx, F&& body) {
  return guarded(fn, [&]() -> Status {
    auto e = contexts().get(static_cast<uint64_t>(ctx));
    if (!e) return ORKNN_ERR(kInvalidContext, "invalid context handle 0x%llx", static_cast<unsigned long long>(ctx));
    std::lock_guard<std::mutex> lock(e->mu);
    if (!e->obj) return ORKNN_ERR(kInvalidContext, "context 0x%llx was destroyed", static_cast<unsigned long long>(ctx));
    return body(*e->obj);
  });
}

// rknn_init flags handled by this version; the rest are refused with a log line naming them.
constexpr uint32_t kPriorityBits = RKNN_FLAG_PRIOR_MEDIUM | RKNN_FLAG_PRIOR_LOW;
constexpr uint32_t kSupportedFlags = kPriorityBits | RKNN_FLAG_COLLECT_PERF_MASK | RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY |
                                     RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE | RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE |
                                     RKNN_FLAG_ASYNC_MASK | RKNN_FLAG_MEM_ALLOC_OUTSIDE | RKNN_FLAG_SHARE_WEIGHT_MEM |
                                     RKNN_FLAG_COLLECT_MODEL_INFO_ONLY | RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE |
                                     RKNN_FLAG_MODEL_BUFFER_ZERO_COPY;

// Loads the model of rknn_init: in place for MODEL_BUFFER_ZERO_COPY, else copied / read from a file;
// with SHARE_WEIGHT_MEM the result is the Model (weights) of extend->ctx, once the given model is
// checked to be the same network.
Status load_init_model(void* model, uint32_t size, uint32_t flag, const rknn_init_extend* extend,
                       std::shared_ptr<const orknn::Model>* m) {
  if (flag & RKNN_FLAG_MODEL_BUFFER_ZERO_COPY) {
    if (size == 0)
      return ORKNN_ERR(kInvalidParam, "RKNN_FLAG_MODEL_BUFFER_ZERO_COPY needs a model buffer (size > 0), not a file path");
    const int64_t off = extend ? extend->real_model_offset : 0;
    const int64_t len = extend && extend->real_model_size ? static_cast<int64_t>(extend->real_model_size) : size - off;
    if (off < 0 || len <= 0 || off + len > static_cast<int64_t>(size))
      return ORKNN_ERR(kInvalidParam, "RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: real_model_offset %lld + real_model_size %lld "
                       "do not fit in the %u-byte buffer", static_cast<long long>(off), static_cast<long long>(len), size);
    ORKNN_RETURN_IF_ERROR(orknn::load_model_in_place(static_cast<uint8_t*>(model) + off, static_cast<size_t>(len), m));
  } else if (size == 0) {
    ORKNN_RETURN_IF_ERROR(orknn::load_model_from_file(static_cast<const char*>(model), m));
  } else {
    ORKNN_RETURN_IF_ERROR(orknn::load_model_from_buffer(model, size, m));
  }
  if (!(flag & RKNN_FLAG_SHARE_WEIGHT_MEM)) return Status::Ok();
  if (!extend || extend->ctx == 0)
    return ORKNN_ERR(kInvalidParam, "RKNN_FLAG_SHARE_WEIGHT_MEM needs rknn_init_extend::ctx, the context owning the weights");
  auto e = contexts().get(static_cast<uint64_t>(extend->ctx));
  if (!e)
    return ORKNN_ERR(kInvalidContext, "RKNN_FLAG_SHARE_WEIGHT_MEM: extend->ctx 0x%llx is not a valid context",
                     static_cast<unsigned long long>(extend->ctx));
  std::shared_ptr<const orknn::Model> owner;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    if (!e->obj) return ORKNN_ERR(kInvalidContext, "RKNN_FLAG_SHARE_WEIGHT_MEM: extend->ctx was destroyed");
    owner = e->obj->shared_model();
  }
  ORKNN_RETURN_IF_ERROR(orknn::check_same_network(**m, *owner));
  *m = std::move(owner);
  return Status::Ok();
}

// Runs a rknn_create_mem* body: checks the owning context (0 allowed only when `allow_no_context`),
// logs one line on failure and returns the new mem or NULL.
template <typename F>
rknn_tensor_mem* create_mem_guarded(const char* fn, rknn_context ctx, bool allow_no_context, F&& body) {
  rknn_tensor_mem* mem = nullptr;
  guarded(fn, [&]() -> Status {
    if (ctx == 0 && !allow_no_context)
      return ORKNN_ERR(kInvalidContext, "context is 0 (only rknn_create_mem2 with RKNN_MEM_FLAG_ALLOC_NO_CONTEXT takes none)");
    if (ctx != 0 && !contexts().get(static_cast<uint64_t>(ctx)) && !orknn::is_live_matmul_handle(static_cast<uint64_t>(ctx)))
      return ORKNN_ERR(kInvalidContext, "invalid context handle 0x%llx", static_cast<unsigned long long>(ctx));
    return body(&mem);
  });
  return mem;
}

}  // namespace

extern "C" {

int rknn_init(rknn_context* context, void* model, uint32_t size, uint32_t flag, rknn_init_extend* extend) {
  return guarded("rknn_init", [&]() -> Status {
    if (!context) return ORKNN_ERR(kInvalidParam, "context pointer is NULL");
    *context = 0;
    if (!model) return ORKNN_ERR(kInvalidParam, "model is NULL (pass a model buffer, or a file path with size 0)");
    if (flag & ~kSupportedFlags)
      return ORKNN_ERR(kUnimplemented, "flags 0x%x are not supported yet in OpenRKNN (supported: 0x%x)",
                       flag & ~kSupportedFlags, kSupportedFlags);
    std::shared_ptr<const orknn::Model> m;
    ORKNN_RETURN_IF_ERROR(load_init_model(model, size, flag, extend, &m));
    std::unique_ptr<Context> ctx;
    ORKNN_RETURN_IF_ERROR(Context::create(std::move(m), flag, &ctx));
    *context = static_cast<rknn_context>(contexts().add(std::move(ctx)));
    return Status::Ok();
  });
}

int rknn_destroy(rknn_context context) {
  return guarded("rknn_destroy", [&]() -> Status {
    auto e = contexts().remove(static_cast<uint64_t>(context));
    if (!e) return ORKNN_ERR(kInvalidContext, "invalid context handle 0x%llx", static_cast<unsigned long long>(context));
    std::lock_guard<std::mutex> lock(e->mu);  // waits for a call in progress on another thread
    e->obj.reset();
    // Zero-copy memory the client did not destroy goes with its context (the vendor guide, section 3.1.3).
    int leftover = orknn::tensor_mem_destroy_all(static_cast<uint64_t>(context));
    if (leftover > 0) ORKNN_LOGW("rknn_destroy: freed %d tensor mem(s) not destroyed with rknn_destroy_mem", leftover);
    return Status::Ok();
  });
}

int rknn_query(rknn_context context, rknn_query_cmd cmd, void* info, uint32_t size) {
  return with_context("rknn_query", context, [&](Context& c) -> Status {
    if (!info) return ORKNN_ERR(kInvalidParam, "rknn_query: info is NULL");
    return c.query(orknn::raw_enum(cmd), info, size);
  });
}

int rknn_inputs_set(rknn_context context, uint32_t n_inputs, rknn_input inputs[]) {
  return with_context("rknn_inputs_set", context, [&](Context& c) -> Status {
    if (!inputs) return ORKNN_ERR(kInvalidParam, "rknn_inputs_set: inputs is NULL");
    return c.inputs_set(n_inputs, inputs);
  });
}

int rknn_run(rknn_context context, rknn_run_extend* extend) {
  int callback_code = 0;  // a custom operator callback's own error code, returned as is
  int rc = with_context("rknn_run", context, [&](Context& c) -> Status {
    // non_block is accepted: this runtime always completes the run before returning.
    Status st = c.run();
    if (st.ok() && extend) extend->frame_id = c.last_frame_id();
    if (!st.ok()) callback_code = c.custom_op_error_code();
    return st;
  });
  return rc != RKNN_SUCC && callback_code != 0 ? callback_code : rc;
}

int rknn_outputs_get(rknn_context context, uint32_t n_outputs, rknn_output outputs[], rknn_output_extend* extend) {
  return with_context("rknn_outputs_get", context, [&](Context& c) -> Status {
    if (!outputs) return ORKNN_ERR(kInvalidParam, "rknn_outputs_get: outputs is NULL");
    Status st = c.outputs_get(n_outputs, outputs);
    if (st.ok() && extend) extend->frame_id = c.delivered_frame_id();
    return st;
  });
}

int rknn_outputs_release(rknn_context context, uint32_t n_outputs, rknn_output outputs[]) {
  return with_context("rknn_outputs_release", context, [&](Context& c) -> Status {
    if (!outputs) return ORKNN_ERR(kInvalidParam, "rknn_outputs_release: outputs is NULL");
    return c.outputs_release(n_outputs, outputs);
  });
}

int rknn_set_core_mask(rknn_context context, rknn_core_mask core_mask) {
  return with_context("rknn_set_core_mask", context, [&](Context& c) { return c.set_core_mask(orknn::raw_enum(core_mask)); });
}

// ---- Zero-copy memory (docs/api-contract.md §1.4, §4.4; runtime/tensor_mem) ----

rknn_tensor_mem* rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr, void* virt_addr, uint32_t size) {
  return create_mem_guarded("rknn_create_mem_from_phys", ctx, false, [&](rknn_tensor_mem** out) {
    return orknn::tensor_mem_from_phys(static_cast<uint64_t>(ctx), phys_addr, virt_addr, size, out);
  });
}

rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void* virt_addr, uint32_t size, int32_t offset) {
  return create_mem_guarded("rknn_create_mem_from_fd", ctx, false, [&](rknn_tensor_mem** out) {
    return orknn::tensor_mem_from_fd(static_cast<uint64_t>(ctx), fd, virt_addr, size, offset, out);
  });
}

rknn_tensor_mem* rknn_create_mem_from_mb_blk(rknn_context ctx, void* mb_blk, int32_t offset) {
  ORKNN_LOGE("rknn_create_mem_from_mb_blk: MB blocks exist only on RV1106/RV1103 boards; not supported");
  return nullptr;
}

rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size) {
  return create_mem_guarded("rknn_create_mem", ctx, false, [&](rknn_tensor_mem** out) {
    return orknn::tensor_mem_alloc(static_cast<uint64_t>(ctx), size, out);
  });
}

rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags) {
  const bool no_context = (alloc_flags & RKNN_MEM_FLAG_ALLOC_NO_CONTEXT) != 0;
  return create_mem_guarded("rknn_create_mem2", ctx, no_context, [&](rknn_tensor_mem** out) -> Status {
    // Cacheability and SRAM are hints for a device; all our memory is ordinary cached CPU memory.
    const uint64_t known = RKNN_FLAG_MEMORY_FLAGS_CACHEABLE | RKNN_FLAG_MEMORY_FLAGS_NON_CACHEABLE |
                           RKNN_FLAG_MEMORY_FLAGS_TRY_ALLOC_SRAM | RKNN_MEM_FLAG_ALLOC_NO_CONTEXT;
    if (alloc_flags & ~known)
      return ORKNN_ERR(kInvalidParam, "unknown alloc_flags bits 0x%llx", static_cast<unsigned long long>(alloc_flags & ~known));
    if ((alloc_flags & RKNN_FLAG_MEMORY_FLAGS_CACHEABLE) && (alloc_flags & RKNN_FLAG_MEMORY_FLAGS_NON_CACHEABLE))
      return ORKNN_ERR(kInvalidParam, "alloc_flags asks for both CACHEABLE and NON_CACHEABLE");
    return orknn::tensor_mem_alloc(no_context ? 0 : static_cast<uint64_t>(ctx), size, out);
  });
}

int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return guarded("rknn_destroy_mem", [&]() -> Status {
    if (ctx != 0 && !contexts().get(static_cast<uint64_t>(ctx)) && !orknn::is_live_matmul_handle(static_cast<uint64_t>(ctx)))
      return ORKNN_ERR(kInvalidContext, "invalid context handle 0x%llx", static_cast<unsigned long long>(ctx));
    return orknn::tensor_mem_destroy(static_cast<uint64_t>(ctx), mem);
  });
}

int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem* mem, rknn_tensor_attr* attr) {
  return with_context("rknn_set_io_mem", ctx, [&](Context& c) -> Status {
    if (!mem) return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: mem is NULL");
    if (!attr) return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: attr is NULL");
    return c.set_io_mem(mem, attr);
  });
}

int rknn_mem_sync(rknn_context context, rknn_tensor_mem* mem, rknn_mem_sync_mode mode) {
  return with_context("rknn_mem_sync", context, [&](Context&) -> Status {
    if (!mem) return ORKNN_ERR(kInvalidParam, "rknn_mem_sync: mem is NULL");
    if (!orknn::tensor_mem_serial(mem))
      return ORKNN_ERR(kInvalidParam, "rknn_mem_sync: mem %p was not created by rknn_create_mem* or was destroyed",
                       static_cast<void*>(mem));
    const int m = orknn::raw_enum(mode);
    if (m != RKNN_MEMORY_SYNC_TO_DEVICE && m != RKNN_MEMORY_SYNC_FROM_DEVICE && m != RKNN_MEMORY_SYNC_BIDIRECTIONAL)
      return ORKNN_ERR(kInvalidParam, "rknn_mem_sync: mode %d is not a rknn_mem_sync_mode", m);
    return Status::Ok();  // CPU memory is always coherent with the CPU "device"
  });
}

// ---- Contexts, threads, client-provided memory (docs/decisions.md "Contexts and init flags") ----

int rknn_dup_context(rknn_context* context_in, rknn_context* context_out) {
  return guarded("rknn_dup_context", [&]() -> Status {
    if (!context_in || !context_out) return ORKNN_ERR(kInvalidParam, "context_in or context_out is NULL");
    const rknn_context in = *context_in;  // read first: the two pointers may be the same
    *context_out = 0;
    auto e = contexts().get(static_cast<uint64_t>(in));
    if (!e) return ORKNN_ERR(kInvalidContext, "invalid context handle 0x%llx", static_cast<unsigned long long>(in));
    std::unique_ptr<Context> dup;
    {
      std::lock_guard<std::mutex> lock(e->mu);
      if (!e->obj) return ORKNN_ERR(kInvalidContext, "context 0x%llx was destroyed", static_cast<unsigned long long>(in));
      ORKNN_RETURN_IF_ERROR(e->obj->dup(&dup));
    }
    *context_out = static_cast<rknn_context>(contexts().add(std::move(dup)));
    return Status::Ok();
  });
}

int rknn_set_batch_core_num(rknn_context context, int core_num) {
  return with_context("rknn_set_batch_core_num", context, [&](Context& c) { return c.set_batch_core_num(core_num); });
}

// Runs are synchronous (rknn_run returns when the frame is done), so there is never anything to
// wait for: report the last frame's id.
int rknn_wait(rknn_context context, rknn_run_extend* extend) {
  return with_context("rknn_wait", context, [&](Context& c) -> Status {
    if (extend) extend->frame_id = c.last_frame_id();
    return Status::Ok();
  });
}

int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return with_context("rknn_set_weight_mem", ctx, [&](Context& c) -> Status {
    if (!mem) return ORKNN_ERR(kInvalidParam, "rknn_set_weight_mem: mem is NULL");
    return c.set_weight_mem(mem);
  });
}

int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return with_context("rknn_set_internal_mem", ctx, [&](Context& c) -> Status {
    if (!mem) return ORKNN_ERR(kInvalidParam, "rknn_set_internal_mem: mem is NULL");
    return c.set_internal_mem(mem);
  });
}

// Dynamic shapes (docs/api-contract.md §4.4; docs/decisions.md "Dynamic shapes").
int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs, rknn_tensor_attr attr[]) {
  return with_context("rknn_set_input_shapes", ctx, [&](Context& c) { return c.set_input_shapes(n_inputs, attr); });
}

// Deprecated (one input; the others keep their active shapes).
int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr* attr) {
  return with_context("rknn_set_input_shape", ctx, [&](Context& c) { return c.set_input_shape(attr); });
}

// ---- Not implemented in this version (README status table). Each logs one line and fails. ----


// The rknn_matmul_* entry points are in rknn_matmul_api.cc.

int rknn_register_custom_ops(rknn_context ctx, rknn_custom_op* op, uint32_t custom_op_num) {
  int callback_code = 0;  // an init callback's own error code, returned as is
  int rc = with_context("rknn_register_custom_ops", ctx, [&](Context& c) -> Status {
    Status st = c.register_custom_ops(op, custom_op_num);
    if (!st.ok()) callback_code = c.custom_op_error_code();
    return st;
  });
  return rc != RKNN_SUCC && callback_code != 0 ? callback_code : rc;
}
void rknn_custom_op_get_op_attr(rknn_custom_op_context* op_ctx, const char* attr_name, rknn_custom_op_attr* op_attr) {
  try {
    orknn::custom_op_get_attr(op_ctx, attr_name, op_attr);
  } catch (...) {
    ORKNN_LOGE("rknn_custom_op_get_op_attr: internal error");
  }
}

}  // extern "C"
