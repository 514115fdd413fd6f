// Binary-compatibility checks of the public headers against the API contract
// (docs/api-contract.md sections 1 and 2). Every expected number below is typed in from the
// contract tables, never derived from the headers, so a header edit that moves a field, resizes a
// type or renumbers an enumerator fails here.
//
// Layout expectations are for LP64 (x86-64, aarch64), where the contract's offsets were measured.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include <gtest/gtest.h>

#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

namespace {

constexpr bool kIsLp64 = sizeof(void*) == 8 && sizeof(long) == 8;

// Checks one field: exact declared type, offset in bytes, and size in bytes.
#define EXPECT_FIELD(Struct, field, Type, offset, size)                                      \
  do {                                                                                       \
    EXPECT_TRUE((std::is_same<decltype(Struct::field), Type>::value))                        \
        << #Struct "::" #field " is not declared as " #Type;                                 \
    EXPECT_EQ(offsetof(Struct, field), static_cast<size_t>(offset)) << #Struct "::" #field; \
    EXPECT_EQ(sizeof(Struct::field), static_cast<size_t>(size)) << #Struct "::" #field;     \
  } while (0)

#define EXPECT_STRUCT_SIZE(Struct, size) \
  EXPECT_EQ(sizeof(Struct), static_cast<size_t>(size)) << "sizeof(" #Struct ")"

#define SKIP_UNLESS_LP64() \
  if (!kIsLp64) GTEST_SKIP() << "layout expectations are for LP64 targets"

// ------------------------------------------------------------------------------------------------
// rknn_api.h: scalar types
// ------------------------------------------------------------------------------------------------

TEST(AbiTypes, ContextHandleWidthFollowsArchitecture) {
#ifdef __arm__
  EXPECT_TRUE((std::is_same<rknn_context, uint32_t>::value));
#else
  EXPECT_TRUE((std::is_same<rknn_context, uint64_t>::value));
#endif
  EXPECT_TRUE((std::is_same<rknn_matmul_ctx, rknn_context>::value));
#ifdef __arm__
  EXPECT_TRUE((std::is_same<rknn_custom_op_interal_context, uint32_t>::value));
#else
  EXPECT_TRUE((std::is_same<rknn_custom_op_interal_context, uint64_t>::value));
#endif
}

TEST(AbiTypes, EveryEnumIsFourBytes) {
  EXPECT_EQ(sizeof(rknn_query_cmd), 4u);
  EXPECT_EQ(sizeof(rknn_tensor_type), 4u);
  EXPECT_EQ(sizeof(rknn_tensor_qnt_type), 4u);
  EXPECT_EQ(sizeof(rknn_tensor_format), 4u);
  EXPECT_EQ(sizeof(rknn_core_mask), 4u);
  EXPECT_EQ(sizeof(rknn_tensor_mem_flags), 4u);
  EXPECT_EQ(sizeof(rknn_mem_alloc_flags), 4u);
  EXPECT_EQ(sizeof(rknn_mem_sync_mode), 4u);
  EXPECT_EQ(sizeof(rknn_matmul_quant_type), 4u);
  EXPECT_EQ(sizeof(rknn_matmul_type), 4u);
  EXPECT_EQ(sizeof(rknn_matmul_layout), 4u);
  EXPECT_EQ(sizeof(rknn_target_type), 4u);
}

// ------------------------------------------------------------------------------------------------
// rknn_api.h: defines
// ------------------------------------------------------------------------------------------------

TEST(AbiDefines, InitFlags) {
  EXPECT_EQ(RKNN_FLAG_PRIOR_HIGH, 0x0);
  EXPECT_EQ(RKNN_FLAG_PRIOR_MEDIUM, 0x1);
  EXPECT_EQ(RKNN_FLAG_PRIOR_LOW, 0x2);
  EXPECT_EQ(RKNN_FLAG_ASYNC_MASK, 0x4);
  EXPECT_EQ(RKNN_FLAG_COLLECT_PERF_MASK, 0x8);
  EXPECT_EQ(RKNN_FLAG_MEM_ALLOC_OUTSIDE, 0x10);
  EXPECT_EQ(RKNN_FLAG_SHARE_WEIGHT_MEM, 0x20);
  EXPECT_EQ(RKNN_FLAG_FENCE_IN_OUTSIDE, 0x40);
  EXPECT_EQ(RKNN_FLAG_FENCE_OUT_OUTSIDE, 0x80);
  EXPECT_EQ(RKNN_FLAG_COLLECT_MODEL_INFO_ONLY, 0x100);
  EXPECT_EQ(RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE, 0x200);
  EXPECT_EQ(RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU, 0x400);
  EXPECT_EQ(RKNN_FLAG_ENABLE_SRAM, 0x800);
  EXPECT_EQ(RKNN_FLAG_SHARE_SRAM, 0x1000);
  EXPECT_EQ(RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, 0x2000);
  EXPECT_EQ(RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE, 0x4000);
  EXPECT_EQ(RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE, 0x8000);
  EXPECT_EQ(RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, 0x10000);
  EXPECT_EQ(RKNN_MEM_FLAG_ALLOC_NO_CONTEXT, 0x20000);
}

TEST(AbiDefines, ErrorCodes) {
  EXPECT_EQ(RKNN_SUCC, 0);
  EXPECT_EQ(RKNN_SUCCESS, 0);
  EXPECT_EQ(RKNN_ERR_FAIL, -1);
  EXPECT_EQ(RKNN_ERR_TIMEOUT, -2);
  EXPECT_EQ(RKNN_ERR_DEVICE_UNAVAILABLE, -3);
  EXPECT_EQ(RKNN_ERR_MALLOC_FAIL, -4);
  EXPECT_EQ(RKNN_ERR_PARAM_INVALID, -5);
  EXPECT_EQ(RKNN_ERR_MODEL_INVALID, -6);
  EXPECT_EQ(RKNN_ERR_CTX_INVALID, -7);
  EXPECT_EQ(RKNN_ERR_INPUT_INVALID, -8);
  EXPECT_EQ(RKNN_ERR_OUTPUT_INVALID, -9);
  EXPECT_EQ(RKNN_ERR_DEVICE_UNMATCH, -10);
  EXPECT_EQ(RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL, -11);
  EXPECT_EQ(RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION, -12);
  EXPECT_EQ(RKNN_ERR_TARGET_PLATFORM_UNMATCH, -13);
  EXPECT_EQ(RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE, -14);
}

TEST(AbiDefines, Limits) {
  EXPECT_EQ(RKNN_MAX_DIMS, 16);
  EXPECT_EQ(RKNN_MAX_NUM_CHANNEL, 15);
  EXPECT_EQ(RKNN_MAX_NAME_LEN, 256);
  EXPECT_EQ(RKNN_MAX_DYNAMIC_SHAPE_NUM, 512);
  EXPECT_EQ(RKNN_CUSTOM_OP_MAX_STR_LEN, 64);
  EXPECT_EQ(RKNN_CUSTOM_OP_MAX_VALUE_LEN, 32);
}

// ------------------------------------------------------------------------------------------------
// rknn_api.h: enums
// ------------------------------------------------------------------------------------------------

TEST(AbiEnums, QueryCmd) {
  EXPECT_EQ(RKNN_QUERY_IN_OUT_NUM, 0);
  EXPECT_EQ(RKNN_QUERY_INPUT_ATTR, 1);
  EXPECT_EQ(RKNN_QUERY_OUTPUT_ATTR, 2);
  EXPECT_EQ(RKNN_QUERY_PERF_DETAIL, 3);
  EXPECT_EQ(RKNN_QUERY_PERF_RUN, 4);
  EXPECT_EQ(RKNN_QUERY_SDK_VERSION, 5);
  EXPECT_EQ(RKNN_QUERY_MEM_SIZE, 6);
  EXPECT_EQ(RKNN_QUERY_CUSTOM_STRING, 7);
  EXPECT_EQ(RKNN_QUERY_NATIVE_INPUT_ATTR, 8);
  EXPECT_EQ(RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR, 8);
  EXPECT_EQ(RKNN_QUERY_NATIVE_OUTPUT_ATTR, 9);
  EXPECT_EQ(RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR, 9);
  EXPECT_EQ(RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR, 10);
  EXPECT_EQ(RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, 11);
  EXPECT_EQ(RKNN_QUERY_DEVICE_MEM_INFO, 12);
  EXPECT_EQ(RKNN_QUERY_INPUT_DYNAMIC_RANGE, 13);
  EXPECT_EQ(RKNN_QUERY_CURRENT_INPUT_ATTR, 14);
  EXPECT_EQ(RKNN_QUERY_CURRENT_OUTPUT_ATTR, 15);
  EXPECT_EQ(RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR, 16);
  EXPECT_EQ(RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR, 17);
  EXPECT_EQ(RKNN_QUERY_CMD_MAX, 18);
}

TEST(AbiEnums, TensorType) {
  EXPECT_EQ(RKNN_TENSOR_FLOAT32, 0);
  EXPECT_EQ(RKNN_TENSOR_FLOAT16, 1);
  EXPECT_EQ(RKNN_TENSOR_INT8, 2);
  EXPECT_EQ(RKNN_TENSOR_UINT8, 3);
  EXPECT_EQ(RKNN_TENSOR_INT16, 4);
  EXPECT_EQ(RKNN_TENSOR_UINT16, 5);
  EXPECT_EQ(RKNN_TENSOR_INT32, 6);
  EXPECT_EQ(RKNN_TENSOR_UINT32, 7);
  EXPECT_EQ(RKNN_TENSOR_INT64, 8);
  EXPECT_EQ(RKNN_TENSOR_BOOL, 9);
  EXPECT_EQ(RKNN_TENSOR_INT4, 10);
  EXPECT_EQ(RKNN_TENSOR_BFLOAT16, 11);
  EXPECT_EQ(RKNN_TENSOR_TYPE_MAX, 12);
}

TEST(AbiEnums, QntTypeAndFormat) {
  EXPECT_EQ(RKNN_TENSOR_QNT_NONE, 0);
  EXPECT_EQ(RKNN_TENSOR_QNT_DFP, 1);
  EXPECT_EQ(RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC, 2);
  EXPECT_EQ(RKNN_TENSOR_QNT_MAX, 3);

  EXPECT_EQ(RKNN_TENSOR_NCHW, 0);
  EXPECT_EQ(RKNN_TENSOR_NHWC, 1);
  EXPECT_EQ(RKNN_TENSOR_NC1HWC2, 2);
  EXPECT_EQ(RKNN_TENSOR_UNDEFINED, 3);
  EXPECT_EQ(RKNN_TENSOR_FORMAT_MAX, 4);
}

TEST(AbiEnums, CoreMask) {
  EXPECT_EQ(RKNN_NPU_CORE_AUTO, 0);
  EXPECT_EQ(RKNN_NPU_CORE_0, 1);
  EXPECT_EQ(RKNN_NPU_CORE_1, 2);
  EXPECT_EQ(RKNN_NPU_CORE_2, 4);
  EXPECT_EQ(RKNN_NPU_CORE_0_1, 3);
  EXPECT_EQ(RKNN_NPU_CORE_0_1_2, 7);
  EXPECT_EQ(RKNN_NPU_CORE_ALL, 0xffff);
  EXPECT_EQ(RKNN_NPU_CORE_UNDEFINED, 0x10000);
}

TEST(AbiEnums, MemoryFlagsAndSync) {
  EXPECT_EQ(RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, 1);
  EXPECT_EQ(RKNN_TENSOR_MEMORY_FLAGS_FROM_FD, 2);
  EXPECT_EQ(RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS, 3);
  EXPECT_EQ(RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN, 4);

  EXPECT_EQ(RKNN_FLAG_MEMORY_FLAGS_DEFAULT, 0);
  EXPECT_EQ(RKNN_FLAG_MEMORY_CACHEABLE, 1);
  EXPECT_EQ(RKNN_FLAG_MEMORY_NON_CACHEABLE, 2);
  EXPECT_EQ(RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM, 4);
  EXPECT_EQ(RKNN_FLAG_MEMORY_FLAGS_CACHEABLE, 1);
  EXPECT_EQ(RKNN_FLAG_MEMORY_FLAGS_NON_CACHEABLE, 2);
  EXPECT_EQ(RKNN_FLAG_MEMORY_FLAGS_TRY_ALLOC_SRAM, 4);

  EXPECT_EQ(RKNN_MEMORY_SYNC_TO_DEVICE, 1);
  EXPECT_EQ(RKNN_MEMORY_SYNC_FROM_DEVICE, 2);
  EXPECT_EQ(RKNN_MEMORY_SYNC_BIDIRECTIONAL, 3);
}

// ------------------------------------------------------------------------------------------------
// rknn_api.h: inline helpers
// ------------------------------------------------------------------------------------------------

TEST(AbiHelpers, TypeStrings) {
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_FLOAT32), "FP32");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_FLOAT16), "FP16");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_INT8), "INT8");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_UINT8), "UINT8");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_INT16), "INT16");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_UINT16), "UINT16");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_INT32), "INT32");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_UINT32), "UINT32");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_INT64), "INT64");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_BOOL), "BOOL");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_INT4), "INT4");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_BFLOAT16), "BF16");
  EXPECT_STREQ(get_type_string(RKNN_TENSOR_TYPE_MAX), "UNKNOW");
  EXPECT_STREQ(get_type_string(static_cast<rknn_tensor_type>(1000)), "UNKNOW");
}

TEST(AbiHelpers, QntTypeStrings) {
  EXPECT_STREQ(get_qnt_type_string(RKNN_TENSOR_QNT_NONE), "NONE");
  EXPECT_STREQ(get_qnt_type_string(RKNN_TENSOR_QNT_DFP), "DFP");
  EXPECT_STREQ(get_qnt_type_string(RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC), "AFFINE");
  EXPECT_STREQ(get_qnt_type_string(RKNN_TENSOR_QNT_MAX), "UNKNOW");
}

TEST(AbiHelpers, FormatStrings) {
  EXPECT_STREQ(get_format_string(RKNN_TENSOR_NCHW), "NCHW");
  EXPECT_STREQ(get_format_string(RKNN_TENSOR_NHWC), "NHWC");
  EXPECT_STREQ(get_format_string(RKNN_TENSOR_NC1HWC2), "NC1HWC2");
  EXPECT_STREQ(get_format_string(RKNN_TENSOR_UNDEFINED), "UNDEFINED");
  EXPECT_STREQ(get_format_string(RKNN_TENSOR_FORMAT_MAX), "UNKNOW");
}

TEST(AbiHelpers, MatmulTypeStrings) {
  // Every named type has a distinct, non-default name; 15 deliberately falls to the default.
  const rknn_matmul_type named[] = {
      RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, RKNN_INT8_MM_INT8_TO_INT32,
      RKNN_INT8_MM_INT8_TO_INT8,          RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16,
      RKNN_FLOAT16_MM_INT8_TO_FLOAT32,    RKNN_FLOAT16_MM_INT8_TO_FLOAT16,
      RKNN_FLOAT16_MM_INT4_TO_FLOAT32,    RKNN_FLOAT16_MM_INT4_TO_FLOAT16,
      RKNN_INT8_MM_INT8_TO_FLOAT32,       RKNN_INT4_MM_INT4_TO_INT16,
      RKNN_INT8_MM_INT4_TO_INT32,         RKNN_FLOAT16_MM_INT4_TO_BFLOAT16};
  for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); ++i) {
    const char* name = get_matmul_type_string(named[i]);
    ASSERT_NE(name, nullptr);
    EXPECT_STRNE(name, "UNKNOW") << "type " << named[i];
    for (size_t j = 0; j < i; ++j) EXPECT_STRNE(name, get_matmul_type_string(named[j]));
  }
  EXPECT_STREQ(get_matmul_type_string(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32),
               "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32");
  EXPECT_STREQ(get_matmul_type_string(RKNN_INT8_MM_INT8_TO_INT32), "RKNN_INT8_MM_INT8_TO_INT32");
  EXPECT_STREQ(get_matmul_type_string(RKNN_INT8_MM_INT4_TO_FLOAT16), "UNKNOW");
  EXPECT_STREQ(get_matmul_type_string(static_cast<rknn_matmul_type>(0)), "UNKNOW");
}

// ------------------------------------------------------------------------------------------------
// rknn_api.h: struct layouts
// ------------------------------------------------------------------------------------------------

TEST(AbiLayout, InputOutputNum) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_input_output_num, 8);
  EXPECT_FIELD(rknn_input_output_num, n_input, uint32_t, 0, 4);
  EXPECT_FIELD(rknn_input_output_num, n_output, uint32_t, 4, 4);
}

TEST(AbiLayout, TensorAttr) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_tensor_attr, 376);
  EXPECT_FIELD(rknn_tensor_attr, index, uint32_t, 0, 4);
  EXPECT_FIELD(rknn_tensor_attr, n_dims, uint32_t, 4, 4);
  EXPECT_FIELD(rknn_tensor_attr, dims, uint32_t[16], 8, 64);
  EXPECT_FIELD(rknn_tensor_attr, name, char[256], 72, 256);
  EXPECT_FIELD(rknn_tensor_attr, n_elems, uint32_t, 328, 4);
  EXPECT_FIELD(rknn_tensor_attr, size, uint32_t, 332, 4);
  EXPECT_FIELD(rknn_tensor_attr, fmt, rknn_tensor_format, 336, 4);
  EXPECT_FIELD(rknn_tensor_attr, type, rknn_tensor_type, 340, 4);
  EXPECT_FIELD(rknn_tensor_attr, qnt_type, rknn_tensor_qnt_type, 344, 4);
  EXPECT_FIELD(rknn_tensor_attr, fl, int8_t, 348, 1);
  EXPECT_FIELD(rknn_tensor_attr, zp, int32_t, 352, 4);
  EXPECT_FIELD(rknn_tensor_attr, scale, float, 356, 4);
  EXPECT_FIELD(rknn_tensor_attr, w_stride, uint32_t, 360, 4);
  EXPECT_FIELD(rknn_tensor_attr, size_with_stride, uint32_t, 364, 4);
  EXPECT_FIELD(rknn_tensor_attr, pass_through, uint8_t, 368, 1);
  EXPECT_FIELD(rknn_tensor_attr, h_stride, uint32_t, 372, 4);
}

TEST(AbiLayout, InputRange) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_input_range, 33040);
  EXPECT_FIELD(rknn_input_range, index, uint32_t, 0, 4);
  EXPECT_FIELD(rknn_input_range, shape_number, uint32_t, 4, 4);
  EXPECT_FIELD(rknn_input_range, fmt, rknn_tensor_format, 8, 4);
  EXPECT_FIELD(rknn_input_range, name, char[256], 12, 256);
  EXPECT_FIELD(rknn_input_range, dyn_range, uint32_t[512][16], 268, 512 * 16 * 4);
  EXPECT_FIELD(rknn_input_range, n_dims, uint32_t, 33036, 4);
}

TEST(AbiLayout, PerfAndVersionStructs) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_perf_detail, 16);
  EXPECT_FIELD(rknn_perf_detail, perf_data, char*, 0, 8);
  EXPECT_FIELD(rknn_perf_detail, data_len, uint64_t, 8, 8);

  EXPECT_STRUCT_SIZE(rknn_perf_run, 8);
  EXPECT_FIELD(rknn_perf_run, run_duration, int64_t, 0, 8);

  EXPECT_STRUCT_SIZE(rknn_sdk_version, 512);
  EXPECT_FIELD(rknn_sdk_version, api_version, char[256], 0, 256);
  EXPECT_FIELD(rknn_sdk_version, drv_version, char[256], 256, 256);

  EXPECT_STRUCT_SIZE(rknn_custom_string, 1024);
  EXPECT_FIELD(rknn_custom_string, string, char[1024], 0, 1024);
}

TEST(AbiLayout, MemSize) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_mem_size, 64);
  EXPECT_FIELD(rknn_mem_size, total_weight_size, uint32_t, 0, 4);
  EXPECT_FIELD(rknn_mem_size, total_internal_size, uint32_t, 4, 4);
  EXPECT_FIELD(rknn_mem_size, total_dma_allocated_size, uint64_t, 8, 8);
  EXPECT_FIELD(rknn_mem_size, total_sram_size, uint32_t, 16, 4);
  EXPECT_FIELD(rknn_mem_size, free_sram_size, uint32_t, 20, 4);
  EXPECT_FIELD(rknn_mem_size, reserved, uint32_t[10], 24, 40);
}

TEST(AbiLayout, TensorMem) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_tensor_mem, 40);
  EXPECT_FIELD(rknn_tensor_mem, virt_addr, void*, 0, 8);
  EXPECT_FIELD(rknn_tensor_mem, phys_addr, uint64_t, 8, 8);
  EXPECT_FIELD(rknn_tensor_mem, fd, int32_t, 16, 4);
  EXPECT_FIELD(rknn_tensor_mem, offset, int32_t, 20, 4);
  EXPECT_FIELD(rknn_tensor_mem, size, uint32_t, 24, 4);
  EXPECT_FIELD(rknn_tensor_mem, flags, uint32_t, 28, 4);
  EXPECT_FIELD(rknn_tensor_mem, priv_data, void*, 32, 8);
}

TEST(AbiLayout, InputAndOutput) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_input, 32);
  EXPECT_FIELD(rknn_input, index, uint32_t, 0, 4);
  EXPECT_FIELD(rknn_input, buf, void*, 8, 8);
  EXPECT_FIELD(rknn_input, size, uint32_t, 16, 4);
  EXPECT_FIELD(rknn_input, pass_through, uint8_t, 20, 1);
  EXPECT_FIELD(rknn_input, type, rknn_tensor_type, 24, 4);
  EXPECT_FIELD(rknn_input, fmt, rknn_tensor_format, 28, 4);

  EXPECT_STRUCT_SIZE(rknn_output, 24);
  EXPECT_FIELD(rknn_output, want_float, uint8_t, 0, 1);
  EXPECT_FIELD(rknn_output, is_prealloc, uint8_t, 1, 1);
  EXPECT_FIELD(rknn_output, index, uint32_t, 4, 4);
  EXPECT_FIELD(rknn_output, buf, void*, 8, 8);
  EXPECT_FIELD(rknn_output, size, uint32_t, 16, 4);
}

TEST(AbiLayout, ExtendStructs) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_init_extend, 136);
  EXPECT_FIELD(rknn_init_extend, ctx, rknn_context, 0, 8);
  EXPECT_FIELD(rknn_init_extend, real_model_offset, int32_t, 8, 4);
  EXPECT_FIELD(rknn_init_extend, real_model_size, uint32_t, 12, 4);
  EXPECT_FIELD(rknn_init_extend, model_buffer_fd, int32_t, 16, 4);
  EXPECT_FIELD(rknn_init_extend, model_buffer_flags, uint32_t, 20, 4);
  EXPECT_FIELD(rknn_init_extend, reserved, uint8_t[112], 24, 112);

  EXPECT_STRUCT_SIZE(rknn_run_extend, 24);
  EXPECT_FIELD(rknn_run_extend, frame_id, uint64_t, 0, 8);
  EXPECT_FIELD(rknn_run_extend, non_block, int32_t, 8, 4);
  EXPECT_FIELD(rknn_run_extend, timeout_ms, int32_t, 12, 4);
  EXPECT_FIELD(rknn_run_extend, fence_fd, int32_t, 16, 4);

  EXPECT_STRUCT_SIZE(rknn_output_extend, 8);
  EXPECT_FIELD(rknn_output_extend, frame_id, uint64_t, 0, 8);
}

// ------------------------------------------------------------------------------------------------
// rknn_matmul_api.h
// ------------------------------------------------------------------------------------------------

TEST(AbiMatmul, Enums) {
  EXPECT_EQ(RKNN_QUANT_TYPE_PER_LAYER_SYM, 0);
  EXPECT_EQ(RKNN_QUANT_TYPE_PER_LAYER_ASYM, 1);
  EXPECT_EQ(RKNN_QUANT_TYPE_PER_CHANNEL_SYM, 2);
  EXPECT_EQ(RKNN_QUANT_TYPE_PER_CHANNEL_ASYM, 3);
  EXPECT_EQ(RKNN_QUANT_TYPE_PER_GROUP_SYM, 4);
  EXPECT_EQ(RKNN_QUANT_TYPE_PER_GROUP_ASYM, 5);

  EXPECT_EQ(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, 1);
  EXPECT_EQ(RKNN_INT8_MM_INT8_TO_INT32, 2);
  EXPECT_EQ(RKNN_INT8_MM_INT8_TO_INT8, 3);
  EXPECT_EQ(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16, 4);
  EXPECT_EQ(RKNN_FLOAT16_MM_INT8_TO_FLOAT32, 5);
  EXPECT_EQ(RKNN_FLOAT16_MM_INT8_TO_FLOAT16, 6);
  EXPECT_EQ(RKNN_FLOAT16_MM_INT4_TO_FLOAT32, 7);
  EXPECT_EQ(RKNN_FLOAT16_MM_INT4_TO_FLOAT16, 8);
  EXPECT_EQ(RKNN_INT8_MM_INT8_TO_FLOAT32, 9);
  EXPECT_EQ(RKNN_INT4_MM_INT4_TO_INT16, 10);
  EXPECT_EQ(RKNN_INT8_MM_INT4_TO_INT32, 11);
  EXPECT_EQ(RKNN_FLOAT16_MM_INT4_TO_BFLOAT16, 12);
  EXPECT_EQ(RKNN_INT8_MM_INT4_TO_FLOAT16, 15);

  EXPECT_EQ(RKNN_MM_LAYOUT_NORM, 0);
  EXPECT_EQ(RKNN_MM_LAYOUT_NATIVE, 1);
  EXPECT_EQ(RKNN_MM_LAYOUT_TP_NORM, 2);
}

TEST(AbiMatmul, QuantParams) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_quant_params, 288);
  EXPECT_FIELD(rknn_quant_params, name, char[256], 0, 256);
  EXPECT_FIELD(rknn_quant_params, scale, float*, 256, 8);
  EXPECT_FIELD(rknn_quant_params, scale_len, int32_t, 264, 4);
  EXPECT_FIELD(rknn_quant_params, zp, int32_t*, 272, 8);
  EXPECT_FIELD(rknn_quant_params, zp_len, int32_t, 280, 4);
}

TEST(AbiMatmul, TensorAttrAndIoAttr) {
  SKIP_UNLESS_LP64();
  // Offsets follow from the field list: name[256] then packed 4-byte fields.
  EXPECT_STRUCT_SIZE(rknn_matmul_tensor_attr, 332);
  EXPECT_FIELD(rknn_matmul_tensor_attr, name, char[256], 0, 256);
  EXPECT_FIELD(rknn_matmul_tensor_attr, n_dims, uint32_t, 256, 4);
  EXPECT_FIELD(rknn_matmul_tensor_attr, dims, uint32_t[16], 260, 64);
  EXPECT_FIELD(rknn_matmul_tensor_attr, size, uint32_t, 324, 4);
  EXPECT_FIELD(rknn_matmul_tensor_attr, type, rknn_tensor_type, 328, 4);

  EXPECT_STRUCT_SIZE(rknn_matmul_io_attr, 996);
  EXPECT_FIELD(rknn_matmul_io_attr, A, rknn_matmul_tensor_attr, 0, 332);
  EXPECT_FIELD(rknn_matmul_io_attr, B, rknn_matmul_tensor_attr, 332, 332);
  EXPECT_FIELD(rknn_matmul_io_attr, C, rknn_matmul_tensor_attr, 664, 332);
}

TEST(AbiMatmul, ShapeAndInfo) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_matmul_shape, 12);
  EXPECT_FIELD(rknn_matmul_shape, M, int32_t, 0, 4);
  EXPECT_FIELD(rknn_matmul_shape, K, int32_t, 4, 4);
  EXPECT_FIELD(rknn_matmul_shape, N, int32_t, 8, 4);

  EXPECT_STRUCT_SIZE(rknn_matmul_info, 64);
  EXPECT_FIELD(rknn_matmul_info, M, int32_t, 0, 4);
  EXPECT_FIELD(rknn_matmul_info, K, int32_t, 4, 4);
  EXPECT_FIELD(rknn_matmul_info, N, int32_t, 8, 4);
  EXPECT_FIELD(rknn_matmul_info, type, rknn_matmul_type, 12, 4);
  EXPECT_FIELD(rknn_matmul_info, B_layout, int16_t, 16, 2);
  EXPECT_FIELD(rknn_matmul_info, B_quant_type, int16_t, 18, 2);
  EXPECT_FIELD(rknn_matmul_info, AC_layout, int16_t, 20, 2);
  EXPECT_FIELD(rknn_matmul_info, AC_quant_type, int16_t, 22, 2);
  EXPECT_FIELD(rknn_matmul_info, iommu_domain_id, int32_t, 24, 4);
  EXPECT_FIELD(rknn_matmul_info, group_size, int16_t, 28, 2);
  EXPECT_FIELD(rknn_matmul_info, reserved, int8_t[34], 30, 34);
}

// ------------------------------------------------------------------------------------------------
// rknn_custom_op.h
// ------------------------------------------------------------------------------------------------

TEST(AbiCustomOp, TargetType) {
  EXPECT_EQ(RKNN_TARGET_TYPE_CPU, 1);
  EXPECT_EQ(RKNN_TARGET_TYPE_GPU, 2);
  EXPECT_EQ(RKNN_TARGET_TYPE_MAX, 3);
}

TEST(AbiCustomOp, ContextStructs) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_gpu_op_context, 24);
  EXPECT_FIELD(rknn_gpu_op_context, cl_context, void*, 0, 8);
  EXPECT_FIELD(rknn_gpu_op_context, cl_command_queue, void*, 8, 8);
  EXPECT_FIELD(rknn_gpu_op_context, cl_kernel, void*, 16, 8);

  EXPECT_STRUCT_SIZE(rknn_custom_op_context, 48);
  EXPECT_FIELD(rknn_custom_op_context, target, rknn_target_type, 0, 4);
  EXPECT_FIELD(rknn_custom_op_context, internal_ctx, rknn_custom_op_interal_context, 8, 8);
  EXPECT_FIELD(rknn_custom_op_context, gpu_ctx, rknn_gpu_op_context, 16, 24);
  EXPECT_FIELD(rknn_custom_op_context, priv_data, void*, 40, 8);
}

TEST(AbiCustomOp, TensorAndAttr) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_custom_op_tensor, 416);
  EXPECT_FIELD(rknn_custom_op_tensor, attr, rknn_tensor_attr, 0, 376);
  EXPECT_FIELD(rknn_custom_op_tensor, mem, rknn_tensor_mem, 376, 40);

  EXPECT_STRUCT_SIZE(rknn_custom_op_attr, 272);
  EXPECT_FIELD(rknn_custom_op_attr, name, char[256], 0, 256);
  EXPECT_FIELD(rknn_custom_op_attr, dtype, rknn_tensor_type, 256, 4);
  EXPECT_FIELD(rknn_custom_op_attr, n_elems, uint32_t, 260, 4);
  EXPECT_FIELD(rknn_custom_op_attr, data, void*, 264, 8);
}

using CustomOpTensorCallback = int (*)(rknn_custom_op_context*, rknn_custom_op_tensor*, uint32_t,
                                       rknn_custom_op_tensor*, uint32_t);
using CustomOpDestroyCallback = int (*)(rknn_custom_op_context*);

TEST(AbiCustomOp, CustomOpStruct) {
  SKIP_UNLESS_LP64();
  EXPECT_STRUCT_SIZE(rknn_custom_op, 832);
  EXPECT_FIELD(rknn_custom_op, version, uint32_t, 0, 4);
  EXPECT_FIELD(rknn_custom_op, target, rknn_target_type, 4, 4);
  EXPECT_FIELD(rknn_custom_op, op_type, char[256], 8, 256);
  EXPECT_FIELD(rknn_custom_op, cl_kernel_name, char[256], 264, 256);
  EXPECT_FIELD(rknn_custom_op, cl_kernel_source, char*, 520, 8);
  EXPECT_FIELD(rknn_custom_op, cl_source_size, uint64_t, 528, 8);
  EXPECT_FIELD(rknn_custom_op, cl_build_options, char[256], 536, 256);
  EXPECT_FIELD(rknn_custom_op, init, CustomOpTensorCallback, 792, 8);
  EXPECT_FIELD(rknn_custom_op, prepare, CustomOpTensorCallback, 800, 8);
  EXPECT_FIELD(rknn_custom_op, compute, CustomOpTensorCallback, 808, 8);
  EXPECT_FIELD(rknn_custom_op, compute_native, CustomOpTensorCallback, 816, 8);
  EXPECT_FIELD(rknn_custom_op, destroy, CustomOpDestroyCallback, 824, 8);
}

// ------------------------------------------------------------------------------------------------
// Function signatures. decltype does not odr-use the functions, so these compile-time checks need
// no definitions; a signature drift in a header breaks the build of this test.
// ------------------------------------------------------------------------------------------------

#define ASSERT_SIGNATURE(fn, ...) \
  static_assert(std::is_same<decltype(&fn), __VA_ARGS__>::value, "signature of " #fn)

ASSERT_SIGNATURE(rknn_init, int (*)(rknn_context*, void*, uint32_t, uint32_t, rknn_init_extend*));
ASSERT_SIGNATURE(rknn_dup_context, int (*)(rknn_context*, rknn_context*));
ASSERT_SIGNATURE(rknn_destroy, int (*)(rknn_context));
ASSERT_SIGNATURE(rknn_query, int (*)(rknn_context, rknn_query_cmd, void*, uint32_t));
ASSERT_SIGNATURE(rknn_inputs_set, int (*)(rknn_context, uint32_t, rknn_input*));
ASSERT_SIGNATURE(rknn_set_batch_core_num, int (*)(rknn_context, int));
ASSERT_SIGNATURE(rknn_set_core_mask, int (*)(rknn_context, rknn_core_mask));
ASSERT_SIGNATURE(rknn_run, int (*)(rknn_context, rknn_run_extend*));
ASSERT_SIGNATURE(rknn_wait, int (*)(rknn_context, rknn_run_extend*));
ASSERT_SIGNATURE(rknn_outputs_get,
                 int (*)(rknn_context, uint32_t, rknn_output*, rknn_output_extend*));
ASSERT_SIGNATURE(rknn_outputs_release, int (*)(rknn_context, uint32_t, rknn_output*));
ASSERT_SIGNATURE(rknn_create_mem_from_phys,
                 rknn_tensor_mem* (*)(rknn_context, uint64_t, void*, uint32_t));
ASSERT_SIGNATURE(rknn_create_mem_from_fd,
                 rknn_tensor_mem* (*)(rknn_context, int32_t, void*, uint32_t, int32_t));
ASSERT_SIGNATURE(rknn_create_mem_from_mb_blk, rknn_tensor_mem* (*)(rknn_context, void*, int32_t));
ASSERT_SIGNATURE(rknn_create_mem, rknn_tensor_mem* (*)(rknn_context, uint32_t));
ASSERT_SIGNATURE(rknn_create_mem2, rknn_tensor_mem* (*)(rknn_context, uint64_t, uint64_t));
ASSERT_SIGNATURE(rknn_destroy_mem, int (*)(rknn_context, rknn_tensor_mem*));
ASSERT_SIGNATURE(rknn_set_weight_mem, int (*)(rknn_context, rknn_tensor_mem*));
ASSERT_SIGNATURE(rknn_set_internal_mem, int (*)(rknn_context, rknn_tensor_mem*));
ASSERT_SIGNATURE(rknn_set_io_mem, int (*)(rknn_context, rknn_tensor_mem*, rknn_tensor_attr*));
ASSERT_SIGNATURE(rknn_set_input_shape, int (*)(rknn_context, rknn_tensor_attr*));
ASSERT_SIGNATURE(rknn_set_input_shapes, int (*)(rknn_context, uint32_t, rknn_tensor_attr*));
ASSERT_SIGNATURE(rknn_mem_sync, int (*)(rknn_context, rknn_tensor_mem*, rknn_mem_sync_mode));

ASSERT_SIGNATURE(rknn_matmul_create,
                 int (*)(rknn_matmul_ctx*, rknn_matmul_info*, rknn_matmul_io_attr*));
ASSERT_SIGNATURE(rknn_matmul_create_dynamic_shape,
                 int (*)(rknn_matmul_ctx*, rknn_matmul_info*, int, rknn_matmul_shape*,
                         rknn_matmul_io_attr*));
ASSERT_SIGNATURE(rknn_matmul_set_io_mem,
                 int (*)(rknn_matmul_ctx, rknn_tensor_mem*, rknn_matmul_tensor_attr*));
ASSERT_SIGNATURE(rknn_matmul_set_core_mask, int (*)(rknn_matmul_ctx, rknn_core_mask));
ASSERT_SIGNATURE(rknn_matmul_set_quant_params, int (*)(rknn_matmul_ctx, rknn_quant_params*));
ASSERT_SIGNATURE(rknn_matmul_get_quant_params,
                 int (*)(rknn_matmul_ctx, rknn_quant_params*, float*));
ASSERT_SIGNATURE(rknn_matmul_set_dynamic_shape, int (*)(rknn_matmul_ctx, rknn_matmul_shape*));
ASSERT_SIGNATURE(rknn_matmul_run, int (*)(rknn_matmul_ctx));
ASSERT_SIGNATURE(rknn_matmul_destroy, int (*)(rknn_matmul_ctx));
ASSERT_SIGNATURE(rknn_B_normal_layout_to_native_layout,
                 int (*)(void*, void*, int, int, rknn_matmul_info*));

ASSERT_SIGNATURE(rknn_register_custom_ops, int (*)(rknn_context, rknn_custom_op*, uint32_t));
ASSERT_SIGNATURE(rknn_custom_op_get_op_attr,
                 void (*)(rknn_custom_op_context*, const char*, rknn_custom_op_attr*));

static_assert(std::is_same<get_custom_op_func, rknn_custom_op* (*)()>::value,
              "get_custom_op_func takes no arguments and returns rknn_custom_op*");

// ------------------------------------------------------------------------------------------------
// The headers are also a C API: each must compile on its own as strict C99 (and as C++), and a
// plain-C client (header_c_compile.c) must build against them. Uses the system compilers; skipped
// when they are not installed.
// ------------------------------------------------------------------------------------------------

#ifdef ORKNN_SOURCE_DIR

// Runs a shell command, returning its exit status and appending its output to *output.
int run_command(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) *output += buffer;
  return pclose(pipe);
}

bool have_program(const char* name) {
  std::string ignored;
  return run_command(std::string("command -v ") + name, &ignored) == 0;
}

const std::string kIncludeDir = std::string(ORKNN_SOURCE_DIR) + "/include";
const char* const kHeaders[] = {"rknn_api.h", "rknn_matmul_api.h", "rknn_custom_op.h"};

TEST(AbiHeaders, EachHeaderCompilesAloneAsC99) {
  if (!have_program("cc")) GTEST_SKIP() << "no C compiler (cc) installed";
  for (const char* header : kHeaders) {
    std::string output;
    const std::string command = "cc -std=c99 -Wall -Wextra -Werror -pedantic -Wstrict-prototypes"
                                " -fsyntax-only -x c -include '" + kIncludeDir + "/" + header +
                                "' /dev/null";
    EXPECT_EQ(run_command(command, &output), 0) << command << "\n" << output;
  }
}

TEST(AbiHeaders, EachHeaderCompilesAloneAsCxx) {
  if (!have_program("c++")) GTEST_SKIP() << "no C++ compiler (c++) installed";
  for (const char* header : kHeaders) {
    std::string output;
    const std::string command = "c++ -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only"
                                " -x c++ -include '" + kIncludeDir + "/" + header + "' /dev/null";
    EXPECT_EQ(run_command(command, &output), 0) << command << "\n" << output;
  }
}

TEST(AbiHeaders, PlainCClientCompiles) {
  if (!have_program("cc")) GTEST_SKIP() << "no C compiler (cc) installed";
  std::string output;
  const std::string command = "cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I'" +
                              kIncludeDir + "' '" + ORKNN_SOURCE_DIR +
                              "/tests/api/header_c_compile.c'";
  EXPECT_EQ(run_command(command, &output), 0) << command << "\n" << output;
}

#endif  // ORKNN_SOURCE_DIR

}  // namespace
