// A real converted model (PP-OCR text-orientation classifier), mutated at random with a fixed seed,
// goes through the whole public path: rknn_init (loader, verifier, planner, kernel preparation
// including oneDNN primitives), and when that accepts it, inputs_set, run, outputs_get, release,
// destroy. Every mutation must be refused with RKNN_ERR_MODEL_INVALID (or MALLOC_FAIL) or run to the
// end; nothing may crash. Run under AddressSanitizer to see out-of-bounds reads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "model/model_io.h"
#include "rknn_api.h"

namespace orknn {
namespace {

std::string cls_model_path() {
  const char* env = std::getenv("ORKNN_MODELS_DIR");
  std::string dir = env && *env ? env : std::string(ORKNN_SOURCE_DIR) + "/tests/models/work";
  return dir + "/ppocr_cls.onnx";
}

// Runs one inference on an accepted model; returns false when a call fails (allowed) after
// checking that the failure is a documented error code.
void exercise(rknn_context ctx) {
  rknn_input_output_num io{};
  ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_SUCC);
  std::vector<rknn_input> ins(io.n_input);
  std::vector<std::vector<float>> bufs(io.n_input);
  for (uint32_t i = 0; i < io.n_input; ++i) {
    rknn_tensor_attr a{};
    a.index = i;
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)), RKNN_SUCC);
    bufs[i].assign(a.n_elems, 0.25f);
    ins[i] = rknn_input{};
    ins[i].index = i;
    ins[i].buf = bufs[i].data();
    ins[i].size = a.n_elems * 4;
    ins[i].type = RKNN_TENSOR_FLOAT32;
    ins[i].fmt = RKNN_TENSOR_NCHW;
  }
  if (io.n_input == 0 || rknn_inputs_set(ctx, io.n_input, ins.data()) != RKNN_SUCC) return;
  ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
  if (io.n_output == 0) return;
  std::vector<rknn_output> outs(io.n_output);
  for (auto& o : outs) { o = rknn_output{}; o.want_float = 1; }
  ASSERT_EQ(rknn_outputs_get(ctx, io.n_output, outs.data(), nullptr), RKNN_SUCC);
  EXPECT_EQ(rknn_outputs_release(ctx, io.n_output, outs.data()), RKNN_SUCC);
}

TEST(HostileModel, MutatedRealModelIsRefusedOrRunsWithoutCrashing) {
  const std::string path = cls_model_path();
  ASSERT_TRUE(std::ifstream(path).good()) << path << " missing: run scripts/prepare_test_models.sh";
  ConvertOptions opts;
  opts.input_shapes["x"] = {1, 3, 48, 192};
  Graph g;
  Status st = convert_onnx(path, opts, &g);
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<uint8_t> model;
  st = write_model(g, &model);
  ASSERT_TRUE(st.ok()) << st.message();

  // The metadata (size-prefixed FlatBuffer) is the interesting part; the 64-byte aligned weight
  // section after it is plain data. Nine mutations in ten land in the metadata.
  uint32_t fb_size = 0;
  std::memcpy(&fb_size, model.data(), 4);
  const size_t meta = std::min<size_t>(model.size(), size_t{fb_size} + 4);
  const int iters = std::getenv("ORKNN_HOSTILE_ITERS") ? std::atoi(std::getenv("ORKNN_HOSTILE_ITERS")) : 200;
  std::mt19937 rng(20261130);
  int accepted = 0, refused = 0;
  for (int it = 0; it < iters; ++it) {
    std::vector<uint8_t> m = model;
    const int n_mut = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n_mut; ++k) {
      size_t span = (rng() % 10) ? meta : m.size();
      size_t pos = rng() % span;
      switch (rng() % 4) {
        case 0: m[pos] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: m[pos] = static_cast<uint8_t>(rng()); break;
        case 2: {  // a 32-bit value, often a small or boundary integer
          const uint32_t vals[] = {0u, 1u, 0xffffffffu, 0x7fffffffu, 0x80000000u, 64u, static_cast<uint32_t>(rng())};
          uint32_t v = vals[rng() % 7];
          if (pos + 4 <= m.size()) std::memcpy(&m[pos], &v, 4);
          break;
        }
        default: m.resize(pos + 1); break;  // truncation
      }
    }
    rknn_context ctx = 0;
    int ret = rknn_init(&ctx, m.data(), static_cast<uint32_t>(m.size()), 0, nullptr);
    if (ret == RKNN_SUCC) {
      ++accepted;
      exercise(ctx);
      EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    } else {
      ++refused;
      EXPECT_TRUE(ret == RKNN_ERR_MODEL_INVALID || ret == RKNN_ERR_MALLOC_FAIL) << "iteration " << it << ": " << ret;
      EXPECT_EQ(ctx, 0u);
    }
  }
  std::printf("hostile model: %d mutations refused, %d accepted and run\n", refused, accepted);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace orknn
