// Tensor layout conversions between the ONNX layout (NCHW) and the layouts the RKNN API exposes:
// NHWC (4-D inputs, NATIVE_NHWC_* queries) and the NPU's NC1HWC2 (native 4-D outputs), docs/api-contract.md §4.4.
// All functions move elements by size only (1 byte int8/uint8, 2 bytes fp16, ...), so one code path
// serves every element type.
#pragma once
#include <cstddef>
#include <cstdint>

namespace orknn {

// NC1HWC2 geometry of an NCHW tensor: C1 = ceil(C / C2) blocks of C2 channels; each row holds
// w_stride >= W pixels. Element (n, c, h, w) lives at ((n*C1 + c/C2)*H*w_stride + h*w_stride + w)*C2 + c%C2.
// Padding channels (c >= C) and padding pixels (w >= W) are zero.
struct Nc1hwc2Geometry {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t c2 = 0;
  int64_t w_stride = 0;  // 0 means W
  int64_t c1() const { return c2 > 0 ? (c + c2 - 1) / c2 : 0; }
  int64_t row() const { return w_stride > 0 ? w_stride : w; }
  int64_t num_elements() const { return n * c1() * h * row() * c2; }  // including padding
  // Element offset (not bytes) of (n, c, h, w).
  int64_t offset(int64_t in, int64_t ic, int64_t ih, int64_t iw) const {
    return ((in * c1() + ic / c2) * h * row() + ih * row() + iw) * c2 + ic % c2;
  }
  bool valid() const { return n > 0 && c > 0 && h > 0 && w > 0 && c2 > 0 && (w_stride == 0 || w_stride >= w); }
};

// dst (NC1HWC2, g.num_elements() elements, padding written as zero) <- src (dense NCHW).
// Returns false (writing nothing) when g is not valid or elem_size is 0.
bool nchw_to_nc1hwc2(const void* src, void* dst, const Nc1hwc2Geometry& g, size_t elem_size);
// dst (dense NCHW) <- src (NC1HWC2); padding in src is ignored.
bool nc1hwc2_to_nchw(const void* src, void* dst, const Nc1hwc2Geometry& g, size_t elem_size);
// dst (dense NHWC) <- src (NC1HWC2); padding in src is ignored.
bool nc1hwc2_to_nhwc(const void* src, void* dst, const Nc1hwc2Geometry& g, size_t elem_size);

// Dense NCHW <-> dense NHWC (dims of the NCHW view).
void nchw_to_nhwc(const void* src, void* dst, int64_t n, int64_t c, int64_t h, int64_t w, size_t elem_size);
void nhwc_to_nchw(const void* src, void* dst, int64_t n, int64_t c, int64_t h, int64_t w, size_t elem_size);

}  // namespace orknn
