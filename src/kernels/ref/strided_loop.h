// Iteration over an index space shared by several operands, each addressing it with its own
// element strides (0 = broadcast along that dimension) and base offset. Broadcasting element-wise
// ops, Transpose, Expand, Tile, Slice and the reductions are all this loop with different strides.
// Built once in Kernel::prepare (it allocates); run() does not allocate.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "graph/ir.h"

namespace orknn {

class StridedLoop {
 public:
  static constexpr int kMaxOperands = 4;

  // `space`: the dimensions iterated. strides[k][d]: element stride of operand k along dimension
  // d. base[k] (optional): element offset of operand k at the origin.
  void init(const Shape& space, const std::vector<std::vector<int64_t>>& strides,
            const std::vector<int64_t>& base = {});

  // Calls f(offsets, inner_strides, len) for every innermost run: operand k's elements are at
  // offsets[k] + i * inner_strides[k] for i in [0, len).
  template <class F>
  void run(F&& f) const {
    run_range(f, 0, outer_);
  }
  // run() over the innermost runs [begin, end) of [0, outer()) only (a thread's share).
  template <class F>
  void run_range(F&& f, int64_t begin, int64_t end) const {
    if (empty_) return;
    int64_t off[kMaxOperands];
    for (int64_t o = begin; o < end; ++o) {
      for (int k = 0; k < nops_; ++k) off[k] = base_[static_cast<size_t>(k)];
      int64_t rem = o;
      for (size_t d = dims_.size(); d-- > 0;) {
        const int64_t c = rem % dims_[d];
        rem /= dims_[d];
        for (int k = 0; k < nops_; ++k) off[k] += c * strides_[d * static_cast<size_t>(nops_) + static_cast<size_t>(k)];
      }
      f(static_cast<const int64_t*>(off), inner_strides_.data(), inner_);
    }
  }

  int64_t inner() const { return inner_; }
  int64_t outer() const { return outer_; }
  size_t collapsed_rank() const { return dims_.size() + 1; }

 private:
  int nops_ = 0;
  bool empty_ = false;
  std::vector<int64_t> dims_;           // collapsed outer dimensions, outermost first
  std::vector<int64_t> strides_;        // [dim * nops + operand]
  std::vector<int64_t> inner_strides_;  // per operand
  std::vector<int64_t> base_;           // per operand
  int64_t inner_ = 1;
  int64_t outer_ = 1;
};

// Strides of `in` broadcast (numpy, right-aligned) to `out`: 0 where `in` has size 1 or no dim.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
std::vector<int64_t> dense_strides(const Shape& shape);

// Copies elements of `elem_size` bytes (1, 2, 4 or 8) along a loop whose operand 0 is the
// destination and operand 1 the source, on up to `threads` threads (copy_threads).
void strided_copy(const StridedLoop& loop, void* dst, const void* src, size_t elem_size, int threads = 1);

// Threads worth a copy of `bytes`. After a layer that ran on several threads, its output sits in
// those cores' caches: a one-thread copy of it is 2-3x slower than on an idle machine (shufflenet
// v2's 90-180 KB Concat/Slice/Transpose: 5 -> 14-16 us at two threads), so copies from 16 KB up
// are split too.
int copy_threads(size_t bytes, int threads);

}  // namespace orknn
