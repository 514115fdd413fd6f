// Every op in src/ops/op_list.inc has an infer function and a reference kernel.
#include <gtest/gtest.h>

#include <cstdlib>

#include "graph/ir.h"
#include "kernels/kernel.h"
#include "ops/op.h"

namespace orknn {
namespace {

TEST(OpRegistry, EveryOpHasInferFunction) {
  ASSERT_GT(op_count(), 0);
  for (int i = 0; i < op_count(); ++i) {
    const OpDef* d = op_at(i);
    ASSERT_NE(d, nullptr) << "op index " << i;
    EXPECT_EQ(static_cast<int>(d->id), i) << d->name;
    EXPECT_NE(d->infer, nullptr) << "no infer function for " << d->name;
  }
}

TEST(OpRegistry, EveryOpHasReferenceKernel) {
  for (int i = 0; i < op_count(); ++i) {
    const OpDef* d = op_at(i);
    const KernelEntry* k = find_ref_kernel(d->id);
    EXPECT_NE(k, nullptr) << "no reference kernel for " << d->name;
    // The plain reference kernel or, for ops whose nodes are always quantized (QuantizeLinear,
    // DequantizeLinear), the quantized one.
    if (k) {
      EXPECT_EQ(k->priority, 0) << d->name;
      EXPECT_TRUE(k->supports == nullptr || k->supports == is_quantized_node) << d->name << ": " << k->name;
    }
  }
}

TEST(OpRegistry, LookupByNameMatchesId) {
  for (int i = 0; i < op_count(); ++i) {
    const OpDef* d = op_at(i);
    EXPECT_EQ(find_op(d->name), d) << d->name;
    EXPECT_STREQ(op_name(d->id), d->name);
  }
  EXPECT_EQ(find_op("NoSuchOp"), nullptr);
}

// Malformed nodes (missing inputs/outputs, absent required inputs, scalars where tensors are
// expected) must give an error Status, never a crash.
TEST(OpRegistry, InferRejectsMalformedNodesWithoutCrashing) {
  for (int i = 0; i < op_count(); ++i) {
    const OpDef* d = op_at(i);
    if (!d->infer) continue;
    SCOPED_TRACE(d->name);
    struct NodeForm {
      std::vector<int> inputs;
      int outputs;
    };
    for (const NodeForm& form : {NodeForm{{}, 0}, NodeForm{{}, 1}, NodeForm{{-1}, 1}, NodeForm{{-1, -1, -1}, 1},
                                 NodeForm{{0}, 0}, NodeForm{{0, 7}, 1}}) {
      Graph g;
      g.add_tensor("scalar", {}, DType::kF32);  // id 0
      Node n;
      n.name = "malformed";
      n.op = d->id;
      n.inputs = form.inputs;
      for (int o = 0; o < form.outputs; ++o) n.outputs.push_back(g.add_tensor("out", {}, DType::kF32));
      Status st;
      try {
        st = d->infer(g, n);
      } catch (const std::exception& e) {
        ADD_FAILURE() << d->name << " threw: " << e.what();
        continue;
      }
      // A scalar input is valid for some ops; everything else here must be refused.
      if (form.inputs.empty() || form.outputs == 0 || form.inputs[0] < 0 || form.inputs.size() == 2) {
        EXPECT_FALSE(st.ok()) << "inputs " << form.inputs.size() << " outputs " << form.outputs;
      }
      if (!st.ok()) {
        EXPECT_NE(st.message().find(d->name), std::string::npos) << st.message();
      }
    }
  }
}

// OPENRKNN_DISABLE_KERNELS: a comma list of exact kernel names, or prefixes ending in '*'.
TEST(OpRegistry, DisableKernelsMatchesNamesAndPrefixes) {
  setenv("OPENRKNN_DISABLE_KERNELS", "onednn_conv,,avx512_int8*", 1);
  EXPECT_TRUE(kernel_disabled("onednn_conv"));
  EXPECT_FALSE(kernel_disabled("onednn_conv_act_pass"));  // exact name, not a prefix
  EXPECT_FALSE(kernel_disabled("onednn"));
  EXPECT_TRUE(kernel_disabled("avx512_int8"));
  EXPECT_TRUE(kernel_disabled("avx512_int8_table"));
  EXPECT_FALSE(kernel_disabled("avx512_fp16"));
  EXPECT_FALSE(kernel_disabled(""));
  EXPECT_FALSE(kernel_disabled(nullptr));
  setenv("OPENRKNN_DISABLE_KERNELS", "*", 1);
  EXPECT_TRUE(kernel_disabled("anything"));
  unsetenv("OPENRKNN_DISABLE_KERNELS");
  EXPECT_FALSE(kernel_disabled("onednn_conv"));
}

}  // namespace
}  // namespace orknn
