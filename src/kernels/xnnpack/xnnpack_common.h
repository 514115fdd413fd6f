// Shared pieces of the XNNPACK backend (aarch64 builds; docs/aarch64.md): the library's one-time
// initialisation, which also tells whether XNNPACK runs on this CPU (it needs NEON; it picks its
// dot-product, fp16 and plain NEON microkernels itself from the CPU's features), the parameter
// checks of its QC8 operators, the float operators' clamp, weight and layout copies, the thread
// pools, and the owner of an XNNPACK operator.
#pragma once
#include <xnnpack.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "graph/ir.h"
#include "kernels/kernel.h"

namespace orknn::xnnpack {

// True when xnn_initialize succeeded (once per process; thread-safe). Every XNNPACK kernel's
// supports() asks: where it is false, the nodes go to the next kernel.
bool available();

// The pthreadpool an XNNPACK kernel runs on with `threads` threads (ctx.num_threads), nullptr for
// one (XNNPACK then runs on the calling thread). One pool per thread count, made on first use and
// kept for the process, so a model's kernels share its workers; contexts that run at once on the
// same pool take turns (pthreadpool serialises its callers). Kernels create their operators with
// XNN_FLAG_YIELD_WORKERS, so the workers sleep between operators instead of spinning against the
// runtime's OpenMP threads.
pthreadpool_t thread_pool(int threads);

// True when XNNPACK's QC8 operators take these quantization parameters, as its create functions
// check them: positive normal scales, per-channel multipliers (s_x * s_w[c]) / s_y in [2^-32, 256),
// a non-empty output range after the node's fused Relu/Clip. `w` has one scale or `channels`.
bool qc8_params_ok(const Tensor& x, const QuantParams& w, const Tensor& y, const Attrs& attrs, int64_t channels);
// The per-output-channel weight scales XNNPACK's QC8 operators take (one scale repeated).
std::vector<float> qc8_kernel_scales(const QuantParams& w, int64_t channels);

// The output range of XNNPACK's float operators (their output_min/output_max clamp) for a node's
// fused activation: Relu and a Clip with min < max (ONNX's order gives max otherwise) are the
// clamp; no activation is the unbounded range. Other activations (clamp == false) are left to a
// pass of the reference's own apply_fused_act over the outputs.
struct FloatClamp {
  bool clamp = false;  // the activation is the range (or there is none)
  float lo = -INFINITY, hi = INFINITY;
};
FloatClamp float_clamp_of_fused_act(const Attrs& attrs);

// ONNX convolution weights [OC][C/group][kh*kw] -> XNNPACK's [OC][kh*kw][C/group] (its
// [group][OC/group][kh][kw][C/group]: the same output channel order), with XNN_EXTRA_BYTES after.
template <class T>
std::vector<T> weights_to_ohwi(const T* w, int64_t oc, int64_t icg, int64_t taps) {
  std::vector<T> ohwi(static_cast<size_t>(oc * taps * icg) + XNN_EXTRA_BYTES / sizeof(T) + 1);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < icg; ++i)
      for (int64_t t = 0; t < taps; ++t)
        ohwi[static_cast<size_t>((o * taps + t) * icg + i)] = w[(o * icg + i) * taps + t];
  return ohwi;
}

// batch images of `pixels` pixels and `channels` channels: planar (NCHW) <-> channels-last (NHWC).
template <class T>
void planar_to_channels_last(const T* src, T* dst, int64_t batch, int64_t channels, int64_t pixels) {
  for (int64_t b = 0; b < batch; ++b, src += channels * pixels, dst += channels * pixels)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < pixels; ++p) dst[p * channels + c] = src[c * pixels + p];
}
template <class T>
void channels_last_to_planar(const T* src, T* dst, int64_t batch, int64_t channels, int64_t pixels) {
  for (int64_t b = 0; b < batch; ++b, src += channels * pixels, dst += channels * pixels)
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t c = 0; c < channels; ++c) dst[c * pixels + p] = src[p * channels + c];
}

// Bytes of a staging buffer for `bytes` of data that XNNPACK reads: XNN_EXTRA_BYTES more, rounded
// up to whole 64-byte lines (so a second buffer after it stays aligned).
inline size_t staged_bytes(size_t bytes) { return (bytes + XNN_EXTRA_BYTES + 63) / 64 * 64; }

// True when tensor `t` is a graph input: its bytes may be client memory (rknn_set_io_mem) that
// ends where the tensor does, so XNNPACK, which reads up to XNN_EXTRA_BYTES past its input, gets a
// copy (the arena keeps 64 spare bytes after every tensor).
bool is_graph_input(const Graph& g, int t);

// The channels-last buffers an XNNPACK operator over images reads and writes. The runtime's blocked
// input and output are NHWC already and used in place; an NCHW input is transposed into the shared
// scratch before each run (and a blocked graph input copied there: is_graph_input), an NCHW output
// is written there by the operator and transposed out by finish(); `stage_out` keeps the output in
// the scratch even when it is blocked (a kernel that combines it with something else first).
// `setup(in, out)` binds the operator to the buffers: at prepare (or when the shared scratch is
// bound), and again when client memory (rknn_set_io_mem) moves the tensors.
template <class T>
class ChannelsLastIo {
 public:
  struct Dims {
    int64_t batch = 0, in_channels = 0, in_pixels = 0, out_channels = 0, out_pixels = 0;
  };
  using Setup = std::function<void(const T* in, T* out)>;

  void prepare(const KernelContext& ctx, const Dims& d, bool stage_out, std::vector<ScratchLine>* own,
               Setup setup) {
    d_ = d;
    setup_ = std::move(setup);
    in_nhwc_ = ctx.input_blocked(0);
    out_nhwc_ = ctx.output_blocked(0);
    stage_in_ = !in_nhwc_ || is_graph_input(*ctx.graph, ctx.node->inputs[0]);
    stage_out_ = !out_nhwc_ || stage_out;
    const size_t in_bytes = stage_in_ ? staged_bytes(sizeof(T) * in_count()) : 0;
    const size_t out_bytes = stage_out_ ? sizeof(T) * out_count() : 0;
    const T* x = ctx.in<T>(0);
    T* y = ctx.out<T>(0);
    if (in_bytes + out_bytes == 0) {
      bind(x, y);
      return;
    }
    request_scratch(ctx, in_bytes + out_bytes, [this, in_bytes, out_bytes, x, y](void* base) {
      in_ = in_bytes ? static_cast<T*>(base) : nullptr;
      out_ = out_bytes ? reinterpret_cast<T*>(static_cast<uint8_t*>(base) + in_bytes) : nullptr;
      bind(stage_in_ ? in_ : x, stage_out_ ? out_ : y);
    }, own);
  }

  // Before the operator runs: the input's channels-last copy, and the binding to this run's buffers.
  void stage(const KernelContext& ctx) {
    const T* x = ctx.in<T>(0);
    T* y = ctx.out<T>(0);
    if (!in_nhwc_)
      planar_to_channels_last(x, in_, d_.batch, d_.in_channels, d_.in_pixels);
    else if (stage_in_)
      std::memcpy(in_, x, sizeof(T) * in_count());
    const T* xin = stage_in_ ? in_ : x;
    T* yout = stage_out_ ? out_ : y;
    if (xin != bound_in_ || yout != bound_out_) bind(xin, yout);
  }

  // After it: an NCHW output from the staged one (nothing when the operator wrote the output).
  void finish(const KernelContext& ctx) const {
    if (!out_nhwc_) channels_last_to_planar(out_, ctx.out<T>(0), d_.batch, d_.out_channels, d_.out_pixels);
  }

  bool out_nhwc() const { return out_nhwc_; }
  const T* staged_out() const { return out_; }  // the operator's output when it is staged
  size_t out_count() const { return static_cast<size_t>(d_.batch * d_.out_pixels * d_.out_channels); }
  const Dims& dims() const { return d_; }

 private:
  size_t in_count() const { return static_cast<size_t>(d_.batch * d_.in_pixels * d_.in_channels); }
  void bind(const T* in, T* out) {
    setup_(in, out);
    bound_in_ = in;
    bound_out_ = out;
  }

  Dims d_;
  Setup setup_;
  bool in_nhwc_ = false, out_nhwc_ = false;
  bool stage_in_ = false;   // the input goes through in_ (transposed, or copied)
  bool stage_out_ = false;  // the operator writes out_
  T* in_ = nullptr;
  T* out_ = nullptr;
  const T* bound_in_ = nullptr;
  T* bound_out_ = nullptr;
};

// Owns one xnn_operator_t.
class Operator {
 public:
  Operator() = default;
  ~Operator() { reset(); }
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;
  void reset() {
    if (op_) xnn_delete_operator(op_);
    op_ = nullptr;
  }
  xnn_operator_t get() const { return op_; }
  xnn_operator_t* out() {  // for xnn_create_*
    reset();
    return &op_;
  }

 private:
  xnn_operator_t op_ = nullptr;
};

// A kernel that runs one XNNPACK operator over images: each activation NCHW or NHWC (kEach), the
// input staged and the output written through `io_` around the operator. Subclasses create `op_`,
// take `pool_` and prepare `io_` in prepare().
template <class T>
class ImageKernel : public Kernel {
 public:
  BlockedIo blocked_io(const Graph&, const Node&) const override { return BlockedIo::kEach; }
  void run(const KernelContext& ctx) override {
    io_.stage(ctx);
    xnn_run_operator(op_.get(), pool_);
    io_.finish(ctx);
  }

 protected:
  Operator op_;
  pthreadpool_t pool_ = nullptr;  // shared, not owned (thread_pool)
  ChannelsLastIo<T> io_;
  std::vector<ScratchLine> own_;  // io_'s copies when the executor has no shared scratch
};

}  // namespace orknn::xnnpack
