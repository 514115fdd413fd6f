// What the fast INT8 GlobalAveragePool kernels of every backend share (x86_gap_int8, neon_gap_int8):
// the nodes, the layouts, the threads and the per-plane result, around a backend's two integer
// sums. Bit-exact against the reference kernel (kernels/ref/pool.cc, docs/numerics.md):
//   acc = sum(x - zp_x) over the plane (an exact integer, formed here as sum(x) - count * zp_x),
//   Mc = (s_x / s_y) / float(count), y = sat8(rne(float(acc) * Mc) + zp_y)
// with the reference's scalar float operations (quant_util.h) per plane.
// Per-axis parameters stay on the reference kernel (the converter never makes them for activations).
// A 4-D input kept channels-last between convolutions (kernel.h, blocked) is summed per channel
// instead, 16 channels per job in int32 sums (exact below 2^23 pixels, where blocked_io() stops
// offering it); the output [N,C,1,1] has the same bytes in either layout.
#pragma once
#include <algorithm>
#include <cstdint>

#include "graph/ir.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/quant_util.h"
#include "ops/quant_infer.h"

namespace orknn {

// A quantized GlobalAveragePool of rank >= 3 with per-tensor parameters (the CPU check is the
// backend's).
inline bool gap_int8_node(const Graph& g, const Node& n) {
  if (!is_quantized_node(g, n)) return false;
  if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  return x.shape.size() >= 3 && is_q8_per_tensor(x) && is_q8_per_tensor(y);
}

// sum of x[0..count), exact.
using GapPlaneSumFn = int64_t (*)(const int8_t* x, int64_t count);
// sums[i] = sum of x over the pixels of channel i < n <= 16 of an NHWC image (pixels `c` bytes apart,
// x at the first of the n channels); exact below 2^23 pixels.
using GapChannelSumsFn = void (*)(const int8_t* x, int64_t pixels, int64_t c, int64_t n, int32_t* sums);

template <GapPlaneSumFn kPlaneSum, GapChannelSumsFn kChannelSums>
class GlobalAveragePoolInt8Kernel : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    const Shape& s = g.tensor(n.inputs[0]).shape;
    return s.size() == 4 && s[2] * s[3] <= kMaxNhwcPixels ? BlockedIo::kEach : BlockedIo::kNone;
  }
  Status prepare(const KernelContext& ctx) override {
    ORKNN_RETURN_IF_ERROR(check_q8_input(*ctx.graph, *ctx.node, 0));
    ORKNN_RETURN_IF_ERROR(check_q8_output(*ctx.graph, *ctx.node, 0));
    const Shape& s = ctx.in_tensor(0).shape;
    channels_ = s[1];
    planes_ = s[0] * s[1];
    plane_ = 1;
    for (size_t d = 2; d < s.size(); ++d) plane_ *= s[d];
    const QuantScalar qx = per_tensor(ctx.in_tensor(0)), qy = per_tensor(ctx.out_tensor(0));
    zp_x_ = qx.zp;
    zp_y_ = qy.zp;
    const float ratio = qx.scale / qy.scale;
    if (plane_ > 0) mc_ = ratio / static_cast<float>(plane_);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    int8_t* y = ctx.out<int8_t>(0);
    if (plane_ == 0) {  // no elements: the reference's count-0 result
      for (int64_t p = 0; p < planes_; ++p) y[p] = static_cast<int8_t>(sat8(zp_y_));
      return;
    }
    const int64_t offset = plane_ * static_cast<int64_t>(zp_x_);
    const int nt = threads_for(planes_ * plane_, kMinBytesPerThread, ctx.num_threads);
    if (!ctx.input_blocked(0)) {
      parallel_ranges(planes_, nt, [&](int64_t p0, int64_t p1, int) {
        for (int64_t p = p0; p < p1; ++p) y[p] = result(kPlaneSum(x + p * plane_, plane_) - offset);
      });
      return;
    }
    // Jobs: (image, 16 channels).
    const int64_t c = channels_, chunks = (c + 15) / 16, jobs = (planes_ / c) * chunks;
    parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t b = j / chunks, ch = (j % chunks) * 16, n = std::min<int64_t>(16, c - ch);
        int32_t sums[16];
        kChannelSums(x + b * plane_ * c + ch, plane_, c, n, sums);
        for (int64_t i = 0; i < n; ++i) y[b * c + ch + i] = result(static_cast<int64_t>(sums[i]) - offset);
      }
    });
  }

 private:
  // Largest image (pixels) summed channels-last: the int32 sums stay exact.
  static constexpr int64_t kMaxNhwcPixels = int64_t{1} << 23;
  // Below this many input bytes per thread, waking another thread costs more than it saves.
  static constexpr int64_t kMinBytesPerThread = 64 * 1024;

  int8_t result(int64_t acc) const { return rne_add_zp_sat8(static_cast<float>(acc) * mc_, zp_y_); }

  int64_t channels_ = 0, planes_ = 0, plane_ = 0;
  int32_t zp_x_ = 0, zp_y_ = 0;
  float mc_ = 1.f;
};

}  // namespace orknn
