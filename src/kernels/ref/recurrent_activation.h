// The activation functions of the recurrent ops (LSTM, GRU, RNN: attribute "activations") and how
// their alpha/beta parameters are read. One place for both infer (src/ops/recurrent.cc, which
// validates and normalises the attributes) and the reference kernel (recurrent.cc).
#pragma once
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"

namespace orknn {

enum class RnnActivation : uint8_t {
  kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign, kSoftplus,
};

// One activation of a recurrent node with its parameters resolved.
struct RnnActivationFn {
  RnnActivation kind = RnnActivation::kTanh;
  float alpha = 0.f, beta = 0.f;

  // The definitions of the ONNX LSTM/GRU/RNN specification's activation list.
  float operator()(float x) const {
    switch (kind) {
      case RnnActivation::kRelu: return x > 0.f ? x : 0.f;
      case RnnActivation::kTanh: return std::tanh(x);
      case RnnActivation::kSigmoid: return 1.f / (1.f + std::exp(-x));
      case RnnActivation::kAffine: return alpha * x + beta;
      case RnnActivation::kLeakyRelu: return x >= 0.f ? x : alpha * x;
      case RnnActivation::kThresholdedRelu: return x > alpha ? x : 0.f;
      case RnnActivation::kScaledTanh: return alpha * std::tanh(beta * x);
      case RnnActivation::kHardSigmoid: {
        const float t = alpha * x + beta;
        return t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
      }
      case RnnActivation::kElu: return x >= 0.f ? x : alpha * (std::exp(x) - 1.f);
      case RnnActivation::kSoftsign: return x / (1.f + std::fabs(x));
      case RnnActivation::kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// Resolves the activations of a node: `names` (ONNX spelling, matched case-insensitively as ONNX
// Runtime does) with the "activation_alpha" / "activation_beta" lists. Those lists are consumed in
// order by the activations that take the parameter (Affine, LeakyRelu, ThresholdedRelu,
// ScaledTanh, HardSigmoid, Elu take alpha; Affine, ScaledTanh, HardSigmoid take beta), ONNX
// Runtime's reading of the specification; an activation finding its list exhausted takes the
// default of the ONNX operator of that name (LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid 0.2 /
// 0.5, Elu 1, Affine 1 / 0). ScaledTanh has no such operator, so its alpha and beta must be given.
// *alphas / *betas receive the values consumed (defaults included), the normalised lists: resolving
// the names with them gives the same functions again. Errors (unknown name, values left over, a
// missing ScaledTanh parameter) are messages for the caller to prefix with the node.
Status resolve_rnn_activations(const std::vector<std::string>& names, std::vector<float>* alphas,
                               std::vector<float>* betas, std::vector<RnnActivationFn>* out);

// The canonical ONNX spelling of an activation ("LeakyRelu").
const char* rnn_activation_name(RnnActivation a);

// "Sigmoid,Tanh,Tanh" <-> {"Sigmoid", "Tanh", "Tanh"}: the IR keeps ONNX's list of strings as one
// comma-separated string attribute (the IR has no string-list attributes).
std::vector<std::string> split_rnn_activations(const std::string& joined);
std::string join_rnn_activations(const std::vector<std::string>& names);

}  // namespace orknn
