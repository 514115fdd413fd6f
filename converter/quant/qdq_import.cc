// QDQ models -> float graph + the model's own quantization parameters -> quantize_graph.
#include "converter/quant/qdq_import.h"

#include <cstring>
#include <map>
#include <set>
#include <string>

#include "common/log.h"
#include "graph/passes/passes.h"
#include "kernels/quant_util.h"

namespace orknn {
namespace {

bool is_compute_op(OpId op) {
  return op == OpId::Conv || op == OpId::ConvTranspose || op == OpId::Gemm || op == OpId::MatMul;
}

// Scale and zero point of element i of a tensor with `shape` quantized by p.
void element_params(const QuantParams& p, const Shape& shape, int64_t i, float* scale, int32_t* zp) {
  size_t c = 0;
  if (p.scale.size() > 1 && p.axis >= 0 && static_cast<size_t>(p.axis) < shape.size()) {
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(p.axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    c = static_cast<size_t>((i / inner) % shape[static_cast<size_t>(p.axis)]);
  }
  *scale = p.scale[std::min(c, p.scale.size() - 1)];
  *zp = p.zero_point.empty() ? 0 : p.zero_point[std::min(c, p.zero_point.size() - 1)];
}

bool valid_params(const QuantParams& p, const Shape& shape) {
  if (p.scale.empty()) return false;
  if (p.scale.size() > 1 && (p.axis < 0 || static_cast<size_t>(p.axis) >= shape.size() ||
                             static_cast<int64_t>(p.scale.size()) != shape[static_cast<size_t>(p.axis)]))
    return false;
  if (!p.zero_point.empty() && p.zero_point.size() != p.scale.size()) return false;
  return true;
}

// x = float(q - zp) * s (docs/numerics.md) for an int8 or int32 constant.
std::vector<float> dequantize_const(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    float s;
    int32_t zp;
    element_params(t.quant, t.shape, i, &s, &zp);
    const int32_t q = t.dtype == DType::kI8 ? t.const_ptr<int8_t>()[i] : t.const_ptr<int32_t>()[i];
    v[static_cast<size_t>(i)] = static_cast<float>(q - zp) * s;
  }
  return v;
}

// q = sat8(rne(x / s) + zp), for QuantizeLinear applied to a float constant.
QuantizedConstant quantize_const(const Tensor& x, const QuantParams& p) {
  QuantizedConstant c;
  c.dtype = DType::kI8;
  c.params = p;
  c.bytes.resize(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    float s;
    int32_t zp;
    element_params(p, x.shape, i, &s, &zp);
    c.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(quantize_value(x.const_ptr<float>()[i], s, zp));
  }
  return c;
}

struct Stripper {
  Graph& g;
  std::map<int, QuantParams> acts;           // by tensor id, before dead code
  std::map<int, QuantizedConstant> consts;

  // Graph output `out` is to be written by tensor x instead: x takes out's name.
  bool move_output(int out, int x) {
    if (is_graph_input(g, x) || is_graph_output(g, x)) return false;
    for (int& o : g.outputs)
      if (o == out) o = x;
    const std::string name = g.tensor(out).name;
    g.tensor(out).name += "__replaced";
    g.tensor(x).name = name;
    return true;
  }

  Status run() {
    std::vector<int> producers = tensor_producers(g);
    std::vector<char> drop(g.nodes.size(), 0);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& d = g.nodes[i];
      if (d.op != OpId::DequantizeLinear || d.inputs.empty() || d.inputs[0] < 0 || d.outputs.empty()) continue;
      const int in = d.inputs[0], out = d.outputs[0];
      const Tensor& qt = g.tensor(in);
      if (!valid_params(qt.quant, qt.shape)) continue;
      if (qt.is_const()) {
        if (qt.dtype != DType::kI8 && qt.dtype != DType::kI32) continue;
        // The float constant the node computes; its quantized form is kept for quantize_graph.
        QuantizedConstant c;
        c.dtype = qt.dtype;
        c.params = qt.quant;
        if (c.params.zero_point.empty()) c.params.zero_point.assign(c.params.scale.size(), 0);
        c.bytes.assign(qt.data.ptr, qt.data.ptr + qt.nbytes());
        std::vector<float> v = dequantize_const(qt);
        Tensor& ft = g.tensor(out);
        ft.dtype = DType::kF32;
        ft.quant = QuantParams{};
        set_const_data(ft, v.data(), v.size() * sizeof(float));
        consts[out] = std::move(c);
        drop[i] = 1;
        continue;
      }
      const int p = producers[static_cast<size_t>(in)];
      if (p >= 0 && g.nodes[static_cast<size_t>(p)].op == OpId::QuantizeLinear) {
        const int x = g.nodes[static_cast<size_t>(p)].inputs.empty() ? -1 : g.nodes[static_cast<size_t>(p)].inputs[0];
        if (x < 0 || g.tensor(x).dtype != DType::kF32) continue;
        if (g.tensor(x).is_const()) {
          consts[x] = quantize_const(g.tensor(x), qt.quant);
        } else {
          if (qt.quant.scale.size() != 1) continue;  // per-axis activation parameters: not representable
          acts[x] = qt.quant;
        }
        if (is_graph_output(g, out) && !move_output(out, x)) {
          acts.erase(x);
          continue;
        }
        replace_tensor_uses(g, out, x);
        drop[i] = 1;
        continue;
      }
      if (p < 0 && is_graph_input(g, in) && qt.dtype == DType::kI8 && qt.quant.scale.size() == 1 &&
          !is_graph_output(g, out)) {
        // An int8 model input: it becomes a float input with the model's parameters, which
        // quantize_graph turns back into an int8 input when only int8 nodes read it.
        Tensor& t = g.tensor(in);
        acts[in] = t.quant;
        t.dtype = DType::kF32;
        t.quant = QuantParams{};
        replace_tensor_uses(g, out, in);
        drop[i] = 1;
      }
    }
    // QuantizeLinear writing a graph output (an int8 model output): the float tensor it reads
    // becomes that output, carrying the parameters.
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& q = g.nodes[i];
      if (drop[i] || q.op != OpId::QuantizeLinear || q.inputs.empty() || q.outputs.empty()) continue;
      const int x = q.inputs[0], y = q.outputs[0];
      if (x < 0 || y < 0 || !is_graph_output(g, y) || g.tensor(x).is_const()) continue;
      const Tensor& yt = g.tensor(y);
      if (yt.quant.scale.size() != 1 || g.tensor(x).dtype != DType::kF32) continue;
      bool other_readers = false;
      for (size_t j = 0; j < g.nodes.size(); ++j)
        for (int t : g.nodes[j].inputs) other_readers |= !drop[j] && t == y;
      if (other_readers) continue;
      const QuantParams p = yt.quant;
      if (!move_output(y, x)) continue;
      acts[x] = p;
      drop[i] = 1;
    }
    erase_flagged_nodes(g, drop);
    return Status::Ok();
  }
};

}  // namespace

bool graph_has_qdq(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.op == OpId::QuantizeLinear || n.op == OpId::DequantizeLinear) return true;
  return false;
}

Status strip_qdq(Graph& g, QuantizeSettings* s) {
  Stripper st{g, {}, {}};
  ORKNN_RETURN_IF_ERROR(st.run());

  // Tensor ids change from here on: keep the parameters by name.
  std::map<std::string, QuantParams> acts;
  std::map<std::string, QuantizedConstant> consts;
  for (auto& kv : st.acts) acts[g.tensor(kv.first).name] = kv.second;
  for (auto& kv : st.consts) consts[g.tensor(kv.first).name] = std::move(kv.second);
  ORKNN_RETURN_IF_ERROR(remove_dead_code(g, nullptr));
  ORKNN_RETURN_IF_ERROR(reinfer_graph(g));

  // Relu/Clip between a compute op and its QuantizeLinear could not be fused while the Q/DQ pair
  // sat in between. Fusing moves the compute op onto the activation's output tensor; activations
  // that int8 compute ops cannot apply are split off again, and their input gets back its
  // original name (and so its parameters).
  // SiLU's Sigmoid output gets its name back the same way.
  std::map<std::string, std::string> compute_output;  // node name -> output tensor name
  std::map<std::string, std::string> sigmoid_output;  // node name -> the output of a Sigmoid reading it
  std::map<int, std::string> sigmoid_of;              // tensor -> the output name of a Sigmoid reading it
  for (const Node& n : g.nodes)
    if (n.op == OpId::Sigmoid && n.inputs.size() == 1 && !n.outputs.empty() && n.outputs[0] >= 0)
      sigmoid_of[n.inputs[0]] = g.tensor(n.outputs[0]).name;
  for (const Node& n : g.nodes)
    if (is_compute_op(n.op) && !n.outputs.empty() && n.outputs[0] >= 0) {
      compute_output[n.name] = g.tensor(n.outputs[0]).name;
      if (auto it = sigmoid_of.find(n.outputs[0]); it != sigmoid_of.end()) sigmoid_output[n.name] = it->second;
    }
  int fused = 0;
  ORKNN_RETURN_IF_ERROR(fuse_conv_activation(g, &fused));
  ORKNN_RETURN_IF_ERROR(remove_dead_code(g, nullptr));
  std::map<std::string, std::string> fused_output;  // node name -> output tensor name after fusion
  for (const Node& n : g.nodes)
    if (is_compute_op(n.op) && !n.outputs.empty() && n.outputs[0] >= 0)
      fused_output[n.name] = g.tensor(n.outputs[0]).name;
  // A Conv keeps a value activation fused when the model quantizes only the activation's output:
  // the activation was fused before the Q/DQ pairs were stripped (nothing between them), or its
  // input has no parameters.
  ORKNN_RETURN_IF_ERROR(prepare_for_quantization(g, [&](const Node& n) {
    auto before = compute_output.find(n.name);
    return before != compute_output.end() &&
           (before->second == g.tensor(n.outputs[0]).name || !acts.count(before->second));
  }));
  std::set<std::string> names;
  for (const Tensor& t : g.tensors) names.insert(t.name);
  std::map<int, int> split_sigmoid;  // compute output -> the Sigmoid prepare_for_quantization split off it
  for (const Node& n : g.nodes)
    if (n.op == OpId::Sigmoid && n.inputs.size() == 1 && !n.outputs.empty() && n.outputs[0] >= 0)
      split_sigmoid[n.inputs[0]] = n.outputs[0];
  auto rename = [&](Tensor& t, const std::string& name) {
    names.erase(t.name);
    t.name = name;
    names.insert(name);
  };
  for (const Node& n : g.nodes) {
    auto before = compute_output.find(n.name);
    auto after = fused_output.find(n.name);
    if (!is_compute_op(n.op) || before == compute_output.end() || after == fused_output.end() || n.outputs.empty() ||
        n.outputs[0] < 0)
      continue;
    Tensor& out = g.tensor(n.outputs[0]);
    // Unchanged by prepare_for_quantization (no activation, or Relu/Clip fused): nothing to do.
    if (out.name == after->second || names.count(before->second)) continue;
    rename(out, before->second);
    auto sig = sigmoid_output.find(n.name);
    auto split = split_sigmoid.find(n.outputs[0]);
    if (sig != sigmoid_output.end() && split != split_sigmoid.end() && !names.count(sig->second))
      rename(g.tensor(split->second), sig->second);
  }

  s->given_activations.clear();
  s->given_constants.clear();
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const Tensor& tensor = g.tensors[t];
    if (tensor.is_const()) {
      auto c = consts.find(tensor.name);
      if (c != consts.end() && tensor.dtype == DType::kF32 &&
          static_cast<int64_t>(c->second.bytes.size()) == tensor.numel() * static_cast<int64_t>(dtype_size(c->second.dtype)))
        s->given_constants[static_cast<int>(t)] = c->second;
    } else {
      auto a = acts.find(tensor.name);
      if (a != acts.end() && tensor.dtype == DType::kF32) s->given_activations[static_cast<int>(t)] = a->second;
    }
  }
  return Status::Ok();
}

Status quantize_qdq_graph(Graph& g, const QuantizeSettings& settings, std::vector<ConvertReport::LayerPrecision>* table) {
  QuantizeSettings s = settings;
  ORKNN_RETURN_IF_ERROR(strip_qdq(g, &s));
  return quantize_graph(g, {}, s, table);
}

}  // namespace orknn
