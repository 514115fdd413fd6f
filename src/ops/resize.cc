// Resize: validation, normalisation of roi/scales/sizes, shape inference.
//
// Accepted inputs: (X, roi, scales, sizes) of opset 11+ (roi/scales/sizes may be absent or
// empty), or (X, scales) of opset 10. The converter sets the opset-10 semantics through the
// attributes (coordinate_transformation_mode "asymmetric", nearest_mode "floor").
//
// Normalised form (inputs 1.. set to -1):
//   "scales"  float per dim, the scale used by the coordinate transform (out / in when sizes
//             were given, as ONNX defines it);
//   "sizes"   int per dim, the output shape (kept so that re-running infer never re-rounds);
//   "roi"     2 * rank floats, only for coordinate_transformation_mode tf_crop_and_resize;
//   "mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
//   "exclude_outside", "extrapolation_value", "antialias" (= 0) explicit;
//   "axes" and "keep_aspect_ratio_policy" are applied and removed.
//
// Quantized int8 X (docs/numerics.md): only mode nearest, which moves values unchanged (the output
// must carry X's parameters; tf_crop_and_resize fills with quantize(extrapolation_value)).
// linear and cubic are refused, so the converter keeps such a node in float.
#include <cmath>
#include <string>
#include <vector>

#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

bool one_of(const std::string& s, std::initializer_list<const char*> values) {
  for (const char* v : values)
    if (s == v) return true;
  return false;
}

// Index of a present, non-empty parameter input (ONNX uses empty tensors for "not given"), or -1.
int given(const Graph& g, const Node& n, int i) {
  if (i < 0) return -1;
  const Tensor* t = g.input(n, static_cast<size_t>(i));
  return t && t->numel() > 0 ? i : -1;
}

// Constant 1-D parameter input i as floats (roi, scales) or integers (sizes).
Status read_floats_1d(const Graph& g, const Node& n, int i, const char* what, std::vector<float>* out) {
  const Tensor& t = *g.input(n, static_cast<size_t>(i));
  if (t.shape.size() != 1) return ORKNN_NODE_ERR(n, "input %s must be 1-D, got %s", what, shape_str(t.shape).c_str());
  return read_const_floats(g, n, static_cast<size_t>(i), what, out);
}
Status read_ints_1d(const Graph& g, const Node& n, int i, const char* what, std::vector<int64_t>* out) {
  const Tensor& t = *g.input(n, static_cast<size_t>(i));
  if (t.shape.size() != 1) return ORKNN_NODE_ERR(n, "input %s must be 1-D, got %s", what, shape_str(t.shape).c_str());
  return read_const_ints(g, n, static_cast<size_t>(i), what, out);
}

// An output size computed in double: floor'ed by the caller, it must be a valid dimension before
// it is converted (a huge or NaN value would not fit an int64).
Status output_dim(const Node& n, size_t axis, double v, float scale, int64_t* out) {
  if (!(v >= 1.0 && v <= static_cast<double>(kMaxDim)))
    return ORKNN_NODE_ERR(n, "output dim %zu would be %g (scale %g); it must be in [1, %lld]", axis, v, scale,
                          (long long)kMaxDim);
  *out = static_cast<int64_t>(v);
  return Status::Ok();
}

}  // namespace

Status infer_Resize(Graph& g, Node& n) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 4, 1, 1, 1));
  const bool quantized = node_has_quant(g, n);
  if (!quantized) ORKNN_RETURN_IF_ERROR(check_f32(g, n, 0, "X"));
  const Tensor& x = *g.input(n, 0);
  const size_t rank = x.shape.size();
  if (rank < 1) return ORKNN_NODE_ERR(n, "X must have rank >= 1");
  for (int64_t d : x.shape)
    if (d < 1) return ORKNN_NODE_ERR(n, "X has an empty dimension: %s", shape_str(x.shape).c_str());

  // ---- attributes ----
  const std::string mode = n.attrs.get_string("mode", "nearest");
  if (!one_of(mode, {"nearest", "linear", "cubic"}))
    return ORKNN_NODE_ERR(n, "attribute mode '%s' is not supported (nearest, linear, cubic)", mode.c_str());
  if (quantized && mode != "nearest")
    return ORKNN_NODE_ERR(n, "mode '%s' is not supported on a quantized int8 node (only nearest, which moves values "
                          "unchanged); run it in float", mode.c_str());
  const std::string ctm = n.attrs.get_string("coordinate_transformation_mode", "half_pixel");
  if (!one_of(ctm, {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_half_pixel_for_nn", "tf_crop_and_resize"}))
    return ORKNN_NODE_ERR(n, "attribute coordinate_transformation_mode '%s' is not supported", ctm.c_str());
  const std::string nearest_mode = n.attrs.get_string("nearest_mode", "round_prefer_floor");
  if (!one_of(nearest_mode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
    return ORKNN_NODE_ERR(n, "attribute nearest_mode '%s' is not supported", nearest_mode.c_str());
  if (n.attrs.get_int("antialias", 0) != 0) return ORKNN_NODE_ERR(n, "attribute antialias=1 is not supported");
  const int64_t exclude_outside = n.attrs.get_int("exclude_outside", 0);
  if (exclude_outside != 0 && exclude_outside != 1)
    return ORKNN_NODE_ERR(n, "attribute exclude_outside must be 0 or 1, got %lld", (long long)exclude_outside);
  const std::string policy = n.attrs.get_string("keep_aspect_ratio_policy", "stretch");
  if (!one_of(policy, {"stretch", "not_larger", "not_smaller"}))
    return ORKNN_NODE_ERR(n, "attribute keep_aspect_ratio_policy '%s' is not supported", policy.c_str());

  std::vector<int64_t> axes;
  if (n.attrs.has("axes")) {
    ORKNN_RETURN_IF_ERROR(resolve_axes(n, n.attrs.get_ints("axes"), static_cast<int64_t>(rank), &axes));
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }

  // ---- parameter inputs (or their normalised attributes) ----
  const bool opset10 = n.inputs.size() == 2;  // (X, scales)
  const int roi_i = opset10 ? -1 : given(g, n, 1);
  const int scales_i = given(g, n, opset10 ? 1 : 2);
  const int sizes_i = opset10 ? -1 : given(g, n, 3);
  if (scales_i >= 0 && sizes_i >= 0) return ORKNN_NODE_ERR(n, "only one of scales and sizes may be given");

  std::vector<float> roi_in, scales_in;
  std::vector<int64_t> sizes_in;
  bool have_scales = false, have_sizes = false;
  if (scales_i >= 0) {
    ORKNN_RETURN_IF_ERROR(read_floats_1d(g, n, scales_i, "scales", &scales_in));
    have_scales = true;
  } else if (sizes_i >= 0) {
    ORKNN_RETURN_IF_ERROR(read_ints_1d(g, n, sizes_i, "sizes", &sizes_in));
    have_sizes = true;
  } else if (n.attrs.has("sizes")) {
    // Already normalised: full rank, axes and policy applied.
    sizes_in = n.attrs.get_ints("sizes");
    if (sizes_in.size() != rank)
      return ORKNN_NODE_ERR(n, "attribute sizes has %zu values, expected %zu", sizes_in.size(), rank);
    if (n.attrs.has("scales")) scales_in = n.attrs.get_floats("scales");
    if (scales_in.size() != rank)
      return ORKNN_NODE_ERR(n, "attribute scales has %zu values, expected %zu", scales_in.size(), rank);
    axes.clear();
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  } else if (n.attrs.has("scales")) {
    scales_in = n.attrs.get_floats("scales");
    have_scales = true;
  } else {
    return ORKNN_NODE_ERR(n, "neither scales nor sizes are given");
  }
  const bool normalised = !have_scales && !have_sizes;
  if (have_scales && scales_in.size() != axes.size())
    return ORKNN_NODE_ERR(n, "scales has %zu values, expected %zu", scales_in.size(), axes.size());
  if (have_sizes && sizes_in.size() != axes.size())
    return ORKNN_NODE_ERR(n, "sizes has %zu values, expected %zu", sizes_in.size(), axes.size());

  // roi: [starts..., ends...] per listed axis; only tf_crop_and_resize reads it.
  std::vector<float> roi(2 * rank);
  for (size_t i = 0; i < rank; ++i) {
    roi[i] = 0.f;
    roi[rank + i] = 1.f;
  }
  if (ctm == "tf_crop_and_resize") {
    if (roi_i >= 0) {
      ORKNN_RETURN_IF_ERROR(read_floats_1d(g, n, roi_i, "roi", &roi_in));
    } else if (n.attrs.has("roi")) {
      roi_in = n.attrs.get_floats("roi");
    } else {
      return ORKNN_NODE_ERR(n, "coordinate_transformation_mode tf_crop_and_resize needs roi");
    }
    const size_t roi_axes = normalised ? rank : axes.size();
    if (roi_in.size() != 2 * roi_axes)
      return ORKNN_NODE_ERR(n, "roi has %zu values, expected %zu", roi_in.size(), 2 * roi_axes);
    for (size_t i = 0; i < roi_axes; ++i) {
      const size_t a = normalised ? i : static_cast<size_t>(axes[i]);
      roi[a] = roi_in[i];
      roi[rank + a] = roi_in[roi_axes + i];
    }
  }

  // ---- output sizes and scales, full rank ----
  std::vector<float> scales(rank, 1.f);
  Shape out = x.shape;
  if (normalised) {
    scales = scales_in;
    out = sizes_in;
  } else if (have_scales) {
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t a = static_cast<size_t>(axes[i]);
      const float s = scales_in[i];
      if (!(s > 0.f) || !std::isfinite(s)) return ORKNN_NODE_ERR(n, "scales[%zu] = %g must be > 0", i, s);
      scales[a] = s;
      // ONNX: floor(in * (roi_end - roi_start) * scale); roi is [0, 1] except for tf_crop_and_resize.
      const double extent = static_cast<double>(x.shape[a]) * (static_cast<double>(roi[rank + a]) - roi[a]);
      ORKNN_RETURN_IF_ERROR(output_dim(n, a, std::floor(extent * static_cast<double>(s)), s, &out[a]));
    }
  } else {
    for (size_t i = 0; i < axes.size(); ++i)
      if (sizes_in[i] < 1 || sizes_in[i] > kMaxDim)
        return ORKNN_NODE_ERR(n, "sizes[%zu] = %lld must be in [1, %lld]", i, (long long)sizes_in[i],
                              (long long)kMaxDim);
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        const size_t a = static_cast<size_t>(axes[i]);
        out[a] = sizes_in[i];
        scales[a] = static_cast<float>(sizes_in[i]) / static_cast<float>(x.shape[a]);
      }
    } else {
      // One scale for all listed axes: the smallest (not_larger) or largest (not_smaller) ratio.
      float s = static_cast<float>(sizes_in[0]) / static_cast<float>(x.shape[static_cast<size_t>(axes[0])]);
      for (size_t i = 1; i < axes.size(); ++i) {
        const float r = static_cast<float>(sizes_in[i]) / static_cast<float>(x.shape[static_cast<size_t>(axes[i])]);
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      for (size_t i = 0; i < axes.size(); ++i) {
        const size_t a = static_cast<size_t>(axes[i]);
        scales[a] = s;
        const double size = std::floor(static_cast<double>(s) * static_cast<double>(x.shape[a]) + 0.5);
        ORKNN_RETURN_IF_ERROR(output_dim(n, a, size, s, &out[a]));
      }
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] < 1)
      return ORKNN_NODE_ERR(n, "output dim %zu would be %lld (scale %g)", i, (long long)out[i], scales[i]);
    if (!(scales[i] > 0.f)) return ORKNN_NODE_ERR(n, "scale of dim %zu is %g, must be > 0", i, scales[i]);
  }

  n.attrs.set_string("mode", mode);
  n.attrs.set_string("coordinate_transformation_mode", ctm);
  n.attrs.set_string("nearest_mode", nearest_mode);
  n.attrs.set_float("cubic_coeff_a", n.attrs.get_float("cubic_coeff_a", -0.75f));
  n.attrs.set_int("exclude_outside", exclude_outside);
  n.attrs.set_float("extrapolation_value", n.attrs.get_float("extrapolation_value", 0.f));
  n.attrs.set_int("antialias", 0);
  n.attrs.set_floats("scales", scales);
  n.attrs.set_ints("sizes", out);
  if (ctm == "tf_crop_and_resize") {
    n.attrs.set_floats("roi", roi);
  } else {
    n.attrs.erase("roi");
  }
  n.attrs.erase("axes");
  n.attrs.erase("keep_aspect_ratio_policy");
  for (size_t i = 1; i < n.inputs.size(); ++i) n.inputs[i] = -1;
  // After the parameter inputs are gone: only X may (and must) be quantized.
  if (quantized) ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  return set_output(g, n, 0, out, output_dtype(g, n, 0, DType::kF32));
}

}  // namespace orknn
