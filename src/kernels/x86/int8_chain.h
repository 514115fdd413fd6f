// INT8 element-wise chains: consecutive quantized nodes that together compute one function of
// one activation x's int8 code, e.g. SiLU (Sigmoid(x), then Mul(x, that): efficientnet) or
// PP-LCNetV3's activation with its learnable affine block (HardSwish(x), Mul by a constant, Add a
// constant: PP-OCRv4 det/rec). Each node is a per-element function of codes with per-tensor
// parameters (an op whose reference kernel is a 256-entry table, or Add/Sub/Mul whose other
// operands are constant scalars or earlier values of the chain), so the chain's output is
// table[x]: one pass instead of one or two per node. The table is made at prepare by running the
// nodes' reference kernels on the 256 codes, so the result is bit-identical to running them one
// by one.
//
// A chain may also start with an Add/Sub/Mul of two activations (a residual Add, then its Relu:
// resnet): the last node's step runs that node's avx512_int8 kernel on its two operands with the
// rest of the chain as a table applied to each piece of the result while it is in cache.
//
// The runtime's plan (runtime/context.cc) applies it: the last node's step looks x up; the other
// steps do nothing and their outputs, read by nothing but the next node of the chain and not graph
// outputs, are never written. Since the last step reads x (or the head's operands), the arena plan
// keeps them alive until then (chain_reads). The converter's graph runner (calibration, per-layer
// accuracy dumps) reads every tensor and runs the nodes one by one. OPENRKNN_DISABLE_INT8_CHAINS=1
// turns it off (A/B).
#pragma once
#include <memory>
#include <vector>

#include "graph/ir.h"
#include "graph/planner.h"
#include "kernels/kernel.h"

namespace orknn {

struct Int8Chain {
  std::vector<int> inputs;  // what the last node's step reads: x, or the binary head's operands
  std::vector<int> nodes;   // in graph order (at least two); the last one's output is the chain's
  bool binary_head = false; // nodes[0] is an Add/Sub/Mul of two activations (see above)
};

// The chains of g the fused kernel takes (CPU with AVX-512 VBMI); empty when disabled, and with
// OPENRKNN_REF_KERNELS=1.
std::vector<Int8Chain> find_int8_chains(const Graph& g);

// For the arena plan: each chain's last node reads the chain's inputs.
std::vector<ExtraRead> chain_reads(const std::vector<Int8Chain>& chains);

// The last node's kernel. Its KernelContext carries the chain's inputs after the node's own inputs
// (runtime/context.cc appends them).
std::unique_ptr<Kernel> make_int8_chain_kernel(const Int8Chain& chain);

// The other nodes' kernel: does nothing; takes blocked activations as `io` says (the node's own
// kernel's blocked_io), which keeps the chain's tensors in one layout.
std::unique_ptr<Kernel> make_fused_away_kernel(BlockedIo io);

// y[i] = table[uint8(x[i])] for i in [begin, end), on the calling thread (AVX-512 VBMI).
void int8_lookup_range(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t begin, int64_t end);

// The avx512_int8 Add/Sub/Mul kernel (binary_int8_avx512.cc) for a chain's binary head: it applies
// `table` (256 bytes, kept by the caller) to its results before they leave the cache.
bool supports_q8_binary(const Graph& g, const Node& n);
std::unique_ptr<Kernel> make_q8_binary_kernel(OpId op, const uint8_t* table);

}  // namespace orknn
