// oneDNN fp32 MaxPool/AveragePool (pooling_v2: dilations) and GlobalAveragePool/GlobalMaxPool
// (reduction over the spatial dims), and int8 MaxPool.
//
// int8 MaxPool (quantized node whose output has its input's parameters): the maximum of the int8
// codes is what docs/numerics.md specifies, and oneDNN's s8 max pooling computes exactly that
// (padding never wins), so it is bit-exact with the reference. Nodes that requantize stay on the
// reference kernel. oneDNN's int8 pooling JIT works on channels-last data only, so this kernel
// reorders NCHW -> NHWC around it (cheap next to the plain-layout reference loop it replaces).
//
// ONNX ceil_mode is expressed as extra right padding: oneDNN derives the output size with floor,
// so the right pad is grown until floor gives infer's (ceil) output size. For max pooling and for
// average pooling that excludes padding that is exact. Average pooling *including* padding counts
// only the declared pads in ONNX (the divisor is the window clipped to the padded input), while
// oneDNN would count the extra ceil padding too: such nodes stay on the reference kernel.
#include <algorithm>
#include <vector>

#include "kernels/onednn/onednn_common.h"

namespace orknn::onednn {
namespace {

using dnnl::memory;

struct PoolSetup {
  memory::dims src, dst, kernel, strides, dilations, pad_l, pad_r;  // dilations: d - 1
  dnnl::algorithm alg = dnnl::algorithm::pooling_max;
  bool valid = false;
};

PoolSetup pool_setup(const Graph& g, const Node& n) {
  PoolSetup s;
  const Tensor* x = g.input(n, 0);
  if (!x || n.inputs.size() != 1 || n.outputs.empty() || n.outputs[0] < 0) return s;
  // MaxPool's optional Indices output is not produced by this kernel.
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) return s;
  const Tensor& y = g.tensor(n.outputs[0]);
  const size_t rank = x->shape.size();
  if (rank < 3 || rank > 5 || y.shape.size() != rank || x->numel() == 0) return s;
  const size_t sp = rank - 2;
  const std::vector<int64_t> ks = n.attrs.get_ints("kernel_shape");
  const std::vector<int64_t> st = n.attrs.get_ints("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> dil = n.attrs.get_ints("dilations", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (ks.size() != sp || st.size() != sp || dil.size() != sp || pads.size() != 2 * sp) return s;
  if (y.shape[0] != x->shape[0] || y.shape[1] != x->shape[1]) return s;
  const bool is_max = n.op == OpId::MaxPool;
  const bool include_pad = !is_max && n.attrs.get_int("count_include_pad", 0) != 0;
  if (is_max && n.attrs.get_int("storage_order", 0) != 0) return s;  // only matters for Indices
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = x->shape[2 + i], out = y.shape[2 + i];
    if (ks[i] < 1 || st[i] < 1 || dil[i] < 1 || pads[i] < 0 || pads[sp + i] < 0 || out < 1) return s;
    const int64_t extent = (ks[i] - 1) * dil[i] + 1;
    int64_t pr = pads[sp + i];
    // Right pad that makes oneDNN's floor formula give infer's output size (ceil_mode).
    if ((in + pads[i] + pr - extent) / st[i] + 1 != out) {
      const int64_t needed = (out - 1) * st[i] + extent - in - pads[i];
      if (needed < pr || (in + pads[i] + needed - extent) / st[i] + 1 != out) return s;
      if (include_pad) return s;  // see the file comment
      pr = needed;
    }
    // Every window must see at least one input element: the reference's value for an all-padding
    // window (max: -inf, avg excluding pads: 0/0) is not something oneDNN defines.
    for (int64_t o = 0; o < out; ++o) {
      bool any = false;
      for (int64_t j = 0; j < ks[i] && !any; ++j) {
        const int64_t pos = o * st[i] - pads[i] + j * dil[i];
        any = pos >= 0 && pos < in;
      }
      if (!any) return s;
    }
    s.kernel.push_back(ks[i]);
    s.strides.push_back(st[i]);
    s.dilations.push_back(dil[i] - 1);
    s.pad_l.push_back(pads[i]);
    s.pad_r.push_back(pr);
  }
  s.src = to_dims(x->shape);
  s.dst = to_dims(y.shape);
  s.alg = is_max ? dnnl::algorithm::pooling_max
                 : (include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                : dnnl::algorithm::pooling_avg_exclude_padding);
  s.valid = true;
  return s;
}

// Pooling runs on the NCHW buffers: oneDNN's pooling has an NCHW JIT kernel, it cannot pick its own
// source layout (format_tag::any), and reorders around a memory-bound op would only add traffic.
memory::desc plain_desc(const memory::dims& dims, memory::data_type dt) {
  return memory::desc(dims, dt, plain_strides(dims));
}

// Channels-last layout of N, C, spatial... dims (the layout oneDNN's int8 pooling JIT takes).
memory::desc channels_last_desc(const memory::dims& dims, memory::data_type dt) {
  memory::dims strides(dims.size());
  memory::dim stride = 1;
  strides[1] = stride;
  stride *= dims[1];
  for (size_t i = dims.size(); i-- > 2;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  strides[0] = stride;
  return memory::desc(dims, dt, strides);
}

// The layout a float pooling primitive works in: the runtime's two (NCHW, nChw16c), or
// channels-last, which only the CPUs without AVX-512 need: there oneDNN 2.6.3 has no JIT pooling
// for either of ours (nChw16c is served by "ref", NCHW by "simple_nchw", a scalar loop: 18 ms for
// resnet18's 3x3 max pool at 112x112, against ~0.2 ms in channels-last with the reorders).
enum class PoolLayout { kPlain, kBlocked16, kChannelsLast };

memory::desc pool_act_desc(const memory::dims& dims, memory::data_type dt, PoolLayout layout) {
  if (dt == memory::data_type::s8 || layout == PoolLayout::kChannelsLast) return channels_last_desc(dims, dt);
  return layout == PoolLayout::kBlocked16 ? blocked16_f32(dims) : plain_desc(dims, dt);
}

// A pooling implementation no faster than our reference kernel: oneDNN's reference ones, and its
// scalar NCHW loop ("simple_nchw").
bool is_slow_pool_impl(const dnnl::primitive_desc_base& pd) {
  return is_reference_impl(pd) || std::string(pd.impl_info_str()).compare(0, 6, "simple") == 0;
}

dnnl::pooling_v2_forward::primitive_desc pool_pd(const PoolSetup& s, memory::data_type dt = memory::data_type::f32,
                                                 PoolLayout layout = PoolLayout::kPlain) {
  const memory::desc src = pool_act_desc(s.src, dt, layout);
  const memory::desc dst = pool_act_desc(s.dst, dt, layout);
  dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, s.alg, src, dst, s.strides, s.kernel,
                                   s.dilations, s.pad_l, s.pad_r);
  return dnnl::pooling_v2_forward::primitive_desc(d, user_scratchpad_attr(), cpu_engine());
}

bool supports_pool(const Graph& g, const Node& n) {
  if (!all_f32(g, n)) return false;
  PoolSetup s = pool_setup(g, n);
  if (!s.valid) return false;
  return probe_ok([&] { return pool_pd(s); });
}

// Quantized MaxPool that only selects codes: int8 in and out with identical per-tensor parameters.
bool supports_maxpool_s8(const Graph& g, const Node& n) {
  if (n.op != OpId::MaxPool || !is_quantized_node(g, n)) return false;
  const Tensor* x = g.input(n, 0);
  if (!x || n.outputs.empty() || n.outputs[0] < 0) return false;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x->dtype != DType::kI8 || y.dtype != DType::kI8 || x->quant.scale.size() != 1 || y.quant.scale.size() != 1 ||
      x->quant.scale != y.quant.scale || x->quant.zero_point != y.quant.zero_point)
    return false;
  PoolSetup s = pool_setup(g, n);
  if (!s.valid) return false;
  return probe_ok([&] { return pool_pd(s, memory::data_type::s8); });
}

class Pool final : public OnednnKernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    const Tensor* x = g.input(n, 0);
    return x && x->dtype == DType::kF32 && x->shape.size() == 4 ? BlockedIo::kEach : BlockedIo::kNone;
  }

 protected:
  Status build(const KernelContext& ctx) override {
    const PoolSetup s = pool_setup(*ctx.graph, *ctx.node);
    if (!s.valid)
      return ORKNN_ERR(kInvalidModel, "%s (%s): attributes/shapes not supported by the oneDNN kernel",
                       ctx.node->name.c_str(), op_name(ctx.node->op));
    const memory::data_type dt =
        ctx.in_tensor(0).dtype == DType::kI8 ? memory::data_type::s8 : memory::data_type::f32;
    const bool in_blocked = ctx.input_blocked(0), out_blocked = ctx.output_blocked(0);
    // Pool in nChw16c when a side is blocked (reorders only for a side that is NCHW), else in NCHW;
    // where oneDNN has no fast implementation for those, in channels-last between two reorders.
    std::vector<PoolLayout> order = {PoolLayout::kPlain, PoolLayout::kChannelsLast};
    if (in_blocked || out_blocked) order.insert(order.begin(), PoolLayout::kBlocked16);
    if (dt == memory::data_type::s8) order = {PoolLayout::kChannelsLast};
    dnnl::pooling_v2_forward::primitive_desc pd;
    for (PoolLayout layout : order) {
      try {
        auto candidate = pool_pd(s, dt, layout);
        const bool fast = !is_slow_pool_impl(candidate);
        if (fast || !pd) pd = candidate;  // else keep the first one served
        if (fast) break;
      } catch (const dnnl::error&) {
      }
    }
    if (!pd) pd = pool_pd(s, dt);  // every layout refused: NCHW, which supports_pool found served
    set_impl_name(pd);
    // The arena's layouts; reorders around the primitive where it works in another one.
    memory src = reorder_in(wrap(in_blocked ? blocked16_f32(s.src) : plain_desc(s.src, dt), ctx.inputs[0]), pd.src_desc());
    memory dst = reorder_out_buffer(wrap(out_blocked ? blocked16_f32(s.dst) : plain_desc(s.dst, dt), ctx.outputs[0]),
                                    pd.dst_desc());
    std::vector<std::pair<int, memory>> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    // forward_inference max pooling needs no workspace; keep it generic anyway.
    if (pd.workspace_desc().get_size() > 0) args.push_back({DNNL_ARG_WORKSPACE, owned(pd.workspace_desc())});
    add_step(dnnl::pooling_v2_forward(pd), pd, std::move(args));
    add_pending_outputs();
    return Status::Ok();
  }
};

// ------------------------------------------------------------------------------------ Global pools

struct GlobalSetup {
  memory::dims src, dst;
  bool valid = false;
};

GlobalSetup global_setup(const Graph& g, const Node& n) {
  GlobalSetup s;
  const Tensor* x = g.input(n, 0);
  if (!x || n.inputs.size() != 1 || n.outputs.size() != 1 || n.outputs[0] < 0) return s;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x->shape.size() < 3 || x->shape.size() > 5 || y.shape.size() != x->shape.size() || x->numel() == 0) return s;
  s.src = to_dims(x->shape);
  s.dst = s.src;
  for (size_t i = 2; i < s.dst.size(); ++i) s.dst[i] = 1;
  for (size_t i = 0; i < s.dst.size(); ++i)
    if (y.shape[i] != s.dst[i]) return s;
  s.valid = true;
  return s;
}

dnnl::reduction::primitive_desc global_pd(const GlobalSetup& s, OpId op, bool blocked = false) {
  const dnnl::algorithm alg =
      op == OpId::GlobalMaxPool ? dnnl::algorithm::reduction_max : dnnl::algorithm::reduction_mean;
  dnnl::reduction::desc d(alg, blocked ? blocked16_f32(s.src) : plain_f32(s.src),
                          blocked ? blocked16_f32(s.dst) : plain_f32(s.dst), 0.f, 0.f);
  return dnnl::reduction::primitive_desc(d, user_scratchpad_attr(), cpu_engine());
}

bool supports_global(const Graph& g, const Node& n) {
  if (!all_f32(g, n)) return false;
  GlobalSetup s = global_setup(g, n);
  if (!s.valid) return false;
  if (s.src == s.dst) return true;  // 1x1 input: a copy
  return probe_ok([&] { return global_pd(s, n.op); });
}

class GlobalPoolF32 final : public OnednnKernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    const Tensor* x = g.input(n, 0);
    return x && x->shape.size() == 4 ? BlockedIo::kEach : BlockedIo::kNone;
  }

 protected:
  Status build(const KernelContext& ctx) override {
    const GlobalSetup s = global_setup(*ctx.graph, *ctx.node);
    if (!s.valid)
      return ORKNN_ERR(kInvalidModel, "%s (%s): shapes not supported by the oneDNN kernel", ctx.node->name.c_str(),
                       op_name(ctx.node->op));
    const bool in_blocked = ctx.input_blocked(0), out_blocked = ctx.output_blocked(0);
    memory src = wrap(in_blocked ? blocked16_f32(s.src) : plain_f32(s.src), ctx.inputs[0]);
    memory dst = wrap(out_blocked ? blocked16_f32(s.dst) : plain_f32(s.dst), ctx.outputs[0]);
    if (s.src == s.dst) {  // spatial size 1: oneDNN's reduction rejects a no-op, the result is a copy
      dnnl::reorder::primitive_desc pd(src, dst, user_scratchpad_attr());
      set_impl_name(pd);
      add_step(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
      return Status::Ok();
    }
    // Reduce in nChw16c when the source is blocked and oneDNN has a real implementation for it;
    // otherwise in NCHW, with reorders for the blocked sides.
    auto pd = preferred_pd(
        in_blocked, [&] { return global_pd(s, ctx.node->op, true); }, [&] { return global_pd(s, ctx.node->op); });
    set_impl_name(pd);
    memory in = reorder_in(src, pd.src_desc());
    memory out = reorder_out_buffer(dst, pd.dst_desc());
    add_step(dnnl::reduction(pd), pd, {{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, out}});
    add_pending_outputs();
    return Status::Ok();
  }
};

}  // namespace

ORKNN_REGISTER_KERNEL(MaxPool, "onednn_pool_f32", kPriorityGeneral, supports_pool, Pool);
ORKNN_REGISTER_KERNEL(AveragePool, "onednn_pool_f32", kPriorityGeneral, supports_pool, Pool);
ORKNN_REGISTER_KERNEL(MaxPool, "onednn_maxpool_s8", kPriorityGeneral, supports_maxpool_s8, Pool);
ORKNN_REGISTER_KERNEL(GlobalAveragePool, "onednn_global_pool_f32", kPriorityGeneral, supports_global, GlobalPoolF32);
ORKNN_REGISTER_KERNEL(GlobalMaxPool, "onednn_global_pool_f32", kPriorityGeneral, supports_global, GlobalPoolF32);

}  // namespace orknn::onednn
