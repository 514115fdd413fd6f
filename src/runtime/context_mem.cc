// runtime::Context: zero-copy bindings of rknn_set_io_mem (docs/api-contract.md §4.4): the
// client's memory bound to inputs and outputs, read before and written after every run.
#include <cstring>

#include "common/raw_enum.h"
#include "runtime/context.h"
#include "runtime/layouts.h"
#include "runtime/platform.h"
#include "runtime/tensor_io.h"
#include "runtime/tensor_mem.h"

namespace orknn {

Status Context::set_io_mem(rknn_tensor_mem* mem, const rknn_tensor_attr* attr) {
  const uint64_t serial = tensor_mem_serial(mem);
  if (!serial)
    return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: mem %p was not created by rknn_create_mem* or was destroyed",
                     static_cast<void*>(mem));
  if (!mem->virt_addr) return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: mem->virt_addr is NULL");
  // Matching rule (docs/decisions.md): the attr names a tensor by index AND name; inputs are tried
  // first, then outputs. An empty name means the input with that index.
  const Graph& g = model_->graph;
  const size_t name_len = strnlen(attr->name, sizeof(attr->name));
  const std::string name(attr->name, name_len);
  if (name.empty()) {
    if (attr->index >= n_inputs())
      return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: attr has no name and index %u is not an input (model has %u inputs); "
                       "pass the attr returned by an input/output query", attr->index, n_inputs());
    return bind_input(attr->index, mem, serial, *attr);
  }
  if (attr->index < n_inputs() && g.tensor(g.inputs[attr->index].tensor).name == name)
    return bind_input(attr->index, mem, serial, *attr);
  if (attr->index < n_outputs() && g.tensor(g.outputs[attr->index]).name == name)
    return bind_output(attr->index, mem, serial, *attr);
  return ORKNN_ERR(kInvalidParam, "rknn_set_io_mem: no input or output has index %u and name '%s'", attr->index, name.c_str());
}

Status Context::bind_input(uint32_t index, rknn_tensor_mem* mem, uint64_t serial, const rknn_tensor_attr& attr) {
  const Tensor& t = model_->graph.tensor(model_->graph.inputs[index].tensor);
  rknn_tensor_attr native;
  ORKNN_RETURN_IF_ERROR(native_input_attr(index, false, &native));
  const int raw_type = raw_enum(attr.type), raw_fmt = raw_enum(attr.fmt);
  IoBinding b;
  b.mem = mem;
  b.serial = serial;
  // Native data: pass_through, or INT8 codes for a quantized input (the vendor's zero-copy contract:
  // an INT8 input buffer is already normalised and quantized by the client).
  b.native = attr.pass_through != 0 || (raw_type == RKNN_TENSOR_INT8 && !t.quant.empty());
  b.type = b.native ? native.type : static_cast<rknn_tensor_type>(raw_type);
  if (!b.native && (raw_type < 0 || raw_type >= RKNN_TENSOR_TYPE_MAX || !supported_input_type(b.type)))
    return ORKNN_ERR(kInvalidInput, "rknn_set_io_mem: input %u ('%s'): unsupported type %d", index, t.name.c_str(), raw_type);
  if (attr.pass_through) b.fmt = native.fmt;
  else if (raw_fmt == RKNN_TENSOR_NCHW || raw_fmt == RKNN_TENSOR_NHWC || raw_fmt == RKNN_TENSOR_UNDEFINED)
    b.fmt = static_cast<rknn_tensor_format>(raw_fmt);
  else
    return ORKNN_ERR(kInvalidInput, "rknn_set_io_mem: input %u ('%s'): format %d is not accepted for inputs (use NHWC or NCHW)",
                     index, t.name.c_str(), raw_fmt);
  const size_t need = b.native ? native.size_with_stride : static_cast<size_t>(t.numel()) * rknn_type_size(b.type);
  if (mem->size < need)
    return ORKNN_ERR(kInvalidInput, "rknn_set_io_mem: input %u ('%s'): mem size %u is smaller than %zu (%lld elements of %s%s)",
                     index, t.name.c_str(), mem->size, need, static_cast<long long>(t.numel()), get_type_string(b.type),
                     b.native ? ", native" : "");
  if (input_bindings_.size() != n_inputs()) input_bindings_.resize(n_inputs());
  input_bindings_[index] = std::move(b);
  return Status::Ok();
}

Status Context::bind_output(uint32_t index, rknn_tensor_mem* mem, uint64_t serial, const rknn_tensor_attr& attr) {
  const Tensor& t = model_->graph.tensor(model_->graph.outputs[index]);
  rknn_tensor_attr normal;
  ORKNN_RETURN_IF_ERROR(output_attr(index, &normal));
  const int raw_type = raw_enum(attr.type), raw_fmt = raw_enum(attr.fmt);
  IoBinding b;
  b.mem = mem;
  b.serial = serial;
  if (raw_type != RKNN_TENSOR_FLOAT32 && raw_type != static_cast<int>(normal.type))
    return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): type %d cannot be produced (use FLOAT32 or %s)", index,
                     t.name.c_str(), raw_type, get_type_string(normal.type));
  b.type = static_cast<rknn_tensor_type>(raw_type);
  const bool four_d = t.shape.size() == 4;
  const size_t es = rknn_type_size(b.type);
  size_t need = static_cast<size_t>(t.numel()) * es;
  if (raw_fmt == RKNN_TENSOR_NC1HWC2) {
    const int c2 = native_c2(*model_->platform, b.type);
    if (!four_d || c2 == 0)
      return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): no NC1HWC2 layout for a %zu-D %s tensor on %s", index,
                       t.name.c_str(), t.shape.size(), get_type_string(b.type), model_->platform->name);
    b.w_stride = attr.w_stride > static_cast<uint32_t>(t.shape[3]) ? attr.w_stride : 0;
    need = static_cast<size_t>(geometry_of(t.shape, c2, b.w_stride).num_elements()) * es;
  } else if (raw_fmt == RKNN_TENSOR_NHWC) {
    if (!four_d)
      return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): NHWC needs a 4-D tensor (it has %zu dims)", index,
                       t.name.c_str(), t.shape.size());
  } else if (raw_fmt != RKNN_TENSOR_NCHW && raw_fmt != RKNN_TENSOR_UNDEFINED) {
    return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): unknown format %d", index, t.name.c_str(), raw_fmt);
  }
  b.fmt = static_cast<rknn_tensor_format>(raw_fmt);
  if (mem->size < need)
    return ORKNN_ERR(kInvalidOutput, "rknn_set_io_mem: output %u ('%s'): mem size %u is smaller than %zu (%s %s)", index,
                     t.name.c_str(), mem->size, need, get_type_string(b.type), get_format_string(b.fmt));
  if (b.fmt == RKNN_TENSOR_NC1HWC2 || (b.fmt == RKNN_TENSOR_NHWC && four_d))
    b.staging.resize(static_cast<size_t>(t.numel()) * es);  // allocated here: run() allocates nothing
  if (output_bindings_.size() != n_outputs()) output_bindings_.resize(n_outputs());
  output_bindings_[index] = std::move(b);
  return Status::Ok();
}

Status Context::read_bound_inputs() {
  const Graph& g = model_->graph;
  for (uint32_t i = 0; i < input_bindings_.size(); ++i) {
    const IoBinding& b = input_bindings_[i];
    if (!b.mem) continue;
    const Tensor& t = g.tensor(g.inputs[i].tensor);
    if (tensor_mem_serial(b.mem) != b.serial)
      return ORKNN_ERR(kInvalidInput, "rknn_run: the mem bound to input %u ('%s') was destroyed; bind a live mem with rknn_set_io_mem",
                       i, t.name.c_str());
    const uint8_t* data = static_cast<const uint8_t*>(b.mem->virt_addr) + b.mem->offset;
    if (b.native && !t.quant.empty()) {
      // Quantized codes: copy (NHWC -> the arena's NCHW for 4-D tensors).
      void* dst = tensor_ptr(g.inputs[i].tensor);
      const Shape& s = t.shape;
      if (s.size() == 4 && b.fmt == RKNN_TENSOR_NHWC) nhwc_to_nchw(data, dst, s[0], s[1], s[2], s[3], 1);
      else std::memcpy(dst, data, static_cast<size_t>(t.numel()));
      input_set_[i] = true;
      continue;
    }
    rknn_input in;
    std::memset(&in, 0, sizeof(in));
    in.index = i;
    in.buf = const_cast<uint8_t*>(data);
    in.size = b.mem->size;
    in.pass_through = b.native ? 1 : 0;
    in.type = b.type;
    in.fmt = b.fmt;
    ORKNN_RETURN_IF_ERROR(inputs_set(1, &in));
  }
  return Status::Ok();
}

Status Context::write_bound_outputs() {
  const Graph& g = model_->graph;
  for (uint32_t i = 0; i < output_bindings_.size(); ++i) {
    IoBinding& b = output_bindings_[i];
    if (!b.mem) continue;
    const Tensor& t = g.tensor(g.outputs[i]);
    if (tensor_mem_serial(b.mem) != b.serial)
      return ORKNN_ERR(kInvalidOutput, "rknn_run: the mem bound to output %u ('%s') was destroyed; bind a live mem with rknn_set_io_mem",
                       i, t.name.c_str());
    uint8_t* data = static_cast<uint8_t*>(b.mem->virt_addr) + b.mem->offset;
    const bool want_float = b.type == RKNN_TENSOR_FLOAT32;
    const size_t es = rknn_type_size(b.type);
    const Shape& s = t.shape;
    if (b.staging.empty()) {
      convert_output(t, tensor_ptr(g.outputs[i]), want_float, data);
    } else {
      convert_output(t, tensor_ptr(g.outputs[i]), want_float, b.staging.data());
      if (b.fmt == RKNN_TENSOR_NHWC) {
        nchw_to_nhwc(b.staging.data(), data, s[0], s[1], s[2], s[3], es);
      } else {
        const Nc1hwc2Geometry geo = geometry_of(s, native_c2(*model_->platform, b.type), b.w_stride);
        if (!nchw_to_nc1hwc2(b.staging.data(), data, geo, es))
          return ORKNN_ERR(kInvalidOutput, "rknn_run: output %u ('%s'): invalid NC1HWC2 geometry", i, t.name.c_str());
      }
    }
  }
  return Status::Ok();
}

}  // namespace orknn
