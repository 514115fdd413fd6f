#include "kernels/ref/recurrent_activation.h"

#include <cctype>

namespace orknn {
namespace {

struct ActivationInfo {
  RnnActivation kind;
  const char* name;
  bool takes_alpha, takes_beta;
  bool has_defaults;  // false: the parameters it takes must be given
  float default_alpha, default_beta;
};

const ActivationInfo kActivations[] = {
    {RnnActivation::kRelu, "Relu", false, false, true, 0.f, 0.f},
    {RnnActivation::kTanh, "Tanh", false, false, true, 0.f, 0.f},
    {RnnActivation::kSigmoid, "Sigmoid", false, false, true, 0.f, 0.f},
    {RnnActivation::kAffine, "Affine", true, true, true, 1.f, 0.f},
    {RnnActivation::kLeakyRelu, "LeakyRelu", true, false, true, 0.01f, 0.f},
    {RnnActivation::kThresholdedRelu, "ThresholdedRelu", true, false, true, 1.f, 0.f},
    {RnnActivation::kScaledTanh, "ScaledTanh", true, true, false, 0.f, 0.f},
    {RnnActivation::kHardSigmoid, "HardSigmoid", true, true, true, 0.2f, 0.5f},
    {RnnActivation::kElu, "Elu", true, false, true, 1.f, 0.f},
    {RnnActivation::kSoftsign, "Softsign", false, false, true, 0.f, 0.f},
    {RnnActivation::kSoftplus, "Softplus", false, false, true, 0.f, 0.f},
};

bool same_name_ignoring_case(const std::string& a, const char* b) {
  size_t i = 0;
  for (; i < a.size() && b[i]; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return i == a.size() && !b[i];
}

}  // namespace

const char* rnn_activation_name(RnnActivation a) {
  for (const ActivationInfo& info : kActivations)
    if (info.kind == a) return info.name;
  return "?";
}

Status resolve_rnn_activations(const std::vector<std::string>& names, std::vector<float>* alphas,
                               std::vector<float>* betas, std::vector<RnnActivationFn>* out) {
  std::vector<float> used_alpha, used_beta;
  size_t next_alpha = 0, next_beta = 0;
  out->clear();
  for (const std::string& name : names) {
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& a : kActivations)
      if (same_name_ignoring_case(name, a.name)) info = &a;
    if (!info)
      return ORKNN_ERR(kInvalidModel,
                       "activation '%s' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                       "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus", name.c_str());
    RnnActivationFn fn;
    fn.kind = info->kind;
    if (info->takes_alpha) {
      if (next_alpha < alphas->size()) fn.alpha = (*alphas)[next_alpha++];
      else if (info->has_defaults) fn.alpha = info->default_alpha;
      else return ORKNN_ERR(kInvalidModel, "activation %s needs a value in activation_alpha", info->name);
      used_alpha.push_back(fn.alpha);
    }
    if (info->takes_beta) {
      if (next_beta < betas->size()) fn.beta = (*betas)[next_beta++];
      else if (info->has_defaults) fn.beta = info->default_beta;
      else return ORKNN_ERR(kInvalidModel, "activation %s needs a value in activation_beta", info->name);
      used_beta.push_back(fn.beta);
    }
    out->push_back(fn);
  }
  if (next_alpha < alphas->size())
    return ORKNN_ERR(kInvalidModel, "activation_alpha has %zu values but the activations take only %zu",
                     alphas->size(), next_alpha);
  if (next_beta < betas->size())
    return ORKNN_ERR(kInvalidModel, "activation_beta has %zu values but the activations take only %zu",
                     betas->size(), next_beta);
  *alphas = std::move(used_alpha);
  *betas = std::move(used_beta);
  return Status::Ok();
}

std::vector<std::string> split_rnn_activations(const std::string& joined) {
  std::vector<std::string> names;
  if (joined.empty()) return names;
  size_t start = 0;
  for (size_t comma; (comma = joined.find(',', start)) != std::string::npos; start = comma + 1)
    names.push_back(joined.substr(start, comma - start));
  names.push_back(joined.substr(start));
  return names;
}

std::string join_rnn_activations(const std::vector<std::string>& names) {
  std::string joined;
  for (size_t i = 0; i < names.size(); ++i) joined += (i ? "," : "") + names[i];
  return joined;
}

}  // namespace orknn
