// SharedScratch (kernels/kernel.h): one scratch buffer for all kernels of an executor.
#include <algorithm>
#include <cstring>

#include "common/large_alloc.h"
#include "kernels/kernel.h"

namespace orknn {

void request_scratch(const KernelContext& ctx, size_t bytes, std::function<void(void*)> bind,
                     std::vector<ScratchLine>* own) {
  if (ctx.scratch) {
    own->clear();
    ctx.scratch->request(bytes, std::move(bind));
  } else {
    own->assign((bytes + sizeof(ScratchLine) - 1) / sizeof(ScratchLine), ScratchLine{});
    bind(own->data());
  }
}

void SharedScratch::request(size_t bytes, std::function<void(void*)> bind) {
  bytes_ = std::max(bytes_, bytes);
  binds_.push_back(std::move(bind));
}

bool SharedScratch::allocate() {
  if (binds_.empty()) return true;
  if (!buf_ || allocated_bytes_ < bytes_) {
    // Pre-faulted: the first run writes it anyway, and faults there would count against rknn_run.
    void* p = alloc_large(bytes_, /*populate=*/true);
    if (!p) return false;
    if (buf_) free_large(buf_, allocated_bytes_);
    buf_ = p;
    allocated_bytes_ = bytes_;
  }
  for (auto& bind : binds_) bind(buf_);
  return true;
}

void SharedScratch::fill(uint8_t byte) {
  if (buf_) std::memset(buf_, byte, allocated_bytes_);
}

void SharedScratch::reset() {
  binds_.clear();
  if (buf_) free_large(buf_, allocated_bytes_);
  buf_ = nullptr;
  bytes_ = allocated_bytes_ = 0;
}

}  // namespace orknn
