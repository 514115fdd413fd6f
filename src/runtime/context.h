// runtime::Context: one context of the RKNN API on a loaded Model (runtime/model.h): its
// executors (runtime/executor.h, one per shape set), its arena and its I/O state
// (docs/architecture.md). Not thread-safe by itself: src/api serialises calls on one context.
// The member functions live in context.cc (lifecycle, planning, runs, threads, memory blocks),
// context_io.cc (inputs and outputs), context_query.cc (rknn_query and tensor attributes),
// context_mem.cc (rknn_set_io_mem bindings) and context_dynamic.cc (shape sets).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"
#include "kernels/kernel.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "runtime/executor.h"
#include "runtime/model.h"

namespace orknn {

class CustomOps;

// The threads a run of a model of `macs` multiply-accumulates uses when `asked` for: one below
// kMinThreadedMacs, as there handing each layer's data between the cores costs more than the
// second core saves (docs/decisions.md "Threads"; OPENRKNN_MIN_THREADED_MACS sets the bound, 0:
// always `asked`), else `asked`.
constexpr int64_t kMinThreadedMacs = 200'000'000;
int threads_for_model(int asked, int64_t macs);

class Context {
 public:
  static Status create(std::shared_ptr<const Model> model, uint32_t flags, std::unique_ptr<Context>* out);
  ~Context();

  // rknn_dup_context: a new context on the same Model (weights shared, never copied) with its own
  // arena, kernels, inputs and bindings. Flags and core mask are inherited; bindings are not.
  Status dup(std::unique_ptr<Context>* out) const;
  std::shared_ptr<const Model> shared_model() const { return base_model_; }

  const Model& model() const { return *model_; }
  uint32_t n_inputs() const { return static_cast<uint32_t>(model_->graph.inputs.size()); }
  uint32_t n_outputs() const { return static_cast<uint32_t>(model_->graph.outputs.size()); }

  // cmd is the client's raw rknn_query_cmd value (see common/raw_enum.h).
  Status query(int cmd, void* info, uint32_t size);
  Status inputs_set(uint32_t n, const rknn_input* inputs);
  Status run();
  Status outputs_get(uint32_t n, rknn_output* outputs);
  Status outputs_release(uint32_t n, rknn_output* outputs);
  Status set_core_mask(int mask);  // the client's raw rknn_core_mask value
  Status set_batch_core_num(int core_num);

  // MEM_ALLOC_OUTSIDE / INTERNAL_ALLOC_OUTSIDE (docs/decisions.md "Contexts and init flags").
  Status set_internal_mem(rknn_tensor_mem* mem);
  Status set_weight_mem(rknn_tensor_mem* mem);

  // Frame ids: the last rknn_run's (0 before any run) and the one rknn_outputs_get delivers
  // (ASYNC_MASK: the previous run's).
  uint64_t last_frame_id() const { return frame_id_; }
  uint64_t delivered_frame_id() const { return async() ? delivered_frame_id_ : frame_id_; }

  // Attribute reporting per docs/api-contract.md §4.1, of the active shape set (m: of that model instead).
  Status input_attr(uint32_t index, rknn_tensor_attr* attr, const Model* m = nullptr) const;
  Status output_attr(uint32_t index, rknn_tensor_attr* attr, const Model* m = nullptr) const;
  // Native attributes per docs/api-contract.md §4.4 (NATIVE_* queries; nhwc: the NATIVE_NHWC_* view).
  Status native_input_attr(uint32_t index, bool nhwc, rknn_tensor_attr* attr, const Model* m = nullptr) const;
  Status native_output_attr(uint32_t index, bool nhwc, rknn_tensor_attr* attr, const Model* m = nullptr) const;

  // Dynamic shapes (docs/api-contract.md §4.4, docs/decisions.md): rknn_set_input_shapes (all inputs) and the
  // deprecated rknn_set_input_shape (one input) select the shape set holding the given shapes.
  Status set_input_shapes(uint32_t n, const rknn_tensor_attr* attrs);
  Status set_input_shape(const rknn_tensor_attr* attr);
  size_t active_shape_set() const { return active_set_; }

  // rknn_set_io_mem: binds zero-copy memory to the input or output that attr names (index + name,
  // inputs first). run() reads bound inputs before executing and writes bound outputs after.
  Status set_io_mem(rknn_tensor_mem* mem, const rknn_tensor_attr* attr);

  // rknn_register_custom_ops (runtime/custom_ops.h, docs/custom_ops.md). A callback's failure
  // (here or in run()) leaves its own return code in custom_op_error_code(), else 0.
  Status register_custom_ops(const rknn_custom_op* ops, uint32_t n);
  int custom_op_error_code() const;

 private:
  // rknn_inputs_set of UINT8 data: the normalised (mean/std) float value and its quantized code
  // for each byte value, per channel (or one set for all channels).
  struct UInt8InputTable {
    size_t channels = 0;
    std::vector<float> f32;
    std::vector<int8_t> q8;
  };
  const UInt8InputTable& uint8_table(uint32_t index);

  // One set_io_mem binding: the mem (with its registry serial, so a destroyed mem is detected) and
  // what the client said the buffer holds.
  struct IoBinding {
    rknn_tensor_mem* mem = nullptr;
    uint64_t serial = 0;
    rknn_tensor_type type = RKNN_TENSOR_FLOAT32;
    rknn_tensor_format fmt = RKNN_TENSOR_UNDEFINED;
    bool native = false;          // inputs: the buffer holds native codes/values (no conversion)
    int64_t w_stride = 0;         // outputs in NC1HWC2: row stride in pixels (0: W)
    std::vector<uint8_t> staging; // outputs in NHWC/NC1HWC2: the NCHW data before re-layout
  };
  Status bind_input(uint32_t index, rknn_tensor_mem* mem, uint64_t serial, const rknn_tensor_attr& attr);
  Status bind_output(uint32_t index, rknn_tensor_mem* mem, uint64_t serial, const rknn_tensor_attr& attr);
  Status read_bound_inputs();
  Status write_bound_outputs();

  Context() = default;
  // Dynamic shapes: makes `set` the active shape set (plan built on first use, then cached).
  Status select_shape_set(size_t set);
  size_t n_shape_sets() const { return std::max<size_t>(1, base_model_->dynamic.sets.size()); }
  const Model* shape_set_model(size_t set) const;
  Executor& exec() const { return *execs_[active_set_]; }
  // The active set's executor prepared for one thread, for runs on a busy host (common/threads.h):
  // planned and bound on first use; nullptr when the context plans one thread anyway, has custom
  // operators, or cannot share the arena plan of exec().
  Executor* single_thread_exec();
  // INPUT_ATTR/OUTPUT_ATTR/NATIVE_* of a dynamic model: set 0's attribute with sizes that cover
  // the largest set (docs/api-contract.md §4.4: clients allocate once from them).
  Status static_attr(int cmd, rknn_tensor_attr* attr) const;
  Status input_range(rknn_input_range* r) const;
  void make_custom_ops();  // custom_ops_ for a model with Custom nodes
  // Plans an executor per shape set for the current thread count, sizes the arena for the
  // largest, and (unless the client provides the arena later) allocates it and binds the active
  // set's executor. Called again when the thread count or the client's arena changes.
  Status plan();
  Status bind_active();  // binds the active set's executor to the arena if it is not yet
  // Error unless the context can touch its arena (fn names the API call); need_weights: also the
  // weight block of MEM_ALLOC_OUTSIDE.
  Status check_runnable(const char* fn, bool need_weights) const;
  bool async() const { return (flags_ & RKNN_FLAG_ASYNC_MASK) != 0; }
  bool info_only() const { return (flags_ & RKNN_FLAG_COLLECT_MODEL_INFO_ONLY) != 0; }
  bool internal_outside() const {
    return (flags_ & (RKNN_FLAG_MEM_ALLOC_OUTSIDE | RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE)) != 0;
  }
  const void* output_src(uint32_t index) const;  // what outputs_get reads for output `index`
  void* tensor_ptr(int tensor_id) const;
  // Thread count changes (core mask, batch core number) re-plan: kernels plan their work for a
  // thread count at prepare (oneDNN's primitives, per-thread scratch).
  Status set_threads_from_mask(rknn_core_mask mask);
  int num_threads() const;    // threads_for_model(threads_asked(), the model's MACs)
  int threads_asked() const;  // OPENRKNN_NUM_THREADS, else the core mask's share of the host

  std::shared_ptr<const Model> model_;       // the active shape set's model
  std::shared_ptr<const Model> base_model_;  // the loaded model (= set 0's; model_ for static models)
  size_t active_set_ = 0;
  uint32_t flags_ = 0;
  rknn_core_mask core_mask_ = RKNN_NPU_CORE_AUTO;
  uint8_t* arena_ = nullptr;      // owned unless internal_outside()
  rknn_tensor_mem* internal_mem_ = nullptr;  // client arena (set_internal_mem) and its serial
  uint64_t internal_serial_ = 0;
  rknn_tensor_mem* weight_mem_ = nullptr;    // client weight block (recorded and checked only)
  uint64_t weight_serial_ = 0;
  uint64_t frame_id_ = 0;
  uint64_t delivered_frame_id_ = 0;
  std::vector<std::vector<uint8_t>> async_latest_;     // ASYNC_MASK: outputs of the last run
  std::vector<std::vector<uint8_t>> async_delivered_;  // ... and of the run before (outputs_get)
  size_t arena_size_ = 0;    // the largest arena over the shape sets' executors
  int planned_threads_ = 0;  // the thread count the executors were planned for
  ExecOptions exec_opts_;    // what they were planned with
  // Scratch shared by the kernels of every executor (one runs at a time). Declared before them:
  // freed after the kernels that point into it.
  SharedScratch scratch_;
  std::vector<std::unique_ptr<Executor>> execs_;  // per shape set; bound on first use
  // Per shape set: the one-thread executor of busy-host runs (null until needed), and whether
  // making it failed (then runs keep exec()).
  std::vector<std::unique_ptr<Executor>> single_execs_;
  std::vector<uint8_t> single_failed_;
  const Executor* last_run_exec_ = nullptr;  // what the last run ran (PERF_DETAIL)
  std::vector<bool> input_set_;
  std::vector<UInt8InputTable> uint8_tables_;
  std::vector<void*> owned_output_bufs_;  // buffers handed out by outputs_get (is_prealloc == 0)
  int64_t last_run_us_ = 0;
  bool has_run_ = false;
  std::string perf_detail_;
  std::vector<IoBinding> input_bindings_;   // indexed like the model's inputs; mem == nullptr: unbound
  std::vector<IoBinding> output_bindings_;
  std::unique_ptr<CustomOps> custom_ops_;  // the model's Custom nodes; null when it has none
};

}  // namespace orknn
