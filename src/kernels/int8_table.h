// The quantized unary ops as 256-entry tables, shared by the table kernels of every backend (x86's
// avx512_int8_table, NEON's neon_int8_table) and x86's INT8 chain fusion: each such op's quantized
// reference kernel (kernels/ref/elementwise.cc) maps an input code to an output code, so running
// it on the 256 codes gives the table, and a lookup is bit-exact with it by construction.
#pragma once
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

// The ops whose quantized reference kernel is a per-element table: X(OPNAME) for each (a backend
// registers its table kernel for every one of them).
#define ORKNN_INT8_TABLE_OPS(X)                                                                                 \
  X(Relu) X(Neg) X(Abs) X(Sign) X(Clip) X(Sigmoid) X(Tanh) X(Erf) X(Exp) X(Log) X(Sqrt) X(Reciprocal) X(Floor) \
  X(Ceil) X(Sin) X(Cos) X(Round) X(Softplus) X(Mish) X(LeakyRelu) X(Elu) X(Selu) X(HardSigmoid) X(HardSwish)   \
  X(Gelu)

// A quantized node of one of those ops a table kernel takes: one data input (parameter inputs such as
// Clip's min/max were moved into attributes by infer), per-tensor parameters, the output of the
// input's shape. The CPU check is the backend's.
bool int8_table_node(const Graph& g, const Node& n);

// The 256 codes 0..255 (as uint8: code c is int8 value int8_t(c)).
struct Int8Codes {
  alignas(64) uint8_t v[256];
  Int8Codes() {
    for (int c = 0; c < 256; ++c) v[c] = static_cast<uint8_t>(c);
  }
  std::vector<uint8_t> values() const { return std::vector<uint8_t>(v, v + 256); }
};

// Runs the reference kernel of `like`'s op and attributes on 256-element int8 tensors: input i
// holds codes in[i] with the quantization parameters of like's input i (nullptr: like's input i is
// a constant, used as it is); `out` gets the 256 results (with like's output parameters). On the
// codes 0..255 that is the op's table.
Status run_ref_on_codes(const Graph& graph, const Node& like, const std::vector<const uint8_t*>& in, uint8_t* out);

// The table of a node int8_table_node accepts: table[c] = the reference's output for code c.
inline Status int8_node_table(const Graph& g, const Node& n, uint8_t* table) {
  const Int8Codes codes;
  return run_ref_on_codes(g, n, {codes.v}, table);
}

}  // namespace orknn
