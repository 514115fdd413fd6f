#include "converter/quant/image_resize.h"

#include <algorithm>
#include <cmath>

namespace orknn {
namespace {

// One output position's source indices and their normalised weights along one axis.
struct Taps {
  int first = 0;
  std::vector<float> weight;  // for first, first + 1, ... (clamped into the input when read)
};

std::vector<Taps> axis_taps(int in, int out) {
  const double scale = static_cast<double>(out) / in;
  const double radius = scale >= 1.0 ? 1.0 : 1.0 / scale;  // the tent's half width in input pixels
  std::vector<Taps> taps(static_cast<size_t>(out));
  for (int o = 0; o < out; ++o) {
    const double centre = (o + 0.5) / scale - 0.5;
    const int lo = static_cast<int>(std::floor(centre - radius)), hi = static_cast<int>(std::ceil(centre + radius));
    Taps& t = taps[static_cast<size_t>(o)];
    t.first = lo;
    double sum = 0.0;
    std::vector<double> w;
    for (int i = lo; i <= hi; ++i) {
      const double d = std::fabs(i - centre) / radius;
      w.push_back(d < 1.0 ? 1.0 - d : 0.0);
      sum += w.back();
    }
    // sum > 0 always (the tap nearest the centre is within the radius); guard anyway.
    for (double x : w) t.weight.push_back(static_cast<float>(sum > 0 ? x / sum : 1.0 / static_cast<double>(w.size())));
  }
  return taps;
}

}  // namespace

std::vector<uint8_t> resize_triangle_u8(const uint8_t* src, int w, int h, int channels, int ow, int oh) {
  const std::vector<Taps> tx = axis_taps(w, ow), ty = axis_taps(h, oh);
  const size_t c = static_cast<size_t>(channels);
  // Horizontal pass into float rows (h x ow x c), then the vertical pass.
  std::vector<float> rows(static_cast<size_t>(h) * ow * c, 0.f);
  for (int y = 0; y < h; ++y) {
    const uint8_t* in = src + static_cast<size_t>(y) * w * c;
    float* out = &rows[static_cast<size_t>(y) * ow * c];
    for (int x = 0; x < ow; ++x) {
      const Taps& t = tx[static_cast<size_t>(x)];
      for (size_t k = 0; k < t.weight.size(); ++k) {
        const int sx = std::clamp(t.first + static_cast<int>(k), 0, w - 1);
        for (size_t ch = 0; ch < c; ++ch) out[x * c + ch] += t.weight[k] * in[static_cast<size_t>(sx) * c + ch];
      }
    }
  }
  std::vector<uint8_t> dst(static_cast<size_t>(oh) * ow * c);
  std::vector<float> acc(static_cast<size_t>(ow) * c);
  for (int y = 0; y < oh; ++y) {
    std::fill(acc.begin(), acc.end(), 0.f);
    const Taps& t = ty[static_cast<size_t>(y)];
    for (size_t k = 0; k < t.weight.size(); ++k) {
      const int sy = std::clamp(t.first + static_cast<int>(k), 0, h - 1);
      const float* row = &rows[static_cast<size_t>(sy) * ow * c];
      for (size_t i = 0; i < acc.size(); ++i) acc[i] += t.weight[k] * row[i];
    }
    for (size_t i = 0; i < acc.size(); ++i)
      dst[static_cast<size_t>(y) * ow * c + i] = static_cast<uint8_t>(std::clamp(std::lround(acc[i]), 0L, 255L));
  }
  return dst;
}

}  // namespace orknn
