#include "kernels/io_convert.h"

#include <vector>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"

namespace orknn {
namespace {

std::vector<IoConvertEntry>& entries() {
  static std::vector<IoConvertEntry> e;  // filled by static registrars before main()
  return e;
}

void plain_quantize(const float* x, int8_t* y, int64_t n, float scale, int32_t zp) {
  for (int64_t i = 0; i < n; ++i) y[i] = quantize_value(x[i], scale, zp);
}
void plain_dequantize(const int8_t* x, float* y, int64_t n, float scale, int32_t zp) {
  for (int64_t i = 0; i < n; ++i) y[i] = dequantize_value(x[i], scale, zp);
}
const IoConvertEntry kPlain{"plain", kPriorityReference, nullptr, plain_quantize, plain_dequantize};

const IoConvertEntry& best() {
  const IoConvertEntry* pick = &kPlain;
  if (reference_kernels_only()) return *pick;
  for (const IoConvertEntry& e : entries())
    if (e.priority > pick->priority && e.available() && !kernel_disabled(e.name)) pick = &e;
  return *pick;
}

}  // namespace

void register_io_convert(const IoConvertEntry& e) { entries().push_back(e); }

void quantize_f32_s8(const float* x, int8_t* y, int64_t n, float scale, int32_t zp) {
  best().quantize_f32_s8(x, y, n, scale, zp);
}
void dequantize_s8_f32(const int8_t* x, float* y, int64_t n, float scale, int32_t zp) {
  best().dequantize_s8_f32(x, y, n, scale, zp);
}
const char* io_convert_name() { return best().name; }

}  // namespace orknn
