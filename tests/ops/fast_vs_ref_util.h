// Helpers of the fast-vs-reference tests (fast_vs_ref_test.cc, conv_onednn_test.cc): the float
// contract (docs/kernels.md "Tolerance"), the fused activations as the converter writes them, and
// the Conv cases' attributes and inputs.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "ops/op.h"
#include "testutil/op_harness.h"

namespace orknn::fast_vs_ref {

using test::OpResult;
using test::TensorData;

inline constexpr float kRelTol = 1e-4f;

// The reference side (infer + ref kernel) is written separately; until it links, skip.
inline bool reference_available(OpId op) {
  const OpDef* d = find_op(op);
  return d && d->infer && find_ref_kernel(op);
}

#define REQUIRE_REFERENCE(op)                                                                  \
  do {                                                                                         \
    if (!reference_available(op)) GTEST_SKIP() << "no infer/reference kernel for " << op_name(op); \
  } while (0)

inline std::vector<float> as_floats(const OpResult& r) { return r.outputs.at(0).as<float>(); }

inline float max_abs(const std::vector<float>& v) {
  float m = 0.f;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Runs the case with the reference and with `fast` (1 and 2 threads) and checks the contract; with
// `blocked`, also on the activations the runtime would keep blocked for the node (run_op_blocked).
inline void expect_fast_matches_ref(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs,
                                    const std::string& fast, const std::string& what, bool blocked = false) {
  SCOPED_TRACE(what);
  OpResult ref = test::run_op(op, attrs, inputs, 1, "ref");
  ASSERT_TRUE(ref.status.ok()) << ref.status.message();
  ASSERT_EQ(ref.kernel_name, "ref");
  const std::vector<float> want = as_floats(ref);
  for (float v : want) ASSERT_TRUE(std::isfinite(v)) << "reference produced a non-finite value";
  const float tol = kRelTol * std::max(1.f, max_abs(want));
  for (int threads : {1, 2}) {
    OpResult got = test::run_op(op, attrs, inputs, 1, fast, threads);
    ASSERT_TRUE(got.status.ok()) << "threads=" << threads << ": " << got.status.message();
    ASSERT_EQ(got.kernel_name, fast);
    ASSERT_EQ(got.outputs.at(0).shape, ref.outputs.at(0).shape);
    const std::vector<float> have = as_floats(got);
    const float diff = test::max_abs_diff(have, want);
    EXPECT_LE(diff, tol) << "threads=" << threads << " max|ref|=" << max_abs(want);
    // Error relative to the magnitude, in the test XML (--gtest_output=xml) for docs/kernels.md.
    char rel[32];
    std::snprintf(rel, sizeof rel, "%.3g", diff / (tol / kRelTol));
    ::testing::Test::RecordProperty("rel_err_t" + std::to_string(threads), rel);
    if (!blocked) continue;
    int n_blocked = 0;
    OpResult b = test::run_op_blocked(op, attrs, inputs, fast, threads, &n_blocked);
    ASSERT_TRUE(b.status.ok()) << "blocked, threads=" << threads << ": " << b.status.message();
    EXPECT_LE(test::max_abs_diff(as_floats(b), want), tol) << "blocked, threads=" << threads;
    // Input and output both blocked where they are 4-D (the callers that ask keep float blocked
    // in NHWC, which takes every channel count).
    const int four_d = (inputs[0].shape.size() == 4) + (ref.outputs[0].shape.size() == 4);
    EXPECT_EQ(n_blocked, four_d) << "tensors blocked";
  }
}

inline std::string vec_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "x" : "") << v[i];
  return os.str();
}

// Fused activations as the converter writes them (kernels/ref/activation.h).
struct ActCase {
  const char* name;  // "" = none
  float alpha, beta;
};
inline const ActCase kActs[] = {{"", 0.f, 0.f},          {"Relu", 0.f, 0.f},       {"LeakyRelu", 0.1f, 0.f},
                         {"Clip", 0.f, 6.f},      {"Clip", -0.5f, 0.25f},   {"HardSwish", 0.f, 0.f},
                         {"HardSigmoid", 0.2f, 0.5f}, {"Sigmoid", 0.f, 0.f}, {"Clip", 0.f, INFINITY},
                         {"Silu", 0.f, 0.f}};
inline constexpr int kNumActs = sizeof(kActs) / sizeof(kActs[0]);

inline void set_act(Attrs& a, const ActCase& act) {
  if (!*act.name) return;
  a.set_string("fused_act", act.name);
  a.set_float("fused_alpha", act.alpha);
  a.set_float("fused_beta", act.beta);
}

// ------------------------------------------------------------------------------------------ Conv

struct ConvCase {
  int64_t n, c, oc, group;
  std::vector<int64_t> spatial, kernel, strides, dilations, pads;  // pads: begins then ends
  bool bias;
  ActCase act;
};

inline std::string conv_name(const ConvCase& p) {
  std::ostringstream os;
  os << "n" << p.n << "_c" << p.c << "_oc" << p.oc << "_g" << p.group << "_in" << vec_str(p.spatial) << "_k"
     << vec_str(p.kernel) << "_s" << vec_str(p.strides) << "_d" << vec_str(p.dilations) << "_p" << vec_str(p.pads)
     << (p.bias ? "_bias" : "") << (*p.act.name ? "_" : "") << p.act.name;
  return os.str();
}

inline Attrs conv_attrs(const ConvCase& p) {
  Attrs a;
  a.set_ints("kernel_shape", p.kernel);
  a.set_ints("strides", p.strides);
  a.set_ints("dilations", p.dilations);
  a.set_ints("pads", p.pads);
  a.set_int("group", p.group);
  set_act(a, p.act);
  return a;
}

inline std::vector<TensorData> conv_inputs(const ConvCase& p, bool transposed, uint32_t seed) {
  Shape x{p.n, p.c};
  x.insert(x.end(), p.spatial.begin(), p.spatial.end());
  Shape w = transposed ? Shape{p.c, p.oc / p.group} : Shape{p.oc, p.c / p.group};
  w.insert(w.end(), p.kernel.begin(), p.kernel.end());
  std::vector<TensorData> in;
  in.push_back(TensorData::f32(x, test::random_floats(static_cast<size_t>(shape_numel(x)), seed)));
  in.push_back(TensorData::f32(w, test::random_floats(static_cast<size_t>(shape_numel(w)), seed + 1), true));
  if (p.bias) in.push_back(TensorData::f32({p.oc}, test::random_floats(static_cast<size_t>(p.oc), seed + 2), true));
  return in;
}

}  // namespace orknn::fast_vs_ref
