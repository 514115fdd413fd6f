// Custom operators (rknn_custom_op.h, docs/custom_ops.md): one CustomOps per Context holds, for
// each Custom node of the model, its rknn_custom_op_context, its attributes in the form
// rknn_custom_op_get_op_attr hands out, and the tensors its callbacks receive. The runtime runs a
// Custom node with the kernel make_kernel() returns: it calls the registered `prepare` and
// `compute` callbacks; `init` runs in register_ops() and `destroy` in the destructor.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"
#include "kernels/kernel.h"
#include "rknn_custom_op.h"

namespace orknn {

class CustomOps {
 public:
  explicit CustomOps(const Graph& g);
  ~CustomOps();  // runs `destroy` once for every node whose `init` ran (or would have: no init)
  CustomOps(const CustomOps&) = delete;
  CustomOps& operator=(const CustomOps&) = delete;

  bool empty() const { return nodes_.empty(); }

  // rknn_register_custom_ops: validates every entry (CPU target, compute set, a type of the
  // model, not registered before, no duplicates), copies them, then runs `init` for each node of
  // the registered types. A failing `init` undoes the whole call (the nodes already initialised
  // by it get `destroy`) and its code is returned by callback_error_code().
  Status register_ops(const rknn_custom_op* ops, uint32_t n);

  // Start of rknn_run: forgets the previous run's callback error, then errors naming the first
  // custom type of the model with no registered callbacks.
  Status begin_run();

  // The kernel the runtime runs for Custom node `n` of `g` (the graph given to the constructor, or
  // another shape set's graph of the same model: nodes are matched by name); nullptr if unknown.
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n);

  // After a Custom kernel ran: a callback's failure (kFail, message naming the node, type and
  // callback); Ok otherwise. Clears it.
  Status take_run_error();
  // The code the last failing callback returned (0 when none failed in the current rknn_run or
  // rknn_register_custom_ops call); the API returns it as is.
  int callback_error_code() const { return callback_code_; }
  // Called by a Custom kernel when a callback returned `rc` (an error code).
  void note_run_error(Status st, int rc) {
    run_error_ = std::move(st);
    callback_code_ = rc;
  }

  struct NodeState;  // per Custom node (custom_ops.cc)

 private:
  Status init_node(NodeState& s);
  void destroy_node(NodeState& s);

  const Graph& g_;
  std::vector<std::unique_ptr<NodeState>> nodes_;
  std::vector<std::unique_ptr<rknn_custom_op>> registered_;  // copies of the client's structs
  Status run_error_;
  int callback_code_ = 0;
};

// rknn_custom_op_get_op_attr: the attribute `name` of the node op_ctx belongs to (dtype FLOAT32
// for float/floats, INT64 for int/ints, UINT8 for a string: n_elems bytes, NUL-terminated).
// Absent attribute: n_elems 0 and data NULL. A NULL argument or an op_ctx this runtime did not
// create is logged; `out` (when not NULL) then reads as absent.
void custom_op_get_attr(rknn_custom_op_context* op_ctx, const char* name, rknn_custom_op_attr* out);

}  // namespace orknn
