// Zero-copy tensor memory (rknn_tensor_mem, docs/architecture.md "Memory"): real CPU memory with a real file
// descriptor (memfd), or wrappers around the client's fd / physical memory. A process-wide registry
// records which handle (context, or 0 for RKNN_MEM_FLAG_ALLOC_NO_CONTEXT) created each mem, so
// destroy_mem can refuse unknown pointers and rknn_destroy can free what a client left behind.
#pragma once
#include <cstdint>

#include "common/status.h"
#include "rknn_api.h"

namespace orknn {

// New memfd-backed, shared-mapped buffer of `size` bytes (flags ALLOC_INSIDE, offset 0).
Status tensor_mem_alloc(uint64_t owner, uint64_t size, rknn_tensor_mem** out);
// Wraps fd memory: maps [0, offset + size) of `fd` when virt is NULL (virt_addr = mapping start, the
// data starts at virt_addr + offset), else records `virt` as given. flags FROM_FD.
Status tensor_mem_from_fd(uint64_t owner, int32_t fd, void* virt, uint32_t size, int32_t offset, rknn_tensor_mem** out);
// Wraps client memory at `virt`, recording `phys`. flags FROM_PHYS.
Status tensor_mem_from_phys(uint64_t owner, uint64_t phys, void* virt, uint32_t size, rknn_tensor_mem** out);
// Frees a mem created through `owner` (or with no context): the struct always, plus munmap/close of
// what we mapped or allocated. Error if `mem` is not a live mem of that owner.
Status tensor_mem_destroy(uint64_t owner, rknn_tensor_mem* mem);
// Frees every mem still owned by `owner` (rknn_destroy). Returns how many were freed.
int tensor_mem_destroy_all(uint64_t owner);
// Serial number of a live mem (unique for the process lifetime), 0 if `mem` is not live. Bindings
// store it so that a destroyed (and possibly reallocated) mem is never written through.
uint64_t tensor_mem_serial(const rknn_tensor_mem* mem);

}  // namespace orknn
