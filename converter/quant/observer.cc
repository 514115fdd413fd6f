#include "converter/quant/observer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "kernels/quant_util.h"

namespace orknn {

namespace {

// Below this a scale is treated as "no range": such a tensor holds nothing but (near) zeros, and a
// scale this small would only turn the multipliers and bias scales derived from it into
// denormals or overflows.
constexpr float kMinScale = 1e-12f;

// kl: the smallest threshold tried, in histogram bins (TensorRT's 128 of 2048: 1/16 of max|x|).
constexpr int kKlMinBins = 128;
// kl: what a zero bin of the quantized distribution Q counts as where P is not zero (after Q is
// normalised to sum 1; Q is normalised again afterwards).
constexpr double kKlEpsilon = 1e-4;
// kl: a threshold may clip at most this fraction of the histogram's values,
constexpr double kKlMaxClippedFraction = 0.01;
// and with kl_keep_tails, unless it clips at most kKlMaxClippedRare of them (isolated outliers),
// its clipping error (sum of (|x| - T)^2 over the clipped values) may be at most this fraction of
// sum x^2. Chosen by measurement on the random-weight torchvision models (docs/quantization.md):
// the long tails of their SiLU outputs carry signal there.
constexpr double kKlMaxClippedEnergy = 1e-4;
constexpr double kKlMaxClippedRare = 1e-5;

// mmse grid: f = 2^-e for the low and the high end separately. Coarse: e = k/4, k = 0..28 (down to
// 1/128 of the observed extreme). Fine: around the best coarse point, e + j/32, j = -8..8.
constexpr int kMmseCoarseSteps = 28;
constexpr double kMmseCoarseStep = 0.25;
constexpr int kMmseFineSteps = 8;
constexpr double kMmseFineStep = 1.0 / 32.0;

std::string lower(const std::string& s) {
  std::string r = s;
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// Expected squared error of quantize -> dequantize (the spec's formulas, with the given scale and
// zero point) of a histogram whose counts are spread uniformly over each bin
// [lo0 + j*w, lo0 + (j+1)*w]. Every value goes to its nearest level (q - zp) * scale,
// q in [-128, 127] (the spec's rne(x / s) + zp, saturated, apart from ties, which have no width).
double histogram_quant_error(const std::vector<double>& hist, double lo0, double w, float scale, int32_t zp) {
  double level[256], upper[256];  // level of q = i - 128 and the upper end of its cell
  for (int i = 0; i < 256; ++i) level[i] = static_cast<double>(dequantize_value(i - 128, scale, zp));
  for (int i = 0; i < 255; ++i) upper[i] = 0.5 * (level[i] + level[i + 1]);
  upper[255] = std::numeric_limits<double>::infinity();
  // Integral of (y - x)^2 over [u, v].
  auto piece = [](double u, double v, double y) {
    const double a = v - y, b = u - y;
    return (a * a * a - b * b * b) / 3.0;
  };
  double total = 0.0;
  int cell = 0;  // moves forward only: bins are visited in increasing order
  for (size_t j = 0; j < hist.size(); ++j) {
    if (hist[j] <= 0.0) continue;
    const double a = lo0 + static_cast<double>(j) * w, b = a + w;
    while (cell < 255 && upper[cell] <= a) ++cell;
    double err = 0.0;
    double u = a;
    for (int c = cell; c < 256; ++c) {
      const double v = std::min(b, upper[c]);
      if (v > u) err += piece(u, v, level[c]);
      u = v;
      if (upper[c] >= b) break;
    }
    total += hist[j] * err / w;
  }
  return total;
}

}  // namespace

Status parse_calib_algorithm(const std::string& text, CalibAlgorithm* out) {
  const std::string t = lower(text);
  if (t == "normal") *out = CalibAlgorithm::kNormal;
  else if (t == "kl" || t == "kl_divergence") *out = CalibAlgorithm::kKl;
  else if (t == "mmse") *out = CalibAlgorithm::kMmse;
  else
    return ORKNN_ERR(kInvalidParam, "unknown quantization algorithm '%s' (expected normal, kl or mmse)", text.c_str());
  return Status::Ok();
}

const char* calib_algorithm_name(CalibAlgorithm alg) {
  switch (alg) {
    case CalibAlgorithm::kNormal: return "normal";
    case CalibAlgorithm::kKl: return "kl";
    case CalibAlgorithm::kMmse: return "mmse";
  }
  return "?";
}

void Observer::observe(const float* x, size_t n) {
  if (pass_ == 0) {
    float lo = seen_ ? min_ : std::numeric_limits<float>::infinity();
    float hi = seen_ ? max_ : -std::numeric_limits<float>::infinity();
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      const float v = x[i];
      if (!std::isfinite(v)) {
        ++nonfinite_;
        continue;
      }
      any = true;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (any) {
      seen_ = true;
      min_ = lo;
      max_ = hi;
    }
    return;
  }
  if (pass_ != 1 || hist_.empty()) return;
  const double lo0 = hist_lo_, inv_w = 1.0 / static_cast<double>(hist_width_);
  const int last = kHistogramBins - 1;
  const bool absolute = alg_ == CalibAlgorithm::kKl;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (!std::isfinite(v)) continue;  // counted in pass 0
    // Exact zeros are left out: the zero point represents 0 exactly whatever the range (no error
    // for mmse), and for kl the spike of zeros after a ReLU would otherwise dominate the divergence.
    if (v == 0.f) continue;
    const double p = ((absolute ? std::fabs(static_cast<double>(v)) : static_cast<double>(v)) - lo0) * inv_w;
    // Values equal to the top edge (the maximum itself) belong to the last bin.
    const int j = p <= 0.0 ? 0 : (p >= last ? last : static_cast<int>(p));
    hist_[static_cast<size_t>(j)] += 1.0;
  }
}

void Observer::end_pass() {
  if (pass_ == 0 && passes() > 1) {
    const float lo0 = std::min(min_seen(), 0.f), hi0 = std::max(max_seen(), 0.f);
    if (alg_ == CalibAlgorithm::kKl) {
      const float amax = std::max(-lo0, hi0);
      hist_lo_ = 0.f;
      hist_width_ = amax / static_cast<float>(kHistogramBins);
    } else {
      hist_lo_ = lo0;
      hist_width_ = (hi0 - lo0) / static_cast<float>(kHistogramBins);
    }
    // A zero width (all-zero tensor) or a denormal or infinite one: no histogram; range() then
    // keeps the min/max range.
    if (hist_width_ >= std::numeric_limits<float>::min() && std::isfinite(hist_width_))
      hist_.assign(kHistogramBins, 0.0);
  }
  ++pass_;
}

void Observer::range(float* lo, float* hi) const {
  const float lo0 = std::min(min_seen(), 0.f), hi0 = std::max(max_seen(), 0.f);
  *lo = lo0;
  *hi = hi0;
  if (alg_ == CalibAlgorithm::kNormal || hist_.empty()) return;
  if (alg_ == CalibAlgorithm::kKl) range_kl(lo, hi);
  else range_mmse(lo, hi);
}

// TensorRT-style entropy calibration on the histogram of |x| (kHistogramBins bins over
// [0, amax]), generalised to an asymmetric 8-bit grid. For each candidate threshold T = i * width,
// i = kHistogramBins down to kKlMinBins:
//  - P = the first i bins, with the mass of every bin beyond i added to bin i-1 (clipping);
//  - the step of the real quantizer for the range [max(lo0, -T), min(hi0, T)] is
//    (min(hi0, T) + min(-lo0, T)) / 255; bin j (centre (j + 0.5) * width) belongs to quantization
//    cell rne(centre / step);
//  - Q = the first i bins (without the clipped mass), each cell's total spread evenly over the cell's
//    non-empty bins (empty bins stay 0);
//  - P and Q are normalised to sum 1; a zero Q bin where P > 0 becomes kKlEpsilon and Q is
//    normalised again; KL = sum over P > 0 of P * ln(P / Q).
// The smallest KL wins; on ties, the larger threshold.
void Observer::range_kl(float* lo, float* hi) const {
  const double lo0 = *lo, hi0 = *hi;
  const double amax = std::max(-lo0, hi0);
  const int n = kHistogramBins;
  const double w = hist_width_;
  std::vector<double> beyond(static_cast<size_t>(n) + 1, 0.0);  // beyond[i] = sum of bins >= i
  for (int j = n - 1; j >= 0; --j) beyond[static_cast<size_t>(j)] = beyond[static_cast<size_t>(j) + 1] + hist_[static_cast<size_t>(j)];
  // Over the bins >= i, with each bin's values at its centre c = (j + 0.5) * w: sum of c * count and
  // of c^2 * count (the clipped values' squared error against threshold t is
  // beyond2 - 2 t beyond1 + t^2 beyond).
  std::vector<double> beyond1(static_cast<size_t>(n) + 1, 0.0), beyond2(static_cast<size_t>(n) + 1, 0.0);
  for (int j = n - 1; j >= 0; --j) {
    const double c = (j + 0.5) * w, h = hist_[static_cast<size_t>(j)];
    beyond1[static_cast<size_t>(j)] = beyond1[static_cast<size_t>(j) + 1] + h * c;
    beyond2[static_cast<size_t>(j)] = beyond2[static_cast<size_t>(j) + 1] + h * c * c;
  }
  const double total = beyond[0];
  if (total <= 0.0) return;

  std::vector<double> q(static_cast<size_t>(n));
  int best_i = n;
  double best_kl = std::numeric_limits<double>::infinity();
  for (int i = n; i >= kKlMinBins; --i) {
    const double t = i == n ? amax : static_cast<double>(i) * w;
    const double kept = total - beyond[static_cast<size_t>(i)];
    // Thresholds that clip (move to T) too much are not candidates. TensorRT's divergence rates a
    // threshold that folds most of the mass into its last bin as almost lossless (P and Q are both
    // nearly that one bin): at most kKlMaxClippedFraction of the values. With kl_keep_tails, a long
    // tail that carries signal keeps it: the clipped values' squared error is at most
    // kKlMaxClippedEnergy of the energy of all values, unless they are isolated outliers (at most
    // kKlMaxClippedRare of them).
    const double clipped = beyond[static_cast<size_t>(i)];
    const double clipped_energy =
        beyond2[static_cast<size_t>(i)] - 2.0 * t * beyond1[static_cast<size_t>(i)] + t * t * clipped;
    const bool few = clipped <= kKlMaxClippedRare * total;
    if (kept <= 0.0 || clipped > kKlMaxClippedFraction * total ||
        (kl_keep_tails_ && !few && clipped_energy > kKlMaxClippedEnergy * beyond2[0]))
      continue;
    const double step = (std::min(hi0, t) + std::min(-lo0, t)) / 255.0;
    // Q: one sweep, cells are contiguous runs of bins.
    int j = 0;
    while (j < i) {
      const double cell = std::nearbyint((j + 0.5) * w / step);
      int e = j;
      double sum = 0.0;
      int nonzero = 0;
      while (e < i && std::nearbyint((e + 0.5) * w / step) == cell) {
        sum += hist_[static_cast<size_t>(e)];
        nonzero += hist_[static_cast<size_t>(e)] > 0.0;
        ++e;
      }
      for (int k = j; k < e; ++k)
        q[static_cast<size_t>(k)] = hist_[static_cast<size_t>(k)] > 0.0 ? sum / nonzero : 0.0;
      j = e;
    }
    // Normalise Q, smooth its zero bins under P's mass, normalise again.
    double qsum = 0.0;
    for (int k = 0; k < i; ++k) {
      double& qk = q[static_cast<size_t>(k)];
      qk /= kept;
      const double pk = hist_[static_cast<size_t>(k)] + (k == i - 1 ? beyond[static_cast<size_t>(i)] : 0.0);
      if (pk > 0.0 && qk == 0.0) qk = kKlEpsilon;
      qsum += qk;
    }
    double kl = 0.0;
    for (int k = 0; k < i; ++k) {
      const double pk = (hist_[static_cast<size_t>(k)] + (k == i - 1 ? beyond[static_cast<size_t>(i)] : 0.0)) / total;
      if (pk > 0.0) kl += pk * std::log(pk / (q[static_cast<size_t>(k)] / qsum));
    }
    if (kl < best_kl) {
      best_kl = kl;
      best_i = i;
    }
  }
  const double t = best_i == n ? amax : static_cast<double>(best_i) * w;
  *lo = static_cast<float>(std::max(lo0, -t));
  *hi = static_cast<float>(std::min(hi0, t));
}

// The range [lo0 * 2^-a, hi0 * 2^-b] (lo0 = min(min, 0), hi0 = max(max, 0)) with the smallest
// expected squared quantize -> dequantize error over the histogram of x (kHistogramBins bins over
// [lo0, hi0], values spread uniformly within a bin), with the scale and zero point
// activation_qparams gives for it. a and b: the coarse grid, then the fine grid around its best
// point (constants above). A side that is 0 is not searched. Ties keep the wider range.
void Observer::range_mmse(float* lo, float* hi) const {
  const double lo0 = *lo, hi0 = *hi;
  const double w = hist_width_;
  auto error_of = [&](double ea, double eb, float* clo, float* chi) {
    *clo = static_cast<float>(lo0 * std::exp2(-ea));
    *chi = static_cast<float>(hi0 * std::exp2(-eb));
    float scale;
    int32_t zp;
    activation_qparams(*clo, *chi, &scale, &zp);
    return histogram_quant_error(hist_, lo0, w, scale, zp);
  };
  const int na = lo0 < 0.0 ? kMmseCoarseSteps : 0;
  const int nb = hi0 > 0.0 ? kMmseCoarseSteps : 0;
  double best = std::numeric_limits<double>::infinity(), best_ea = 0.0, best_eb = 0.0;
  float best_lo = *lo, best_hi = *hi;
  auto consider = [&](double ea, double eb) {
    if (ea < 0.0 || eb < 0.0) return;
    float clo, chi;
    const double e = error_of(ea, eb, &clo, &chi);
    if (e < best) {
      best = e;
      best_ea = ea;
      best_eb = eb;
      best_lo = clo;
      best_hi = chi;
    }
  };
  for (int ka = 0; ka <= na; ++ka)
    for (int kb = 0; kb <= nb; ++kb) consider(ka * kMmseCoarseStep, kb * kMmseCoarseStep);
  const double ca = best_ea, cb = best_eb;
  const int fa = lo0 < 0.0 ? kMmseFineSteps : 0;
  const int fb = hi0 > 0.0 ? kMmseFineSteps : 0;
  for (int ja = -fa; ja <= fa; ++ja)
    for (int jb = -fb; jb <= fb; ++jb) consider(ca + ja * kMmseFineStep, cb + jb * kMmseFineStep);
  *lo = best_lo;
  *hi = best_hi;
}

void activation_qparams(float lo, float hi, float* scale, int32_t* zp) {
  if (!(lo <= 0.f)) lo = 0.f;  // also NaN
  if (!(hi >= 0.f)) hi = 0.f;
  float s = (hi - lo) / 255.f;
  if (!(s >= kMinScale) || !std::isfinite(s)) s = 1.f;
  float z = round_half_even(-128.f - lo / s);
  if (!(z >= -128.f)) z = -128.f;
  if (z > 127.f) z = 127.f;
  *scale = s;
  *zp = static_cast<int32_t>(z);
}

float weight_scale_symmetric(float max_abs) {
  const float s = max_abs / 127.f;
  return s >= kMinScale && std::isfinite(s) ? s : 1.f;
}

namespace {

// Checks w and splits its shape around `axis`: outer x channels x inner.
Status weight_layout(const Tensor& w, int axis, int64_t* outer, int64_t* channels, int64_t* inner) {
  if (w.dtype != DType::kF32 || !w.is_const())
    return ORKNN_ERR(kInvalidParam, "weight '%s': quantize_weights needs a float32 constant, got %s%s", w.name.c_str(),
                     w.is_const() ? "" : "a non-constant ", dtype_name(w.dtype));
  const int rank = static_cast<int>(w.shape.size());
  if (axis < -1 || axis >= std::max(rank, 0) || (axis >= 0 && rank == 0))
    return ORKNN_ERR(kInvalidParam, "weight '%s' %s: channel axis %d out of range (-1 for per tensor, or 0..%d)",
                     w.name.c_str(), shape_str(w.shape).c_str(), axis, rank - 1);
  if (w.data.size < w.nbytes())
    return ORKNN_ERR(kInvalidParam, "weight '%s': %zu data bytes for %s float32 (%zu needed)", w.name.c_str(),
                     w.data.size, shape_str(w.shape).c_str(), w.nbytes());
  *outer = 1;
  *inner = 1;
  *channels = 1;
  if (axis < 0) {
    *inner = w.numel();
    return Status::Ok();
  }
  for (int d = 0; d < axis; ++d) *outer *= w.shape[static_cast<size_t>(d)];
  *channels = w.shape[static_cast<size_t>(axis)];
  for (int d = axis + 1; d < rank; ++d) *inner *= w.shape[static_cast<size_t>(d)];
  return Status::Ok();
}

}  // namespace

Status weight_qparams_symmetric(const Tensor& w, int axis, std::vector<float>* scales) {
  int64_t outer, channels, inner;
  ORKNN_RETURN_IF_ERROR(weight_layout(w, axis, &outer, &channels, &inner));
  const float* v = w.const_ptr<float>();
  std::vector<float> max_abs(static_cast<size_t>(channels), 0.f);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const float* p = v + (o * channels + c) * inner;
      float& m = max_abs[static_cast<size_t>(c)];
      for (int64_t k = 0; k < inner; ++k) {
        if (!std::isfinite(p[k]))
          return ORKNN_ERR(kInvalidParam, "weight '%s' %s: element %lld is %g; cannot quantize a non-finite weight",
                           w.name.c_str(), shape_str(w.shape).c_str(), static_cast<long long>((o * channels + c) * inner + k),
                           static_cast<double>(p[k]));
        m = std::max(m, std::fabs(p[k]));
      }
    }
  scales->resize(max_abs.size());
  for (size_t c = 0; c < max_abs.size(); ++c) (*scales)[c] = weight_scale_symmetric(max_abs[c]);
  return Status::Ok();
}

Status quantize_weights(const Tensor& w, int axis, std::vector<int8_t>* q, QuantParams* p) {
  std::vector<float> scales;
  ORKNN_RETURN_IF_ERROR(weight_qparams_symmetric(w, axis, &scales));
  int64_t outer, channels, inner;
  ORKNN_RETURN_IF_ERROR(weight_layout(w, axis, &outer, &channels, &inner));
  const float* v = w.const_ptr<float>();
  q->resize(static_cast<size_t>(w.numel()));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const float s = scales[static_cast<size_t>(c)];
      const int64_t base = (o * channels + c) * inner;
      for (int64_t k = 0; k < inner; ++k) {
        float r = round_half_even(v[base + k] / s);
        r = std::min(127.f, std::max(-127.f, r));
        (*q)[static_cast<size_t>(base + k)] = static_cast<int8_t>(r);
      }
    }
  p->scale = scales;
  p->zero_point.assign(scales.size(), 0);
  p->axis = axis < 0 ? -1 : axis;
  return Status::Ok();
}

}  // namespace orknn
