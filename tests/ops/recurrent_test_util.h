// The attributes of a recurrent node (LSTM, GRU, RNN) as the recurrent op tests vary them
// (recurrent_test.cc, recurrent_x86_test.cc): an attribute at its default is left out, as
// exporters leave it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ops/ref_test_helpers.h"

namespace orknn::test {

// clip 0: absent; acts empty: absent (the defaults), else joined with commas as the IR keeps them.
inline Attrs recurrent_attrs(int64_t hidden, const std::string& direction, int64_t layout, float clip,
                             int64_t input_forget, int64_t linear_before_reset, const std::vector<std::string>& acts,
                             const std::vector<float>& alphas = {}, const std::vector<float>& betas = {}) {
  reft::A attrs;
  attrs.i("hidden_size", hidden).s("direction", direction);
  if (layout) attrs.i("layout", 1);
  if (clip > 0) attrs.f("clip", clip);
  if (input_forget) attrs.i("input_forget", 1);
  if (linear_before_reset) attrs.i("linear_before_reset", 1);
  if (!acts.empty()) {
    std::string joined;
    for (const std::string& a : acts) joined += (joined.empty() ? "" : ",") + a;
    attrs.s("activations", joined);
  }
  if (!alphas.empty()) attrs.a.set_floats("activation_alpha", alphas);
  if (!betas.empty()) attrs.a.set_floats("activation_beta", betas);
  return attrs.a;
}

}  // namespace orknn::test
