// What the fast INT8 Add/Sub/Mul kernels of every backend share (x86's avx512_int8, NEON's
// neon_int8): the nodes they take, the layouts they run in and how a run is split into blocks
// over the node's threads. A backend brings only the vector loop over the elements of one block,
// which must reproduce kernels/ref/binary_int8.h bit for bit.
#pragma once
#include <cstdint>

#include "graph/ir.h"
#include "kernels/broadcast_blocks.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/binary_int8.h"
#include "ops/quant_infer.h"

namespace orknn {

// Quantized node of two inputs, per-tensor parameters, each input full or block-constant
// (broadcast_blocks); the CPU check is the backend's.
inline bool q8_binary_shapes_ok(const Graph& g, const Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  const Tensor* a = g.input(n, 0);
  const Tensor* b = g.input(n, 1);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!a || !b || !is_q8_per_tensor(*a) || !is_q8_per_tensor(*b) || !is_q8_per_tensor(y)) return false;
  return broadcast_blocks(a->shape, b->shape, y.shape).ok;
}

// NHWC (kUniform, kernel.h) for a 4-D output when each input is
//   - an activation of the output's shape (a constant one stays NCHW in memory): element i of
//     the output comes from element i of it in either layout;
//   - block-constant per image or less ([N,1,1,1], a scalar): the same value over each image's
//     elements in either layout;
//   - block-constant per (image, channel) ([N,C,1,1], [1,C,1,1]: the same bytes in both layouts;
//     squeeze-and-excitation scales): then the run takes the NHWC rows of C elements.
inline BlockedIo q8_binary_blocked_io(const Graph& g, const Node& n) {
  const Shape& y = g.tensor(n.outputs[0]).shape;
  if (y.size() != 4) return BlockedIo::kNone;
  for (size_t i = 0; i < 2; ++i) {
    const Tensor& t = *g.input(n, i);
    int64_t split = -1;
    bool full = false;
    if (!classify_broadcast_operand(t.shape, y, &split, &full)) return BlockedIo::kNone;
    if (full ? t.is_const() : split > 2) return BlockedIo::kNone;
  }
  return BlockedIo::kUniform;
}

// One node's split into blocks (prepare: init; each run: run).
struct Q8BinaryWalk {
  // Below this many elements per thread, waking another thread costs more than it saves.
  static constexpr int64_t kMinElementsPerThread = 65536;

  BroadcastBlocks blocks;
  bool nhwc_rows = false;  // NHWC output with a per-(image, channel) operand: rows of C elements
  int64_t channels = 0, pixels = 0, rows = 0;

  // At prepare: checks the node's parameters, sets *p (the kind's multipliers and zero points) and
  // the split; fails for shapes the kernels do not take (q8_binary_shapes_ok).
  Status init(const KernelContext& ctx, QuantBinaryKind kind, QuantBinaryParams* p) {
    for (size_t i = 0; i < 2; ++i) ORKNN_RETURN_IF_ERROR(check_q8_input(*ctx.graph, *ctx.node, i));
    ORKNN_RETURN_IF_ERROR(check_q8_output(*ctx.graph, *ctx.node, 0));
    *p = quant_binary_params(kind, ctx.in_tensor(0), ctx.in_tensor(1), ctx.out_tensor(0));
    const Shape& y = ctx.out_tensor(0).shape;
    blocks = broadcast_blocks(ctx.in_tensor(0).shape, ctx.in_tensor(1).shape, y);
    if (!blocks.ok)
      return ORKNN_ERR(kFail, "node '%s': fast int8 binary kernel given unsupported shapes", ctx.node->name.c_str());
    int64_t split = -1;
    bool full = true;
    classify_broadcast_operand(ctx.in_tensor(blocks.a_full ? 1 : 0).shape, y, &split, &full);
    nhwc_rows = ctx.output_blocked(0) && !full && split == 2;
    if (nhwc_rows) {
      channels = y[1];
      pixels = y[2] * y[3];
      rows = y[0] * pixels;
    }
    return Status::Ok();
  }

  // Calls block(a, b, y, o, inner, begin, end, a_full, b_full) for elements [begin, end) of block o
  // of `inner` elements (a full input advances per element from a + o * inner, a block-constant
  // one gives its value a[o] to every element), covering the output once, on up to num_threads.
  template <class Block>
  void run(const int8_t* a, const int8_t* b, int8_t* y, int num_threads, Block&& block) const {
    if (nhwc_rows) {  // [N][H*W][C]: each pixel's C elements against that image's C values
      const int64_t c = channels;
      const int nt = threads_for(rows * c, kMinElementsPerThread, num_threads);
      parallel_ranges(rows, nt, [&](int64_t r0, int64_t r1, int) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t full = r * c, vec = (r / pixels) * c;
          block(a + (blocks.a_full ? full : vec), b + (blocks.b_full ? full : vec), y + full, 0, c, 0, c, true, true);
        }
      });
      return;
    }
    const BroadcastBlocks& g = blocks;
    const int nt = threads_for(g.outer * g.inner, kMinElementsPerThread, num_threads);
    if (g.outer >= nt) {  // whole blocks per thread
      parallel_ranges(g.outer, nt, [&](int64_t ob, int64_t oe, int) {
        for (int64_t o = ob; o < oe; ++o) block(a, b, y, o, g.inner, 0, g.inner, g.a_full, g.b_full);
      });
    } else {  // few large blocks: split each block into 16-aligned parts
      parallel_ranges(
          g.inner, nt,
          [&](int64_t ib, int64_t ie, int) {
            for (int64_t o = 0; o < g.outer; ++o) block(a, b, y, o, g.inner, ib, ie, g.a_full, g.b_full);
          },
          16);
    }
  }
};

}  // namespace orknn
