// The executor: runs a graph's nodes in order on the kernels the registry picks. The runtime's
// contexts, the converter's calibration, rknn_inspect and the tests all run graphs through it, so
// for the same graph, input and options they compute the same bits.
//
// plan(): a kernel for every node (the registry's fusions, the application's custom-op callbacks,
// else the registry's best kernel), then every tensor's layout (runtime/layout_assignment.h), then
// the activation arena (graph/planner.h). No tensor memory yet: the arena's size is known.
// bind(): the kernels get their tensors' addresses in an arena and prepare.
// run(): the steps in order; in fp16 mode every float output is rounded to fp16 after its step
// (the NPU stores tensors as fp16), unless the kernel stored it rounded.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn {

struct ExecOptions {
  bool allow_fast = true;  // false: reference kernels only, no fusion, NCHW activations
  // Every tensor keeps its value after a run (its own bytes, no fusion that leaves one unwritten),
  // readable and writable as NCHW through data() and write(): calibration, rknn_inspect, tests.
  bool keep_all_tensors = false;
  int num_threads = 1;
  // The kernel of a Custom node (the application's callbacks, runtime/custom_ops.h); unset: the
  // registry's stand-in.
  std::function<std::unique_ptr<Kernel>(const Graph&, const Node&)> custom_kernel;
};

class Executor {
 public:
  // Plans g, which must outlive the executor.
  static Status plan(const Graph& g, const ExecOptions& opts, std::unique_ptr<Executor>* out);
  // plan(), then an arena and a scratch buffer of its own and bind().
  static Status create(const Graph& g, const ExecOptions& opts, std::unique_ptr<Executor>* out);
  // create() of an executor that keeps every tensor (calibration, rknn_inspect, tests).
  static Status create_keep_all(const Graph& g, bool allow_fast, int num_threads, std::unique_ptr<Executor>* out) {
    ExecOptions opts;
    opts.allow_fast = allow_fast;
    opts.keep_all_tensors = true;
    opts.num_threads = num_threads;
    return create(g, opts, out);
  }
  ~Executor();

  const Graph& graph() const { return *g_; }
  size_t arena_bytes() const { return arena_bytes_; }
  int num_threads() const { return opts_.num_threads; }

  // Gives every kernel its tensors in `arena` (arena_bytes() bytes or more, 64-byte aligned, kept
  // by the caller) and prepares them. `scratch` is shared with the caller's other executors that
  // never run at the same time as this one; nullptr: one of its own. Once per executor; on error
  // the executor must be dropped (it leaves no scratch request behind).
  Status bind(uint8_t* arena, SharedScratch* scratch);
  bool bound() const { return bound_; }

  // Where tensor `id` lies: a constant's data, or its bytes in the arena (NCHW for graph inputs
  // and outputs, which are never blocked).
  void* tensor_ptr(int id) const;

  size_t num_steps() const { return steps_.size(); }
  // Runs step k alone on whatever its inputs hold: the kernel, then the fp16 rounding of its
  // outputs; `timed` records its time (step_last_us).
  void run_step(size_t k, bool timed = false);
  // Runs every step in order; after_step(k) -> Status after step k (an error ends the run).
  template <class AfterStep>
  Status run(bool timed, AfterStep&& after_step) {
    if (!bound_) return ORKNN_ERR(kFail, "the executor has no arena (bind it first)");
    ORKNN_RETURN_IF_ERROR(check_inputs_set());
    for (size_t k = 0; k < steps_.size(); ++k) {
      run_step(k, timed);
      ORKNN_RETURN_IF_ERROR(after_step(k));
    }
    return Status::Ok();
  }
  Status run(bool timed = false) {
    return run(timed, [](size_t) { return Status::Ok(); });
  }

  // Per step: its node, its kernel's name, whether its first output is blocked, its times.
  const Node& step_node(size_t k) const { return *steps_[k].ctx.node; }
  const std::string& kernel_name(size_t k) const { return steps_[k].kernel_name; }
  bool output_blocked(size_t k) const { return steps_[k].ctx.output_blocked(0); }
  int64_t step_last_us(size_t k) const { return steps_[k].last_us; }
  bool tensor_blocked(int id) const { return blocked_[static_cast<size_t>(id)] != 0; }
  // True when `other` places every tensor where this one does (same kernels, layouts and arena):
  // the two may run in turn on one arena.
  bool same_arena_plan(const Executor& other) const { return offset_ == other.offset_ && blocked_ == other.blocked_; }

  // ---- executors that keep every tensor (ExecOptions::keep_all_tensors) ----
  // Copies graph input i from `data` (the tensor's dtype, NCHW, exactly its bytes); in fp16 mode
  // float inputs are rounded to fp16 as the runtime does. run() needs every input set.
  Status set_input(size_t i, const void* data, size_t nbytes);
  // Tensor `id` as NCHW data (constants included): blocked tensors are converted into a copy,
  // valid until the next data() of that tensor.
  const void* data(int id);
  template <typename T>
  const T* data_as(int id) {
    return static_cast<const T*>(data(id));
  }
  // Overwrites non-constant tensor `id` with NCHW data (exactly its NCHW bytes).
  Status write(int id, const void* nchw, size_t nbytes);

 private:
  struct Step {
    std::unique_ptr<Kernel> kernel;
    std::string kernel_name;
    KernelContext ctx;
    std::vector<int> extra_inputs;    // a fused kernel's extra reads, after the node's own inputs
    bool round_outputs_fp16 = false;  // fp16 mode: the executor rounds the float outputs
    int64_t last_us = 0;
  };
  Executor() = default;
  Status check_inputs_set() const;

  const Graph* g_ = nullptr;
  ExecOptions opts_;
  std::vector<Step> steps_;
  std::vector<uint8_t> blocked_;   // per tensor: kept blocked (layout pass)
  std::vector<size_t> offset_;     // per tensor: byte offset in the arena (SIZE_MAX: constant/unused)
  size_t arena_bytes_ = 0;
  uint8_t* arena_ = nullptr;
  bool bound_ = false;
  // create(): the arena and the scratch buffer this executor owns.
  uint8_t* own_arena_ = nullptr;
  std::unique_ptr<SharedScratch> own_scratch_;
  std::vector<bool> input_set_;                // keep-all executors: set_input() called
  std::vector<std::vector<uint8_t>> nchw_copy_;  // keep-all executors: data() of blocked tensors
};

}  // namespace orknn
