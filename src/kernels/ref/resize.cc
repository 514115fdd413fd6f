// Reference Resize (float32 data, any rank): nearest, N-D linear and N-D cubic interpolation.
//
// Every axis is resampled independently into "taps" (input index, weight) per output
// coordinate; an output element is the sum over all combinations of one tap per axis of
// (w_axis0 * w_axis1 * ...) * x[indices].
// Numerics: coordinates and tap weights are computed once in prepare() in double and each
// weight is rounded to float32; in run() the weight product is formed in axis order in float32
// and the terms are added in float32 in odometer order (last axis fastest), starting from the
// first term. Zero-weight taps are dropped (so nearest copies exactly).
//
// Per axis, with input length in, output length out, scale s (attribute "scales"), the output
// coordinate o maps to x_orig by coordinate_transformation_mode (ONNX definitions):
//   half_pixel           (o + 0.5) / s - 0.5
//   half_pixel_symmetric c * (1 - out / L) + (o + 0.5) / s - 0.5,  c = in / 2
//   pytorch_half_pixel   out > 1 ? (o + 0.5) / s - 0.5 : 0
//   align_corners        out > 1 ? o * (in - 1) / (L - 1) : 0
//   asymmetric           o / s
//   tf_half_pixel_for_nn (o + 0.5) / s
//   tf_crop_and_resize   out > 1 ? start * (in - 1) + o * (end - start) * (in - 1) / (out - 1)
//                                : 0.5 * (start + end) * (in - 1)
//                        and x_orig outside [0, in - 1] gives extrapolation_value.
// L is the unfloored resized length in * s (as the ONNX reference implementation uses it).
// When s equals out / in in float32 (the scale came from "sizes", or is that exact ratio),
// "/ s" is evaluated as "* in / out" and L = out, so that exact coordinates stay exact: the
// float32 value of out / in would move, e.g., 0.5 * 3 - 0.5 = 1 to 0.99999994 and flip floor().
// Then: nearest rounds x_orig by nearest_mode and clamps the index into [0, in - 1];
// linear clamps x_orig into [0, in - 1] and uses floor(x) with weight 1 - r and floor(x) + 1
// with weight r (r = x - floor(x)); cubic uses floor(x) - 1 .. floor(x) + 2 with the Keys
// weights of cubic_coeff_a, indices clamped into [0, in - 1] (edge), or with exclude_outside
// the weights of outside indices set to 0 and the rest divided by their sum.
//
// Quantized int8 (docs/numerics.md): mode nearest only. Each output element is the int8 value
// at its single tap per axis, moved unchanged (the output carries X's parameters, checked at
// plan time); tf_crop_and_resize fills outside elements with quantize(extrapolation_value).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/quant_util.h"
#include "kernels/ref/quant_passthrough.h"
#include "kernels/ref/resize_taps.h"

namespace orknn {
namespace {

struct AxisTaps {
  std::vector<ResizeTap> taps;   // all taps of all output coordinates
  std::vector<int64_t> first;    // taps of coordinate o: [first[o], first[o + 1])
  std::vector<uint8_t> outside;  // tf_crop_and_resize: coordinate maps outside the input
};

// Keys cubic convolution weights of the 4 neighbours floor(x) - 1 .. floor(x) + 2, t = x - floor(x).
void cubic_weights(double t, double a, double w[4]) {
  const double t1 = t + 1, u = 1 - t, u1 = 2 - t;
  w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
  w[3] = ((a * u1 - 5 * a) * u1 + 8 * a) * u1 - 4 * a;
}

class ResizeRef : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Attrs& at = ctx.node->attrs;
    in_shape_ = ctx.in_tensor(0).shape;
    out_shape_ = ctx.out_tensor(0).shape;
    const size_t rank = in_shape_.size();
    const std::string mode = at.get_string("mode", "nearest");
    const std::string ctm = at.get_string("coordinate_transformation_mode", "half_pixel");
    const std::string nearest_mode = at.get_string("nearest_mode", "round_prefer_floor");
    const double cubic_a = at.get_float("cubic_coeff_a", -0.75f);
    const bool exclude_outside = at.get_int("exclude_outside", 0) != 0;
    extrapolation_value_ = at.get_float("extrapolation_value", 0.f);
    quantized_ = !ctx.out_tensor(0).quant.empty();
    if (quantized_) {
      if (mode != "nearest")
        return ORKNN_ERR(kInvalidModel, "Resize node '%s': mode '%s' is not supported on a quantized int8 node",
                         ctx.node->name.c_str(), mode.c_str());
      const QuantScalar qy = per_tensor(ctx.out_tensor(0));
      extrapolation_q_ = quantize_value(extrapolation_value_, qy.scale, qy.zp);
    }
    const std::vector<float> scales = at.get_floats("scales");
    const std::vector<float> roi = at.get_floats("roi");
    const bool crop = ctm == "tf_crop_and_resize";

    axes_.assign(rank, AxisTaps());
    for (size_t d = 0; d < rank; ++d) {
      AxisTaps& ax = axes_[d];
      const int64_t in = in_shape_[d], out = out_shape_[d];
      ResizeAxisMap map;
      map.ctm = ctm;
      map.in = in;
      map.out = out;
      map.scale = scales[d];
      if (crop) {
        map.roi_start = roi[d];
        map.roi_end = roi[rank + d];
      }
      for (int64_t o = 0; o < out; ++o) {
        ax.first.push_back(static_cast<int64_t>(ax.taps.size()));
        const double x = resize_source_coordinate(map, o);
        const bool outside = crop && (x < 0 || x > static_cast<double>(in - 1));
        ax.outside.push_back(outside ? 1 : 0);
        if (outside) continue;
        if (mode == "nearest") {
          ax.taps.push_back({resize_nearest_index(nearest_mode, x, in), 1.f});
        } else if (mode == "linear") {
          resize_linear_taps(x, in, &ax.taps);
        } else {  // cubic
          const double xs = resize_int_safe(x);
          const int64_t i0 = static_cast<int64_t>(std::floor(xs));
          double w[4];
          cubic_weights(xs - static_cast<double>(i0), cubic_a, w);
          if (exclude_outside) {
            double sum = 0;
            for (int j = 0; j < 4; ++j) {
              const int64_t i = i0 - 1 + j;
              if (i < 0 || i >= in) w[j] = 0;
              sum += w[j];
            }
            for (int j = 0; j < 4; ++j) w[j] /= sum;
          }
          for (int j = 0; j < 4; ++j) resize_add_tap(&ax.taps, resize_clamp_index(i0 - 1 + j, in), w[j]);
        }
        // The run loop needs at least one tap per coordinate.
        if (static_cast<int64_t>(ax.taps.size()) == ax.first.back()) ax.taps.push_back({0, 0.f});
      }
      ax.first.push_back(static_cast<int64_t>(ax.taps.size()));
    }
    in_strides_.assign(rank, 1);
    for (size_t d = rank - 1; d-- > 0;) in_strides_[d] = in_strides_[d + 1] * in_shape_[d + 1];
    // Nearest: per axis and output coordinate, the input offset of its one tap (-1: outside).
    nearest_ = mode == "nearest";
    nearest_offsets_.assign(rank, {});
    if (nearest_)
      for (size_t d = 0; d < rank; ++d)
        for (int64_t o = 0; o < out_shape_[d]; ++o) {
          const AxisTaps& ax = axes_[d];
          const size_t c = static_cast<size_t>(o);
          nearest_offsets_[d].push_back(ax.outside[c] ? -1 : ax.taps[static_cast<size_t>(ax.first[c])].index * in_strides_[d]);
        }
    coord_.assign(rank, 0);
    tap_pos_.assign(rank, 0);
    total_ = ctx.out_tensor(0).numel();
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    if (quantized_) return gather_nearest(ctx.in<int8_t>(0), ctx.out<int8_t>(0), extrapolation_q_);
    // Nearest: the one tap's term is 1.f * x, which is x: a gather.
    if (nearest_) return gather_nearest(ctx.in<float>(0), ctx.out<float>(0), extrapolation_value_);
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const size_t rank = in_shape_.size();
    for (int64_t e = 0; e < total_; ++e) {
      int64_t rem = e;
      bool outside = false;
      for (size_t d = rank; d-- > 0;) {
        coord_[d] = rem % out_shape_[d];
        rem /= out_shape_[d];
        outside = outside || axes_[d].outside[static_cast<size_t>(coord_[d])];
      }
      if (outside) {
        y[e] = extrapolation_value_;
        continue;
      }
      for (size_t d = 0; d < rank; ++d) tap_pos_[d] = axes_[d].first[static_cast<size_t>(coord_[d])];
      float acc = 0.f;
      bool first_term = true;
      while (true) {
        float w = 1.f;
        int64_t offset = 0;
        for (size_t d = 0; d < rank; ++d) {
          const ResizeTap& t = axes_[d].taps[static_cast<size_t>(tap_pos_[d])];
          w *= t.weight;
          offset += t.index * in_strides_[d];
        }
        const float term = w * x[offset];
        acc = first_term ? term : acc + term;
        first_term = false;
        // Odometer over the taps, last axis fastest.
        size_t d = rank;
        while (d-- > 0) {
          const size_t c = static_cast<size_t>(coord_[d]);
          if (++tap_pos_[d] < axes_[d].first[c + 1]) break;
          tap_pos_[d] = axes_[d].first[c];
        }
        if (d == static_cast<size_t>(-1)) break;  // every axis wrapped: all combinations done
      }
      y[e] = acc;
    }
  }

 private:
  // Nearest (float or int8): one tap of weight 1 per axis and output coordinate, none when outside
  // (then `fill`). Rows along the last axis, each from the offset of its outer coordinates.
  template <typename T>
  void gather_nearest(const T* x, T* y, T fill) {
    const size_t rank = in_shape_.size();
    const std::vector<int64_t>& last = nearest_offsets_[rank - 1];
    const int64_t row = out_shape_[rank - 1];
    std::fill(coord_.begin(), coord_.end(), 0);
    for (int64_t e = 0; e < total_; e += row) {
      int64_t base = 0;
      for (size_t d = 0; d + 1 < rank && base >= 0; ++d) {
        const int64_t off = nearest_offsets_[d][static_cast<size_t>(coord_[d])];
        base = off < 0 ? -1 : base + off;
      }
      for (int64_t j = 0; j < row; ++j) {
        const int64_t off = last[static_cast<size_t>(j)];
        y[e + j] = base < 0 || off < 0 ? fill : x[base + off];
      }
      for (size_t d = rank - 1; d-- > 0;) {  // next outer coordinate, the last outer axis fastest
        if (++coord_[d] < out_shape_[d]) break;
        coord_[d] = 0;
      }
    }
  }

  bool quantized_ = false;
  int8_t extrapolation_q_ = 0;
  Shape in_shape_, out_shape_;
  std::vector<AxisTaps> axes_;
  bool nearest_ = false;
  std::vector<std::vector<int64_t>> nearest_offsets_;  // [axis][output coordinate]
  std::vector<int64_t> in_strides_, coord_, tap_pos_;
  float extrapolation_value_ = 0.f;
  int64_t total_ = 0;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Resize, "ref", kPriorityReference, nullptr, ResizeRef);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Resize, QuantPassthrough<ResizeRef>);

}  // namespace orknn
