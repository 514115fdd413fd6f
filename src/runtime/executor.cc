#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/fp16.h"
#include "common/large_alloc.h"
#include "common/log.h"
#include "graph/planner.h"
#include "kernels/parallel.h"
#include "ops/op.h"
#include "runtime/layout_assignment.h"

namespace orknn {
namespace {

// fp16 mode: rounds a step's float output to fp16 values, split over the step's threads when it
// is large enough for that to pay (a pass over memory, like the kernels' element-wise ops).
void round_output_to_fp16(float* data, size_t n, int threads) {
  const int nt = n >= (size_t{1} << 16) ? threads : 1;
  parallel_ranges(
      static_cast<int64_t>(n), nt,
      [&](int64_t b, int64_t e, int) { round_to_fp16(data + b, static_cast<size_t>(e - b)); }, 16);
}

}  // namespace

Status Executor::plan(const Graph& g, const ExecOptions& opts, std::unique_ptr<Executor>* out) {
  std::unique_ptr<Executor> ex(new Executor());
  ex->g_ = &g;
  ex->opts_ = opts;
  const bool allow_fast = opts.allow_fast && !reference_kernels_only();
  const size_t nn = g.nodes.size();

  // Fusions: per node, its group (index + 1); the last node of a group runs the group's kernel.
  std::vector<FusedGroup> groups;
  if (allow_fast && !opts.keep_all_tensors) groups = find_fusions(g);
  std::vector<size_t> group_of(nn, 0);
  for (size_t i = 0; i < groups.size(); ++i)
    for (int k : groups[i].nodes) group_of[static_cast<size_t>(k)] = i + 1;

  const bool keep_blocked = allow_fast && !kernel_disabled("blocked_layout");
  const ActLayout pick_layout = keep_blocked ? ActLayout::kUndecided : ActLayout::kNchw;
  std::vector<NodeKernel> kernels(nn);
  for (size_t k = 0; k < nn; ++k) {
    const Node& n = g.nodes[k];
    NodeKernel& nk = kernels[k];
    if (n.op == OpId::Custom && opts.custom_kernel) {
      nk.kernel = opts.custom_kernel(g, n);
      nk.name = "custom_callbacks";
    } else if (group_of[k]) {
      const FusedGroup& grp = groups[group_of[k] - 1];
      if (static_cast<int>(k) == grp.nodes.back()) {
        nk.kernel = grp.make_kernel();
      } else {  // takes the layouts its own kernel would
        const std::unique_ptr<Kernel> own = create_kernel(g, n, allow_fast, nullptr);
        nk.kernel = fused_away_kernel(own ? own->blocked_io(g, n) : BlockedIo::kNone);
      }
      nk.name = grp.fusion;
    } else {
      nk.kernel = create_kernel(g, n, allow_fast, &nk.name, pick_layout);
      nk.from_registry = true;
    }
    if (!nk.kernel) return ORKNN_ERR(kInvalidModel, "node '%s' (%s): no kernel for this op", n.name.c_str(), op_name(n.op));
  }

  // Layouts, then the arena with each tensor's stored bytes.
  ex->blocked_.assign(g.tensors.size(), 0);
  if (keep_blocked)
    ORKNN_RETURN_IF_ERROR(assign_layouts(
        g, &kernels, [&](const Node& n, std::string* name) { return create_kernel(g, n, allow_fast, name); },
        &ex->blocked_));
  ArenaOptions ao;
  ao.keep_all = opts.keep_all_tensors;
  ao.bytes.resize(g.tensors.size());
  for (size_t t = 0; t < g.tensors.size(); ++t) ao.bytes[t] = stored_bytes(g.tensors[t], ex->blocked_[t] != 0);
  for (const FusedGroup& grp : groups)
    for (int t : grp.extra_inputs) ao.extra.push_back({t, grp.nodes.back()});
  ArenaPlan ap = plan_arena(g, ao);
  ex->offset_ = std::move(ap.offset);
  ex->arena_bytes_ = ap.arena_size;

  ex->steps_.resize(nn);
  for (size_t k = 0; k < nn; ++k) {
    const Node& n = g.nodes[k];
    Step& s = ex->steps_[k];
    s.kernel = std::move(kernels[k].kernel);
    s.kernel_name = std::move(kernels[k].name);
    if (group_of[k] && static_cast<int>(k) == groups[group_of[k] - 1].nodes.back())
      s.extra_inputs = groups[group_of[k] - 1].extra_inputs;
    s.ctx.graph = &g;
    s.ctx.node = &n;
    s.ctx.num_threads = opts.num_threads;
    for (int t : n.inputs) s.ctx.in_blocked.push_back(t >= 0 && ex->blocked_[static_cast<size_t>(t)]);
    for (int t : n.outputs) {
      s.ctx.out_blocked.push_back(t >= 0 && ex->blocked_[static_cast<size_t>(t)]);
      if (t >= 0 && g.precision == FloatPrecision::kFp16 && g.tensor(t).dtype == DType::kF32) s.round_outputs_fp16 = true;
    }
    s.ctx.round_fp16 = s.round_outputs_fp16;
    // An op that copies elements of activations (fp16 values, as every step's outputs and the
    // inputs are) writes fp16 values: no pass. A float constant input may not be fp16-exact.
    if (s.round_outputs_fp16 && op_copies_input_values(n.op)) {
      bool from_activations = true;
      for (int t : n.inputs)
        if (t >= 0 && g.tensor(t).is_const() && g.tensor(t).dtype == DType::kF32) from_activations = false;
      s.round_outputs_fp16 = !from_activations;
    }
  }
  ex->input_set_.assign(g.inputs.size(), false);
  *out = std::move(ex);
  return Status::Ok();
}

Status Executor::create(const Graph& g, const ExecOptions& opts, std::unique_ptr<Executor>* out) {
  std::unique_ptr<Executor> ex;
  ORKNN_RETURN_IF_ERROR(plan(g, opts, &ex));
  // 64 spare bytes: fast kernels may read a vector past the end of a tensor.
  const size_t bytes = ex->arena_bytes_ + 64;
  ex->own_arena_ = static_cast<uint8_t*>(alloc_large(bytes, /*populate=*/true));
  if (!ex->own_arena_) return ORKNN_ERR(kNoMemory, "cannot allocate the %zu-byte activation arena", bytes);
  ex->own_scratch_ = std::make_unique<SharedScratch>();
  ORKNN_RETURN_IF_ERROR(ex->bind(ex->own_arena_, ex->own_scratch_.get()));
  *out = std::move(ex);
  return Status::Ok();
}

Executor::~Executor() {
  steps_.clear();  // kernels first: they may point into the scratch and the arena
  own_scratch_.reset();
  if (own_arena_) free_large(own_arena_, arena_bytes_ + 64);
}

void* Executor::tensor_ptr(int id) const {
  const Tensor& t = g_->tensor(id);
  if (t.is_const()) return const_cast<uint8_t*>(t.data.ptr);
  const size_t off = offset_[static_cast<size_t>(id)];
  return off == SIZE_MAX || !arena_ ? nullptr : arena_ + off;
}

Status Executor::bind(uint8_t* arena, SharedScratch* scratch) {
  bound_ = false;
  arena_ = arena;
  for (Step& s : steps_) {
    const Node& n = *s.ctx.node;
    s.ctx.inputs.clear();
    s.ctx.outputs.clear();
    for (int t : n.inputs) s.ctx.inputs.push_back(t >= 0 ? tensor_ptr(t) : nullptr);
    for (int t : s.extra_inputs) s.ctx.inputs.push_back(tensor_ptr(t));
    for (int t : n.outputs) s.ctx.outputs.push_back(t >= 0 ? tensor_ptr(t) : nullptr);
    s.ctx.scratch = scratch;
  }
  // A failed binding leaves no request behind: the caller drops these kernels.
  const size_t mark = scratch ? scratch->mark() : 0;
  for (Step& s : steps_) {
    Status st = s.kernel->prepare(s.ctx);
    if (!st.ok()) {
      if (scratch) scratch->rollback(mark);
      return ORKNN_ERR(kInvalidModel, "node '%s' (%s): kernel %s: %s", s.ctx.node->name.c_str(), op_name(s.ctx.node->op),
                       s.kernel_name.c_str(), st.message().c_str());
    }
  }
  if (scratch && !scratch->allocate()) {
    scratch->rollback(mark);
    return ORKNN_ERR(kNoMemory, "cannot allocate the kernels' %zu-byte scratch buffer", scratch->bytes());
  }
  bound_ = true;
  return Status::Ok();
}

void Executor::run_step(size_t k, bool timed) {
  Step& s = steps_[k];
  using clock = std::chrono::steady_clock;
  const auto t0 = timed ? clock::now() : clock::time_point();
  s.kernel->run(s.ctx);
  if (s.round_outputs_fp16 && !s.kernel->rounds_fp16_outputs()) {
    for (size_t o = 0; o < s.ctx.outputs.size(); ++o) {
      const int id = s.ctx.node->outputs[o];
      if (id < 0 || g_->tensor(id).dtype != DType::kF32) continue;
      // A padded nChw16c output holds its values among the zeros of the padding.
      const int64_t n = stored_numel(g_->tensor(id), s.ctx.output_blocked(o));
      round_output_to_fp16(static_cast<float*>(s.ctx.outputs[o]), static_cast<size_t>(n), s.ctx.num_threads);
    }
  }
  if (timed) {
    s.last_us = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - t0).count();
    if (log_enabled(LogLevel::kTrace))
      log(LogLevel::kTrace, "layer %-24s %-20s kernel %-16s out %-18s %6lld us", s.ctx.node->name.c_str(),
          op_name(s.ctx.node->op), s.kernel_name.c_str(), shape_str(s.ctx.out_tensor(0).shape).c_str(),
          static_cast<long long>(s.last_us));
  }
}

Status Executor::check_inputs_set() const {
  if (!opts_.keep_all_tensors) return Status::Ok();  // the runtime's contexts keep their own account
  for (size_t i = 0; i < input_set_.size(); ++i)
    if (!input_set_[i])
      return ORKNN_ERR(kInvalidParam, "graph input %zu ('%s') was not set", i, g_->tensor(g_->inputs[i].tensor).name.c_str());
  return Status::Ok();
}

Status Executor::set_input(size_t i, const void* data, size_t nbytes) {
  if (i >= g_->inputs.size())
    return ORKNN_ERR(kInvalidParam, "graph input %zu does not exist (the graph has %zu)", i, g_->inputs.size());
  const int id = g_->inputs[i].tensor;
  const Tensor& t = g_->tensor(id);
  if (nbytes != t.nbytes())
    return ORKNN_ERR(kInvalidParam, "graph input %zu ('%s' %s %s) needs %zu bytes, got %zu", i, t.name.c_str(),
                     shape_str(t.shape).c_str(), dtype_name(t.dtype), t.nbytes(), nbytes);
  void* dst = tensor_ptr(id);
  if (!dst) return ORKNN_ERR(kFail, "the executor has no arena (bind it first)");
  std::memcpy(dst, data, nbytes);
  // The runtime holds float inputs as fp16 in fp16 mode.
  if (t.dtype == DType::kF32 && g_->precision == FloatPrecision::kFp16)
    round_to_fp16(static_cast<float*>(dst), static_cast<size_t>(t.numel()));
  input_set_[i] = true;
  return Status::Ok();
}

const void* Executor::data(int id) {
  const void* p = tensor_ptr(id);
  if (!p || !blocked_[static_cast<size_t>(id)]) return p;
  if (nchw_copy_.size() != g_->tensors.size()) nchw_copy_.resize(g_->tensors.size());
  std::vector<uint8_t>& copy = nchw_copy_[static_cast<size_t>(id)];
  const Tensor& t = g_->tensor(id);
  copy.resize(t.nbytes());
  blocked_to_nchw(t, p, copy.data());
  return copy.data();
}

Status Executor::write(int id, const void* nchw, size_t nbytes) {
  const Tensor& t = g_->tensor(id);
  void* p = tensor_ptr(id);
  if (t.is_const() || !p) return ORKNN_ERR(kInvalidParam, "tensor '%s' is a constant or has no bytes", t.name.c_str());
  if (nbytes != t.nbytes())
    return ORKNN_ERR(kInvalidParam, "tensor '%s' holds %zu bytes, got %zu", t.name.c_str(), t.nbytes(), nbytes);
  if (blocked_[static_cast<size_t>(id)]) nchw_to_blocked(t, nchw, p);
  else std::memcpy(p, nchw, nbytes);
  return Status::Ok();
}

}  // namespace orknn
