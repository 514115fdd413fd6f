// Shared pieces of the oneDNN (2.6) fp32 kernels: the process-wide engine, plain-layout memory
// descriptors built from ONNX shapes, fused-activation post-ops, and OnednnKernel, a Kernel whose
// prepare() compiles a fixed list of primitives (reorders + the op) and whose run() only executes them.
//
// Threading: oneDNN (OpenMP build) sizes its work split from omp_get_max_threads() when a primitive
// descriptor is created, and runs with omp's thread count of the calling thread. So both prepare()
// (around primitive creation) and run() set omp_set_num_threads(ctx.num_threads) on the calling
// thread (docs/architecture.md "Threads").
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn::onednn {

// The one CPU engine of the process (created on first use; thread-safe).
const dnnl::engine& cpu_engine();

// Where the op primitive keeps its activations (src/dst). The arena holds plain NCHW buffers.
//   kPlain: the primitive runs on the NCHW buffers directly;
//   kAny: oneDNN picks its layout (format_tag::any; NHWC for its brgemm convolutions), with
//         reorders from/to NCHW at run time;
//   kChannelBlocked16: nChw16c (and nCw16c/nCdhw16c), with reorders at run time;
//   kPlainToBlocked16: source NCHW, destination nChw16c (a convolution stem).
// kAuto is the per-op choice measured in docs/kernels.md. The override exists for the
// microbenchmark in bench/kernels.
enum class ActLayout { kAuto = 0, kPlain = 1, kAny = 2, kChannelBlocked16 = 3, kPlainToBlocked16 = 4 };
void set_act_layout_override(ActLayout layout);  // kAuto restores the measured default
ActLayout act_layout_override();

// Dims/strides helpers. ONNX shapes are row-major ("plain").
dnnl::memory::dims to_dims(const Shape& s);
// Row-major strides of `dims`.
dnnl::memory::dims plain_strides(const dnnl::memory::dims& dims);
// A plain fp32 descriptor of `dims`.
dnnl::memory::desc plain_f32(const dnnl::memory::dims& dims);
// An fp32 nChw16c descriptor of 4-D `dims` (the runtime's blocked activations, kernel.h BlockedIo).
dnnl::memory::desc blocked16_f32(const dnnl::memory::dims& dims);
// An fp32 descriptor whose logical dims are `dims` while the bytes are stored in the order given
// by `storage_order` (storage_order[k] = logical dim stored k-th, outermost first). E.g. ONNX
// ConvTranspose weights [G*(I/G), O/G, kh, kw] seen as logical {G, O/G, I/G, kh, kw}: storage
// {0, 2, 1, 3, 4}.
dnnl::memory::desc permuted_f32(const dnnl::memory::dims& dims, const std::vector<int>& storage_order);

// True when every input and output of `n` that is present is fp32.
bool all_f32(const Graph& g, const Node& n);

// Appends the node's fused activation ("fused_act"/"fused_alpha"/"fused_beta", see
// kernels/ref/activation.h) as eltwise post-ops. Returns false for an activation oneDNN 2.6 cannot
// express with the reference kernel's semantics.
bool append_fused_act(const Node& n, dnnl::post_ops& ops);

// A primitive_attr with user-managed scratchpad (oneDNN must not allocate at run time).
dnnl::primitive_attr user_scratchpad_attr();

// Sets omp_set_num_threads(n) on the calling thread and restores the previous value on exit.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int n);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int saved_;
};

// Base of the oneDNN kernels. Subclasses build their primitives in build() using the helpers
// below; OnednnKernel handles the scratchpad, exceptions, and execution without allocation.
class OnednnKernel : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) final;
  void run(const KernelContext& ctx) final;

  // Name of the chosen oneDNN implementation of the main primitive (e.g. "brg:avx512_core").
  const std::string& impl_name() const { return impl_name_; }

 protected:
  // Builds everything; may throw dnnl::error (turned into a Status by prepare()).
  virtual Status build(const KernelContext& ctx) = 0;
  // Work done in run() before the primitives (e.g. Gemm writes beta*C into dst). Must not allocate.
  virtual void before_steps(const KernelContext& ctx) {}
  // Work done in run() after the primitives have finished (e.g. the INT8 kernels requantize the
  // int32 accumulators). Must not allocate.
  virtual void after_steps(const KernelContext& ctx) {}

  // Wraps an arena/constant buffer (whose address is fixed after prepare) as a memory object.
  dnnl::memory wrap(const dnnl::memory::desc& md, const void* ptr) const;
  // A buffer owned by the kernel (allocated now, during prepare).
  dnnl::memory owned(const dnnl::memory::desc& md) const;
  // A buffer whose contents live only within one run() (written before they are read there, every
  // run): carved from the executor's SharedScratch when there is one (bound after prepare), else
  // owned(). Layout-conversion buffers and the scratchpad are such buffers.
  dnnl::memory transient(const dnnl::memory::desc& md);
  // Returns `user` if `want` describes the same layout, otherwise an owned buffer of layout
  // `want` plus a reorder step user -> buffer appended to the run list.
  dnnl::memory reorder_in(const dnnl::memory& user, const dnnl::memory::desc& want);
  // Buffer in layout `have` that the op writes; a reorder buffer -> user is queued by
  // add_pending_outputs() after the op step.
  dnnl::memory reorder_out_buffer(const dnnl::memory& user, const dnnl::memory::desc& have);
  // One-off conversion of a constant (weights) into layout `want`, executed now.
  dnnl::memory convert_const(const dnnl::memory& user, const dnnl::memory::desc& want);
  // Appends a primitive step. `args` must not contain DNNL_ARG_SCRATCHPAD (added here).
  void add_step(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
                std::vector<std::pair<int, dnnl::memory>> args);
  // Appends the reorders created by reorder_out_buffer() since the last call.
  void add_pending_outputs();
  // Records the implementation name of the main primitive (for logs and tests).
  void set_impl_name(const dnnl::primitive_desc_base& pd) { impl_name_ = pd.impl_info_str(); }

 private:
  struct Step {
    dnnl::primitive prim;
    std::vector<dnnl::memory> keep_alive;
    std::vector<dnnl_exec_arg_t> args;  // built once; passed to the C API in run()
    bool uses_scratchpad = false;
  };
  struct PendingOut {
    dnnl::memory from, to;
  };
  // The memory of owned() buffers (common/large_alloc.h alloc_pooled: huge-page chunks, because
  // first-touch page faults of these buffers were most of rknn_init's and the first run's time).
  // Declared first: released after every memory object that points into it.
  mutable std::vector<std::shared_ptr<void>> owned_buffers_;
  std::vector<Step> steps_;
  std::vector<PendingOut> pending_out_;
  // transient() buffers placed in the shared scratch: memory object and byte offset.
  bool shared_transient_ = false;
  size_t transient_bytes_ = 0;
  std::vector<std::pair<dnnl::memory, size_t>> transient_;
  size_t scratchpad_bytes_ = 0;
  dnnl::memory scratchpad_;
  dnnl::stream stream_;
  std::string impl_name_;
  std::string node_name_;
};

// True for oneDNN's naive reference implementations ("ref:any"), no faster than our own
// reference kernel: our kernels decline such configurations.
inline bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.compare(0, 3, "ref") == 0;
}

// The descriptor make_preferred() builds when `want` and oneDNN serves it with an optimised
// implementation; otherwise make_fallback()'s, built only then (one descriptor's start-up work,
// not two). A preferred configuration oneDNN rejects (e.g. a post-op that implementation lacks)
// or serves only with "ref:any" falls back.
template <typename Preferred, typename Fallback>
auto preferred_pd(bool want, Preferred&& make_preferred, Fallback&& make_fallback) -> decltype(make_fallback()) {
  if (want) {
    try {
      auto pd = make_preferred();
      if (!is_reference_impl(pd)) return pd;
    } catch (const dnnl::error&) {
    }
  }
  return make_fallback();
}

// supports() helper: `make_pd` builds the primitive descriptor the kernel would use. False if
// oneDNN rejects the configuration or serves it only with a reference implementation.
template <typename Fn> bool probe_ok(Fn&& make_pd) {
  try {
    return !is_reference_impl(make_pd());
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace orknn::onednn
