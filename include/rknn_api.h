/*
 * rknn_api.h - public C interface of OpenRKNN's librknnrt.so.
 *
 * OpenRKNN is an open, CPU-only runtime that is binary- and source-compatible with Rockchip's
 * RKNN runtime: every name, numeric value, struct layout and function signature below follows that
 * ABI so existing client programs build and link unchanged. The text of this header is our own.
 *
 * Conventions used throughout:
 *  - Every function returning int returns RKNN_SUCC (0) on success or a negative RKNN_ERR_* code.
 *  - "bytes" means a size in bytes; "elements" means a count of tensor elements.
 *  - Unless a function says otherwise, it does not keep any pointer passed to it: the caller may
 *    free or reuse argument memory as soon as the call returns.
 *  - A context is not thread-safe: one thread at a time per context. Use rknn_dup_context() to get
 *    one context per thread on the same model.
 *
 * Requires C99 or C++; includes only standard headers.
 */
#ifndef OPENRKNN_RKNN_API_H
#define OPENRKNN_RKNN_API_H

#include <stddef.h>
#include <stdint.h>

/* Marks the functions librknnrt.so exports (the library is built with -fvisibility=hidden). */
#ifndef RKNN_API
#if defined(__GNUC__) || defined(__clang__)
#define RKNN_API __attribute__((visibility("default")))
#else
#define RKNN_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------
 * Flags for the `flag` argument of rknn_init() (bitwise OR of these).
 * On this CPU runtime most of them are accepted for compatibility and have no effect on results.
 * ---------------------------------------------------------------------------------------------- */
#define RKNN_FLAG_PRIOR_HIGH 0x00000000 /* scheduling priority: high (the default) */
#define RKNN_FLAG_PRIOR_MEDIUM 0x00000001 /* scheduling priority: medium */
#define RKNN_FLAG_PRIOR_LOW 0x00000002 /* scheduling priority: low */
/* Pipelined mode: rknn_outputs_get() hands back the results of the previous frame. */
#define RKNN_FLAG_ASYNC_MASK 0x00000004
/* Collect per-layer timings so that RKNN_QUERY_PERF_DETAIL has something to report. */
#define RKNN_FLAG_COLLECT_PERF_MASK 0x00000008
/* The application provides weight, internal and I/O memory itself (rknn_set_weight_mem(),
 * rknn_set_internal_mem(), rknn_set_io_mem()) before the first rknn_run(). */
#define RKNN_FLAG_MEM_ALLOC_OUTSIDE 0x00000010
/* Take the weights from the context given in rknn_init_extend::ctx instead of the model file
 * (models exported without weights). */
#define RKNN_FLAG_SHARE_WEIGHT_MEM 0x00000020
/* Input / output synchronisation fences are managed by the application. */
#define RKNN_FLAG_FENCE_IN_OUTSIDE 0x00000040
#define RKNN_FLAG_FENCE_OUT_OUTSIDE 0x00000080
/* Create a context that can only answer RKNN_QUERY_MEM_SIZE; it cannot run inference. */
#define RKNN_FLAG_COLLECT_MODEL_INFO_ONLY 0x00000100
/* The application provides the internal (activation) memory only. */
#define RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE 0x00000200
/* When an operator must fall back from the NPU, prefer the GPU over the CPU. */
#define RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU 0x00000400
/* Allow on-chip SRAM for internal memory; share it between contexts. */
#define RKNN_FLAG_ENABLE_SRAM 0x00000800
#define RKNN_FLAG_SHARE_SRAM 0x00001000
/* Do not raise the priority of the runtime's worker threads. */
#define RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY 0x00002000
/* Skip cache maintenance on input / output buffers (the application takes care of it). */
#define RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE 0x00004000
#define RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE 0x00008000
/* The model buffer passed to rknn_init() is memory from rknn_create_mem()/rknn_create_mem2() and
 * is used in place rather than copied; rknn_init_extend then describes where the model lies in it.
 * The buffer must stay alive and unchanged until rknn_destroy(). */
#define RKNN_FLAG_MODEL_BUFFER_ZERO_COPY 0x00010000
/* alloc_flags bit for rknn_create_mem2(): allocate without a context (ctx may be 0). */
#define RKNN_MEM_FLAG_ALLOC_NO_CONTEXT 0x00020000

/* ------------------------------------------------------------------------------------------------
 * Return codes.
 * ---------------------------------------------------------------------------------------------- */
#define RKNN_SUCC 0
#define RKNN_SUCCESS RKNN_SUCC /* alias used by the vendor guide's sample code */
#define RKNN_ERR_FAIL -1 /* generic failure */
#define RKNN_ERR_TIMEOUT -2 /* the operation did not finish in time */
#define RKNN_ERR_DEVICE_UNAVAILABLE -3 /* the compute device cannot be used */
#define RKNN_ERR_MALLOC_FAIL -4 /* out of memory */
#define RKNN_ERR_PARAM_INVALID -5 /* an argument is NULL, out of range or inconsistent */
#define RKNN_ERR_MODEL_INVALID -6 /* the model data cannot be parsed or is not supported */
#define RKNN_ERR_CTX_INVALID -7 /* the context handle is unknown or already destroyed */
#define RKNN_ERR_INPUT_INVALID -8 /* an input descriptor or its data is wrong */
#define RKNN_ERR_OUTPUT_INVALID -9 /* an output descriptor is wrong */
#define RKNN_ERR_DEVICE_UNMATCH -10 /* model and device versions do not match */
/* The two names below keep the historic spelling "INCOMPATILE" for source compatibility. */
#define RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL -11 /* pre-compiled model does not fit this runtime */
#define RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION -12 /* optimisation level mismatch */
#define RKNN_ERR_TARGET_PLATFORM_UNMATCH -13 /* model was built for another platform */

/* ------------------------------------------------------------------------------------------------
 * Limits.
 * ---------------------------------------------------------------------------------------------- */
#define RKNN_MAX_DIMS 16 /* maximum tensor rank (length of every dims[] array) */
#define RKNN_MAX_NUM_CHANNEL 15 /* maximum number of channels of an image input */
#define RKNN_MAX_NAME_LEN 256 /* size in bytes of every name buffer, terminator included */
#define RKNN_MAX_DYNAMIC_SHAPE_NUM 512 /* maximum number of shapes of a dynamic-shape input */

/* Opaque handle to a runtime (or matmul) context. A valid handle is never 0, so 0 can be used as
 * "no context". Its width follows the vendor ABI: 32 bits on 32-bit ARM, 64 bits elsewhere. */
#ifdef __arm__
typedef uint32_t rknn_context;
#else
typedef uint64_t rknn_context;
#endif

/* ------------------------------------------------------------------------------------------------
 * Enumerations. Every enum-typed struct field occupies 4 bytes.
 * ---------------------------------------------------------------------------------------------- */

/* What rknn_query() should report, and the struct type `info` must point to for each. */
typedef enum _rknn_query_cmd {
    RKNN_QUERY_IN_OUT_NUM = 0,               /* rknn_input_output_num */
    RKNN_QUERY_INPUT_ATTR = 1,               /* rknn_tensor_attr (caller sets index) */
    RKNN_QUERY_OUTPUT_ATTR = 2,              /* rknn_tensor_attr (caller sets index) */
    RKNN_QUERY_PERF_DETAIL = 3,              /* rknn_perf_detail */
    RKNN_QUERY_PERF_RUN = 4,                 /* rknn_perf_run */
    RKNN_QUERY_SDK_VERSION = 5,              /* rknn_sdk_version */
    RKNN_QUERY_MEM_SIZE = 6,                 /* rknn_mem_size */
    RKNN_QUERY_CUSTOM_STRING = 7,            /* rknn_custom_string */
    RKNN_QUERY_NATIVE_INPUT_ATTR = 8,        /* rknn_tensor_attr in the runtime's native layout */
    RKNN_QUERY_NATIVE_OUTPUT_ATTR = 9,       /* rknn_tensor_attr in the runtime's native layout */
    RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR = 8,  /* same as RKNN_QUERY_NATIVE_INPUT_ATTR */
    RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR = 9, /* same as RKNN_QUERY_NATIVE_OUTPUT_ATTR */
    RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR = 10,  /* rknn_tensor_attr, native data viewed as NHWC */
    RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR = 11, /* rknn_tensor_attr, native data viewed as NHWC */
    RKNN_QUERY_DEVICE_MEM_INFO = 12,         /* device memory information */
    RKNN_QUERY_INPUT_DYNAMIC_RANGE = 13,     /* rknn_input_range (caller sets index) */
    RKNN_QUERY_CURRENT_INPUT_ATTR = 14,      /* rknn_tensor_attr for the active dynamic shape */
    RKNN_QUERY_CURRENT_OUTPUT_ATTR = 15,     /* rknn_tensor_attr for the active dynamic shape */
    RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR = 16,  /* native attr for the active dynamic shape */
    RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR = 17, /* native attr for the active dynamic shape */
    RKNN_QUERY_CMD_MAX = 18
} rknn_query_cmd;

/* Element type of a tensor or buffer. */
typedef enum _rknn_tensor_type {
    RKNN_TENSOR_FLOAT32 = 0,
    RKNN_TENSOR_FLOAT16 = 1,
    RKNN_TENSOR_INT8 = 2,
    RKNN_TENSOR_UINT8 = 3,
    RKNN_TENSOR_INT16 = 4,
    RKNN_TENSOR_UINT16 = 5,
    RKNN_TENSOR_INT32 = 6,
    RKNN_TENSOR_UINT32 = 7,
    RKNN_TENSOR_INT64 = 8,
    RKNN_TENSOR_BOOL = 9,
    RKNN_TENSOR_INT4 = 10,
    RKNN_TENSOR_BFLOAT16 = 11,
    RKNN_TENSOR_TYPE_MAX = 12
} rknn_tensor_type;

/* Short printable name of a tensor type ("FP32", "INT8", ...); "UNKNOW" for any other value.
 * The returned string is static: never free it. */
static inline const char* get_type_string(rknn_tensor_type type)
{
    switch (type) {
    case RKNN_TENSOR_FLOAT32: return "FP32";
    case RKNN_TENSOR_FLOAT16: return "FP16";
    case RKNN_TENSOR_INT8: return "INT8";
    case RKNN_TENSOR_UINT8: return "UINT8";
    case RKNN_TENSOR_INT16: return "INT16";
    case RKNN_TENSOR_UINT16: return "UINT16";
    case RKNN_TENSOR_INT32: return "INT32";
    case RKNN_TENSOR_UINT32: return "UINT32";
    case RKNN_TENSOR_INT64: return "INT64";
    case RKNN_TENSOR_BOOL: return "BOOL";
    case RKNN_TENSOR_INT4: return "INT4";
    case RKNN_TENSOR_BFLOAT16: return "BF16";
    default: return "UNKNOW";
    }
}

/* How a tensor's integer values map to real numbers. */
typedef enum _rknn_tensor_qnt_type {
    RKNN_TENSOR_QNT_NONE = 0,              /* not quantised */
    RKNN_TENSOR_QNT_DFP = 1,               /* dynamic fixed point: real = q / 2^fl */
    RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC = 2, /* affine: real = (q - zp) * scale */
    RKNN_TENSOR_QNT_MAX = 3
} rknn_tensor_qnt_type;

/* Short printable name of a quantisation type ("NONE", "DFP", "AFFINE"); "UNKNOW" otherwise.
 * The returned string is static: never free it. */
static inline const char* get_qnt_type_string(rknn_tensor_qnt_type type)
{
    switch (type) {
    case RKNN_TENSOR_QNT_NONE: return "NONE";
    case RKNN_TENSOR_QNT_DFP: return "DFP";
    case RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC: return "AFFINE";
    default: return "UNKNOW";
    }
}

/* Memory layout of a tensor's data. */
typedef enum _rknn_tensor_format {
    RKNN_TENSOR_NCHW = 0,      /* batch, channel, height, width (row-major) */
    RKNN_TENSOR_NHWC = 1,      /* batch, height, width, channel (row-major) */
    RKNN_TENSOR_NC1HWC2 = 2,   /* channels split in blocks of C2: [N, ceil(C/C2), H, W, C2] */
    RKNN_TENSOR_UNDEFINED = 3, /* no image layout: data in the model's original dim order */
    RKNN_TENSOR_FORMAT_MAX = 4
} rknn_tensor_format;

/* Short printable name of a layout ("NCHW", "NHWC", "NC1HWC2", "UNDEFINED"); "UNKNOW" otherwise.
 * The returned string is static: never free it. */
static inline const char* get_format_string(rknn_tensor_format fmt)
{
    switch (fmt) {
    case RKNN_TENSOR_NCHW: return "NCHW";
    case RKNN_TENSOR_NHWC: return "NHWC";
    case RKNN_TENSOR_NC1HWC2: return "NC1HWC2";
    case RKNN_TENSOR_UNDEFINED: return "UNDEFINED";
    default: return "UNKNOW";
    }
}

/* Which NPU cores a context may use (bit i = core i). */
typedef enum _rknn_core_mask {
    RKNN_NPU_CORE_AUTO = 0,          /* let the runtime choose */
    RKNN_NPU_CORE_0 = 1,
    RKNN_NPU_CORE_1 = 2,
    RKNN_NPU_CORE_2 = 4,
    RKNN_NPU_CORE_0_1 = 3,
    RKNN_NPU_CORE_0_1_2 = 7,
    RKNN_NPU_CORE_ALL = 0xffff,      /* every core the platform has */
    RKNN_NPU_CORE_UNDEFINED = 0x10000
} rknn_core_mask;

/* Origin of the memory behind an rknn_tensor_mem (its `flags` field). */
typedef enum _rknn_tensor_mem_flags {
    RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE = 1, /* allocated by the runtime (rknn_create_mem*) */
    RKNN_TENSOR_MEMORY_FLAGS_FROM_FD = 2,      /* wraps caller memory (rknn_create_mem_from_fd) */
    RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS = 3,    /* wraps caller memory (rknn_create_mem_from_phys) */
    RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN = 4
} rknn_tensor_mem_flags;

/* Allocation options for rknn_create_mem2() (bitwise OR). */
typedef enum _rknn_mem_alloc_flags {
    RKNN_FLAG_MEMORY_FLAGS_DEFAULT = 0,   /* same as cacheable */
    RKNN_FLAG_MEMORY_CACHEABLE = 1,       /* CPU-cached memory */
    RKNN_FLAG_MEMORY_NON_CACHEABLE = 2,   /* uncached memory */
    RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM = 4,  /* prefer on-chip SRAM when available */
    /* Longer spellings of the same values, accepted as well. */
    RKNN_FLAG_MEMORY_FLAGS_CACHEABLE = 1,
    RKNN_FLAG_MEMORY_FLAGS_NON_CACHEABLE = 2,
    RKNN_FLAG_MEMORY_FLAGS_TRY_ALLOC_SRAM = 4
} rknn_mem_alloc_flags;

/* Direction of a cache synchronisation for rknn_mem_sync(). */
typedef enum _rknn_mem_sync_mode {
    RKNN_MEMORY_SYNC_TO_DEVICE = 1,    /* make CPU writes visible to the device */
    RKNN_MEMORY_SYNC_FROM_DEVICE = 2,  /* make device writes visible to the CPU */
    RKNN_MEMORY_SYNC_BIDIRECTIONAL = 3 /* both */
} rknn_mem_sync_mode;

/* ------------------------------------------------------------------------------------------------
 * Structs. Field order and sizes are fixed by the ABI; sizes quoted are for 64-bit platforms.
 * ---------------------------------------------------------------------------------------------- */

/* RKNN_QUERY_IN_OUT_NUM: how many inputs and outputs the model has (8 bytes). */
typedef struct _rknn_input_output_num {
    uint32_t n_input;
    uint32_t n_output;
} rknn_input_output_num;

/* Description of one input or output tensor (376 bytes). Filled by the attribute queries; the
 * caller zeroes the struct and sets `index` beforehand. Also passed to rknn_set_io_mem() and
 * rknn_set_input_shapes() to describe a buffer or a new shape. */
typedef struct _rknn_tensor_attr {
    uint32_t index;                  /* input or output position, 0-based; set by the caller */
    uint32_t n_dims;                 /* number of valid entries in dims */
    uint32_t dims[RKNN_MAX_DIMS];    /* shape in the order given by fmt; unused entries are 0 */
    char name[RKNN_MAX_NAME_LEN];    /* tensor name, NUL-terminated */
    uint32_t n_elems;                /* number of elements (product of dims) */
    uint32_t size;                   /* bytes of dense data: n_elems * element size of type */
    rknn_tensor_format fmt;          /* layout of dims and of the data */
    rknn_tensor_type type;           /* element type */
    rknn_tensor_qnt_type qnt_type;   /* quantisation scheme of the values */
    int8_t fl;                       /* fractional length, for RKNN_TENSOR_QNT_DFP */
    int32_t zp;                      /* zero point, for RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC */
    float scale;                     /* scale, for RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC */
    uint32_t w_stride;               /* row pitch in elements (read-only); 0 means the width */
    uint32_t size_with_stride;       /* bytes including stride padding; always >= size */
    uint8_t pass_through;            /* 1: the buffer already holds native data, no conversion */
    uint32_t h_stride;               /* rows per plane, set by the caller for rknn_set_io_mem();
                                        0 means the height */
} rknn_tensor_attr;

/* RKNN_QUERY_INPUT_DYNAMIC_RANGE: the shapes a dynamic-shape input accepts (33040 bytes). The
 * caller sets `index`; shape s is dyn_range[s][0 .. n_dims), in the order given by fmt. */
typedef struct _rknn_input_range {
    uint32_t index;                  /* input position; set by the caller */
    uint32_t shape_number;           /* number of valid rows in dyn_range */
    rknn_tensor_format fmt;          /* dim order of each row */
    char name[RKNN_MAX_NAME_LEN];    /* input name, NUL-terminated */
    uint32_t dyn_range[RKNN_MAX_DYNAMIC_SHAPE_NUM][RKNN_MAX_DIMS];
    uint32_t n_dims;                 /* rank of the input */
} rknn_input_range;

/* RKNN_QUERY_PERF_DETAIL: per-layer timing report (16 bytes). `perf_data` is a NUL-terminated
 * text owned by the context: do not free it; it stays valid until the next query of the same kind
 * or rknn_destroy(). */
typedef struct _rknn_perf_detail {
    char* perf_data;
    uint64_t data_len;               /* length of perf_data in bytes */
} rknn_perf_detail;

/* RKNN_QUERY_PERF_RUN: duration of the last rknn_run() (8 bytes). */
typedef struct _rknn_perf_run {
    int64_t run_duration;            /* microseconds */
} rknn_perf_run;

/* RKNN_QUERY_SDK_VERSION: version strings, NUL-terminated (512 bytes). */
typedef struct _rknn_sdk_version {
    char api_version[256];           /* runtime library version */
    char drv_version[256];           /* driver version */
} rknn_sdk_version;

/* RKNN_QUERY_MEM_SIZE: memory a context needs, in bytes (64 bytes). */
typedef struct _rknn_mem_size {
    uint32_t total_weight_size;      /* weights (what rknn_set_weight_mem() must provide) */
    uint32_t total_internal_size;    /* activations (what rknn_set_internal_mem() must provide) */
    uint64_t total_dma_allocated_size; /* everything the context allocated */
    uint32_t total_sram_size;        /* on-chip SRAM present */
    uint32_t free_sram_size;         /* on-chip SRAM still free */
    uint32_t reserved[10];
} rknn_mem_size;

/* RKNN_QUERY_CUSTOM_STRING: the free-form string stored in the model at conversion time,
 * NUL-terminated; empty when the model has none (1024 bytes). */
typedef struct _rknn_custom_string {
    char string[1024];
} rknn_custom_string;

/* A block of memory usable as tensor storage (40 bytes). Created by the rknn_create_mem*()
 * functions and released with rknn_destroy_mem(); the application must not free it itself. */
typedef struct _rknn_tensor_mem {
    void* virt_addr;                 /* CPU address of the start of the block */
    uint64_t phys_addr;              /* physical address; 0 when not applicable */
    int32_t fd;                      /* dma-buf file descriptor; <= 0 when there is none */
    int32_t offset;                  /* bytes from virt_addr to where tensor data starts */
    uint32_t size;                   /* usable bytes starting at virt_addr + offset */
    uint32_t flags;                  /* an rknn_tensor_mem_flags value */
    void* priv_data;                 /* runtime-private; do not touch */
} rknn_tensor_mem;

/* One input for rknn_inputs_set() (32 bytes). */
typedef struct _rknn_input {
    uint32_t index;                  /* input position, 0-based */
    void* buf;                       /* the data; owned by the caller, copied during the call */
    uint32_t size;                   /* bytes in buf */
    uint8_t pass_through;            /* 1: buf is already in native type/layout; no conversion */
    rknn_tensor_type type;           /* element type of buf (ignored with pass_through) */
    rknn_tensor_format fmt;          /* layout of buf (ignored with pass_through) */
} rknn_input;

/* One output for rknn_outputs_get() (24 bytes). */
typedef struct _rknn_output {
    uint8_t want_float;              /* 1: deliver float32; 0: deliver the tensor's own type */
    uint8_t is_prealloc;             /* 1: buf/size are a caller buffer to fill; 0: the runtime
                                        allocates buf, freed by rknn_outputs_release() */
    uint32_t index;                  /* output position; written back by rknn_outputs_get() */
    void* buf;                       /* result data */
    uint32_t size;                   /* bytes in buf */
} rknn_output;

/* Optional extra arguments of rknn_init() (136 bytes). */
typedef struct _rknn_init_extend {
    rknn_context ctx;                /* with RKNN_FLAG_SHARE_WEIGHT_MEM: context owning weights */
    int32_t real_model_offset;       /* with RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: byte offset of the
                                        model inside the buffer */
    uint32_t real_model_size;        /* ... and its size in bytes */
    int32_t model_buffer_fd;         /* ... dma-buf fd of the buffer */
    uint32_t model_buffer_flags;     /* ... rknn_mem_alloc_flags it was created with */
    uint8_t reserved[112];
} rknn_init_extend;

/* Optional extra arguments of rknn_run() / rknn_wait() (24 bytes). */
typedef struct _rknn_run_extend {
    uint64_t frame_id;               /* output: id of the frame this run produced */
    int32_t non_block;               /* 1: return before the run completes */
    int32_t timeout_ms;              /* maximum wait in milliseconds */
    int32_t fence_fd;                /* fence file descriptor when fences are managed outside */
} rknn_run_extend;

/* Optional extra results of rknn_outputs_get() (8 bytes). */
typedef struct _rknn_output_extend {
    uint64_t frame_id;               /* id of the frame the outputs belong to */
} rknn_output_extend;

/* ------------------------------------------------------------------------------------------------
 * Context lifecycle.
 * ---------------------------------------------------------------------------------------------- */

/*
 * Create a context for a model.
 *   context: out; receives a new non-zero handle; meaningful only when RKNN_SUCC is returned.
 *   model:   if size > 0, the model bytes; if size == 0, a NUL-terminated file path (char*).
 *            The runtime copies or finishes reading what it needs before returning, so the caller
 *            may free the buffer immediately, except with RKNN_FLAG_MODEL_BUFFER_ZERO_COPY.
 *   size:    model size in bytes, or 0 for a path.
 *   flag:    bitwise OR of RKNN_FLAG_* values.
 *   extend:  optional (may be NULL); read only during the call.
 * The context owns all memory it allocates; release it with rknn_destroy().
 */
RKNN_API int rknn_init(rknn_context* context, void* model, uint32_t size, uint32_t flag,
                       rknn_init_extend* extend);

/*
 * Create a second context on the model of an existing one, sharing its weights, so that two threads
 * can run the same model at the same time.
 *   context_in:  in; pointer to an existing valid context.
 *   context_out: out; receives the new handle. Destroy it with rknn_destroy(); it may outlive or be
 *                outlived by context_in.
 */
RKNN_API int rknn_dup_context(rknn_context* context_in, rknn_context* context_out);

/*
 * Destroy a context and release everything it owns: buffers returned by rknn_outputs_get() and not
 * yet released, perf strings, internal memory. Destroy callbacks of registered custom operators run
 * here. Memory from rknn_create_mem*() should be destroyed first with rknn_destroy_mem(). The handle
 * is invalid afterwards.
 */
RKNN_API int rknn_destroy(rknn_context context);

/*
 * Ask the context for information.
 *   cmd:  what to report (see rknn_query_cmd for the struct matching each command).
 *   info: caller-owned struct of that type; for attribute and range queries the caller zeroes it
 *         and sets `index`, the runtime fills in the rest.
 *   size: sizeof the struct `info` points to, in bytes.
 * Pointers stored in `info` (e.g. rknn_perf_detail::perf_data) are owned by the context.
 */
RKNN_API int rknn_query(rknn_context context, rknn_query_cmd cmd, void* info, uint32_t size);

/* ------------------------------------------------------------------------------------------------
 * Inference, general (copying) API.
 * ---------------------------------------------------------------------------------------------- */

/*
 * Provide input data for the next rknn_run().
 *   n_inputs: number of entries in inputs.
 *   inputs:   caller-owned array; each entry's buf is converted (type, layout, mean/std and
 *             quantisation baked into the model) and copied during the call, so the caller may
 *             reuse or free the buffers as soon as this returns.
 */
RKNN_API int rknn_inputs_set(rknn_context context, uint32_t n_inputs, rknn_input inputs[]);

/*
 * Choose how many NPU cores split a multi-batch model. Only meaningful on multi-core platforms.
 *   core_num: number of cores.
 */
RKNN_API int rknn_set_batch_core_num(rknn_context context, int core_num);

/*
 * Choose the NPU cores the context runs on. Returns an error on platforms with a single core.
 *   core_mask: an rknn_core_mask value.
 */
RKNN_API int rknn_set_core_mask(rknn_context context, rknn_core_mask core_mask);

/*
 * Run the model once on the current inputs. Blocks until the results are ready (outputs bound with
 * rknn_set_io_mem() are written before it returns).
 *   extend: optional (may be NULL); frame_id is written on return.
 */
RKNN_API int rknn_run(rknn_context context, rknn_run_extend* extend);

/*
 * Wait for a non-blocking run to complete. rknn_run() always finishes its work before returning in
 * this runtime, so rknn_wait() returns RKNN_SUCC at once and, when `extend` is given, writes the
 * id of the context's last frame to extend->frame_id.
 */
RKNN_API int rknn_wait(rknn_context context, rknn_run_extend* extend);

/*
 * Fetch results of the last rknn_run().
 *   n_outputs: number of entries in outputs.
 *   outputs:   caller-owned array; entry i receives output i (its index field is written back).
 *              With is_prealloc == 0 the runtime allocates buf (owned by the context until
 *              rknn_outputs_release()); with is_prealloc == 1 the data is copied into the caller's
 *              buf of `size` bytes.
 *   extend:    optional (may be NULL).
 */
RKNN_API int rknn_outputs_get(rknn_context context, uint32_t n_outputs, rknn_output outputs[],
                              rknn_output_extend* extend);

/*
 * Free the buffers rknn_outputs_get() allocated for entries with is_prealloc == 0; those buf
 * pointers are invalid afterwards. Caller-provided buffers are left untouched.
 *   n_outputs: number of entries in outputs (the same array passed to rknn_outputs_get()).
 */
RKNN_API int rknn_outputs_release(rknn_context context, uint32_t n_outputs, rknn_output outputs[]);

/* ------------------------------------------------------------------------------------------------
 * Memory objects and zero-copy I/O.
 * Every rknn_tensor_mem* returned below is released with rknn_destroy_mem(); NULL means failure.
 * ---------------------------------------------------------------------------------------------- */

/*
 * Wrap caller memory known by its physical address (flags RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS).
 *   phys_addr: physical address of the block.
 *   virt_addr: CPU mapping of the same block.
 *   size:      bytes.
 * The memory stays owned by the caller and must outlive the returned object; rknn_destroy_mem()
 * frees only the descriptor.
 */
RKNN_API rknn_tensor_mem* rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr,
                                                    void* virt_addr, uint32_t size);

/*
 * Wrap caller memory known by a dma-buf file descriptor (flags RKNN_TENSOR_MEMORY_FLAGS_FROM_FD).
 *   fd:        the file descriptor.
 *   virt_addr: CPU address of the start of the fd's mapping.
 *   size:      usable bytes from virt_addr + offset.
 *   offset:    bytes from the start of the mapping to the tensor data (stored in mem->offset).
 * The memory stays owned by the caller and must outlive the returned object; rknn_destroy_mem()
 * frees only the descriptor.
 */
RKNN_API rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void* virt_addr,
                                                  uint32_t size, int32_t offset);

/*
 * Wrap a media-buffer block. Exported for link compatibility; not supported, returns NULL.
 *   mb_blk: media buffer handle; offset: bytes into it.
 */
RKNN_API rknn_tensor_mem* rknn_create_mem_from_mb_blk(rknn_context ctx, void* mb_blk,
                                                      int32_t offset);

/*
 * Allocate `size` bytes of CPU-visible memory owned by the runtime (flags
 * RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, offset 0). `ctx` may be a model or a matmul context.
 * rknn_destroy_mem() frees both the descriptor and the memory.
 */
RKNN_API rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size);

/*
 * Like rknn_create_mem() with a 64-bit size in bytes and allocation options.
 *   alloc_flags: rknn_mem_alloc_flags values, optionally ORed with RKNN_MEM_FLAG_ALLOC_NO_CONTEXT,
 *                in which case ctx may be 0.
 */
RKNN_API rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags);

/*
 * Release a memory object: always the descriptor, and the memory itself when the runtime allocated
 * it. Destroy memory objects before the context they were created with.
 */
RKNN_API int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem* mem);

/*
 * Give the context the memory to hold its weights (contexts created with
 * RKNN_FLAG_MEM_ALLOC_OUTSIDE), before the first rknn_run(). The size needed is
 * rknn_mem_size::total_weight_size. `mem` remains owned by the caller and must outlive its use by
 * the context.
 */
RKNN_API int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem* mem);

/*
 * Give the context the memory for its intermediate tensors (RKNN_FLAG_MEM_ALLOC_OUTSIDE or
 * RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE), before the first rknn_run(). The size needed is
 * rknn_mem_size::total_internal_size. One block may be shared by contexts that never run at the
 * same time. `mem` remains owned by the caller and must outlive its use by the context.
 */
RKNN_API int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem* mem);

/*
 * Bind a memory object as the storage of one input or output (zero-copy I/O).
 *   mem:  data at mem->virt_addr + mem->offset; owned by the caller, must stay alive while bound.
 *   attr: an attribute as returned by an input or output query (its name and index identify the
 *         tensor); its type, fmt and pass_through describe what the buffer holds, which may differ
 *         from the model's, in which case the runtime converts. Read only during the call.
 * Inputs are read at each rknn_run(); outputs are written by the time rknn_run() returns.
 */
RKNN_API int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem* mem, rknn_tensor_attr* attr);

/*
 * Change the shape of one input of a dynamic-shape model. Deprecated: use rknn_set_input_shapes().
 */
RKNN_API int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr* attr);

/*
 * Set the shapes of all inputs of a dynamic-shape model at once. Call before the first run and on
 * every shape change; each shape must be one the model lists (RKNN_QUERY_INPUT_DYNAMIC_RANGE).
 *   n_inputs: number of entries in attr; must equal the model's input count.
 *   attr:     caller-owned; index, name, n_dims, dims and fmt of each input are read.
 */
RKNN_API int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs, rknn_tensor_attr attr[]);

/*
 * Synchronise CPU caches for a memory object. On this CPU-only runtime memory is always coherent,
 * so this only validates its arguments.
 *   mode: direction of the synchronisation.
 */
RKNN_API int rknn_mem_sync(rknn_context context, rknn_tensor_mem* mem, rknn_mem_sync_mode mode);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPENRKNN_RKNN_API_H */
