// "x86_transpose_f32": Transpose of 4-byte elements (float32, int32, ...) for any permutation, as
// tiles of 8 x 8 elements transposed in AVX2 registers. The reference kernel walks the output with
// the permuted input strides one element at a time (kernels/ref/strided_loop.h): SAM's and the
// transformers' attention reshapes ([B, H, N, d] <-> [B, N, H, d]) and channel-last round trips
// spent up to a sixth of those models' time there (issue 28).
//
// Geometry (prepare): the output's dims with their input strides, size-1 dims dropped and
// neighbours that stay neighbours merged. If the innermost output dim is also innermost in the
// input, every output row is one memcpy. Otherwise the output's innermost dim a (input stride sa)
// and the input's innermost dim b (output stride ob) form a 2-D transpose, repeated over every
// other dim: 8 input rows of 8 b-elements each become 8 output rows of 8 a-elements; the edges
// that do not fill a tile are copied element by element. Bit-exact by construction (elements are
// moved, never computed).
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/ref/strided_loop.h"
#include "kernels/x86/cpu_features.h"

namespace orknn {
namespace {

bool supports_transpose_4byte(const Graph& g, const Node& n) {
  if (!x86::cpu_avx2() || is_quantized_node(g, n) || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1)
    return false;
  const Tensor& x = g.tensor(n.inputs[0]);
  return dtype_size(x.dtype) == 4 && g.tensor(n.outputs[0]).dtype == x.dtype &&
         n.attrs.get_ints("perm", {}).size() == x.shape.size();
}

// 8 rows of 8 elements at src (row stride ss) into 8 rows at dst (row stride ds), transposed.
__attribute__((target("avx2"))) inline void transpose8x8(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + i * ss));
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // r[0..3]: columns 0, 1, 2, 3 of rows 0-3 (low lane) and 0-3 of columns 4-7 (high lane); r[4..7]
  // the same for rows 4-7.
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
    t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
  }
  for (int i = 0; i < 8; ++i) _mm256_storeu_ps(reinterpret_cast<float*>(dst + i * ds), t[i]);
}

class TransposeF32 : public Kernel {
 public:
  Status prepare(const KernelContext& ctx) override {
    const Shape& out = ctx.out_tensor(0).shape;
    const std::vector<int64_t> in_strides = permuted_strides(ctx.in_tensor(0).shape, ctx.node->attrs.get_ints("perm"));
    // Output dims (outermost first) with their input strides, size-1 dims dropped, merged.
    std::vector<int64_t> n, s;
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] == 1) continue;
      const int64_t st = in_strides[d];
      if (!n.empty() && s.back() == st * out[d]) {
        n.back() *= out[d];
        s.back() = st;
      } else {
        n.push_back(out[d]);
        s.push_back(st);
      }
    }
    total_ = shape_numel(out);
    outer_dims_.clear();
    outer_in_.clear();
    outer_out_.clear();
    const size_t r = n.size();
    std::vector<int64_t> os(r, 1);
    for (size_t d = r; d-- > 1;) os[d - 1] = os[d] * n[d];
    rows_copy_ = r == 0 || s[r - 1] == 1;
    size_t q = r;  // the input's innermost dim among the output's
    if (!rows_copy_) {
      for (size_t d = 0; d < r; ++d)
        if (s[d] == 1) q = d;
      if (q == r) return ORKNN_ERR(kFail, "Transpose node '%s': no unit input stride", ctx.node->name.c_str());
      a_ = n[r - 1];
      sa_ = s[r - 1];
      b_ = n[q];
      ob_ = os[q];
    } else {
      a_ = r == 0 ? 1 : n[r - 1];
    }
    const size_t skip_last = r == 0 ? 0 : r - 1;
    for (size_t d = 0; d < skip_last; ++d) {
      if (d == q) continue;
      outer_dims_.push_back(n[d]);
      outer_in_.push_back(s[d]);
      outer_out_.push_back(os[d]);
    }
    outer_ = 1;
    for (int64_t v : outer_dims_) outer_ *= v;
    if (rows_copy_) rows_.init(out, {dense_strides(out), in_strides});  // runs of the output's innermost dims
    return Status::Ok();
  }

  void run(const KernelContext& ctx) override {
    if (total_ == 0) return;
    const uint32_t* x = ctx.in<uint32_t>(0);
    uint32_t* y = ctx.out<uint32_t>(0);
    const int nt = copy_threads(static_cast<size_t>(total_) * 4, ctx.num_threads);
    if (rows_copy_) {
      parallel_ranges(rows_.outer(), nt, [&](int64_t o0, int64_t o1, int) {
        rows_.run_range([&](const int64_t* off, const int64_t*, int64_t n) { copy_row(x + off[1], y + off[0], n); }, o0, o1);
      });
      return;
    }
    // Jobs: (outer index, block of 8 b-rows).
    const int64_t bblocks = (b_ + 7) / 8;
    parallel_ranges(outer_ * bblocks, nt, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        int64_t io, oo;
        offsets(j / bblocks, &io, &oo);
        tile_rows(x + io, y + oo, (j % bblocks) * 8);
      }
    });
  }

 private:
  // Input and output element offsets of outer index o.
  void offsets(int64_t o, int64_t* io, int64_t* oo) const {
    int64_t i = 0, u = 0;
    for (size_t d = outer_dims_.size(); d-- > 0;) {
      const int64_t c = o % outer_dims_[d];
      o /= outer_dims_[d];
      i += c * outer_in_[d];
      u += c * outer_out_[d];
    }
    *io = i;
    *oo = u;
  }

  // Short rows (an attention head's 16 floats) inline, long ones by memcpy.
  __attribute__((target("avx2"))) static void copy_row(const uint32_t* x, uint32_t* y, int64_t n) {
    if (n > 64) {
      std::memcpy(y, x, static_cast<size_t>(n) * 4);
      return;
    }
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    for (; i < n; ++i) y[i] = x[i];
  }

  // Output rows b0 .. b0 + 7 (fewer at the end) of one 2-D transpose: y[b * ob + a] = x[a * sa + b].
  __attribute__((target("avx2"))) void tile_rows(const uint32_t* x, uint32_t* y, int64_t b0) const {
    const int64_t bn = std::min<int64_t>(8, b_ - b0);
    int64_t a0 = 0;
    if (bn == 8)
      for (; a0 + 8 <= a_; a0 += 8) transpose8x8(x + a0 * sa_ + b0, sa_, y + b0 * ob_ + a0, ob_);
    for (int64_t b = b0; b < b0 + bn; ++b)
      for (int64_t a = a0; a < a_; ++a) y[b * ob_ + a] = x[a * sa_ + b];
  }

  int64_t total_ = 0, outer_ = 1;
  bool rows_copy_ = true;
  int64_t a_ = 1, sa_ = 1, b_ = 1, ob_ = 1;
  std::vector<int64_t> outer_dims_, outer_in_, outer_out_;
  StridedLoop rows_;
};

}  // namespace

ORKNN_REGISTER_KERNEL(Transpose, "x86_transpose_f32", kPriorityGeneral, supports_transpose_4byte, TransposeF32);

}  // namespace orknn
