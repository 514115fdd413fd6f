// runtime::Context: one loaded model, its execution plan and I/O state (architecture §1, §7).
// Not thread-safe by itself: src/api serialises calls on one context.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"
#include "kernels/kernel.h"
#include "rknn_api.h"

namespace orknn {

struct PlatformInfo;

// Immutable after load; shared by contexts made from it.
struct Model {
  Graph graph;
  const PlatformInfo* platform = nullptr;
  size_t weight_bytes = 0;
};

// Loads and verifies a model from bytes (copied into 64-byte aligned storage first, so the caller
// may free its buffer) or from a file path.
Status load_model_from_buffer(const void* data, size_t size, std::shared_ptr<const Model>* out);
Status load_model_from_file(const std::string& path, std::shared_ptr<const Model>* out);

class Context {
 public:
  static Status create(std::shared_ptr<const Model> model, uint32_t flags, std::unique_ptr<Context>* out);
  ~Context();

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

  // Attribute reporting per contract §4.1.
  Status input_attr(uint32_t index, rknn_tensor_attr* attr) const;
  Status output_attr(uint32_t index, rknn_tensor_attr* attr) const;
  // Native attributes per contract §4.4 (NATIVE_* queries; nhwc: the NATIVE_NHWC_* view).
  Status native_input_attr(uint32_t index, bool nhwc, rknn_tensor_attr* attr) const;
  Status native_output_attr(uint32_t index, bool nhwc, rknn_tensor_attr* attr) const;

  // rknn_set_io_mem: binds zero-copy memory to the input or output that attr names (index + name,
  // inputs first). run() reads bound inputs before executing and writes bound outputs after.
  Status set_io_mem(rknn_tensor_mem* mem, const rknn_tensor_attr* attr);

 private:
  struct Step {
    std::unique_ptr<Kernel> kernel;
    std::string kernel_name;
    KernelContext kctx;
    bool round_outputs_fp16 = false;
    int64_t total_us = 0;  // accumulated when perf collection is on
    int64_t last_us = 0;
  };

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
  Status plan();
  void* tensor_ptr(int tensor_id) const;
  int num_threads() const;

  std::shared_ptr<const Model> model_;
  uint32_t flags_ = 0;
  rknn_core_mask core_mask_ = RKNN_NPU_CORE_AUTO;
  uint8_t* arena_ = nullptr;
  size_t arena_size_ = 0;
  std::vector<size_t> arena_offset_;
  std::vector<Step> steps_;
  std::vector<bool> input_set_;
  std::vector<UInt8InputTable> uint8_tables_;
  std::vector<void*> owned_output_bufs_;  // buffers handed out by outputs_get (is_prealloc == 0)
  int64_t last_run_us_ = 0;
  bool has_run_ = false;
  std::string perf_detail_;
  std::vector<IoBinding> input_bindings_;   // indexed like the model's inputs; mem == nullptr: unbound
  std::vector<IoBinding> output_bindings_;
};

}  // namespace orknn
