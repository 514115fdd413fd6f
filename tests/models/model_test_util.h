// Helpers shared by the end-to-end model tests (models_test.cc, int8_models_test.cc): where the
// prepared work directory is, reading the raw files scripts/prepare_test_models.sh writes, and the
// output comparisons.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace orknn {
namespace model_test {

// $ORKNN_MODELS_DIR, or the default work directory of scripts/prepare_test_models.sh.
inline std::string models_dir() {
  const char* env = std::getenv("ORKNN_MODELS_DIR");
  if (env && *env) return env;
  return std::string(ORKNN_SOURCE_DIR) + "/tests/models/work";
}

inline bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// Reads a whole file as bytes (raw uint8 images, .rknn models).
inline bool read_bytes(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  const std::streamsize bytes = f.tellg();
  if (bytes < 0) return false;
  out->resize(static_cast<size_t>(bytes));
  f.seekg(0);
  return static_cast<bool>(f.read(reinterpret_cast<char*>(out->data()), bytes));
}

// Reads a raw little-endian float32 file (the format the preparation scripts write).
inline bool read_f32(const std::string& path, std::vector<float>* out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  const std::streamsize bytes = f.tellg();
  if (bytes % 4 != 0) return false;
  out->resize(static_cast<size_t>(bytes / 4));
  f.seekg(0);
  return static_cast<bool>(f.read(reinterpret_cast<char*>(out->data()), bytes));
}

struct Comparison {
  double cosine = 0;
  double max_abs_diff = 0;
  double ref_max_abs = 0;
};

inline Comparison compare(const std::vector<float>& got, const std::vector<float>& want) {
  Comparison c;
  double dot = 0, n_got = 0, n_want = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    dot += double(got[i]) * want[i];
    n_got += double(got[i]) * got[i];
    n_want += double(want[i]) * want[i];
    // NaN must fail the comparison, so it is not folded through std::max.
    const double d = std::fabs(double(got[i]) - want[i]);
    if (!(d <= c.max_abs_diff)) c.max_abs_diff = std::isnan(d) ? INFINITY : d;
    c.ref_max_abs = std::max(c.ref_max_abs, std::fabs(double(want[i])));
  }
  c.cosine = (n_got > 0 && n_want > 0) ? dot / std::sqrt(n_got * n_want) : 0.0;
  if (std::isnan(c.cosine)) c.cosine = 0;
  return c;
}

inline size_t argmax(const float* v, size_t n) { return size_t(std::max_element(v, v + n) - v); }

// Greedy CTC decoding as PaddleOCR does it: per-step argmax, repeats merged, blank (class 0) dropped.
inline std::vector<size_t> ctc_greedy(const std::vector<float>& probs, size_t classes) {
  std::vector<size_t> out;
  size_t prev = SIZE_MAX;
  for (size_t t = 0; t * classes < probs.size(); ++t) {
    const size_t k = argmax(probs.data() + t * classes, classes);
    if (k != prev && k != 0) out.push_back(k);
    prev = k;
  }
  return out;
}

}  // namespace model_test
}  // namespace orknn
