// QuantizeLinear and DequantizeLinear -> their IR form (docs/numerics.md, "Representation in the
// IR"): one input and one output, with the scale and zero point moved from ONNX's constant inputs
// 1 and 2 onto the QuantParams of the int8 tensor (QuantizeLinear: its output; DequantizeLinear:
// its input). Per-axis parameters keep ONNX's `axis` (default 1), resolved against x's rank.
//
// Only INT8 is used inside a graph. UINT8 is mapped exactly: q' = q - 128, zp' = zp - 128. A
// uint8 QuantizeLinear output becomes int8 with zp'; a uint8 constant read by DequantizeLinear is
// rewritten as an int8 constant; a uint8 tensor produced by an already mapped QuantizeLinear is
// int8 already. INT32 DequantizeLinear (biases, zero point 0) keeps its int32 input.
//
// One tensor has one set of parameters: a tensor that gets them from two nodes (typically a
// QuantizeLinear and the DequantizeLinear reading its output) must get the same ones.
//
// Not supported: blocked quantization (opset 21 block_size), zero points of other types (int16,
// uint16, 4-bit and 8-bit float types), non-constant scales or zero points, and per-axis
// QuantizeLinear of a non-constant tensor (activations are quantized per tensor).
#include <cstring>
#include <string>
#include <vector>

#include "converter/onnx/mapper.h"
#include "ops/quant_infer.h"

namespace orknn::onnx_import {
namespace {

// The ONNX integer type of the quantized side.
enum class QType { kInt8, kUint8, kInt32 };

const char* qtype_name(QType t) {
  switch (t) {
    case QType::kInt8: return "int8";
    case QType::kUint8: return "uint8";
    case QType::kInt32: return "int32";
  }
  return "?";
}

// Scale and zero point as given by the ONNX node, before the uint8 -> int8 shift.
struct OnnxQuant {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;  // empty when the zero-point input is absent (zeros)
  bool has_zp_type = false;         // the zero-point input is present and says the type
  QType zp_type = QType::kUint8;
  int32_t axis = -1;                // resolved; -1 for per-tensor parameters
};

std::string params_text(const QuantParams& q) {
  std::string s;
  for (size_t i = 0; i < q.scale.size() && i < 4; ++i)
    s += strfmt("%s(scale %.9g, zero point %d)", i ? ", " : "", q.scale[i], q.zero_point[i]);
  if (q.scale.size() > 4) s += strfmt(", ... %zu channels on axis %d", q.scale.size(), q.axis);
  return s;
}

// Reads inputs 1 (scale) and 2 (zero point) and the attributes. `x_rank` resolves the axis.
Status read_onnx_quant(MapContext& ctx, size_t x_rank, OnnxQuant* out) {
  if (ctx.num_inputs() < 2 || ctx.num_inputs() > 3)
    return ctx.error("expects 2 or 3 inputs (x, scale, zero_point), got %zu", ctx.num_inputs());
  if (ctx.input(0) < 0) return ctx.error("input x is missing");
  if (const auto* a = ctx.attr("block_size"); a && a->i() != 0)
    return ctx.unsupported("blocked quantization (block_size %lld) is not supported; OpenRKNN quantizes per tensor "
                           "or per channel", static_cast<long long>(a->i()));
  const Tensor* scale = ctx.input_tensor(1);
  if (!scale) return ctx.error("input scale is missing");
  if (!scale->is_const())
    return ctx.error("scale input '%s' must be a constant (OpenRKNN keeps quantization parameters on the tensor), but "
                     "it is computed at run time", scale->name.c_str());
  if (scale->dtype != DType::kF32)
    return ctx.error("scale input '%s' must be a float tensor, got %s", scale->name.c_str(), dtype_name(scale->dtype));
  if (scale->shape.size() > 1)
    return ctx.unsupported("scale input '%s' has shape %s; only a scalar or 1-D scale is supported (no blocked "
                           "quantization)", scale->name.c_str(), shape_str(scale->shape).c_str());
  const int64_t count = scale->numel();
  if (count < 1) return ctx.error("scale input '%s' is empty", scale->name.c_str());
  out->scale.assign(scale->const_ptr<float>(), scale->const_ptr<float>() + count);

  if (const Tensor* zp = ctx.input_tensor(2)) {
    if (!zp->is_const())
      return ctx.error("zero_point input '%s' must be a constant (OpenRKNN keeps quantization parameters on the "
                       "tensor), but it is computed at run time", zp->name.c_str());
    if (zp->numel() != count)
      return ctx.error("zero_point input '%s' has %lld values but the scale has %lld", zp->name.c_str(),
                       static_cast<long long>(zp->numel()), static_cast<long long>(count));
    out->has_zp_type = true;
    for (int64_t i = 0; i < count; ++i) {
      switch (zp->dtype) {
        case DType::kI8: out->zero_point.push_back(zp->const_ptr<int8_t>()[i]); break;
        case DType::kU8: out->zero_point.push_back(zp->const_ptr<uint8_t>()[i]); break;
        case DType::kI32: out->zero_point.push_back(zp->const_ptr<int32_t>()[i]); break;
        default:
          return ctx.unsupported("zero point type %s is not supported (int8, uint8, and int32 for DequantizeLinear "
                                 "of biases)", dtype_name(zp->dtype));
      }
    }
    out->zp_type = zp->dtype == DType::kI8 ? QType::kInt8 : zp->dtype == DType::kU8 ? QType::kUint8 : QType::kInt32;
  }

  if (count > 1) {
    // Per axis. (A 1-D scale of one value is per tensor, as in ONNX Runtime.)
    int64_t axis = 1;
    if (const auto* a = ctx.attr("axis")) axis = a->i();
    const int64_t rank = static_cast<int64_t>(x_rank);
    if (axis < -rank || axis >= rank)
      return ctx.error("axis %lld is out of range for x of rank %lld", static_cast<long long>(axis),
                       static_cast<long long>(rank));
    if (axis < 0) axis += rank;
    out->axis = static_cast<int32_t>(axis);
  }
  return Status::Ok();
}

// The IR parameters for quantized type `t` (uint8 shifted to int8). Per-tensor parameters of a
// 1-element scale drop the axis.
QuantParams ir_params(const OnnxQuant& oq, QType t) {
  QuantParams q;
  q.scale = oq.scale;
  q.zero_point = oq.zero_point;
  if (q.zero_point.empty()) q.zero_point.assign(q.scale.size(), 0);
  if (t == QType::kUint8)
    for (int32_t& zp : q.zero_point) zp -= 128;
  q.axis = q.scale.size() > 1 ? oq.axis : -1;
  return q;
}

// Gives tensor `id` the parameters q, or checks that it already has the same ones.
Status assign_params(MapContext& ctx, int id, const QuantParams& q) {
  Tensor& t = ctx.graph().tensor(id);
  if (t.quant.empty()) {
    t.quant = q;
    return Status::Ok();
  }
  if (same_quant(t.quant, q)) return Status::Ok();
  return ctx.error("tensor '%s' already has quantization parameters %s from another QuantizeLinear/DequantizeLinear "
                   "node, and this node gives it %s; a tensor has one set of parameters",
                   t.name.c_str(), params_text(t.quant).c_str(), params_text(q).c_str());
}

}  // namespace

Status map_QuantizeLinear(MapContext& ctx) {
  const Tensor* x = ctx.input_tensor(0);
  OnnxQuant oq;
  ORKNN_RETURN_IF_ERROR(read_onnx_quant(ctx, x ? x->shape.size() : 0, &oq));
  // Output type: the zero point's; without one, opset 21's output_dtype (default uint8).
  QType t = QType::kUint8;
  const auto* out_dtype = ctx.attr("output_dtype");
  const int64_t od = out_dtype ? out_dtype->i() : 0;
  if (od != 0 && od != onnx::TensorProto::INT8 && od != onnx::TensorProto::UINT8)
    return ctx.unsupported("output_dtype %lld is not supported (int8 and uint8 only)", static_cast<long long>(od));
  if (oq.has_zp_type) {
    t = oq.zp_type;
    if (t == QType::kInt32) return ctx.unsupported("QuantizeLinear to int32 is not supported (int8 and uint8 only)");
    if (od != 0 && (od == onnx::TensorProto::INT8) != (t == QType::kInt8))
      return ctx.error("output_dtype %lld differs from the zero point's type %s", static_cast<long long>(od),
                       qtype_name(t));
  } else if (od == onnx::TensorProto::INT8) {
    t = QType::kInt8;
  }
  const QuantParams q = ir_params(oq, t);
  if (q.scale.size() > 1 && !x->is_const())
    return ctx.unsupported("per-axis quantization of tensor '%s', which is computed at run time: activations are "
                           "quantized per tensor (per-axis parameters are for constant weights)", x->name.c_str());

  Node n;
  n.op = OpId::QuantizeLinear;
  n.name = ctx.name();
  n.inputs = {ctx.input(0)};
  int y;
  ORKNN_RETURN_IF_ERROR(ctx.output(0, &y));
  n.outputs = {y};
  ORKNN_RETURN_IF_ERROR(assign_params(ctx, y, q));
  ctx.graph().tensor(y).dtype = DType::kI8;
  return ctx.emit(std::move(n));
}

Status map_DequantizeLinear(MapContext& ctx) {
  const Tensor* x = ctx.input_tensor(0);
  OnnxQuant oq;
  ORKNN_RETURN_IF_ERROR(read_onnx_quant(ctx, x ? x->shape.size() : 0, &oq));
  const int x_id = ctx.input(0);
  const std::string x_name = x->name;
  const DType x_dtype = x->dtype;
  const bool x_const = x->is_const();
  const QuantParams x_existing = x->quant;

  // The ONNX type of x: the zero point's when given, else x's own. A non-constant int8 tensor that
  // already has parameters came from a mapped QuantizeLinear and may have been uint8 in ONNX; the
  // absent zero point is then 0 of whichever type makes the parameters agree (uint8 0 maps to
  // -128, int8 0 stays 0), the one reading under which the model can be consistent.
  QType t;
  if (oq.has_zp_type) {
    t = oq.zp_type;
  } else if (x_dtype == DType::kU8) {
    t = QType::kUint8;
  } else if (x_dtype == DType::kI32) {
    t = QType::kInt32;
  } else if (x_dtype == DType::kI8) {
    t = QType::kInt8;
    if (!x_existing.empty() && !same_quant(x_existing, ir_params(oq, QType::kInt8)) &&
        same_quant(x_existing, ir_params(oq, QType::kUint8)))
      t = QType::kUint8;
  } else {
    return ctx.unsupported("input x ('%s') is %s; DequantizeLinear supports int8, uint8 and int32", x_name.c_str(),
                           dtype_name(x_dtype));
  }

  int in_id = x_id;
  switch (t) {
    case QType::kInt8:
      if (x_dtype != DType::kI8)
        return ctx.error("input x ('%s') is %s but the zero point is int8", x_name.c_str(), dtype_name(x_dtype));
      break;
    case QType::kInt32:
      if (x_dtype != DType::kI32)
        return ctx.error("input x ('%s') is %s but the zero point is int32", x_name.c_str(), dtype_name(x_dtype));
      break;
    case QType::kUint8:
      if (x_dtype == DType::kI8 && !x_existing.empty()) break;  // a mapped uint8 tensor: int8 already
      if (x_dtype != DType::kU8)
        return ctx.error("input x ('%s') is %s but the zero point is uint8", x_name.c_str(), dtype_name(x_dtype));
      if (!x_const)
        return ctx.unsupported("uint8 input x ('%s') is neither a constant nor the output of a QuantizeLinear; only "
                               "int8 is used inside a graph, so OpenRKNN maps uint8 quantization to int8 where it "
                               "can rewrite the values", x_name.c_str());
      {
        // q' = q - 128, into a new constant (the uint8 one may have other readers).
        std::vector<int8_t> shifted(static_cast<size_t>(x->numel()));
        const uint8_t* u = x->const_ptr<uint8_t>();
        for (size_t i = 0; i < shifted.size(); ++i) shifted[i] = static_cast<int8_t>(static_cast<int>(u[i]) - 128);
        const Shape shape = x->shape;
        in_id = ctx.new_const("int8", shape, DType::kI8, shifted.data(), shifted.size());
      }
      break;
  }
  ORKNN_RETURN_IF_ERROR(assign_params(ctx, in_id, ir_params(oq, t)));

  Node n;
  n.op = OpId::DequantizeLinear;
  n.name = ctx.name();
  n.inputs = {in_id};
  int y;
  ORKNN_RETURN_IF_ERROR(ctx.output(0, &y));
  n.outputs = {y};
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
