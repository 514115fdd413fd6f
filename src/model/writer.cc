// Writes a graph as an OpenRKNN model file (docs/format.md): a size-prefixed FlatBuffer, then
// the constants' bytes, each at a 64-byte aligned file offset.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "graph/verifier.h"
#include "model/model_generated.h"
#include "model/model_io.h"
#include "common/version.h"

namespace orknn {
namespace {

// docs/format.md: format version 1; constants at 64-byte aligned file offsets.
constexpr uint32_t kModelFormatVersion = 1;
constexpr uint64_t kModelAlignment = 64;

uint64_t align_up(uint64_t v) { return (v + kModelAlignment - 1) / kModelAlignment * kModelAlignment; }

flatbuffers::Offset<fb::Attr> build_attr(flatbuffers::FlatBufferBuilder& fbb, const std::string& name,
                                         const AttrValue& a) {
  auto name_off = fbb.CreateString(name);
  flatbuffers::Offset<flatbuffers::String> s_off = 0;
  flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints_off = 0;
  flatbuffers::Offset<flatbuffers::Vector<float>> floats_off = 0;
  // Only the field the kind names is written; the loader reads only that one.
  switch (a.kind) {
    case AttrValue::Kind::kString: s_off = fbb.CreateString(a.s); break;
    case AttrValue::Kind::kInts: ints_off = fbb.CreateVector(a.ints); break;
    case AttrValue::Kind::kFloats: floats_off = fbb.CreateVector(a.floats); break;
    default: break;
  }
  int64_t i = a.kind == AttrValue::Kind::kInt ? a.i : 0;
  float f = a.kind == AttrValue::Kind::kFloat ? a.f : 0.f;
  return fb::CreateAttr(fbb, name_off, static_cast<uint8_t>(a.kind), i, f, s_off, ints_off, floats_off);
}

// Builds the FlatBuffer with constant offsets data_base + rel_offset[i]. Every scalar is written
// even when it equals its default (ForceDefaults), so the FlatBuffer's size does not depend on
// data_base and a second build with the final data_base has the same size.
flatbuffers::Offset<fb::Dims> build_dims(flatbuffers::FlatBufferBuilder& fbb, const Shape& s) {
  return fb::CreateDims(fbb, fbb.CreateVector(s));
}

flatbuffers::Offset<fb::DynamicShapes> build_dynamic_shapes(flatbuffers::FlatBufferBuilder& fbb,
                                                            const DynamicShapes& dyn) {
  std::vector<flatbuffers::Offset<fb::ShapeSet>> sets;
  for (const ShapeSetVariant& v : dyn.sets) {
    std::vector<flatbuffers::Offset<fb::Dims>> inputs, tensors;
    for (const Shape& s : v.input_shapes) inputs.push_back(build_dims(fbb, s));
    for (const Shape& s : v.tensor_shapes) tensors.push_back(build_dims(fbb, s));
    std::vector<flatbuffers::Offset<fb::NodeAttrs>> nodes;
    for (const auto& [node, attrs] : v.node_attrs) {
      std::vector<flatbuffers::Offset<fb::Attr>> list;
      for (const auto& [name, value] : attrs.all()) list.push_back(build_attr(fbb, name, value));
      nodes.push_back(fb::CreateNodeAttrs(fbb, node, fbb.CreateVector(list)));
    }
    sets.push_back(fb::CreateShapeSet(fbb, fbb.CreateVector(inputs), fbb.CreateVector(tensors), fbb.CreateVector(nodes)));
  }
  return fb::CreateDynamicShapes(fbb, fbb.CreateVector(sets));
}

void build_flatbuffer(const Graph& g, const DynamicShapes& dyn, uint64_t data_base,
                      const std::vector<uint64_t>& rel_offset, flatbuffers::FlatBufferBuilder* fbb_ptr) {
  flatbuffers::FlatBufferBuilder& fbb = *fbb_ptr;
  fbb.Clear();
  fbb.ForceDefaults(true);

  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  tensors.reserve(g.tensors.size());
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    auto name = fbb.CreateString(t.name);
    auto shape = fbb.CreateVector(t.shape);
    flatbuffers::Offset<fb::QuantInfo> quant = 0;
    if (!t.quant.scale.empty() || !t.quant.zero_point.empty() || t.quant.axis != -1)
      quant = fb::CreateQuantInfo(fbb, fbb.CreateVector(t.quant.scale), fbb.CreateVector(t.quant.zero_point),
                                  t.quant.axis);
    bool has_data = t.is_const();
    uint64_t offset = has_data ? data_base + rel_offset[i] : 0;
    uint64_t size = has_data ? t.data.size : 0;
    tensors.push_back(fb::CreateTensor(fbb, name, shape, static_cast<uint8_t>(t.dtype), quant, offset, size,
                                       has_data));
  }
  auto tensors_off = fbb.CreateVector(tensors);

  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  nodes.reserve(g.nodes.size());
  for (const Node& n : g.nodes) {
    auto name = fbb.CreateString(n.name);
    auto op_name_off = fbb.CreateString(op_name(n.op));
    auto inputs = fbb.CreateVector(n.inputs);
    auto outputs = fbb.CreateVector(n.outputs);
    std::vector<flatbuffers::Offset<fb::Attr>> attrs;
    attrs.reserve(n.attrs.all().size());
    for (const auto& [attr_name, value] : n.attrs.all()) attrs.push_back(build_attr(fbb, attr_name, value));
    auto attrs_off = fbb.CreateVector(attrs);
    nodes.push_back(fb::CreateNode(fbb, name, static_cast<uint16_t>(n.op), op_name_off, inputs, outputs, attrs_off));
  }
  auto nodes_off = fbb.CreateVector(nodes);

  std::vector<flatbuffers::Offset<fb::IoTensor>> inputs;
  inputs.reserve(g.inputs.size());
  for (const GraphInput& in : g.inputs)
    inputs.push_back(fb::CreateIoTensor(fbb, in.tensor, fbb.CreateVector(in.mean), fbb.CreateVector(in.std)));
  auto inputs_off = fbb.CreateVector(inputs);
  auto outputs_off = fbb.CreateVector(g.outputs);

  flatbuffers::Offset<fb::DynamicShapes> dyn_off = 0;
  if (!dyn.empty()) dyn_off = build_dynamic_shapes(fbb, dyn);

  std::string producer = std::string("OpenRKNN ") + kOpenRknnVersion;
  auto model = fb::CreateModel(fbb, kModelFormatVersion, fbb.CreateString(producer), fbb.CreateString(g.platform),
                               fbb.CreateString(g.custom_string), static_cast<uint8_t>(g.precision), tensors_off,
                               nodes_off, inputs_off, outputs_off, fbb.CreateString(g.conversion_settings),
                               dyn_off);
  fb::FinishSizePrefixedModelBuffer(fbb, model);
}

}  // namespace

Status write_model(const Graph& g, std::vector<uint8_t>* out) { return write_model(g, DynamicShapes(), out); }

Status write_model(const Graph& g, const DynamicShapes& dyn, std::vector<uint8_t>* out) {
  if (!out) return ORKNN_ERR(kInvalidParam, "write_model: output is null");
  // Never write a file the loader would refuse.
  Status st = verify_graph(g);
  if (!st.ok()) return Status(st.code(), "write_model: the graph is invalid: " + st.message());
  st = verify_dynamic_shapes(g, dyn);
  if (!st.ok()) return Status(st.code(), "write_model: the dynamic shape sets are invalid: " + st.message());

  // Constants' offsets relative to the data section, which itself starts 64-byte aligned.
  std::vector<uint64_t> rel_offset(g.tensors.size(), 0);
  uint64_t data_size = 0;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    if (!t.is_const()) continue;
    data_size = align_up(data_size);
    rel_offset[i] = data_size;
    data_size += t.data.size;
  }

  flatbuffers::FlatBufferBuilder fbb(64 * 1024);
  uint64_t data_base = 0;
  bool settled = false;
  for (int pass = 0; pass < 4 && !settled; ++pass) {
    build_flatbuffer(g, dyn, data_base, rel_offset, &fbb);
    uint64_t needed = align_up(fbb.GetSize());
    settled = needed == data_base;
    data_base = needed;
  }
  if (!settled) return ORKNN_ERR(kFail, "write_model: the metadata size did not settle");
  // A size prefix spelling the vendor magic would need 1.3 GB of metadata; refuse rather than
  // write a file that loads as a vendor model.
  if (std::memcmp(fbb.GetBufferPointer(), "RKNN", 4) == 0)
    return ORKNN_ERR(kFail, "write_model: the model's metadata is too large (%u bytes)", fbb.GetSize());

  try {
    out->assign(static_cast<size_t>(data_base + data_size), 0);
  } catch (const std::bad_alloc&) {
    return ORKNN_ERR(kNoMemory, "write_model: cannot allocate %llu bytes",
                     static_cast<unsigned long long>(data_base + data_size));
  }
  std::memcpy(out->data(), fbb.GetBufferPointer(), fbb.GetSize());
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    if (t.is_const() && t.data.size)
      std::memcpy(out->data() + data_base + rel_offset[i], t.data.ptr, t.data.size);
  }
  return Status::Ok();
}

Status write_model_file(const Graph& g, const std::string& path) {
  return write_model_file(g, DynamicShapes(), path);
}

Status write_model_file(const Graph& g, const DynamicShapes& dyn, const std::string& path) {
  std::vector<uint8_t> bytes;
  ORKNN_RETURN_IF_ERROR(write_model(g, dyn, &bytes));
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return ORKNN_ERR(kFail, "cannot open '%s' for writing: %s", path.c_str(), std::strerror(errno));
  size_t written = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), f);
  int write_errno = errno;
  bool closed = std::fclose(f) == 0;
  if (written != bytes.size() || !closed)
    return ORKNN_ERR(kFail, "cannot write '%s': %s", path.c_str(), std::strerror(write_errno ? write_errno : errno));
  return Status::Ok();
}

}  // namespace orknn
