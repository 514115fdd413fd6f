// Reads an OpenRKNN model file (docs/format.md) into a Graph whose constants point into the
// caller's buffer. Every byte of the file is untrusted: the FlatBuffers verifier checks the
// metadata, this file checks what the verifier cannot know (versions, enums, buffer ranges,
// how much memory the parsed graph may take), and verify_graph checks the graph itself.
#include <climits>
#include <cstring>
#include <new>

#include "graph/verifier.h"
#include "model/model_generated.h"
#include "model/model_io.h"

namespace orknn {
namespace {

// docs/format.md. A newer format_version means the file uses something this loader would
// misread if it ignored it; additive fields do not bump it.
constexpr uint32_t kModelFormatVersion = 1;
constexpr uint64_t kModelAlignment = 64;
constexpr size_t kSizePrefixBytes = sizeof(flatbuffers::uoffset_t);
constexpr size_t kMinModelBytes = 12;  // size prefix, root offset, file identifier

constexpr char kVendorMessage[] =
    "this is a model compiled by Rockchip's toolkit; OpenRKNN runs models made by its own rknn_convert: "
    "convert the source ONNX model with rknn_convert";

// Bounds the memory the parsed graph takes. Written files store every string and vector once,
// and the Graph's objects cost a small multiple of their serialised size; a hostile file can point
// many tables at one large vector (FlatBuffers allows sharing), which this budget catches.
class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t bytes) : left_(bytes) {}
  bool take(uint64_t bytes) {
    if (bytes > left_) return false;
    left_ -= bytes;
    return true;
  }

 private:
  uint64_t left_;
};

std::string printable(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (p[i] >= 0x20 && p[i] < 0x7f) ? static_cast<char>(p[i]) : '?';
  return s;
}

std::string str_of(const flatbuffers::String* s) { return s ? std::string(s->data(), s->size()) : std::string(); }

template <typename T>
std::vector<T> vec_of(const flatbuffers::Vector<T>* v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

template <typename T>
uint64_t vec_bytes(const flatbuffers::Vector<T>* v) {
  return v ? static_cast<uint64_t>(v->size()) * sizeof(T) : 0;
}

// The FlatBuffers verifier checks a vector's length field (4-byte aligned) but not that 8-byte
// elements are 8-byte aligned, which every written file guarantees; reading them misaligned is UB.
template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* v) {
  return !v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->data()) % alignof(T) == 0;
}

uint64_t str_bytes(const flatbuffers::String* s) { return s ? s->size() : 0; }

Status budget_error() {
  return ORKNN_ERR(kInvalidModel,
                   "model metadata expands to far more memory than its size allows (corrupt or crafted file)");
}

Status parse_tensor(const fb::Tensor* ft, size_t index, const uint8_t* data, size_t size, uint64_t fb_size,
                    const std::shared_ptr<const void>& owner, MemoryBudget* budget, Tensor* t) {
  if (!ft) return ORKNN_ERR(kInvalidModel, "tensor %zu is missing", index);
  const fb::QuantInfo* q = ft->quant();
  uint64_t cost = sizeof(Tensor) + str_bytes(ft->name()) + vec_bytes(ft->shape()) +
                  (q ? vec_bytes(q->scale()) + vec_bytes(q->zero_point()) : 0);
  if (!budget->take(cost)) return budget_error();
  t->name = str_of(ft->name());
  if (!elements_aligned(ft->shape()))
    return ORKNN_ERR(kInvalidModel, "tensor %zu '%s': corrupt model: misaligned shape", index, t->name.c_str());
  t->shape = vec_of(ft->shape());
  if (!dtype_valid(ft->dtype()))
    return ORKNN_ERR(kInvalidModel, "tensor %zu '%s': invalid dtype %u", index, t->name.c_str(),
                     static_cast<unsigned>(ft->dtype()));
  t->dtype = static_cast<DType>(ft->dtype());
  if (q) {
    t->quant.scale = vec_of(q->scale());
    t->quant.zero_point = vec_of(q->zero_point());
    t->quant.axis = q->axis();
  }
  if (ft->has_data()) {
    uint64_t offset = ft->buffer_offset();
    uint64_t nbytes = ft->buffer_size();
    if (offset % kModelAlignment != 0)
      return ORKNN_ERR(kInvalidModel, "tensor %zu '%s': data offset %llu is not 64-byte aligned", index,
                       t->name.c_str(), static_cast<unsigned long long>(offset));
    if (offset < fb_size || offset > size || nbytes > size - offset)
      return ORKNN_ERR(kInvalidModel,
                       "tensor %zu '%s': data [%llu, +%llu) lies outside the data section [%llu, %zu) "
                       "(truncated or corrupt file)",
                       index, t->name.c_str(), static_cast<unsigned long long>(offset),
                       static_cast<unsigned long long>(nbytes), static_cast<unsigned long long>(fb_size), size);
    t->data.owner = owner;
    t->data.ptr = data + offset;
    t->data.size = static_cast<size_t>(nbytes);
  }
  return Status::Ok();
}

Status parse_attr_list(const flatbuffers::Vector<flatbuffers::Offset<fb::Attr>>* attrs, const std::string& where,
                       MemoryBudget* budget, Attrs* out) {
  if (attrs) {
    for (flatbuffers::uoffset_t k = 0; k < attrs->size(); ++k) {
      const fb::Attr* fa = attrs->Get(k);
      if (!fa || !fa->name())
        return ORKNN_ERR(kInvalidModel, "%s: attribute %u has no name", where.c_str(), k);
      std::string name = str_of(fa->name());
      if (out->has(name))
        return ORKNN_ERR(kInvalidModel, "%s: attribute '%s' appears twice", where.c_str(), name.c_str());
      uint8_t kind = fa->kind();
      if (kind > static_cast<uint8_t>(AttrValue::Kind::kFloats))
        return ORKNN_ERR(kInvalidModel, "%s: attribute '%s' has unknown kind %u", where.c_str(), name.c_str(), static_cast<unsigned>(kind));
      AttrValue v;
      v.kind = static_cast<AttrValue::Kind>(kind);
      // Only the field the kind names is read (the writer writes only that one).
      uint64_t attr_cost = sizeof(AttrValue) + 64 + name.size();
      switch (v.kind) {
        case AttrValue::Kind::kString: attr_cost += str_bytes(fa->s()); break;
        case AttrValue::Kind::kInts:
          if (!elements_aligned(fa->ints()))
            return ORKNN_ERR(kInvalidModel, "%s: attribute '%s': corrupt model: misaligned values", where.c_str(), name.c_str());
          attr_cost += vec_bytes(fa->ints());
          break;
        case AttrValue::Kind::kFloats: attr_cost += vec_bytes(fa->floats()); break;
        default: break;
      }
      if (!budget->take(attr_cost)) return budget_error();
      switch (v.kind) {
        case AttrValue::Kind::kInt: v.i = fa->i(); break;
        case AttrValue::Kind::kFloat: v.f = fa->f(); break;
        case AttrValue::Kind::kString: v.s = str_of(fa->s()); break;
        case AttrValue::Kind::kInts: v.ints = vec_of(fa->ints()); break;
        case AttrValue::Kind::kFloats: v.floats = vec_of(fa->floats()); break;
      }
      out->set(name, v);
    }
  }
  return Status::Ok();
}

Status parse_dims_list(const flatbuffers::Vector<flatbuffers::Offset<fb::Dims>>* list, size_t set, const char* what,
                       MemoryBudget* budget, std::vector<Shape>* out) {
  if (!list) return Status::Ok();
  if (!budget->take(uint64_t{list->size()} * sizeof(Shape))) return budget_error();
  out->reserve(list->size());
  for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
    const fb::Dims* d = list->Get(i);
    if (!d) return ORKNN_ERR(kInvalidModel, "corrupt model: dynamic shape set %zu: %s %u is missing", set, what, i);
    if (!elements_aligned(d->dims()))
      return ORKNN_ERR(kInvalidModel, "corrupt model: dynamic shape set %zu: %s %u: misaligned dims", set, what, i);
    if (!budget->take(vec_bytes(d->dims()))) return budget_error();
    out->push_back(vec_of(d->dims()));
  }
  return Status::Ok();
}

// Model.dynamic_shapes -> DynamicShapes; verify_dynamic_shapes checks the content afterwards.
Status parse_dynamic_shapes(const fb::DynamicShapes* fd, MemoryBudget* budget, DynamicShapes* out) {
  out->sets.clear();
  if (!fd || !fd->sets()) return Status::Ok();
  const auto* sets = fd->sets();
  if (sets->size() > kMaxShapeSets)
    return ORKNN_ERR(kInvalidModel, "corrupt model: %u dynamic shape sets, more than the maximum of %zu", sets->size(),
                     kMaxShapeSets);
  if (!budget->take(uint64_t{sets->size()} * sizeof(ShapeSetVariant))) return budget_error();
  out->sets.resize(sets->size());
  for (flatbuffers::uoffset_t s = 0; s < sets->size(); ++s) {
    const fb::ShapeSet* fs = sets->Get(s);
    if (!fs) return ORKNN_ERR(kInvalidModel, "corrupt model: dynamic shape set %u is missing", s);
    ShapeSetVariant& v = out->sets[s];
    ORKNN_RETURN_IF_ERROR(parse_dims_list(fs->shapes(), s, "input shape", budget, &v.input_shapes));
    ORKNN_RETURN_IF_ERROR(parse_dims_list(fs->tensor_shapes(), s, "tensor shape", budget, &v.tensor_shapes));
    if (const auto* nodes = fs->node_attrs()) {
      for (flatbuffers::uoffset_t k = 0; k < nodes->size(); ++k) {
        const fb::NodeAttrs* fn = nodes->Get(k);
        if (!fn) return ORKNN_ERR(kInvalidModel, "corrupt model: dynamic shape set %u: node attributes %u missing", s, k);
        if (!budget->take(sizeof(std::pair<int, Attrs>))) return budget_error();
        Attrs attrs;
        ORKNN_RETURN_IF_ERROR(parse_attr_list(fn->attrs(), strfmt("dynamic shape set %u, node %d", s, fn->node()),
                                              budget, &attrs));
        v.node_attrs.emplace_back(fn->node(), std::move(attrs));
      }
    }
  }
  return Status::Ok();
}

Status parse_node(const fb::Node* fn, size_t index, MemoryBudget* budget, Node* n) {
  if (!fn) return ORKNN_ERR(kInvalidModel, "node %zu is missing", index);
  uint64_t cost = sizeof(Node) + str_bytes(fn->name()) + vec_bytes(fn->inputs()) + vec_bytes(fn->outputs());
  if (!budget->take(cost)) return budget_error();
  n->name = str_of(fn->name());
  const OpDef* def = find_op(static_cast<OpId>(fn->op()));
  if (!def) {
    std::string op = fn->op_name() ? str_of(fn->op_name()) : std::string("?");
    return ORKNN_ERR(kInvalidModel,
                     "node %zu '%s': op '%s' (id %u) is not supported by this version of OpenRKNN (the model was "
                     "made by a newer rknn_convert?)",
                     index, n->name.c_str(), op.c_str(), static_cast<unsigned>(fn->op()));
  }
  n->op = def->id;
  n->inputs = vec_of(fn->inputs());
  n->outputs = vec_of(fn->outputs());
  return parse_attr_list(fn->attrs(), strfmt("node %zu '%s'", index, n->name.c_str()), budget, &n->attrs);
}

Status load_model_impl(const std::shared_ptr<const void>& owner, const uint8_t* data, size_t size, Graph* out,
                       DynamicShapes* dyn_out) {
  if (!out) return ORKNN_ERR(kInvalidParam, "load_model: output graph is null");
  if (!data) return ORKNN_ERR(kInvalidParam, "load_model: model data is null");
  if (reinterpret_cast<uintptr_t>(data) % kModelAlignment != 0)
    return ORKNN_ERR(kInvalidParam, "load_model: model data at %p is not 64-byte aligned",
                     static_cast<const void*>(data));
  if (size >= 4 && std::memcmp(data, "RKNN", 4) == 0) return ORKNN_ERR(kInvalidModel, "%s", kVendorMessage);
  if (size < kMinModelBytes)
    return ORKNN_ERR(kInvalidModel, "not an OpenRKNN model: %zu bytes is too small", size);
  if (!fb::SizePrefixedModelBufferHasIdentifier(data))
    return ORKNN_ERR(kInvalidModel, "not an OpenRKNN model (file identifier '%s' at bytes 8..11, expected '%s')",
                     printable(data + 8, 4).c_str(), fb::ModelIdentifier());

  const uint64_t fb_size = kSizePrefixBytes + flatbuffers::ReadScalar<flatbuffers::uoffset_t>(data);
  if (fb_size > size)
    return ORKNN_ERR(kInvalidModel, "truncated model: its metadata is %llu bytes but the file has only %zu",
                     static_cast<unsigned long long>(fb_size), size);
  if (fb_size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return ORKNN_ERR(kInvalidModel, "corrupt model: metadata size %llu exceeds the FlatBuffers limit",
                     static_cast<unsigned long long>(fb_size));

  flatbuffers::Verifier::Options opts;
  opts.max_depth = 16;  // the schema nests tables at most 5 deep (Model/DynamicShapes/ShapeSet/NodeAttrs/Attr)
  // Every table of a written file occupies at least 4 bytes of its own; more tables than that
  // means offsets that share tables, which would only multiply the verifier's work.
  opts.max_tables = static_cast<flatbuffers::uoffset_t>(fb_size / 4 + 1);
  opts.check_alignment = true;
  flatbuffers::Verifier verifier(data, static_cast<size_t>(fb_size), opts);
  if (!fb::VerifySizePrefixedModelBuffer(verifier))
    return ORKNN_ERR(kInvalidModel, "corrupt model: the metadata fails FlatBuffers verification");

  const fb::Model* m = fb::GetSizePrefixedModel(data);
  if (m->format_version() == 0) return ORKNN_ERR(kInvalidModel, "corrupt model: no format version");
  if (m->format_version() > kModelFormatVersion)
    return ORKNN_ERR(kInvalidModel,
                     "model format version %u is newer than this version of OpenRKNN supports (%u): update "
                     "OpenRKNN or convert the model with a matching rknn_convert",
                     m->format_version(), kModelFormatVersion);
  if (m->float_precision() > static_cast<uint8_t>(FloatPrecision::kFp32))
    return ORKNN_ERR(kInvalidModel, "corrupt model: unknown float precision %u",
                     static_cast<unsigned>(m->float_precision()));

  MemoryBudget budget(16 * fb_size + (uint64_t{16} << 20));
  Graph g;
  g.precision = static_cast<FloatPrecision>(m->float_precision());
  if (!budget.take(str_bytes(m->platform()) + str_bytes(m->custom_string()) + str_bytes(m->conversion_settings())))
    return budget_error();
  g.platform = str_of(m->platform());
  g.custom_string = str_of(m->custom_string());
  g.conversion_settings = str_of(m->conversion_settings());

  if (const auto* tensors = m->tensors()) {
    if (tensors->size() > static_cast<flatbuffers::uoffset_t>(INT_MAX))
      return ORKNN_ERR(kInvalidModel, "corrupt model: %u tensors", tensors->size());
    if (!budget.take(uint64_t{tensors->size()} * sizeof(Tensor))) return budget_error();
    g.tensors.resize(tensors->size());
    for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i)
      ORKNN_RETURN_IF_ERROR(parse_tensor(tensors->Get(i), i, data, size, fb_size, owner, &budget, &g.tensors[i]));
  }
  if (const auto* nodes = m->nodes()) {
    if (!budget.take(uint64_t{nodes->size()} * sizeof(Node))) return budget_error();
    g.nodes.resize(nodes->size());
    for (flatbuffers::uoffset_t i = 0; i < nodes->size(); ++i)
      ORKNN_RETURN_IF_ERROR(parse_node(nodes->Get(i), i, &budget, &g.nodes[i]));
  }
  if (const auto* inputs = m->inputs()) {
    for (flatbuffers::uoffset_t i = 0; i < inputs->size(); ++i) {
      const fb::IoTensor* fi = inputs->Get(i);
      if (!fi) return ORKNN_ERR(kInvalidModel, "corrupt model: graph input %u is missing", i);
      if (!budget.take(sizeof(GraphInput) + vec_bytes(fi->mean()) + vec_bytes(fi->std()))) return budget_error();
      GraphInput in;
      in.tensor = fi->tensor();
      in.mean = vec_of(fi->mean());
      in.std = vec_of(fi->std());
      g.inputs.push_back(std::move(in));
    }
  }
  if (!budget.take(vec_bytes(m->outputs()))) return budget_error();
  g.outputs = vec_of(m->outputs());
  DynamicShapes dyn;
  ORKNN_RETURN_IF_ERROR(parse_dynamic_shapes(m->dynamic_shapes(), &budget, &dyn));

  ORKNN_RETURN_IF_ERROR(verify_graph(g));
  ORKNN_RETURN_IF_ERROR(verify_dynamic_shapes(g, dyn));
  *out = std::move(g);
  if (dyn_out) *dyn_out = std::move(dyn);
  return Status::Ok();
}

}  // namespace

Status load_model(std::shared_ptr<const void> owner, const uint8_t* data, size_t size, Graph* out) {
  return load_model(std::move(owner), data, size, out, nullptr);
}

Status load_model(std::shared_ptr<const void> owner, const uint8_t* data, size_t size, Graph* out,
                  DynamicShapes* dyn) {
  try {
    return load_model_impl(owner, data, size, out, dyn);
  } catch (const std::bad_alloc&) {
    return ORKNN_ERR(kNoMemory, "out of memory while loading the model");
  }
}

}  // namespace orknn
