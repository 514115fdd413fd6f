// SiLU (swish) fusion: Sigmoid(x) whose only reader is Mul(x, Sigmoid(x)), the activation of
// efficientnet and the YOLO family. Unfused, the pair makes five passes over memory (the Sigmoid
// reads x and writes s; the Mul reads x and s and writes y); fused, the Mul step reads x and
// writes y, and the Sigmoid step does nothing: s, read by nothing else and not a graph output, is
// never written. Only the runtime's plan (runtime/context.cc) applies it; the converter's graph
// runner (calibration, per-layer accuracy dumps) reads every tensor and runs the nodes one by one.
//
// Results are bit-identical to the unfused avx512_f32 kernels: the same vectorised sigmoid, in
// fp16 mode rounded to fp16 (the runtime's rounding of the Sigmoid output), y = x * s, and y
// rounded. OPENRKNN_DISABLE_SILU_FUSION=1 (read when a context is planned) turns it off (A/B).
// Measured on efficientnet_b0 fp16, one thread: its pairs take 2.3 ms fused against 1.9 + 1.3 ms
// unfused (docs/kernels.md, "SiLU fusion"): the sigmoid's arithmetic, not memory, is most of it.
#pragma once
#include <memory>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn {

struct SiluPair {
  int sigmoid_node = -1;
  int mul_node = -1;
};

// The pairs of g the fused kernels take (float32, same shapes, s not a graph output, CPU with
// AVX-512F); empty when the fusion is disabled.
std::vector<SiluPair> find_silu_pairs(const Graph& g);

// The Sigmoid node's kernel (does nothing: the Mul step computes s) and the Mul node's kernel.
std::unique_ptr<Kernel> make_silu_sigmoid_kernel();
std::unique_ptr<Kernel> make_silu_mul_kernel();

}  // namespace orknn
