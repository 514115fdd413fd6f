// Handle table for rknn_context values: opaque, non-zero, never reused, checked on every call.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace orknn {

template <typename T>
class HandleTable {
 public:
  struct Entry {
    std::mutex mu;  // serialises calls on one handle (concurrent calls on one context wait)
    std::unique_ptr<T> obj;
  };

  uint64_t add(std::unique_ptr<T> obj) {
    auto e = std::make_shared<Entry>();
    e->obj = std::move(obj);
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t h = next_++;
    map_[h] = std::move(e);
    return h;
  }
  std::shared_ptr<Entry> get(uint64_t h) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(h);
    return it == map_.end() ? nullptr : it->second;
  }
  std::shared_ptr<Entry> remove(uint64_t h) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(h);
    if (it == map_.end()) return nullptr;
    auto e = std::move(it->second);
    map_.erase(it);
    return e;
  }

 private:
  std::mutex mu_;
  uint64_t next_ = 0x10001;  // non-zero: clients test `if (ctx > 0)`
  std::unordered_map<uint64_t, std::shared_ptr<Entry>> map_;
};

}  // namespace orknn
