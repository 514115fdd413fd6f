// The x86 backend's fusions (kernels/kernel.h, FusedGroup), registered by fusions.cc, which also
// holds their graph finders; the fused kernels are in elementwise_avx512.cc and
// binary_int8_avx512.cc. Both are bit-identical to running the nodes one by one, and an executor
// that keeps every tensor (calibration, rknn_inspect) runs them one by one.
//
// SiLU pairs ("avx512_f32_silu"): Sigmoid(x) whose only reader is Mul(x, Sigmoid(x)), the activation of
// efficientnet and the YOLO family. Unfused, the pair makes five passes over memory (the Sigmoid
// reads x and writes s; the Mul reads x and s and writes y); fused, the Mul step reads x and
// writes y, and s is never written. The same vectorised sigmoid as the avx512_f32 kernel, in fp16
// mode rounded to fp16 (as the Sigmoid step's output would be), y = x * s, and y rounded.
//
// INT8 element-wise chains ("avx512_int8_chain"): consecutive quantized nodes that together compute one
// function of one activation x's int8 code, e.g. SiLU (Sigmoid(x), then Mul(x, that):
// efficientnet) or PP-LCNetV3's activation with its learnable affine block (HardSwish(x), Mul by a
// constant, Add a constant: PP-OCRv4 det/rec). Each node is a per-element function of codes with
// per-tensor parameters (an op whose reference kernel is a 256-entry table, or Add/Sub/Mul whose
// other operands are constant scalars or earlier values of the chain), so the chain's output is
// table[x]: one pass instead of one or two per node. The table is made at prepare by running the
// nodes' reference kernels on the 256 codes. A chain may also start with an Add/Sub/Mul of two
// activations (a residual Add, then its Relu: resnet): the last node's step runs that node's
// avx512_int8 kernel on its two operands with the rest of the chain as a table applied to each
// piece of the result while it is in cache.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn {

struct Int8Chain {
  std::vector<int> inputs;  // what the last node's step reads: x, or the binary head's operands
  std::vector<int> nodes;   // in graph order (at least two); the last one's output is the chain's
  bool binary_head = false; // nodes[0] is an Add/Sub/Mul of two activations (see above)
};

// The last node's kernel of a chain; its KernelContext carries the chain's inputs after the
// node's own inputs (FusedGroup::extra_inputs).
std::unique_ptr<Kernel> make_int8_chain_kernel(const Int8Chain& chain);
// The Mul's kernel of a SiLU pair.
std::unique_ptr<Kernel> make_silu_mul_kernel();

// y[i] = table[uint8(x[i])] for i in [begin, end), on the calling thread (AVX-512 VBMI).
void int8_lookup_range(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t begin, int64_t end);

// The avx512_int8 Add/Sub/Mul kernel (binary_int8_avx512.cc) for a chain's binary head: it applies
// `table` (256 bytes, kept by the caller) to its results before they leave the cache.
bool supports_q8_binary(const Graph& g, const Node& n);
std::unique_ptr<Kernel> make_q8_binary_kernel(OpId op, const uint8_t* table);

}  // namespace orknn
