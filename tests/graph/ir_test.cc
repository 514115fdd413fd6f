// IR helpers on hostile values (found by fuzzing the model loader, docs/fuzzing.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "graph/ir.h"

namespace orknn {
namespace {

TEST(Ir, ShapeWithAZeroDimIsEmptyWhateverTheOtherDims) {
  // 2^52 * (2^63 - 1) would overflow int64 before the 0 is reached.
  EXPECT_EQ(shape_numel({int64_t{1} << 52, std::numeric_limits<int64_t>::max(), 0}), 0);
  EXPECT_EQ(shape_numel({0, std::numeric_limits<int64_t>::max()}), 0);
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_numel({}), 1);
}

TEST(Ir, FloatAttributeReadAsIntSaturates) {
  Attrs a;
  a.set_float("huge", -1.7e38f);
  a.set_float("big", 3e30f);
  a.set_float("nan", std::nanf(""));
  a.set_float("plain", -7.9f);
  EXPECT_EQ(a.get_int("huge", 0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(a.get_int("big", 0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(a.get_int("nan", 0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(a.get_int("plain", 0), -7);  // truncation toward zero, as before
  EXPECT_EQ(a.get_int("absent", 5), 5);
}

}  // namespace
}  // namespace orknn
