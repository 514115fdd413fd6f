// oneDNN fp32 Conv and ConvTranspose (1-D, 2-D and 3-D; grouped, depthwise, dilated, strided,
// asymmetric pads, optional bias, Conv's residual input as a sum post-op, fused activation as
// post-ops, but for Sigmoid and SiLU on AVX-512 CPUs, and the activations oneDNN's Winograd does
// not take when the convolution runs on it: see act_in_own_pass, act_after_winograd).
//
// Weights are constants: they are reordered once, in prepare(), into the layout the primitive
// prefers. Activations: see conv_layout_candidates() and docs/kernels.md for the measurement.
// GCC 12 reports the _mm512_undefined_*() placeholders inside its own AVX-512 intrinsics (here
// through act_round_range) as "may be used uninitialized": a false positive of those headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <cmath>
#include <string>
#include <vector>

#include "kernels/onednn/onednn_common.h"
#include "kernels/parallel.h"
#include "kernels/x86/cpu_features.h"
#include "kernels/x86/fused_act_avx512.h"

namespace orknn::onednn {
namespace {

using dnnl::memory;

// Geometry of a Conv/ConvTranspose node after infer (attributes are explicit then).
struct ConvGeometry {
  memory::dims src, dst, weights;  // weights: oneDNN logical dims ({G,O/G,I/G,k...} when grouped)
  std::vector<int> weights_storage;  // storage order of the ONNX weight bytes over `weights`
  memory::dims bias;                 // {OC} or empty
  memory::dims strides, dilations, pad_l, pad_r;  // dilations in oneDNN convention (d - 1)
  int64_t group = 1;
  bool valid = false;
};

ConvGeometry conv_geometry(const Graph& g, const Node& n, bool transposed) {
  ConvGeometry geo;
  if (n.inputs.size() < 2 || n.outputs.empty()) return geo;
  const Tensor* x = g.input(n, 0);
  const Tensor* w = g.input(n, 1);
  const Tensor* b = g.input(n, 2);
  if (!x || !w || n.outputs[0] < 0) return geo;
  const Tensor& y = g.tensor(n.outputs[0]);
  const size_t rank = x->shape.size();
  if (rank < 3 || rank > 5 || w->shape.size() != rank || y.shape.size() != rank) return geo;
  const size_t sp = rank - 2;
  const int64_t group = n.attrs.get_int("group", 1);
  const std::vector<int64_t> strides = n.attrs.get_ints("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> dil = n.attrs.get_ints("dilations", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (group < 1 || strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp) return geo;
  for (size_t i = 0; i < sp; ++i) {
    if (strides[i] < 1 || dil[i] < 1 || pads[i] < 0 || pads[sp + i] < 0) return geo;
  }
  if (n.attrs.has("kernel_shape")) {
    const std::vector<int64_t> ks = n.attrs.get_ints("kernel_shape");
    if (ks.size() != sp) return geo;
    for (size_t i = 0; i < sp; ++i)
      if (ks[i] != w->shape[2 + i]) return geo;
  }
  const int64_t c_in = x->shape[1];
  const int64_t c_out = y.shape[1];
  if (c_in % group || c_out % group) return geo;
  // ONNX Conv weights [OC, IC/G, k...]; ConvTranspose weights [IC, OC/G, k...].
  if (!transposed && (w->shape[0] != c_out || w->shape[1] != c_in / group)) return geo;
  if (transposed && (w->shape[0] != c_in || w->shape[1] != c_out / group)) return geo;

  geo.src = to_dims(x->shape);
  geo.dst = to_dims(y.shape);
  const memory::dims kdims(w->shape.begin() + 2, w->shape.end());
  // Logical oneDNN weights: [G,] O/G, I/G, k...
  if (group > 1) geo.weights = {group, c_out / group, c_in / group};
  else geo.weights = {c_out, c_in};
  geo.weights.insert(geo.weights.end(), kdims.begin(), kdims.end());
  const int lead = group > 1 ? 1 : 0;  // index of the O/G dim
  geo.weights_storage.clear();
  if (group > 1) geo.weights_storage.push_back(0);
  if (transposed) {  // bytes are [G,] I/G, O/G, k...
    geo.weights_storage.push_back(lead + 1);
    geo.weights_storage.push_back(lead);
  } else {  // bytes are [G,] O/G, I/G, k...
    geo.weights_storage.push_back(lead);
    geo.weights_storage.push_back(lead + 1);
  }
  for (size_t i = 0; i < sp; ++i) geo.weights_storage.push_back(lead + 2 + static_cast<int>(i));

  if (b) {
    if (b->shape.size() != 1 || b->shape[0] != c_out) return geo;
    geo.bias = {c_out};
  }
  for (size_t i = 0; i < sp; ++i) {
    geo.strides.push_back(strides[i]);
    geo.dilations.push_back(dil[i] - 1);
    geo.pad_l.push_back(pads[i]);
    geo.pad_r.push_back(pads[sp + i]);
  }
  geo.group = group;
  geo.valid = true;
  return geo;
}

bool is_depthwise(const ConvGeometry& geo) {
  return geo.group > 1 && geo.weights[1] == 1 && geo.weights[2] == 1;  // one input, one output channel per group
}

bool is_pointwise(const ConvGeometry& geo) {
  if (geo.group != 1) return false;
  for (size_t i = 2; i < geo.weights.size(); ++i)
    if (geo.weights[i] != 1) return false;
  return true;
}

// Activation layouts to try, best first, from the per-layer measurement in docs/kernels.md
// ("Activation layout"). The arena holds NCHW, so every layout but kPlain costs a reorder of src and
// dst per run. oneDNN's own choice (kAny: NHWC for its brgemm convolutions) is fastest for dense
// spatial kernels; for 1x1 and depthwise convolutions, whose compute is small next to the reorders,
// nChw16c wins because NCHW <-> nChw16c is a cheap blocked copy while NCHW <-> NHWC is a transpose.
// kPlain (oneDNN's NCHW GEMM convolution) is never the fastest once the layout is chosen this way.
// When the runtime keeps the activations in nChw16c (KernelContext::in_blocked/out_blocked), the
// nChw16c primitive needs no reorder at all. Dense kxk convolutions still prefer oneDNN's own
// (brgemm, NHWC) layout, measured faster than its nChw16c implementation even counting reorders,
// except a stem (`stem_to_blocked`: fewer than 16 input channels read from NCHW, output kept
// blocked), where oneDNN's nChw16c kernel reads the NCHW image directly: mobilenet_v2's 3->32 3x3
// s2 117 us against brgemm's 111 us plus two reorders; resnet's 3->64 7x7 s2 1166 against 1074 plus
// two (one thread, primitive alone).
// A strided ungrouped convolution of at least 16 input channels (YOLO's 3x3 stride-2 downsampling
// layers) runs on nChw16c too: oneDNN's nChw16c and brgemm NHWC kernels take the same time there
// (16->32 at 320x320: 2070 against 2119 us, 64->64 at 160x160: 4212 against 4092, 128->128 at
// 80x80: 4008 against 4002; primitive alone, one thread), so the reorders around brgemm are saved
// (blocked activations), or are blocked copies instead of transposes (NCHW ones): yolo11n's and
// yolov8n's 16->32 at 320x320 3.2 -> 2.4 ms in the model. OPENRKNN_DISABLE_KERNELS=
// onednn_conv_strided_blocked keeps oneDNN's choice (A/B).
bool strided_blocked(const ConvGeometry& geo) {
  // (On 7x7 outputs brgemm stays ahead: resnet50's 512->512 3x3 s2 to 7x7, 2124 us against 2352.)
  if (geo.group != 1 || geo.src.size() != 4 || geo.weights[1] < 16 || geo.dst[2] * geo.dst[3] < 14 * 14) return false;
  if (geo.strides[0] == 1 && geo.strides[1] == 1) return false;
  return !kernel_disabled("onednn_conv_strided_blocked");
}

std::vector<ActLayout> conv_layout_candidates(const ConvGeometry& geo, bool transposed, bool stem_to_blocked) {
  const ActLayout forced = act_layout_override();
  if (forced != ActLayout::kAuto) return {forced};
  if (!transposed && stem_to_blocked) return {ActLayout::kPlainToBlocked16, ActLayout::kAny};
  if (!transposed && strided_blocked(geo)) return {ActLayout::kChannelBlocked16, ActLayout::kAny};
  if (!transposed && (is_pointwise(geo) || is_depthwise(geo))) return {ActLayout::kChannelBlocked16, ActLayout::kAny};
  return {ActLayout::kAny};
}

// nCw16c / nChw16c / nCdhw16c for the rank.
memory::format_tag channel_blocked16_tag(size_t rank) {
  if (rank == 3) return memory::format_tag::nCw16c;
  if (rank == 4) return memory::format_tag::nChw16c;
  return memory::format_tag::nCdhw16c;
}

memory::desc activation_md(const memory::dims& dims, ActLayout layout) {
  switch (layout) {
    case ActLayout::kPlain: return plain_f32(dims);
    case ActLayout::kChannelBlocked16:
      return memory::desc(dims, memory::data_type::f32, channel_blocked16_tag(dims.size()));
    default: return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
  }
}

// Sigmoid and SiLU run in the kernel's own pass over the output after the convolution (apply_act
// of x86/fused_act_avx512.h, the hand-written kernels' e^x, within 8 float ulps of the reference),
// which also does the fp16 rounding the runtime would otherwise do in a pass of its own. oneDNN
// 2.6's logistic/swish post-ops cost more than the convolution: efficientnet_b0's 16->96 1x1 at
// 112x112, one thread, took 178 us without post-op and 566 us with swish in a microbenchmark; in
// the model, with the runtime's rounding pass after it, 537-545 us, and 498-504 us with this pass
// (docs/kernels.md). OPENRKNN_DISABLE_KERNELS=onednn_conv_act_pass keeps the post-ops (A/B).
bool act_in_own_pass(const Node& n) {
  if (kernel_disabled("onednn_conv_act_pass") || !x86::cpu_avx512f()) return false;
  const FusedAct a = read_fused_act(n.attrs).act;
  return a == FusedAct::kSigmoid || a == FusedAct::kSilu;
}

// Winograd (oneDNN's F(2x2,3x3) / F(4x4,3x3) avx512_core implementations) for 2-D 3x3 stride-1
// undilated ungrouped convolutions: about half the time of the direct convolution on the 3x3 layers
// of resnet18/50 (docs/kernels.md, "Winograd"). Its float32 error is about 1e-6 of the output's
// magnitude, ten times the direct convolution's but 500 times below fp16's half ulp, so it is used
// only when the output is stored as fp16 (ctx.round_fp16); a pure fp32 model keeps the direct
// convolution. oneDNN serves it only without post-ops or with Relu; otherwise make_pd throws and the
// direct convolution stays. OPENRKNN_DISABLE_KERNELS=onednn_winograd turns it off (A/B).
bool winograd_candidate(const ConvGeometry& geo) {
  if (kernel_disabled("onednn_winograd") || geo.group != 1 || geo.src.size() != 4) return false;
  if (geo.weights[2] != 3 || geo.weights[3] != 3) return false;
  if (geo.strides[0] != 1 || geo.strides[1] != 1 || geo.dilations[0] != 0 || geo.dilations[1] != 0) return false;
  // Below 16 input channels or 8 output channels the transform costs more than it saves
  // (measured: 3->32 and 8->16 lose, 16->24 and every wider shape win, and so do 16->8 and 32->8:
  // yolo11n's 16->8 at 160x160 766 us against brgemm's 1018, primitive alone, 1215 -> 1062 in the
  // model). Below 14x14 output pixels per image the gain is small (512->512 at 7x7: 17%) while
  // oneDNN's reorder of the weights into the Winograd layout is slow (166 ms for those 9 MB, one
  // thread) and rknn_init pays it.
  if (geo.dst[2] * geo.dst[3] < 14 * 14) return false;
  return geo.weights[0] >= 8 && geo.weights[1] >= 16;
}

// The activation after a Winograd convolution: oneDNN's Winograd takes no post-op but Relu (and
// the residual's sum), so a node whose fused activation is anything else (LeakyRelu in YOLOv7,
// HardSwish, Clip, HardSigmoid) would keep the direct convolution. Instead the Winograd
// convolution runs without it and the kernel's own pass (after_steps, as for act_in_own_pass)
// applies it in place with the fp16 rounding, which the runtime would otherwise do in a pass of
// its own: the activation costs no extra pass over memory. apply_act is bit-identical to the
// reference's activation, so the result differs from the direct convolution's only by Winograd's
// float error. OPENRKNN_DISABLE_KERNELS=onednn_winograd_act keeps such nodes direct (A/B).
bool act_after_winograd(const Node& n, const ConvGeometry& geo) {
  if (kernel_disabled("onednn_winograd_act") || !x86::cpu_avx512f() || act_in_own_pass(n)) return false;
  const FusedAct a = read_fused_act(n.attrs).act;
  return a != FusedAct::kNone && a != FusedAct::kRelu && winograd_candidate(geo);
}

// True when the node's activation maps 0 to +0, so a pass over a padded nChw16c output (the
// padding lanes hold zeros) leaves the padding zeros (kernel.h BlockedIo::kEachPadded).
bool act_keeps_zero(const Node& n) {
  const float z = read_fused_act(n.attrs)(0.f);
  return z == 0.f && !std::signbit(z);
}

// Builds the primitive descriptor for one activation layout (may throw dnnl::error).
template <bool kTransposed>
auto make_pd(const Node& n, const ConvGeometry& geo, ActLayout layout, bool winograd = false) {
  const bool stem = layout == ActLayout::kPlainToBlocked16;
  const memory::desc src = activation_md(geo.src, stem ? ActLayout::kPlain : layout);
  const memory::desc dst = activation_md(geo.dst, stem ? ActLayout::kChannelBlocked16 : layout);
  const memory::desc any_w(geo.weights, memory::data_type::f32, memory::format_tag::any);
  const memory::desc bias_md = geo.bias.empty() ? memory::desc() : plain_f32(geo.bias);

  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::post_ops ops;
  // Conv's residual input: a sum post-op, y = conv + B + (what dst holds), before the activation;
  // build() puts the residual into dst first unless dst already holds its bytes.
  if (conv_residual(n) >= 0) ops.append_sum(1.f);
  const bool own_pass = act_in_own_pass(n) || (winograd && act_after_winograd(n, geo));
  if (!own_pass && !append_fused_act(n, ops))
    throw dnnl::error(dnnl_unimplemented, "fused activation not expressible");
  attr.set_post_ops(ops);
  if constexpr (kTransposed) {
    dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                        src, any_w, bias_md, dst, geo.strides, geo.dilations, geo.pad_l,
                                        geo.pad_r);
    return dnnl::deconvolution_forward::primitive_desc(d, attr, cpu_engine());
  } else {
    // convolution_direct unless the caller asked for Winograd (winograd_candidate); never _auto.
    const dnnl::algorithm alg = winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, alg,
                                      src, any_w, bias_md, dst, geo.strides, geo.dilations, geo.pad_l,
                                      geo.pad_r);
    return dnnl::convolution_forward::primitive_desc(d, attr, cpu_engine());
  }
}

// The first candidate layout that oneDNN serves with an optimised implementation; throws the
// last dnnl::error when there is none (supports() then declines the node).
template <bool kTransposed>
auto select_pd(const Node& n, const ConvGeometry& geo, bool stem_to_blocked = false) {
  using Pd = decltype(make_pd<kTransposed>(n, geo, ActLayout::kAny));
  dnnl::error last(dnnl_unimplemented, "no optimised oneDNN implementation");
  for (ActLayout layout : conv_layout_candidates(geo, kTransposed, stem_to_blocked)) {
    try {
      Pd pd = make_pd<kTransposed>(n, geo, layout);
      if (!is_reference_impl(pd)) return pd;
    } catch (const dnnl::error& e) {
      last = e;
    }
  }
  throw last;
}

template <bool kTransposed>
bool conv_supports(const Graph& g, const Node& n) {
  if (!all_f32(g, n) || n.outputs.size() != 1) return false;
  const Tensor* w = g.input(n, 1);
  if (!w || !w->is_const()) return false;  // weights are packed once at prepare
  ConvGeometry geo = conv_geometry(g, n, kTransposed);
  if (!geo.valid) return false;
  return probe_ok([&] { return select_pd<kTransposed>(n, geo); });
}

template <bool kTransposed>
class ConvKernel final : public OnednnKernel {
 public:
  // oneDNN pads nChw16c itself (its descriptor of C channels takes ceil(C / 16) blocks) and writes
  // zeros into the padding, which after_steps' own pass (over the padded bytes) keeps only for an
  // activation that maps 0 to 0: Sigmoid(0) is 0.5.
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    const Tensor* x = g.input(n, 0);
    if (!x || x->shape.size() != 4) return BlockedIo::kNone;
    if (act_in_own_pass(n) && !act_keeps_zero(n)) return BlockedIo::kEach;
    // (Asked before the fp16 mode is known: in pure fp32 such a node runs direct, yet unpadded.)
    if (!kTransposed && !act_keeps_zero(n) && act_after_winograd(n, conv_geometry(g, n, false)))
      return BlockedIo::kEach;
    return BlockedIo::kEachPadded;
  }
  bool rounds_fp16_outputs() const override { return own_pass_; }

 protected:
  Status build(const KernelContext& ctx) override {
    ConvGeometry geo = conv_geometry(*ctx.graph, *ctx.node, kTransposed);
    if (!geo.valid)
      return ORKNN_ERR(kInvalidModel, "%s (%s): attributes/shapes not supported by the oneDNN kernel",
                       ctx.node->name.c_str(), op_name(ctx.node->op));
    const bool stem_to_blocked = ctx.output_blocked(0) && !ctx.input_blocked(0) && geo.weights[geo.group > 1 ? 2 : 1] < 16;
    auto pd = preferred_pd(
        !kTransposed && ctx.round_fp16 && winograd_candidate(geo),
        [&] { return make_pd<kTransposed>(*ctx.node, geo, ActLayout::kAny, /*winograd=*/true); },
        [&] { return select_pd<kTransposed>(*ctx.node, geo, stem_to_blocked); });
    set_impl_name(pd);
    own_pass_ = act_in_own_pass(*ctx.node) ||
                (impl_name().find("wino") != std::string::npos && act_after_winograd(*ctx.node, geo));
    act_ = read_act_vec(ctx.node->attrs);

    // The arena's layout of each activation: NCHW, or nChw16c where the runtime keeps it blocked.
    memory user_src = wrap(ctx.input_blocked(0) ? blocked16_f32(geo.src) : plain_f32(geo.src), ctx.inputs[0]);
    memory user_dst = wrap(ctx.output_blocked(0) ? blocked16_f32(geo.dst) : plain_f32(geo.dst), ctx.outputs[0]);
    memory user_w = wrap(permuted_f32(geo.weights, geo.weights_storage), ctx.inputs[1]);
    weights_ = convert_const(user_w, pd.weights_desc());

    memory src = reorder_in(user_src, pd.src_desc());
    memory dst = reorder_out_buffer(user_dst, pd.dst_desc());
    if (conv_residual(*ctx.node) >= 0) {
      // The residual has the output's layout (runtime/layout_assignment.h). When the arena planner gave
      // the output the residual's bytes (graph/planner.h) and the primitive writes them directly,
      // dst already holds the residual; otherwise it is copied (or reordered) into dst first.
      memory user_res = wrap(ctx.input_blocked(3) ? blocked16_f32(geo.dst) : plain_f32(geo.dst), ctx.inputs[3]);
      if (ctx.inputs[3] == ctx.outputs[0] && ctx.input_blocked(3) != ctx.output_blocked(0))
        return ORKNN_ERR(kFail, "%s: the residual shares the output's bytes in another layout (a runtime bug)",
                         ctx.node->name.c_str());
      if (dst.get_data_handle() != ctx.inputs[3]) {
        dnnl::reorder::primitive_desc rpd(user_res, dst, user_scratchpad_attr());
        add_step(dnnl::reorder(rpd), rpd, {{DNNL_ARG_FROM, user_res}, {DNNL_ARG_TO, dst}});
      }
    }
    std::vector<std::pair<int, memory>> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst}};
    if (!geo.bias.empty()) args.push_back({DNNL_ARG_BIAS, wrap(plain_f32(geo.bias), ctx.inputs[2])});
    if constexpr (kTransposed) add_step(dnnl::deconvolution_forward(pd), pd, std::move(args));
    else add_step(dnnl::convolution_forward(pd), pd, std::move(args));
    return Status::Ok();
  }

  void after_steps(const KernelContext& ctx) override {
    if (!own_pass_) return;
    // Element-wise over the bytes, in either layout, padding lanes included (a blocked output of a
    // channel count that is not a multiple of 16 is padded; blocked_io allows that only for an
    // activation that keeps those zeros).
    float* y = static_cast<float*>(ctx.outputs[0]);
    const Shape& shape = ctx.out_tensor(0).shape;
    int64_t n = ctx.out_tensor(0).numel();
    if (ctx.output_blocked(0) && shape.size() == 4 && shape[1] % 16) n = n / shape[1] * ((shape[1] + 15) / 16 * 16);
    parallel_ranges(
        n, threads_for(n, kMinPassElementsPerThread, ctx.num_threads),
        [&](int64_t b, int64_t e, int) { act_round_range(y, b, e, act_, ctx.round_fp16); }, 16);
  }

 private:
  memory weights_;
  // act_in_own_pass or act_after_winograd: the activation (and fp16 rounding) in after_steps
  bool own_pass_ = false;
  ActVec act_;
};

using ConvF32 = ConvKernel<false>;
using DeconvF32 = ConvKernel<true>;

bool supports_conv(const Graph& g, const Node& n) { return conv_supports<false>(g, n); }
bool supports_deconv(const Graph& g, const Node& n) { return conv_supports<true>(g, n); }

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "onednn_conv_f32", kPriorityGeneral, supports_conv, ConvF32);
ORKNN_REGISTER_KERNEL(ConvTranspose, "onednn_deconv_f32", kPriorityGeneral, supports_deconv, DeconvF32);

}  // namespace orknn::onednn
