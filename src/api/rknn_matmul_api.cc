// extern "C" entry points of rknn_matmul_api.h: the matmul handle table and argument checks; each
// runs in guarded() (api/guarded.h). The API's contract is src/runtime/matmul.cc.
#include "rknn_matmul_api.h"

#include <new>
#include <string>
#include <vector>

#include "api/guarded.h"
#include "api/handles.h"
#include "api/matmul_handles.h"
#include "common/log.h"
#include "runtime/matmul.h"
#include "runtime/tensor_mem.h"

using orknn::MatmulContext;
using orknn::Status;
using orknn::guarded;

namespace {

orknn::HandleTable<MatmulContext>& matmuls() {
  static orknn::HandleTable<MatmulContext> t;
  return t;
}

uint64_t table_id(rknn_matmul_ctx ctx) {
  const uint64_t h = static_cast<uint64_t>(ctx);
  return (h & orknn::kMatmulHandleBit) ? (h & ~orknn::kMatmulHandleBit) : 0;
}

template <typename F>
int with_matmul(const char* fn, rknn_matmul_ctx ctx, F&& body) {
  return guarded(fn, [&]() -> Status {
    auto e = matmuls().get(table_id(ctx));
    if (!e) return ORKNN_ERR(kInvalidContext, "invalid matmul context handle 0x%llx", static_cast<unsigned long long>(ctx));
    std::lock_guard<std::mutex> lock(e->mu);
    if (!e->obj) return ORKNN_ERR(kInvalidContext, "matmul context 0x%llx was destroyed", static_cast<unsigned long long>(ctx));
    return body(*e->obj);
  });
}

Status create_common(rknn_matmul_ctx* ctx, rknn_matmul_info* info, const std::vector<rknn_matmul_shape>& shapes,
                     rknn_matmul_io_attr* attrs_out) {
  std::unique_ptr<MatmulContext> c;
  std::vector<rknn_matmul_io_attr> attrs;
  ORKNN_RETURN_IF_ERROR(MatmulContext::create(*info, shapes, &c, &attrs));
  for (size_t i = 0; i < attrs.size(); ++i) attrs_out[i] = attrs[i];
  *ctx = static_cast<rknn_matmul_ctx>(matmuls().add(std::move(c)) | orknn::kMatmulHandleBit);
  return Status::Ok();
}

}  // namespace

namespace orknn {
bool is_live_matmul_handle(uint64_t handle) {
  if (!(handle & kMatmulHandleBit)) return false;
  return matmuls().get(handle & ~kMatmulHandleBit) != nullptr;
}
}  // namespace orknn

extern "C" {

int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info, rknn_matmul_io_attr* io_attr) {
  return guarded("rknn_matmul_create", [&]() -> Status {
    if (!ctx) return ORKNN_ERR(kInvalidParam, "ctx pointer is NULL");
    *ctx = 0;
    if (!info) return ORKNN_ERR(kInvalidParam, "info is NULL");
    if (!io_attr) return ORKNN_ERR(kInvalidParam, "io_attr is NULL");
    return create_common(ctx, info, {rknn_matmul_shape{info->M, info->K, info->N}}, io_attr);
  });
}

int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                     rknn_matmul_shape dynamic_shapes[], rknn_matmul_io_attr io_attrs[]) {
  return guarded("rknn_matmul_create_dynamic_shape", [&]() -> Status {
    if (!ctx) return ORKNN_ERR(kInvalidParam, "ctx pointer is NULL");
    *ctx = 0;
    if (!info) return ORKNN_ERR(kInvalidParam, "info is NULL");
    if (shape_num <= 0) return ORKNN_ERR(kInvalidParam, "shape_num is %d, must be > 0", shape_num);
    if (!dynamic_shapes || !io_attrs) return ORKNN_ERR(kInvalidParam, "shapes or io_attrs is NULL");
    std::vector<rknn_matmul_shape> shapes(dynamic_shapes, dynamic_shapes + shape_num);
    return create_common(ctx, info, shapes, io_attrs);
  });
}

int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem, rknn_matmul_tensor_attr* attr) {
  return with_matmul("rknn_matmul_set_io_mem", ctx, [&](MatmulContext& c) -> Status {
    if (!mem) return ORKNN_ERR(kInvalidParam, "mem is NULL");
    if (!attr) return ORKNN_ERR(kInvalidParam, "attr is NULL");
    return c.set_io_mem(mem, attr);
  });
}

int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask) {
  return with_matmul("rknn_matmul_set_core_mask", context, [&](MatmulContext& c) -> Status {
    return c.set_core_mask(static_cast<int>(core_mask));
  });
}

int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params* params) {
  return with_matmul("rknn_matmul_set_quant_params", context, [&](MatmulContext& c) -> Status {
    if (!params) return ORKNN_ERR(kInvalidParam, "params is NULL");
    return c.set_quant_params(params);
  });
}

int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params, float* scale) {
  return with_matmul("rknn_matmul_get_quant_params", ctx, [&](MatmulContext& c) -> Status {
    if (!params) return ORKNN_ERR(kInvalidParam, "params is NULL");
    return c.get_quant_params(params, scale);
  });
}

int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape) {
  return with_matmul("rknn_matmul_set_dynamic_shape", ctx, [&](MatmulContext& c) -> Status {
    if (!shape) return ORKNN_ERR(kInvalidParam, "shape is NULL");
    return c.set_dynamic_shape(shape);
  });
}

int rknn_matmul_run(rknn_matmul_ctx ctx) {
  return with_matmul("rknn_matmul_run", ctx, [&](MatmulContext& c) -> Status { return c.run(); });
}

int rknn_matmul_destroy(rknn_matmul_ctx ctx) {
  return guarded("rknn_matmul_destroy", [&]() -> Status {
    auto e = matmuls().remove(table_id(ctx));
    if (!e) return ORKNN_ERR(kInvalidContext, "invalid matmul context handle 0x%llx", static_cast<unsigned long long>(ctx));
    std::lock_guard<std::mutex> lock(e->mu);  // waits for a call in progress on another thread
    e->obj.reset();
    const int leftover = orknn::tensor_mem_destroy_all(static_cast<uint64_t>(ctx));
    if (leftover > 0) ORKNN_LOGW("rknn_matmul_destroy: freed %d tensor mem(s) not destroyed with rknn_destroy_mem", leftover);
    return Status::Ok();
  });
}

int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K, int N, rknn_matmul_info* info) {
  return guarded("rknn_B_normal_layout_to_native_layout", [&]() -> Status {
    if (!info) return ORKNN_ERR(kInvalidParam, "info is NULL");
    return orknn::matmul_b_normal_to_native(orknn::matmul_platform(), B_input, B_output, K, N, *info);
  });
}

}  // extern "C"
