#include "kernels/ref/strided_loop.h"

#include <algorithm>
#include <cassert>

#include "kernels/parallel.h"

namespace orknn {

void StridedLoop::init(const Shape& space, const std::vector<std::vector<int64_t>>& strides,
                       const std::vector<int64_t>& base) {
  nops_ = static_cast<int>(strides.size());
  assert(nops_ <= kMaxOperands && "StridedLoop: run() keeps offsets in a fixed array");
  base_.assign(static_cast<size_t>(nops_), 0);
  for (size_t k = 0; k < base.size() && k < base_.size(); ++k) base_[k] = base[k];
  empty_ = false;
  for (int64_t d : space)
    if (d == 0) empty_ = true;

  // Drop size-1 dimensions and merge neighbours that every operand walks contiguously, so that
  // the innermost run is as long as possible.
  struct Group {
    int64_t size;
    std::vector<int64_t> strides;
  };
  std::vector<Group> groups;  // innermost first
  for (size_t d = space.size(); d-- > 0;) {
    if (space[d] == 1) continue;
    bool merge = !groups.empty();
    if (merge) {
      const Group& g = groups.back();
      for (int k = 0; k < nops_ && merge; ++k)
        merge = strides[static_cast<size_t>(k)][d] == g.strides[static_cast<size_t>(k)] * g.size;
    }
    if (merge) {
      groups.back().size *= space[d];
      continue;
    }
    Group g{space[d], std::vector<int64_t>(static_cast<size_t>(nops_))};
    for (int k = 0; k < nops_; ++k) g.strides[static_cast<size_t>(k)] = strides[static_cast<size_t>(k)][d];
    groups.push_back(std::move(g));
  }

  inner_strides_.assign(static_cast<size_t>(nops_), 0);
  inner_ = 1;
  dims_.clear();
  strides_.clear();
  if (!groups.empty()) {
    inner_ = groups[0].size;
    inner_strides_ = groups[0].strides;
    for (size_t gi = groups.size(); gi-- > 1;) {
      dims_.push_back(groups[gi].size);
      strides_.insert(strides_.end(), groups[gi].strides.begin(), groups[gi].strides.end());
    }
  }
  outer_ = 1;
  for (int64_t d : dims_) outer_ *= d;
}

std::vector<int64_t> dense_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

std::vector<int64_t> permuted_strides(const Shape& in, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> dense = dense_strides(in);
  std::vector<int64_t> r(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) r[d] = dense[static_cast<size_t>(perm[d])];
  return r;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> r(out.size(), 0);
  const std::vector<int64_t> dense = dense_strides(in);
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) r[lead + d] = in[d] == 1 ? 0 : dense[d];
  return r;
}

namespace {
// Elements [begin, end) of the loop's order (outer run, then position in it).
template <typename T>
void copy_typed(const StridedLoop& loop, T* dst, const T* src, int64_t begin, int64_t end) {
  const int64_t inner = loop.inner();
  int64_t o = begin / inner;
  loop.run_range([&](const int64_t* off, const int64_t* st, int64_t n) {
    const int64_t first = std::max<int64_t>(begin - o * n, 0), last = std::min<int64_t>(end - o * n, n);
    ++o;
    T* d = dst + off[0] + first * st[0];
    const T* s = src + off[1] + first * st[1];
    const int64_t so = st[0], ss = st[1];
    n = last - first;
    if (so == 1 && ss == 1) {
      std::memcpy(d, s, static_cast<size_t>(n) * sizeof(T));
    } else if (so == 1 && ss == 0) {
      for (int64_t i = 0; i < n; ++i) d[i] = s[0];
    } else {
      for (int64_t i = 0; i < n; ++i) d[i * so] = s[i * ss];
    }
  }, begin / inner, (end + inner - 1) / inner);
}
}  // namespace

int copy_threads(size_t bytes, int threads) {
  return threads_for(static_cast<int64_t>(bytes), int64_t{16} << 10, threads);
}

void strided_copy(const StridedLoop& loop, void* dst, const void* src, size_t elem_size, int threads) {
  const int64_t count = loop.outer() * loop.inner();
  if (count == 0) return;
  // Parts of whole 64-byte pieces of a dense destination.
  parallel_ranges(count, copy_threads(static_cast<size_t>(count) * elem_size, threads), [&](int64_t b, int64_t e, int) {
    switch (elem_size) {
      case 1: copy_typed(loop, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), b, e); break;
      case 2: copy_typed(loop, static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), b, e); break;
      case 4: copy_typed(loop, static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), b, e); break;
      case 8: copy_typed(loop, static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), b, e); break;
      default: break;
    }
  }, static_cast<int64_t>(64 / std::max<size_t>(1, elem_size)));
}

}  // namespace orknn
