// Helpers shared by the C API tests: models built from the IR and a context that is destroyed
// at the end of its scope.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "graph/ir.h"
#include "model/model_io.h"
#include "rknn_api.h"

namespace api_test {

// The .rknn bytes of graph g (a failed write fails the calling test).
inline std::vector<uint8_t> model_bytes(const orknn::Graph& g) {
  std::vector<uint8_t> bytes;
  orknn::Status st = orknn::write_model(g, &bytes);
  EXPECT_TRUE(st.ok()) << st.message();
  return bytes;
}

// A context handle destroyed with its scope.
struct Ctx {
  rknn_context ctx = 0;
  Ctx() = default;
  Ctx(const Ctx&) = delete;  // one owner per handle
  Ctx& operator=(const Ctx&) = delete;
  ~Ctx() { if (ctx) rknn_destroy(ctx); }
};

}  // namespace api_test
