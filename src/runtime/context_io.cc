// runtime::Context: inputs (rknn_inputs_set) and outputs (rknn_outputs_get / _release).
#include <cstdlib>
#include <cstring>

#include "common/fp16.h"
#include "common/raw_enum.h"
#include "kernels/io_convert.h"
#include "kernels/quant_util.h"
#include "runtime/context.h"
#include "runtime/tensor_io.h"

namespace orknn {

const Context::UInt8InputTable& Context::uint8_table(uint32_t index) {
  if (uint8_tables_.size() != n_inputs()) uint8_tables_.resize(n_inputs());
  UInt8InputTable& tab = uint8_tables_[index];
  if (!tab.f32.empty()) return tab;
  const GraphInput& gi = model_->graph.inputs[index];
  const Tensor& t = model_->graph.tensor(gi.tensor);
  // One table per channel when mean/std differ per channel, else one for all.
  const size_t per_channel = std::max(gi.mean.size(), gi.std.size());
  tab.channels = per_channel > 1 ? per_channel : 1;
  tab.f32.resize(tab.channels * 256);
  tab.q8.resize(tab.channels * 256);
  const QuantScalar q = per_tensor(t);
  for (size_t c = 0; c < tab.channels; ++c) {
    const float m = gi.mean.empty() ? 0.f : gi.mean[gi.mean.size() == 1 ? 0 : c];
    const float sd = gi.std.empty() ? 1.f : gi.std[gi.std.size() == 1 ? 0 : c];
    for (int u = 0; u < 256; ++u) {
      const float v = (static_cast<float>(u) - m) / sd;
      tab.f32[c * 256 + static_cast<size_t>(u)] = v;
      tab.q8[c * 256 + static_cast<size_t>(u)] = quantize_value(v, q.scale, q.zp);
    }
  }
  return tab;
}

Status Context::inputs_set(uint32_t n, const rknn_input* inputs) {
  ORKNN_RETURN_IF_ERROR(check_runnable("rknn_inputs_set", false));
  if (n == 0 || n > n_inputs())
    return ORKNN_ERR(kInvalidParam, "rknn_inputs_set: n_inputs %u, the model has %u inputs", n, n_inputs());
  const Graph& g = model_->graph;
  for (uint32_t k = 0; k < n; ++k) {
    const rknn_input& in = inputs[k];
    if (in.index >= n_inputs())
      return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: inputs[%u].index %u out of range (model has %u inputs)", k, in.index, n_inputs());
    const GraphInput& gi = g.inputs[in.index];
    const Tensor& t = g.tensor(gi.tensor);
    if (!in.buf) return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: input %u ('%s'): buf is NULL", in.index, t.name.c_str());
    rknn_tensor_attr attr;
    ORKNN_RETURN_IF_ERROR(input_attr(in.index, &attr));
    const bool pass = in.pass_through != 0;
    // pass_through: the buffer already holds the reported (native) type and layout.
    const int raw_type = pass ? static_cast<int>(attr.type) : raw_enum(in.type);
    const int raw_fmt = pass ? static_cast<int>(attr.fmt) : raw_enum(in.fmt);
    if (raw_type < 0 || raw_type >= RKNN_TENSOR_TYPE_MAX || !supported_input_type(static_cast<rknn_tensor_type>(raw_type)))
      return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: input %u ('%s'): unsupported type %d", in.index, t.name.c_str(), raw_type);
    if (raw_fmt != RKNN_TENSOR_NCHW && raw_fmt != RKNN_TENSOR_NHWC && raw_fmt != RKNN_TENSOR_UNDEFINED)
      return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: input %u ('%s'): format %d is not accepted here (use NHWC or NCHW)",
                       in.index, t.name.c_str(), raw_fmt);
    const rknn_tensor_type type = static_cast<rknn_tensor_type>(raw_type);
    const rknn_tensor_format fmt = static_cast<rknn_tensor_format>(raw_fmt);
    const size_t count = static_cast<size_t>(t.numel());
    const size_t need = count * rknn_type_size(type);
    if (in.size < need)
      return ORKNN_ERR(kInvalidInput, "rknn_inputs_set: input %u ('%s'): size %u is smaller than %zu (%zu elements of %s)",
                       in.index, t.name.c_str(), in.size, need, count, get_type_string(type));

    void* dst = tensor_ptr(gi.tensor);
    const Shape& s = t.shape;
    const bool nhwc = s.size() == 4 && fmt == RKNN_TENSOR_NHWC;
    const int64_t C = s.size() == 4 ? s[1] : 1, H = s.size() == 4 ? s[2] : 1, W = s.size() == 4 ? s[3] : 1;
    const int64_t plane = H * W;
    // Quantized inputs take real values and quantize them (docs/numerics.md), unless the data is
    // already native (pass_through).
    const bool quantize = !pass && !t.quant.empty();
    if (!pass && type == RKNN_TENSOR_UINT8 && (t.dtype == DType::kF32 || quantize)) {
      // Images: mean/std (per channel, dim 1 of the model's NCHW input) and quantization through a
      // per-channel table of the 256 byte values, computed once with the same arithmetic.
      const UInt8InputTable& tab = uint8_table(in.index);
      const uint8_t* src = static_cast<const uint8_t*>(in.buf);
      const int64_t N = static_cast<int64_t>(count) / (C * plane);
      for (int64_t nn = 0; nn < N; ++nn) {
        for (int64_t c = 0; c < C; ++c) {
          const size_t base = static_cast<size_t>((nn * C + c) * plane);
          const size_t tc = tab.channels == 1 ? 0 : static_cast<size_t>(c) * 256;
          for (int64_t i = 0; i < plane; ++i) {
            const size_t si = nhwc ? static_cast<size_t>((nn * plane + i) * C + c) : base + static_cast<size_t>(i);
            if (quantize) static_cast<int8_t*>(dst)[base + i] = tab.q8[tc + src[si]];
            else static_cast<float*>(dst)[base + i] = tab.f32[tc + src[si]];
          }
        }
      }
    } else if (!nhwc && type == RKNN_TENSOR_FLOAT32 && t.dtype == DType::kF32) {
      std::memcpy(dst, in.buf, count * 4);  // the common float32 NCHW case: a copy
    } else if (!nhwc && type == RKNN_TENSOR_FLOAT32 && quantize && t.dtype == DType::kI8) {
      quantize_f32_s8(static_cast<const float*>(in.buf), static_cast<int8_t*>(dst), static_cast<int64_t>(count),
                      per_tensor(t).scale, per_tensor(t).zp);  // the vectorised quantize_value
    } else {
      const QuantScalar q = per_tensor(t);
      for (size_t i = 0; i < count; ++i) {
        // i is the destination (NCHW) index; find the source index.
        size_t src = i;
        if (nhwc) {
          int64_t w = static_cast<int64_t>(i) % W, h = (static_cast<int64_t>(i) / W) % H;
          int64_t c = (static_cast<int64_t>(i) / plane) % C;
          int64_t nn = static_cast<int64_t>(i) / (plane * C);
          src = static_cast<size_t>(((nn * H + h) * W + w) * C + c);
        }
        const double v = load_elem(in.buf, type, src);
        if (quantize) static_cast<int8_t*>(dst)[i] = quantize_value(static_cast<float>(v), q.scale, q.zp);
        else store_elem(dst, t.dtype, i, v);
      }
    }
    if (t.dtype == DType::kF32 && g.precision == FloatPrecision::kFp16)
      round_to_fp16(static_cast<float*>(dst), count);  // the NPU holds its inputs as fp16
    input_set_[in.index] = true;
  }
  return Status::Ok();
}

const void* Context::output_src(uint32_t index) const {
  if (async()) return async_delivered_[index].data();
  return tensor_ptr(model_->graph.outputs[index]);
}

Status Context::outputs_get(uint32_t n, rknn_output* outputs) {
  if (n == 0 || n > n_outputs())
    return ORKNN_ERR(kInvalidOutput, "rknn_outputs_get: n_outputs %u, the model has %u outputs", n, n_outputs());
  if (!has_run_) return ORKNN_ERR(kInvalidOutput, "rknn_outputs_get: rknn_run has not been called");
  ORKNN_RETURN_IF_ERROR(check_runnable("rknn_outputs_get", false));  // the arena may be a destroyed client mem
  const Graph& g = model_->graph;
  for (uint32_t i = 0; i < n; ++i) {
    rknn_output& o = outputs[i];
    o.index = i;  // the array position identifies the output (docs/api-contract.md §4.3)
    const Tensor& t = g.tensor(g.outputs[i]);
    const size_t count = static_cast<size_t>(t.numel());
    const void* src = output_src(i);
    size_t need;
    if (o.want_float) need = count * 4;
    else if (is_float(t.dtype)) need = count * 2;  // FLOAT16, the reported type
    else need = count * dtype_size(t.dtype);
    void* dst;
    if (o.is_prealloc) {
      if (!o.buf) return ORKNN_ERR(kInvalidOutput, "rknn_outputs_get: output %u: is_prealloc set but buf is NULL", i);
      if (o.size < need)
        return ORKNN_ERR(kInvalidOutput, "rknn_outputs_get: output %u ('%s'): buffer size %u is smaller than %zu",
                         i, t.name.c_str(), o.size, need);
      dst = o.buf;
    } else {
      dst = std::malloc(std::max<size_t>(need, 1));
      if (!dst) return ORKNN_ERR(kNoMemory, "rknn_outputs_get: cannot allocate %zu bytes for output %u", need, i);
      owned_output_bufs_.push_back(dst);
      o.buf = dst;
      o.size = static_cast<uint32_t>(need);
    }
    convert_output(t, src, o.want_float != 0, dst);
  }
  return Status::Ok();
}

Status Context::outputs_release(uint32_t n, rknn_output* outputs) {
  if (n > n_outputs())
    return ORKNN_ERR(kInvalidOutput, "rknn_outputs_release: n_outputs %u, the model has %u outputs", n, n_outputs());
  for (uint32_t i = 0; i < n; ++i) {
    rknn_output& o = outputs[i];
    if (o.is_prealloc || !o.buf) continue;
    auto it = std::find(owned_output_bufs_.begin(), owned_output_bufs_.end(), o.buf);
    if (it == owned_output_bufs_.end()) continue;  // not ours (or already released): leave it alone
    std::free(*it);
    owned_output_bufs_.erase(it);
    o.buf = nullptr;
  }
  return Status::Ok();
}

}  // namespace orknn
