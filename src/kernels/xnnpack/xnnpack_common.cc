#include "kernels/xnnpack/xnnpack_common.h"

#include <map>
#include <mutex>

#include "common/log.h"

namespace orknn::xnnpack {

bool available() {
  static const bool ok = [] {
    const xnn_status s = xnn_initialize(nullptr);  // the default allocator
    if (s != xnn_status_success)
      ORKNN_LOGD("XNNPACK is not available on this CPU (xnn_initialize: %d): its kernels are not used", int(s));
    return s == xnn_status_success;
  }();
  return ok;
}

pthreadpool_t thread_pool(int threads) {
  if (threads <= 1) return nullptr;
  static std::mutex mu;
  static std::map<int, pthreadpool_t>* pools = new std::map<int, pthreadpool_t>();  // kept to the end
  std::lock_guard<std::mutex> lock(mu);
  pthreadpool_t& pool = (*pools)[threads];
  if (!pool) pool = pthreadpool_create(static_cast<size_t>(threads));
  return pool;  // nullptr if the threads could not be made: XNNPACK then runs on the caller
}

}  // namespace orknn::xnnpack
