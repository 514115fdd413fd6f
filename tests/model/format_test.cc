// The .rknn format (docs/format.md): writer/loader round trip, the byte layout of written files,
// and the loader's refusals (vendor models, foreign files, truncation, bad versions, bad buffers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "graph/verifier.h"
#include "model/model_generated.h"
#include "model/model_io.h"

namespace orknn {
namespace {

// A 64-byte aligned copy of `n` bytes, allocated to exactly that size so that ASan sees any read
// past the end.
struct AlignedBytes {
  std::shared_ptr<uint8_t> buf;
  size_t size = 0;
  AlignedBytes(const uint8_t* p, size_t n) : size(n) {
    size_t alloc = n ? n : 1;
    buf.reset(static_cast<uint8_t*>(::operator new[](alloc, std::align_val_t(64))),
              [](uint8_t* q) { ::operator delete[](q, std::align_val_t(64)); });
    if (n) std::memcpy(buf.get(), p, n);
  }
  explicit AlignedBytes(const std::vector<uint8_t>& v) : AlignedBytes(v.data(), v.size()) {}
};

Status load(const AlignedBytes& a, Graph* g) { return load_model(a.buf, a.buf.get(), a.size, g); }
Status load(const std::vector<uint8_t>& bytes, Graph* g) { return load(AlignedBytes(bytes), g); }

bool has_infer(OpId op) { return find_op(op) && find_op(op)->infer; }

template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

int add_const_bytes(Graph& g, const std::string& name, const Shape& s, DType t, const std::vector<uint8_t>& b) {
  return g.add_const(name, s, t, b.data(), b.size());
}

// A graph without nodes: every tensor kind the format carries, so that it round-trips whatever
// op infer functions exist.
Graph tensors_only_graph() {
  Graph g;
  g.platform = "rk3588";
  g.custom_string = "custom: \xe4\xb8\xad\xe6\x96\x87";
  g.precision = FloatPrecision::kFp32;
  int x = g.add_tensor("x", {1, 3, 4, 4}, DType::kU8);
  g.tensors[x].quant.scale = {0.25f};
  g.tensors[x].quant.zero_point = {3};
  g.inputs.push_back({x, {123.675f, 116.28f, 103.53f}, {58.395f, 57.12f, 57.375f}});
  int y = g.add_tensor("y", {2, 5}, DType::kF32);
  g.inputs.push_back({y, {}, {}});
  add_const_bytes(g, "w_f32", {2, 3}, DType::kF32, to_bytes<float>({1.5f, -2.f, 3.25f, 0.f, -0.f, 1e-30f}));
  int q = add_const_bytes(g, "w_i8", {4, 1}, DType::kI8, to_bytes<int8_t>({-128, -1, 0, 127}));
  g.tensors[q].quant.scale = {0.5f, 0.25f, 0.125f, 1.f};
  g.tensors[q].quant.zero_point = {0, 0, 0, 0};
  g.tensors[q].quant.axis = 0;
  int u = add_const_bytes(g, "u8", {3}, DType::kU8, to_bytes<uint8_t>({0, 128, 255}));
  g.tensors[u].quant.scale = {0.0078125f};
  g.tensors[u].quant.zero_point = {128};
  add_const_bytes(g, "f16", {5}, DType::kF16, to_bytes<uint16_t>({0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000}));
  add_const_bytes(g, "i32", {2}, DType::kI32, to_bytes<int32_t>({INT32_MIN, 7}));
  add_const_bytes(g, "i64", {3}, DType::kI64, to_bytes<int64_t>({INT64_MAX, -5, 0}));
  add_const_bytes(g, "flags", {7}, DType::kBool, to_bytes<uint8_t>({1, 0, 1, 1, 0, 0, 1}));
  add_const_bytes(g, "scalar", {}, DType::kI16, to_bytes<int16_t>({-300}));
  add_const_bytes(g, "empty", {0, 3}, DType::kF32, {});
  g.outputs = {g.find_tensor("w_f32"), y, g.find_tensor("scalar")};
  return g;
}

void expect_same_graph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.platform, b.platform);
  EXPECT_EQ(a.custom_string, b.custom_string);
  EXPECT_EQ(a.precision, b.precision);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor& ta = a.tensors[i];
    const Tensor& tb = b.tensors[i];
    SCOPED_TRACE("tensor " + ta.name);
    EXPECT_EQ(ta.name, tb.name);
    EXPECT_EQ(ta.shape, tb.shape);
    EXPECT_EQ(ta.dtype, tb.dtype);
    EXPECT_EQ(ta.quant.scale, tb.quant.scale);
    EXPECT_EQ(ta.quant.zero_point, tb.quant.zero_point);
    EXPECT_EQ(ta.quant.axis, tb.quant.axis);
    ASSERT_EQ(ta.is_const(), tb.is_const());
    if (ta.is_const()) {
      ASSERT_EQ(ta.data.size, tb.data.size);
      if (ta.data.size) {
        EXPECT_EQ(0, std::memcmp(ta.data.ptr, tb.data.ptr, ta.data.size));
      }
    }
  }
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node& na = a.nodes[i];
    const Node& nb = b.nodes[i];
    SCOPED_TRACE("node " + na.name);
    EXPECT_EQ(na.name, nb.name);
    EXPECT_EQ(na.op, nb.op);
    EXPECT_EQ(na.inputs, nb.inputs);
    EXPECT_EQ(na.outputs, nb.outputs);
    ASSERT_EQ(na.attrs.all().size(), nb.attrs.all().size());
    for (const auto& [name, va] : na.attrs.all()) {
      SCOPED_TRACE("attr " + name);
      ASSERT_TRUE(nb.attrs.has(name));
      const AttrValue& vb = nb.attrs.all().at(name);
      EXPECT_EQ(va.kind, vb.kind);
      switch (va.kind) {
        case AttrValue::Kind::kInt: EXPECT_EQ(va.i, vb.i); break;
        case AttrValue::Kind::kFloat:
          EXPECT_TRUE(va.f == vb.f || (std::isnan(va.f) && std::isnan(vb.f)));
          break;
        case AttrValue::Kind::kString: EXPECT_EQ(va.s, vb.s); break;
        case AttrValue::Kind::kInts: EXPECT_EQ(va.ints, vb.ints); break;
        case AttrValue::Kind::kFloats: EXPECT_EQ(va.floats, vb.floats); break;
      }
    }
  }
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    EXPECT_EQ(a.inputs[i].tensor, b.inputs[i].tensor);
    EXPECT_EQ(a.inputs[i].mean, b.inputs[i].mean);
    EXPECT_EQ(a.inputs[i].std, b.inputs[i].std);
  }
  EXPECT_EQ(a.outputs, b.outputs);
}

uint32_t read_u32(const std::vector<uint8_t>& b, size_t off) {
  return static_cast<uint32_t>(b[off]) | static_cast<uint32_t>(b[off + 1]) << 8 |
         static_cast<uint32_t>(b[off + 2]) << 16 | static_cast<uint32_t>(b[off + 3]) << 24;
}

// Checks the written bytes against docs/format.md, reading them with the generated FlatBuffers
// accessors (not with the loader).
void expect_layout(const Graph& g, const std::vector<uint8_t>& bytes) {
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(0, std::memcmp(bytes.data() + 8, "ORKN", 4));
  const uint64_t fb_end = 4 + uint64_t{read_u32(bytes, 0)};
  ASSERT_LE(fb_end, bytes.size());
  const uint64_t data_start = (fb_end + 63) / 64 * 64;
  const fb::Model* m = fb::GetSizePrefixedModel(bytes.data());
  EXPECT_EQ(m->format_version(), 1u);
  ASSERT_NE(m->producer(), nullptr);
  EXPECT_EQ(m->producer()->str().rfind("OpenRKNN ", 0), 0u) << m->producer()->str();
  ASSERT_NE(m->tensors(), nullptr);
  ASSERT_EQ(m->tensors()->size(), g.tensors.size());
  uint64_t first_offset = UINT64_MAX;
  uint64_t data_end = data_start;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const fb::Tensor* ft = m->tensors()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const Tensor& t = g.tensors[i];
    SCOPED_TRACE("tensor " + t.name);
    EXPECT_EQ(ft->has_data(), t.is_const());
    if (!t.is_const()) continue;
    EXPECT_EQ(ft->buffer_offset() % 64, 0u);
    EXPECT_GE(ft->buffer_offset(), data_start);
    ASSERT_EQ(ft->buffer_size(), t.data.size);
    ASSERT_LE(ft->buffer_offset() + ft->buffer_size(), bytes.size());
    if (t.data.size) {
      EXPECT_EQ(0, std::memcmp(bytes.data() + ft->buffer_offset(), t.data.ptr, t.data.size));
    }
    first_offset = std::min<uint64_t>(first_offset, ft->buffer_offset());
    data_end = std::max<uint64_t>(data_end, ft->buffer_offset() + ft->buffer_size());
  }
  // The data section starts at the first aligned offset after the metadata and the file ends
  // with the last buffer.
  EXPECT_EQ(first_offset, data_start);
  EXPECT_EQ(data_end, bytes.size());
}

TEST(ModelFormat, RoundTripTensorsOnly) {
  Graph g = tensors_only_graph();
  ASSERT_TRUE(verify_graph(g).ok()) << verify_graph(g).message();
  std::vector<uint8_t> bytes;
  Status st = write_model(g, &bytes);
  ASSERT_TRUE(st.ok()) << st.message();
  expect_layout(g, bytes);

  AlignedBytes file(bytes);
  Graph loaded;
  st = load(file, &loaded);
  ASSERT_TRUE(st.ok()) << st.message();
  expect_same_graph(g, loaded);

  // Zero copy: constants point into the caller's buffer, 64-byte aligned, and share its owner.
  const fb::Model* m = fb::GetSizePrefixedModel(bytes.data());
  for (size_t i = 0; i < loaded.tensors.size(); ++i) {
    const Tensor& t = loaded.tensors[i];
    if (!t.is_const()) continue;
    EXPECT_EQ(t.data.ptr, file.buf.get() + m->tensors()->Get(static_cast<flatbuffers::uoffset_t>(i))->buffer_offset());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data.ptr) % 64, 0u);
    EXPECT_EQ(t.data.owner.get(), file.buf.get());
  }
  // Independent expectation of one value: float32 1.5 is what the first constant holds.
  EXPECT_EQ(loaded.tensor(loaded.find_tensor("w_f32")).const_ptr<float>()[0], 1.5f);
  EXPECT_EQ(loaded.tensor(loaded.find_tensor("i64")).const_ptr<int64_t>()[0], INT64_MAX);
}

TEST(ModelFormat, WriteIsDeterministicAndRewritesIdentically) {
  Graph g = tensors_only_graph();
  std::vector<uint8_t> a, b, c;
  ASSERT_TRUE(write_model(g, &a).ok());
  ASSERT_TRUE(write_model(g, &b).ok());
  EXPECT_EQ(a, b);
  Graph loaded;
  ASSERT_TRUE(load(a, &loaded).ok());
  ASSERT_TRUE(write_model(loaded, &c).ok());
  EXPECT_EQ(a, c);
}

// A graph with Conv/Relu/Add and an Identity carrying attributes of every kind. Needs those ops'
// infer functions (written concurrently); the graph is normalised by running them, as the
// converter does, before it is written.
TEST(ModelFormat, RoundTripWithNodesAndAllAttrKinds) {
  for (OpId op : {OpId::Conv, OpId::Relu, OpId::Add, OpId::Identity})
    if (!has_infer(op)) GTEST_SKIP() << op_name(op) << " has no infer function yet";
  Graph g;
  g.platform = "rk3566";
  int x = g.add_tensor("x", {1, 3, 4, 4}, DType::kF32);
  g.inputs.push_back({x, {0.5f}, {2.f}});
  std::vector<float> wv(2 * 3 * 3 * 3);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.01f * static_cast<float>(i) - 0.2f;
  int w = add_const_bytes(g, "w", {2, 3, 3, 3}, DType::kF32, to_bytes(wv));
  int b = add_const_bytes(g, "b", {2}, DType::kF32, to_bytes<float>({0.5f, -0.5f}));
  int k = add_const_bytes(g, "k", {1, 2, 1, 1}, DType::kF32, to_bytes<float>({1.f, 2.f}));
  int c = g.add_tensor("c", {}, DType::kF32);
  int r = g.add_tensor("r", {}, DType::kF32);
  int y = g.add_tensor("y", {}, DType::kF32);
  int z = g.add_tensor("z", {}, DType::kF32);
  Node conv;
  conv.name = "conv";
  conv.op = OpId::Conv;
  conv.inputs = {x, w, b};
  conv.outputs = {c};
  conv.attrs.set_ints("kernel_shape", {3, 3});
  conv.attrs.set_ints("pads", {1, 1, 1, 1});
  conv.attrs.set_ints("strides", {1, 1});
  conv.attrs.set_ints("dilations", {1, 1});
  conv.attrs.set_int("group", 1);
  Node relu;
  relu.name = "relu";
  relu.op = OpId::Relu;
  relu.inputs = {c};
  relu.outputs = {r};
  Node add;
  add.name = "add";
  add.op = OpId::Add;
  add.inputs = {r, k};
  add.outputs = {y};
  Node id;
  id.name = "identity_with_attrs";
  id.op = OpId::Identity;
  id.inputs = {x};
  id.outputs = {z};
  id.attrs.set_int("an_int", -(int64_t{1} << 40));
  id.attrs.set_float("a_float", -2.75f);
  id.attrs.set_string("a_string", std::string("with\0nul", 8));
  id.attrs.set_ints("some_ints", {INT64_MIN, -1, 0, INT64_MAX});
  id.attrs.set_floats("some_floats", {0.5f, -1.25f, INFINITY});
  id.attrs.set_ints("empty_ints", {});
  g.nodes = {conv, relu, add, id};
  g.outputs = {y, z};
  for (Node& n : g.nodes) {
    Status st = find_op(n.op)->infer(g, n);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  // Independent expectation: a 3x3 "same" convolution keeps 4x4.
  EXPECT_EQ(g.tensor(y).shape, (Shape{1, 2, 4, 4}));
  ASSERT_EQ(g.nodes[3].attrs.all().size(), 6u) << "Identity's infer dropped or added attributes";

  std::vector<uint8_t> bytes;
  Status st = write_model(g, &bytes);
  ASSERT_TRUE(st.ok()) << st.message();
  expect_layout(g, bytes);
  Graph loaded;
  st = load(bytes, &loaded);
  ASSERT_TRUE(st.ok()) << st.message();
  expect_same_graph(g, loaded);
  EXPECT_EQ(loaded.nodes[3].attrs.get_string("a_string", ""), std::string("with\0nul", 8));
}

TEST(ModelFormat, VendorModelIsRefusedWithAdvice) {
  std::vector<uint8_t> vendor(256, 0);
  std::memcpy(vendor.data(), "RKNN", 4);
  Graph g;
  Status st = load(vendor, &g);
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_NE(st.message().find("Rockchip"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("rknn_convert"), std::string::npos) << st.message();
  // Even a vendor file shorter than our minimum gets the advice.
  st = load(std::vector<uint8_t>{'R', 'K', 'N', 'N', 0, 0}, &g);
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_NE(st.message().find("rknn_convert"), std::string::npos) << st.message();
}

TEST(ModelFormat, ForeignFileIsNotAnOpenRknnModel) {
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(write_model(tensors_only_graph(), &bytes).ok());
  bytes[9] = 'X';
  Graph g;
  Status st = load(bytes, &g);
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_NE(st.message().find("not an OpenRKNN model"), std::string::npos) << st.message();
  // The first bytes of an ONNX ModelProto (ir_version field).
  std::vector<uint8_t> onnx = {0x08, 0x07, 0x12, 0x07, 'p', 'y', 't', 'o', 'r', 'c', 'h', 0x1a, 0x03};
  st = load(onnx, &g);
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_NE(st.message().find("not an OpenRKNN model"), std::string::npos) << st.message();
}

TEST(ModelFormat, BadArguments) {
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(write_model(tensors_only_graph(), &bytes).ok());
  AlignedBytes file(bytes);
  Graph g;
  EXPECT_EQ(load_model(nullptr, nullptr, 100, &g).code(), StatusCode::kInvalidParam);
  EXPECT_EQ(load_model(file.buf, file.buf.get(), file.size, nullptr).code(), StatusCode::kInvalidParam);
  // Misaligned: the same bytes one byte further on.
  std::vector<uint8_t> shifted(bytes.size() + 64);
  AlignedBytes padded(shifted);
  std::memcpy(padded.buf.get() + 1, bytes.data(), bytes.size());
  EXPECT_EQ(load_model(padded.buf, padded.buf.get() + 1, bytes.size(), &g).code(), StatusCode::kInvalidParam);
  for (size_t n : {0, 1, 7, 8, 11}) EXPECT_EQ(load_model(file.buf, file.buf.get(), n, &g).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(write_model(tensors_only_graph(), nullptr).code(), StatusCode::kInvalidParam);
}

TEST(ModelFormat, EveryTruncationFailsCleanly) {
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(write_model(tensors_only_graph(), &bytes).ok());
  for (size_t n = 0; n < bytes.size(); ++n) {
    AlignedBytes cut(bytes.data(), n);
    Graph g;
    Status st = load(cut, &g);
    ASSERT_FALSE(st.ok()) << "a file cut to " << n << " of " << bytes.size() << " bytes loaded";
    ASSERT_EQ(st.code(), StatusCode::kInvalidModel) << n << ": " << st.message();
    ASSERT_FALSE(st.message().empty());
  }
  Graph g;
  EXPECT_TRUE(load(bytes, &g).ok());
}

TEST(ModelFormat, FailedLoadLeavesOutputUntouched) {
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(write_model(tensors_only_graph(), &bytes).ok());
  Graph g;
  g.platform = "sentinel";
  ASSERT_FALSE(load(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1), &g).ok());
  EXPECT_EQ(g.platform, "sentinel");
}

TEST(ModelFormat, WriteModelRefusesInvalidGraph) {
  Graph g = tensors_only_graph();
  g.outputs.push_back(1000);
  std::vector<uint8_t> bytes;
  Status st = write_model(g, &bytes);
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_NE(st.message().find("1000"), std::string::npos) << st.message();
}

TEST(ModelFormat, WriteModelFile) {
  Graph g = tensors_only_graph();
  std::string path = ::testing::TempDir() + "orknn_format_test.rknn";
  ASSERT_TRUE(write_model_file(g, path).ok());
  FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::vector<uint8_t> bytes;
  uint8_t buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  std::fclose(f);
  std::remove(path.c_str());
  std::vector<uint8_t> expected;
  ASSERT_TRUE(write_model(g, &expected).ok());
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(write_model_file(g, "/nonexistent-dir/x.rknn").code(), StatusCode::kFail);
}

// ---- Files built by hand with the generated FlatBuffers API, independent of the writer ----

struct HandTensor {
  std::string name;
  Shape shape;
  uint8_t dtype = 0;
  bool has_data = false;
  uint64_t offset = 0;
  uint64_t size = 0;
  flatbuffers::Offset<flatbuffers::Vector<int64_t>> shared_shape = 0;  // instead of `shape`
};

struct HandNode {
  std::string name;
  uint16_t op = 0;
  std::string op_name;
  std::vector<int> inputs, outputs;
};

// The data section starts at kHandData; the metadata must fit below it.
constexpr uint64_t kHandData = 1 << 16;

std::vector<uint8_t> hand_file(uint32_t version, const std::vector<HandTensor>& tensors,
                               const std::vector<HandNode>& nodes, const std::vector<int>& inputs,
                               const std::vector<int>& outputs, uint64_t data_bytes,
                               flatbuffers::FlatBufferBuilder* shared_fbb = nullptr) {
  flatbuffers::FlatBufferBuilder local;
  flatbuffers::FlatBufferBuilder& fbb = shared_fbb ? *shared_fbb : local;
  std::vector<flatbuffers::Offset<fb::Tensor>> ft;
  for (const HandTensor& t : tensors) {
    auto shape = t.shared_shape.o ? t.shared_shape : fbb.CreateVector(t.shape);
    ft.push_back(fb::CreateTensor(fbb, fbb.CreateString(t.name), shape, t.dtype, 0, t.offset, t.size, t.has_data));
  }
  std::vector<flatbuffers::Offset<fb::Node>> fn;
  for (const HandNode& n : nodes)
    fn.push_back(fb::CreateNodeDirect(fbb, n.name.c_str(), n.op, n.op_name.c_str(), &n.inputs, &n.outputs));
  std::vector<flatbuffers::Offset<fb::IoTensor>> fi;
  for (int i : inputs) fi.push_back(fb::CreateIoTensor(fbb, i));
  auto model = fb::CreateModelDirect(fbb, version, "hand", "rk3588", "", 1, &ft, &fn, &fi, &outputs);
  fb::FinishSizePrefixedModelBuffer(fbb, model);
  // Files whose metadata outgrows kHandData have no constants (offsets would be wrong).
  size_t data_start = std::max<size_t>(kHandData, (fbb.GetSize() + 63) / 64 * 64);
  std::vector<uint8_t> bytes(data_start + data_bytes, 0);
  std::memcpy(bytes.data(), fbb.GetBufferPointer(), fbb.GetSize());
  return bytes;
}

TEST(ModelFormat, HandBuiltFileLoads) {
  // One constant output of 2 float32 at the start of the data section.
  std::vector<uint8_t> bytes = hand_file(1, {{"c", {2}, 0, true, kHandData, 8}}, {}, {}, {0}, 8);
  float v[2] = {3.f, -4.f};
  std::memcpy(bytes.data() + kHandData, v, 8);
  Graph g;
  Status st = load(bytes, &g);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(g.tensors.size(), 1u);
  EXPECT_EQ(g.tensors[0].const_ptr<float>()[1], -4.f);
  EXPECT_EQ(g.precision, FloatPrecision::kFp32);
}

TEST(ModelFormat, NewerFormatVersionIsRefused) {
  std::vector<uint8_t> bytes = hand_file(2, {{"c", {2}, 0, true, kHandData, 8}}, {}, {}, {0}, 8);
  Graph g;
  Status st = load(bytes, &g);
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_NE(st.message().find("newer"), std::string::npos) << st.message();
  bytes = hand_file(0, {{"c", {2}, 0, true, kHandData, 8}}, {}, {}, {0}, 8);
  EXPECT_EQ(load(bytes, &g).code(), StatusCode::kInvalidModel);
}

TEST(ModelFormat, UnknownOpIsNamedFromTheFile) {
  std::vector<uint8_t> bytes =
      hand_file(1, {{"x", {2}, 0}, {"y", {2}, 0}}, {{"fancy_node", 60000, "FancyOp", {0}, {1}}}, {0}, {1}, 0);
  Graph g;
  Status st = load(bytes, &g);
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_NE(st.message().find("FancyOp"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("fancy_node"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("60000"), std::string::npos) << st.message();
}

TEST(ModelFormat, BadConstantBuffersAreRefused) {
  struct Case {
    const char* what;
    uint64_t offset, size, data_bytes;
    uint8_t dtype;
  };
  const Case cases[] = {
      {"misaligned offset", kHandData + 4, 8, 64, 0},
      {"past the end", kHandData, 16, 8, 0},
      {"offset past the end", kHandData + 64, 0, 8, 0},
      {"inside the metadata", 0, 8, 8, 0},
      {"size overflows", kHandData, UINT64_MAX - kHandData + 1, 8, 0},
      {"wrong size for the shape", kHandData, 12, 64, 0},
      {"invalid dtype", kHandData, 8, 64, 77},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> bytes = hand_file(1, {{"c", {2}, c.dtype, true, c.offset, c.size}}, {}, {}, {0}, c.data_bytes);
    Graph g;
    Status st = load(bytes, &g);
    EXPECT_EQ(st.code(), StatusCode::kInvalidModel) << c.what;
    EXPECT_NE(st.message().find("'c'"), std::string::npos) << c.what << ": " << st.message();
  }
}

TEST(ModelFormat, SharedVectorsCannotBlowUpMemory) {
  // 20000 tensors all pointing at one 8192-dim shape vector: 64 KiB of metadata that would
  // expand to 1.3 GB of shapes. The loader must refuse it instead of allocating.
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int64_t> dims(8192, 1);
  auto shared = fbb.CreateVector(dims);
  std::vector<HandTensor> tensors(20000);
  for (HandTensor& t : tensors) t.shared_shape = shared;
  std::vector<uint8_t> bytes = hand_file(1, tensors, {}, {0}, {0}, 0, &fbb);
  Graph g;
  Status st = load(bytes, &g);
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_NE(st.message().find("memory"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace orknn
