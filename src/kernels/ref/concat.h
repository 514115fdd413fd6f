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
// per image, as its channels are in NCHW; in NHWC (INT8, and float32 where the build keeps it so:
// kernel.h blocked_channels_last) a pixel's channels are the run, so outer = N * H * W and a row is
// the channel count.
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
  if (ctx.output_blocked(0) && blocked_channels_last(out.dtype)) {  // NHWC
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

// One Concat node's pieces, set at prepare (concat_dims), and their copy over threads.
struct ConcatGeometry {
  std::vector<int64_t> rows;  // per input: elements per outer index
  int64_t out_row = 0;        // output elements per outer index
  int64_t count = 0;          // output elements

  void init(const KernelContext& ctx) {
    const size_t axis = static_cast<size_t>(ctx.node->attrs.get_int("axis", 0));
    int64_t outer = 0, inner = 0;
    concat_dims(ctx, axis, &outer, &inner);
    rows.clear();
    for (size_t i = 0; i < ctx.node->inputs.size(); ++i) rows.push_back(ctx.in_tensor(i).shape[axis] * inner);
    out_row = ctx.out_tensor(0).shape[axis] * inner;
    count = outer * out_row;
  }

  // Calls piece(i, x, y, n) (concat_pieces) for every piece of the output, split over up to
  // `threads` threads as contiguous ranges of whole 64-byte pieces of the output (copy_threads).
  template <class Piece>
  void for_pieces(size_t elem_size, int threads, Piece&& piece) const {
    if (count == 0) return;
    parallel_ranges(count, copy_threads(static_cast<size_t>(count) * elem_size, threads),
                    [&](int64_t b, int64_t e, int) { concat_pieces(rows, out_row, b, e, piece); },
                    static_cast<int64_t>(64 / elem_size));
  }
};

// A quantized Concat of per-tensor int8 inputs and output: the nodes the vectorised ConcatQ8
// kernels take (their CPU checks are the backends').
inline bool concat_q8_per_tensor_node(const Graph& g, const Node& n) {
  if (!is_quantized_node(g, n)) return false;
  for (int t : n.inputs)
    if (t < 0 || !is_q8_per_tensor(g.tensor(t))) return false;
  return n.outputs.size() == 1 && n.outputs[0] >= 0 && is_q8_per_tensor(g.tensor(n.outputs[0]));
}

// The reference requantization of ConcatQ8: requantize() per element.
struct ScalarRequant {
  static void run(const int8_t* x, int8_t* y, int64_t n, int32_t zp_x, float m, int32_t zp_y) {
    for (int64_t k = 0; k < n; ++k) y[k] = requantize(x[k] - zp_x, m, zp_y);
  }
};

// Quantized Concat: an input with the output's parameters is copied, another one requantized,
// y = sat8(rne(float(x - zp_x) * M) + zp_y) with M = s_x / s_y, by
// Requant::run(x, y, n, zp_x, M, zp_y) on n elements (the reference: ScalarRequant).
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
    geo_.init(ctx);
    inputs_.clear();
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, i));
      const Tensor& t = ctx.in_tensor(i);
      const QuantScalar qx = per_tensor(t);
      Input in;
      in.copy = same_quant(t.quant, out.quant);
      in.zp = qx.zp;
      in.multiplier = qx.scale / qy.scale;
      inputs_.push_back(in);
    }
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    int8_t* dst = ctx.out<int8_t>(0);
    geo_.for_pieces(1, ctx.num_threads, [&](size_t i, int64_t x, int64_t y, int64_t n) {
      const Input& in = inputs_[i];
      const int8_t* s = ctx.in<int8_t>(i) + x;
      int8_t* d = dst + y;
      if (in.copy) std::memcpy(d, s, static_cast<size_t>(n));
      else Requant::run(s, d, n, in.zp, in.multiplier, zp_y_);
    });
  }

 private:
  struct Input {
    bool copy = true;
    int32_t zp = 0;
    float multiplier = 1.f;
  };
  std::vector<Input> inputs_;
  ConcatGeometry geo_;
  int32_t zp_y_ = 0;
};

}  // namespace orknn
