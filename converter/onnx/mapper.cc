#include "converter/onnx/mapper.h"

#include <cstdarg>
#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "converter/onnx/const_eval.h"
#include "graph/passes/passes.h"

namespace orknn::onnx_import {
namespace {

struct MapperEntry {
  const char* op_type;
  MapperFn fn;
};

const MapperEntry kMappers[] = {
#define ORKNN_ONNX_MAPPER(op_type, fn) {op_type, &fn},
#include "converter/onnx/ops/mapper_list.inc"
#undef ORKNN_ONNX_MAPPER
};

std::string vformat(const char* fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  std::string s(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, fmt, ap2);
  va_end(ap2);
  return s;
}

const char* attr_type_name(int t) {
  switch (t) {
    case onnx::AttributeProto::FLOAT: return "FLOAT";
    case onnx::AttributeProto::INT: return "INT";
    case onnx::AttributeProto::STRING: return "STRING";
    case onnx::AttributeProto::TENSOR: return "TENSOR";
    case onnx::AttributeProto::GRAPH: return "GRAPH";
    case onnx::AttributeProto::FLOATS: return "FLOATS";
    case onnx::AttributeProto::INTS: return "INTS";
    case onnx::AttributeProto::STRINGS: return "STRINGS";
    case onnx::AttributeProto::TENSORS: return "TENSORS";
    case onnx::AttributeProto::GRAPHS: return "GRAPHS";
    case onnx::AttributeProto::SPARSE_TENSOR: return "SPARSE_TENSOR";
    default: return "UNDEFINED";
  }
}

// Old models (IR version < 2-3) may leave AttributeProto.type unset; infer it from the field set.
int attr_kind(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.has_g()) return onnx::AttributeProto::GRAPH;
  if (a.floats_size()) return onnx::AttributeProto::FLOATS;
  if (a.ints_size()) return onnx::AttributeProto::INTS;
  if (a.strings_size()) return onnx::AttributeProto::STRINGS;
  return onnx::AttributeProto::UNDEFINED;
}

std::string unique_tensor_name(ImportState& st, const std::string& base) {
  std::string name = base;
  for (int i = 1; st.names.count(name) || st.internal_names.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

}  // namespace

MapperFn find_mapper(const std::string& op_type) {
  for (const auto& e : kMappers)
    if (op_type == e.op_type) return e.fn;
  return nullptr;
}

int MapContext::input(size_t i) const {
  if (i >= num_inputs()) return -1;
  const std::string& nm = node_->input(static_cast<int>(i));
  if (nm.empty()) return -1;
  auto it = st_->names.find(nm);
  return it == st_->names.end() ? -1 : it->second;
}

const Tensor* MapContext::input_tensor(size_t i) const {
  int id = input(i);
  return id < 0 ? nullptr : &st_->graph->tensor(id);
}

const Tensor* MapContext::const_input(size_t i) const {
  const Tensor* t = input_tensor(i);
  return (t && t->is_const()) ? t : nullptr;
}

Status MapContext::output(size_t i, int* id) {
  if (i >= num_outputs()) return error("output %zu requested but the node has %zu", i, num_outputs());
  if (bound_.size() < num_outputs()) bound_.resize(num_outputs(), -1);
  if (bound_[i] >= 0) { *id = bound_[i]; return Status::Ok(); }
  const std::string& nm = node_->output(static_cast<int>(i));
  if (nm.empty()) {
    std::string nm2 = unique_tensor_name(*st_, name_ + ":out" + std::to_string(i));
    st_->internal_names.insert(nm2);
    *id = st_->graph->add_tensor(nm2, {}, DType::kF32);
  } else {
    if (st_->names.count(nm))
      return error("output '%s' is already defined by an earlier node, input or initializer (ONNX values are "
                   "assigned once)", nm.c_str());
    if (st_->internal_names.count(nm)) {
      // An internal tensor took this name first; ONNX names win, the internal one moves.
      int other = st_->graph->find_tensor(nm);
      std::string moved = unique_tensor_name(*st_, nm + "_internal");
      st_->internal_names.insert(moved);
      if (other >= 0) st_->graph->tensor(other).name = moved;
    }
    *id = st_->graph->add_tensor(nm, {}, DType::kF32);
    st_->names[nm] = *id;
  }
  bound_[i] = *id;
  return Status::Ok();
}

void MapContext::mark_unavailable(size_t i, const std::string& reason) {
  if (i >= num_outputs()) return;
  const std::string& nm = node_->output(static_cast<int>(i));
  if (!nm.empty()) st_->unavailable[nm] = strfmt("output %zu of node '%s' (%s): %s", i, name_.c_str(),
                                                  op_type().c_str(), reason.c_str());
}

Status MapContext::output_const(size_t i, const Shape& shape_in, DType dtype, const void* bytes, size_t nbytes) {
  const Shape shape = shape_in;  // may refer into g.tensors, which output() can reallocate
  int id;
  ORKNN_RETURN_IF_ERROR(output(i, &id));
  Tensor& t = st_->graph->tensor(id);
  t.shape = shape;
  t.dtype = dtype;
  set_const_data(t, bytes, nbytes);
  return Status::Ok();
}

int MapContext::new_tensor(const std::string& suffix) {
  std::string nm = unique_tensor_name(*st_, name_ + "/" + suffix);
  st_->internal_names.insert(nm);
  return st_->graph->add_tensor(nm, {}, DType::kF32);
}

int MapContext::new_const(const std::string& suffix, const Shape& shape, DType dtype, const void* bytes, size_t nbytes) {
  std::string nm = unique_tensor_name(*st_, name_ + "/" + suffix);
  st_->internal_names.insert(nm);
  return st_->graph->add_const(nm, shape, dtype, bytes, nbytes);
}

Status MapContext::emit(Node n) {
  if (n.name.empty()) n.name = name_;
  const OpDef* def = find_op(n.op);
  if (!def || !def->infer) {
    if (op_name(n.op) == op_type())
      return unsupported("op not supported by OpenRKNN yet; see docs/ops.md");
    return unsupported("needs op %s, which is not supported by OpenRKNN yet; see docs/ops.md", op_name(n.op));
  }
  Graph& g = *st_->graph;
  Status st = def->infer(g, n);
  if (!st.ok()) {
    std::string msg = st.message();
    // Infer messages usually name the node already; add what they lack (the ONNX op type).
    if (op_name(n.op) == op_type() && msg.find("'" + n.name + "'") != std::string::npos &&
        msg.find(op_type()) != std::string::npos)
      return st;
    if (op_name(n.op) != op_type()) msg = strfmt("(as %s) %s", op_name(n.op), msg.c_str());
    return Status(st.code(), strfmt("node '%s' (%s): %s", name_.c_str(), op_type().c_str(), msg.c_str()));
  }
  bool folded = false;
  st = try_fold_node(g, n, &folded);
  if (!st.ok())
    return Status(st.code(), strfmt("node '%s' (%s): %s", name_.c_str(), op_type().c_str(), st.message().c_str()));
  if (folded) {
    ++st_->nodes_folded;
    return Status::Ok();
  }
  ++st_->nodes_emitted;
  g.nodes.push_back(std::move(n));
  return Status::Ok();
}

const onnx::AttributeProto* MapContext::attr(const std::string& name) const {
  for (const auto& a : node_->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

Status MapContext::copy_attrs(Attrs* out, const std::vector<std::string>& skip) const {
  for (const auto& a : node_->attribute()) {
    // Opsets 1-5's memory-reuse hint: no meaning for the computation.
    bool skipped = a.name() == "consumed_inputs" && opset() < 6;
    for (const auto& s : skip) skipped |= s == a.name();
    if (skipped) continue;
    if (!a.ref_attr_name().empty())
      return unsupported("attribute '%s' refers to a function attribute; functions are not supported", a.name().c_str());
    switch (attr_kind(a)) {
      case onnx::AttributeProto::INT: out->set_int(a.name(), a.i()); break;
      case onnx::AttributeProto::FLOAT: out->set_float(a.name(), a.f()); break;
      case onnx::AttributeProto::STRING: out->set_string(a.name(), a.s()); break;
      case onnx::AttributeProto::INTS: out->set_ints(a.name(), {a.ints().begin(), a.ints().end()}); break;
      case onnx::AttributeProto::FLOATS: out->set_floats(a.name(), {a.floats().begin(), a.floats().end()}); break;
      default:
        return unsupported("attribute '%s' of type %s is not supported", a.name().c_str(), attr_type_name(attr_kind(a)));
    }
  }
  return Status::Ok();
}

Status MapContext::error(const char* fmt, ...) const {
  va_list ap;
  va_start(ap, fmt);
  std::string m = vformat(fmt, ap);
  va_end(ap);
  return Status(StatusCode::kInvalidModel, strfmt("node '%s' (%s): %s", name_.c_str(), op_type().c_str(), m.c_str()));
}

Status MapContext::unsupported(const char* fmt, ...) const {
  va_list ap;
  va_start(ap, fmt);
  std::string m = vformat(fmt, ap);
  va_end(ap);
  return Status(StatusCode::kUnimplemented, strfmt("node '%s' (%s): %s", name_.c_str(), op_type().c_str(), m.c_str()));
}

Status default_node(MapContext& ctx, OpId op, Node* n, const std::vector<std::string>& skip_attrs,
                    size_t max_outputs) {
  n->op = op;
  n->name = ctx.name();
  ORKNN_RETURN_IF_ERROR(ctx.copy_attrs(&n->attrs, skip_attrs));
  for (size_t i = 0; i < ctx.num_inputs(); ++i) n->inputs.push_back(ctx.input(i));
  while (!n->inputs.empty() && n->inputs.back() < 0) n->inputs.pop_back();  // trailing absent optionals
  size_t n_out = std::min(ctx.num_outputs(), max_outputs);
  while (n_out > 0 && ctx.node().output(static_cast<int>(n_out) - 1).empty()) --n_out;
  for (size_t i = 0; i < n_out; ++i) {
    int id;
    ORKNN_RETURN_IF_ERROR(ctx.output(i, &id));
    n->outputs.push_back(id);
  }
  return Status::Ok();
}

Status map_default(MapContext& ctx) {
  const OpDef* def = find_op(ctx.op_type());
  // Custom is the IR's op for non-default domains, not an ONNX op type.
  if (!def || def->id == OpId::Custom) {
    if (is_const_eval_op(ctx.op_type())) return map_const_eval(ctx);
    // The vendor's custom operators are renamed "cst..." nodes left in the default domain: say how
    // to declare one rather than only that it is unknown.
    if (ctx.op_type().rfind("cst", 0) == 0)
      return ctx.unsupported("op not supported by OpenRKNN; if it is a custom operator your application "
                             "implements (rknn_register_custom_ops), convert with --custom-op %s (YAML: "
                             "custom_ops: [%s]); see docs/custom_ops.md", ctx.op_type().c_str(),
                             ctx.op_type().c_str());
    return ctx.unsupported("op not supported by OpenRKNN yet; see docs/ops.md");
  }
  Node n;
  ORKNN_RETURN_IF_ERROR(default_node(ctx, def->id, &n));
  return ctx.emit(std::move(n));
}

}  // namespace orknn::onnx_import
