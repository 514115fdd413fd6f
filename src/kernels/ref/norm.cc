// Reference LayerNormalization and InstanceNormalization (float32).
//
// Numerics, per normalised group of D elements (in memory order):
//   mean = (float32 sum of x starting at 0) / D
//   var  = (float32 sum of (x - mean)^2 starting at 0) / D        (two passes, not E[x^2]-E[x]^2)
//   inv_std = 1 / sqrtf(var + epsilon)
//   y = (x - mean) * inv_std * scale + B                           (left to right; B = 0 if absent)
// LayerNormalization groups the trailing dims from `axis` (Scale/B broadcast over them);
// InstanceNormalization groups the spatial dims of one (n, c) with scale[c], B[c].
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/ref/nchw.h"

namespace orknn {
namespace {

// Normalises `len` contiguous elements. scale/bias are read through index tables (LayerNorm
// broadcasting) or a single value when the table is null.
void normalize_group(const float* x, float* y, int64_t len, float epsilon, const float* scale,
                     const int64_t* scale_index, const float* bias, const int64_t* bias_index) {
  float sum = 0.f;
  for (int64_t i = 0; i < len; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(len);
  float sq = 0.f;
  for (int64_t i = 0; i < len; ++i) sq += (x[i] - mean) * (x[i] - mean);
  const float var = sq / static_cast<float>(len);
  const float inv_std = 1.f / std::sqrt(var + epsilon);
  for (int64_t i = 0; i < len; ++i) {
    const float s = scale_index ? scale[scale_index[i]] : scale[0];
    const float b = bias ? (bias_index ? bias[bias_index[i]] : bias[0]) : 0.f;
    y[i] = (x[i] - mean) * inv_std * s + b;
  }
}

// Offset into a tensor of shape `s` (right-aligned against `target`, dims of 1 broadcast) for
// every element of `target` in row-major order.
std::vector<int64_t> broadcast_offsets(const Shape& s, const Shape& target) {
  int64_t total = 1;
  for (int64_t d : target) total *= d;
  std::vector<int64_t> offsets(static_cast<size_t>(total));
  for (int64_t e = 0; e < total; ++e) {
    int64_t rem = e, offset = 0, stride = 1;
    for (size_t i = 0; i < target.size(); ++i) {
      const size_t ti = target.size() - 1 - i;
      const int64_t coord = rem % target[ti];
      rem /= target[ti];
      if (i < s.size()) {
        const int64_t d = s[s.size() - 1 - i];
        if (d != 1) offset += coord * stride;
        stride *= d;
      }
    }
    offsets[static_cast<size_t>(e)] = offset;
  }
  return offsets;
}

class LayerNormRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& x = ctx.in_tensor(0).shape;
    const size_t axis = static_cast<size_t>(ctx.node->attrs.get_int("axis", 0));
    epsilon_ = ctx.node->attrs.get_float("epsilon", 1e-5f);
    const Shape normalized(x.begin() + static_cast<long>(axis), x.end());
    groups_ = 1;
    for (size_t i = 0; i < axis; ++i) groups_ *= x[i];
    len_ = 1;
    for (int64_t d : normalized) len_ *= d;
    scale_index_ = broadcast_offsets(ctx.in_tensor(1).shape, normalized);
    has_bias_ = ctx.has_input(2);
    if (has_bias_) bias_index_ = broadcast_offsets(ctx.in_tensor(2).shape, normalized);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    const float* scale = ctx.in<float>(1);
    const float* bias = has_bias_ ? ctx.in<float>(2) : nullptr;
    float* y = ctx.out<float>(0);
    for (int64_t gi = 0; gi < groups_; ++gi)
      normalize_group(x + gi * len_, y + gi * len_, len_, epsilon_, scale, scale_index_.data(), bias,
                      has_bias_ ? bias_index_.data() : nullptr);
  }

 private:
  int64_t groups_ = 1, len_ = 1;
  float epsilon_ = 1e-5f;
  bool has_bias_ = false;
  std::vector<int64_t> scale_index_, bias_index_;
};

class InstanceNormRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    p_ = channel_planes(ctx.in_tensor(0).shape);
    epsilon_ = ctx.node->attrs.get_float("epsilon", 1e-5f);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const float* x = ctx.in<float>(0);
    const float* scale = ctx.in<float>(1);
    const float* bias = ctx.in<float>(2);
    float* y = ctx.out<float>(0);
    for_each_plane(p_, [&](int64_t c, int64_t first) {
      normalize_group(x + first, y + first, p_.plane, epsilon_, scale + c, nullptr, bias + c, nullptr);
    });
  }

 private:
  ChannelPlanes p_;
  float epsilon_ = 1e-5f;
};

}  // namespace

ORKNN_REGISTER_KERNEL(LayerNormalization, "ref", kPriorityReference, nullptr, LayerNormRef);
ORKNN_REGISTER_KERNEL(InstanceNormalization, "ref", kPriorityReference, nullptr, InstanceNormRef);

}  // namespace orknn
