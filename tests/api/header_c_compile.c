/*
 * Plain-C client of the public headers. Not built by CMake: abi_test.cc (HeadersCompileAsC99)
 * compiles it with the system C compiler as strict C99 (-Wall -Wextra -Werror -pedantic), which
 * proves the headers are valid C and that a C compiler lays the key structs out as the contract
 * says (the C++ test checks every field; this checks C agrees on the sizes and a few offsets).
 */
#include <stddef.h>

#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

/* C99 has no _Static_assert: a negative array size stops the compilation instead. */
#define C_STATIC_CHECK(name, cond) typedef char c_static_check_##name[(cond) ? 1 : -1]

#if defined(__LP64__) || defined(_LP64)
C_STATIC_CHECK(input_output_num, sizeof(rknn_input_output_num) == 8);
C_STATIC_CHECK(tensor_attr, sizeof(rknn_tensor_attr) == 376);
C_STATIC_CHECK(tensor_attr_fmt, offsetof(rknn_tensor_attr, fmt) == 336);
C_STATIC_CHECK(tensor_attr_h_stride, offsetof(rknn_tensor_attr, h_stride) == 372);
C_STATIC_CHECK(input_range, sizeof(rknn_input_range) == 33040);
C_STATIC_CHECK(perf_detail, sizeof(rknn_perf_detail) == 16);
C_STATIC_CHECK(perf_run, sizeof(rknn_perf_run) == 8);
C_STATIC_CHECK(sdk_version, sizeof(rknn_sdk_version) == 512);
C_STATIC_CHECK(mem_size, sizeof(rknn_mem_size) == 64);
C_STATIC_CHECK(custom_string, sizeof(rknn_custom_string) == 1024);
C_STATIC_CHECK(tensor_mem, sizeof(rknn_tensor_mem) == 40);
C_STATIC_CHECK(input, sizeof(rknn_input) == 32);
C_STATIC_CHECK(input_type, offsetof(rknn_input, type) == 24);
C_STATIC_CHECK(output, sizeof(rknn_output) == 24);
C_STATIC_CHECK(init_extend, sizeof(rknn_init_extend) == 136);
C_STATIC_CHECK(run_extend, sizeof(rknn_run_extend) == 24);
C_STATIC_CHECK(output_extend, sizeof(rknn_output_extend) == 8);
C_STATIC_CHECK(quant_params, sizeof(rknn_quant_params) == 288);
C_STATIC_CHECK(matmul_tensor_attr, sizeof(rknn_matmul_tensor_attr) == 332);
C_STATIC_CHECK(matmul_io_attr, sizeof(rknn_matmul_io_attr) == 996);
C_STATIC_CHECK(matmul_shape, sizeof(rknn_matmul_shape) == 12);
C_STATIC_CHECK(matmul_info, sizeof(rknn_matmul_info) == 64);
C_STATIC_CHECK(matmul_info_group_size, offsetof(rknn_matmul_info, group_size) == 28);
C_STATIC_CHECK(gpu_op_context, sizeof(rknn_gpu_op_context) == 24);
C_STATIC_CHECK(custom_op_context, sizeof(rknn_custom_op_context) == 48);
C_STATIC_CHECK(custom_op_tensor, sizeof(rknn_custom_op_tensor) == 416);
C_STATIC_CHECK(custom_op_attr, sizeof(rknn_custom_op_attr) == 272);
C_STATIC_CHECK(custom_op, sizeof(rknn_custom_op) == 832);
C_STATIC_CHECK(custom_op_destroy, offsetof(rknn_custom_op, destroy) == 824);
#endif
C_STATIC_CHECK(enum_size, sizeof(rknn_core_mask) == 4 && sizeof(rknn_matmul_type) == 4);

/* A CPU custom operator written the way C clients write them, assigned to the callback fields. */
static int add_one_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                           uint32_t n_inputs, rknn_custom_op_tensor* outputs, uint32_t n_outputs)
{
    const float* in = (const float*)((char*)inputs[0].mem.virt_addr + inputs[0].mem.offset);
    float* out = (float*)((char*)outputs[0].mem.virt_addr + outputs[0].mem.offset);
    uint32_t i;
    (void)op_ctx;
    (void)n_inputs;
    (void)n_outputs;
    for (i = 0; i < inputs[0].attr.n_elems; ++i) out[i] = in[i] + 1.0f;
    return RKNN_SUCC;
}

static int add_one_destroy(rknn_custom_op_context* op_ctx)
{
    (void)op_ctx;
    return RKNN_SUCC;
}

static rknn_custom_op add_one_op;

rknn_custom_op* get_add_one_op(void);
rknn_custom_op* get_add_one_op(void)
{
    add_one_op.version = 1;
    add_one_op.target = RKNN_TARGET_TYPE_CPU;
    add_one_op.compute = add_one_compute;
    add_one_op.destroy = add_one_destroy;
    return &add_one_op;
}

/* Every helper and every function must be callable from C with the obvious argument types. */
int use_everything(void);
int use_everything(void)
{
    rknn_context ctx = 0;
    rknn_matmul_ctx mm = 0;
    rknn_input_output_num io_num;
    rknn_tensor_attr attr;
    rknn_input input;
    rknn_output output;
    rknn_tensor_mem* mem;
    rknn_matmul_info info;
    rknn_matmul_io_attr io_attr;
    rknn_matmul_shape shape = {1, 32, 32};
    rknn_quant_params qp;
    rknn_custom_op_attr op_attr;
    get_custom_op_func entry = get_add_one_op;
    float scale = 1.0f;
    int ret;

    ret = rknn_init(&ctx, (void*)"model.rknn", 0, RKNN_FLAG_PRIOR_HIGH, NULL);
    if (ret != RKNN_SUCCESS) return ret;
    rknn_dup_context(&ctx, &ctx);
    rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num));
    rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr));
    (void)get_type_string(attr.type);
    (void)get_qnt_type_string(attr.qnt_type);
    (void)get_format_string(attr.fmt);
    input.index = 0;
    input.type = RKNN_TENSOR_UINT8;
    input.fmt = RKNN_TENSOR_NHWC;
    rknn_inputs_set(ctx, 1, &input);
    rknn_set_batch_core_num(ctx, 1);
    rknn_set_core_mask(ctx, RKNN_NPU_CORE_AUTO);
    rknn_run(ctx, NULL);
    rknn_wait(ctx, NULL);
    output.want_float = 1;
    rknn_outputs_get(ctx, 1, &output, NULL);
    rknn_outputs_release(ctx, 1, &output);
    mem = rknn_create_mem(ctx, 16);
    rknn_mem_sync(ctx, mem, RKNN_MEMORY_SYNC_BIDIRECTIONAL);
    rknn_set_io_mem(ctx, mem, &attr);
    rknn_set_weight_mem(ctx, mem);
    rknn_set_internal_mem(ctx, mem);
    rknn_destroy_mem(ctx, rknn_create_mem_from_fd(ctx, 3, NULL, 16, 0));
    rknn_destroy_mem(ctx, rknn_create_mem_from_phys(ctx, 0, NULL, 16));
    rknn_destroy_mem(ctx, rknn_create_mem_from_mb_blk(ctx, NULL, 0));
    rknn_destroy_mem(ctx, rknn_create_mem2(ctx, 16, RKNN_FLAG_MEMORY_NON_CACHEABLE));
    rknn_destroy_mem(ctx, mem);
    rknn_set_input_shape(ctx, &attr);
    rknn_set_input_shapes(ctx, 1, &attr);
    rknn_register_custom_ops(ctx, entry(), 1);
    rknn_custom_op_get_op_attr(NULL, "alpha", &op_attr);

    info.type = RKNN_INT8_MM_INT8_TO_INT32;
    info.B_layout = RKNN_MM_LAYOUT_NORM;
    info.B_quant_type = RKNN_QUANT_TYPE_PER_LAYER_SYM;
    (void)get_matmul_type_string(info.type);
    rknn_matmul_create(&mm, &info, &io_attr);
    rknn_matmul_create_dynamic_shape(&mm, &info, 1, &shape, &io_attr);
    rknn_matmul_set_io_mem(mm, NULL, &io_attr.A);
    rknn_matmul_set_core_mask(mm, RKNN_NPU_CORE_0);
    rknn_matmul_set_quant_params(mm, &qp);
    rknn_matmul_get_quant_params(mm, &qp, &scale);
    rknn_matmul_set_dynamic_shape(mm, &shape);
    rknn_matmul_run(mm);
    rknn_B_normal_layout_to_native_layout(NULL, NULL, 32, 32, &info);
    rknn_matmul_destroy(mm);
    return rknn_destroy(ctx);
}
