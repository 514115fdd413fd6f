// Engines of the standalone matmul API (rknn_matmul_api.h, docs/matmul.md): what a matmul context
// asks (MatmulProblem), element access in the API's layouts, the epilogue every engine shares so
// that all round and saturate alike, and the engine registry. runtime/matmul.cc keeps the API's
// contract (validation, attributes, bindings, quantisation parameters) and runs the best
// registered engine that serves the problem: oneDNN's (kernels/onednn/matmul_api.cc) where it is
// exact, else the scalar reference (kernels/ref/matmul_api.cc), which serves everything.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "rknn_matmul_api.h"

namespace orknn {

// Element kinds of the matmul operands.
enum class MmElem { kF16, kI8, kI4, kF32, kI32, kI16, kBF16 };

struct MatmulTypeInfo {
  MmElem a, b, c;
};

// Per-platform, per-type tiling and alignment (docs/api-contract.md §5).
struct MatmulTiles {
  int a_subk = 0;     // native A: [K/a_subk, M, a_subk]
  int b_subn = 0;     // native B: [N/b_subn, K/b_subk, b_subn, b_subk]
  int b_subk = 0;
  int c_sub = 4;      // native C: [N/c_sub, M, c_sub]
  int k_segment = 0;  // native B split along K into segments of this many rows (0: never)
  int k_align = 0;    // K must be a multiple of this
  int n_align = 0;    // N must be a multiple of this
};

// Quantisation parameters of one operand (B: one per channel or per group and channel).
struct MatmulQuant {
  std::vector<float> scale{1.0f};
  std::vector<int32_t> zp{0};
};

// What a matmul context computes: its type, layouts, quantisation kinds and shapes (M, K, N per
// shape; a per-channel or per-group B keeps K and N in every shape).
struct MatmulProblem {
  rknn_matmul_info info{};
  MatmulTypeInfo types{};
  MatmulTiles tiles{};
  std::vector<rknn_matmul_shape> shapes;
};

inline bool is_int(MmElem e) { return e == MmElem::kI8 || e == MmElem::kI4; }
inline bool is_per_group(int qtype) {
  return qtype == RKNN_QUANT_TYPE_PER_GROUP_SYM || qtype == RKNN_QUANT_TYPE_PER_GROUP_ASYM;
}
inline bool is_per_layer(int qtype) {
  return qtype == RKNN_QUANT_TYPE_PER_LAYER_SYM || qtype == RKNN_QUANT_TYPE_PER_LAYER_ASYM;
}

// ---- element access ----
int read_i4(const uint8_t* p, size_t idx);
void write_i4(uint8_t* p, size_t idx, int v);
// Integer value of an int4/int8 element.
int read_int(MmElem e, const void* base, size_t idx);
float read_f16(const void* base, size_t idx);
// Linear element index of operand elements in each layout.
size_t a_index(int layout, const MatmulTiles& t, int M, int K, int m, int k);
size_t b_index(int layout, const MatmulTiles& t, int K, int N, int k, int n);
size_t c_index(int layout, const MatmulTiles& t, int M, int N, int m, int n);

// Where and how the epilogue writes C.
struct CStore {
  MmElem c;
  int layout;
  const MatmulTiles* tiles;
  int M, N;
  float sc;  // C's scale and zero point (int8/int16 C)
  int zpc;
  void* data;
};
// real: the fp32 result (float outputs, int8/int16 requantisation); exact: the int32 sum (int32 C).
void store_c(const CStore& s, int m, int n, float real, int32_t exact);

class MatmulEngine {
 public:
  virtual ~MatmulEngine() = default;
  // Computes shape `shape` of the problem on A, B, C at data[0..2] with `quant` (A, B, C) on up to
  // `threads` threads. *handled = false when this engine does not serve the configuration (the
  // next engine runs).
  virtual Status run(size_t shape, void* const data[3], const MatmulQuant quant[3], int threads, bool* handled) = 0;
};

struct MatmulEngineEntry {
  const char* name;  // OPENRKNN_DISABLE_KERNELS name
  int priority;      // KernelPriority (kernels/kernel.h)
  // The engine for `p`, or nullptr when it cannot serve p at all.
  std::unique_ptr<MatmulEngine> (*create)(const MatmulProblem& p);
};
void register_matmul_engine(const MatmulEngineEntry& e);
// The engines for p, best first; the reference engine is always the last one.
std::vector<std::unique_ptr<MatmulEngine>> create_matmul_engines(const MatmulProblem& p);

struct MatmulEngineRegistrar {
  explicit MatmulEngineRegistrar(const MatmulEngineEntry& e) { register_matmul_engine(e); }
};
#define ORKNN_REGISTER_MATMUL_ENGINE(NAME, PRIORITY, CREATE) \
  static ::orknn::MatmulEngineRegistrar kMatmulEngineReg_(::orknn::MatmulEngineEntry{NAME, PRIORITY, CREATE})

}  // namespace orknn
