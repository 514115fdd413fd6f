// oneDNN INT8 Conv (1-D, 2-D, 3-D; grouped, depthwise, strided, dilated, padded; fused Relu/Clip, and
// on Conv the value activations LeakyRelu/HardSwish/HardSigmoid in the requantization),
// bit-exact with the quantized reference kernel (docs/numerics.md; the arithmetic argument is in
// int8_common.h).
//
// Per run:
//   1. pack: the NCHW int8 input is transposed into a channels-last u8 buffer (x + 128) that already
//      holds the padding: the border is filled with zp_x + 128 once at prepare and never written
//      again. Padding taps then contribute (zp_u8 - zp_u8) * w = 0, which is the spec's "padding
//      taps are skipped", and the convolution itself runs unpadded, so that the compensation
//      comp[c] = bias_q[c] - zp_u8 * sum(w[c]) is one constant per output channel.
//   2. oneDNN convolution u8 x s8 -> s32, channels-last (weights reordered once at prepare).
//   3. requantize: int32 + comp[c] -> float * M[c] -> rne -> + zp_y -> saturate -> Relu/Clip, written
//      straight into the NCHW int8 output (the transposition is part of the requantization pass).
//
// 1-D convolutions run as 2-D ones with height 1.
//
// Bands: steps 2 and 3 as above write and re-read the whole int32 accumulator image, four bytes
// per output value (4.8 MB for a 96x112x112 output), which made the large layers memory-bound: a
// 16->96 1x1 convolution spent ~0.5 ms on a 0.06 ms product. A 2-D Conv whose accumulators exceed
// the band budget runs instead as bands of output rows, each thread taking whole bands: a band's
// convolution (its own primitive, single-threaded, on the band's rows of the packed input, which
// already holds the padding) writes into the thread's small accumulator buffer, and the thread
// requantizes it at once, while it is still in cache. Bands are ordinary convolutions of the same
// weights, so the results are those of the whole-image run.
//
// ConvTranspose runs on oneDNN's deconvolution the same way, except for the padding: a transposed
// convolution has no input padding (its pads crop the output), and the taps missing at the
// borders make sum(w) over the contributing taps depend on the output position. So the
// compensation is a map comp[pixel][c] = bias_q[c] - zp_u8 * deconv(ones)[pixel][c], computed at
// prepare by running the primitive once on an all-ones input (exact: |deconv(ones)| is at most
// 1/255 of the worst case the implementation was chosen for, deconv_weight_sums()).

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/log.h"
#include "kernels/onednn/int8_common.h"
#include "kernels/onednn/onednn_common.h"
#include "kernels/parallel.h"

namespace orknn::onednn {
namespace {

using dnnl::memory;

// Geometry of a quantized Conv after infer (explicit attributes), spatial dims as (D, H, W) with
// leading ones for 1-D and 2-D.
struct ConvInt8Geometry {
  int64_t batch = 0, c_in = 0, c_out = 0, group = 1;
  int spatial = 0;  // ONNX spatial rank, 1..3
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, pad_begin[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
  int64_t padded[3] = {1, 1, 1};     // size of the packed u8 input (Conv: including the padding)
  int64_t pack_pad[3] = {0, 0, 0};   // where the input starts inside it (Conv: pad_begin, else 0)
  bool transposed = false;           // ConvTranspose
  bool valid = false;

  int64_t out_pixels() const { return out[0] * out[1] * out[2]; }
  int64_t in_pixels() const { return in[0] * in[1] * in[2]; }
  int64_t taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  int dnnl_spatial() const { return spatial == 3 ? 3 : 2; }
  // The last `dnnl_spatial()` values of a (D, H, W) triple.
  memory::dims tail(const int64_t* v) const {
    return spatial == 3 ? memory::dims{v[0], v[1], v[2]} : memory::dims{v[1], v[2]};
  }
};

ConvInt8Geometry conv_int8_geometry(const Graph& g, const Node& n, bool transposed) {
  ConvInt8Geometry geo;
  geo.transposed = transposed;
  if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1 || n.outputs[0] < 0) return geo;
  const Tensor* x = g.input(n, 0);
  const Tensor* w = g.input(n, 1);
  if (!x || !w) return geo;
  const Tensor& y = g.tensor(n.outputs[0]);
  const size_t rank = x->shape.size();
  if (rank < 3 || rank > 5 || w->shape.size() != rank || y.shape.size() != rank) return geo;
  const int sp = static_cast<int>(rank) - 2;
  const int64_t group = n.attrs.get_int("group", 1);
  const std::vector<int64_t> strides = n.attrs.get_ints("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> dil = n.attrs.get_ints("dilations", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", std::vector<int64_t>(2 * sp, 0));
  const std::vector<int64_t> out_pad = n.attrs.get_ints("output_padding", std::vector<int64_t>(sp, 0));
  const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return geo;  // infer resolves SAME_* into pads
  if (transposed && n.attrs.has("output_shape")) return geo;     // infer turns it into pads
  if (group < 1 || strides.size() != static_cast<size_t>(sp) || dil.size() != static_cast<size_t>(sp) ||
      pads.size() != static_cast<size_t>(2 * sp) || out_pad.size() != static_cast<size_t>(sp))
    return geo;
  for (int64_t d : x->shape)
    if (d < 1) return geo;
  for (int64_t d : w->shape)
    if (d < 1) return geo;
  geo.batch = x->shape[0];
  geo.c_in = x->shape[1];
  geo.group = group;
  geo.spatial = sp;
  // Conv weights [OC, IC/G, k...]; ConvTranspose weights [IC, OC/G, k...].
  geo.c_out = transposed ? w->shape[1] * group : w->shape[0];
  if (geo.c_in % group || geo.c_out % group) return geo;
  if (!transposed && w->shape[1] * group != geo.c_in) return geo;
  if (transposed && w->shape[0] != geo.c_in) return geo;
  if (y.shape[0] != geo.batch || y.shape[1] != geo.c_out) return geo;
  if (n.attrs.has("kernel_shape")) {
    const std::vector<int64_t> ks = n.attrs.get_ints("kernel_shape");
    if (ks.size() != static_cast<size_t>(sp)) return geo;
    for (int i = 0; i < sp; ++i)
      if (ks[i] != w->shape[2 + i]) return geo;
  }
  const int off = 3 - sp;
  for (int i = 0; i < sp; ++i) {
    const int j = off + i;
    geo.in[j] = x->shape[2 + i];
    geo.out[j] = y.shape[2 + i];
    geo.kernel[j] = w->shape[2 + i];
    geo.stride[j] = strides[i];
    geo.dilation[j] = dil[i];
    geo.pad_begin[j] = pads[i];
    geo.pad_end[j] = pads[sp + i];
    if (strides[i] < 1 || dil[i] < 1 || pads[i] < 0 || pads[sp + i] < 0 || out_pad[i] < 0) return geo;
    const int64_t extent = (geo.kernel[j] - 1) * geo.dilation[j] + 1;
    if (transposed) {
      geo.padded[j] = geo.in[j];
      const int64_t full = geo.stride[j] * (geo.in[j] - 1) + out_pad[i] + extent;
      if (full - geo.pad_begin[j] - geo.pad_end[j] != geo.out[j]) return geo;
    } else {
      if (out_pad[i] != 0) return geo;
      geo.pack_pad[j] = geo.pad_begin[j];
      geo.padded[j] = geo.in[j] + geo.pad_begin[j] + geo.pad_end[j];
      if (geo.padded[j] < extent || (geo.padded[j] - extent) / geo.stride[j] + 1 != geo.out[j]) return geo;
    }
  }
  // The packed input must stay a sane buffer whatever the pads are (hostile models): at most
  // 2^31 bytes (the reference kernel takes anything else).
  int64_t packed = geo.batch * geo.c_in;  // both <= 2^31 after infer
  for (int j = 0; j < 3; ++j) {
    if (packed > (int64_t{1} << 31) / geo.padded[j]) return geo;
    packed *= geo.padded[j];
  }
  geo.valid = true;
  return geo;
}

// oneDNN descriptors of the geometry.
struct ConvInt8Descs {
  memory::desc src, weights_any, weights_user, dst;
  memory::dims strides, dilations, pad_l, pad_r;
};

ConvInt8Descs conv_int8_descs(const ConvInt8Geometry& geo) {
  ConvInt8Descs d;
  const bool three = geo.spatial == 3;
  memory::dims src = {geo.batch, geo.c_in}, dst = {geo.batch, geo.c_out};
  for (int64_t v : geo.tail(geo.padded)) src.push_back(v);
  for (int64_t v : geo.tail(geo.out)) dst.push_back(v);
  memory::dims wd;
  if (geo.group > 1) wd = {geo.group, geo.c_out / geo.group, geo.c_in / geo.group};
  else wd = {geo.c_out, geo.c_in};
  for (int64_t v : geo.tail(geo.kernel)) wd.push_back(v);
  const memory::format_tag cl = three ? memory::format_tag::ndhwc : memory::format_tag::nhwc;
  d.src = memory::desc(src, memory::data_type::u8, cl);
  d.dst = memory::desc(dst, memory::data_type::s32, cl);
  d.weights_any = memory::desc(wd, memory::data_type::s8, memory::format_tag::any);
  if (!geo.transposed) {
    // The ONNX bytes [OC, IC/G, k...] are row-major over the (grouped) logical dims.
    d.weights_user = memory::desc(wd, memory::data_type::s8, plain_strides(wd));
  } else {
    // The ONNX bytes [IC, OC/G, k...] = [G, IC/G, OC/G, k...]: the two channel dims swapped.
    const int lead = geo.group > 1 ? 1 : 0;  // index of the OC/G dim
    std::vector<int> order;
    if (geo.group > 1) order.push_back(0);
    order.push_back(lead + 1);
    order.push_back(lead);
    for (int i = lead + 2; i < static_cast<int>(wd.size()); ++i) order.push_back(i);
    memory::dims st(wd.size(), 1);
    memory::dim step = 1;
    for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k) {
      st[order[k]] = step;
      step *= wd[order[k]];
    }
    d.weights_user = memory::desc(wd, memory::data_type::s8, st);
  }
  d.strides = geo.tail(geo.stride);
  for (int64_t v : geo.tail(geo.dilation)) d.dilations.push_back(v - 1);
  if (geo.transposed) {  // the output crop; a Conv's padding is in the packed input
    d.pad_l = geo.tail(geo.pad_begin);
    d.pad_r = geo.tail(geo.pad_end);
  } else {
    d.pad_l = d.pad_r = memory::dims(static_cast<size_t>(geo.dnnl_spatial()), 0);
  }
  return d;
}

// The primitive descriptor on an exact implementation (throws dnnl::error if there is none).
dnnl::convolution_forward::primitive_desc conv_int8_pd(const ConvInt8Descs& d, int64_t worst_acc) {
  dnnl::convolution_forward::desc cd(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, d.src,
                                     d.weights_any, d.dst, d.strides, d.dilations, d.pad_l, d.pad_r);
  dnnl::convolution_forward::primitive_desc pd(cd, user_scratchpad_attr(), cpu_engine());
  if (!select_exact_int8_impl(pd, worst_acc))
    throw dnnl::error(dnnl_unimplemented, "no oneDNN implementation with exact int32 accumulators");
  return pd;
}

dnnl::deconvolution_forward::primitive_desc deconv_int8_pd(const ConvInt8Descs& d, int64_t worst_acc) {
  dnnl::deconvolution_forward::desc dd(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                       d.src, d.weights_any, d.dst, d.strides, d.dilations, d.pad_l, d.pad_r);
  dnnl::deconvolution_forward::primitive_desc pd(dd, user_scratchpad_attr(), cpu_engine());
  if (!select_exact_int8_impl(pd, worst_acc))
    throw dnnl::error(dnnl_unimplemented, "no oneDNN implementation with exact int32 accumulators");
  return pd;
}

// ConvTranspose weights [G, IC/G, OC/G, taps]: sum(w) per output channel, and the worst case of
// |sum(x_u8 * w)| for one output. Output position o receives tap t only when
// (o + pad_begin - t * dilation) is a multiple of the stride, so the taps of one output all lie in
// one residue class of t * dilation modulo the stride (per spatial dim): the bound is the largest
// class sum.
WeightSums deconv_weight_sums(const int8_t* w, const ConvInt8Geometry& geo) {
  WeightSums s;
  const int64_t cg = geo.c_in / geo.group, og = geo.c_out / geo.group, taps = geo.taps();
  s.sum.assign(static_cast<size_t>(geo.c_out), 0);
  // Residue class of every tap, numbered densely (at most `taps` classes whatever the strides).
  using Key = std::array<int64_t, 3>;
  std::vector<Key> tap_key(static_cast<size_t>(taps));
  for (int64_t kd = 0; kd < geo.kernel[0]; ++kd)
    for (int64_t kh = 0; kh < geo.kernel[1]; ++kh)
      for (int64_t kw = 0; kw < geo.kernel[2]; ++kw)
        tap_key[static_cast<size_t>((kd * geo.kernel[1] + kh) * geo.kernel[2] + kw)] = {
            kd * geo.dilation[0] % geo.stride[0], kh * geo.dilation[1] % geo.stride[1],
            kw * geo.dilation[2] % geo.stride[2]};
  std::vector<Key> keys = tap_key;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<size_t> tap_class(static_cast<size_t>(taps));
  for (size_t t = 0; t < tap_class.size(); ++t)
    tap_class[t] = static_cast<size_t>(std::lower_bound(keys.begin(), keys.end(), tap_key[t]) - keys.begin());

  std::vector<int64_t> pos(keys.size()), neg(keys.size());
  for (int64_t oc = 0; oc < geo.c_out; ++oc) {
    const int64_t gi = oc / og, m = oc % og;
    std::fill(pos.begin(), pos.end(), 0);
    std::fill(neg.begin(), neg.end(), 0);
    int64_t sum = 0;
    for (int64_t ic = 0; ic < cg; ++ic) {
      const int8_t* wt = w + ((gi * cg + ic) * og + m) * taps;
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t v = wt[t];
        const size_t c = tap_class[static_cast<size_t>(t)];
        sum += v;
        if (v > 0) pos[c] += v;
        else neg[c] -= v;
      }
    }
    s.sum[static_cast<size_t>(oc)] = sum;
    for (size_t c = 0; c < keys.size(); ++c) s.worst_u8_acc = std::max(s.worst_u8_acc, 255 * std::max(pos[c], neg[c]));
  }
  return s;
}

// Everything supports() and build() need; `ok` false when the node is not handled.
struct ConvInt8Plan {
  ConvInt8Geometry geo;
  Int8Quant quant;
  WeightSums sums;
  bool ok = false;
};

ConvInt8Plan conv_int8_plan(const Graph& g, const Node& n, bool transposed) {
  ConvInt8Plan p;
  p.geo = conv_int8_geometry(g, n, transposed);
  if (!p.geo.valid) return p;
  // Per-channel weights: Conv axis 0; ConvTranspose axis 1 = OC/G, so only with one group.
  if (!read_int8_quant(g, n, p.geo.c_out, transposed ? 1 : 0, &p.quant)) return p;
  if (transposed && p.geo.group > 1 && g.input(n, 1)->quant.scale.size() != 1) return p;
  if (!int8_bias_ok(g, n, 2, p.geo.c_out)) return p;
  const int8_t* w = g.input(n, 1)->const_ptr<int8_t>();
  if (transposed) {
    p.sums = deconv_weight_sums(w, p.geo);
  } else {
    const int64_t k = (p.geo.c_in / p.geo.group) * p.geo.taps();
    p.sums = int8_weight_sums(w, p.geo.c_out, k, k, 1);
  }
  p.ok = true;
  return p;
}

// Largest int32 accumulator block (bytes) a band may write: with the band's input rows and the
// weights it stays inside the 1 MB L2 of the machines measured. Convolutions whose whole
// accumulator image is at most kWholeImageBands bands' worth run whole: measured on mobilenet_v2's
// layers (bench/kernels/onednn_kernel_bench, BM_ConvInt8), bands win from about 1.5 MB of
// accumulators up and lose ~20% at 0.8 MB (docs/kernels.md, "INT8 convolution bands").
constexpr int64_t kDefaultBandAccBytes = 256 * 1024;
constexpr int64_t kWholeImageBands = 4;
int64_t g_band_acc_bytes = kDefaultBandAccBytes;

template <bool kTransposed>
bool supports_conv_int8(const Graph& g, const Node& n) {
  if (!is_quantized_node(g, n)) return false;
  const ConvInt8Plan p = conv_int8_plan(g, n, kTransposed);
  if (!p.ok) return false;
  try {
    if constexpr (kTransposed) deconv_int8_pd(conv_int8_descs(p.geo), p.sums.worst_u8_acc);
    else conv_int8_pd(conv_int8_descs(p.geo), p.sums.worst_u8_acc);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

template <bool kTransposed>
class ConvInt8 final : public OnednnKernel {
 public:
  // A 2-D Conv's input and output may each be NHWC (kernel.h): the packing then copies rows
  // instead of transposing, and the requantization writes rows.
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    const Tensor* x = g.input(n, 0);
    return !kTransposed && x && x->shape.size() == 4 ? BlockedIo::kEach : BlockedIo::kNone;
  }

 protected:
  Status build(const KernelContext& ctx) override {
    ConvInt8Plan plan = conv_int8_plan(*ctx.graph, *ctx.node, kTransposed);
    if (!plan.ok)
      return ORKNN_ERR(kInvalidModel, "%s (%s): not a quantized convolution the oneDNN INT8 kernel handles",
                       ctx.node->name.c_str(), op_name(ctx.node->op));
    geo_ = plan.geo;
    quant_ = std::move(plan.quant);
    const ConvInt8Descs d = conv_int8_descs(geo_);
    using Pd = std::conditional_t<kTransposed, dnnl::deconvolution_forward::primitive_desc,
                                  dnnl::convolution_forward::primitive_desc>;
    using Prim = std::conditional_t<kTransposed, dnnl::deconvolution_forward, dnnl::convolution_forward>;
    Pd pd;
    if constexpr (kTransposed) pd = deconv_int8_pd(d, plan.sums.worst_u8_acc);
    else pd = conv_int8_pd(d, plan.sums.worst_u8_acc);
    set_impl_name(pd);

    src_ = owned(d.src);
    if constexpr (!kTransposed) {
      if (build_bands(ctx, plan.sums.worst_u8_acc)) {
        comp_ = int8_compensation(plan.sums.sum, ctx.has_input(2) ? ctx.in<int32_t>(2) : nullptr, quant_.zp_x);
        std::memset(src_.get_data_handle(), static_cast<uint8_t>(quant_.zp_x + 128), d.src.get_size());
        requant_ = int8_requant_params(quant_, comp_);
        return Status::Ok();  // no whole-image step: after_steps() runs the bands
      }
    }
    weights_ = convert_const(wrap(d.weights_user, ctx.inputs[1]), pd.weights_desc());
    // The int32 accumulators live within one run (requantized by after_steps), so they come from
    // the executor's shared scratch; ConvTranspose runs the primitive once here (its compensation
    // map), before the scratch exists.
    dst_ = kTransposed ? owned(pd.dst_desc()) : transient(pd.dst_desc());
    const Prim prim(pd);
    const int32_t* bias = ctx.has_input(2) ? ctx.in<int32_t>(2) : nullptr;
    if constexpr (kTransposed) {
      comp_.assign(static_cast<size_t>(geo_.c_out), 0);
      comp_map_ = deconv_compensation(prim, pd, plan.sums.sum.size(), bias);
    } else {
      comp_ = int8_compensation(plan.sums.sum, bias, quant_.zp_x);
      // The padding border keeps zp_x + 128 for good: run() writes only the interior.
      std::memset(src_.get_data_handle(), static_cast<uint8_t>(quant_.zp_x + 128), d.src.get_size());
    }
    requant_ = int8_requant_params(quant_, comp_);
    add_step(prim, pd, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst_}});
    return Status::Ok();
  }

  void before_steps(const KernelContext& ctx) override {
    const int8_t* x = ctx.in<int8_t>(0);
    uint8_t* buf = static_cast<uint8_t*>(src_.get_data_handle());
    const ConvInt8Geometry& g = geo_;
    const int64_t c = g.c_in, plane = g.in_pixels();
    const int64_t row_px = g.padded[2] * c;          // bytes per packed row
    const int64_t slice = g.padded[1] * row_px;      // bytes per packed (D) slice
    const int64_t image = g.padded[0] * slice;       // bytes per packed image
    // Without W padding the H rows of a slice are contiguous on both sides: one run per slice.
    const bool w_unpadded = g.padded[2] == g.in[2];
    const int64_t rows_per_run = w_unpadded ? g.in[1] : 1;
    const int64_t runs_per_slice = g.in[1] / rows_per_run;
    const int64_t runs = g.batch * g.in[0] * runs_per_slice;
    const bool nhwc = ctx.input_blocked(0);
    parallel_ranges(runs, ctx.num_threads, [&](int64_t r0, int64_t r1, int) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t h = (r % runs_per_slice) * rows_per_run;
        const int64_t dz = (r / runs_per_slice) % g.in[0];
        const int64_t b = r / (runs_per_slice * g.in[0]);
        const int64_t pixel = (dz * g.in[1] + h) * g.in[2];  // of the run's first input pixel
        uint8_t* out = buf + b * image + (dz + g.pack_pad[0]) * slice + (h + g.pack_pad[1]) * row_px +
                       g.pack_pad[2] * c;
        if (nhwc)
          x86::int8_to_u8(x + (b * plane + pixel) * c, rows_per_run * g.in[2] * c, out);
        else
          x86::planar_to_u8_channels_last(x + b * c * plane + pixel, c, rows_per_run * g.in[2], plane, out, c);
      }
    });
  }

  void after_steps(const KernelContext& ctx) override {
    if (!bands_.empty()) {
      run_bands(ctx);
      return;
    }
    int32_t* acc = static_cast<int32_t*>(dst_.get_data_handle());
    int8_t* y = ctx.out<int8_t>(0);
    const int64_t oc = geo_.c_out, pixels = geo_.out_pixels();
    // Chunks of whole 16-pixel tiles, a few per thread.
    const int nt = ctx.num_threads > 0 ? ctx.num_threads : 1;
    const int64_t chunk = std::max<int64_t>(64, (pixels / (4 * nt) + 15) / 16 * 16);
    const int64_t per_image = (pixels + chunk - 1) / chunk;
    const int64_t jobs = geo_.batch * per_image;
    parallel_ranges(jobs, nt, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t b = j / per_image, p0 = (j % per_image) * chunk;
        const int64_t np = std::min(chunk, pixels - p0);
        int32_t* a = acc + (b * pixels + p0) * oc;
        if (kTransposed) add_wrapping(a, comp_map_.data() + p0 * oc, np * oc);
        requant_out(ctx, a, np, b * pixels + p0, y);
      }
    });
  }

 private:
  // One band shape (all bands but possibly the last of each image share the first).
  struct BandShape {
    int64_t rows = 0;
    dnnl::primitive prim;
    memory weights;
    size_t scratch_bytes = 0;
  };
  // Per thread: the accumulator block (seen with each band shape's dst desc), scratchpad, stream.
  struct BandSlot {
    memory acc[2];
    memory scratch;
    dnnl::stream stream;
  };
  // One band of one image: its shape and its rows of the packed input.
  struct Band {
    int shape = 0;
    int64_t image = 0, first_row = 0;
    memory src;
  };

  // Sets up banded execution when the node is a 2-D Conv whose accumulators exceed the budget.
  // False (whole-image execution) otherwise, or when oneDNN has no exact implementation for a band.
  bool build_bands(const KernelContext& ctx, int64_t worst_acc) {
    const ConvInt8Geometry& g = geo_;
    const int64_t out_h = g.out[1], row_acc = g.out[2] * g.c_out * 4;
    if (g.spatial != 2 || out_h < 2 || out_h * row_acc <= kWholeImageBands * g_band_acc_bytes) return false;
    const int64_t rows = std::max<int64_t>(1, std::min(out_h, g_band_acc_bytes / row_acc));
    const int64_t per_image = (out_h + rows - 1) / rows;
    const int64_t last_rows = out_h - (per_image - 1) * rows;
    const int64_t extent_h = (g.kernel[1] - 1) * g.dilation[1] + 1;
    try {
      ScopedOmpThreads one(1);  // a band runs on the thread that takes it
      std::vector<BandShape> shapes;
      for (int64_t r : {rows, last_rows}) {
        if (!shapes.empty() && r == rows) break;
        ConvInt8Geometry bg = g;
        bg.batch = 1;
        bg.out[1] = r;
        bg.padded[1] = (r - 1) * g.stride[1] + extent_h;
        const ConvInt8Descs bd = conv_int8_descs(bg);
        const auto pd = conv_int8_pd(bd, worst_acc);
        BandShape sh;
        sh.rows = r;
        sh.prim = dnnl::convolution_forward(pd);
        sh.weights = shapes.empty() || pd.weights_desc() != shapes[0].weights.get_desc()
                         ? convert_const(wrap(bd.weights_user, ctx.inputs[1]), pd.weights_desc())
                         : shapes[0].weights;
        sh.scratch_bytes = pd.scratchpad_desc().get_size();
        if (shapes.empty()) set_impl_name(pd);
        band_src_md_[shapes.size()] = bd.src;
        band_dst_md_[shapes.size()] = pd.dst_desc();
        shapes.push_back(std::move(sh));
      }
      // Bands and their input views: band k of image b starts at packed row k * rows * stride.
      uint8_t* packed = static_cast<uint8_t*>(src_.get_data_handle());
      const int64_t row_bytes = g.padded[2] * g.c_in, image_bytes = g.padded[1] * row_bytes;
      std::vector<Band> bands;
      for (int64_t b = 0; b < g.batch; ++b)
        for (int64_t k = 0; k < per_image; ++k) {
          Band band;
          band.shape = (k == per_image - 1 && shapes.size() > 1) ? 1 : 0;
          band.image = b;
          band.first_row = k * rows;
          band.src = wrap(band_src_md_[band.shape], packed + b * image_bytes + k * rows * g.stride[1] * row_bytes);
          bands.push_back(std::move(band));
        }
      size_t scratch = 0;
      for (const BandShape& sh : shapes) scratch = std::max(scratch, sh.scratch_bytes);
      std::vector<BandSlot> slots(static_cast<size_t>(thread_slots(ctx.num_threads)));
      for (BandSlot& sl : slots) {
        sl.acc[0] = owned(band_dst_md_[0]);
        sl.acc[1] = wrap(band_dst_md_[shapes.size() - 1], sl.acc[0].get_data_handle());
        if (scratch) sl.scratch = owned(memory::desc({static_cast<memory::dim>(scratch)}, memory::data_type::u8,
                                                     memory::format_tag::a));
        sl.stream = dnnl::stream(cpu_engine());
      }
      band_shapes_ = std::move(shapes);
      bands_ = std::move(bands);
      band_slots_ = std::move(slots);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }

  void run_bands(const KernelContext& ctx) {
    const ConvInt8Geometry& g = geo_;
    const int64_t out_w = g.out[2], pixels = g.out_pixels();
    int8_t* y = ctx.out<int8_t>(0);
    const int64_t jobs = static_cast<int64_t>(bands_.size());
    const int nt = std::min(ctx.num_threads, static_cast<int>(band_slots_.size()));
    // Bands are claimed one at a time (parallel_claimed).
    parallel_claimed(jobs, nt, 1, [&](int64_t j, int slot) {
      BandSlot& sl = band_slots_[static_cast<size_t>(slot)];
      const Band& band = bands_[static_cast<size_t>(j)];
      const BandShape& sh = band_shapes_[static_cast<size_t>(band.shape)];
      dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, band.src.get()},
                                 {DNNL_ARG_WEIGHTS, sh.weights.get()},
                                 {DNNL_ARG_DST, sl.acc[band.shape].get()},
                                 {DNNL_ARG_SCRATCHPAD, sh.scratch_bytes ? sl.scratch.get() : nullptr}};
      const dnnl_status_t st = dnnl_primitive_execute(sh.prim.get(), sl.stream.get(), sh.scratch_bytes ? 4 : 3, args);
      if (st != dnnl_success) {
        ORKNN_LOGE("%s: oneDNN band execution failed (status %d)", ctx.node->name.c_str(), static_cast<int>(st));
        return;
      }
      dnnl_stream_wait(sl.stream.get());
      const int32_t* acc = static_cast<const int32_t*>(sl.acc[0].get_data_handle());
      requant_out(ctx, acc, sh.rows * out_w, band.image * pixels + band.first_row * out_w, y);
    });
  }

  // Requantizes `pixels` channels-last accumulator rows into y from output pixel `first` on
  // (counted over the batch): NCHW, the transposition part of the pass, or NHWC rows.
  void requant_out(const KernelContext& ctx, const int32_t* acc, int64_t pixels, int64_t first, int8_t* y) const {
    const int64_t oc = geo_.c_out, image = geo_.out_pixels();
    if (ctx.output_blocked(0)) {
      x86::requant_rows(acc, pixels, oc, oc, y + first * oc, oc, requant_);
    } else {
      const int64_t b = first / image, p = first % image;
      x86::requant_to_planar(acc, pixels, oc, oc, y + b * oc * image + p, image, requant_);
    }
  }

  // a[i] += b[i] modulo 2^32.
  static void add_wrapping(int32_t* a, const int32_t* b, int64_t n) {
    uint32_t* ua = reinterpret_cast<uint32_t*>(a);
    const uint32_t* ub = reinterpret_cast<const uint32_t*>(b);
    for (int64_t i = 0; i < n; ++i) ua[i] += ub[i];
  }

  // comp[pixel][c] = bias_q[c] - zp_u8 * (sum of w[c] over the taps that reach that pixel), for
  // one image, from one run of the primitive on an all-ones input (see the file comment).
  std::vector<int32_t> deconv_compensation(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
                                           size_t channels, const int32_t* bias) {
    std::memset(src_.get_data_handle(), 1, src_.get_desc().get_size());
    std::vector<std::pair<int, memory>> args = {
        {DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst_}};
    if (pd.scratchpad_desc().get_size() > 0) args.push_back({DNNL_ARG_SCRATCHPAD, owned(pd.scratchpad_desc())});
    dnnl::stream s(cpu_engine());
    prim.execute(s, std::unordered_map<int, memory>(args.begin(), args.end()));
    s.wait();
    const int32_t* ones = static_cast<const int32_t*>(dst_.get_data_handle());  // image 0
    const int64_t zp_u8 = static_cast<int64_t>(quant_.zp_x) + 128;
    const size_t n = static_cast<size_t>(geo_.out_pixels()) * channels;
    std::vector<int32_t> comp(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t v = (bias ? static_cast<int64_t>(bias[i % channels]) : 0) - zp_u8 * ones[i];
      comp[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    }
    return comp;
  }

  ConvInt8Geometry geo_;
  Int8Quant quant_;
  std::vector<int32_t> comp_;      // per output channel (Conv), zeros for ConvTranspose
  std::vector<int32_t> comp_map_;  // ConvTranspose: per output pixel and channel
  x86::RequantParams requant_;
  memory weights_, src_, dst_;
  // Banded execution (empty: one whole-image step).
  std::vector<BandShape> band_shapes_;
  std::vector<Band> bands_;
  std::vector<BandSlot> band_slots_;
  memory::desc band_src_md_[2], band_dst_md_[2];
};

}  // namespace

ORKNN_REGISTER_KERNEL(Conv, "onednn_conv_int8", kPriorityGeneral, supports_conv_int8<false>, ConvInt8<false>);

// Test hook: the band budget in bytes of int32 accumulators (<= 0 restores the default); returns
// the previous value. Tests shrink it to run small convolutions as many bands.
int64_t onednn_conv_int8_set_band_bytes(int64_t bytes) {
  const int64_t previous = g_band_acc_bytes;
  g_band_acc_bytes = bytes > 0 ? bytes : kDefaultBandAccBytes;
  return previous;
}
ORKNN_REGISTER_KERNEL(ConvTranspose, "onednn_deconv_int8", kPriorityGeneral, supports_conv_int8<true>, ConvInt8<true>);

}  // namespace orknn::onednn
