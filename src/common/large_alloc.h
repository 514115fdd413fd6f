// Large, long-lived buffers (the model file's bytes, the activation arena, packed weights) backed
// by transparent huge pages where the kernel offers them.
//
// Why: first-touch page faults dominate rknn_init on the hosts we measured (docs/benchmarks.md
// "Load time, memory and allocations"): reading a 100 MB model into ordinary heap memory costs one
// fault per 4 KiB page, ~340 ms in our VM, against ~17 ms for the same read into a 2 MiB-aligned
// anonymous mapping advised MADV_HUGEPAGE and pre-faulted with MADV_POPULATE_WRITE. Both advice
// calls are hints: on kernels or configurations without them (THP "never", kernels < 5.14) the
// memory is ordinary anonymous memory and everything still works.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace orknn {

// Zero-filled memory of at least `bytes` bytes (0 is allowed), 64-byte aligned; nullptr when out
// of memory. Requests of 2 MiB and more get a huge-page-aligned anonymous mapping, pre-faulted
// when `populate` is true (use it when the whole buffer is written right away); smaller ones come
// from operator new. Release with free_large(p, bytes) using the same `bytes`.
void* alloc_large(size_t bytes, bool populate);
void free_large(void* p, size_t bytes);

// alloc_large as a shared_ptr (the deleter knows the size).
std::shared_ptr<uint8_t> alloc_large_shared(size_t bytes, bool populate);

// Many medium-sized long-lived buffers (a kernel's packed weights, its layout-conversion buffers,
// its scratchpad): carved one after the other from shared huge-page chunks (32 MiB, or the request
// rounded up to 2 MiB when larger), so that they too fault in 2 MiB at a time. Zero-filled (chunks
// are fresh mappings and their bytes are never handed out twice); 64-byte aligned; nullptr when out of memory. A chunk is
// unmapped when the last buffer carved from it is released (the shared_ptr's deleter), so the
// memory a destroyed context held goes back once every context sharing its chunks is gone.
// Thread-safe. Pages are faulted in on first touch (no pre-fault): only what is used is resident.
std::shared_ptr<void> alloc_pooled(size_t bytes);

}  // namespace orknn
