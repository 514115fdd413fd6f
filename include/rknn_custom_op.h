/*
 * rknn_custom_op.h - user-defined operators for OpenRKNN's librknnrt.so.
 *
 * A model may contain operators the runtime does not implement itself. The application describes
 * each such operator type with an rknn_custom_op (type name plus callbacks) and registers them with
 * rknn_register_custom_ops() right after rknn_init(). Names, values and layouts follow the vendor
 * ABI; the text is our own.
 *
 * Callback timing: `init` runs during rknn_register_custom_ops(); `prepare` and `compute` run
 * during each rknn_run(); `destroy` runs during rknn_destroy(). Only `compute` is required.
 *
 * Data seen by CPU callbacks: float tensors are FLOAT32 in the operator's original (ONNX) layout and
 * dims; the data of tensor t starts at (char*)t.mem.virt_addr + t.mem.offset and holds
 * t.attr.n_elems elements. The tensor memory belongs to the runtime and is valid only during the
 * callback.
 *
 * Plugins loaded with dlopen() export a function of type get_custom_op_func (conventionally named
 * get_rknn_custom_op), marked with RKNN_CUSTOM_OP_EXPORT.
 */
#ifndef OPENRKNN_RKNN_CUSTOM_OP_H
#define OPENRKNN_RKNN_CUSTOM_OP_H

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Warning code (not an error) a custom-operator callback may return to say it skipped its
 * computation. */
#define RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE -14

#define RKNN_CUSTOM_OP_MAX_STR_LEN 64   /* maximum length of short custom-op strings */
#define RKNN_CUSTOM_OP_MAX_VALUE_LEN 32 /* maximum number of values of a custom-op attribute */

/* For plugin libraries built with -fvisibility=hidden: marks the symbols they export. */
#ifndef RKNN_CUSTOM_OP_EXPORT
#if defined(__GNUC__) || defined(__clang__)
#define RKNN_CUSTOM_OP_EXPORT __attribute__((visibility("default")))
#else
#define RKNN_CUSTOM_OP_EXPORT
#endif
#endif

/* Runtime-private handle stored in each operator context (the misspelled name is part of the
 * ABI). Same width as rknn_context. */
#ifdef __arm__
typedef uint32_t rknn_custom_op_interal_context;
#else
typedef uint64_t rknn_custom_op_interal_context;
#endif

/* Device a custom operator runs on. */
typedef enum _rknn_target_type {
    RKNN_TARGET_TYPE_CPU = 1,
    RKNN_TARGET_TYPE_GPU = 2,
    RKNN_TARGET_TYPE_MAX = 3
} rknn_target_type;

/* OpenCL objects handed to GPU operators (24 bytes). Owned by the runtime; NULL on this CPU-only
 * runtime. Cast to cl_context, cl_command_queue and cl_kernel. */
typedef struct _rknn_gpu_op_context {
    void* cl_context;
    void* cl_command_queue;
    void* cl_kernel;
} rknn_gpu_op_context;

/* Per-node context passed to every callback (48 bytes). One exists for each node of the
 * operator's type in the model, from registration until rknn_destroy(). */
typedef struct _rknn_custom_op_context {
    rknn_target_type target;                     /* device of the operator */
    rknn_custom_op_interal_context internal_ctx; /* runtime-private; do not touch */
    rknn_gpu_op_context gpu_ctx;                 /* OpenCL objects for GPU operators */
    void* priv_data;                             /* free for the callbacks' own state: e.g. set
                                                    in init, freed in destroy */
} rknn_custom_op_context;

/* One input or output tensor of a custom operator call (416 bytes). */
typedef struct _rknn_custom_op_tensor {
    rknn_tensor_attr attr;           /* shape, type and layout */
    rknn_tensor_mem mem;             /* where the data is */
} rknn_custom_op_tensor;

/* One attribute of a custom-operator node, as read by rknn_custom_op_get_op_attr() (272 bytes). */
typedef struct _rknn_custom_op_attr {
    char name[RKNN_MAX_NAME_LEN];    /* attribute name, NUL-terminated */
    rknn_tensor_type dtype;          /* element type of data (e.g. FLOAT32 for a float, INT64 for
                                        an integer) */
    uint32_t n_elems;                /* number of elements at data */
    void* data;                      /* the values; owned by the runtime, valid until
                                        rknn_destroy(); NULL when the attribute is absent */
} rknn_custom_op_attr;

/* Description of one custom operator type (832 bytes). The runtime copies the struct during
 * rknn_register_custom_ops(); strings it points to are read during that call. */
typedef struct _rknn_custom_op {
    uint32_t version;                       /* version of the operator implementation */
    rknn_target_type target;                /* device the callbacks run on */
    char op_type[RKNN_MAX_NAME_LEN];        /* operator type name as it appears in the model */
    char cl_kernel_name[RKNN_MAX_NAME_LEN]; /* GPU: OpenCL kernel function name */
    char* cl_kernel_source;                 /* GPU: kernel source text, or a file path when
                                               cl_source_size is 0 */
    uint64_t cl_source_size;                /* GPU: bytes of cl_kernel_source, 0 for a path */
    char cl_build_options[RKNN_MAX_NAME_LEN]; /* GPU: OpenCL compiler options */
    /* Callbacks. Each gets the node's context, its n_inputs inputs and n_outputs outputs (arrays
     * owned by the runtime, valid only during the call) and returns RKNN_SUCC or an error code. */
    int (*init)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                rknn_custom_op_tensor* outputs, uint32_t n_outputs);     /* optional */
    int (*prepare)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                   uint32_t n_inputs, rknn_custom_op_tensor* outputs,
                   uint32_t n_outputs);                                  /* optional */
    int (*compute)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                   uint32_t n_inputs, rknn_custom_op_tensor* outputs,
                   uint32_t n_outputs);                                  /* required */
    int (*compute_native)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                          uint32_t n_inputs, rknn_custom_op_tensor* outputs,
                          uint32_t n_outputs);                           /* unused: set NULL */
    int (*destroy)(rknn_custom_op_context* op_ctx);                      /* optional */
} rknn_custom_op;

/* Signature of a plugin's entry point: returns a pointer to an operator description that the plugin
 * owns and keeps alive while the library is loaded. */
typedef rknn_custom_op* (*get_custom_op_func)(void);

/*
 * Register custom operator types with a context. Call after rknn_init() and before the first
 * rknn_run(). Each node of a registered type gets its own rknn_custom_op_context, and `init` runs
 * for it during this call.
 *   op:            caller-owned array of custom_op_num descriptions; copied during the call.
 *   custom_op_num: number of entries in op.
 */
RKNN_API int rknn_register_custom_ops(rknn_context ctx, rknn_custom_op* op, uint32_t custom_op_num);

/*
 * Read an attribute of the node a callback is running for.
 *   op_ctx:    the context the callback received.
 *   attr_name: NUL-terminated attribute name as stored in the model (e.g. "alpha", "axis").
 *   op_attr:   out; caller-owned; receives name, dtype, n_elems and a pointer to the values (owned
 *              by the runtime). When the node has no such attribute, n_elems is 0 and data NULL.
 */
RKNN_API void rknn_custom_op_get_op_attr(rknn_custom_op_context* op_ctx, const char* attr_name,
                                         rknn_custom_op_attr* op_attr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPENRKNN_RKNN_CUSTOM_OP_H */
