#include "common/large_alloc.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

namespace orknn {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;
// Linux's MADV_POPULATE_WRITE (5.14+); older headers lack the constant, older kernels return EINVAL.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

// Sanitizer builds keep every buffer on the heap, where AddressSanitizer sees overruns past its end
// (a mapping rounded up to 2 MiB would hide them).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kMappings = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kMappings = false;
#else
constexpr bool kMappings = true;
#endif
#else
constexpr bool kMappings = true;
#endif

bool use_mapping(size_t bytes) { return kMappings && bytes >= kHugePage; }
size_t mapped_size(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

void* alloc_large(size_t bytes, bool populate) {
  if (!use_mapping(bytes)) {
    void* p = ::operator new[](bytes > 0 ? bytes : 1, std::align_val_t(64), std::nothrow);
    if (p) std::memset(p, 0, bytes);
    return p;
  }
  const size_t size = mapped_size(bytes);
  // Over-map by one huge page and trim, so that the buffer starts on a 2 MiB boundary (a huge page
  // can only back an aligned 2 MiB range).
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + size + kHugePage;
  if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, size, MADV_HUGEPAGE);                  // a hint; ignored where THP is off
  if (populate) madvise(p, size, MADV_POPULATE_WRITE);  // fault it all in one call; failure is harmless
  return p;
}

void free_large(void* p, size_t bytes) {
  if (!p) return;
  if (!use_mapping(bytes)) {
    ::operator delete[](p, std::align_val_t(64));
    return;
  }
  munmap(p, mapped_size(bytes));
}

std::shared_ptr<uint8_t> alloc_large_shared(size_t bytes, bool populate) {
  uint8_t* p = static_cast<uint8_t*>(alloc_large(bytes, populate));
  if (!p) return nullptr;
  return std::shared_ptr<uint8_t>(p, [bytes](uint8_t* q) { free_large(q, bytes); });
}

namespace {

// One huge-page chunk of alloc_pooled: the next free offset and the number of live buffers in it.
struct PoolChunk {
  uint8_t* base = nullptr;
  size_t size = 0;
  size_t used = 0;
  size_t live = 0;
};

constexpr size_t kPoolChunk = size_t(32) << 20;

std::mutex& pool_mutex() {
  static std::mutex m;
  return m;
}
PoolChunk*& pool_current() {  // the chunk new buffers are carved from (guarded by pool_mutex)
  static PoolChunk* c = nullptr;
  return c;
}

void release_pooled(PoolChunk* c) {
  bool unmap = false;
  {
    std::lock_guard<std::mutex> lock(pool_mutex());
    if (--c->live == 0) {
      if (pool_current() == c) pool_current() = nullptr;
      unmap = true;
    }
  }
  if (unmap) {
    free_large(c->base, c->size);
    delete c;
  }
}

}  // namespace

std::shared_ptr<void> alloc_pooled(size_t bytes) {
  if (!kMappings) {  // one heap block per buffer (see kMappings)
    void* p = alloc_large(bytes, false);
    if (!p) return nullptr;
    try {
      return std::shared_ptr<void>(p, [bytes](void* q) { free_large(q, bytes); });
    } catch (...) {
      free_large(p, bytes);
      return nullptr;
    }
  }
  const size_t need = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  PoolChunk* chunk = nullptr;
  uint8_t* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(pool_mutex());
    PoolChunk*& cur = pool_current();
    if (!cur || cur->size - cur->used < need) {
      // Start a new chunk; the old one stays mapped until its buffers are released.
      auto* fresh = new (std::nothrow) PoolChunk();
      if (!fresh) return nullptr;
      fresh->size = mapped_size(std::max(need, kPoolChunk));
      fresh->base = static_cast<uint8_t*>(alloc_large(fresh->size, /*populate=*/false));
      if (!fresh->base) {
        delete fresh;
        return nullptr;
      }
      if (cur && cur->live == 0) {  // nothing references the old one: drop it now
        free_large(cur->base, cur->size);
        delete cur;
      }
      cur = fresh;
    }
    chunk = cur;
    p = chunk->base + chunk->used;
    chunk->used += need;
    ++chunk->live;
  }
  try {
    return std::shared_ptr<void>(p, [chunk](void*) { release_pooled(chunk); });
  } catch (...) {  // shared_ptr's control block could not be allocated
    release_pooled(chunk);
    return nullptr;
  }
}

}  // namespace orknn
