// Binary element-wise ops whose inputs each either have the output's shape ("full") or are
// constant along a trailing block of it ("block-constant": [N,C,1,1] or [C,1,1] against
// [N,C,H,W], or a scalar). The output is then `outer` blocks of `inner` elements, and a
// block-constant input has one element per block. Shared by the fast float and int8 kernels of
// every backend.
#pragma once
#include <cstdint>

#include "graph/ir.h"

namespace orknn {

// How an input of a binary node maps onto the output: the output is `outer` blocks of `inner`
// elements; a full input has one element per output element, a block-constant input one element
// per block (inner = product of the output's dims where the input has 1 or nothing).
struct BroadcastBlocks {
  bool ok = false;
  int64_t outer = 1, inner = 1;
  bool a_full = true, b_full = true;  // per input: full, or one element per block
};

// Right-aligned broadcasting: `in` is full if it has the output's shape; block-constant if it is a
// scalar, or if its dims equal the output's up to some axis and are 1 after it (dims it lacks in
// front must be 1 in the output, else the input would repeat with a period: not a block).
inline bool classify_broadcast_operand(const Shape& in, const Shape& out, int64_t* split_axis, bool* full) {
  if (in == out) {
    *full = true;
    return true;
  }
  if (in.size() > out.size()) return false;
  if (shape_numel(in) == 1) {  // a scalar (any rank of ones): one block
    *full = false;
    *split_axis = 0;
    return true;
  }
  const size_t lead = out.size() - in.size();
  // Leading (missing) dims act as 1: only allowed when every output dim there is 1.
  for (size_t i = 0; i < lead; ++i)
    if (out[i] != 1) return false;
  size_t k = in.size();  // first axis (of `in`) from which every dim is 1
  while (k > 0 && in[k - 1] == 1) --k;
  for (size_t i = 0; i < k; ++i)
    if (in[i] != out[lead + i]) return false;
  *full = false;
  *split_axis = static_cast<int64_t>(lead + k);
  return true;
}

inline BroadcastBlocks broadcast_blocks(const Shape& a, const Shape& b, const Shape& y) {
  BroadcastBlocks geo;
  int64_t split_a = -1, split_b = -1;
  if (!classify_broadcast_operand(a, y, &split_a, &geo.a_full) || !classify_broadcast_operand(b, y, &split_b, &geo.b_full)) return geo;
  if (!geo.a_full && !geo.b_full) return geo;  // both broadcast: left to the reference kernel
  const int64_t split = geo.a_full ? split_b : split_a;
  if (split < 0) {  // both full
    geo.outer = 1;
    geo.inner = shape_numel(y);
  } else {
    geo.outer = 1;
    for (int64_t i = 0; i < split; ++i) geo.outer *= y[static_cast<size_t>(i)];
    geo.inner = 1;
    for (size_t i = static_cast<size_t>(split); i < y.size(); ++i) geo.inner *= y[i];
  }
  geo.ok = true;
  return geo;
}

}  // namespace orknn
