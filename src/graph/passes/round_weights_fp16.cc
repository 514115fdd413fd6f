// fp16 mode: the NPU stores float weights as fp16, so float constants take their fp16 values here,
// once, and the runtime computes with exactly the weights the board would use. Storage stays
// float32 (kernels compute in fp32; the runtime rounds op outputs itself).
#include <algorithm>
#include <vector>

#include "common/fp16.h"
#include "graph/passes/passes.h"

namespace orknn {

Status round_weights_fp16(Graph& g, int* changes) {
  int changed = 0;
  for (Tensor& t : g.tensors) {
    if (!t.is_const() || t.dtype != DType::kF32 || !t.quant.empty() || t.numel() == 0) continue;
    const size_t n = static_cast<size_t>(t.numel());
    std::vector<float> v(t.const_ptr<float>(), t.const_ptr<float>() + n);
    round_to_fp16(v.data(), n);
    if (std::equal(v.begin(), v.end(), t.const_ptr<float>())) continue;
    set_const_data(t, v.data(), n * sizeof(float));
    ++changed;
  }
  if (changes) *changes += changed;
  return Status::Ok();
}

}  // namespace orknn
