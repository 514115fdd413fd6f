// RKNN_QUERY_DEVICE_MEM_INFO: fills an rknn_mem_size (the header defines no other struct for it)
// with the context's weight and internal sizes and no on-chip SRAM (docs/decisions.md).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "api/api_test_util.h"
#include "graph/ir.h"
#include "rknn_api.h"

namespace {

using api_test::Ctx;
using orknn::DType;
using orknn::Graph;

// x [1,2,4,4] -> Add(const b [1,2,4,4] fp32) -> y. The only constant is b: 32 floats = 128 bytes.
constexpr size_t kConstFloats = 2 * 4 * 4;

std::vector<uint8_t> make_add_const_model() {
  std::vector<float> b(kConstFloats);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.25f * static_cast<float>(i);
  Graph g;
  g.platform = "rk3588";
  g.precision = orknn::FloatPrecision::kFp32;
  int x = g.add_tensor("x", {1, 2, 4, 4}, DType::kF32);
  int c = g.add_const("b", {1, 2, 4, 4}, DType::kF32, b.data(), b.size() * sizeof(float));
  int y = g.add_tensor("y", {1, 2, 4, 4}, DType::kF32);
  orknn::Node add;
  add.name = "add0";
  add.op = orknn::OpId::Add;
  add.inputs = {x, c};
  add.outputs = {y};
  g.nodes = {add};
  orknn::GraphInput gi;
  gi.tensor = x;
  g.inputs = {gi};
  g.outputs = {y};
  return api_test::model_bytes(g);
}

int init(Ctx& c, std::vector<uint8_t> bytes, uint32_t flags = 0) {
  return rknn_init(&c.ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), flags, nullptr);
}

TEST(DeviceMemInfo, ReportsContextSizesAndNoSram) {
  Ctx c;
  ASSERT_EQ(init(c, make_add_const_model()), RKNN_SUCC);
  rknn_mem_size info;
  std::memset(&info, 0xAB, sizeof(info));  // every field must be written
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_DEVICE_MEM_INFO, &info, sizeof(info)), RKNN_SUCC);
  EXPECT_EQ(info.total_weight_size, kConstFloats * sizeof(float));
  EXPECT_EQ(info.total_sram_size, 0u);  // a CPU has no NPU SRAM
  EXPECT_EQ(info.free_sram_size, 0u);
  EXPECT_GE(info.total_dma_allocated_size,
            static_cast<uint64_t>(info.total_weight_size) + info.total_internal_size);
  for (uint32_t r : info.reserved) EXPECT_EQ(r, 0u);

  // Same context sizes as RKNN_QUERY_MEM_SIZE.
  rknn_mem_size ms{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms)), RKNN_SUCC);
  EXPECT_EQ(info.total_weight_size, ms.total_weight_size);
  EXPECT_EQ(info.total_internal_size, ms.total_internal_size);
  EXPECT_EQ(info.total_dma_allocated_size, ms.total_dma_allocated_size);
}

TEST(DeviceMemInfo, AnsweredByModelInfoOnlyContexts) {
  Ctx c;
  ASSERT_EQ(init(c, make_add_const_model(), RKNN_FLAG_COLLECT_MODEL_INFO_ONLY), RKNN_SUCC);
  rknn_mem_size info{};
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_DEVICE_MEM_INFO, &info, sizeof(info)), RKNN_SUCC);
  EXPECT_EQ(info.total_weight_size, kConstFloats * sizeof(float));
  EXPECT_EQ(info.total_sram_size, 0u);
}

TEST(DeviceMemInfo, RejectsShortBufferNullAndBadContext) {
  Ctx c;
  ASSERT_EQ(init(c, make_add_const_model()), RKNN_SUCC);
  rknn_mem_size info{};
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_DEVICE_MEM_INFO, &info, sizeof(info) - 1), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_DEVICE_MEM_INFO, nullptr, sizeof(info)), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_query(0, RKNN_QUERY_DEVICE_MEM_INFO, &info, sizeof(info)), RKNN_ERR_CTX_INVALID);
}

}  // namespace
