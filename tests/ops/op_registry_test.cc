// Every op in src/ops/op_list.inc has an infer function and a reference kernel.
#include <gtest/gtest.h>

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
    if (k) {
      EXPECT_EQ(k->priority, 0) << d->name;
      EXPECT_STREQ(k->name, "ref") << d->name;
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

}  // namespace
}  // namespace orknn
