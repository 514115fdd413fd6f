// The expected result of resizing a calibration image, computed straight from the definition in
// converter/quant/image_resize.h and independently of its code: every output value on its own, as
// one two-dimensional weighted mean in double precision (the resizer runs two separable float
// passes over precomputed taps), and structured test images to feed it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace resize_test {

// Source pixels and weights of output position `o` along an axis of `in` source and `out` output
// pixels: a tent centred at (o + 0.5) * in / out - 0.5 whose half-width is one source pixel when
// enlarging and in / out source pixels when shrinking; positions outside the image take the
// nearest edge pixel.
inline std::vector<std::pair<int, double>> tent_taps(int in, int out, int o) {
  const double half = std::max(1.0, static_cast<double>(in) / out);
  const double centre = (o + 0.5) * in / out - 0.5;
  std::vector<std::pair<int, double>> taps;
  for (int i = static_cast<int>(std::floor(centre - half)); i <= static_cast<int>(std::ceil(centre + half)); ++i) {
    const double weight = 1.0 - std::fabs(i - centre) / half;
    if (weight > 0) taps.push_back({std::clamp(i, 0, in - 1), weight});
  }
  return taps;
}

// src: h rows of w pixels of `channels` interleaved values; returns the unrounded oh x ow x channels
// result: at each output pixel the mean of the source under the product of the two axes' tents.
inline std::vector<double> tent_resize(const std::vector<uint8_t>& src, int w, int h, int channels, int ow, int oh) {
  std::vector<double> out(static_cast<size_t>(ow) * oh * channels);
  for (int oy = 0; oy < oh; ++oy) {
    const auto ty = tent_taps(h, oh, oy);
    for (int ox = 0; ox < ow; ++ox) {
      const auto tx = tent_taps(w, ow, ox);
      for (int c = 0; c < channels; ++c) {
        double sum = 0, norm = 0;
        for (const auto& [y, wy] : ty)
          for (const auto& [x, wx] : tx) {
            sum += wy * wx * src[(static_cast<size_t>(y) * w + x) * channels + c];
            norm += wy * wx;
          }
        out[(static_cast<size_t>(oy) * ow + ox) * channels + c] = sum / norm;
      }
    }
  }
  return out;
}

// A structured w x h image of `channels` interleaved 8-bit values: a checkerboard of 7-pixel cells
// (40 / 220) averaged with a horizontal ramp over 0..255 (channel 0, also the only one of a gray
// image), a vertical ramp down from 255, the checkerboard alone, a diagonal ramp. Every channel
// differs and channel 0 varies along both axes, so a swapped axis or channel, a shift or a wrong
// row stride shows.
inline std::vector<uint8_t> structured_image(int w, int h, int channels) {
  std::vector<uint8_t> img(static_cast<size_t>(w) * h * channels);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int checker = ((x / 7 + y / 7) % 2) ? 220 : 40;
      const int v[4] = {((w > 1 ? x * 255 / (w - 1) : 128) + checker) / 2, h > 1 ? 255 - y * 255 / (h - 1) : 128,
                        checker, (x + 2 * y) % 256};
      for (int c = 0; c < channels; ++c) img[(static_cast<size_t>(y) * w + x) * channels + c] = static_cast<uint8_t>(v[c]);
    }
  return img;
}

}  // namespace resize_test
