// Op identities and the per-op definitions (attribute normalisation and shape/dtype inference).
#pragma once
#include <cstdint>
#include <string>

#include "common/status.h"

namespace orknn {

enum class OpId : uint16_t {
#define OP(name, id) name = id,
#include "ops/op_list.inc"
#undef OP
};

struct Graph;
struct Node;

// Called by the converter for each node once its inputs' shapes are known (and after every graph
// pass that changes a node). It must:
//  - validate the attributes and input count/dtypes, returning kInvalidModel with a message that
//    names the op and the problem;
//  - normalise: fill defaulted attributes explicitly, resolve auto_pad into pads, and move constant
//    "parameter" inputs (axes, pads, shape, scales, ...) into attributes (then set that input to -1);
//  - set the output tensors' shape and dtype.
// The runtime calls it too (graph verifier): on a normalised node it must leave attributes unchanged.
using InferFn = Status (*)(Graph& g, Node& n);

struct OpDef {
  OpId id;
  const char* name;
  InferFn infer;
};

const OpDef* find_op(OpId id);                // nullptr if the id is not in op_list.inc
const OpDef* find_op(const std::string& name);  // by ONNX op type
const char* op_name(OpId id);
// Multiply-accumulates of one run of n after infer (Conv, ConvTranspose, Gemm, MatMul; 0 for the
// other ops): the per-layer report's GOPS (RKNN_QUERY_PERF_DETAIL, bench/perf_detail --gops).
int64_t node_macs(const Graph& g, const Node& n);
// True when every element of the op's outputs is a copy of an element of its inputs (data
// movement, maximum/minimum selections, Relu): in fp16 mode, outputs of fp16-valued activations
// are fp16 values already and need no rounding pass.
bool op_copies_input_values(OpId id);
int op_count();
const OpDef* op_at(int i);

// Every op declares its infer function here; the table in op.cc is generated from op_list.inc.
// Declared weak so that the op table links while an op is being written; tests/ops asserts that
// every op in the list has an infer function and a reference kernel.
#define OP(name, id) Status infer_##name(Graph& g, Node& n) __attribute__((weak));
#include "ops/op_list.inc"
#undef OP

}  // namespace orknn
