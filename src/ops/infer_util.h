// Helpers shared by the infer functions of src/ops/: input/output validation, reading constant
// parameter inputs, moving them into attributes, axis normalisation and numpy broadcasting.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "ops/op.h"

namespace orknn {

// kInvalidModel error naming the op and the node: "<Op> node '<name>': <message>".
#define ORKNN_NODE_ERR(node, fmt, ...) \
  ORKNN_ERR(kInvalidModel, "%s node '%s': " fmt, ::orknn::op_name((node).op), (node).name.c_str(), ##__VA_ARGS__)

// Checks the number of inputs/outputs (absent optional inputs count as slots) and that the
// first `required_in` inputs and the first output are present.
Status check_arity(const Graph& g, const Node& n, size_t min_in, size_t max_in, size_t min_out, size_t max_out,
                   size_t required_in);

bool has_input(const Node& n, size_t i);
bool has_output(const Node& n, size_t i);

// Sets shape and dtype of output i (nothing if that output is absent).
void set_output(Graph& g, const Node& n, size_t i, const Shape& shape, DType dtype);

bool is_float_dtype(DType t);  // kF32 (kF16 tensors never reach float kernels)
bool is_int_dtype(DType t);    // any signed/unsigned integer type, not bool
bool dtype_in(DType t, std::initializer_list<DType> allowed);

// Error unless input i's dtype is one of `allowed`.
Status check_dtype(const Graph& g, const Node& n, size_t i, std::initializer_list<DType> allowed);

// Reads input i, which must be a constant, as integers (int32/int64/int8/uint8/...) into *out.
// A non-constant input gives kInvalidModel naming the node and suggesting --input-shape, since
// parameter inputs are usually computed from a dynamic input dimension.
Status read_const_ints(const Graph& g, const Node& n, size_t i, const char* what, std::vector<int64_t>* out);
// Same for numbers read as float (float, or any integer type).
Status read_const_floats(const Graph& g, const Node& n, size_t i, const char* what, std::vector<float>* out);

// If input i is present: reads it as constant integers into attribute `attr` and marks the input
// absent (-1). Absent input: nothing happens.
Status move_ints_input_to_attr(Graph& g, Node& n, size_t i, const char* attr);

// Resolves a possibly negative axis against `rank` (valid range [-rank, rank-1]).
Status normalize_axis(const Node& n, int64_t axis, int64_t rank, int64_t* out);
// Resolves, sorts and checks for duplicates.
Status normalize_axes(const Node& n, const std::vector<int64_t>& axes, int64_t rank, std::vector<int64_t>* out);

// numpy multidirectional broadcasting of all `shapes`.
Status broadcast_shapes(const Node& n, const std::vector<Shape>& shapes, Shape* out);

}  // namespace orknn
