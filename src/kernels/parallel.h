// How the hand-written kernels split a run over threads: one place for the thread count a run is
// worth, the contiguous-range split, and the per-thread scratch slots a kernel sizes at prepare.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace orknn {

// Threads worth waking for `work` units when each should get at least `min_per_thread` (below
// that, waking a thread costs more than it saves): between 1 and num_threads.
inline int threads_for(int64_t work, int64_t min_per_thread, int num_threads) {
  const int64_t by_size = std::max<int64_t>(1, work / std::max<int64_t>(1, min_per_thread));
  return static_cast<int>(std::min<int64_t>(std::max(1, num_threads), by_size));
}

// Element-wise passes (activations, copies, layout conversions): below this many elements per
// thread, waking another thread costs more than it saves.
constexpr int64_t kMinPassElementsPerThread = 16384;

// Per-thread scratch slots a kernel allocates at prepare: the most threads run() may be asked for
// without a new prepare (a core-mask change updates KernelContext::num_threads only).
inline int thread_slots(int requested) { return std::max({1, requested, omp_get_num_procs()}); }

// Calls body(begin, end, part) for up to `threads` contiguous parts of [0, n), each part a whole
// number of `align`-item blocks (the last one may end short), part < threads (a per-thread slot
// index). With one part the body is called directly: no OpenMP region, so a one-thread run wakes
// no thread and makes libgomp allocate nothing.
template <class Body>
void parallel_ranges(int64_t n, int threads, Body&& body, int64_t align = 1) {
  const int64_t blocks = (n + align - 1) / align;
  const int parts = static_cast<int>(std::min<int64_t>(std::max(1, threads), std::max<int64_t>(1, blocks)));
  if (parts <= 1) {
    body(int64_t{0}, n, 0);
    return;
  }
#pragma omp parallel num_threads(parts)
  {
    const int got = omp_get_num_threads(), t = omp_get_thread_num();
    body(std::min(n, blocks * t / got * align), std::min(n, blocks * (t + 1) / got * align), t);
  }
}

// Calls body(job, slot) for every job in [0, jobs) on up to `threads` threads that claim runs of
// `claim` consecutive jobs from a shared counter instead of a split fixed in advance: on a busy
// machine a thread scheduled late finds the work done instead of holding up the others, while
// neighbouring jobs mostly stay on one thread. slot < threads is a per-thread slot index. With one
// thread, a plain loop (no OpenMP region, as above).
template <class Body>
void parallel_claimed(int64_t jobs, int threads, int64_t claim, Body&& body) {
  const int nt = static_cast<int>(std::min<int64_t>(std::max(1, threads), std::max<int64_t>(1, jobs)));
  if (nt <= 1) {
    for (int64_t j = 0; j < jobs; ++j) body(j, 0);
    return;
  }
  claim = std::max<int64_t>(1, claim);
  std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(nt)
  {
    const int slot = omp_get_thread_num();
    for (int64_t j0; (j0 = next.fetch_add(claim, std::memory_order_relaxed)) < jobs;)
      for (int64_t j = j0; j < std::min(jobs, j0 + claim); ++j) body(j, slot);
  }
}

}  // namespace orknn
