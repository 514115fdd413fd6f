// Thread counts: runtime/context.h threads_for_model (a model of few MACs runs on one thread
// whatever was asked; OPENRKNN_MIN_THREADED_MACS moves the bound, 0: always the threads asked),
// the CPUs this process may use, runs under taken CPUs (common/threads.h) and core masks.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>

#include "common/threads.h"
#include "rknn_api.h"
#include "runtime/context.h"
#include "runtime/platform.h"

namespace orknn {
namespace {

TEST(ThreadsForModel, SmallModelsRunOnOneThread) {
  unsetenv("OPENRKNN_MIN_THREADED_MACS");
  // mobilenet_v3_small 56.5 M MACs, shufflenet_v2_x1_0 145 M; mobilenet_v2 301 M, resnet18 1.8 G.
  EXPECT_EQ(threads_for_model(2, 56'500'000), 1);
  EXPECT_EQ(threads_for_model(4, kMinThreadedMacs - 1), 1);
  EXPECT_EQ(threads_for_model(2, kMinThreadedMacs), 2);
  EXPECT_EQ(threads_for_model(2, 1'800'000'000), 2);
  EXPECT_EQ(threads_for_model(1, 1'800'000'000), 1);
  EXPECT_EQ(threads_for_model(0, 1'800'000'000), 1);
}

TEST(ThreadsForModel, EnvironmentMovesTheBound) {
  setenv("OPENRKNN_MIN_THREADED_MACS", "0", 1);
  EXPECT_EQ(threads_for_model(2, 1000), 2);
  setenv("OPENRKNN_MIN_THREADED_MACS", "5000000000", 1);
  EXPECT_EQ(threads_for_model(2, 1'800'000'000), 1);
  setenv("OPENRKNN_MIN_THREADED_MACS", "many", 1);  // not a number: the default bound
  EXPECT_EQ(threads_for_model(2, 56'500'000), 1);
  EXPECT_EQ(threads_for_model(2, 301'000'000), 2);
  unsetenv("OPENRKNN_MIN_THREADED_MACS");
}

// common/threads.h: a cgroup CPU quota caps the CPUs (v2's cpu.max first, else v1's files).
TEST(UsableCpus, CgroupQuota) {
  EXPECT_EQ(cgroup_cpu_cap("max 100000\n", "", ""), 0);
  EXPECT_EQ(cgroup_cpu_cap("150000 100000\n", "", ""), 2);  // 1.5 CPUs: two threads may run
  EXPECT_EQ(cgroup_cpu_cap("100000 100000", "", ""), 1);
  EXPECT_EQ(cgroup_cpu_cap("", "-1\n", "100000\n"), 0);
  EXPECT_EQ(cgroup_cpu_cap("", "400000\n", "100000\n"), 4);
  EXPECT_EQ(cgroup_cpu_cap("", "", ""), 0);
  EXPECT_EQ(cgroup_cpu_cap("garbage", "", ""), 0);
  const int cpus = usable_cpus();
  EXPECT_GE(cpus, 1);
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_LE(cpus, CPU_COUNT(&set));
}

// A run planned for several threads keeps them unless the host is busy: OPENRKNN_BUSY_HOST=1 takes
// it to be, =0 not (whatever the probes find).
TEST(RunThreads, OneThreadOnABusyHost) {
  EXPECT_EQ(RunThreads(1).threads(), 1);
  setenv("OPENRKNN_BUSY_HOST", "1", 1);
  EXPECT_EQ(RunThreads(2).threads(), 1);
  EXPECT_EQ(RunThreads(1).threads(), 1);
  setenv("OPENRKNN_BUSY_HOST", "0", 1);
  EXPECT_EQ(RunThreads(std::min(2, usable_cpus())).threads(), std::min(2, usable_cpus()));
  {
    // A run already in progress holds a CPU: another one planned for every CPU gets one thread.
    unsetenv("OPENRKNN_BUSY_HOST");
    const RunThreads first(1);
    const int cpus = usable_cpus();
    if (cpus > 1) EXPECT_EQ(RunThreads(cpus).threads(), 1);
  }
  unsetenv("OPENRKNN_BUSY_HOST");
}

// Core masks (runtime/platform.h): each RK3588 core a third of the CPUs, a mask its cores' share,
// all three cores (or ALL) every CPU; AUTO one core.
TEST(CoreMaskThreads, SharesOfTheUsableCpus) {
  const PlatformInfo& rk3588 = *find_platform("rk3588");
  const int cpus = usable_cpus(), share = std::max(1, cpus / 3);
  EXPECT_EQ(core_mask_threads(rk3588, RKNN_NPU_CORE_0), share);
  EXPECT_EQ(core_mask_threads(rk3588, RKNN_NPU_CORE_2), share);
  EXPECT_EQ(core_mask_threads(rk3588, RKNN_NPU_CORE_AUTO), share);
  EXPECT_EQ(core_mask_threads(rk3588, RKNN_NPU_CORE_0_1), std::min(cpus, 2 * share));
  EXPECT_EQ(core_mask_threads(rk3588, RKNN_NPU_CORE_0_1_2), cpus);
  EXPECT_EQ(core_mask_threads(rk3588, RKNN_NPU_CORE_ALL), cpus);
  EXPECT_EQ(core_mask_threads(*find_platform("rk3566"), RKNN_NPU_CORE_AUTO), cpus);  // one core: all CPUs
}

}  // namespace
}  // namespace orknn
