/* OpenRKNN's converter as a C library (libopenrknn_convert.so): ONNX -> .rknn in process, for
 * language bindings (the Python package's RKNN.build) and tools. Not part of the vendor's API;
 * rknn_convert is the same conversion on the command line (docs/convert.md). */
#ifndef OPENRKNN_CONVERT_H
#define OPENRKNN_CONVERT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Converts an ONNX model into an OpenRKNN .rknn model held in memory.
 *   onnx_path:  the ONNX file (external data next to it is read); or NULL with onnx_data/onnx_size,
 *               a serialised ModelProto in memory (no external data).
 *   config:     conversion settings as YAML or JSON text, with the keys of the vendor toolkit's
 *               YAML config (target_platform, mean_values, std_values, quantized_dtype,
 *               quantized_algorithm, dataset, inputs, outputs, input_size_list, dynamic_input, ...;
 *               docs/convert.md); NULL or "" for the defaults.
 *   base_dir:   directory a relative dataset path is resolved against; NULL: the current one.
 *   model, model_size: receive the model; release it with orknn_free().
 * Returns 0, or a negative RKNN_ERR_* code; orknn_last_error() then holds the message (not logged:
 * the caller reports it). Warnings of the conversion go to stderr like rknn_convert's. */
int orknn_convert_onnx(const char* onnx_path, const void* onnx_data, size_t onnx_size, const char* config,
                       const char* base_dir, void** model, size_t* model_size);

/* Per-tensor error of a quantized model against the float ONNX model it was converted from (what
 * `rknn_inspect accuracy` prints, docs/inspect.md): the ONNX model is converted again in fp32 with
 * the model's input shapes and mean/std, both run on the same inputs, and every tensor compared
 * ("entire": from the inputs; "single": each layer fed the float values).
 *   onnx_path:   the float ONNX model.
 *   config:      as for orknn_convert_onnx; only its subgraph cut (inputs, outputs) is read. May be NULL.
 *   model, model_size: the quantized .rknn model's bytes.
 *   input_files, n_input_files: one image or .npy per model input; 0 files: random [0,1) values.
 *   report_json: receives the report as JSON (docs/inspect.md); release it with orknn_free().
 * Returns 0 or a negative RKNN_ERR_* code (message in orknn_last_error()). */
int orknn_accuracy_analysis(const char* onnx_path, const char* config, const void* model, size_t model_size,
                            const char* const* input_files, size_t n_input_files, char** report_json);

/* The message of the calling thread's last failed orknn_* call ("" if none). */
const char* orknn_last_error(void);

/* Releases a buffer returned by orknn_convert_onnx() or orknn_accuracy_analysis(); NULL is ignored. */
void orknn_free(void* p);

#ifdef __cplusplus
}
#endif

#endif
