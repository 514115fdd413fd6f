#include "testutil/op_harness.h"

#include "runtime/layout_assignment.h"

#include <cmath>

namespace orknn::test {

namespace {

OpResult run_op_impl(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, int n_outputs,
                     const std::string& kernel, int num_threads, const std::vector<QuantParams>& out_quant,
                     int* blocked_count, int in_place_input = -1) {
  OpResult r;
  Graph g;
  g.precision = FloatPrecision::kFp32;
  Node n;
  n.name = std::string(op_name(op)) + "_under_test";
  n.op = op;
  n.attrs = attrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorData& d = inputs[i];
    if (d.absent) { n.inputs.push_back(-1); continue; }
    std::string name = "in" + std::to_string(i);
    int id = d.is_const ? g.add_const(name, d.shape, d.dtype, d.bytes.data(), d.bytes.size())
                        : g.add_tensor(name, d.shape, d.dtype);
    g.tensor(id).quant = d.quant;
    n.inputs.push_back(id);
  }
  for (int i = 0; i < n_outputs; ++i) {
    n.outputs.push_back(g.add_tensor("out" + std::to_string(i), {}, DType::kF32));
    if (static_cast<size_t>(i) < out_quant.size()) {
      // A quantized output is int8 before infer runs, as the converter leaves it.
      g.tensor(n.outputs.back()).quant = out_quant[static_cast<size_t>(i)];
      if (!out_quant[static_cast<size_t>(i)].empty()) g.tensor(n.outputs.back()).dtype = DType::kI8;
    }
  }
  const OpDef* def = find_op(op);
  r.status = def->infer(g, n);
  if (!r.status.ok()) return r;

  std::unique_ptr<Kernel> k;
  if (kernel.empty() || kernel == "ref") {
    k = create_kernel(g, n, kernel.empty(), &r.kernel_name);
  } else {
    for (const KernelEntry* e : kernels_for(op)) {
      if (kernel == e->name && (!e->supports || e->supports(g, n))) { k = e->create(); r.kernel_name = e->name; }
    }
  }
  if (!k) { r.status = ORKNN_ERR(kFail, "no kernel '%s' for %s", kernel.c_str(), op_name(op)); return r; }

  KernelContext ctx;
  ctx.graph = &g;
  ctx.node = &n;
  ctx.num_threads = num_threads;
  std::vector<std::vector<uint8_t>> in_bufs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (n.inputs[i] < 0) { ctx.inputs.push_back(nullptr); continue; }
    const Tensor& t = g.tensor(n.inputs[i]);
    if (t.is_const()) { ctx.inputs.push_back(t.data.ptr); continue; }
    in_bufs[i] = inputs[i].bytes;
    in_bufs[i].resize(t.nbytes() + 64);
    ctx.inputs.push_back(in_bufs[i].data());
  }
  std::vector<std::vector<uint8_t>> out_bufs(n.outputs.size());
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    out_bufs[i].assign(g.tensor(n.outputs[i]).nbytes() + 64, 0);
    ctx.outputs.push_back(out_bufs[i].data());
  }
  if (blocked_count) {  // the runtime's own choice (runtime/layout_assignment.h) for the one-node graph
    *blocked_count = 0;
    Graph one = g;
    one.nodes = {n};
    const std::vector<uint8_t> blocked = choose_blocked_tensors(one, {k->blocked_io(g, n)});
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int t = n.inputs[i];
      const bool b = t >= 0 && blocked[static_cast<size_t>(t)];
      ctx.in_blocked.push_back(b);
      if (!b) continue;
      std::vector<uint8_t> plain = in_bufs[i];
      in_bufs[i].assign(blocked_bytes(g.tensor(t)) + 64, 0);  // padding lanes hold zeros
      convert_blocked(g.tensor(t).shape, g.tensor(t).dtype, plain.data(), in_bufs[i].data(), true);
      ctx.inputs[i] = in_bufs[i].data();
      ++*blocked_count;
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const bool b = blocked[static_cast<size_t>(n.outputs[i])] != 0;
      ctx.out_blocked.push_back(b);
      *blocked_count += b;
      if (!b) continue;
      // NaN bytes: padding lanes the kernel does not write as zeros fail the check after the run.
      out_bufs[i].assign(blocked_bytes(g.tensor(n.outputs[i])) + 64, 0xFF);
      ctx.outputs[i] = out_bufs[i].data();
    }
  }
  if (in_place_input >= 0) {  // output 0 in the input's bytes, as the arena planner may place them
    const size_t i = static_cast<size_t>(in_place_input);
    if (i >= n.inputs.size() || n.inputs[i] < 0 || g.tensor(n.inputs[i]).is_const() ||
        g.tensor(n.inputs[i]).nbytes() != g.tensor(n.outputs[0]).nbytes()) {
      r.status = ORKNN_ERR(kInvalidParam, "input %d cannot hold output 0", in_place_input);
      return r;
    }
    ctx.outputs[0] = in_bufs[i].data();
  }
  // A shared scratch as the runtime gives, filled with NaN bytes before the run: a kernel that
  // expected anything of its transient buffers (zero padding, data from prepare) fails its test.
  SharedScratch scratch;
  ctx.scratch = &scratch;
  r.status = k->prepare(ctx);
  if (!r.status.ok()) return r;
  if (!scratch.allocate()) { r.status = ORKNN_ERR(kNoMemory, "shared scratch of %zu bytes", scratch.bytes()); return r; }
  scratch.fill(0xFF);
  k->run(ctx);
  if (in_place_input >= 0) out_bufs[0] = in_bufs[static_cast<size_t>(in_place_input)];
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (ctx.output_blocked(i)) {
      const Tensor& t = g.tensor(n.outputs[i]);
      // Padded nChw16c (kernels/kernel.h; NHWC has no padding).
      if (t.dtype == DType::kF32 && !kFloatBlockedNhwc && t.shape[1] % 16 != 0) {
        const float* y = reinterpret_cast<const float*>(out_bufs[i].data());
        const int64_t blocks = (t.shape[1] + 15) / 16, hw = t.shape[2] * t.shape[3];
        for (int64_t b = blocks - 1; b < t.shape[0] * blocks; b += blocks)
          for (int64_t p = 0; p < hw; ++p)
            for (int64_t l = t.shape[1] % 16; l < 16; ++l)
              if (y[(b * hw + p) * 16 + l] != 0.f) {
                r.status = ORKNN_ERR(kFail, "output %zu: padding lane %lld of block %lld, pixel %lld is %g, not 0", i,
                                     (long long)l, (long long)b, (long long)p, y[(b * hw + p) * 16 + l]);
                return r;
              }
      }
      std::vector<uint8_t> b = out_bufs[i];
      convert_blocked(g.tensor(n.outputs[i]).shape, g.tensor(n.outputs[i]).dtype, b.data(), out_bufs[i].data(), false);
    }
    const Tensor& t = g.tensor(n.outputs[i]);
    TensorData d;
    d.shape = t.shape;
    d.dtype = t.dtype;
    d.quant = t.quant;
    d.bytes.assign(out_bufs[i].begin(), out_bufs[i].begin() + static_cast<long>(t.nbytes()));
    r.outputs.push_back(std::move(d));
  }
  return r;
}

}  // namespace

OpResult run_op(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, int n_outputs,
                const std::string& kernel, int num_threads, const std::vector<QuantParams>& out_quant) {
  return run_op_impl(op, attrs, inputs, n_outputs, kernel, num_threads, out_quant, nullptr);
}

bool kernel_registered(OpId op, const std::string& name) {
  for (const KernelEntry* e : kernels_for(op))
    if (name == e->name) return true;
  return false;
}

OpResult run_op_in_place(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, const std::string& kernel,
                         int num_threads, size_t input, int* blocked) {
  return run_op_impl(op, attrs, inputs, 1, kernel, num_threads, {}, blocked, static_cast<int>(input));
}

OpResult run_op_blocked(OpId op, const Attrs& attrs, const std::vector<TensorData>& inputs, const std::string& kernel,
                        int num_threads, int* blocked, const std::vector<QuantParams>& out_quant, int n_outputs) {
  return run_op_impl(op, attrs, inputs, n_outputs, kernel, num_threads, out_quant, blocked);
}

size_t blocked_bytes(const Tensor& t) {
  if (t.dtype != DType::kF32 || kFloatBlockedNhwc) return t.nbytes();
  return static_cast<size_t>(t.shape[0] * ((t.shape[1] + 15) / 16 * 16) * t.shape[2] * t.shape[3]) * sizeof(float);
}

void convert_blocked(const Shape& s, DType dtype, const void* src, void* dst, bool to_blocked) {
  const int64_t n = s[0], c = s[1], hw = s[2] * s[3], blocks = (c + 15) / 16;
  const bool f32 = dtype == DType::kF32, c16 = f32 && !kFloatBlockedNhwc;  // else NHWC
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t plain = (i * c + ch) * hw + p;
        const int64_t blocked = c16 ? ((i * blocks + ch / 16) * hw + p) * 16 + ch % 16 : (i * hw + p) * c + ch;
        const int64_t from = to_blocked ? plain : blocked, to = to_blocked ? blocked : plain;
        if (f32) static_cast<float*>(dst)[to] = static_cast<const float*>(src)[from];
        else static_cast<uint8_t*>(dst)[to] = static_cast<const uint8_t*>(src)[from];
      }
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  float m = 0.f;
  for (size_t i = 0; i < a.size(); ++i) {
    float d = std::fabs(a[i] - b[i]);
    if (!(d <= m)) m = d;  // NaN propagates
  }
  return m;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || a.empty()) return 0.0;
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) { ab += double(a[i]) * b[i]; aa += double(a[i]) * a[i]; bb += double(b[i]) * b[i]; }
  if (aa == 0 && bb == 0) return 1.0;
  return ab / (std::sqrt(aa) * std::sqrt(bb) + 1e-30);
}

}  // namespace orknn::test
