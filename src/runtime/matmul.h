// Standalone matmul of rknn_matmul_api.h (docs/matmul.md): operand descriptions per platform,
// layouts (NORM, TP_NORM, NATIVE tiles with K segments), quantisation of A/B/C, bindings. The
// computation is done by the engines the kernel registry offers (kernels/matmul_engine.h: oneDNN's
// where it is exact, the scalar reference everywhere else). The extern "C" entry points and the
// handle table live in src/api/rknn_matmul_api.cc.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "kernels/matmul_engine.h"
#include "rknn_matmul_api.h"

namespace orknn {

// Element kinds of A, B, C for an rknn_matmul_type value; error for unknown values.
Status matmul_type_info(int type, MatmulTypeInfo* out);

// Platform the matmul API emulates: $OPENRKNN_MATMUL_PLATFORM (default "rk3588"), lower case.
std::string matmul_platform();

// Tiles for `info->type` on `platform`; error naming the platform/type when unsupported.
Status matmul_tiles(const std::string& platform, const rknn_matmul_info& info, MatmulTiles* out);

// Validates info + (M, K, N) on `platform` and fills the operand attributes.
Status matmul_describe(const std::string& platform, const rknn_matmul_info& info, int M, int K, int N,
                       rknn_matmul_io_attr* out);

// rknn_B_normal_layout_to_native_layout: row-major [K, N] -> native B (with K segments).
Status matmul_b_normal_to_native(const std::string& platform, const void* src, void* dst, int K, int N,
                                 const rknn_matmul_info& info);

class MatmulContext {
 public:
  MatmulContext() = default;
  static Status create(const rknn_matmul_info& info, const std::vector<rknn_matmul_shape>& shapes,
                       std::unique_ptr<MatmulContext>* out, std::vector<rknn_matmul_io_attr>* attrs);

  Status set_io_mem(rknn_tensor_mem* mem, const rknn_matmul_tensor_attr* attr);
  // Returns kFail when the platform has a single core (the vendor returns -1 there).
  Status set_core_mask(int mask);
  Status set_quant_params(const rknn_quant_params* params);
  Status get_quant_params(rknn_quant_params* params, float* scale);
  Status set_dynamic_shape(const rknn_matmul_shape* shape);
  Status run();

  MatmulContext(const MatmulContext&) = delete;
  MatmulContext& operator=(const MatmulContext&) = delete;

 private:
  struct Binding {
    rknn_tensor_mem* mem = nullptr;
    uint64_t serial = 0;
  };

  rknn_matmul_info info_{};
  std::string platform_;
  MatmulTypeInfo types_{};
  MatmulTiles tiles_{};
  std::vector<rknn_matmul_shape> shapes_;
  std::vector<rknn_matmul_io_attr> attrs_;
  size_t current_ = 0;
  Binding bind_[3];       // A, B, C
  MatmulQuant quant_[3];  // A, B, C
  int threads_ = 1;
  // The registry's engines for this context, best first (kernels/matmul_engine.h); a run takes
  // the first that serves it.
  std::vector<std::unique_ptr<MatmulEngine>> engines_;
};

}  // namespace orknn
