// Lets rknn_create_mem*/rknn_destroy_mem (rknn_api.cc) accept matmul context handles. Matmul
// handles carry kMatmulHandleBit, so they never equal a model context handle and the tensor_mem
// registry can key mems by either kind of handle.
#pragma once
#include <cstdint>

namespace orknn {

constexpr uint64_t kMatmulHandleBit = 0x40000000u;  // fits the 32-bit rknn_context of 32-bit ARM

// True while `handle` is a live matmul context (created and not yet destroyed).
bool is_live_matmul_handle(uint64_t handle);

}  // namespace orknn
