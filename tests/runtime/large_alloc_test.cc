// common/large_alloc.h: the huge-page buffers behind the model bytes, the arena and the oneDNN
// kernels' own buffers. Checked: zero-filled, 64-byte aligned, writable over the whole requested
// size, pooled buffers disjoint, and memory released without error (a chunk outliving its buffers
// or freed twice would crash here or under the sanitizer builds, which take the heap path).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "common/large_alloc.h"

namespace orknn {
namespace {

bool all_zero(const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return std::all_of(b, b + n, [](uint8_t v) { return v == 0; });
}

TEST(LargeAlloc, ZeroFilledAlignedAndWritable) {
  for (size_t bytes : {size_t(0), size_t(1), size_t(4096), size_t(2) << 20, (size_t(5) << 20) + 3}) {
    for (bool populate : {false, true}) {
      void* p = alloc_large(bytes, populate);
      ASSERT_NE(p, nullptr) << bytes;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
      EXPECT_TRUE(all_zero(p, bytes)) << bytes;
      std::memset(p, 0xA5, bytes);  // the whole requested size is writable
      free_large(p, bytes);
    }
  }
  auto shared = alloc_large_shared(3 << 20, true);
  ASSERT_NE(shared, nullptr);
  EXPECT_TRUE(all_zero(shared.get(), 3 << 20));
}

TEST(LargeAlloc, PooledBuffersAreDisjointZeroedAndReleased) {
  // Sizes like a network's packed weights, past one 32 MiB chunk in total, plus one larger than a chunk.
  std::vector<size_t> sizes;
  for (int i = 0; i < 40; ++i) sizes.push_back(size_t(1000 + 37 * i) * (i % 3 == 0 ? 1024 : 16));
  sizes.push_back(size_t(40) << 20);
  std::vector<std::pair<std::shared_ptr<void>, size_t>> bufs;
  for (size_t n : sizes) {
    std::shared_ptr<void> b = alloc_pooled(n);
    ASSERT_NE(b, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % 64, 0u) << n;
    EXPECT_TRUE(all_zero(b.get(), n)) << n;
    bufs.emplace_back(std::move(b), n);
  }
  // Fill each with its own byte, then check none was overwritten by another (disjoint ranges).
  for (size_t i = 0; i < bufs.size(); ++i) std::memset(bufs[i].first.get(), int(i + 1), bufs[i].second);
  for (size_t i = 0; i < bufs.size(); ++i) {
    const uint8_t* b = static_cast<const uint8_t*>(bufs[i].first.get());
    EXPECT_TRUE(std::all_of(b, b + bufs[i].second, [&](uint8_t v) { return v == uint8_t(i + 1); })) << i;
  }
  // Release in an interleaved order (chunks are unmapped when their last buffer goes), then allocate
  // again: new buffers are zero-filled even though earlier ones were written.
  for (size_t i = 0; i < bufs.size(); i += 2) bufs[i].first.reset();
  for (size_t i = 1; i < bufs.size(); i += 2) bufs[i].first.reset();
  std::shared_ptr<void> again = alloc_pooled(1 << 20);
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(all_zero(again.get(), 1 << 20));
}

}  // namespace
}  // namespace orknn
