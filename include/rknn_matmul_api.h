/*
 * rknn_matmul_api.h - standalone matrix multiplication interface of OpenRKNN's librknnrt.so.
 *
 * Computes C = A x B with A of shape (M, K), B of shape (K, N) and C of shape (M, N), outside of any
 * model. Names, values and layouts follow the vendor ABI; the text is our own.
 *
 * Usage: fill an rknn_matmul_info, call rknn_matmul_create() (it reports the shape, byte size and
 * type of A, B and C), allocate each with rknn_create_mem(ctx, attr.size), bind them with
 * rknn_matmul_set_io_mem(), write A and B, call rknn_matmul_run(), read C, then
 * rknn_destroy_mem() each buffer and rknn_matmul_destroy() the context.
 *
 * Layouts (dims as reported in rknn_matmul_tensor_attr):
 *  - RKNN_MM_LAYOUT_NORM: row-major. A [M, K], B [K, N], C [M, N].
 *  - RKNN_MM_LAYOUT_TP_NORM (B only): B stored transposed, [N, K] row-major.
 *  - RKNN_MM_LAYOUT_NATIVE: tiled.
 *      A [K/subK, M, subK]: subK consecutive K values per row m.
 *      B [N/subN, K/subK, subN, subK]; subN = B.dims[2], subK = B.dims[3].
 *      C [N/4, M, 4] (int4 output on RK3588: [N/8, M, 8]).
 *    Tile sizes depend on platform and type, e.g. RK3588/RK3576: A subK int4 32, int8 16, fp16 8;
 *    B (subN, subK) int4 (64, 32), int8 (32, 32), fp16 (16, 32). When K exceeds 8192 (RK3588) or
 *    4096 (RK3576), native B is split along K into ceil(K / limit) segments, each tiled in turn;
 *    rknn_B_normal_layout_to_native_layout() does this conversion.
 * Limits: K <= 10240. Per-platform alignment of K and N applies (in elements), e.g. RK3588 int8:
 * K multiple of 32, N multiple of 32; fp16: K multiple of 32, N multiple of 16.
 *
 * Quantisation: A and C are quantised per layer only; B per layer, per channel (one value per
 * column n) or per group of group_size values along K.
 */
#ifndef OPENRKNN_RKNN_MATMUL_API_H
#define OPENRKNN_RKNN_MATMUL_API_H

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Handle of a matmul context; same representation as rknn_context. Also accepted by
 * rknn_create_mem() and rknn_destroy_mem(). */
typedef rknn_context rknn_matmul_ctx;

/* Quantisation granularity of an operand (stored in rknn_matmul_info::B_quant_type and
 * AC_quant_type). */
typedef enum _rknn_matmul_quant_type {
    RKNN_QUANT_TYPE_PER_LAYER_SYM = 0,    /* one scale, zero point 0 */
    RKNN_QUANT_TYPE_PER_LAYER_ASYM = 1,   /* one scale and zero point */
    RKNN_QUANT_TYPE_PER_CHANNEL_SYM = 2,  /* one scale per output column n */
    RKNN_QUANT_TYPE_PER_CHANNEL_ASYM = 3, /* one scale and zero point per output column n */
    RKNN_QUANT_TYPE_PER_GROUP_SYM = 4,    /* one scale per group of group_size K values */
    RKNN_QUANT_TYPE_PER_GROUP_ASYM = 5    /* one scale and zero point per group */
} rknn_matmul_quant_type;

/* Element types of A, B and C, named A_MM_B_TO_C. */
typedef enum _rknn_matmul_type {
    RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 = 1,
    RKNN_INT8_MM_INT8_TO_INT32 = 2,
    RKNN_INT8_MM_INT8_TO_INT8 = 3,
    RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16 = 4,
    RKNN_FLOAT16_MM_INT8_TO_FLOAT32 = 5,
    RKNN_FLOAT16_MM_INT8_TO_FLOAT16 = 6,
    RKNN_FLOAT16_MM_INT4_TO_FLOAT32 = 7,
    RKNN_FLOAT16_MM_INT4_TO_FLOAT16 = 8,
    RKNN_INT8_MM_INT8_TO_FLOAT32 = 9,
    RKNN_INT4_MM_INT4_TO_INT16 = 10,
    RKNN_INT8_MM_INT4_TO_INT32 = 11,
    RKNN_FLOAT16_MM_INT4_TO_BFLOAT16 = 12,
    RKNN_INT8_MM_INT4_TO_FLOAT16 = 15
} rknn_matmul_type;

/* Printable name of a matmul type (its enumerator name); "UNKNOW" for values without a name here,
 * which deliberately includes RKNN_INT8_MM_INT4_TO_FLOAT16 as in the vendor header.
 * The returned string is static: never free it. */
static inline const char* get_matmul_type_string(rknn_matmul_type type)
{
    switch (type) {
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32: return "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32";
    case RKNN_INT8_MM_INT8_TO_INT32: return "RKNN_INT8_MM_INT8_TO_INT32";
    case RKNN_INT8_MM_INT8_TO_INT8: return "RKNN_INT8_MM_INT8_TO_INT8";
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16: return "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT32: return "RKNN_FLOAT16_MM_INT8_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT16: return "RKNN_FLOAT16_MM_INT8_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT32: return "RKNN_FLOAT16_MM_INT4_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT16: return "RKNN_FLOAT16_MM_INT4_TO_FLOAT16";
    case RKNN_INT8_MM_INT8_TO_FLOAT32: return "RKNN_INT8_MM_INT8_TO_FLOAT32";
    case RKNN_INT4_MM_INT4_TO_INT16: return "RKNN_INT4_MM_INT4_TO_INT16";
    case RKNN_INT8_MM_INT4_TO_INT32: return "RKNN_INT8_MM_INT4_TO_INT32";
    case RKNN_FLOAT16_MM_INT4_TO_BFLOAT16: return "RKNN_FLOAT16_MM_INT4_TO_BFLOAT16";
    default: return "UNKNOW";
    }
}

/* Storage layout of an operand (stored in rknn_matmul_info::B_layout and AC_layout). */
typedef enum _rknn_matmul_layout {
    RKNN_MM_LAYOUT_NORM = 0,    /* row-major */
    RKNN_MM_LAYOUT_NATIVE = 1,  /* tiled native layout (see the top of this file) */
    RKNN_MM_LAYOUT_TP_NORM = 2  /* B only: transposed, stored as [N, K] row-major */
} rknn_matmul_layout;

/* Quantisation parameters of one operand (288 bytes). The arrays are owned by the caller. */
typedef struct _rknn_quant_params {
    char name[RKNN_MAX_NAME_LEN];    /* name of the operand, as in its rknn_matmul_tensor_attr */
    float* scale;                    /* scale_len scales */
    int32_t scale_len;               /* 1 per layer, N per channel */
    int32_t* zp;                     /* zp_len zero points */
    int32_t zp_len;                  /* 1 per layer, N per channel */
} rknn_quant_params;

/* Description of one operand as the create call reports it (332 bytes). */
typedef struct _rknn_matmul_tensor_attr {
    char name[RKNN_MAX_NAME_LEN];    /* operand name, NUL-terminated ("A", "B" or "C") */
    uint32_t n_dims;                 /* number of valid entries in dims */
    uint32_t dims[RKNN_MAX_DIMS];    /* shape in the operand's layout */
    uint32_t size;                   /* bytes the operand's buffer needs */
    rknn_tensor_type type;           /* element type */
} rknn_matmul_tensor_attr;

/* The three operands, filled by the create calls (996 bytes). */
typedef struct _rknn_matmul_io_attr {
    rknn_matmul_tensor_attr A;
    rknn_matmul_tensor_attr B;
    rknn_matmul_tensor_attr C;
} rknn_matmul_io_attr;

/* One problem size (12 bytes). */
typedef struct _rknn_matmul_shape {
    int32_t M;
    int32_t K;
    int32_t N;
} rknn_matmul_shape;

/* What to multiply (64 bytes). Zero the struct, then set the fields you need. */
typedef struct _rknn_matmul_info {
    int32_t M;                       /* rows of A and C */
    int32_t K;                       /* columns of A, rows of B */
    int32_t N;                       /* columns of B and C */
    rknn_matmul_type type;           /* element types of A, B and C */
    int16_t B_layout;                /* an rknn_matmul_layout value */
    int16_t B_quant_type;            /* an rknn_matmul_quant_type value */
    int16_t AC_layout;               /* an rknn_matmul_layout value for both A and C */
    int16_t AC_quant_type;           /* an rknn_matmul_quant_type value (per layer only) */
    int32_t iommu_domain_id;         /* device address space; 0 by default */
    int16_t group_size;              /* K values per group for per-group quantisation of B */
    int8_t reserved[34];
} rknn_matmul_info;

/*
 * Create a matmul context for a fixed problem size.
 *   ctx:     out; receives a new non-zero handle, released with rknn_matmul_destroy().
 *   info:    in; sizes, types, layouts and quantisation granularity. Read during the call.
 *   io_attr: out; caller-owned; receives the dims, byte size and element type of A, B and C.
 */
RKNN_API int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info,
                                rknn_matmul_io_attr* io_attr);

/*
 * Create a matmul context that accepts several problem sizes (select one with
 * rknn_matmul_set_dynamic_shape() before running). info->M, K and N are ignored.
 *   ctx:       out; receives a new non-zero handle, released with rknn_matmul_destroy().
 *   info:      in; types, layouts and quantisation.
 *   shape_num: number of entries in shapes and io_attrs.
 *   shapes:    in; the accepted sizes.
 *   io_attrs:  out; caller-owned array; entry i receives the operand attributes for shapes[i].
 */
RKNN_API int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info,
                                              int shape_num, rknn_matmul_shape shapes[],
                                              rknn_matmul_io_attr io_attrs[]);

/*
 * Bind memory as the storage of operand A, B or C.
 *   mem:  typically from rknn_create_mem(ctx, attr->size); owned by the caller, must stay alive
 *         while bound; data starts at mem->virt_addr + mem->offset.
 *   attr: the attribute of the operand as returned by the create call (identifies the operand).
 * A and B are read at each rknn_matmul_run(); C is written by the time it returns.
 */
RKNN_API int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem,
                                    rknn_matmul_tensor_attr* attr);

/*
 * Choose the NPU cores the matmul runs on. Returns -1 on platforms with a single core.
 *   core_mask: an rknn_core_mask value.
 */
RKNN_API int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask);

/*
 * Set the quantisation of one operand (identified by params->name). Without a call the scale is
 * 1.0 and the zero point 0. Applies to the INT8 x INT8 -> INT8 and -> INT32 types.
 *   params: in; caller-owned; the arrays are copied during the call.
 */
RKNN_API int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params* params);

/*
 * Read back the quantisation of one operand (identified by params->name) for the per-channel
 * INT8 x INT8 -> INT32 case.
 *   params: in/out; caller-owned.
 *   scale:  out; one float.
 */
RKNN_API int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params,
                                          float* scale);

/*
 * Select the problem size for the following runs of a context made by
 * rknn_matmul_create_dynamic_shape(); only M may differ between the listed shapes.
 *   shape: in; one of the shapes given at creation.
 */
RKNN_API int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape);

/* Compute C = A x B with the bound buffers. Blocks until C is written. */
RKNN_API int rknn_matmul_run(rknn_matmul_ctx ctx);

/* Destroy a matmul context. Buffers bound to it stay owned by the caller (release them with
 * rknn_destroy_mem(), preferably before this call). The handle is invalid afterwards. */
RKNN_API int rknn_matmul_destroy(rknn_matmul_ctx ctx);

/*
 * Convert B from row-major [K, N] to the native tiled layout the context described by `info`
 * expects (including the split into K segments for large K).
 *   B_input:  in; K*N elements of B's type, row-major; caller-owned.
 *   B_output: out; caller-owned, at least the native B size in bytes (io_attr.B.size).
 *   K, N:     dimensions of B in elements.
 *   info:     in; the matmul description (type and platform tiling).
 */
RKNN_API int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K, int N,
                                                   rknn_matmul_info* info);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPENRKNN_RKNN_MATMUL_API_H */
