// Helpers shared by the op tests in tests/ops: building attributes, inputs and single-node graphs,
// naive index maths and activation formulas for independent expectations, tolerance checks, the
// error-message contract of infer (kInvalidModel naming the node), and an idempotency check.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops/op.h"
#include "testutil/op_harness.h"
#include "testutil/status_assert.h"

namespace orknn::test::reft {

// Fluent attribute builder: A().i("axis", 1).ints("perm", {1, 0}).
struct A {
  Attrs a;
  A& i(const std::string& k, int64_t v) {
    a.set_int(k, v);
    return *this;
  }
  A& f(const std::string& k, float v) {
    a.set_float(k, v);
    return *this;
  }
  A& s(const std::string& k, const std::string& v) {
    a.set_string(k, v);
    return *this;
  }
  A& ints(const std::string& k, const std::vector<int64_t>& v) {
    a.set_ints(k, v);
    return *this;
  }
  operator const Attrs&() const { return a; }  // NOLINT: implicit on purpose
};

inline TensorData f32(const Shape& s, const std::vector<float>& v, bool c = false) { return TensorData::f32(s, v, c); }
inline TensorData i64(const Shape& s, const std::vector<int64_t>& v, bool c = false) {
  return TensorData::i64(s, v, c);
}
inline TensorData i64c(const Shape& s, const std::vector<int64_t>& v) { return TensorData::i64(s, v, true); }
inline TensorData i32(const Shape& s, const std::vector<int32_t>& v, bool c = false) {
  return TensorData::of(s, v, DType::kI32, c);
}
inline TensorData u8(const Shape& s, const std::vector<uint8_t>& v, bool c = false) {
  return TensorData::of(s, v, DType::kU8, c);
}
inline TensorData boolean(const Shape& s, const std::vector<uint8_t>& v, bool c = false) {
  return TensorData::of(s, v, DType::kBool, c);
}

inline OpResult ref(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, int n_outputs = 1) {
  return run_op(op, attrs, inputs, n_outputs, "ref");
}

// Row-major coordinates of linear index i in shape s.
inline std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> c(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    c[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  return c;
}

// Row-major linear index of coordinates `c` in shape s.
inline int64_t ravel(const std::vector<int64_t>& c, const Shape& s) {
  int64_t r = 0;
  for (size_t d = 0; d < s.size(); ++d) r = r * s[d] + c[d];
  return r;
}

// Linear index in `in` of the element that numpy broadcasting maps to output coordinates `c`.
inline int64_t broadcast_index(const std::vector<int64_t>& c, const Shape& in) {
  const size_t lead = c.size() - in.size();
  int64_t idx = 0;
  for (size_t d = 0; d < in.size(); ++d) idx = idx * in[d] + (in[d] == 1 ? 0 : c[lead + d]);
  return idx;
}

inline std::vector<float> iota_f(size_t n, float start = 0.f, float step = 1.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

inline void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, double rel,
                            const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = rel * std::max(1.0, std::abs(want[i]));
    EXPECT_NEAR(got[i], want[i], tol) << what << " at " << i;
  }
}

// Counts the elements with |got - want| > tol * (1 + |want|) and reports the first of them.
inline void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol * (1.0 + std::fabs(want[i])))) {
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": first mismatch at " << first << " got " << got[first] << " want " << want[first];
}

// The activations Conv/ConvTranspose/Gemm/MatMul can fuse, written from the ONNX definitions
// independently of kernels/ref/activation.h. "" is the identity; "Silu" is Mul(x, Sigmoid(x)).
inline double act_ref(const std::string& act, double x, double alpha, double beta) {
  if (act == "Relu") return x < 0 ? 0 : x;
  if (act == "LeakyRelu") return x < 0 ? alpha * x : x;
  if (act == "Clip") return std::min(std::max(x, alpha), beta);
  if (act == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (act == "HardSigmoid") return std::max(0.0, std::min(1.0, alpha * x + beta));
  if (act == "HardSwish") return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
  if (act == "Silu") return x / (1.0 + std::exp(-x));  // x * Sigmoid(x)
  return x;
}

// A one-node graph for testing infer directly: node "node_under_test" with non-constant inputs
// "in<i>" of the given shapes/dtypes and `outputs` outputs "out<i>".
struct OneNode {
  Graph g;
  Node n;
};

inline OneNode make_node(OpId op, const std::vector<std::pair<Shape, DType>>& inputs, const Attrs& attrs,
                         int outputs = 1) {
  OneNode o;
  o.n.name = "node_under_test";
  o.n.op = op;
  o.n.attrs = attrs;
  for (size_t i = 0; i < inputs.size(); ++i)
    o.n.inputs.push_back(o.g.add_tensor("in" + std::to_string(i), inputs[i].first, inputs[i].second));
  for (int i = 0; i < outputs; ++i) o.n.outputs.push_back(o.g.add_tensor("out" + std::to_string(i), {}, DType::kF32));
  return o;
}

inline Status infer(OneNode& o) { return find_op(o.n.op)->infer(o.g, o.n); }

// The error contract of infer: kInvalidModel, naming the node, saying what is wrong (`fragment`).
inline void expect_invalid_model(const Status& s, const std::string& fragment,
                                 const std::string& node_name = "node_under_test") {
  EXPECT_FALSE(s.ok()) << "expected an error containing '" << fragment << "'";
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.message();
  EXPECT_NE(s.message().find(node_name), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

// infer of a make_node() node fails with expect_invalid_model(fragment).
inline void expect_infer_error(OpId op, const std::vector<std::pair<Shape, DType>>& inputs, const Attrs& attrs,
                               const std::string& fragment, int outputs = 1) {
  OneNode o = make_node(op, inputs, attrs, outputs);
  expect_invalid_model(infer(o), fragment);
}

// Runs infer once more on an already inferred node, as the runtime's verifier does: it must leave
// the attributes, the inputs and the output shapes unchanged.
inline void expect_reinfer_unchanged(Graph& g, Node& n) {
  const Node first = n;
  std::vector<Shape> shapes;
  for (int id : n.outputs) shapes.push_back(id >= 0 ? g.tensor(id).shape : Shape{});
  const OpDef* def = find_op(n.op);
  ASSERT_NE(def->infer, nullptr);
  ASSERT_OK(def->infer(g, n));
  EXPECT_EQ(n.inputs, first.inputs) << op_name(n.op);
  ASSERT_EQ(n.attrs.all().size(), first.attrs.all().size()) << op_name(n.op);
  for (const auto& [k, v] : first.attrs.all()) {
    ASSERT_TRUE(n.attrs.has(k)) << k;
    const AttrValue& w = n.attrs.all().at(k);
    EXPECT_EQ(static_cast<int>(w.kind), static_cast<int>(v.kind)) << k;
    EXPECT_EQ(w.i, v.i) << k;
    EXPECT_EQ(w.s, v.s) << k;
    EXPECT_EQ(w.ints, v.ints) << k;
    EXPECT_EQ(w.floats, v.floats) << k;
    if (!(std::isnan(w.f) && std::isnan(v.f))) {
      EXPECT_EQ(w.f, v.f) << k;
    }
  }
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) EXPECT_EQ(g.tensor(n.outputs[i]).shape, shapes[i]) << op_name(n.op);
}

// Builds a node from `inputs` (constants stay constants), runs infer, then
// expect_reinfer_unchanged.
inline void expect_infer_idempotent(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs,
                                    int n_outputs = 1) {
  Graph g;
  Node n;
  n.name = "idem";
  n.op = op;
  n.attrs = attrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorData& d = inputs[i];
    if (d.absent) {
      n.inputs.push_back(-1);
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    n.inputs.push_back(d.is_const ? g.add_const(name, d.shape, d.dtype, d.bytes.data(), d.bytes.size())
                                  : g.add_tensor(name, d.shape, d.dtype));
  }
  for (int i = 0; i < n_outputs; ++i) n.outputs.push_back(g.add_tensor("out" + std::to_string(i), {}, DType::kF32));
  const OpDef* def = find_op(op);
  ASSERT_NE(def->infer, nullptr);
  ASSERT_OK(def->infer(g, n));
  expect_reinfer_unchanged(g, n);
}

inline bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

}  // namespace orknn::test::reft
