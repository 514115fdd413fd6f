// How many threads the runtime's runs use (docs/decisions.md "Threads"): the CPUs this process may
// use, and one run's share of them when other runs or other processes are using CPUs too.
//
// A context's kernels are prepared for its thread count (oneDNN fixes a primitive's work split
// when it builds it). A run planned for several threads that finds too few CPUs free runs a
// second executor of the same graph, prepared for one thread, instead (runtime/context.h): it goes
// single-threaded when
//   - the runs of this process already in progress leave it fewer CPUs than it planned for, or
//   - the CPUs were found taken: a run with more than one thread measures, every so often, how
//     long the process's threads waited for a CPU (the kernel's per-thread run_delay); when they
//     waited more than a fifth of the run, the runs of the next quarter to two seconds (doubling
//     while it lasts) go single-threaded instead of waiting at barriers for a CPU someone else
//     holds.
// OPENRKNN_BUSY_HOST=1 makes every run planned for several threads single-threaded, =0 never
// (tests, and clients that want either behaviour whatever the host does).
#pragma once
#include <cstdint>
#include <string>

namespace orknn {

// CPUs this process may run on: its affinity mask, capped by a cgroup CPU quota (v2 cpu.max or
// v1 cpu.cfs_quota_us / cpu.cfs_period_us), at least 1. Read once per process.
int usable_cpus();
// The cap a cgroup quota puts on the CPUs: ceil(quota / period), or 0 for none. `v2` is the
// content of cpu.max ("max 100000" or "150000 100000"); else v1's quota and period files.
int cgroup_cpu_cap(const std::string& v2, const std::string& v1_quota, const std::string& v1_period);

// One run's threads, decided when it is constructed before a run planned for `planned` threads;
// a run with threads may measure the host meanwhile, until it is destroyed after the run.
class RunThreads {
 public:
  explicit RunThreads(int planned);
  ~RunThreads();
  RunThreads(const RunThreads&) = delete;
  RunThreads& operator=(const RunThreads&) = delete;
  int threads() const { return threads_; }  // `planned`, or 1

 private:
  int threads_ = 1;
  bool probing_ = false;
  int64_t start_ns_ = 0;
  int64_t start_delay_ns_ = 0;
};

}  // namespace orknn
