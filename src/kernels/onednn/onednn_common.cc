#include "kernels/onednn/onednn_common.h"

#include <omp.h>

#include <atomic>
#include <cmath>

#include "common/large_alloc.h"
#include "common/log.h"
#include "kernels/ref/activation.h"

namespace orknn::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

namespace {
std::atomic<int> g_layout_override{static_cast<int>(ActLayout::kAuto)};
}  // namespace

void set_act_layout_override(ActLayout layout) { g_layout_override.store(static_cast<int>(layout)); }
ActLayout act_layout_override() { return static_cast<ActLayout>(g_layout_override.load()); }

dnnl::memory::dims to_dims(const Shape& s) { return dnnl::memory::dims(s.begin(), s.end()); }

dnnl::memory::dims plain_strides(const dnnl::memory::dims& dims) {
  dnnl::memory::dims st(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * dims[i + 1];
  return st;
}

dnnl::memory::desc plain_f32(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, plain_strides(dims));
}

dnnl::memory::desc blocked16_f32(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nChw16c);
}

dnnl::memory::desc permuted_f32(const dnnl::memory::dims& dims, const std::vector<int>& storage_order) {
  dnnl::memory::dims st(dims.size(), 1);
  dnnl::memory::dim step = 1;
  for (int k = static_cast<int>(storage_order.size()) - 1; k >= 0; --k) {
    st[storage_order[k]] = step;
    step *= dims[storage_order[k]];
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, st);
}

bool all_f32(const Graph& g, const Node& n) {
  for (int id : n.inputs)
    if (id >= 0 && g.tensor(id).dtype != DType::kF32) return false;
  for (int id : n.outputs)
    if (id >= 0 && g.tensor(id).dtype != DType::kF32) return false;
  return true;
}

bool append_fused_act(const Node& n, dnnl::post_ops& ops) {
  const FusedActivation f = read_fused_act(n.attrs);
  // kNone with a name set is a name we do not know: let the reference kernel decide.
  if (f.act == FusedAct::kNone) return n.attrs.get_string("fused_act", "").empty();
  const float alpha = f.alpha, beta = f.beta;
  using A = dnnl::algorithm;
  switch (f.act) {
    case FusedAct::kNone: return true;
    case FusedAct::kRelu: ops.append_eltwise(1.f, A::eltwise_relu, 0.f, 0.f); return true;
    case FusedAct::kLeakyRelu: ops.append_eltwise(1.f, A::eltwise_relu, alpha, 0.f); return true;
    case FusedAct::kClip:
      // NaN bounds have no defined meaning in either kernel; leave them to the reference.
      if (std::isnan(alpha) || std::isnan(beta)) return false;
      ops.append_eltwise(1.f, A::eltwise_clip, alpha, beta);
      return true;
    case FusedAct::kHardSwish:
      // oneDNN 2.6: x * relu6(x + 3) / 6, the same function as the reference's x*clip(x/6+1/2, 0, 1).
      ops.append_eltwise(1.f, A::eltwise_hardswish, 0.f, 0.f);
      return true;
    case FusedAct::kHardSigmoid:
      // 2.6 has no hardsigmoid: clip(alpha*x + beta, 0, 1) as linear followed by clip.
      ops.append_eltwise(1.f, A::eltwise_linear, alpha, beta);
      ops.append_eltwise(1.f, A::eltwise_clip, 0.f, 1.f);
      return true;
    case FusedAct::kSigmoid: ops.append_eltwise(1.f, A::eltwise_logistic, 0.f, 0.f); return true;
    case FusedAct::kSilu: ops.append_eltwise(1.f, A::eltwise_swish, 1.f, 0.f); return true;  // x * sigmoid(1 * x)
  }
  return false;
}

ScopedOmpThreads::ScopedOmpThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n > 0 ? n : 1); }
ScopedOmpThreads::~ScopedOmpThreads() { omp_set_num_threads(saved_); }

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::memory OnednnKernel::wrap(const dnnl::memory::desc& md, const void* ptr) const {
  // oneDNN's memory handle is non-const; constants are only ever read (source of a reorder or a
  // primitive input).
  return dnnl::memory(md, cpu_engine(), const_cast<void*>(ptr));
}

dnnl::memory OnednnKernel::owned(const dnnl::memory::desc& md) const {
  std::shared_ptr<void> buf = alloc_pooled(md.get_size());  // zero-filled: chunks are fresh mappings
  if (!buf) throw dnnl::error(dnnl_out_of_memory, "cannot allocate a kernel buffer");
  owned_buffers_.push_back(buf);
  return dnnl::memory(md, cpu_engine(), buf.get());
}

dnnl::memory OnednnKernel::transient(const dnnl::memory::desc& md) {
  if (!shared_transient_) return owned(md);
  dnnl::memory m(md, cpu_engine(), DNNL_MEMORY_NONE);
  const size_t offset = (transient_bytes_ + 63) / 64 * 64;
  transient_bytes_ = offset + md.get_size();
  transient_.emplace_back(m, offset);
  return m;
}

dnnl::memory OnednnKernel::reorder_in(const dnnl::memory& user, const dnnl::memory::desc& want) {
  if (user.get_desc() == want) return user;
  dnnl::memory buf = transient(want);
  dnnl::reorder::primitive_desc pd(user, buf, user_scratchpad_attr());
  add_step(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, buf}});
  return buf;
}

dnnl::memory OnednnKernel::reorder_out_buffer(const dnnl::memory& user, const dnnl::memory::desc& have) {
  if (user.get_desc() == have) return user;
  dnnl::memory buf = transient(have);
  pending_out_.push_back({buf, user});
  return buf;
}

void OnednnKernel::add_pending_outputs() {
  for (const PendingOut& p : pending_out_) {
    dnnl::reorder::primitive_desc pd(p.from, p.to, user_scratchpad_attr());
    add_step(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, p.from}, {DNNL_ARG_TO, p.to}});
  }
  pending_out_.clear();
}

dnnl::memory OnednnKernel::convert_const(const dnnl::memory& user, const dnnl::memory::desc& want) {
  if (user.get_desc() == want) return user;
  dnnl::memory buf = owned(want);
  dnnl::stream s(cpu_engine());
  dnnl::reorder(user, buf).execute(s, const_cast<dnnl::memory&>(user), buf);
  s.wait();
  return buf;
}

void OnednnKernel::add_step(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
                            std::vector<std::pair<int, dnnl::memory>> args) {
  Step st;
  st.prim = prim;
  const size_t scratch = pd.scratchpad_desc().get_size();
  st.uses_scratchpad = scratch > 0;
  if (scratch > scratchpad_bytes_) scratchpad_bytes_ = scratch;
  for (auto& a : args) {
    st.args.push_back(dnnl_exec_arg_t{a.first, a.second.get()});
    st.keep_alive.push_back(a.second);
  }
  steps_.push_back(std::move(st));
}

Status OnednnKernel::prepare(const KernelContext& ctx) {
  node_name_ = ctx.node->name;
  shared_transient_ = ctx.scratch != nullptr;
  try {
    ScopedOmpThreads threads(ctx.num_threads);
    stream_ = dnnl::stream(cpu_engine());
    ORKNN_RETURN_IF_ERROR(build(ctx));
    add_pending_outputs();
    if (scratchpad_bytes_ > 0) {
      scratchpad_ = transient(dnnl::memory::desc({static_cast<dnnl::memory::dim>(scratchpad_bytes_)},
                                                 dnnl::memory::data_type::u8, dnnl::memory::format_tag::a));
      for (Step& st : steps_)
        if (st.uses_scratchpad) st.args.push_back(dnnl_exec_arg_t{DNNL_ARG_SCRATCHPAD, scratchpad_.get()});
    }
    if (!transient_.empty())  // bound by the executor once every kernel is prepared
      ctx.scratch->request(transient_bytes_, [placed = transient_](void* base) {
        for (const auto& [m, offset] : placed) m.set_data_handle(static_cast<uint8_t*>(base) + offset);
      });
  } catch (const dnnl::error& e) {
    return ORKNN_ERR(kFail, "%s (%s): oneDNN could not build the kernel: %s (status %d)", node_name_.c_str(),
                     op_name(ctx.node->op), e.what(), static_cast<int>(e.status));
  }
  ORKNN_LOGD("%s: oneDNN %s, %zu step(s), scratchpad %zu bytes, %zu bytes in the shared scratch", node_name_.c_str(),
             impl_name_.c_str(), steps_.size(), scratchpad_bytes_, transient_bytes_);
  return Status::Ok();
}

void OnednnKernel::run(const KernelContext& ctx) {
  omp_set_num_threads(ctx.num_threads > 0 ? ctx.num_threads : 1);
  before_steps(ctx);
  // The C API takes the prebuilt argument arrays, so nothing is allocated on our side here.
  for (const Step& st : steps_) {
    dnnl_status_t s = dnnl_primitive_execute(st.prim.get(), stream_.get(), static_cast<int>(st.args.size()),
                                             st.args.data());
    if (s != dnnl_success) {
      ORKNN_LOGE("%s: oneDNN primitive execution failed (status %d)", node_name_.c_str(), static_cast<int>(s));
      return;
    }
  }
  dnnl_stream_wait(stream_.get());
  after_steps(ctx);
}

}  // namespace orknn::onednn
