// Reference Pad (any dtype, elements copied by size).
//
// Per axis, negative pads first crop the input to a kept range of length L; the output
// coordinate o then maps to kept coordinate k = o - max(pad_begin, 0). When k is outside [0, L):
//   constant: the element is "value" (converted to the dtype);
//   edge:     k is clamped to [0, L - 1];
//   reflect:  k is mirrored at the ends without repeating the edge (period 2 * (L - 1));
//   wrap:     k is taken modulo L.
// Quantized int8 data (docs/numerics.md): the same moves, the output keeps the input's
// parameters, and "value" (a real value) becomes quantize(value) = sat8(rne(value / s) + zp).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/float_to_int.h"
#include "kernels/ref/pad_modes.h"
#include "kernels/ref/quant_passthrough.h"

namespace orknn {
namespace {

template <typename T>
void store(T v, uint8_t* out) {
  std::memcpy(out, &v, sizeof(T));
}

// `value` as one element of dtype `t`: integers truncate toward zero as a C cast would, with
// float_to_int's defined result for values the type cannot hold (a model's "value" may be any
// float).
void encode_value(float value, DType t, uint8_t* out) {
  switch (t) {
    case DType::kF32: store(value, out); break;
    case DType::kF16: store(fp32_to_fp16(value), out); break;
    case DType::kI8: store(float_to_int<int8_t>(value), out); break;
    case DType::kU8: store(float_to_int<uint8_t>(value), out); break;
    case DType::kBool: store<uint8_t>(value != 0.f ? 1 : 0, out); break;
    case DType::kI16: store(float_to_int<int16_t>(value), out); break;
    case DType::kU16: store(float_to_int<uint16_t>(value), out); break;
    case DType::kI32: store(float_to_int<int32_t>(value), out); break;
    case DType::kU32: store(float_to_int<uint32_t>(value), out); break;
    case DType::kI64: store(float_to_int<int64_t>(value), out); break;
  }
}

class PadRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Tensor& x = ctx.in_tensor(0);
    const Attrs& at = ctx.node->attrs;
    const std::vector<int64_t> pads = at.get_ints("pads");
    const std::string mode = at.get_string("mode", "constant");
    mode_ = pad_mode(mode);
    const size_t rank = x.shape.size();
    in_shape_ = x.shape;
    out_shape_ = ctx.out_tensor(0).shape;
    shift_.resize(rank);
    crop_.resize(rank);
    kept_.resize(rank);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t begin = pads[i], end = pads[rank + i];
      shift_[i] = begin > 0 ? begin : 0;
      crop_[i] = begin < 0 ? -begin : 0;
      kept_[i] = x.shape[i] - crop_[i] - (end < 0 ? -end : 0);
    }
    esize_ = dtype_size(x.dtype);
    if (!ctx.out_tensor(0).quant.empty()) {
      const QuantScalar qy = per_tensor(ctx.out_tensor(0));
      store(quantize_value(at.get_float("value", 0.f), qy.scale, qy.zp), value_);
    } else {
      encode_value(at.get_float("value", 0.f), x.dtype, value_);
    }
    total_ = ctx.out_tensor(0).numel();
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const uint8_t* x = ctx.in<uint8_t>(0);
    uint8_t* y = ctx.out<uint8_t>(0);
    const size_t rank = in_shape_.size();
    for (int64_t e = 0; e < total_; ++e) {
      // Decompose the output index from the last axis; build the source offset on the way.
      int64_t rem = e, src = 0, stride = 1;
      bool use_value = false;
      for (size_t d = rank; d-- > 0;) {
        const int64_t o = rem % out_shape_[d];
        rem /= out_shape_[d];
        int64_t i;
        if (!pad_source(mode_, o, shift_[d], crop_[d], kept_[d], &i)) {
          use_value = true;
          break;
        }
        src += i * stride;
        stride *= in_shape_[d];
      }
      std::memcpy(y + e * esize_, use_value ? value_ : x + src * esize_, esize_);
    }
  }

 private:
  PadMode mode_ = PadMode::kConstant;
  Shape in_shape_, out_shape_;
  std::vector<int64_t> shift_, crop_, kept_;
  size_t esize_ = 4;
  uint8_t value_[8] = {};
  int64_t total_ = 0;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Pad, "ref", kPriorityReference, nullptr, PadRef);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Pad, QuantPassthrough<PadRef>);

}  // namespace orknn
