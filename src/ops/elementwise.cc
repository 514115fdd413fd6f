// Unary element-wise ops (activations and math functions), Not, Identity and Dropout.
#include "kernels/ref/activation.h"
#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// Int8/uint8 tensors with per-tensor quantization run float functions through a 256-entry table
// (kernels/ref/elementwise.cc), so quantized graphs need no dequantize/quantize around them.
bool is_per_tensor_quantized(const Tensor& t) {
  return (t.dtype == DType::kI8 || t.dtype == DType::kU8) && t.quant.scale.size() == 1;
}

// One input, one output of the same shape and dtype. `allow_ints`: the op is also defined on
// int32/int64 (exact integer semantics, no quantization).
// `max_in` > 1 for ops whose parameter inputs were moved to attributes (left as -1).
Status infer_unary(Graph& g, Node& n, bool allow_ints, size_t max_in = 1) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, max_in, 1, 1, 1));
  const Tensor& x = *g.input(n, 0);
  const bool ok = x.dtype == DType::kF32 || is_per_tensor_quantized(x) ||
                  (allow_ints && (x.dtype == DType::kI32 || x.dtype == DType::kI64));
  if (!ok)
    return ORKNN_NODE_ERR(n, "input '%s' has dtype %s; supported: float32%s, or per-tensor quantized int8/uint8",
                          x.name.c_str(), dtype_name(x.dtype), allow_ints ? ", int32, int64" : "");
  if (node_has_quant(g, n)) {
    // The table maps input codes to output codes: both ends need per-tensor parameters.
    if (!is_per_tensor_quantized(x))
      return ORKNN_NODE_ERR(n, "the output is quantized but input '%s' (%s) is not a quantized int8/uint8 tensor",
                            x.name.c_str(), dtype_name(x.dtype));
    if (has_output(n, 0)) {
      const Tensor& y = g.tensor(n.outputs[0]);
      if (y.quant.scale.size() != 1)
        return ORKNN_NODE_ERR(n, "input '%s' is quantized but the output '%s' has %s", x.name.c_str(), y.name.c_str(),
                              y.quant.empty() ? "no quantization parameters" : "per-axis parameters");
      if (x.dtype == DType::kI8) {  // int8 graphs (docs/numerics.md); uint8 tables keep their own ranges
        const std::string what = strfmt("input '%s'", x.name.c_str());
        ORKNN_RETURN_IF_ERROR(check_quant_params(n, x, what.c_str(), false));
        ORKNN_RETURN_IF_ERROR(check_quant_params(n, y, "output 0", false));
      }
    }
  }
  return set_output(g, n, 0, x.shape, x.dtype);
}

void default_float(Node& n, const char* name, float def) { n.attrs.set_float(name, n.attrs.get_float(name, def)); }

}  // namespace

Status infer_Relu(Graph& g, Node& n) { return infer_unary(g, n, true); }
Status infer_Neg(Graph& g, Node& n) { return infer_unary(g, n, true); }
Status infer_Abs(Graph& g, Node& n) { return infer_unary(g, n, true); }
Status infer_Sign(Graph& g, Node& n) { return infer_unary(g, n, true); }
Status infer_Sigmoid(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Tanh(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Erf(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Exp(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Log(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Sqrt(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Reciprocal(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Floor(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Ceil(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Sin(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Cos(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Softplus(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Round(Graph& g, Node& n) { return infer_unary(g, n, false); }
Status infer_Mish(Graph& g, Node& n) { return infer_unary(g, n, false); }

Status infer_LeakyRelu(Graph& g, Node& n) {
  default_float(n, "alpha", default_act_params(FusedAct::kLeakyRelu).alpha);
  return infer_unary(g, n, false);
}

Status infer_Elu(Graph& g, Node& n) {
  default_float(n, "alpha", 1.0f);
  return infer_unary(g, n, false);
}

Status infer_Selu(Graph& g, Node& n) {
  // ONNX defaults, the float32 values of the constants in the SELU paper.
  default_float(n, "alpha", 1.67326319217681884765625f);
  default_float(n, "gamma", 1.05070102214813232421875f);
  return infer_unary(g, n, false);
}

Status infer_HardSigmoid(Graph& g, Node& n) {
  const ActParams def = default_act_params(FusedAct::kHardSigmoid);
  default_float(n, "alpha", def.alpha);
  default_float(n, "beta", def.beta);
  return infer_unary(g, n, false);
}

Status infer_HardSwish(Graph& g, Node& n) { return infer_unary(g, n, false); }

Status infer_Gelu(Graph& g, Node& n) {
  const std::string approx = n.attrs.get_string("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return ORKNN_NODE_ERR(n, "attribute approximate='%s' is not one of 'none', 'tanh'", approx.c_str());
  n.attrs.set_string("approximate", approx);
  return infer_unary(g, n, false);
}

// Opset 11+ passes min/max as optional scalar inputs, older opsets as attributes; both end up in
// the float attributes "min"/"max" (+-inf when absent).
Status infer_Clip(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 3, 1, 1, 1));
  const char* names[2] = {"min", "max"};
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    if (!has_input(n, i)) continue;
    std::vector<float> v;
    ORKNN_RETURN_IF_ERROR(read_const_floats(g, n, i, names[i - 1], &v));
    if (v.size() != 1)
      return ORKNN_NODE_ERR(n, "input %zu (%s) must be a scalar, has %zu elements", i, names[i - 1], v.size());
    n.attrs.set_float(names[i - 1], v[0]);
    n.inputs[i] = -1;
  }
  const ActParams def = default_act_params(FusedAct::kClip);
  default_float(n, "min", def.alpha);
  default_float(n, "max", def.beta);
  return infer_unary(g, n, true, 3);
}

Status infer_Not(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 1));
  ORKNN_RETURN_IF_ERROR(check_dtype(g, n, 0, {DType::kBool}));
  return set_output(g, n, 0, g.input(n, 0)->shape, DType::kBool);
}

Status infer_Identity(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 1));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));  // int8 codes are copied: same parameters
  const Tensor& x = *g.input(n, 0);
  return set_output(g, n, 0, x.shape, x.dtype);
}

// Inference only: the output is the input and the optional mask is all true. A constant ratio is
// kept as an attribute for information; training_mode must be absent or constant false.
Status infer_Dropout(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 3, 1, 2, 1));
  if (has_input(n, 2)) {
    std::vector<int64_t> training;
    ORKNN_RETURN_IF_ERROR(read_const_ints(g, n, 2, "training_mode", &training));
    if (training.size() != 1) return ORKNN_NODE_ERR(n, "training_mode must be a scalar");
    if (training[0] != 0) return ORKNN_NODE_ERR(n, "training_mode=true is not supported (inference only)");
    n.inputs[2] = -1;
  }
  if (has_input(n, 1) && g.input(n, 1)->is_const()) {
    std::vector<float> ratio;
    ORKNN_RETURN_IF_ERROR(read_const_floats(g, n, 1, "ratio", &ratio));
    if (ratio.size() != 1) return ORKNN_NODE_ERR(n, "ratio must be a scalar");
    n.attrs.set_float("ratio", ratio[0]);
    n.inputs[1] = -1;
  }
  const Tensor& x = *g.input(n, 0);
  if (node_has_quant(g, n)) {
    // int8 codes are copied: output 0 needs the input's parameters; the bool mask has none.
    ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, 0));
    if (!has_output(n, 0) || !same_quant(x.quant, g.tensor(n.outputs[0]).quant))
      return ORKNN_NODE_ERR(n, "output 0 must carry the quantization parameters of input '%s'", x.name.c_str());
    if (has_output(n, 1) && !g.tensor(n.outputs[1]).quant.empty())
      return ORKNN_NODE_ERR(n, "the mask output cannot be quantized");
  }
  ORKNN_RETURN_IF_ERROR(set_output(g, n, 0, x.shape, x.dtype));
  return set_output(g, n, 1, x.shape, DType::kBool);
}

}  // namespace orknn
