// Custom nodes compute in the application's callbacks, which only the runtime can call
// (src/runtime/custom_ops.h replaces this kernel with one that calls them). Outside the runtime
// (converter calibration, rknn_inspect, tests: executors without the callbacks) this stand-in
// gives every output a deterministic value: a copy of input 0 when the shapes match, else zeros. The quantizer keeps
// Custom nodes and everything computed from them in float, so no quantization parameter is ever
// derived from these values; constant folding never runs a Custom node (fold_constants.cc).
#include <cstring>

#include "kernels/kernel.h"

namespace orknn {
namespace {

void custom_standin(const KernelContext& ctx) {
  for (size_t o = 0; o < ctx.outputs.size(); ++o) {
    const Tensor& out = ctx.out_tensor(o);
    if (ctx.has_input(0) && ctx.in_tensor(0).shape == out.shape && ctx.in_tensor(0).dtype == out.dtype)
      std::memcpy(ctx.outputs[o], ctx.inputs[0], out.nbytes());
    else
      std::memset(ctx.outputs[o], 0, out.nbytes());
  }
}

}  // namespace

static ::orknn::KernelRegistrar kCustomStandinReg(::orknn::KernelEntry{
    OpId::Custom, "custom_standin", kPriorityReference, nullptr,
    []() -> std::unique_ptr<Kernel> { return std::make_unique<FnKernel>(custom_standin); }});

}  // namespace orknn
