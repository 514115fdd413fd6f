// ASSERT_OK / EXPECT_OK for orknn::Status: the expression is evaluated once, and on failure the
// test fails with the Status message (more can be streamed: ASSERT_OK(st) << "while ...").
#pragma once
#include <gtest/gtest.h>

#include "common/status.h"

// The switch keeps an `else` after the macro from binding to the macro's own `if` (as gtest does).
#define ORKNN_STATUS_CHECK_(expr, fail)                                              \
  switch (0)                                                                         \
  case 0:                                                                            \
  default:                                                                           \
    if (const ::orknn::Status orknn_status_check_ = (expr); orknn_status_check_.ok()) { \
    } else                                                                           \
      fail << orknn_status_check_.message()

#define ASSERT_OK(expr) ORKNN_STATUS_CHECK_(expr, GTEST_FAIL())
#define EXPECT_OK(expr) ORKNN_STATUS_CHECK_(expr, ADD_FAILURE())
