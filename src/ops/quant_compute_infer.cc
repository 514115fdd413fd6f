#include "ops/quant_compute_infer.h"

#include <cstdlib>
#include <string>

namespace orknn {

Status check_q8_weights(const Graph& g, const Node& n, size_t i, const char* role, int64_t channel_axis,
                        const char* axis_rule) {
  const Tensor* t = g.input(n, i);
  if (!t) return ORKNN_NODE_ERR(n, "quantized node: weights %s are missing", role);
  if (t->dtype != DType::kI8 || !t->is_const())
    return ORKNN_NODE_ERR(n, "quantized node: weights %s ('%s') must be an int8 constant, got a %s %s tensor", role,
                          t->name.c_str(), t->is_const() ? "constant" : "non-constant", dtype_name(t->dtype));
  const std::string what = strfmt("weights %s", role);
  ORKNN_RETURN_IF_ERROR(check_quant_params(n, *t, what.c_str(), /*allow_per_axis=*/true));
  const QuantParams& q = t->quant;
  if (q.scale.size() > 1 && q.axis != channel_axis)
    return ORKNN_NODE_ERR(n, "weights %s ('%s' %s) have per-axis parameters on axis %d; %s", role, t->name.c_str(),
                          shape_str(t->shape).c_str(), q.axis, axis_rule);
  for (int32_t zp : q.zero_point)
    if (zp != 0)
      return ORKNN_NODE_ERR(n, "weights %s ('%s') have zero point %d; quantized weights are symmetric (zero point 0)",
                            role, t->name.c_str(), zp);
  if (t->data.size < t->nbytes())
    return ORKNN_NODE_ERR(n, "weights %s ('%s'): %zu bytes of data for %lld elements", role, t->name.c_str(),
                          t->data.size, (long long)t->numel());
  const int8_t* w = t->const_ptr<int8_t>();
  for (int64_t k = 0; k < t->numel(); ++k)
    if (w[k] == -128)
      return ORKNN_NODE_ERR(n, "weights %s ('%s') hold -128 at element %lld; quantized weights lie in [-127, 127]",
                            role, t->name.c_str(), (long long)k);
  return Status::Ok();
}

Status check_i32_bias(const Graph& g, const Node& n, size_t i, const char* role, int64_t* max_abs) {
  *max_abs = 0;
  const Tensor* t = g.input(n, i);
  if (!t) return Status::Ok();
  if (t->dtype != DType::kI32 || !t->is_const())
    return ORKNN_NODE_ERR(n, "quantized node: bias %s ('%s') must be an int32 constant, got a %s %s tensor", role,
                          t->name.c_str(), t->is_const() ? "constant" : "non-constant", dtype_name(t->dtype));
  if (!t->quant.empty()) {
    const std::string what = strfmt("bias %s", role);
    ORKNN_RETURN_IF_ERROR(check_quant_params(n, *t, what.c_str(), /*allow_per_axis=*/true));
  }
  if (t->data.size < t->nbytes())
    return ORKNN_NODE_ERR(n, "bias %s ('%s'): %zu bytes of data for %lld elements", role, t->name.c_str(),
                          t->data.size, (long long)t->numel());
  const int32_t* b = t->const_ptr<int32_t>();
  for (int64_t k = 0; k < t->numel(); ++k) {
    const int64_t v = std::llabs(static_cast<int64_t>(b[k]));
    if (v > *max_abs) *max_abs = v;
  }
  return Status::Ok();
}

Status check_q8_fused_act(const Node& n) {
  const std::string act = n.attrs.get_string("fused_act", "");
  if (act.empty() || act == "Relu" || act == "Clip") return Status::Ok();
  return ORKNN_NODE_ERR(n,
                        "fused_act '%s' is not allowed on a quantized node (only Relu and Clip, which clamp the int8 "
                        "result; other activations run as their own node)",
                        act.c_str());
}

Status check_accumulator_range(const Node& n, int64_t terms, int64_t max_product, int64_t max_bias) {
  // terms <= kMaxElements (2^31), max_product < 2^16, max_bias <= 2^31: no int64 overflow.
  const int64_t worst = terms * max_product + max_bias;
  if (worst > INT32_MAX)
    return ORKNN_NODE_ERR(n,
                          "quantized node: the int32 accumulator could overflow (%lld products of up to %lld plus a "
                          "bias of up to %lld)",
                          (long long)terms, (long long)max_product, (long long)max_bias);
  return Status::Ok();
}

}  // namespace orknn
