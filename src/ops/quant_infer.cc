#include "ops/quant_infer.h"

#include <cstring>
#include <string>

namespace orknn {
namespace {

std::string params_str(const QuantParams& q) {
  if (q.empty()) return "no quantization parameters";
  if (q.scale.size() == 1)
    return strfmt("scale %.9g zero point %d", q.scale[0], q.zero_point.empty() ? 0 : q.zero_point[0]);
  return strfmt("%zu per-axis scales", q.scale.size());
}

}  // namespace

bool node_has_quant(const Graph& g, const Node& n) {
  for (int id : n.inputs)
    if (id >= 0 && static_cast<size_t>(id) < g.tensors.size() && !g.tensor(id).quant.empty()) return true;
  for (int id : n.outputs)
    if (id >= 0 && static_cast<size_t>(id) < g.tensors.size() && !g.tensor(id).quant.empty()) return true;
  return false;
}

bool same_quant(const QuantParams& a, const QuantParams& b) {
  if (a.scale.size() != b.scale.size() || a.zero_point.size() != b.zero_point.size()) return false;
  for (size_t i = 0; i < a.scale.size(); ++i)
    if (std::memcmp(&a.scale[i], &b.scale[i], sizeof(float)) != 0) return false;
  if (a.zero_point != b.zero_point) return false;
  return a.scale.size() <= 1 || a.axis == b.axis;
}

Status check_not_quantized(const Graph& g, const Node& n, const char* why) {
  if (!node_has_quant(g, n)) return Status::Ok();
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Tensor* t = g.input(n, i);
    if (t && !t->quant.empty())
      return ORKNN_NODE_ERR(n, "quantized input %zu ('%s') is not supported%s%s", i, t->name.c_str(), why ? ": " : "",
                            why ? why : "");
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (!has_output(n, i)) continue;
    const Tensor& t = g.tensor(n.outputs[i]);
    if (!t.quant.empty())
      return ORKNN_NODE_ERR(n, "quantized output %zu ('%s') is not supported%s%s", i, t.name.c_str(), why ? ": " : "",
                            why ? why : "");
  }
  return Status::Ok();
}

Status check_q8_input(const Graph& g, const Node& n, size_t i) {
  const Tensor* t = g.input(n, i);
  if (!t) return ORKNN_NODE_ERR(n, "input %zu is missing", i);
  if (t->dtype != DType::kI8 || t->quant.empty())
    return ORKNN_NODE_ERR(n, "quantized node: input %zu ('%s') must be a quantized int8 tensor, got %s with %s", i,
                          t->name.c_str(), dtype_name(t->dtype), params_str(t->quant).c_str());
  const std::string what = strfmt("input %zu", i);
  return check_quant_params(n, *t, what.c_str(), false);
}

Status check_q8_output(const Graph& g, const Node& n, size_t i) {
  if (!has_output(n, i)) return ORKNN_NODE_ERR(n, "output %zu is missing", i);
  const Tensor& t = g.tensor(n.outputs[i]);
  if (t.quant.empty())
    return ORKNN_NODE_ERR(n, "quantized node: output %zu ('%s') has no quantization parameters", i, t.name.c_str());
  const std::string what = strfmt("output %zu", i);
  return check_quant_params(n, t, what.c_str(), false);
}

Status check_quant_passthrough(const Graph& g, const Node& n, size_t data) {
  if (!node_has_quant(g, n)) return Status::Ok();
  ORKNN_RETURN_IF_ERROR(check_q8_input(g, n, data));
  const Tensor& x = *g.input(n, data);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Tensor* t = g.input(n, i);
    if (i != data && t && !t->quant.empty())
      return ORKNN_NODE_ERR(n, "input %zu ('%s') must not be quantized (only the data input is)", i, t->name.c_str());
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (!has_output(n, i)) continue;
    const Tensor& y = g.tensor(n.outputs[i]);
    if (!same_quant(x.quant, y.quant))
      return ORKNN_NODE_ERR(n,
                            "output %zu ('%s') has %s but input '%s' has %s; this op moves int8 values unchanged, "
                            "so they must be equal",
                            i, y.name.c_str(), params_str(y.quant).c_str(), x.name.c_str(),
                            params_str(x.quant).c_str());
  }
  return Status::Ok();
}

}  // namespace orknn
