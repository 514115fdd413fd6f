#include "common/threads.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace orknn {
namespace {

// A directory entry as getdents64 returns it (the kernel's struct; glibc declares none).
struct linux_dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

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
// Called inside rknn_run, so it allocates nothing: raw system calls on stack buffers.
int64_t process_run_delay_ns() {
  const int dir = ::open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  int64_t total = 0;
  bool any = false;
  alignas(8) char entries[4096];
  for (long n; (n = ::syscall(SYS_getdents64, dir, entries, sizeof(entries))) > 0;) {
    for (long off = 0; off < n;) {
      const auto* e = reinterpret_cast<const struct linux_dirent64*>(entries + off);
      off += e->d_reclen;
      if (e->d_name[0] == '.') continue;
      char path[96];
      if (std::snprintf(path, sizeof(path), "/proc/self/task/%.40s/schedstat", e->d_name) >= static_cast<int>(sizeof(path)))
        continue;
      const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char text[128];
      const ssize_t len = ::read(fd, text, sizeof(text) - 1);
      ::close(fd);
      if (len <= 0) continue;
      text[len] = '\0';
      char* end = nullptr;
      std::strtoull(text, &end, 10);  // time on a CPU
      if (end == text) continue;
      const char* delay = end;
      const unsigned long long ns = std::strtoull(delay, &end, 10);
      if (end == delay) continue;
      total += static_cast<int64_t>(ns);
      any = true;
    }
  }
  ::close(dir);
  return any ? total : -1;
}

// Process-wide state of the runs.
std::atomic<int> g_active_runs{0};
std::atomic<int64_t> g_contended_until_ns{0};  // runs before this go sequential
std::atomic<int64_t> g_next_probe_ns{0};       // the first run with threads after this measures
std::atomic<int64_t> g_backoff_ns{0};          // how long the last contention sent runs sequential

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

RunThreads::RunThreads(int planned) : threads_(std::max(1, planned)) {
  const int active = g_active_runs.fetch_add(1) + 1;
  if (threads_ <= 1) return;
  const char* forced = std::getenv("OPENRKNN_BUSY_HOST");
  if (forced && *forced) {
    if (std::strcmp(forced, "0") != 0) threads_ = 1;
    return;
  }
  const int64_t now = now_ns();
  if (usable_cpus() - (active - 1) < threads_ || now < g_contended_until_ns.load()) {
    threads_ = 1;
  } else if (now >= g_next_probe_ns.load()) {
    g_next_probe_ns.store(now + kProbeEveryNs);
    start_delay_ns_ = process_run_delay_ns();
    probing_ = start_delay_ns_ >= 0;
    start_ns_ = now;
  }
}

RunThreads::~RunThreads() {
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

}  // namespace orknn
