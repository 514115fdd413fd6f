// Runs a whole graph node by node outside the runtime: converter calibration, rknn_inspect and
// tests. Unlike the runtime's arena, every tensor gets its own buffer, so every intermediate value
// stays readable after a run. In fp16 mode float op outputs are rounded to fp16 as the runtime does.
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

class GraphRunner {
 public:
  // Chooses a kernel for every node (reference kernels only unless allow_fast) and prepares it.
  // `g` must outlive the runner.
  static Status create(const Graph& g, bool allow_fast, int num_threads, std::unique_ptr<GraphRunner>* out);

  // Copies graph input i (g.inputs[i]) from `data`: the tensor's own dtype and NCHW layout, exactly
  // nbytes() bytes. In fp16 mode float inputs are rounded to fp16, as the runtime does.
  Status set_input(size_t i, const void* data, size_t nbytes);
  // Runs every node in order; `after_node(k)` (optional) is called after node k ran.
  Status run(const std::function<void(size_t node_index)>& after_node = nullptr);
  // Runs node k alone on whatever its input buffers hold (write them with mutable_data first).
  void run_node(size_t k);

  const void* data(int tensor_id) const;  // constants included
  void* mutable_data(int tensor_id);      // nullptr for constants
  template <typename T> const T* data_as(int tensor_id) const { return static_cast<const T*>(data(tensor_id)); }
  const std::string& kernel_name(size_t k) const { return steps_[k].kernel_name; }

 private:
  struct Step {
    std::unique_ptr<Kernel> kernel;
    std::string kernel_name;
    KernelContext ctx;
  };
  GraphRunner() = default;

  const Graph* g_ = nullptr;
  std::vector<std::vector<uint8_t>> buffers_;  // per tensor id; empty for constants
  std::vector<Step> steps_;
  std::vector<bool> input_set_;
};

}  // namespace orknn
