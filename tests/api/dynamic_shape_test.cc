// Dynamic input shapes end to end through librknnrt.so (docs/api-contract.md §1.4, §4.4): a model converted
// with three shape sets (converter -> writer -> loader -> runtime), checked per set against the
// same network converted statically at that shape (bit-identical) and against a naive expectation
// (dynamic_shape_model.h); set switching, the queries, zero copy, error paths, corrupt files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "api/dynamic_shape_model.h"
#include "converter/cli_test_util.h"
#include "converter/convert.h"
#include "graph/verifier.h"
#include "model/model_io.h"
#include "models/model_test_util.h"
#include "rknn_api.h"

namespace {

using api_test::Ctx;
using orknn::ConvertOptions;
using orknn::DynamicShapes;
using orknn::Graph;
using orknn::Shape;
using orknn::Status;

// The three shape sets (H, W); set 2 is the largest.
const int64_t kSets[3][2] = {{4, 4}, {2, 6}, {6, 8}};

std::vector<uint8_t> dynamic_model_bytes(DynamicShapes* dyn_out = nullptr) {
  const std::string onnx = dyn_test::make_onnx();
  ConvertOptions o;
  for (const auto& s : kSets) o.dynamic_shapes["x"].push_back({1, 2, s[0], s[1]});
  Graph g;
  DynamicShapes dyn;
  Status st = orknn::convert_onnx_bytes(onnx.data(), onnx.size(), o, &g, nullptr, &dyn);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(dyn.sets.size(), 3u);
  std::vector<uint8_t> bytes;
  st = orknn::write_model(g, dyn, &bytes);
  EXPECT_TRUE(st.ok()) << st.message();
  if (dyn_out) *dyn_out = dyn;
  return bytes;
}

std::vector<uint8_t> static_model_bytes(int64_t h, int64_t w) {
  const std::string onnx = dyn_test::make_onnx();
  ConvertOptions o;
  o.input_shapes["x"] = {1, 2, h, w};
  Graph g;
  Status st = orknn::convert_onnx_bytes(onnx.data(), onnx.size(), o, &g);
  EXPECT_TRUE(st.ok()) << st.message();
  return api_test::model_bytes(g);
}

void init(Ctx& c, std::vector<uint8_t>& bytes) {
  ASSERT_EQ(rknn_init(&c.ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr), RKNN_SUCC);
}

rknn_tensor_attr query_attr(rknn_context ctx, rknn_query_cmd cmd, uint32_t index) {
  rknn_tensor_attr a;
  std::memset(&a, 0, sizeof(a));
  a.index = index;
  EXPECT_EQ(rknn_query(ctx, cmd, &a, sizeof(a)), RKNN_SUCC) << "cmd " << cmd;
  return a;
}

// Sets the input shape [1,2,h,w] as a client does: the INPUT_ATTR copy with NHWC dims changed.
int set_shape(rknn_context ctx, int64_t h, int64_t w) {
  rknn_tensor_attr a = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
  a.dims[0] = 1; a.dims[1] = static_cast<uint32_t>(h); a.dims[2] = static_cast<uint32_t>(w); a.dims[3] = 2;
  return rknn_set_input_shapes(ctx, 1, &a);
}

// Runs x (float32 NCHW) and returns the float output.
std::vector<float> run(rknn_context ctx, const std::vector<float>& x) {
  rknn_input in;
  std::memset(&in, 0, sizeof(in));
  in.index = 0;
  in.buf = const_cast<float*>(x.data());
  in.size = static_cast<uint32_t>(x.size() * 4);
  in.type = RKNN_TENSOR_FLOAT32;
  in.fmt = RKNN_TENSOR_NCHW;
  EXPECT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
  EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
  rknn_output out;
  std::memset(&out, 0, sizeof(out));
  out.want_float = 1;
  EXPECT_EQ(rknn_outputs_get(ctx, 1, &out, nullptr), RKNN_SUCC);
  std::vector<float> y;
  if (out.buf) y.assign(static_cast<float*>(out.buf), static_cast<float*>(out.buf) + out.size / 4);
  rknn_outputs_release(ctx, 1, &out);
  return y;
}

TEST(DynamicShape, ConverterRecordsSetsAndAttributeOverrides) {
  DynamicShapes dyn;
  dynamic_model_bytes(&dyn);
  ASSERT_EQ(dyn.sets.size(), 3u);
  const std::string onnx = dyn_test::make_onnx();
  ConvertOptions o;
  for (const auto& s : kSets) o.dynamic_shapes["x"].push_back({1, 2, s[0], s[1]});
  Graph g;
  ASSERT_TRUE(orknn::convert_onnx_bytes(onnx.data(), onnx.size(), o, &g, nullptr, &dyn).ok());
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(dyn.sets[s].input_shapes, (std::vector<Shape>{{1, 2, kSets[s][0], kSets[s][1]}}));
    if (s == 0) continue;
    // The folded Reshape target [1, 2, 4*H*W] differs per set.
    bool reshape_found = false;
    for (const auto& [node, attrs] : dyn.sets[s].node_attrs) {
      const orknn::Node& n = g.nodes[static_cast<size_t>(node)];
      if (n.op != orknn::OpId::Reshape) continue;
      reshape_found = true;
      EXPECT_EQ(attrs.get_ints("shape"), (std::vector<int64_t>{1, 2, 4 * kSets[s][0] * kSets[s][1]}));
    }
    EXPECT_TRUE(reshape_found) << "set " << s;
  }
  EXPECT_TRUE(dyn.sets[0].node_attrs.empty());
  EXPECT_EQ(g.tensor(g.outputs[0]).shape, (Shape{1, 2, 64}));
}

TEST(DynamicShape, EverySetMatchesStaticConversionAndNaiveExpectation) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  Ctx c;
  init(c, bytes);
  for (size_t s = 0; s < 3; ++s) {
    const int64_t h = kSets[s][0], w = kSets[s][1];
    ASSERT_EQ(set_shape(c.ctx, h, w), RKNN_SUCC);
    const std::vector<float> x = dyn_test::make_input(h, w, static_cast<int>(s));
    const std::vector<float> y = run(c.ctx, x);

    std::vector<uint8_t> sbytes = static_model_bytes(h, w);
    Ctx sc;
    init(sc, sbytes);
    const std::vector<float> ys = run(sc.ctx, x);
    ASSERT_EQ(y.size(), ys.size());
    EXPECT_EQ(std::memcmp(y.data(), ys.data(), y.size() * 4), 0) << "set " << s << " differs from the static model";

    const std::vector<float> want = dyn_test::expected_output(x, h, w);
    ASSERT_EQ(y.size(), want.size());
    for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], want[i]) << "set " << s << " element " << i;
  }
}

TEST(DynamicShape, SwitchingBackAndForth) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  Ctx c;
  init(c, bytes);
  // Before any set_input_shapes the active set is set 0.
  rknn_tensor_attr cur = query_attr(c.ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0);
  EXPECT_EQ(cur.dims[1], 4u);
  EXPECT_EQ(cur.dims[2], 4u);
  {
    const std::vector<float> x = dyn_test::make_input(4, 4, 9);
    EXPECT_EQ(run(c.ctx, x), dyn_test::expected_output(x, 4, 4));
  }
  const size_t order[] = {2, 0, 1, 2, 1, 0, 2};
  int seed = 0;
  for (size_t s : order) {
    const int64_t h = kSets[s][0], w = kSets[s][1];
    ASSERT_EQ(set_shape(c.ctx, h, w), RKNN_SUCC);
    cur = query_attr(c.ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0);
    EXPECT_EQ(cur.fmt, RKNN_TENSOR_NHWC);
    EXPECT_EQ(cur.dims[1], static_cast<uint32_t>(h));
    EXPECT_EQ(cur.dims[2], static_cast<uint32_t>(w));
    EXPECT_EQ(cur.w_stride, static_cast<uint32_t>(w));
    EXPECT_EQ(cur.n_elems, static_cast<uint32_t>(2 * h * w));
    rknn_tensor_attr out = query_attr(c.ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, 0);
    EXPECT_EQ(out.n_dims, 3u);
    EXPECT_EQ(out.dims[2], static_cast<uint32_t>(4 * h * w));
    EXPECT_EQ(out.size, static_cast<uint32_t>(2 * 4 * h * w * 2));  // fp16
    const std::vector<float> x = dyn_test::make_input(h, w, ++seed);
    EXPECT_EQ(run(c.ctx, x), dyn_test::expected_output(x, h, w)) << "set " << s;
  }
  // A run after a switch needs inputs for the new shapes.
  ASSERT_EQ(set_shape(c.ctx, 2, 6), RKNN_SUCC);
  EXPECT_NE(rknn_run(c.ctx, nullptr), RKNN_SUCC);
}

TEST(DynamicShape, QueriesDescribeSetsAndLargestSizes) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  Ctx c;
  init(c, bytes);
  rknn_input_range r;
  std::memset(&r, 0, sizeof(r));
  r.index = 0;
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &r, sizeof(r)), RKNN_SUCC);
  EXPECT_EQ(r.shape_number, 3u);
  EXPECT_EQ(r.fmt, RKNN_TENSOR_NHWC);
  EXPECT_EQ(r.n_dims, 4u);
  EXPECT_STREQ(r.name, "x");
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(r.dyn_range[s][0], 1u);
    EXPECT_EQ(r.dyn_range[s][1], static_cast<uint32_t>(kSets[s][0]));
    EXPECT_EQ(r.dyn_range[s][2], static_cast<uint32_t>(kSets[s][1]));
    EXPECT_EQ(r.dyn_range[s][3], 2u);
  }
  r.index = 1;
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &r, sizeof(r)), RKNN_ERR_PARAM_INVALID);

  // INPUT_ATTR/OUTPUT_ATTR: set 0's dims, sizes covering the largest set (6x8), also after a switch.
  for (int pass = 0; pass < 2; ++pass) {
    rknn_tensor_attr in = query_attr(c.ctx, RKNN_QUERY_INPUT_ATTR, 0);
    EXPECT_EQ(in.dims[1], 4u);
    EXPECT_EQ(in.n_elems, 6u * 8 * 2);
    EXPECT_EQ(in.size, 6u * 8 * 2 * 2);
    EXPECT_EQ(in.size_with_stride, 6u * 8 * 2 * 2);
    rknn_tensor_attr out = query_attr(c.ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
    EXPECT_EQ(out.dims[2], 4u * 4 * 4);
    EXPECT_EQ(out.n_elems, 2u * 4 * 6 * 8);
    EXPECT_EQ(out.size, 2u * 4 * 6 * 8 * 2);
    EXPECT_GE(out.size_with_stride, out.size);
    rknn_tensor_attr nin = query_attr(c.ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
    EXPECT_EQ(nin.size_with_stride, 6u * 8 * 2 * 2);
    rknn_tensor_attr nout = query_attr(c.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
    EXPECT_EQ(nout.size, 2u * 4 * 6 * 8 * 2);
    ASSERT_EQ(set_shape(c.ctx, 2, 6), RKNN_SUCC);
  }
  rknn_tensor_attr ncur = query_attr(c.ctx, RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR, 0);
  EXPECT_EQ(ncur.dims[1], 2u);
  EXPECT_EQ(ncur.dims[2], 6u);
  rknn_tensor_attr ncout = query_attr(c.ctx, RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR, 0);
  EXPECT_EQ(ncout.size, 2u * 4 * 2 * 6 * 2);
}

TEST(DynamicShape, ZeroCopyWithBuffersFromInitialAttrs) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  Ctx c;
  init(c, bytes);
  rknn_tensor_attr in_attr = query_attr(c.ctx, RKNN_QUERY_INPUT_ATTR, 0);
  rknn_tensor_attr out_attr = query_attr(c.ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  // Allocated once, from the initial attributes (the vendor's zero-copy dynamic-shape demo).
  // The input is fed as float32 NCHW: 2x the fp16 size_with_stride covers the largest set.
  rknn_tensor_mem* in_mem = rknn_create_mem(c.ctx, in_attr.size_with_stride * 2);
  rknn_tensor_mem* out_mem = rknn_create_mem(c.ctx, out_attr.size * 2);  // float32 output
  ASSERT_NE(in_mem, nullptr);
  ASSERT_NE(out_mem, nullptr);
  const size_t order[] = {1, 2, 0, 2};
  int seed = 20;
  for (size_t s : order) {
    const int64_t h = kSets[s][0], w = kSets[s][1];
    ASSERT_EQ(set_shape(c.ctx, h, w), RKNN_SUCC);
    rknn_tensor_attr cin = query_attr(c.ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0);
    rknn_tensor_attr cout = query_attr(c.ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, 0);
    cin.type = RKNN_TENSOR_FLOAT32;
    cin.fmt = RKNN_TENSOR_NCHW;
    cout.type = RKNN_TENSOR_FLOAT32;
    ASSERT_EQ(rknn_set_io_mem(c.ctx, in_mem, &cin), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(c.ctx, out_mem, &cout), RKNN_SUCC);
    const std::vector<float> x = dyn_test::make_input(h, w, ++seed);
    std::memcpy(in_mem->virt_addr, x.data(), x.size() * 4);
    ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
    const std::vector<float> want = dyn_test::expected_output(x, h, w);
    const float* y = static_cast<const float*>(out_mem->virt_addr);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(y[i], want[i]) << "set " << s << " element " << i;
  }
  // Bindings survive a switch when they still fit: no rebinding for the next shape.
  ASSERT_EQ(set_shape(c.ctx, 4, 4), RKNN_SUCC);
  const std::vector<float> x = dyn_test::make_input(4, 4, 77);
  std::memcpy(in_mem->virt_addr, x.data(), x.size() * 4);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  const std::vector<float> want = dyn_test::expected_output(x, 4, 4);
  EXPECT_EQ(std::memcmp(out_mem->virt_addr, want.data(), want.size() * 4), 0);
  rknn_destroy_mem(c.ctx, in_mem);
  rknn_destroy_mem(c.ctx, out_mem);
}

TEST(DynamicShape, SizeChecksUseTheActiveShape) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  Ctx c;
  init(c, bytes);
  ASSERT_EQ(set_shape(c.ctx, 2, 6), RKNN_SUCC);
  std::vector<float> x = dyn_test::make_input(2, 6, 1);
  rknn_input in;
  std::memset(&in, 0, sizeof(in));
  in.buf = x.data();
  in.size = static_cast<uint32_t>(x.size() * 4);  // 2x6: enough now ...
  in.type = RKNN_TENSOR_FLOAT32;
  in.fmt = RKNN_TENSOR_NCHW;
  EXPECT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(set_shape(c.ctx, 6, 8), RKNN_SUCC);
  EXPECT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_ERR_INPUT_INVALID);  // ... too small for 6x8
  std::vector<float> big = dyn_test::make_input(6, 8, 1);
  in.buf = big.data();
  in.size = static_cast<uint32_t>(big.size() * 4);
  EXPECT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  std::vector<float> y(2 * 4 * 2 * 6);  // room for the 2x6 output only
  rknn_output out;
  std::memset(&out, 0, sizeof(out));
  out.want_float = 1;
  out.is_prealloc = 1;
  out.buf = y.data();
  out.size = static_cast<uint32_t>(y.size() * 4);
  EXPECT_EQ(rknn_outputs_get(c.ctx, 1, &out, nullptr), RKNN_ERR_OUTPUT_INVALID);
}

TEST(DynamicShape, ErrorPaths) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  Ctx c;
  init(c, bytes);
  rknn_tensor_attr a = query_attr(c.ctx, RKNN_QUERY_INPUT_ATTR, 0);
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 1, nullptr), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 0, &a), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_attr two[2] = {a, a};
  two[1].index = 1;
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 2, two), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_set_input_shape(c.ctx, nullptr), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_attr bad = a;
  bad.dims[1] = 5;  // 5x4 is not a set
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 1, &bad), RKNN_ERR_INPUT_INVALID);
  bad = a;
  bad.n_dims = 3;
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 1, &bad), RKNN_ERR_INPUT_INVALID);
  bad = a;
  bad.fmt = RKNN_TENSOR_NC1HWC2;
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 1, &bad), RKNN_ERR_PARAM_INVALID);
  bad.fmt = static_cast<rknn_tensor_format>(77);
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 1, &bad), RKNN_ERR_PARAM_INVALID);
  bad = a;
  bad.index = 3;
  EXPECT_EQ(rknn_set_input_shape(c.ctx, &bad), RKNN_ERR_PARAM_INVALID);
  // A failed call leaves the active set as it was (set 0).
  rknn_tensor_attr cur = query_attr(c.ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0);
  EXPECT_EQ(cur.dims[1], 4u);
  // NCHW dims are accepted too; the deprecated one-input call selects the same set.
  rknn_tensor_attr nchw = a;
  nchw.fmt = RKNN_TENSOR_NCHW;
  nchw.dims[0] = 1; nchw.dims[1] = 2; nchw.dims[2] = 6; nchw.dims[3] = 8;
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 1, &nchw), RKNN_SUCC);
  EXPECT_EQ(query_attr(c.ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0).dims[1], 6u);
  rknn_tensor_attr one = a;
  one.dims[1] = 2; one.dims[2] = 6;
  EXPECT_EQ(rknn_set_input_shape(c.ctx, &one), RKNN_SUCC);
  EXPECT_EQ(query_attr(c.ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0).dims[2], 6u);
}

TEST(DynamicShape, StaticModel) {
  std::vector<uint8_t> bytes = static_model_bytes(4, 4);
  Ctx c;
  init(c, bytes);
  rknn_tensor_attr a = query_attr(c.ctx, RKNN_QUERY_INPUT_ATTR, 0);
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 1, &a), RKNN_SUCC);  // its own shape
  rknn_tensor_attr other = a;
  other.dims[1] = 6;
  EXPECT_EQ(rknn_set_input_shapes(c.ctx, 1, &other), RKNN_ERR_INPUT_INVALID);
  rknn_input_range r;
  std::memset(&r, 0, sizeof(r));
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &r, sizeof(r)), RKNN_SUCC);
  EXPECT_EQ(r.shape_number, 1u);
  EXPECT_EQ(r.dyn_range[0][1], 4u);
  EXPECT_EQ(r.dyn_range[0][3], 2u);
  rknn_tensor_attr cur = query_attr(c.ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, 0);
  rknn_tensor_attr out = query_attr(c.ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  EXPECT_EQ(std::memcmp(&cur, &out, sizeof(cur)), 0);
  const std::vector<float> x = dyn_test::make_input(4, 4, 3);
  EXPECT_EQ(run(c.ctx, x), dyn_test::expected_output(x, 4, 4));
}

TEST(DynamicShape, DupContextInheritsTheActiveSet) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  Ctx c;
  init(c, bytes);
  ASSERT_EQ(set_shape(c.ctx, 6, 8), RKNN_SUCC);
  Ctx d;
  ASSERT_EQ(rknn_dup_context(&c.ctx, &d.ctx), RKNN_SUCC);
  EXPECT_EQ(query_attr(d.ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0).dims[1], 6u);
  const std::vector<float> x = dyn_test::make_input(6, 8, 5);
  EXPECT_EQ(run(d.ctx, x), dyn_test::expected_output(x, 6, 8));
  ASSERT_EQ(set_shape(d.ctx, 2, 6), RKNN_SUCC);
  const std::vector<float> x2 = dyn_test::make_input(2, 6, 6);
  EXPECT_EQ(run(d.ctx, x2), dyn_test::expected_output(x2, 2, 6));
  EXPECT_EQ(run(c.ctx, x), dyn_test::expected_output(x, 6, 8));  // the original stays in its set
}

TEST(DynamicShape, StructurallyDifferentSetsAreRefused) {
  const std::string onnx = dyn_test::make_onnx(/*structure_varies=*/true);
  ConvertOptions o;
  for (const auto& s : kSets) o.dynamic_shapes["x"].push_back({1, 2, s[0], s[1]});
  Graph g;
  DynamicShapes dyn;
  Status st = orknn::convert_onnx_bytes(onnx.data(), onnx.size(), o, &g, nullptr, &dyn);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("differs in structure"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("Remedy"), std::string::npos) << st.message();
  // Without a DynamicShapes output a dynamic conversion is refused, not silently static.
  st = orknn::convert_onnx_bytes(dyn_test::make_onnx().data(), dyn_test::make_onnx().size(), o, &g);
  EXPECT_FALSE(st.ok());
}

TEST(DynamicShape, VerifierRejectsInconsistentSets) {
  DynamicShapes good;
  std::vector<uint8_t> bytes = dynamic_model_bytes(&good);
  // The stored graph, for verify_dynamic_shapes.
  std::shared_ptr<uint8_t> buf(static_cast<uint8_t*>(::operator new[](bytes.size(), std::align_val_t(64))),
                               [](uint8_t* q) { ::operator delete[](q, std::align_val_t(64)); });
  std::memcpy(buf.get(), bytes.data(), bytes.size());
  Graph g;
  DynamicShapes loaded;
  ASSERT_TRUE(orknn::load_model(buf, buf.get(), bytes.size(), &g, &loaded).ok());
  ASSERT_EQ(loaded.sets.size(), 3u);
  EXPECT_TRUE(orknn::verify_dynamic_shapes(g, loaded).ok());
  // The file round-trips every set exactly.
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(loaded.sets[s].input_shapes, good.sets[s].input_shapes);
    EXPECT_EQ(loaded.sets[s].tensor_shapes, good.sets[s].tensor_shapes);
    ASSERT_EQ(loaded.sets[s].node_attrs.size(), good.sets[s].node_attrs.size());
    for (size_t k = 0; k < good.sets[s].node_attrs.size(); ++k) {
      EXPECT_EQ(loaded.sets[s].node_attrs[k].first, good.sets[s].node_attrs[k].first);
      const auto& la = loaded.sets[s].node_attrs[k].second.all();
      const auto& ga = good.sets[s].node_attrs[k].second.all();
      ASSERT_EQ(la.size(), ga.size());
      for (const auto& [name, v] : ga) {
        ASSERT_TRUE(la.count(name)) << name;
        EXPECT_EQ(static_cast<int>(la.at(name).kind), static_cast<int>(v.kind)) << name;
        EXPECT_EQ(la.at(name).ints, v.ints) << name;
        EXPECT_EQ(la.at(name).floats, v.floats) << name;
        EXPECT_EQ(la.at(name).s, v.s) << name;
        EXPECT_EQ(la.at(name).i, v.i) << name;
      }
    }
  }
  const int x = g.inputs[0].tensor;
  auto expect_bad = [&](DynamicShapes d, const char* what) {
    Status st = orknn::verify_dynamic_shapes(g, d);
    EXPECT_FALSE(st.ok()) << what;
    EXPECT_EQ(st.code(), orknn::StatusCode::kInvalidModel) << what;
    std::vector<uint8_t> out;
    EXPECT_FALSE(orknn::write_model(g, d, &out).ok()) << what;  // the writer refuses it too
  };
  DynamicShapes d = loaded;
  d.sets[1].tensor_shapes.pop_back();
  expect_bad(d, "tensor count");
  d = loaded;
  d.sets[2].input_shapes.clear();
  expect_bad(d, "input count");
  d = loaded;
  d.sets[1].input_shapes[0] = {1, 2, 5, 5};
  expect_bad(d, "input shape != its tensor's");
  d = loaded;
  d.sets[1].tensor_shapes[static_cast<size_t>(x)] = {1, 2, 5, 5};
  d.sets[1].input_shapes[0] = {1, 2, 5, 5};
  expect_bad(d, "shapes that do not infer");
  d = loaded;
  d.sets[1].node_attrs[0].first = 1000;
  expect_bad(d, "node index");
  d = loaded;
  d.sets[1].node_attrs.clear();
  expect_bad(d, "missing attribute override (Reshape target of set 0)");
  d = loaded;
  d.sets[2] = d.sets[1];
  expect_bad(d, "duplicate set");
  d = loaded;
  d.sets[0].tensor_shapes[static_cast<size_t>(x)] = {1, 2, 6, 8};
  expect_bad(d, "set 0 differs from the stored graph");
  d = loaded;
  d.sets.resize(orknn::kMaxShapeSets + 1, loaded.sets[1]);
  expect_bad(d, "too many sets");
}

TEST(DynamicShape, CorruptDynamicSectionIsModelInvalid) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  // Patch set 2's input dims [1,2,6,8] (stored as int64) where they first appear: the input shape list.
  const int64_t pattern[4] = {1, 2, 6, 8};
  std::vector<uint8_t> bad = bytes;
  size_t hits = 0;
  for (size_t off = 0; off + sizeof(pattern) <= bad.size(); off += 8) {
    if (std::memcmp(bad.data() + off, pattern, sizeof(pattern)) != 0) continue;
    const int64_t nine = 9;
    std::memcpy(bad.data() + off + 24, &nine, 8);
    ++hits;
    break;
  }
  ASSERT_EQ(hits, 1u);
  Ctx c;
  EXPECT_EQ(rknn_init(&c.ctx, bad.data(), static_cast<uint32_t>(bad.size()), 0, nullptr), RKNN_ERR_MODEL_INVALID);
  // Truncating the metadata anywhere is refused as well (FlatBuffers verification).
  std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 3));
  Ctx c2;
  EXPECT_EQ(rknn_init(&c2.ctx, cut.data(), static_cast<uint32_t>(cut.size()), 0, nullptr), RKNN_ERR_MODEL_INVALID);
}

// A real model: PP-OCRv4 det with two shape sets, on the rendered text page of the model tests
// (ppocrv4_det.in.f32, 480x480, normalised; the 320x640 set gets its top 320 rows, repeated
// sideways). Each set's output equals the static conversion at that shape, bit for bit (both
// fp16), and after switching away and back each set gives its first output again, bit for bit.
// The page gives both sets a real text map, so these are not comparisons of all-background maps.
TEST(DynamicShape, PpOcrV4DetMatchesStaticConversionsAndSwitchesBack) {
  namespace mt = orknn::model_test;
  const std::string path = mt::models_dir() + "/ppocrv4_det.onnx", page_path = mt::models_dir() + "/ppocrv4_det.in.f32";
  ASSERT_TRUE(mt::file_exists(path)) << path << " is missing: run scripts/prepare_test_models.sh";
  std::vector<float> page;
  ASSERT_TRUE(mt::read_f32(page_path, &page)) << page_path << " is missing: run scripts/prepare_test_models.sh";
  ASSERT_EQ(page.size(), 3u * 480 * 480) << page_path;
  const Shape shapes[2] = {{1, 3, 480, 480}, {1, 3, 320, 640}};
  std::vector<float> inputs[2];
  for (size_t s = 0; s < 2; ++s) {
    const int64_t h = shapes[s][2], w = shapes[s][3];
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) inputs[s].push_back(page[static_cast<size_t>((c * 480 + y) * 480 + x % 480)]);
  }
  ConvertOptions o;
  o.dynamic_shapes[""] = {shapes[0], shapes[1]};
  Graph g;
  DynamicShapes dyn;
  Status st = orknn::convert_onnx(path, o, &g, nullptr, &dyn);
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(orknn::write_model(g, dyn, &bytes).ok());
  Ctx c;
  init(c, bytes);
  std::vector<float> first[2];
  // Set 0 is active after init: the order 1, 0, 1, 0 switches before every run.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t s : {size_t{1}, size_t{0}}) {
      const Shape& shape = shapes[s];
      rknn_tensor_attr a = query_attr(c.ctx, RKNN_QUERY_INPUT_ATTR, 0);
      a.dims[1] = static_cast<uint32_t>(shape[2]);
      a.dims[2] = static_cast<uint32_t>(shape[3]);
      ASSERT_EQ(rknn_set_input_shapes(c.ctx, 1, &a), RKNN_SUCC);
      const std::vector<float> y = run(c.ctx, inputs[s]);
      ASSERT_EQ(y.size(), static_cast<size_t>(shape[2] * shape[3]));
      if (pass == 1) {
        EXPECT_EQ(std::memcmp(y.data(), first[s].data(), y.size() * 4), 0) << "set " << s << " after switching back";
        continue;
      }
      first[s] = y;
      // PaddleOCR's DB threshold 0.3: the page's lines cover about a tenth of it.
      const size_t text = static_cast<size_t>(std::count_if(y.begin(), y.end(), [](float p) { return p > 0.3f; }));
      EXPECT_GT(text * 100, y.size()) << "set " << s << ": the model finds (almost) no text on the page";
      ConvertOptions so;
      so.input_shapes[""] = shape;
      Graph sg;
      st = orknn::convert_onnx(path, so, &sg);
      ASSERT_TRUE(st.ok()) << st.message();
      std::vector<uint8_t> sbytes = api_test::model_bytes(sg);
      Ctx sc;
      init(sc, sbytes);
      const std::vector<float> ys = run(sc.ctx, inputs[s]);
      ASSERT_EQ(y.size(), ys.size());
      EXPECT_EQ(std::memcmp(y.data(), ys.data(), y.size() * 4), 0) << "set " << s;
    }
  }
}

// INT8 with dynamic shapes: set 0 is calibrated (samples of set 0's shape), the other sets reuse
// its ranges. Set 0 equals the static INT8 conversion bit for bit; every set has the same
// quantization parameters and stays within a few quantization steps of the float expectation.
TEST(DynamicShape, Int8CalibratesOnSetZeroAndSharesParameters) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("orknn_dyn_int8_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string list;
  for (int k = 0; k < 4; ++k) {
    const fs::path p = dir / ("s" + std::to_string(k) + ".npy");
    orknn::test::write_npy_f32(p, {1, 2, 4, 4}, dyn_test::make_input(4, 4, 10 + k));
    list += p.string() + "\n";
  }
  {
    std::ofstream f(dir / "ds.txt");
    f << list;
  }
  const std::string onnx = dyn_test::make_onnx();
  ConvertOptions o;
  o.quant.enabled = true;
  o.quant.dataset = (dir / "ds.txt").string();
  for (const auto& s : kSets) o.dynamic_shapes["x"].push_back({1, 2, s[0], s[1]});
  Graph g;
  DynamicShapes dyn;
  Status st = orknn::convert_onnx_bytes(onnx.data(), onnx.size(), o, &g, nullptr, &dyn);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(dyn.sets.size(), 3u);
  int quantized = 0;
  for (const auto& t : g.tensors) quantized += !t.quant.empty();
  EXPECT_GT(quantized, 0);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(orknn::write_model(g, dyn, &bytes).ok());

  ConvertOptions so = o;
  so.dynamic_shapes.clear();
  so.input_shapes["x"] = {1, 2, 4, 4};
  Graph sg;
  st = orknn::convert_onnx_bytes(onnx.data(), onnx.size(), so, &sg);
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<uint8_t> sbytes = api_test::model_bytes(sg);

  Ctx c, sc;
  init(c, bytes);
  init(sc, sbytes);
  rknn_tensor_attr out0 = query_attr(c.ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  for (size_t s : {size_t{1}, size_t{0}, size_t{2}}) {
    const int64_t h = kSets[s][0], w = kSets[s][1];
    ASSERT_EQ(set_shape(c.ctx, h, w), RKNN_SUCC);
    rknn_tensor_attr out = query_attr(c.ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, 0);
    EXPECT_EQ(out.type, out0.type);
    EXPECT_EQ(out.zp, out0.zp);
    EXPECT_EQ(out.scale, out0.scale);
    const std::vector<float> x = dyn_test::make_input(h, w, static_cast<int>(s) + 3);
    const std::vector<float> y = run(c.ctx, x);
    const std::vector<float> want = dyn_test::expected_output(x, h, w);
    ASSERT_EQ(y.size(), want.size());
    const float step = out0.type == RKNN_TENSOR_INT8 ? out0.scale : 0.01f;
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 4 * step) << "set " << s << " element " << i;
    if (s == 0) {
      const std::vector<float> ys = run(sc.ctx, x);
      ASSERT_EQ(ys.size(), y.size());
      EXPECT_EQ(std::memcmp(y.data(), ys.data(), y.size() * 4), 0);
    }
  }
  fs::remove_all(dir);
}

// INTERNAL_ALLOC_OUTSIDE: MEM_SIZE covers the largest set, so one client block serves every set.
TEST(DynamicShape, ClientInternalMemoryCoversEverySet) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  std::vector<uint8_t> sbytes = static_model_bytes(6, 8);
  Ctx c, sc;
  ASSERT_EQ(rknn_init(&c.ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE,
                      nullptr), RKNN_SUCC);
  ASSERT_EQ(rknn_init(&sc.ctx, sbytes.data(), static_cast<uint32_t>(sbytes.size()), 0, nullptr), RKNN_SUCC);
  rknn_mem_size ms, sms;
  ASSERT_EQ(rknn_query(c.ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms)), RKNN_SUCC);
  ASSERT_EQ(rknn_query(sc.ctx, RKNN_QUERY_MEM_SIZE, &sms, sizeof(sms)), RKNN_SUCC);
  EXPECT_GE(ms.total_internal_size, sms.total_internal_size);  // the 6x8 set's arena fits
  // Switching before the memory arrives is allowed; running is not.
  ASSERT_EQ(set_shape(c.ctx, 2, 6), RKNN_SUCC);
  rknn_tensor_mem* mem = rknn_create_mem(c.ctx, ms.total_internal_size);
  ASSERT_NE(mem, nullptr);
  ASSERT_EQ(rknn_set_internal_mem(c.ctx, mem), RKNN_SUCC);
  int seed = 40;
  for (size_t s : {size_t{1}, size_t{2}, size_t{0}, size_t{1}}) {
    const int64_t h = kSets[s][0], w = kSets[s][1];
    ASSERT_EQ(set_shape(c.ctx, h, w), RKNN_SUCC);
    const std::vector<float> x = dyn_test::make_input(h, w, ++seed);
    EXPECT_EQ(run(c.ctx, x), dyn_test::expected_output(x, h, w)) << "set " << s;
  }
  EXPECT_EQ(rknn_destroy_mem(c.ctx, mem), RKNN_SUCC);  // no run after this
}

// ASYNC_MASK: outputs_get delivers the previous frame; a switch starts over (zeros first).
TEST(DynamicShape, AsyncModeAfterSwitch) {
  std::vector<uint8_t> bytes = dynamic_model_bytes();
  Ctx c;
  ASSERT_EQ(rknn_init(&c.ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), RKNN_FLAG_ASYNC_MASK, nullptr),
            RKNN_SUCC);
  ASSERT_EQ(set_shape(c.ctx, 6, 8), RKNN_SUCC);
  const std::vector<float> x = dyn_test::make_input(6, 8, 1);
  run(c.ctx, x);
  const std::vector<float> y = run(c.ctx, x);  // the first frame's outputs
  EXPECT_EQ(y, dyn_test::expected_output(x, 6, 8));
  ASSERT_EQ(set_shape(c.ctx, 2, 6), RKNN_SUCC);
  const std::vector<float> x2 = dyn_test::make_input(2, 6, 2);
  const std::vector<float> first = run(c.ctx, x2);
  EXPECT_EQ(first, std::vector<float>(2 * 4 * 2 * 6, 0.f));
  EXPECT_EQ(run(c.ctx, x2), dyn_test::expected_output(x2, 2, 6));
}

}  // namespace
