// AVX-512 kernels of Resize with mode "nearest" on 4-D NCHW tensors that are resized in H and W
// only, float32 ("x86_resize_nearest_f32") and quantized int8 ("x86_resize_nearest_int8"); PP-OCR's
// FPN upsamples (asymmetric, floor, scales 2/4/8) are the nodes that made them worth writing.
//
// Same results as the reference kernels (kernels/ref/resize.cc):
//   * The per-axis index maps (output coordinate -> input index) are computed as the reference
//     computes them: the coordinate transformation in double (with its "scale is exactly out / in"
//     case); the nearest_mode rounding and the clamp into [0, in - 1] are the reference's own
//     (resize_nearest_index, kernels/ref/resize_taps.h).
//   * float32: the reference's output element is 1.f * x[tap] (its one tap of weight 1), so this
//     kernel multiplies by 1.f as well (it also quiets signalling NaNs, as the reference does).
//     int8: the reference moves the byte unchanged and requires the output to carry the input's
//     quantization parameters (no requantization); this kernel moves bytes and makes the same
//     check at plan time.
// How: an output row is built once from its input row, and every following output row that maps
// to the same input row is a memcpy of it. A row is built by
//   * an integer repeat (index map ow -> ow / k, any k up to 16 for float, 64 for int8): one vector
//     of input expands into k vectors with permutes (AVX-512F for float, AVX-512 VBMI for int8);
//   * the identity (W not resized): a plain pass;
//   * anything else (non-integer scales, other transformations): a gather through the index map.
// Threads (ctx.num_threads) take contiguous ranges of the N*C*OH output rows.
// Left to the reference: other modes (linear, cubic), tf_crop_and_resize, ranks other than 4, a
// resize of N or C, other dtypes, CPUs without AVX-512F (float) / AVX-512BW (int8).

// GCC 12 reports the placeholders inside its own AVX-512 intrinsics as "may be used
// uninitialized" (a false positive); the pragma must precede the header to cover them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/resize_taps.h"
#include "kernels/x86/cpu_features.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// ------------------------------------------------------------------------- index maps

// Input coordinate (before rounding) of output coordinate o on an axis of `in` -> `out` elements
// with scale s, per the ONNX coordinate_transformation_mode (all but tf_crop_and_resize). When s
// is exactly out / in in float32, "/ s" is evaluated as "* in / out" and the resized length is
// out (as the reference does, so that exact coordinates stay exact).
double input_coordinate(const std::string& ctm, int64_t in_len, int64_t out_len, float s, int64_t o) {
  const bool exact = s == static_cast<float>(out_len) / static_cast<float>(in_len);
  const double in = static_cast<double>(in_len), out = static_cast<double>(out_len), sd = s;
  const double resized = exact ? out : in * sd;
  const double x = static_cast<double>(o);
  auto scaled_back = [&](double v) { return exact ? v * in / out : v / sd; };
  if (ctm == "asymmetric") return scaled_back(x);
  if (ctm == "half_pixel") return scaled_back(x + 0.5) - 0.5;
  if (ctm == "pytorch_half_pixel") return out_len > 1 ? scaled_back(x + 0.5) - 0.5 : 0.0;
  if (ctm == "tf_half_pixel_for_nn") return scaled_back(x + 0.5);
  if (ctm == "align_corners") return out_len > 1 ? x * (in - 1) / (resized - 1) : 0.0;
  // half_pixel_symmetric
  const double shift = in / 2 * (1 - out / resized);
  return shift + scaled_back(x + 0.5) - 0.5;
}

std::vector<int32_t> index_map(const std::string& ctm, const std::string& nearest_mode, int64_t in, int64_t out,
                               float scale) {
  std::vector<int32_t> m(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o)
    m[static_cast<size_t>(o)] =
        static_cast<int32_t>(resize_nearest_index(nearest_mode, input_coordinate(ctm, in, out, scale, o), in));
  return m;
}

bool is_known_ctm(const std::string& c) {
  return c == "asymmetric" || c == "half_pixel" || c == "pytorch_half_pixel" || c == "tf_half_pixel_for_nn" ||
         c == "align_corners" || c == "half_pixel_symmetric";
}
bool is_known_nearest_mode(const std::string& m) {
  return m == "floor" || m == "ceil" || m == "round_prefer_ceil" || m == "round_prefer_floor";
}

// The geometry of a node this kernel takes: index maps of H and W (N and C map identically).
struct NearestPlan {
  bool ok = false;
  int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  std::vector<int32_t> h_map, w_map;
  int repeat = 0;  // w_map[ow] == ow / repeat for every ow (0: not a repeat)
  bool identity_w = false;
};

NearestPlan plan_nearest(const Graph& g, const Node& n) {
  NearestPlan p;
  if (n.inputs.empty() || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) return p;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x.shape.size() != 4 || y.shape.size() != 4) return p;
  const Attrs& at = n.attrs;
  if (at.get_string("mode", "nearest") != "nearest") return p;
  const std::string ctm = at.get_string("coordinate_transformation_mode", "half_pixel");
  const std::string nm = at.get_string("nearest_mode", "round_prefer_floor");
  if (!is_known_ctm(ctm) || !is_known_nearest_mode(nm)) return p;
  const std::vector<float> scales = at.get_floats("scales");
  if (scales.size() != 4) return p;
  for (size_t d = 0; d < 4; ++d)
    if (x.shape[d] <= 0 || y.shape[d] <= 0 || x.shape[d] > INT32_MAX || y.shape[d] > INT32_MAX) return p;
  // N and C must map each output index onto the same input index.
  for (size_t d = 0; d < 2; ++d) {
    if (x.shape[d] != y.shape[d]) return p;
    const std::vector<int32_t> m = index_map(ctm, nm, x.shape[d], y.shape[d], scales[d]);
    for (size_t i = 0; i < m.size(); ++i)
      if (m[i] != static_cast<int32_t>(i)) return p;
  }
  p.planes = x.shape[0] * x.shape[1];
  p.in_h = x.shape[2];
  p.in_w = x.shape[3];
  p.out_h = y.shape[2];
  p.out_w = y.shape[3];
  p.h_map = index_map(ctm, nm, p.in_h, p.out_h, scales[2]);
  p.w_map = index_map(ctm, nm, p.in_w, p.out_w, scales[3]);
  p.identity_w = p.in_w == p.out_w;
  for (int64_t i = 0; p.identity_w && i < p.out_w; ++i) p.identity_w = p.w_map[static_cast<size_t>(i)] == i;
  for (int k = 2; k <= 64 && !p.identity_w; ++k) {
    bool all = true;
    for (int64_t i = 0; all && i < p.out_w; ++i) all = p.w_map[static_cast<size_t>(i)] == i / k;
    if (all) {
      p.repeat = k;
      break;
    }
  }
  p.ok = true;
  return p;
}

bool supports_f32(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512f() || is_quantized_node(g, n)) return false;
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  if (g.tensor(n.inputs[0]).dtype != DType::kF32 || g.tensor(n.outputs[0]).dtype != DType::kF32) return false;
  return plan_nearest(g, n).ok;
}

bool supports_int8(const Graph& g, const Node& n) {
  if (!x86::cpu_avx512bw() || !is_quantized_node(g, n)) return false;
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  if (!is_q8_per_tensor(g.tensor(n.inputs[0])) || !is_q8_per_tensor(g.tensor(n.outputs[0]))) return false;
  return plan_nearest(g, n).ok;
}

// ------------------------------------------------------------------------- row builders

inline __mmask16 mask16(int64_t count) { return count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1); }
inline __mmask64 mask64(int64_t count) { return count >= 64 ? ~__mmask64(0) : ((__mmask64(1) << count) - 1); }

// Full vectors are stored unmasked: masked stores that miss the cache are far slower (measured
// 1.6x on a 5.5 MB output), so only a row's last vector is masked.
__attribute__((target("avx512f"))) inline void store_f32(float* y, int64_t count, __m512 v) {
  if (count >= 16)
    _mm512_storeu_ps(y, v);
  else
    _mm512_mask_storeu_ps(y, mask16(count), v);
}

// float32 row, w_map[ow] == ow / k (2 <= k <= 16): 16 inputs give k output vectors; perm[j] holds
// the lanes (16 j + l) / k (k vectors of 64 bytes).
__attribute__((target("avx512f"))) void repeat_row_f32(const float* x, float* y, int64_t out_w, int k,
                                                       const uint8_t* perm, float one) {
  const __m512 vone = _mm512_set1_ps(one);
  for (int64_t i0 = 0, o0 = 0; o0 < out_w; i0 += 16, o0 += 16 * k) {
    const int64_t outs = std::min<int64_t>(16 * k, out_w - o0);
    const int64_t ins = (outs + k - 1) / k;
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask16(ins), x + i0), vone);
    for (int j = 0; j * 16 < outs; ++j)
      store_f32(y + o0 + 16 * j, outs - 16 * j, _mm512_permutexvar_ps(_mm512_loadu_si512(perm + 64 * j), v));
  }
}

__attribute__((target("avx512f"))) void identity_row_f32(const float* x, float* y, int64_t w, float one) {
  const __m512 vone = _mm512_set1_ps(one);
  for (int64_t i = 0; i < w; i += 16)
    store_f32(y + i, w - i, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask16(w - i), x + i), vone));
}

void gather_row_f32(const float* x, float* y, const int32_t* w_map, int64_t out_w, float one) {
  for (int64_t o = 0; o < out_w; ++o) y[o] = one * x[w_map[o]];
}

// int8 row, w_map[ow] == ow / k (2 <= k <= 64): 64 inputs give k output vectors (VBMI byte permutes).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void repeat_row_i8(const int8_t* x, int8_t* y, int64_t out_w,
                                                                          int k, const uint8_t* perm) {
  for (int64_t i0 = 0, o0 = 0; o0 < out_w; i0 += 64, o0 += 64 * k) {
    const int64_t outs = std::min<int64_t>(64 * k, out_w - o0);
    const int64_t ins = (outs + k - 1) / k;
    const __m512i v = _mm512_maskz_loadu_epi8(mask64(ins), x + i0);
    for (int j = 0; j * 64 < outs; ++j) {
      const __m512i r = _mm512_permutexvar_epi8(_mm512_loadu_si512(perm + 64 * j), v);
      if (outs - 64 * j >= 64)
        _mm512_storeu_si512(y + o0 + 64 * j, r);
      else
        _mm512_mask_storeu_epi8(y + o0 + 64 * j, mask64(outs - 64 * j), r);
    }
  }
}

void gather_row_i8(const int8_t* x, int8_t* y, const int32_t* w_map, int64_t out_w) {
  for (int64_t o = 0; o < out_w; ++o) y[o] = x[w_map[o]];
}

// Below this many output bytes per thread, waking another thread costs more than it saves.
constexpr int64_t kMinBytesPerThread = 64 * 1024;

template <class T>
class ResizeNearest : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    if constexpr (sizeof(T) == 1) ORKNN_RETURN_IF_ERROR(check_quant_passthrough(*ctx.graph, *ctx.node, 0));
    p_ = plan_nearest(*ctx.graph, *ctx.node);
    if (!p_.ok)
      return ORKNN_ERR(kFail, "Resize node '%s': x86 nearest kernel given a node it does not support",
                       ctx.node->name.c_str());
    constexpr int kLanes = 64 / static_cast<int>(sizeof(T));  // elements per vector
    const bool repeat_ok = sizeof(T) == 4 ? p_.repeat <= 16 : x86::cpu_avx512vbmi();
    if (p_.repeat > 0 && repeat_ok) {
      // perm[j] lane l: input lane (kLanes j + l) / k.
      const int k = p_.repeat;
      perm_.assign(static_cast<size_t>(k) * 64, 0);  // k vectors of 64 bytes
      for (int j = 0; j < k; ++j)
        for (int l = 0; l < kLanes; ++l) {
          const int src = (kLanes * j + l) / k;
          if constexpr (sizeof(T) == 4) {
            const int32_t lane = src;
            std::memcpy(perm_.data() + 4 * (j * 16 + l), &lane, 4);
          } else {
            perm_[static_cast<size_t>(j * 64 + l)] = static_cast<uint8_t>(src);
          }
        }
      use_repeat_ = true;
    }
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const T* x = ctx.in<T>(0);
    T* y = ctx.out<T>(0);
    const int64_t rows = p_.planes * p_.out_h;
    const int64_t bytes = rows * p_.out_w * static_cast<int64_t>(sizeof(T));
    parallel_ranges(rows, threads_for(bytes, kMinBytesPerThread, ctx.num_threads),
                    [&](int64_t r0, int64_t r1, int) { run_rows(x, y, r0, r1); });
  }

 private:
  void run_rows(const T* x, T* y, int64_t begin, int64_t end) const {
    const size_t row_bytes = static_cast<size_t>(p_.out_w) * sizeof(T);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t plane = r / p_.out_h, oh = r % p_.out_h;
      const int32_t ih = p_.h_map[static_cast<size_t>(oh)];
      T* yr = y + r * p_.out_w;
      if (r > begin && oh > 0 && p_.h_map[static_cast<size_t>(oh - 1)] == ih) {
        std::memcpy(yr, yr - p_.out_w, row_bytes);
        continue;
      }
      build_row(x + (plane * p_.in_h + ih) * p_.in_w, yr);
    }
  }

  void build_row(const T* xr, T* yr) const {
    if constexpr (sizeof(T) == 4) {
      if (use_repeat_)
        repeat_row_f32(xr, yr, p_.out_w, p_.repeat, perm_.data(), one_);
      else if (p_.identity_w)
        identity_row_f32(xr, yr, p_.out_w, one_);
      else
        gather_row_f32(xr, yr, p_.w_map.data(), p_.out_w, one_);
    } else {
      if (use_repeat_)
        repeat_row_i8(xr, yr, p_.out_w, p_.repeat, perm_.data());
      else if (p_.identity_w)
        std::memcpy(yr, xr, static_cast<size_t>(p_.out_w));
      else
        gather_row_i8(xr, yr, p_.w_map.data(), p_.out_w);
    }
  }

  NearestPlan p_;
  bool use_repeat_ = false;
  std::vector<uint8_t> perm_;
  // The reference's tap weight; a member so that the compiler cannot fold 1.f * x into x.
  float one_ = 1.f;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Resize, "x86_resize_nearest_f32", kPriorityGeneral, supports_f32, ResizeNearest<float>);
ORKNN_REGISTER_KERNEL(Resize, "x86_resize_nearest_int8", kPriorityGeneral, supports_int8, ResizeNearest<int8_t>);

}  // namespace orknn
