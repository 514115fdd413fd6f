#include "common/threads.h"

#include <dirent.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace orknn {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The cgroup v2 directory of this process ("0::/path"), or "" under cgroup v1 only.
std::string cgroup_v2_dir() {
  std::istringstream lines(read_file("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  return "";
}

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Sum over this process's threads of the time they spent runnable but waiting for a CPU
// (/proc/self/task/*/schedstat, second field), in ns; -1 when the kernel does not report it.
int64_t process_run_delay_ns() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int64_t total = 0;
  bool any = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/task/") + e->d_name + "/schedstat";
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      unsigned long long on_cpu = 0, delay = 0;
      if (std::fscanf(f, "%llu %llu", &on_cpu, &delay) == 2) {
        total += static_cast<int64_t>(delay);
        any = true;
      }
      std::fclose(f);
    }
  }
  closedir(d);
  return any ? total : -1;
}

// Process-wide state of the runs.
std::atomic<int> g_active_runs{0};
std::atomic<int64_t> g_contended_until_ns{0};  // runs before this go sequential
std::atomic<int64_t> g_next_probe_ns{0};       // the first run with threads after this measures
std::atomic<int64_t> g_backoff_ns{0};          // how long the last contention sent runs sequential
std::atomic<int> g_forced{0};                  // RunThreads::ForceContended

constexpr int64_t kProbeEveryNs = 100'000'000;       // a measuring run at most every 100 ms
constexpr int64_t kFirstBackoffNs = 250'000'000;     // contention found: 250 ms sequential,
constexpr int64_t kMaxBackoffNs = 2'000'000'000;     // doubling up to 2 s while it lasts
constexpr double kContendedWaitFraction = 0.2;       // waited for a CPU more than this of the run

}  // namespace

int cgroup_cpu_cap(const std::string& v2, const std::string& v1_quota, const std::string& v1_period) {
  long long quota = -1, period = 0;
  if (!v2.empty()) {
    std::istringstream s(v2);
    std::string q;
    s >> q >> period;
    if (q != "max") quota = std::atoll(q.c_str());
  } else if (!v1_quota.empty()) {
    quota = std::atoll(v1_quota.c_str());
    period = std::atoll(v1_period.c_str());
  }
  if (quota <= 0 || period <= 0) return 0;
  return static_cast<int>((quota + period - 1) / period);
}

int usable_cpus() {
  static const int cpus = [] {
    int n = affinity_cpus();
    const std::string v2 = cgroup_v2_dir();
    const int cap = cgroup_cpu_cap(v2.empty() ? "" : read_file(v2 + "/cpu.max"),
                                   read_file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
                                   read_file("/sys/fs/cgroup/cpu/cpu.cfs_period_us"));
    if (cap > 0) n = std::min(n, cap);
    return std::max(1, n);
  }();
  return cpus;
}

RunThreads::RunThreads(int planned) : planned_(std::max(1, planned)), threads_(planned_) {
  const int active = g_active_runs.fetch_add(1) + 1;
  if (planned_ <= 1) return;
  const int64_t now = now_ns();
  if (g_forced.load() > 0 || usable_cpus() - (active - 1) < planned_ || now < g_contended_until_ns.load()) {
    threads_ = 1;
  } else if (now >= g_next_probe_ns.load()) {
    g_next_probe_ns.store(now + kProbeEveryNs);
    start_delay_ns_ = process_run_delay_ns();
    probing_ = start_delay_ns_ >= 0;
    start_ns_ = now;
  }
  if (threads_ == 1) {
    saved_levels_ = omp_get_max_active_levels();
    omp_set_max_active_levels(0);  // this thread's teams only (a per-thread OpenMP setting)
  }
}

RunThreads::~RunThreads() {
  if (saved_levels_ >= 0) omp_set_max_active_levels(saved_levels_);
  g_active_runs.fetch_sub(1);
  if (!probing_) return;
  const int64_t now = now_ns(), delay = process_run_delay_ns();
  if (delay < 0 || now <= start_ns_) return;
  if (static_cast<double>(delay - start_delay_ns_) > kContendedWaitFraction * static_cast<double>(now - start_ns_)) {
    const int64_t backoff = std::min(kMaxBackoffNs, std::max(kFirstBackoffNs, 2 * g_backoff_ns.load()));
    g_backoff_ns.store(backoff);
    g_contended_until_ns.store(now + backoff);
    g_next_probe_ns.store(now + backoff);
  } else {
    g_backoff_ns.store(0);
  }
}

RunThreads::ForceContended::ForceContended() { g_forced.fetch_add(1); }
RunThreads::ForceContended::~ForceContended() { g_forced.fetch_sub(1); }

}  // namespace orknn
