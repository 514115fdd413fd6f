// kernels/kernel.h SharedScratch: one buffer for the kernels of a context's executors, sized for the
// largest request, bound to every kernel that asked; a rollback forgets the requests of kernels
// that are gone (an executor whose binding failed), so a later allocation calls none of them.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/kernel.h"

namespace orknn {
namespace {

TEST(SharedScratch, LargestRequestBoundToEveryKernel) {
  SharedScratch s;
  void* a = nullptr;
  void* b = nullptr;
  s.request(100, [&](void* p) { a = p; });
  s.request(5000, [&](void* p) { b = p; });
  ASSERT_TRUE(s.allocate());
  EXPECT_EQ(s.bytes(), 5000u);
  EXPECT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
}

TEST(SharedScratch, RollbackForgetsTheLaterRequests) {
  SharedScratch s;
  int first = 0, gone = 0;
  s.request(64, [&](void*) { ++first; });
  const size_t mark = s.mark();
  s.request(128, [&](void*) { ++gone; });
  s.rollback(mark);
  ASSERT_TRUE(s.allocate());
  EXPECT_EQ(first, 1);
  EXPECT_EQ(gone, 0);
  s.request(1 << 20, [&](void*) {});  // a larger request moves the buffer: every kept kernel is told
  ASSERT_TRUE(s.allocate());
  EXPECT_EQ(first, 2);
  EXPECT_EQ(gone, 0);
}

}  // namespace
}  // namespace orknn
