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

// Limits that keep shape arithmetic inside int64 whatever a (possibly hostile) model file holds:
// every dimension and every size-like attribute value (kernel, stride, dilation, pad, group,
// blocksize, repeats, target shapes, ...) is at most kMaxDim, and a tensor holds at most
// kMaxElements elements. A product of two such values plus a few more of them cannot overflow, so
// infer functions check their parameters against these limits before doing arithmetic.
constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;

// Error unless every dim of `shape` is in [0, kMaxDim] and it has at most kMaxElements elements.
// `what` names the tensor in the message ("input 0 ('x')", "output").
Status check_shape(const Node& n, const Shape& shape, const char* what);

// Error unless every value of `values` (attribute or parameter `what`) is in [lo, hi].
Status check_values_in(const Node& n, const char* what, const std::vector<int64_t>& values, int64_t lo, int64_t hi);

// Checks the number of inputs/outputs (absent optional inputs count as slots), that every tensor
// id exists, that the first `required_in` inputs and the first output are present, and that
// every present input has a valid shape (check_shape).
Status check_arity(const Graph& g, const Node& n, size_t min_in, size_t max_in, size_t min_out, size_t max_out,
                   size_t required_in);

bool has_input(const Node& n, size_t i);
bool has_output(const Node& n, size_t i);

// Sets shape and dtype of output i (nothing if that output is absent) after check_shape.
Status set_output(Graph& g, const Node& n, size_t i, const Shape& shape, DType dtype);

bool is_float_dtype(DType t);  // kF32 (kF16 tensors never reach float kernels)
bool is_int_dtype(DType t);    // any signed/unsigned integer type, not bool
bool dtype_in(DType t, std::initializer_list<DType> allowed);

// Error unless input i's dtype is one of `allowed`.
Status check_dtype(const Graph& g, const Node& n, size_t i, std::initializer_list<DType> allowed);
// Error unless input i (if present) is float32; `role` names it in the message ("X", "W", ...).
Status check_f32(const Graph& g, const Node& n, size_t i, const char* role);

// The quantized-node rules (check_quant_params, output_dtype, ...) are in ops/quant_infer.h.

// Reads ints attribute `name`, which must have `len` values, each in [min_value, kMaxDim];
// absent: `def` repeated `len` times. For the per-spatial-dim attributes (kernel_shape, strides,
// dilations, pads, output_padding) of Conv, ConvTranspose and the pools.
Status read_dims_attr(const Node& n, const char* name, size_t len, int64_t def, int64_t min_value,
                      std::vector<int64_t>* out);

// Reads input i, which must be a constant, as integers (int32/int64/int8/uint8/...) into *out.
// A non-constant input gives kInvalidModel naming the node and suggesting --input-shape, since
// parameter inputs are usually computed from a dynamic input dimension.
Status read_const_ints(const Graph& g, const Node& n, size_t i, const char* what, std::vector<int64_t>* out);
// Same for numbers read as float (float, or any integer type).
Status read_const_floats(const Graph& g, const Node& n, size_t i, const char* what, std::vector<float>* out);

// If input i is present: reads it as constant integers into attribute `attr` and marks the input
// absent (-1). Absent input: nothing happens.
Status move_ints_input_to_attr(Graph& g, Node& n, size_t i, const char* attr);

// A required ints parameter that opsets give as input i or (older opsets, or a node infer has
// already normalised) as attribute `attr`: move_ints_input_to_attr, then the attribute's value
// into *out; neither given is an error.
Status read_ints_param(Graph& g, Node& n, size_t i, const char* attr, std::vector<int64_t>* out);

// Resolves a possibly negative axis against `rank` (valid range [-rank, rank-1]).
Status normalize_axis(const Node& n, int64_t axis, int64_t rank, int64_t* out);
// Resolves each axis and checks for duplicates, keeping the given order (for lists that pair
// with other per-axis values, such as Pad's and Resize's axes).
Status resolve_axes(const Node& n, const std::vector<int64_t>& axes, int64_t rank, std::vector<int64_t>* out);
// resolve_axes, then sorted.
Status normalize_axes(const Node& n, const std::vector<int64_t>& axes, int64_t rank, std::vector<int64_t>* out);

// numpy multidirectional broadcasting of all `shapes`.
Status broadcast_shapes(const Node& n, const std::vector<Shape>& shapes, Shape* out);
// True when `s` broadcasts to `target` in one direction (right-aligned, each dim 1 or equal).
bool broadcasts_to(const Shape& s, const Shape& target);

// Splits `total` padding of one spatial dim into begin/end: SAME_UPPER puts the odd pixel at the
// end, any other auto_pad value at the beginning (ONNX).
void split_padding(const std::string& auto_pad, int64_t total, int64_t* begin, int64_t* end);
// Padding of one spatial dim for auto_pad SAME_UPPER/SAME_LOWER (Conv and the pools): the output
// has ceil(in / stride) positions and a window spans `extent` (dilated kernel) input positions.
// Arguments bounded by kMaxDim (extent by kMaxDim^2) keep the arithmetic in range.
void same_padding(const std::string& auto_pad, int64_t in, int64_t stride, int64_t extent, int64_t* begin,
                  int64_t* end);

// Validates "fused_act" (Conv, ConvTranspose, Gemm, MatMul) and writes "fused_alpha"/"fused_beta"
// explicitly, defaulting to the fused op's ONNX defaults. An empty "fused_act" is removed.
Status normalise_fused_act(Node& n);
// "epsilon" explicit (default 1e-5) and >= 0 (BatchNormalization and the other normalisations).
Status normalise_epsilon(Node& n);

}  // namespace orknn
