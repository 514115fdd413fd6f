// runtime/context.h threads_for_model: a model of few MACs runs on one thread whatever was asked;
// OPENRKNN_MIN_THREADED_MACS moves the bound (0: always the threads asked).
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/context.h"

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

}  // namespace
}  // namespace orknn
