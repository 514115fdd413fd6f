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
  // The coordinates of `begin` are found once; each next run's offsets by an odometer step (short
  // runs, e.g. 16-element rows of an attention Transpose, spent most of their time dividing).
  template <class F>
  void run_range(F&& f, int64_t begin, int64_t end) const {
    if (empty_ || begin >= end) return;
    int64_t off[kMaxOperands];
    for (int k = 0; k < nops_; ++k) off[k] = base_[static_cast<size_t>(k)];
    if (dims_.size() > kMaxDims) {  // a deep space: each run's coordinates from its index
      for (int64_t o = begin; o < end; ++o) {
        int64_t at[kMaxOperands];
        locate(o, at, nullptr);
        f(static_cast<const int64_t*>(at), inner_strides_.data(), inner_);
      }
      return;
    }
    int64_t coord[kMaxDims];
    locate(begin, off, coord);
    const size_t nops = static_cast<size_t>(nops_);
    for (int64_t o = begin;;) {
      f(static_cast<const int64_t*>(off), inner_strides_.data(), inner_);
      if (++o == end) return;
      for (size_t d = dims_.size(); d-- > 0;) {
        const int64_t* st = &strides_[d * nops];
        if (++coord[d] < dims_[d]) {
          for (size_t k = 0; k < nops; ++k) off[k] += st[k];
          break;
        }
        coord[d] = 0;
        for (size_t k = 0; k < nops; ++k) off[k] -= st[k] * (dims_[d] - 1);
      }
    }
  }

  int64_t inner() const { return inner_; }
  int64_t outer() const { return outer_; }
  size_t collapsed_rank() const { return dims_.size() + 1; }

 private:
  static constexpr size_t kMaxDims = 16;  // outer dims the odometer of run_range keeps

  // Offsets (base included) of outer run o into off, and its coordinates into coord if not null.
  void locate(int64_t o, int64_t* off, int64_t* coord) const {
    for (int k = 0; k < nops_; ++k) off[k] = base_[static_cast<size_t>(k)];
    for (size_t d = dims_.size(); d-- > 0;) {
      const int64_t c = o % dims_[d];
      o /= dims_[d];
      if (coord) coord[d] = c;
      for (int k = 0; k < nops_; ++k) off[k] += c * strides_[d * static_cast<size_t>(nops_) + static_cast<size_t>(k)];
    }
  }

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
// Transpose: the input's element stride along each output dim (output dim d is input dim perm[d]).
std::vector<int64_t> permuted_strides(const Shape& in, const std::vector<int64_t>& perm);

// Copies elements of `elem_size` bytes (1, 2, 4 or 8) along a loop whose operand 0 is the
// destination and operand 1 the source, on up to `threads` threads (copy_threads).
void strided_copy(const StridedLoop& loop, void* dst, const void* src, size_t elem_size, int threads = 1);

// Threads worth a copy of `bytes`. After a layer that ran on several threads, its output sits in
// those cores' caches: a one-thread copy of it is 2-3x slower than on an idle machine (shufflenet
// v2's 90-180 KB Concat/Slice/Transpose: 5 -> 14-16 us at two threads), so copies from 16 KB up
// are split too.
int copy_threads(size_t bytes, int threads);

}  // namespace orknn
