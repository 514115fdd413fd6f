// Kernel interface and registry. A kernel implements one op for the node's dtypes/attributes.
// Selection happens once per node at plan time: the highest-priority registered kernel whose
// `supports` accepts the node; reference kernels (priority kPriorityReference) accept every valid
// node and are the oracle the fast kernels are tested against. The registry is the only place
// that picks kernels: backends (src/kernels/<backend>) register theirs, and their fusions
// (ORKNN_REGISTER_FUSION), and the executor (runtime/executor.h) asks.
//
// Quantized nodes (docs/numerics.md: a tensor of the node carries quantization parameters) only
// ever get a kernel registered with a `supports` function, never a plain float/integer kernel:
// ORKNN_REGISTER_QUANT_REF_KERNEL registers an op's quantized reference kernel.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

// Scratch memory shared by the kernels of one executor (a context's steps never run concurrently,
// so one buffer sized for the largest request serves them all, instead of one per kernel: with
// Winograd convolutions the per-kernel scratchpads of resnet50 summed to 45 MB against a largest
// one of 10 MB). A kernel asks in prepare(); the executor allocates once every kernel is prepared
// and hands each kernel the address through its callback, before any run().
class SharedScratch {
 public:
  SharedScratch() = default;
  SharedScratch(const SharedScratch&) = delete;
  SharedScratch& operator=(const SharedScratch&) = delete;
  ~SharedScratch() { reset(); }
  // `bind` receives the buffer (>= bytes, 64-byte aligned) from allocate(), and again whenever a
  // later request makes allocate() move it.
  void request(size_t bytes, std::function<void(void*)> bind);
  // Allocates for the largest request so far (keeps the buffer if it is large enough) and calls
  // every bind with the address. False when out of memory.
  bool allocate();
  // Forgets every request and frees the buffer (the kernels that asked are gone).
  void reset();
  // The requests so far, and forgetting those made after such a mark (kernels that asked and are
  // gone: an executor whose binding failed).
  size_t mark() const { return binds_.size(); }
  void rollback(size_t mark) { if (mark < binds_.size()) binds_.resize(mark); }
  size_t bytes() const { return bytes_; }
  // Tests: overwrite the buffer with `byte`, as the other kernels of an executor would leave it
  // (a kernel must not expect anything of its contents at the start of a run).
  void fill(uint8_t byte);

 private:
  std::vector<std::function<void(void*)>> binds_;
  size_t bytes_ = 0;            // largest request
  size_t allocated_bytes_ = 0;  // size of buf_
  void* buf_ = nullptr;
};

// Internal activation layout (docs/kernels.md "Blocked activations"): between kernels that take it,
// the runtime keeps a 4-D activation in the layout the convolutions compute in instead of NCHW,
// which saves the layout conversions they would otherwise need around every layer:
//   - float32, in builds whose float convolutions compute channels-last (kFloatBlockedNhwc): NHWC,
//     any channel count;
//   - float32 otherwise, with a channel count that is a multiple of 16: oneDNN's nChw16c (channel
//     blocks of 16 innermost);
//   - float32 nChw16c with more than 16 channels, not a multiple of 16, between kernels that take it
//     padded (kEachPadded): the last block's missing channels stored as zeros, which takes more
//     bytes than NCHW (runtime/layout_assignment.h stored_bytes; the arena plan gets them);
//   - INT8: channels-last (NHWC), any channel count.
// Otherwise the byte size is NCHW's. "Blocked" below means that layout.
//
// The float32 one is a per-build choice, made by CMake from the backends it builds
// (ORKNN_FLOAT_BLOCKED_NHWC): a layout, not an instruction set, so the runtime names no backend.
#if defined(ORKNN_FLOAT_BLOCKED_NHWC)
inline constexpr bool kFloatBlockedNhwc = true;
#else
inline constexpr bool kFloatBlockedNhwc = false;
#endif
// True when a blocked tensor of this dtype is stored channels-last (NHWC).
inline bool blocked_channels_last(DType dtype) {
  return dtype == DType::kI8 || (dtype == DType::kF32 && kFloatBlockedNhwc);
}
// What a kernel can take, per node (Kernel::blocked_io):
enum class BlockedIo : uint8_t {
  kNone,        // NCHW only (the default)
  kEach,        // each 4-D activation input and output may be blocked or not, independently
  kUniform,     // all activation inputs and outputs blocked, or none (element-wise over the bytes)
  kEachPadded,  // as kEach, and float ones padded too: the kernel reads padding lanes as the zeros
                // they are and writes zeros into its padded outputs' padding lanes
};

// A float32 tensor without quantization parameters (what the float kernels take).
inline bool is_f32(const Tensor* t) { return t && t->dtype == DType::kF32 && t->quant.empty(); }

// Kernel::layout_fit. The executor's layout pass (runtime/layout_assignment.h) first picks kernels
// with the layouts undecided and decides the layouts from their blocked_io(); then every node whose
// first output came out NCHW is given the pick for NCHW, which skips kBlockedOnly kernels (and the
// layouts are decided again if that changes what a node takes). Executors without blocked
// activations pick once, for NCHW.
enum class LayoutFit : uint8_t {
  kAny,
  kBlockedOnly,  // faster than the next kernel only on blocked activations
};
// The layout create_kernel picks for.
enum class ActLayout : uint8_t { kNchw, kUndecided };

struct KernelContext {
  const Graph* graph = nullptr;
  const Node* node = nullptr;
  std::vector<const void*> inputs;  // one per node input; nullptr for an absent optional input (a
                                    // fused group's kernel gets the group's extra inputs after them)
  std::vector<void*> outputs;       // one per node output, sized for the output tensor
  int num_threads = 1;              // threads this kernel may use (oneDNN: omp threads)
  // fp16 mode: float outputs are held as fp16 values. The executor rounds them after run(), unless
  // the kernel's rounds_fp16_outputs() says run() already stored them rounded.
  bool round_fp16 = false;
  // The executor's shared scratch, or nullptr (then a kernel allocates its own).
  SharedScratch* scratch = nullptr;
  // Per input / per output: 1 when the runtime keeps that tensor blocked (BlockedIo). Empty or
  // short vectors mean NCHW (every executor but the context's).
  std::vector<uint8_t> in_blocked, out_blocked;

  const Tensor& in_tensor(size_t i) const { return graph->tensor(node->inputs[i]); }
  const Tensor& out_tensor(size_t i) const { return graph->tensor(node->outputs[i]); }
  bool has_input(size_t i) const { return i < node->inputs.size() && node->inputs[i] >= 0; }
  bool input_blocked(size_t i) const { return i < in_blocked.size() && in_blocked[i]; }
  bool output_blocked(size_t i) const { return i < out_blocked.size() && out_blocked[i]; }
  template <typename T> const T* in(size_t i) const { return static_cast<const T*>(inputs[i]); }
  template <typename T> T* out(size_t i) const { return static_cast<T*>(outputs[i]); }
};

// A kernel's per-run buffer of `bytes` (written in a run before it is read): from the executor's
// shared scratch when ctx has one (`bind` gets its address once the executor allocates it, and
// again whenever it moves), else from *own, bound at once. 64-byte aligned either way.
struct alignas(64) ScratchLine {
  uint8_t b[64];
};
void request_scratch(const KernelContext& ctx, size_t bytes, std::function<void(void*)> bind,
                     std::vector<ScratchLine>* own);

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Once, at plan time. Data pointers of constants and of the arena are already final, so a
  // kernel may pack weights or build primitives here. Nothing may be allocated in run().
  virtual Status prepare(const KernelContext& ctx) { return Status::Ok(); }
  virtual void run(const KernelContext& ctx) = 0;
  // True when run() stores its float outputs already rounded to fp16 (round-to-nearest-even, as
  // round_to_fp16) whenever ctx.round_fp16 is set, so the runtime skips its own pass over them.
  // Kernels that write outputs in registers do it there, saving a pass over memory.
  virtual bool rounds_fp16_outputs() const { return false; }
  // Which of the node's activations the kernel can take blocked (BlockedIo). Asked before
  // prepare(), which then finds the decision in KernelContext::in_blocked / out_blocked.
  virtual BlockedIo blocked_io(const Graph& g, const Node& n) const { return BlockedIo::kNone; }
  // Where the kernel is worth running on this node, by the layout of its activations (LayoutFit;
  // create_kernel's `layout` skips the kernels that do not fit).
  virtual LayoutFit layout_fit(const Graph& g, const Node& n) const { return LayoutFit::kAny; }
};

// Kernel priorities, highest first among the kernels whose supports() accepts a node.
enum KernelPriority : int {
  kPriorityReference = 0,     // the oracle; accepts every valid node
  kPriorityFallback = 5,      // hand-written for CPUs the libraries serve badly; below the libraries
  kPriorityGeneral = 10,      // library kernels (oneDNN) and general hand-written ones
  kPrioritySpecialized = 20,  // hand-written for the shapes where they beat the general ones
};

using KernelRunFn = void (*)(const KernelContext& ctx);
using KernelSupportsFn = bool (*)(const Graph& g, const Node& n);
using KernelCreateFn = std::unique_ptr<Kernel> (*)();

struct KernelEntry {
  OpId op;
  const char* name;  // e.g. "ref", "onednn_conv_f32"
  int priority;      // KernelPriority
  KernelSupportsFn supports;  // nullptr = every node
  KernelCreateFn create;
};

void register_kernel(const KernelEntry& e);
// True when an input or output tensor of n carries quantization parameters (node_has_quant of
// ops/quant_infer.h).
bool is_quantized_node(const Graph& g, const Node& n);
// Best kernel for the node (falls back to the reference kernel). `allow_fast=false` forces the
// reference kernel (tests, and OPENRKNN_REF_KERNELS=1); kernels named in OPENRKNN_DISABLE_KERNELS
// are skipped. `layout` kNchw skips kernels whose layout_fit() is kBlockedOnly.
std::unique_ptr<Kernel> create_kernel(const Graph& g, const Node& n, bool allow_fast, std::string* chosen_name,
                                      ActLayout layout = ActLayout::kNchw);
// The op's plain reference kernel (the one without `supports`), else its first reference kernel.
const KernelEntry* find_ref_kernel(OpId op);
std::vector<const KernelEntry*> kernels_for(OpId op);
// True when the op has a quantized reference kernel (ORKNN_REGISTER_QUANT_REF_KERNEL*): the
// converter keeps other ops in float inside quantized models.
bool has_quantized_ref_kernel(OpId op);

// ---- switches (A/B measurements and tests), read at each call, i.e. when a plan is made ----
// OPENRKNN_REF_KERNELS=1: reference kernels only, no fusion, NCHW activations.
bool reference_kernels_only();
// OPENRKNN_DISABLE_KERNELS=name,...: the kernels, fusions and kernel features so named are not
// used; "prefix*" names every name that starts with prefix. Kernel names are the registered ones
// (docs/kernels.md); fusions and features name themselves where they ask (e.g. "blocked_layout",
// "avx512_int8_chain", "onednn_winograd").
bool kernel_disabled(const char* name);

// ---- fusions: groups of nodes that one kernel computes ----
// A backend registers a fusion when one of its kernels computes several consecutive nodes in
// fewer passes over memory (SiLU pairs, INT8 element-wise chains). For each group the executor
// runs `make_kernel()` as the last node's step, reading the group's extra inputs after that
// node's own; the other nodes' steps do nothing, so their outputs (read by nothing outside the
// group, never graph outputs) are never written. They take the layouts their own kernels would
// (fused_away_kernel). An executor that keeps every tensor (calibration, rknn_inspect) applies
// no fusion; a fusion's results are bit-identical to the nodes run one by one.
struct FusedGroup {
  std::vector<int> nodes;         // graph order, at least two
  std::vector<int> extra_inputs;  // tensors the kernel reads besides the last node's inputs
  std::function<std::unique_ptr<Kernel>()> make_kernel;
  const char* fusion = nullptr;   // set by find_fusions: the fusion's name, its steps' kernel name
};
struct FusionEntry {
  const char* name;  // OPENRKNN_DISABLE_KERNELS name
  int priority;      // groups of a higher-priority fusion are taken first
  std::vector<FusedGroup> (*find)(const Graph& g);  // checks the CPU itself
};
void register_fusion(const FusionEntry& e);
// The groups of g, no node in two of them; none with reference kernels only.
std::vector<FusedGroup> find_fusions(const Graph& g);
// The step of a fused-away node: does nothing, takes blocked activations as `io` says.
std::unique_ptr<Kernel> fused_away_kernel(BlockedIo io);

// Wraps a plain function as a Kernel (for stateless kernels).
class FnKernel : public Kernel {
 public:
  explicit FnKernel(KernelRunFn fn) : fn_(fn) {}
  void run(const KernelContext& ctx) override { fn_(ctx); }
 private:
  KernelRunFn fn_;
};

struct KernelRegistrar {
  explicit KernelRegistrar(const KernelEntry& e) { register_kernel(e); }
  explicit KernelRegistrar(const FusionEntry& e) { register_fusion(e); }
};

#define ORKNN_CONCAT_INNER(a, b) a##b
#define ORKNN_CONCAT(a, b) ORKNN_CONCAT_INNER(a, b)

// Registers `fn` (void(const KernelContext&)) as the reference kernel of op OPNAME.
#define ORKNN_REGISTER_REF_KERNEL(OPNAME, fn)                                                     \
  static ::orknn::KernelRegistrar ORKNN_CONCAT(kRefReg_##OPNAME, __LINE__)(::orknn::KernelEntry{ \
      ::orknn::OpId::OPNAME, "ref", ::orknn::kPriorityReference, nullptr,                         \
      []() -> std::unique_ptr<::orknn::Kernel> { return std::make_unique<::orknn::FnKernel>(fn); }})

// Registers `fn` as the reference kernel of OPNAME for quantized nodes (is_quantized_node).
#define ORKNN_REGISTER_QUANT_REF_KERNEL(OPNAME, fn)                                                \
  static ::orknn::KernelRegistrar ORKNN_CONCAT(kQRefReg_##OPNAME, __LINE__)(::orknn::KernelEntry{ \
      ::orknn::OpId::OPNAME, "ref_int8", ::orknn::kPriorityReference, ::orknn::is_quantized_node, \
      []() -> std::unique_ptr<::orknn::Kernel> { return std::make_unique<::orknn::FnKernel>(fn); }})

// Same, for a Kernel subclass CLS (a quantized reference kernel that prepares tables or multipliers).
#define ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(OPNAME, CLS)                                         \
  static ::orknn::KernelRegistrar ORKNN_CONCAT(kQRefReg_##OPNAME, __LINE__)(::orknn::KernelEntry{ \
      ::orknn::OpId::OPNAME, "ref_int8", ::orknn::kPriorityReference, ::orknn::is_quantized_node, \
      []() -> std::unique_ptr<::orknn::Kernel> { return std::make_unique<CLS>(); }})

// Registers a Kernel subclass CLS as a fast kernel for OPNAME (PRIORITY: a KernelPriority).
#define ORKNN_REGISTER_KERNEL(OPNAME, NAME, PRIORITY, SUPPORTS, CLS)                              \
  static ::orknn::KernelRegistrar ORKNN_CONCAT(kReg_##OPNAME, __LINE__)(::orknn::KernelEntry{    \
      ::orknn::OpId::OPNAME, NAME, PRIORITY, SUPPORTS,                                            \
      []() -> std::unique_ptr<::orknn::Kernel> { return std::make_unique<CLS>(); }})

// Registers fusion NAME (a FusionEntry's find function FIND) at PRIORITY.
#define ORKNN_REGISTER_FUSION(NAME, PRIORITY, FIND)                                                 \
  static ::orknn::KernelRegistrar ORKNN_CONCAT(kFusionReg_, __LINE__)(::orknn::FusionEntry{NAME, PRIORITY, FIND})

}  // namespace orknn
