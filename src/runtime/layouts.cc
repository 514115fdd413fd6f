#include "runtime/layouts.h"

#include <cstring>

namespace orknn {
namespace {

inline void copy_elem(const uint8_t* src, size_t si, uint8_t* dst, size_t di, size_t es) {
  std::memcpy(dst + di * es, src + si * es, es);
}

}  // namespace

bool nchw_to_nc1hwc2(const void* src, void* dst, const Nc1hwc2Geometry& g, size_t es) {
  if (!g.valid() || es == 0) return false;
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  // Zero first: padding channels of the last block and pixels past W are defined as zero.
  std::memset(d, 0, static_cast<size_t>(g.num_elements()) * es);
  size_t si = 0;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t h = 0; h < g.h; ++h)
        for (int64_t w = 0; w < g.w; ++w, ++si) copy_elem(s, si, d, static_cast<size_t>(g.offset(n, c, h, w)), es);
  return true;
}

bool nc1hwc2_to_nchw(const void* src, void* dst, const Nc1hwc2Geometry& g, size_t es) {
  if (!g.valid() || es == 0) return false;
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  size_t di = 0;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t h = 0; h < g.h; ++h)
        for (int64_t w = 0; w < g.w; ++w, ++di) copy_elem(s, static_cast<size_t>(g.offset(n, c, h, w)), d, di, es);
  return true;
}

bool nc1hwc2_to_nhwc(const void* src, void* dst, const Nc1hwc2Geometry& g, size_t es) {
  if (!g.valid() || es == 0) return false;
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  size_t di = 0;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t h = 0; h < g.h; ++h)
      for (int64_t w = 0; w < g.w; ++w)
        for (int64_t c = 0; c < g.c; ++c, ++di) copy_elem(s, static_cast<size_t>(g.offset(n, c, h, w)), d, di, es);
  return true;
}

void nchw_to_nhwc(const void* src, void* dst, int64_t N, int64_t C, int64_t H, int64_t W, size_t es) {
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  size_t si = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w, ++si)
          copy_elem(s, si, d, static_cast<size_t>(((n * H + h) * W + w) * C + c), es);
}

void nhwc_to_nchw(const void* src, void* dst, int64_t N, int64_t C, int64_t H, int64_t W, size_t es) {
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  size_t di = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w, ++di)
          copy_elem(s, static_cast<size_t>(((n * H + h) * W + w) * C + c), d, di, es);
}

}  // namespace orknn
