#include "converter/quant/accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "common/fp16.h"
#include "runtime/executor.h"
#include "kernels/kernel.h"
#include "kernels/quant_util.h"

namespace orknn {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_qdq(OpId op) { return op == OpId::QuantizeLinear || op == OpId::DequantizeLinear; }
bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16; }
bool is_quantized_i8(const Tensor& t) { return t.dtype == DType::kI8 && !t.quant.empty(); }

// Index into t.quant's scale/zero point for element i (per-tensor, or per channel along axis).
size_t param_index(const Tensor& t, int64_t i) {
  const QuantParams& q = t.quant;
  if (q.scale.size() <= 1) return 0;
  const int rank = static_cast<int>(t.shape.size());
  const int axis = q.axis < 0 ? q.axis + rank : q.axis;
  int64_t inner = 1;
  for (int d = axis + 1; d < rank; ++d) inner *= t.shape[static_cast<size_t>(d)];
  return static_cast<size_t>((i / inner) % t.shape[static_cast<size_t>(axis)]);
}
int32_t zero_point_at(const QuantParams& q, size_t k) {
  if (q.zero_point.empty()) return 0;
  return q.zero_point.size() == 1 ? q.zero_point[0] : q.zero_point[k];
}

// Whether t's quantization parameters can be applied element by element.
bool quant_params_usable(const Tensor& t) {
  const QuantParams& q = t.quant;
  if (q.scale.size() == 1) return q.zero_point.size() <= 1;
  const int rank = static_cast<int>(t.shape.size());
  const int axis = q.axis < 0 ? q.axis + rank : q.axis;
  if (axis < 0 || axis >= rank) return false;
  const size_t channels = static_cast<size_t>(t.shape[static_cast<size_t>(axis)]);
  return q.scale.size() == channels && (q.zero_point.size() <= 1 || q.zero_point.size() == channels);
}

}  // namespace

std::vector<float> real_values(const Tensor& t, const void* data) {
  const size_t n = static_cast<size_t>(t.numel());
  std::vector<float> v(n);
  if (t.dtype == DType::kF32) {
    if (n) std::memcpy(v.data(), data, n * sizeof(float));
  } else if (t.dtype == DType::kF16) {
    fp16_to_fp32(static_cast<const uint16_t*>(data), v.data(), n);
  } else {  // quantized INT8 (checked by the caller)
    const int8_t* q = static_cast<const int8_t*>(data);
    for (size_t i = 0; i < n; ++i) {
      const size_t k = param_index(t, static_cast<int64_t>(i));
      v[i] = dequantize_value(q[i], t.quant.scale[k], zero_point_at(t.quant, k));
    }
  }
  return v;
}

namespace {

// Writes real values into a buffer of tensor t: copied (float), rounded (fp16) or quantized (INT8).
void write_real_values(const Tensor& t, const std::vector<float>& v, void* dst) {
  const size_t n = static_cast<size_t>(t.numel());
  if (t.dtype == DType::kF32) {
    if (n) std::memcpy(dst, v.data(), n * sizeof(float));
  } else if (t.dtype == DType::kF16) {
    fp32_to_fp16(v.data(), static_cast<uint16_t*>(dst), n);
  } else {
    int8_t* q = static_cast<int8_t*>(dst);
    for (size_t i = 0; i < n; ++i) {
      const size_t k = param_index(t, static_cast<int64_t>(i));
      q[i] = quantize_value(v[i], t.quant.scale[k], zero_point_at(t.quant, k));
    }
  }
}

template <typename T>
void cast_into(const std::vector<float>& v, std::vector<uint8_t>* out) {
  out->resize(v.size() * sizeof(T));
  T* p = reinterpret_cast<T*>(out->data());
  for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(std::nearbyint(v[i]));
}

}  // namespace

Status graph_input_bytes(const Tensor& t, const std::vector<float>& v, const char* which, std::vector<uint8_t>* out) {
  if (v.size() != static_cast<size_t>(t.numel()))
    return ORKNN_ERR(kInvalidParam, "%s graph input '%s' %s has %lld values, %zu given", which, t.name.c_str(),
                     shape_str(t.shape).c_str(), static_cast<long long>(t.numel()), v.size());
  if (is_float(t.dtype) || is_quantized_i8(t)) {
    if (is_quantized_i8(t) && !quant_params_usable(t))
      return ORKNN_ERR(kInvalidModel, "%s graph input '%s': unusable quantization parameters (%zu scales)", which,
                       t.name.c_str(), t.quant.scale.size());
    out->assign(t.nbytes(), 0);
    write_real_values(t, v, out->data());
    return Status::Ok();
  }
  for (float x : v)
    if (!std::isfinite(x))
      return ORKNN_ERR(kInvalidParam, "%s graph input '%s' (%s) is an integer input; value %g is not finite", which,
                       t.name.c_str(), dtype_name(t.dtype), static_cast<double>(x));
  switch (t.dtype) {
    case DType::kI8: cast_into<int8_t>(v, out); break;
    case DType::kU8: cast_into<uint8_t>(v, out); break;
    case DType::kI16: cast_into<int16_t>(v, out); break;
    case DType::kU16: cast_into<uint16_t>(v, out); break;
    case DType::kI32: cast_into<int32_t>(v, out); break;
    case DType::kU32: cast_into<uint32_t>(v, out); break;
    case DType::kI64: cast_into<int64_t>(v, out); break;
    case DType::kBool: {
      out->resize(v.size());
      for (size_t i = 0; i < v.size(); ++i) (*out)[i] = v[i] != 0.f;
      break;
    }
    default:
      return ORKNN_ERR(kInvalidParam, "%s graph input '%s': dtype %s is not supported", which, t.name.c_str(),
                       dtype_name(t.dtype));
  }
  return Status::Ok();
}

namespace {

// Why quantized-graph tensor q cannot be compared with float-graph tensor f of the same name
// ("" when it can; "-" when the pair is simply not a real-valued activation, not worth a note).
std::string not_comparable(const Tensor& f, const Tensor& q) {
  if (f.is_const() && q.is_const()) return "-";
  if (f.is_const() || q.is_const()) return "a constant in one graph only";
  if (!is_float(f.dtype)) return "-";  // integer data (shapes, indices) is exact in both
  if (!is_float(q.dtype) && !is_quantized_i8(q))
    return strfmt("float in the float graph, %s without quantization parameters in the quantized graph",
                  dtype_name(q.dtype));
  if (f.shape != q.shape)
    return strfmt("shape %s in the float graph, %s in the quantized graph", shape_str(f.shape).c_str(),
                  shape_str(q.shape).c_str());
  if (is_quantized_i8(q) && !quant_params_usable(q))
    return strfmt("unusable quantization parameters (%zu scales, axis %d)", q.quant.scale.size(), q.quant.axis);
  return "";
}

}  // namespace

std::string json_number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  return strfmt("%.9g", v);
}

std::string json_names(const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + json_quote(names[i]);
  return s + "]";
}

namespace {

std::string json_error(const TensorError& e) {
  return "{\"cosine\": " + json_number(e.cosine) + ", \"sqnr_db\": " + json_number(e.sqnr_db) +
         ", \"max_abs\": " + json_number(e.max_abs) + ", \"euclidean\": " + json_number(e.euclidean) + "}";
}

// a < b for "lower SQNR is worse", NaN worst of all.
bool worse(double a, double b) {
  if (std::isnan(a)) return !std::isnan(b);
  if (std::isnan(b)) return false;
  return a < b;
}

}  // namespace

TensorError tensor_error(const float* ref, const float* x, size_t n) {
  double dot = 0, ref2 = 0, x2 = 0, err2 = 0, max_abs = 0;
  for (size_t i = 0; i < n; ++i) {
    const float r = ref[i], v = x[i];
    if (!std::isfinite(r) || !std::isfinite(v)) {
      const bool agree = (std::isnan(r) && std::isnan(v)) || (std::isinf(r) && r == v);
      if (agree) continue;
      return TensorError{kNaN, kNaN, kNaN, kNaN};
    }
    const double rd = r, vd = v, e = rd - vd;
    dot += rd * vd;
    ref2 += rd * rd;
    x2 += vd * vd;
    err2 += e * e;
    max_abs = std::max(max_abs, std::fabs(e));
  }
  TensorError t;
  t.max_abs = max_abs;
  t.euclidean = std::sqrt(err2);
  if (err2 == 0) {
    t.cosine = 1.0;
    t.sqnr_db = kInf;
    return t;
  }
  t.sqnr_db = ref2 == 0 ? -kInf : 10.0 * std::log10(ref2 / err2);
  if (ref2 == 0 || x2 == 0) {
    t.cosine = 0.0;
  } else {
    t.cosine = dot / (std::sqrt(ref2) * std::sqrt(x2));
    t.cosine = std::min(1.0, std::max(-1.0, t.cosine));
  }
  return t;
}

TensorError tensor_error(const std::vector<float>& ref, const std::vector<float>& x) {
  if (ref.size() != x.size()) return TensorError{kNaN, kNaN, kNaN, kNaN};
  return tensor_error(ref.data(), x.data(), ref.size());
}

const AccuracyRow* AccuracyReport::first_below(double threshold_db) const {
  for (const AccuracyRow& r : rows)
    if (std::isnan(r.entire.sqnr_db) || r.entire.sqnr_db < threshold_db) return &r;
  return nullptr;
}

std::vector<AccuracySuggestion> AccuracyReport::suggestions(size_t max_count) const {
  std::vector<AccuracySuggestion> all;
  std::map<std::vector<std::string>, size_t> index_of;
  for (const AccuracyRow& r : rows) {
    if (r.single_int8_nodes.empty() || r.single_on_grid) continue;
    const double s = r.single.sqnr_db;
    if (std::isinf(s) && s > 0) continue;
    auto it = index_of.find(r.single_int8_nodes);
    if (it == index_of.end()) {
      index_of.emplace(r.single_int8_nodes, all.size());
      all.push_back(AccuracySuggestion{r.single_int8_nodes, r.tensor, s});
    } else if (worse(s, all[it->second].single_sqnr_db)) {
      all[it->second].tensor = r.tensor;
      all[it->second].single_sqnr_db = s;
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const AccuracySuggestion& a, const AccuracySuggestion& b) {
    return worse(a.single_sqnr_db, b.single_sqnr_db);
  });
  if (all.size() > max_count) all.resize(max_count);
  return all;
}

std::string inputs_by_name(const Graph& quant_graph, const Graph& float_graph, std::vector<size_t>* order) {
  order->clear();
  for (const auto& in : quant_graph.inputs) {
    const std::string& name = quant_graph.tensor(in.tensor).name;
    size_t j = 0;
    while (j < float_graph.inputs.size() && float_graph.tensor(float_graph.inputs[j].tensor).name != name) ++j;
    if (j == float_graph.inputs.size()) return name;
    order->push_back(j);
  }
  return "";
}

Status compare_float_and_quantized(const Graph& float_graph, const Graph& quant_graph,
                                   const std::vector<std::vector<float>>& inputs, AccuracyReport* out,
                                   const AccuracyOptions& opts) {
  *out = AccuracyReport();
  const Graph& fg = float_graph;
  const Graph& qg = quant_graph;
  if (inputs.size() != qg.inputs.size())
    return ORKNN_ERR(kInvalidParam, "%zu input values given, the quantized model has %zu inputs", inputs.size(),
                     qg.inputs.size());
  if (fg.inputs.size() != qg.inputs.size())
    return ORKNN_ERR(kInvalidParam, "the float model has %zu inputs, the quantized model %zu", fg.inputs.size(),
                     qg.inputs.size());

  // Quantized input i -> float input of the same name.
  std::vector<size_t> float_input_of(qg.inputs.size());
  for (size_t i = 0; i < qg.inputs.size(); ++i) {
    const Tensor& qt = qg.tensor(qg.inputs[i].tensor);
    size_t j = 0;
    while (j < fg.inputs.size() && fg.tensor(fg.inputs[j].tensor).name != qt.name) ++j;
    if (j == fg.inputs.size())
      return ORKNN_ERR(kInvalidParam, "the quantized model's input '%s' is not an input of the float model",
                       qt.name.c_str());
    float_input_of[i] = j;
  }

  std::unique_ptr<Executor> fr, qr;
  Status st = Executor::create_keep_all(fg, opts.allow_fast_kernels, opts.num_threads, &fr);
  if (!st.ok()) return Status(st.code(), "float model: " + st.message());
  st = Executor::create_keep_all(qg, opts.allow_fast_kernels, opts.num_threads, &qr);
  if (!st.ok()) return Status(st.code(), "quantized model: " + st.message());

  std::vector<std::vector<uint8_t>> q_input_bytes(qg.inputs.size());
  for (size_t i = 0; i < qg.inputs.size(); ++i) {
    const size_t j = float_input_of[i];
    std::vector<uint8_t> fb;
    ORKNN_RETURN_IF_ERROR(graph_input_bytes(fg.tensor(fg.inputs[j].tensor), inputs[i], "float model", &fb));
    ORKNN_RETURN_IF_ERROR(fr->set_input(j, fb.data(), fb.size()));
    ORKNN_RETURN_IF_ERROR(graph_input_bytes(qg.tensor(qg.inputs[i].tensor), inputs[i], "quantized model", &q_input_bytes[i]));
    ORKNN_RETURN_IF_ERROR(qr->set_input(i, q_input_bytes[i].data(), q_input_bytes[i].size()));
  }
  ORKNN_RETURN_IF_ERROR(fr->run());
  ORKNN_RETURN_IF_ERROR(qr->run());

  // The compared tensors, as rows in order: graph inputs, then node outputs.
  struct Slot {
    int qid, fid;
  };
  std::vector<Slot> slots;
  std::vector<int> row_of(qg.tensors.size(), -1);
  std::set<int> noted;
  auto consider = [&](int qid, const std::string& node, const std::string& op, const std::string& precision) {
    if (qid < 0 || row_of[static_cast<size_t>(qid)] >= 0) return;
    const Tensor& qt = qg.tensor(qid);
    const int fid = fg.find_tensor(qt.name);
    if (fid < 0) return;
    const std::string why = not_comparable(fg.tensor(fid), qt);
    if (!why.empty()) {
      if (why != "-" && noted.insert(qid).second) out->notes.push_back("'" + qt.name + "' not compared: " + why);
      return;
    }
    row_of[static_cast<size_t>(qid)] = static_cast<int>(slots.size());
    slots.push_back(Slot{qid, fid});
    AccuracyRow r;
    r.node = node;
    r.op = op;
    r.precision = precision;
    r.tensor = qt.name;
    r.dtype = qt.dtype;
    r.shape = qt.shape;
    out->rows.push_back(std::move(r));
  };
  for (const GraphInput& in : qg.inputs)
    consider(in.tensor, "", "input", is_quantized_i8(qg.tensor(in.tensor)) ? "int8" : "float");
  for (const Node& n : qg.nodes)
    for (int o : n.outputs) consider(o, n.name, op_name(n.op), is_quantized_node(qg, n) ? "int8" : "float");

  auto float_values = [&](const Slot& s) { return real_values(fg.tensor(s.fid), fr->data(s.fid)); };

  // Entire: the quantized run from the inputs.
  for (size_t r = 0; r < slots.size(); ++r) {
    const Slot& s = slots[r];
    out->rows[r].entire = tensor_error(float_values(s), real_values(qg.tensor(s.qid), qr->data(s.qid)));
  }

  // Single: node by node on ideal inputs. The graph inputs already hold their ideal values (the
  // float inputs, quantized where INT8); a compared node output is reset to its float value after
  // it was measured. `covers[t]` lists the nodes that computed tensor t since the last ideal values.
  for (size_t i = 0; i < qg.inputs.size(); ++i)
    ORKNN_RETURN_IF_ERROR(qr->set_input(i, q_input_bytes[i].data(), q_input_bytes[i].size()));
  for (size_t r = 0; r < slots.size(); ++r)
    if (out->rows[r].node.empty()) out->rows[r].single = out->rows[r].entire;
  std::vector<std::vector<size_t>> covers(qg.tensors.size());
  for (size_t k = 0; k < qg.nodes.size(); ++k) {
    const Node& n = qg.nodes[k];
    std::vector<size_t> seg;
    for (int t : n.inputs)
      if (t >= 0 && row_of[static_cast<size_t>(t)] < 0)
        for (size_t p : covers[static_cast<size_t>(t)])
          if (std::find(seg.begin(), seg.end(), p) == seg.end()) seg.push_back(p);
    std::sort(seg.begin(), seg.end());
    seg.push_back(k);
    qr->run_step(k);
    for (int o : n.outputs) {
      if (o < 0) continue;
      const int r = row_of[static_cast<size_t>(o)];
      if (r < 0) {
        covers[static_cast<size_t>(o)] = seg;
        continue;
      }
      const Slot& s = slots[static_cast<size_t>(r)];
      AccuracyRow& row = out->rows[static_cast<size_t>(r)];
      const std::vector<float> ref = float_values(s);
      row.single = tensor_error(ref, real_values(qg.tensor(o), qr->data(o)));
      for (size_t p : seg) {
        const Node& pn = qg.nodes[p];
        if (!is_qdq(pn.op) && is_quantized_node(qg, pn)) row.single_int8_nodes.push_back(pn.name);
      }
      const Tensor& ot = qg.tensor(o);
      if (is_quantized_i8(ot)) {
        std::vector<uint8_t> ideal(ot.nbytes());
        write_real_values(ot, ref, ideal.data());
        row.single_on_grid = std::memcmp(ideal.data(), qr->data(o), ideal.size()) == 0;
        ORKNN_RETURN_IF_ERROR(qr->write(o, ideal.data(), ideal.size()));
      } else {
        std::vector<uint8_t> real(ot.nbytes());
        write_real_values(ot, ref, real.data());
        ORKNN_RETURN_IF_ERROR(qr->write(o, real.data(), real.size()));
      }
    }
  }
  return Status::Ok();
}

std::string json_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"') q += "\\\"";
    else if (c == '\\') q += "\\\\";
    else if (c == '\n') q += "\\n";
    else if (c == '\t') q += "\\t";
    else if (c == '\r') q += "\\r";
    else if (u < 0x20 || u == 0x7f) q += strfmt("\\u%04x", u);
    else q += c;
  }
  return q + "\"";
}

std::string accuracy_report_json(const AccuracyReport& r, double threshold_db, size_t max_suggestions,
                                 const std::vector<std::pair<std::string, std::string>>& info,
                                 const std::string& members) {
  std::string j = "{\n  \"info\": {";
  for (size_t i = 0; i < info.size(); ++i)
    j += (i ? ", " : "") + json_quote(info[i].first) + ": " + json_quote(info[i].second);
  j += "},\n  \"threshold_db\": " + json_number(threshold_db) + ",\n  \"rows\": [";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const AccuracyRow& row = r.rows[i];
    std::string shape = "[";
    for (size_t d = 0; d < row.shape.size(); ++d) shape += (d ? ", " : "") + std::to_string(row.shape[d]);
    shape += "]";
    j += std::string(i ? "," : "") + "\n    {\"node\": " + json_quote(row.node) + ", \"op\": " + json_quote(row.op) +
         ", \"precision\": " + json_quote(row.precision) + ", \"tensor\": " + json_quote(row.tensor) +
         ", \"dtype\": " + json_quote(dtype_name(row.dtype)) + ", \"shape\": " + shape +
         ",\n     \"entire\": " + json_error(row.entire) + ",\n     \"single\": " + json_error(row.single) +
         ", \"single_int8_nodes\": " + json_names(row.single_int8_nodes) +
         ", \"single_on_grid\": " + (row.single_on_grid ? "true" : "false") + "}";
  }
  j += r.rows.empty() ? "],\n" : "\n  ],\n";
  const AccuracyRow* first = r.first_below(threshold_db);
  j += "  \"first_below\": ";
  if (!first) {
    j += "null";
  } else {
    j += "{\"row\": " + std::to_string(first - r.rows.data()) + ", \"node\": " + json_quote(first->node) +
         ", \"op\": " + json_quote(first->op) + ", \"tensor\": " + json_quote(first->tensor) +
         ", \"sqnr_db\": " + json_number(first->entire.sqnr_db) + "}";
  }
  j += ",\n  \"suggestions\": [";
  const std::vector<AccuracySuggestion> sug = r.suggestions(max_suggestions);
  for (size_t i = 0; i < sug.size(); ++i)
    j += std::string(i ? "," : "") + "\n    {\"nodes\": " + json_names(sug[i].nodes) +
         ", \"tensor\": " + json_quote(sug[i].tensor) + ", \"single_sqnr_db\": " + json_number(sug[i].single_sqnr_db) +
         "}";
  j += sug.empty() ? "],\n" : "\n  ],\n";
  if (!members.empty()) j += members + ",\n";
  j += "  \"notes\": " + json_names(r.notes) + "\n}\n";
  return j;
}

}  // namespace orknn
