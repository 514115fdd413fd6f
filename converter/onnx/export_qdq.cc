#include "converter/onnx/export_qdq.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "converter/onnx/tensor_proto.h"
#include "converter/quant/observer.h"
#include "kernels/ref/int8_compute.h"
#include "ops/op.h"

namespace orknn::onnx_import {
namespace {

onnx::TensorProto scalar_f32(const std::string& name, float v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_float_data(v);
  return t;
}

onnx::TensorProto int8_tensor(const std::string& name, const Shape& dims, const std::vector<int8_t>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT8);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size()));
  return t;
}

onnx::TensorProto f32_vector(const std::string& name, const std::vector<float>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(static_cast<int64_t>(v.size()));
  for (float x : v) t.add_float_data(x);
  return t;
}

// The output-channel axis of a weight input, or -1 for inputs that are not weights.
int weight_axis(const onnx::NodeProto& n, int input, int64_t rank) {
  auto attr_i = [&](const char* name, int64_t def) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return a.i();
    return def;
  };
  if (input != 1) return -1;
  if (n.op_type() == "Conv") return 0;
  if (n.op_type() == "ConvTranspose") return rank >= 2 ? 1 : -1;  // [Cin, Cout/group, ...]
  if (n.op_type() == "Gemm") return attr_i("transB", 0) ? 0 : 1;
  if (n.op_type() == "MatMul") return rank == 2 ? 1 : -1;  // [K, N]
  return -1;
}

// A name not used by any value or initializer of the graph.
std::string fresh(const std::string& base, std::set<std::string>* used) {
  std::string name = base;
  for (int i = 1; used->count(name); ++i) name = base + "_" + std::to_string(i);
  used->insert(name);
  return name;
}

// The graph's constants by name: initializers, and the tensors of Constant nodes (some exporters
// write weights that way).
std::map<std::string, const onnx::TensorProto*> constant_tensors(const onnx::GraphProto& g) {
  std::map<std::string, const onnx::TensorProto*> c;
  for (const auto& t : g.initializer()) c[t.name()] = &t;
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) c[n.output(0)] = &a.t();
  return c;
}

// Folds each BatchNormalization that alone reads a Conv's output into that Conv's weights and bias,
// as the converter does: toolkits that build QDQ models fold BN themselves, which would change
// the weights the int8 values were made from.
Status fold_batchnorm(onnx::GraphProto* g, std::set<std::string>* used) {
  std::map<std::string, const onnx::TensorProto*> constants = constant_tensors(*g);
  std::map<std::string, int> readers;
  std::map<std::string, int> producer;
  for (int i = 0; i < g->node_size(); ++i) {
    for (const auto& in : g->node(i).input()) ++readers[in];
    for (const auto& o : g->node(i).output()) producer[o] = i;
  }
  for (const auto& o : g->output()) ++readers[o.name()];
  auto floats = [&](const std::string& name, std::vector<float>* out) -> bool {
    auto it = constants.find(name);
    if (it == constants.end() || it->second->data_type() != onnx::TensorProto::FLOAT) return false;
    TensorBytes b;
    if (!read_tensor_proto(*it->second, "", name, &b).ok()) return false;
    out->resize(b.bytes.size() / sizeof(float));
    std::memcpy(out->data(), b.bytes.data(), b.bytes.size());
    return true;
  };
  std::set<int> removed;
  std::vector<onnx::TensorProto> added;
  for (int i = 0; i < g->node_size(); ++i) {
    const onnx::NodeProto& bn = g->node(i);
    if (bn.op_type() != "BatchNormalization" || bn.input_size() != 5) continue;
    bool extra_outputs = false;
    for (int k = 1; k < bn.output_size(); ++k) extra_outputs |= !bn.output(k).empty() && readers[bn.output(k)] > 0;
    auto p = producer.find(bn.input(0));
    if (extra_outputs || p == producer.end() || readers[bn.input(0)] != 1) continue;
    onnx::NodeProto* conv = g->mutable_node(p->second);
    if (conv->op_type() != "Conv" || conv->input_size() < 2) continue;
    std::vector<float> w, bias, gamma, beta, mean, var;
    if (!floats(conv->input(1), &w) || !floats(bn.input(1), &gamma) || !floats(bn.input(2), &beta) ||
        !floats(bn.input(3), &mean) || !floats(bn.input(4), &var))
      continue;
    const size_t oc = gamma.size();
    if (oc == 0 || beta.size() != oc || mean.size() != oc || var.size() != oc || w.size() % oc != 0) continue;
    if (conv->input_size() > 2 && !conv->input(2).empty() && (!floats(conv->input(2), &bias) || bias.size() != oc))
      continue;
    if (bias.empty()) bias.assign(oc, 0.f);
    float eps = 1e-5f;
    for (const auto& a : bn.attribute())
      if (a.name() == "epsilon") eps = a.f();
    const size_t per = w.size() / oc;
    Shape wdims(constants[conv->input(1)]->dims().begin(), constants[conv->input(1)]->dims().end());
    for (size_t c = 0; c < oc; ++c) {
      const float k = gamma[c] / std::sqrt(var[c] + eps);
      for (size_t j = 0; j < per; ++j) w[c * per + j] *= k;
      bias[c] = (bias[c] - mean[c]) * k + beta[c];
    }
    const std::string wn = fresh(conv->input(1) + "/bn_folded", used), bname = fresh(conv->name() + "/bias_bn_folded", used);
    onnx::TensorProto wt, bt;
    wt.set_name(wn), bt.set_name(bname);
    wt.set_data_type(onnx::TensorProto::FLOAT), bt.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : wdims) wt.add_dims(d);
    bt.add_dims(static_cast<int64_t>(oc));
    wt.set_raw_data(std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float)));
    bt.set_raw_data(std::string(reinterpret_cast<const char*>(bias.data()), bias.size() * sizeof(float)));
    added.push_back(wt), added.push_back(bt);
    conv->set_input(1, wn);
    if (conv->input_size() > 2) conv->set_input(2, bname);
    else conv->add_input(bname);
    conv->set_output(0, bn.output(0));
    removed.insert(i);
  }
  if (removed.empty()) return Status::Ok();
  std::vector<onnx::NodeProto> nodes;
  for (int i = 0; i < g->node_size(); ++i)
    if (!removed.count(i)) nodes.push_back(g->node(i));
  g->clear_node();
  for (auto& n : nodes) *g->add_node() = std::move(n);
  for (auto& t : added) *g->add_initializer() = std::move(t);
  // Drop the constants nothing reads any more (the unfolded weights, BN's parameters).
  std::map<std::string, int> still;
  for (const auto& n : g->node())
    for (const auto& in : n.input()) ++still[in];
  for (const auto& o : g->output()) ++still[o.name()];
  std::vector<onnx::TensorProto> keep;
  for (const auto& t : g->initializer())
    if (still[t.name()] > 0) keep.push_back(t);
  g->clear_initializer();
  for (auto& t : keep) *g->add_initializer() = std::move(t);
  std::vector<onnx::NodeProto> live;
  for (const auto& n : g->node())
    if (n.op_type() != "Constant" || n.output_size() != 1 || still[n.output(0)] > 0) live.push_back(n);
  g->clear_node();
  for (auto& n : live) *g->add_node() = std::move(n);
  return Status::Ok();
}

// A tensor of the INT8 graph held as int8 with one scale (an activation), or nullptr.
const Tensor* int8_activation(const Graph& q, int id) {
  if (id < 0) return nullptr;
  const Tensor& t = q.tensor(id);
  return !t.is_const() && t.dtype == DType::kI8 && t.quant.scale.size() == 1 ? &t : nullptr;
}

// The int8 tensors of activations the converter split off a compute node (prepare_for_quantization,
// converter/quant/quantize.h), which are ONNX values under other names: the compute node's output
// (the activation's input) and, for SiLU, the Sigmoid's output. The INT8 graph names them after the
// activation's output ("<y>_preact"), so they are found by structure: an activation node whose input
// is no ONNX value and whose output is written in the ONNX graph by the same op type; or Sigmoid and
// Mul (SiLU) whose Mul output is written in the ONNX graph by Mul(x, Sigmoid(x)). Without them the
// export would leave those tensors float: not the INT8 model, and a form the vendor's toolkit
// crashes on when such an activation feeds a residual Add.
void add_split_activations(const onnx::GraphProto& g, const Graph& q, const std::set<std::string>& values,
                           std::vector<std::pair<std::string, const Tensor*>>* out) {
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) producer[o] = &n;
  auto onnx_producer = [&](int id) -> const onnx::NodeProto* {
    auto it = producer.find(q.tensor(id).name);
    return it == producer.end() ? nullptr : it->second;
  };
  std::map<int, std::vector<const Node*>> muls_reading;  // tensor -> the Mul nodes of q that read it
  for (const Node& m : q.nodes)
    if (m.op == OpId::Mul && m.inputs.size() == 2 && !m.outputs.empty() && m.outputs[0] >= 0)
      for (int in : m.inputs) muls_reading[in].push_back(&m);
  for (const Node& a : q.nodes) {
    if (a.inputs.size() != 1 || a.outputs.size() != 1 || a.outputs[0] < 0) continue;
    const Tensor* pre = int8_activation(q, a.inputs[0]);
    if (!pre || values.count(pre->name)) continue;
    const onnx::NodeProto* p = onnx_producer(a.outputs[0]);
    if (p && p->op_type() == op_name(a.op) && p->input_size() >= 1) {
      out->emplace_back(p->input(0), pre);
      continue;
    }
    if (a.op != OpId::Sigmoid) continue;
    for (const Node* mp : muls_reading[a.outputs[0]]) {
      const Node& m = *mp;
      const bool silu = (m.inputs[0] == a.inputs[0] && m.inputs[1] == a.outputs[0]) ||
                        (m.inputs[1] == a.inputs[0] && m.inputs[0] == a.outputs[0]);
      if (!silu) continue;
      const onnx::NodeProto* om = onnx_producer(m.outputs[0]);
      if (!om || om->op_type() != "Mul" || om->input_size() != 2) break;
      for (int k = 0; k < 2; ++k) {
        auto sp = producer.find(om->input(k));
        if (sp == producer.end() || sp->second->op_type() != "Sigmoid" || sp->second->input_size() < 1 ||
            sp->second->input(0) != om->input(1 - k))
          continue;
        out->emplace_back(om->input(1 - k), pre);
        if (const Tensor* sig = int8_activation(q, a.outputs[0])) out->emplace_back(om->input(k), sig);
        break;
      }
      break;
    }
  }
}

}  // namespace

Status export_qdq(const Graph& quantized, onnx::ModelProto* model) {
  // Per-channel DequantizeLinear exists from opset 13; raising an older model's opset would change
  // what other ops of it mean (Softmax, Squeeze, Split, ...).
  for (const auto& op : model->opset_import())
    if ((op.domain().empty() || op.domain() == "ai.onnx") && op.version() < 13)
      return ORKNN_ERR(kUnimplemented, "--export-qdq needs ONNX opset 13 or newer (per-channel DequantizeLinear); the "
                       "model has opset %lld: upgrade it first with onnx.version_converter.convert_version(model, 13)",
                       static_cast<long long>(op.version()));
  onnx::GraphProto* g = model->mutable_graph();
  std::set<std::string> used;
  for (const auto& t : g->initializer()) used.insert(t.name());
  for (const auto& n : g->node())
    for (const auto& o : n.output()) used.insert(o);
  ORKNN_RETURN_IF_ERROR(fold_batchnorm(g, &used));
  std::map<std::string, int> init_index;
  for (int i = 0; i < g->initializer_size(); ++i) {
    const auto& t = g->initializer(i);
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      return ORKNN_ERR(kUnimplemented, "--export-qdq: initializer '%s' keeps its data in an external file; the QDQ "
                       "export writes every weight into one file and does not read external data yet",
                       t.name().c_str());
    used.insert(t.name());
    init_index[t.name()] = i;
  }
  std::map<std::string, int> readers;
  for (const auto& vi : g->input()) used.insert(vi.name());
  for (const auto& n : g->node()) {
    for (const auto& o : n.output()) used.insert(o);
    for (const auto& in : n.input()) ++readers[in];
  }
  for (const auto& o : g->output()) ++readers[o.name()];

  std::map<std::string, std::vector<onnx::NodeProto>> pairs;  // activation -> its Q and DQ nodes
  std::map<std::string, std::string> dequantized;             // activation -> its DQ output
  std::vector<onnx::NodeProto> weight_nodes;                  // the weights' DQ nodes

  // Activations: every int8 per-tensor tensor of the INT8 graph that is an ONNX value.
  std::set<std::string> values;
  for (const auto& vi : g->input())
    if (!init_index.count(vi.name())) values.insert(vi.name());
  for (const auto& n : g->node())
    for (const auto& o : n.output())
      if (!o.empty()) values.insert(o);
  std::set<std::string> graph_outputs;
  for (const auto& o : g->output()) graph_outputs.insert(o.name());
  std::map<std::string, std::string> renamed;  // graph output -> the name its producer now writes
  // An int8 tensor of the INT8 graph under an ONNX value's name; or, at a float -> int8 edge, the
  // output of the QuantizeLinear the converter put there, whose float input has the ONNX name.
  std::vector<std::pair<std::string, const Tensor*>> quantized_values;
  for (const Tensor& t : quantized.tensors)
    if (!t.is_const() && t.dtype == DType::kI8 && t.quant.scale.size() == 1 && values.count(t.name))
      quantized_values.emplace_back(t.name, &t);
  for (const Node& n : quantized.nodes) {
    if (n.op != OpId::QuantizeLinear || n.inputs.empty() || n.outputs.empty()) continue;
    const Tensor& in = quantized.tensor(n.inputs[0]);
    const Tensor& out = quantized.tensor(n.outputs[0]);
    if (values.count(in.name) && out.quant.scale.size() == 1) quantized_values.emplace_back(in.name, &out);
  }
  add_split_activations(*g, quantized, values, &quantized_values);
  for (const auto& [name, tp] : quantized_values) {
    const Tensor& t = *tp;
    if (pairs.count(name)) continue;
    const std::string s = fresh(name + "/scale", &used), z = fresh(name + "/zero_point", &used);
    *g->add_initializer() = scalar_f32(s, t.quant.scale[0]);
    *g->add_initializer() = int8_tensor(z, {}, {static_cast<int8_t>(t.quant.zero_point[0])});
    // A graph output keeps its name on the DequantizeLinear output, so it stays quantized as in
    // the INT8 model; its producer writes a new name.
    const bool is_output = graph_outputs.count(name) != 0;
    std::string src = name;
    if (is_output) renamed[name] = src = fresh(name + "/float", &used);
    const std::string q = fresh(name + "/quantized", &used);
    const std::string dq = is_output ? name : fresh(name + "/dequantized", &used);
    onnx::NodeProto qn, dqn;
    qn.set_op_type("QuantizeLinear");
    qn.set_name(fresh(name + "/QuantizeLinear", &used));
    qn.add_input(src), qn.add_input(s), qn.add_input(z), qn.add_output(q);
    dqn.set_op_type("DequantizeLinear");
    dqn.set_name(fresh(name + "/DequantizeLinear", &used));
    dqn.add_input(q), dqn.add_input(s), dqn.add_input(z), dqn.add_output(dq);
    pairs[name] = {qn, dqn};
    if (!is_output) dequantized[name] = dq;
  }

  // Weights: float initializers (or Constant nodes, as some exporters write weights) read only as
  // the weight input of Conv/ConvTranspose/Gemm/MatMul.
  const std::map<std::string, const onnx::TensorProto*> constants = constant_tensors(*g);
  std::map<std::string, std::vector<const onnx::NodeProto*>> readers_of;
  for (const auto& n : g->node())
    for (const auto& in : n.input()) readers_of[in].push_back(&n);
  auto quantized_output = [&](const std::string& v) {
    if (pairs.count(v)) return true;
    const auto& r = readers_of[v];
    if (r.size() != 1 || !pairs.count(r[0]->output(0))) return false;
    // The activations an int8 Conv applies (docs/numerics.md), which importers fuse into the layer
    // (the vendor's toolkit LeakyRelu and HardSwish too).
    const FusedAct a = parse_fused_act(r[0]->op_type());
    return a == FusedAct::kRelu || a == FusedAct::kClip || is_int8_value_act(a);
  };
  std::map<std::string, std::string> weight_dq;  // weight -> its DequantizeLinear output
  for (const auto& n : g->node())
    for (int i = 0; i < n.input_size(); ++i) {
      auto it = constants.find(n.input(i));
      if (it == constants.end() || weight_dq.count(n.input(i)) || readers[n.input(i)] != 1) continue;
      onnx::TensorProto init = *it->second;
      init.set_name(n.input(i));
      if (init.data_type() != onnx::TensorProto::FLOAT || init.data_location() == onnx::TensorProto::EXTERNAL) continue;
      const int axis = weight_axis(n, i, init.dims_size());
      // Only layers whose input and output are quantized (the output directly or after the
      // activation that alone reads it, which importers fuse): int8 weights between float activations
      // are a form toolkits refuse (the vendor's fails on them), and a layer the INT8 model keeps
      // float, or fuses with a longer activation, keeps float weights.
      if (axis < 0 || !dequantized.count(n.input(0)) || !quantized_output(n.output(0))) continue;
      TensorBytes b;
      ORKNN_RETURN_IF_ERROR(read_tensor_proto(init, "", "initializer '" + init.name() + "'", &b));
      Tensor w;
      w.name = init.name();
      w.shape = b.shape;
      w.dtype = DType::kF32;
      w.data.ptr = b.bytes.data();
      w.data.size = b.bytes.size();
      std::vector<int8_t> q;
      QuantParams p;
      ORKNN_RETURN_IF_ERROR(quantize_weights(w, axis, &q, &p));
      const std::string qname = fresh(init.name() + "/int8", &used), s = fresh(init.name() + "/scale", &used);
      const std::string z = fresh(init.name() + "/zero_point", &used), dq = fresh(init.name() + "/dequantized", &used);
      *g->add_initializer() = int8_tensor(qname, b.shape, q);
      *g->add_initializer() = f32_vector(s, p.scale);
      *g->add_initializer() = int8_tensor(z, {static_cast<int64_t>(p.scale.size())}, std::vector<int8_t>(p.scale.size(), 0));
      onnx::NodeProto dqn;
      dqn.set_op_type("DequantizeLinear");
      dqn.set_name(fresh(init.name() + "/DequantizeLinear", &used));
      dqn.add_input(qname), dqn.add_input(s), dqn.add_input(z), dqn.add_output(dq);
      auto* ax = dqn.add_attribute();
      ax->set_name("axis");
      ax->set_type(onnx::AttributeProto::INT);
      ax->set_i(axis);
      weight_nodes.push_back(dqn);
      weight_dq[init.name()] = dq;
    }

  // Rebuild the node list: weight DequantizeLinears first, each activation's pair right after its
  // producer (graph inputs' pairs first too), readers rewired.
  std::vector<onnx::NodeProto> nodes = weight_nodes;
  auto pair_of = [&](const std::string& value) {
    if (auto it = pairs.find(value); it != pairs.end()) nodes.insert(nodes.end(), it->second.begin(), it->second.end());
  };
  for (const auto& vi : g->input()) pair_of(vi.name());
  for (const auto& n : g->node()) {
    if (n.op_type() == "Constant" && n.output_size() == 1 && weight_dq.count(n.output(0))) continue;  // now int8
    onnx::NodeProto m = n;
    for (int i = 0; i < m.output_size(); ++i)
      if (auto it = renamed.find(m.output(i)); it != renamed.end()) m.set_output(i, it->second);
    for (int i = 0; i < m.input_size(); ++i) {
      if (auto it = dequantized.find(m.input(i)); it != dequantized.end()) m.set_input(i, it->second);
      else if (auto wt = weight_dq.find(m.input(i)); wt != weight_dq.end()) m.set_input(i, wt->second);
    }
    nodes.push_back(m);
    for (const auto& o : n.output()) pair_of(o);
  }
  g->clear_node();
  for (auto& n : nodes) *g->add_node() = std::move(n);
  // The float weights are no longer read.
  std::vector<onnx::TensorProto> keep;
  for (const auto& t : g->initializer())
    if (!weight_dq.count(t.name())) keep.push_back(t);
  g->clear_initializer();
  for (auto& t : keep) *g->add_initializer() = std::move(t);
  return Status::Ok();
}

}  // namespace orknn::onnx_import
