#include "runtime/tensor_mem.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include "common/log.h"

namespace orknn {
namespace {

// What we must undo when a mem is destroyed (the client's own fd/memory is never touched).
struct MemRecord {
  uint64_t owner = 0;
  uint64_t serial = 0;
  void* map_addr = nullptr;  // our mmap, or nullptr
  size_t map_size = 0;
  int own_fd = -1;           // our memfd, or -1
};

struct Registry {
  std::mutex mu;
  uint64_t next_serial = 1;
  std::unordered_map<const rknn_tensor_mem*, MemRecord> mems;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: mems may outlive static destruction order
  return *r;
}

void release(rknn_tensor_mem* mem, const MemRecord& rec) {
  if (rec.map_addr) ::munmap(rec.map_addr, rec.map_size);
  if (rec.own_fd >= 0) ::close(rec.own_fd);
  delete mem;
}

Status add(uint64_t owner, rknn_tensor_mem* mem, MemRecord rec, rknn_tensor_mem** out) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  rec.owner = owner;
  rec.serial = r.next_serial++;
  r.mems[mem] = rec;
  *out = mem;
  return Status::Ok();
}

}  // namespace

Status tensor_mem_alloc(uint64_t owner, uint64_t size, rknn_tensor_mem** out) {
  if (size == 0) return ORKNN_ERR(kInvalidParam, "size is 0");
  if (size > UINT32_MAX)
    return ORKNN_ERR(kInvalidParam, "size %llu does not fit rknn_tensor_mem.size (32 bits)", static_cast<unsigned long long>(size));
  int fd = ::memfd_create("openrknn_tensor_mem", MFD_CLOEXEC);
  if (fd < 0) return ORKNN_ERR(kNoMemory, "memfd_create failed: %s", std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int e = errno;
    ::close(fd);
    return ORKNN_ERR(kNoMemory, "cannot size a %llu-byte buffer: %s", static_cast<unsigned long long>(size), std::strerror(e));
  }
  void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    ::close(fd);
    return ORKNN_ERR(kNoMemory, "cannot map a %llu-byte buffer: %s", static_cast<unsigned long long>(size), std::strerror(e));
  }
  auto* mem = new (std::nothrow) rknn_tensor_mem();
  if (!mem) {
    ::munmap(p, static_cast<size_t>(size));
    ::close(fd);
    return ORKNN_ERR(kNoMemory, "out of memory");
  }
  mem->virt_addr = p;
  mem->phys_addr = 0;
  mem->fd = fd;
  mem->offset = 0;
  mem->size = static_cast<uint32_t>(size);
  mem->flags = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE;
  mem->priv_data = nullptr;
  MemRecord rec;
  rec.map_addr = p;
  rec.map_size = static_cast<size_t>(size);
  rec.own_fd = fd;
  return add(owner, mem, rec, out);
}

Status tensor_mem_from_fd(uint64_t owner, int32_t fd, void* virt, uint32_t size, int32_t offset, rknn_tensor_mem** out) {
  if (fd < 0) return ORKNN_ERR(kInvalidParam, "fd %d is not a file descriptor", fd);
  if (size == 0) return ORKNN_ERR(kInvalidParam, "size is 0");
  if (offset < 0) return ORKNN_ERR(kInvalidParam, "offset %d is negative", offset);
  MemRecord rec;
  void* base = virt;
  if (!base) {
    // mmap needs a page-aligned file offset: map from 0 so virt_addr + offset is the data.
    const size_t len = static_cast<size_t>(offset) + size;
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return ORKNN_ERR(kInvalidParam, "cannot map fd %d (%zu bytes): %s", fd, len, std::strerror(errno));
    rec.map_addr = p;
    rec.map_size = len;
    base = p;
  }
  auto* mem = new (std::nothrow) rknn_tensor_mem();
  if (!mem) {
    if (rec.map_addr) ::munmap(rec.map_addr, rec.map_size);
    return ORKNN_ERR(kNoMemory, "out of memory");
  }
  mem->virt_addr = base;
  mem->fd = fd;
  mem->offset = offset;
  mem->size = size;
  mem->flags = RKNN_TENSOR_MEMORY_FLAGS_FROM_FD;
  return add(owner, mem, rec, out);
}

Status tensor_mem_from_phys(uint64_t owner, uint64_t phys, void* virt, uint32_t size, rknn_tensor_mem** out) {
  if (!virt) return ORKNN_ERR(kInvalidParam, "virt_addr is NULL (a CPU runtime needs the CPU mapping of the memory)");
  if (size == 0) return ORKNN_ERR(kInvalidParam, "size is 0");
  auto* mem = new (std::nothrow) rknn_tensor_mem();
  if (!mem) return ORKNN_ERR(kNoMemory, "out of memory");
  mem->virt_addr = virt;
  mem->phys_addr = phys;
  mem->fd = -1;
  mem->offset = 0;
  mem->size = size;
  mem->flags = RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS;
  return add(owner, mem, MemRecord(), out);
}

Status tensor_mem_destroy(uint64_t owner, rknn_tensor_mem* mem) {
  if (!mem) return ORKNN_ERR(kInvalidParam, "mem is NULL");
  Registry& r = registry();
  MemRecord rec;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.mems.find(mem);
    if (it == r.mems.end())
      return ORKNN_ERR(kInvalidParam, "mem %p was not created by rknn_create_mem* or was already destroyed", static_cast<void*>(mem));
    if (it->second.owner != owner && it->second.owner != 0)
      return ORKNN_ERR(kInvalidParam, "mem %p belongs to another context", static_cast<void*>(mem));
    rec = it->second;
    r.mems.erase(it);
  }
  release(mem, rec);
  return Status::Ok();
}

int tensor_mem_destroy_all(uint64_t owner) {
  Registry& r = registry();
  std::unordered_map<const rknn_tensor_mem*, MemRecord> mine;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto it = r.mems.begin(); it != r.mems.end();) {
      if (it->second.owner == owner) {
        mine.insert(*it);
        it = r.mems.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& kv : mine) release(const_cast<rknn_tensor_mem*>(kv.first), kv.second);
  return static_cast<int>(mine.size());
}

uint64_t tensor_mem_serial(const rknn_tensor_mem* mem) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.mems.find(mem);
  return it == r.mems.end() ? 0 : it->second.serial;
}

}  // namespace orknn
