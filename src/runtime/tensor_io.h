// Element types and conversions of the runtime's I/O (runtime/context_io.cc,
// runtime/context_mem.cc, runtime/context_query.cc): the RKNN tensor types, what each tensor is
// reported as, and output conversion.
#pragma once
#include <cstddef>
#include <cstdint>

#include "graph/ir.h"
#include "rknn_api.h"
#include "runtime/layouts.h"

namespace orknn {

struct PlatformInfo;

inline bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16; }

// The type a tensor is reported as (docs/api-contract.md): float tensors as FLOAT16, as the NPU
// holds them.
rknn_tensor_type reported_type(const Tensor& t);
size_t rknn_type_size(rknn_tensor_type t);  // 0 for types the runtime does not take
bool supported_input_type(rknn_tensor_type t);

// Element i of a buffer of rknn type `t` as double (lossless for every supported type), and the
// other way into a tensor of dtype t.
double load_elem(const void* buf, rknn_tensor_type t, size_t i);
void store_elem(void* buf, DType t, size_t i, double v);

// Output tensor t (arena data, NCHW) -> dst in NCHW order: float32 when want_float, else the
// reported type (FLOAT16 for float tensors, raw codes otherwise). rknn_outputs_get and the
// zero-copy outputs.
void convert_output(const Tensor& t, const void* src, bool want_float, void* dst);

// NC1HWC2 C2 of the platform for a reported type (0: no native NC1HWC2 layout for it).
int native_c2(const PlatformInfo& p, rknn_tensor_type t);
// The NC1HWC2 geometry of a 4-D NCHW shape.
Nc1hwc2Geometry geometry_of(const Shape& s, int c2, int64_t w_stride);

}  // namespace orknn
