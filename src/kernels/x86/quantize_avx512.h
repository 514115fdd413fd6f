// The AVX-512 QuantizeLinear / DequantizeLinear loops of quantize_avx512.cc for the runtime's own
// conversions (rknn_inputs_set of float data into an int8 input, rknn_outputs_get of an int8
// output as float): bit-exact with quantize_value / dequantize_value (kernels/quant_util.h).
#pragma once
#include <cstdint>

namespace orknn {

// y[i] = quantize_value(x[i], scale, zp) for i < n, on the calling thread. False (nothing
// written) when the CPU lacks AVX-512F/BW/VL.
bool x86_quantize_f32_s8(const float* x, int8_t* y, int64_t n, float scale, int32_t zp);
// y[i] = dequantize_value(x[i], scale, zp); false as above.
bool x86_dequantize_s8_f32(const int8_t* x, float* y, int64_t n, float scale, int32_t zp);

}  // namespace orknn
