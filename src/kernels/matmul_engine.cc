#include "kernels/matmul_engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/fp16.h"
#include "kernels/kernel.h"

namespace orknn {
namespace {

std::vector<MatmulEngineEntry>& entries() {
  static std::vector<MatmulEngineEntry> e;  // filled by static registrars before main()
  return e;
}

uint16_t fp32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  const uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

}  // namespace

int read_i4(const uint8_t* p, size_t idx) {
  const int nib = (idx & 1) ? (p[idx >> 1] >> 4) : (p[idx >> 1] & 0xF);
  return nib >= 8 ? nib - 16 : nib;
}
void write_i4(uint8_t* p, size_t idx, int v) {
  uint8_t& b = p[idx >> 1];
  const uint8_t nib = static_cast<uint8_t>(v) & 0xF;
  b = (idx & 1) ? static_cast<uint8_t>((b & 0x0F) | (nib << 4)) : static_cast<uint8_t>((b & 0xF0) | nib);
}
int read_int(MmElem e, const void* base, size_t idx) {
  if (e == MmElem::kI4) return read_i4(static_cast<const uint8_t*>(base), idx);
  return static_cast<const int8_t*>(base)[idx];
}
float read_f16(const void* base, size_t idx) { return fp16_to_fp32(static_cast<const uint16_t*>(base)[idx]); }

size_t a_index(int layout, const MatmulTiles& t, int M, int K, int m, int k) {
  if (layout == RKNN_MM_LAYOUT_NATIVE)
    return (static_cast<size_t>(k / t.a_subk) * M + m) * t.a_subk + k % t.a_subk;
  return static_cast<size_t>(m) * K + k;
}
size_t b_index(int layout, const MatmulTiles& t, int K, int N, int k, int n) {
  if (layout == RKNN_MM_LAYOUT_TP_NORM) return static_cast<size_t>(n) * K + k;
  if (layout == RKNN_MM_LAYOUT_NATIVE) {
    const int seg_rows = (t.k_segment > 0 && K > t.k_segment) ? t.k_segment : K;
    const int k0 = (k / seg_rows) * seg_rows;
    const int ks = std::min(seg_rows, K - k0);
    const int kk = k - k0;
    const size_t tile = static_cast<size_t>(t.b_subn) * t.b_subk;
    return static_cast<size_t>(k0) * N +
           (static_cast<size_t>(n / t.b_subn) * (ks / t.b_subk) + kk / t.b_subk) * tile +
           static_cast<size_t>(n % t.b_subn) * t.b_subk + kk % t.b_subk;
  }
  return static_cast<size_t>(k) * N + n;
}
size_t c_index(int layout, const MatmulTiles& t, int M, int N, int m, int n) {
  if (layout == RKNN_MM_LAYOUT_NATIVE) return (static_cast<size_t>(n / t.c_sub) * M + m) * t.c_sub + n % t.c_sub;
  return static_cast<size_t>(m) * N + n;
}

void store_c(const CStore& s, int m, int n, float real, int32_t exact) {
  const size_t ci = c_index(s.layout, *s.tiles, s.M, s.N, m, n);
  switch (s.c) {
    case MmElem::kF32: static_cast<float*>(s.data)[ci] = real; break;
    case MmElem::kF16: static_cast<uint16_t*>(s.data)[ci] = fp32_to_fp16(real); break;
    case MmElem::kBF16: static_cast<uint16_t*>(s.data)[ci] = fp32_to_bf16(real); break;
    case MmElem::kI32: static_cast<int32_t*>(s.data)[ci] = exact; break;
    case MmElem::kI8:
    case MmElem::kI16: {
      const float lo = s.c == MmElem::kI8 ? -128.0f : -32768.0f;
      const float hi = s.c == MmElem::kI8 ? 127.0f : 32767.0f;
      float q = std::nearbyint(real / s.sc) + static_cast<float>(s.zpc);
      q = std::min(hi, std::max(lo, q));
      if (s.c == MmElem::kI8) static_cast<int8_t*>(s.data)[ci] = static_cast<int8_t>(q);
      else static_cast<int16_t*>(s.data)[ci] = static_cast<int16_t>(q);
      break;
    }
    default: break;
  }
}

void register_matmul_engine(const MatmulEngineEntry& e) { entries().push_back(e); }

std::vector<std::unique_ptr<MatmulEngine>> create_matmul_engines(const MatmulProblem& p) {
  std::vector<const MatmulEngineEntry*> order;
  for (const MatmulEngineEntry& e : entries()) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(),
                   [](const MatmulEngineEntry* a, const MatmulEngineEntry* b) { return a->priority > b->priority; });
  std::vector<std::unique_ptr<MatmulEngine>> engines;
  for (const MatmulEngineEntry* e : order) {
    if (e->priority > kPriorityReference && (reference_kernels_only() || kernel_disabled(e->name))) continue;
    if (std::unique_ptr<MatmulEngine> engine = e->create(p)) engines.push_back(std::move(engine));
  }
  return engines;
}

}  // namespace orknn
