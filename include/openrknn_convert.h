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

/* The message of the calling thread's last failed orknn_* call ("" if none). */
const char* orknn_last_error(void);

/* Releases a buffer returned by orknn_convert_onnx(); NULL is ignored. */
void orknn_free(void* p);

#ifdef __cplusplus
}
#endif

#endif
