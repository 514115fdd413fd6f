// How many threads the runtime's runs use (docs/decisions.md "Threads"): the CPUs this process may
// use, and one run's share of them when other runs or other processes are using CPUs too.
//
// Kernels run on OpenMP teams (kernels/parallel.h, and oneDNN's own); a context's kernels are
// planned for its thread count. A run gets fewer threads than planned without re-planning by
// making the OpenMP teams of the calling thread inactive for the run (max-active-levels 0, a
// per-thread setting of the OpenMP runtime): every parallel region, oneDNN's included, then runs
// on the caller alone, computing the same bits (the kernels split work by the threads they get).
// A run goes sequential when
//   - the runs of this process already in progress leave it fewer CPUs than it planned for, or
//   - the CPUs were found taken: a run with more than one thread measures, every so often, how
//     long the process's threads waited for a CPU (the kernel's per-thread run_delay); when they
//     waited more than a fifth of the run, the runs of the next quarter to two seconds (doubling
//     while it lasts) go sequential instead of spinning on a CPU someone else holds.
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

// One run's threads: constructed before a run planned for `planned` threads, destroyed after it.
class RunThreads {
 public:
  explicit RunThreads(int planned);
  ~RunThreads();
  RunThreads(const RunThreads&) = delete;
  RunThreads& operator=(const RunThreads&) = delete;
  int threads() const { return threads_; }  // the run's threads: `planned`, or 1

  // Tests: while one lives, runs of this process are taken to find the CPUs taken.
  struct ForceContended {
    ForceContended();
    ~ForceContended();
  };

 private:
  int planned_ = 1;
  int threads_ = 1;
  int saved_levels_ = -1;  // the caller's max-active-levels, when the run made its teams inactive
  bool probing_ = false;
  int64_t start_ns_ = 0;
  int64_t start_delay_ns_ = 0;
};

}  // namespace orknn
