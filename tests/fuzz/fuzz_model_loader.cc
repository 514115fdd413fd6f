// libFuzzer target: arbitrary bytes as a .rknn model. Exercises the FlatBuffers + graph verifier
// (load_model), the runtime's own load path (load_model_from_buffer, which re-runs infer on every
// node), Context::create (planning, kernel selection, prepare) on the reference kernels, the
// custom-operator registration, the choice of a shape set and, when a context comes up, one
// inputs_set + run + outputs_get (tests/fuzz/fuzz_run.h; models with more than kMaxActivationBytes of non-constant tensors stop
// after loading). The fast kernels get the same treatment in fuzz_fast_kernels. Any Status error
// is fine; crashes, leaks, sanitizer reports and hangs are findings.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "fuzz_run.h"
#include "graph/ir.h"
#include "model/model_io.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The reference kernels (read at every plan): they must take every node the verifier accepts.
  setenv("OPENRKNN_REF_KERNELS", "1", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // 1. The format loader + graph verifier on its own, from 64-byte aligned storage as it requires.
  {
    const size_t padded = (size + 63) / 64 * 64;
    std::shared_ptr<uint8_t> owner(static_cast<uint8_t*>(std::aligned_alloc(64, padded ? padded : 64)), std::free);
    if (size) std::memcpy(owner.get(), data, size);
    orknn::Graph g;
    (void)orknn::load_model(owner, owner.get(), size, &g);
  }
  // 2. The runtime's path: copy + load + re-verify, then a context and one inference.
  std::shared_ptr<const orknn::Model> model;
  if (!orknn::load_model_from_buffer(data, size, &model).ok()) return 0;
  if (orknn_fuzz::activation_bytes(model->graph) > orknn_fuzz::kMaxActivationBytes) return 0;
  (void)orknn_fuzz::context_and_run(model, data, size);
  return 0;
}
