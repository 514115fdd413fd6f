// Reference kernels of the data movement ops: Concat Split Slice Transpose Expand Tile. Any
// dtype: elements are moved by size. Quantized int8 nodes (docs/numerics.md) use the same byte
// moves (the output keeps the input's parameters, checked at plan time), except Concat, which
// requantizes each input whose parameters differ from the output's. Concat also takes blocked
// activations (concat_blocked_io); its geometry and quantized kernel are in kernels/ref/concat.h.
#include <cstring>

#include "kernels/kernel.h"
#include "kernels/ref/concat.h"
#include "kernels/ref/quant_passthrough.h"
#include "kernels/ref/strided_loop.h"

namespace orknn {
namespace {

class ConcatKernel : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override { return concat_blocked_io(g, n); }

  Status prepare(const KernelContext& ctx) override {
    geo_.init(ctx);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    const size_t es = dtype_size(ctx.out_tensor(0).dtype);
    uint8_t* dst = ctx.out<uint8_t>(0);
    geo_.for_pieces(es, ctx.num_threads, [&](size_t i, int64_t x, int64_t y, int64_t n) {
      std::memcpy(dst + static_cast<size_t>(y) * es, ctx.in<uint8_t>(i) + static_cast<size_t>(x) * es,
                  static_cast<size_t>(n) * es);
    });
  }

 private:
  ConcatGeometry geo_;
};

void split_kernel(const KernelContext& ctx) {
  const Tensor& in = ctx.in_tensor(0);
  const size_t axis = static_cast<size_t>(ctx.node->attrs.get_int("axis", 0));
  const size_t es = dtype_size(in.dtype);
  int64_t outer = 0, inner = 0;
  split_dims(in.shape, axis, &outer, &inner);
  const size_t in_row = static_cast<size_t>(in.shape[axis] * inner) * es;
  const uint8_t* src = ctx.in<uint8_t>(0);
  const std::vector<int64_t> split = ctx.node->attrs.get_ints("split");
  size_t offset = 0;
  for (size_t i = 0; i < split.size() && i < ctx.outputs.size(); ++i) {
    const size_t row = static_cast<size_t>(split[i] * inner) * es;
    uint8_t* dst = static_cast<uint8_t*>(ctx.outputs[i]);
    if (dst && row) {
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + static_cast<size_t>(o) * row, src + static_cast<size_t>(o) * in_row + offset, row);
    }
    offset += row;
  }
}

// Split also takes float nChw16c activations split along the channels (YOLO's C2f/C3k2 halves stay
// blocked between their convolutions then). kUniform: the layout pass blocks them only when every
// part is a multiple of 16 channels (it pads no tensor of such a node), and then each part of an
// image is one contiguous run of the input's bytes in nChw16c as in NCHW, so the same copies serve.
class SplitKernel : public Kernel {
 public:
  BlockedIo blocked_io(const Graph& g, const Node& n) const override {
    const Tensor* x = g.input(n, 0);
    if (!x || x->dtype != DType::kF32 || blocked_channels_last(x->dtype) || x->shape.size() != 4) return BlockedIo::kNone;
    if (n.attrs.get_int("axis", 0) != 1) return BlockedIo::kNone;
    for (int t : n.outputs)
      if (t < 0) return BlockedIo::kNone;
    return BlockedIo::kUniform;
  }
  void run(const KernelContext& ctx) override { split_kernel(ctx); }
};

// Operand 0 walks the output densely, operand 1 the input with the strides set by a subclass.
class CopyLoopKernel : public Kernel {
 public:
  void run(const KernelContext& ctx) override {
    strided_copy(loop_, ctx.outputs[0], ctx.inputs[0], dtype_size(ctx.in_tensor(0).dtype), ctx.num_threads);
  }

 protected:
  StridedLoop loop_;
};

class SliceKernel : public CopyLoopKernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& in = ctx.in_tensor(0).shape;
    const Shape& out = ctx.out_tensor(0).shape;
    const std::vector<int64_t> starts = ctx.node->attrs.get_ints("starts");
    const std::vector<int64_t> steps = ctx.node->attrs.get_ints("steps");
    if (starts.size() != in.size() || steps.size() != in.size())
      return ORKNN_ERR(kInvalidModel, "Slice node '%s': starts/steps are not normalised (run infer first)",
                       ctx.node->name.c_str());
    std::vector<int64_t> in_strides = dense_strides(in);
    int64_t base = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      if (out[d] > 0) base += starts[d] * in_strides[d];  // a start may equal dim when nothing is taken
      in_strides[d] *= steps[d];
    }
    loop_.init(out, {dense_strides(out), in_strides}, {0, base});
    view_bytes_ = static_cast<size_t>(base) * dtype_size(ctx.in_tensor(0).dtype);
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    // A contiguous slice the planner placed inside its input (view_offset, graph/planner.h): the
    // bytes are there already. Tensors alive together never share bytes otherwise.
    if (ctx.outputs[0] == ctx.in<uint8_t>(0) + view_bytes_) return;
    CopyLoopKernel::run(ctx);
  }

 private:
  size_t view_bytes_ = 0;
};

class TransposeKernel : public CopyLoopKernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& out = ctx.out_tensor(0).shape;
    loop_.init(out, {dense_strides(out), permuted_strides(ctx.in_tensor(0).shape, ctx.node->attrs.get_ints("perm"))});
    return Status::Ok();
  }
};

class ExpandKernel : public CopyLoopKernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& out = ctx.out_tensor(0).shape;
    loop_.init(out, {dense_strides(out), broadcast_strides(ctx.in_tensor(0).shape, out)});
    return Status::Ok();
  }
};

// Tile iterates the space [r0, d0, r1, d1, ...]: output coordinate k is r_k * d_k + i_k, the
// input coordinate is i_k.
class TileKernel : public CopyLoopKernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& in = ctx.in_tensor(0).shape;
    const Shape& out = ctx.out_tensor(0).shape;
    const std::vector<int64_t> repeats = ctx.node->attrs.get_ints("repeats");
    const std::vector<int64_t> is = dense_strides(in), os = dense_strides(out);
    Shape space;
    std::vector<int64_t> out_strides, in_strides;
    for (size_t d = 0; d < in.size(); ++d) {
      space.push_back(repeats[d]);
      out_strides.push_back(in[d] * os[d]);
      in_strides.push_back(0);
      space.push_back(in[d]);
      out_strides.push_back(os[d]);
      in_strides.push_back(is[d]);
    }
    loop_.init(space, {out_strides, in_strides});
    return Status::Ok();
  }
};

}  // namespace

ORKNN_REGISTER_KERNEL(Concat, "ref", kPriorityReference, nullptr, ConcatKernel);
ORKNN_REGISTER_KERNEL(Split, "ref", kPriorityReference, nullptr, SplitKernel);
ORKNN_REGISTER_KERNEL(Slice, "ref", kPriorityReference, nullptr, SliceKernel);
ORKNN_REGISTER_KERNEL(Transpose, "ref", kPriorityReference, nullptr, TransposeKernel);
ORKNN_REGISTER_KERNEL(Expand, "ref", kPriorityReference, nullptr, ExpandKernel);
ORKNN_REGISTER_KERNEL(Tile, "ref", kPriorityReference, nullptr, TileKernel);

ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Concat, ConcatQ8<ScalarRequant>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Split, QuantPassthroughFn<split_kernel>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Slice, QuantPassthrough<SliceKernel>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Transpose, QuantPassthrough<TransposeKernel>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Expand, QuantPassthrough<ExpandKernel>);
ORKNN_REGISTER_QUANT_REF_KERNEL_CLASS(Tile, QuantPassthrough<TileKernel>);

}  // namespace orknn
