// Concat's copy geometry and its quantized kernel, shared by the reference kernels
// (kernels/ref/data_movement.cc) and the vectorised INT8 one (kernels/x86/concat_int8_avx512.cc):
// the output is a sequence of pieces (one row of one input each), split over threads as contiguous
// ranges of output elements.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/strided_loop.h"
#include "ops/quant_infer.h"

namespace orknn {

// Concat on the channel axis of 4-D activations also runs blocked (BlockedIo::kUniform: all
// activations, hence no constant input). The copy is the same (outer, row) pattern: in nChw16c
// (float, every channel count a multiple of 16) an input's channel blocks are one contiguous run
// per image, as its channels are in NCHW; in NHWC (INT8) a pixel's channels are the run, so outer
// = N * H * W and a row is the channel count.
inline BlockedIo concat_blocked_io(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1 || n.outputs[0] < 0 || g.tensor(n.outputs[0]).shape.size() != 4) return BlockedIo::kNone;
  if (n.attrs.get_int("axis", 0) != 1) return BlockedIo::kNone;
  for (int t : n.inputs)
    if (t < 0 || g.tensor(t).is_const()) return BlockedIo::kNone;
  return BlockedIo::kUniform;
}

// Sizes around `axis`: outer = product of the dims before it, inner = product after it.
inline void split_dims(const Shape& s, size_t axis, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (size_t d = 0; d < axis; ++d) *outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) *inner *= s[d];
}

// Concat's copy geometry: `outer` runs, each input contributing shape[axis] * inner elements.
inline void concat_dims(const KernelContext& ctx, size_t axis, int64_t* outer, int64_t* inner) {
  const Tensor& out = ctx.out_tensor(0);
  if (ctx.output_blocked(0) && out.dtype == DType::kI8) {  // NHWC
    *outer = out.shape[0] * out.shape[2] * out.shape[3];
    *inner = 1;
    return;
  }
  split_dims(out.shape, axis, outer, inner);
}

// The output is the pieces (o, i), input i's row o, one after another in (o, i) order (rows[i]:
// input i's row length). Calls piece(i, x, y, n) for the part of each piece inside output elements
// [begin, end): n elements from input i's element x to output element y.
template <class Piece>
void concat_pieces(const std::vector<int64_t>& rows, int64_t out_row, int64_t begin, int64_t end, Piece&& piece) {
  for (int64_t o = begin / out_row, at = o * out_row; at < end; ++o) {
    for (size_t i = 0; i < rows.size() && at < end; at += rows[i++]) {
      const int64_t first = std::max(begin, at), last = std::min(end, at + rows[i]);
      if (first < last) piece(i, o * rows[i] + first - at, first, last - first);
    }
  }
}

// Concat's work split over threads: contiguous ranges of whole 64-byte pieces of the output
// (copy_threads).
template <class Range>
void concat_parallel(int64_t count, size_t elem_size, int threads, Range&& range) {
  parallel_ranges(count, copy_threads(static_cast<size_t>(count) * elem_size, threads),
                  [&](int64_t b, int64_t e, int) { range(b, e); }, static_cast<int64_t>(64 / elem_size));
}

// Quantized Concat: an input with the output's parameters is copied, another one requantized,
// y = sat8(rne(float(x - zp_x) * M) + zp_y) with M = s_x / s_y, by
// Requant::run(x, y, n, zp_x, M, zp_y) on n elements (the reference: requantize() per element).
template <class Requant>
class ConcatQ8 : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return concat_blocked_io(g, n); }

  Status prepare(const KernelContext& ctx) override {
    const Graph& g = *ctx.graph;
    const Node& n = *ctx.node;
    ORKNN_RETURN_IF_ERROR(check_q8_output(g, n, 0));
    const Tensor& out = ctx.out_tensor(0);
    const QuantScalar qy = per_tensor(out);
    zp_y_ = qy.zp;
    const size_t axis = static_cast<size_t>(n.attrs.get_int("axis", 0));
    int64_t outer = 0, inner = 0;
    concat_dims(ctx, axis, &outer, &inner);
    out_row_ = out.shape[axis] * inner;
    count_ = outer * out_row_;
    inputs_.clear();
    rows_.clear();
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, i));
      const Tensor& t = ctx.in_tensor(i);
      const QuantScalar qx = per_tensor(t);
      Input in;
      in.copy = same_quant(t.quant, out.quant);
      in.zp = qx.zp;
      in.multiplier = qx.scale / qy.scale;
      inputs_.push_back(in);
      rows_.push_back(t.shape[axis] * inner);
    }
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    if (count_ == 0) return;
    int8_t* dst = ctx.out<int8_t>(0);
    concat_parallel(count_, 1, ctx.num_threads, [&](int64_t b, int64_t e) {
      concat_pieces(rows_, out_row_, b, e, [&](size_t i, int64_t x, int64_t y, int64_t n) {
        const Input& in = inputs_[i];
        const int8_t* s = ctx.in<int8_t>(i) + x;
        int8_t* d = dst + y;
        if (in.copy) std::memcpy(d, s, static_cast<size_t>(n));
        else Requant::run(s, d, n, in.zp, in.multiplier, zp_y_);
      });
    });
  }

 private:
  struct Input {
    bool copy = true;
    int32_t zp = 0;
    float multiplier = 1.f;
  };
  std::vector<Input> inputs_;
  std::vector<int64_t> rows_;  // per input: elements per outer index
  int64_t out_row_ = 0, count_ = 0;
  int32_t zp_y_ = 0;
};

}  // namespace orknn
