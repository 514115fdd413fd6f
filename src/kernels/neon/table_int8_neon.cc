// NEON kernel of the quantized unary ops, "neon_int8_table" (the ops of ORKNN_INT8_TABLE_OPS:
// Relu, Sigmoid, Tanh, HardSwish, Clip, Exp, ...): the reference kernel's 256-entry table
// (kernels/int8_table.h, made by running the reference kernel on the 256 codes, so bit-exact by
// construction), looked up 16 codes at a time: TBL over the table's first 64 bytes, then TBX over
// each further 64-byte quarter with the index lowered by 64 (TBX leaves a lane whose index is out
// of its 64 bytes unchanged, TBL zeroes it). Element-wise over the bytes, so any layout input and
// output share (kUniform: NHWC between the INT8 convolutions).
#include <arm_neon.h>

#include <cstdint>

#include "kernels/int8_table.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"

namespace orknn {
namespace {

inline uint8x16x4_t load_quarter(const uint8_t* t) {
  return {{vld1q_u8(t), vld1q_u8(t + 16), vld1q_u8(t + 32), vld1q_u8(t + 48)}};
}

// y[i] = table[x[i]] for i in [begin, end).
void lookup_range(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t begin, int64_t end) {
  const uint8x16x4_t t0 = load_quarter(table), t1 = load_quarter(table + 64), t2 = load_quarter(table + 128),
                     t3 = load_quarter(table + 192);
  const uint8x16_t k64 = vdupq_n_u8(64);
  auto lookup16 = [&](uint8x16_t idx) {
    uint8x16_t r = vqtbl4q_u8(t0, idx);
    idx = vsubq_u8(idx, k64);
    r = vqtbx4q_u8(r, t1, idx);
    idx = vsubq_u8(idx, k64);
    r = vqtbx4q_u8(r, t2, idx);
    idx = vsubq_u8(idx, k64);
    return vqtbx4q_u8(r, t3, idx);
  };
  int64_t i = begin;
  for (; i + 32 <= end; i += 32) {  // two independent lookups per step
    const uint8x16_t r0 = lookup16(vld1q_u8(x + i)), r1 = lookup16(vld1q_u8(x + i + 16));
    vst1q_u8(y + i, r0);
    vst1q_u8(y + i + 16, r1);
  }
  for (; i + 16 <= end; i += 16) vst1q_u8(y + i, lookup16(vld1q_u8(x + i)));
  for (; i < end; ++i) y[i] = table[x[i]];
}

class TableQ8Neon : public Kernel {
 public:
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kUniform; }
  Status prepare(const KernelContext& ctx) override { return int8_node_table(*ctx.graph, *ctx.node, table_); }
  void run(const KernelContext& ctx) override {
    const int64_t n = ctx.out_tensor(0).numel();
    const uint8_t* x = ctx.in<uint8_t>(0);
    uint8_t* y = ctx.out<uint8_t>(0);
    const int nt = threads_for(n / 4, kMinPassElementsPerThread, ctx.num_threads);  // bytes: 4x a float pass's
    parallel_ranges(n, nt, [&](int64_t b, int64_t e, int) { lookup_range(table_, x, y, b, e); }, 64);
  }

 private:
  alignas(64) uint8_t table_[256] = {};
};

}  // namespace

#define ORKNN_REGISTER_TABLE_Q8(OPNAME) \
  ORKNN_REGISTER_KERNEL(OPNAME, "neon_int8_table", kPriorityGeneral, int8_table_node, TableQ8Neon);
ORKNN_INT8_TABLE_OPS(ORKNN_REGISTER_TABLE_Q8)
#undef ORKNN_REGISTER_TABLE_Q8

}  // namespace orknn
