// IEEE binary16 conversion. Round-to-nearest-even, as the NPU stores fp16.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace orknn {

uint16_t fp32_to_fp16(float f);
float fp16_to_fp32(uint16_t h);

// Bulk conversions (vectorised where the CPU allows).
void fp32_to_fp16(const float* src, uint16_t* dst, size_t n);
void fp16_to_fp32(const uint16_t* src, float* dst, size_t n);
// Rounds every value to the nearest fp16 value in place (overflow -> +-inf), keeping fp32 storage.
void round_to_fp16(float* data, size_t n);

}  // namespace orknn
