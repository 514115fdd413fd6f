// Resize's per-axis geometry (the numerics are described in kernels/ref/resize.cc): the input
// coordinate of an output coordinate by coordinate_transformation_mode, and the linear taps there.
// The reference kernel and the fast linear kernels build their taps with these same functions, so
// they agree on every index and weight bit for bit.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace orknn {

struct ResizeTap {
  int64_t index;
  float weight;
};

struct ResizeAxisMap {
  std::string ctm;
  int64_t in = 1, out = 1;
  float scale = 1.f;
  double roi_start = 0, roi_end = 1;
};

inline double resize_source_coordinate(const ResizeAxisMap& m, int64_t o) {
  const bool exact_ratio = m.scale == static_cast<float>(m.out) / static_cast<float>(m.in);
  const double in = static_cast<double>(m.in), out = static_cast<double>(m.out), s = m.scale;
  const double length = exact_ratio ? out : in * s;
  auto div_scale = [&](double v) { return exact_ratio ? v * in / out : v / s; };
  const double x = static_cast<double>(o);
  if (m.ctm == "half_pixel") return div_scale(x + 0.5) - 0.5;
  if (m.ctm == "half_pixel_symmetric") {
    const double offset = in / 2 * (1 - out / length);
    return offset + div_scale(x + 0.5) - 0.5;
  }
  if (m.ctm == "pytorch_half_pixel") return m.out > 1 ? div_scale(x + 0.5) - 0.5 : 0.0;
  if (m.ctm == "align_corners") return m.out > 1 ? x * (in - 1) / (length - 1) : 0.0;
  if (m.ctm == "asymmetric") return div_scale(x);
  if (m.ctm == "tf_half_pixel_for_nn") return div_scale(x + 0.5);
  // tf_crop_and_resize
  if (m.out > 1) return m.roi_start * (in - 1) + x * (m.roi_end - m.roi_start) * (in - 1) / (out - 1);
  return 0.5 * (m.roi_start + m.roi_end) * (in - 1);
}

inline int64_t resize_clamp_index(int64_t i, int64_t in) { return i < 0 ? 0 : (i >= in ? in - 1 : i); }

// A coordinate limited to where floor() of it converts to int64. The normalised "scales" of a
// Resize need only be positive and finite (they need not be out / in), and one near 0 puts
// coordinates at 1e30 and beyond, whose conversion is undefined. Past 2^53 every double is an
// integer, so a coordinate past the limit of 2^62 rounds, weighs and clamps to the edge as the
// limit does.
inline double resize_int_safe(double x) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  return x < -kLimit ? -kLimit : (x > kLimit ? kLimit : x);
}

// The input index nearest_mode picks for coordinate x on an axis of `in` elements, clamped into
// [0, in - 1].
inline int64_t resize_nearest_index(const std::string& nearest_mode, double x, int64_t in) {
  x = resize_int_safe(x);
  double r;
  if (nearest_mode == "floor") {
    r = std::floor(x);
  } else if (nearest_mode == "ceil") {
    r = std::ceil(x);
  } else if (nearest_mode == "round_prefer_ceil") {
    r = std::floor(x + 0.5);
  } else {  // round_prefer_floor
    r = std::ceil(x - 0.5);
  }
  return resize_clamp_index(static_cast<int64_t>(r), in);
}

// Appends a tap unless its weight rounds to zero (clamping may repeat an index: that is just
// another term).
inline void resize_add_tap(std::vector<ResizeTap>* taps, int64_t index, double weight) {
  const float w = static_cast<float>(weight);
  if (w == 0.f) return;
  taps->push_back({index, w});
}

// The linear taps of input coordinate x on an axis of `in` elements: x clamped into [0, in - 1],
// floor(x) with weight 1 - r and floor(x) + 1 (clamped) with weight r, r = x - floor(x).
inline void resize_linear_taps(double x, int64_t in, std::vector<ResizeTap>* taps) {
  const double last = static_cast<double>(in - 1);
  x = resize_int_safe(x);
  const double xc = x < 0 ? 0 : (x > last ? last : x);
  const int64_t i0 = static_cast<int64_t>(std::floor(xc));
  const double r = xc - static_cast<double>(i0);
  resize_add_tap(taps, i0, 1 - r);
  resize_add_tap(taps, resize_clamp_index(i0 + 1, in), r);
}

}  // namespace orknn
