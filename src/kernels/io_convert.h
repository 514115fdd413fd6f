// Whole-buffer conversions between real values and int8 codes for the runtime's I/O
// (rknn_inputs_set of float data into an int8 input, rknn_outputs_get of an int8 output as float),
// bit-exact with quantize_value / dequantize_value (kernels/quant_util.h). A backend registers
// faster loops (ORKNN_REGISTER_IO_CONVERT); these functions run the highest-priority registered
// loops the CPU has and OPENRKNN_DISABLE_KERNELS leaves on, else plain loops.
#pragma once
#include <cstdint>

namespace orknn {

void quantize_f32_s8(const float* x, int8_t* y, int64_t n, float scale, int32_t zp);
void dequantize_s8_f32(const int8_t* x, float* y, int64_t n, float scale, int32_t zp);
// The name of the loops those run now ("plain" for the built-in ones).
const char* io_convert_name();

struct IoConvertEntry {
  const char* name;
  int priority;
  bool (*available)();  // the CPU has what the loops need
  void (*quantize_f32_s8)(const float* x, int8_t* y, int64_t n, float scale, int32_t zp);
  void (*dequantize_s8_f32)(const int8_t* x, float* y, int64_t n, float scale, int32_t zp);
};
void register_io_convert(const IoConvertEntry& e);

struct IoConvertRegistrar {
  explicit IoConvertRegistrar(const IoConvertEntry& e) { register_io_convert(e); }
};
#define ORKNN_REGISTER_IO_CONVERT(ENTRY) static ::orknn::IoConvertRegistrar kIoConvertReg_(ENTRY)

}  // namespace orknn
