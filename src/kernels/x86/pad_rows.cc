// Pad as whole rows of the innermost axis copied with memcpy and the padding filled, "x86_pad_int8"
// (quantized, on NCHW or on the runtime's channels-last INT8 activations, kernel.h blocked) and
// "x86_pad_f32" (float32, NCHW). The reference kernel (kernels/ref/pad.cc) decomposes every output
// index: INT8 inception_v3 exports its count_include_pad pools as Pad + AveragePool, and those Pads
// were a large part of the model's time (issue 28), as the float Pads before timm MaxViT's strided
// convolutions were of its. Plain C++ (the copies are the library's), in the x86 backend because
// it serves the x86 layouts.
//
// Same semantics as the reference, so bit-exact by construction: per axis, negative pads crop the
// input to a kept range of length L; output coordinate o reads kept coordinate k = o - max(begin, 0);
// outside [0, L) constant mode gives the value (INT8: quantize(value), the output keeping the
// input's parameters), edge clamps k, reflect mirrors it without repeating the edge, wrap takes it
// modulo L. On a blocked INT8 4-D tensor the same moves run over the (N, H, W, C) memory order with
// the pads permuted alike.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/pad_modes.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// A Pad node whose pads infer normalised into the attribute, of the given element type.
bool pad_node(const Graph& g, const Node& n, DType dtype) {
  if (n.op != OpId::Pad || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0) return false;  // not normalised by infer
  const Tensor& x = g.tensor(n.inputs[0]);
  return !x.shape.empty() && x.dtype == dtype && g.tensor(n.outputs[0]).dtype == dtype &&
         n.attrs.get_ints("pads", {}).size() == 2 * x.shape.size();
}

// A node whose output does not keep the input's parameters is refused by the reference kernel,
// with the message that names the node.
bool supports_pad_int8(const Graph& g, const Node& n) {
  return is_quantized_node(g, n) && pad_node(g, n, DType::kI8) &&
         same_quant(g.tensor(n.inputs[0]).quant, g.tensor(n.outputs[0]).quant);
}

bool supports_pad_f32(const Graph& g, const Node& n) { return !is_quantized_node(g, n) && pad_node(g, n, DType::kF32); }

// Below this many output bytes per thread, waking another thread costs more than it saves.
constexpr int64_t kMinBytesPerThread = 64 * 1024;

// T: int8_t (quantized) or float. Blocked float (nChw16c) is not taken: its channel blocks would
// need padding of their own.
template <typename T>
class PadRows : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    return std::is_same_v<T, int8_t> && g.tensor(n.inputs[0]).shape.size() == 4 ? BlockedIo::kUniform
                                                                                 : BlockedIo::kNone;
  }

  Status prepare(const KernelContext& ctx) override {
    const Tensor& x = ctx.in_tensor(0);
    const Attrs& at = ctx.node->attrs;
    mode_ = pad_mode(at.get_string("mode", "constant"));
    if constexpr (std::is_same_v<T, int8_t>) {
      ORKNN_RETURN_IF_ERROR(check_quant_passthrough(*ctx.graph, *ctx.node));
      const QuantScalar qy = per_tensor(ctx.out_tensor(0));
      value_ = quantize_value(at.get_float("value", 0.f), qy.scale, qy.zp);
    } else {
      value_ = at.get_float("value", 0.f);
    }
    const std::vector<int64_t> pads = at.get_ints("pads");
    const size_t rank = x.shape.size();
    // Axes in memory order: NCHW, or N, H, W, C for a blocked tensor.
    std::vector<size_t> order(rank);
    for (size_t i = 0; i < rank; ++i) order[i] = i;
    if (ctx.input_blocked(0) && rank == 4) order = {0, 2, 3, 1};
    in_.resize(rank);
    out_.resize(rank);
    shift_.resize(rank);
    crop_.resize(rank);
    kept_.resize(rank);
    for (size_t d = 0; d < rank; ++d) {
      const size_t a = order[d];
      const int64_t begin = pads[a], end = pads[rank + a];
      in_[d] = x.shape[a];
      out_[d] = ctx.out_tensor(0).shape[a];
      shift_[d] = std::max<int64_t>(begin, 0);
      crop_[d] = std::max<int64_t>(-begin, 0);
      kept_[d] = x.shape[a] - crop_[d] - std::max<int64_t>(-end, 0);
    }
    in_stride_.assign(rank, 1);
    for (size_t d = rank - 1; d-- > 0;) in_stride_[d] = in_stride_[d + 1] * in_[d + 1];
    rows_ = 1;
    for (size_t d = 0; d + 1 < rank; ++d) rows_ *= out_[d];
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const T* x = ctx.in<T>(0);
    T* y = ctx.out<T>(0);
    const int64_t w = out_.back();
    if (rows_ == 0 || w == 0) return;
    const int nt = threads_for(rows_ * w * static_cast<int64_t>(sizeof(T)), kMinBytesPerThread, ctx.num_threads);
    parallel_ranges(rows_, nt, [&](int64_t r0, int64_t r1, int) {
      for (int64_t r = r0; r < r1; ++r) row(x, r, y + r * w);
    });
  }

 private:
  // Output row r (all axes but the last) into out.
  void row(const T* x, int64_t r, T* out) const {
    const size_t last = out_.size() - 1;
    const int64_t w = out_[last];
    int64_t src = 0;
    for (size_t d = last; d-- > 0;) {
      const int64_t o = r % out_[d];
      r /= out_[d];
      int64_t i;
      if (!pad_source(mode_, o, shift_[d], crop_[d], kept_[d], &i)) {  // a row of the value
        std::fill_n(out, w, value_);
        return;
      }
      src += i * in_stride_[d];
    }
    // The innermost axis: [0, lead) before the kept range, then the kept elements that fit, then
    // the rest after it.
    const T* in = x + src + crop_[last];
    const int64_t len = kept_[last], shift = shift_[last];
    const int64_t lead = std::min(shift, w), body = std::max<int64_t>(0, std::min(len, w - lead));
    if (body > 0) std::memcpy(out + lead, in, static_cast<size_t>(body) * sizeof(T));
    if (mode_ == PadMode::kConstant) {
      std::fill_n(out, lead, value_);
      std::fill_n(out + lead + body, w - lead - body, value_);
      return;
    }
    for (int64_t o = 0; o < lead; ++o) out[o] = in[pad_map_outside(mode_, o - shift, len)];
    for (int64_t o = lead + body; o < w; ++o) out[o] = in[pad_map_outside(mode_, o - shift, len)];
  }

  PadMode mode_ = PadMode::kConstant;
  T value_ = 0;
  std::vector<int64_t> in_, out_, shift_, crop_, kept_, in_stride_;
  int64_t rows_ = 0;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Pad, "x86_pad_int8", kPriorityGeneral, supports_pad_int8, PadRows<int8_t>);
ORKNN_REGISTER_KERNEL(Pad, "x86_pad_f32", kPriorityGeneral, supports_pad_f32, PadRows<float>);

}  // namespace orknn
