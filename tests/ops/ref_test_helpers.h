// Small helpers for the reference-kernel parameter tests (elementwise, binary, reduce, shape,
// data movement, gather, cast, generators): building attributes and inputs, naive index maths
// for independent expectations, and an idempotency check of infer.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/op.h"
#include "testutil/op_harness.h"

namespace orknn::test::reft {

#ifndef EXPECT_OK
#define EXPECT_OK(st) EXPECT_TRUE((st).ok()) << (st).message()
#endif
#ifndef ASSERT_OK
#define ASSERT_OK(st) ASSERT_TRUE((st).ok()) << (st).message()
#endif

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

// Runs the op's infer twice on the same node: the second run (on the normalised node, as the
// runtime's verifier does) must leave attributes, inputs and output shapes unchanged.
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
  const Node first = n;
  std::vector<Shape> shapes;
  for (int id : n.outputs) shapes.push_back(g.tensor(id).shape);
  ASSERT_OK(def->infer(g, n));
  EXPECT_EQ(n.inputs, first.inputs) << op_name(op);
  ASSERT_EQ(n.attrs.all().size(), first.attrs.all().size()) << op_name(op);
  for (const auto& [k, v] : first.attrs.all()) {
    ASSERT_TRUE(n.attrs.has(k)) << k;
    const AttrValue& w = n.attrs.all().at(k);
    EXPECT_EQ(static_cast<int>(w.kind), static_cast<int>(v.kind)) << k;
    EXPECT_EQ(w.i, v.i) << k;
    EXPECT_EQ(w.s, v.s) << k;
    EXPECT_EQ(w.ints, v.ints) << k;
    if (!(std::isnan(w.f) && std::isnan(v.f))) {
      EXPECT_EQ(w.f, v.f) << k;
    }
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) EXPECT_EQ(g.tensor(n.outputs[i]).shape, shapes[i]) << op_name(op);
}

inline bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

}  // namespace orknn::test::reft
