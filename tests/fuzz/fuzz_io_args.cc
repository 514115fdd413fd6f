// libFuzzer target: the public C API's I/O calls with fuzzed arguments. Three small valid models
// are built once from the IR (fuzz_models.h: quantized Relu with UINT8 mean/std normalisation,
// float Add of two inputs, float Conv+Relu); each fuzz input picks one, rknn_init()s it and is then read as a sequence of
// calls: rknn_inputs_set, rknn_create_mem + rknn_set_io_mem, rknn_destroy_mem, rknn_run,
// rknn_outputs_get/_release and rknn_query with fuzzed indices, types, layouts, sizes and attr
// fields. Every buffer handed to the API really is as large as the size passed with it (the API
// trusts sizes, as the vendor's does); everything else may be wrong. The kernels are the fast ones a
// client gets (the int8 I/O conversions of inputs_set and outputs_get among them). Error codes are
// fine; crashes, leaks, sanitizer reports and hangs are findings.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_models.h"
#include "rknn_api.h"

namespace {

constexpr uint32_t kMaxBuf = 4096;   // largest fuzzed buffer / mem size (the models need < 200 B)
constexpr int kMaxCalls = 24;
constexpr size_t kMaxMems = 4;

// Raw enum values a little past each end, so out-of-range values are tried too. Stored as raw
// ints (memcpy): a C client may pass any int there, and the library must read it as such
// (common/raw_enum.h); the harness itself must not load an out-of-range enum.
template <typename E>
void set_raw(E* field, int v) {
  static_assert(sizeof(E) == sizeof(int), "C API enums are 4 bytes");
  std::memcpy(field, &v, sizeof v);
}
void fuzz_type(FuzzedDataProvider& fdp, rknn_tensor_type* field) {
  set_raw(field, fdp.ConsumeIntegralInRange<int>(-1, RKNN_TENSOR_TYPE_MAX + 1));
}
void fuzz_fmt(FuzzedDataProvider& fdp, rknn_tensor_format* field) {
  set_raw(field, fdp.ConsumeIntegralInRange<int>(-1, RKNN_TENSOR_FORMAT_MAX + 1));
}
// Mostly small indices (valid or just past the end), sometimes any 32-bit value.
uint32_t fuzz_index(FuzzedDataProvider& fdp) {
  return fdp.ConsumeBool() ? fdp.ConsumeIntegral<uint32_t>() : fdp.ConsumeIntegralInRange<uint32_t>(0, 3);
}

void call_inputs_set(FuzzedDataProvider& fdp, rknn_context ctx) {
  const uint32_t n = fdp.ConsumeIntegralInRange<uint32_t>(0, 3);
  std::vector<rknn_input> in(n == 0 ? 1 : n);
  std::vector<std::vector<uint8_t>> bufs(in.size());
  for (uint32_t i = 0; i < n; ++i) {
    std::memset(&in[i], 0, sizeof(rknn_input));
    in[i].index = fuzz_index(fdp);
    fuzz_type(fdp, &in[i].type);
    fuzz_fmt(fdp, &in[i].fmt);
    in[i].pass_through = fdp.ConsumeIntegral<uint8_t>() % 3;  // 0, 1 and a non-boolean 2
    const uint32_t size = fdp.ConsumeIntegralInRange<uint32_t>(0, kMaxBuf);
    bufs[i] = fdp.ConsumeBytes<uint8_t>(size);
    bufs[i].resize(size, 0);
    const bool null_buf = fdp.ConsumeIntegral<uint8_t>() == 0;
    in[i].buf = (null_buf || size == 0) ? nullptr : bufs[i].data();
    in[i].size = null_buf ? size : static_cast<uint32_t>(bufs[i].size());
  }
  (void)rknn_inputs_set(ctx, n, n == 0 && fdp.ConsumeBool() ? nullptr : in.data());
}

void call_set_io_mem(FuzzedDataProvider& fdp, rknn_context ctx, std::vector<rknn_tensor_mem*>* mems) {
  if (mems->size() >= kMaxMems) return;
  rknn_tensor_mem* mem = rknn_create_mem(ctx, fdp.ConsumeIntegralInRange<uint32_t>(0, kMaxBuf));
  if (mem == nullptr) return;
  mems->push_back(mem);
  rknn_tensor_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  const bool output = fdp.ConsumeBool();
  attr.index = fdp.ConsumeIntegralInRange<uint32_t>(0, 2);
  // Start from what the runtime reports (so names and shapes are usually right) and then damage
  // some fields; or start from zeroes.
  if (fdp.ConsumeBool()) {
    const int cmd = output ? (fdp.ConsumeBool() ? RKNN_QUERY_NATIVE_OUTPUT_ATTR : RKNN_QUERY_OUTPUT_ATTR)
                           : (fdp.ConsumeBool() ? RKNN_QUERY_NATIVE_INPUT_ATTR : RKNN_QUERY_INPUT_ATTR);
    (void)rknn_query(ctx, static_cast<rknn_query_cmd>(cmd), &attr, sizeof(attr));
  }
  const uint8_t damage = fdp.ConsumeIntegral<uint8_t>();
  if (damage & 0x01) attr.index = fuzz_index(fdp);
  if (damage & 0x02) {
    attr.n_dims = fdp.ConsumeIntegralInRange<uint32_t>(0, RKNN_MAX_DIMS + 1);
    for (uint32_t d = 0; d < RKNN_MAX_DIMS; ++d) attr.dims[d] = fdp.ConsumeIntegralInRange<uint32_t>(0, 16);
  }
  if (damage & 0x04) fuzz_fmt(fdp, &attr.fmt);
  if (damage & 0x08) fuzz_type(fdp, &attr.type);
  if (damage & 0x10) attr.size = fdp.ConsumeIntegralInRange<uint32_t>(0, 2 * kMaxBuf);
  if (damage & 0x20) attr.pass_through = fdp.ConsumeIntegral<uint8_t>() % 3;
  if (damage & 0x40) {
    attr.w_stride = fdp.ConsumeIntegralInRange<uint32_t>(0, 64);
    attr.h_stride = fdp.ConsumeIntegralInRange<uint32_t>(0, 64);
    attr.size_with_stride = fdp.ConsumeIntegralInRange<uint32_t>(0, 2 * kMaxBuf);
  }
  if (damage & 0x80) {
    // Not NUL-terminated on purpose when the string fills the array.
    const std::string name = fdp.ConsumeRandomLengthString(RKNN_MAX_NAME_LEN);
    std::memset(attr.name, 0, sizeof(attr.name));
    std::memcpy(attr.name, name.data(), name.size());
  }
  (void)rknn_set_io_mem(ctx, mem, &attr);
}

void call_destroy_mem(FuzzedDataProvider& fdp, rknn_context ctx, std::vector<rknn_tensor_mem*>* mems) {
  if (mems->empty()) return;
  const size_t i = fdp.ConsumeIntegralInRange<size_t>(0, mems->size() - 1);
  (void)rknn_destroy_mem(ctx, (*mems)[i]);
  mems->erase(mems->begin() + static_cast<std::ptrdiff_t>(i));
}

void call_outputs_get(FuzzedDataProvider& fdp, rknn_context ctx) {
  const uint32_t n = fdp.ConsumeIntegralInRange<uint32_t>(0, 3);
  std::vector<rknn_output> out(n == 0 ? 1 : n);
  std::vector<std::vector<uint8_t>> bufs(out.size());
  for (uint32_t i = 0; i < n; ++i) {
    std::memset(&out[i], 0, sizeof(rknn_output));
    out[i].index = fuzz_index(fdp);
    out[i].want_float = fdp.ConsumeIntegral<uint8_t>() % 3;
    out[i].is_prealloc = fdp.ConsumeIntegral<uint8_t>() % 3;
    if (out[i].is_prealloc) {
      const uint32_t size = fdp.ConsumeIntegralInRange<uint32_t>(0, kMaxBuf);
      bufs[i].assign(size, 0);
      out[i].buf = size ? bufs[i].data() : nullptr;
      out[i].size = size;
    }
  }
  rknn_output_extend ext;
  std::memset(&ext, 0, sizeof(ext));
  const int ret = rknn_outputs_get(ctx, n, out.data(), fdp.ConsumeBool() ? &ext : nullptr);
  // Release unconditionally (also after an error: must free what was allocated and ignore the rest,
  // and prealloc buffers must be left alone).
  (void)ret;
  (void)rknn_outputs_release(ctx, n, out.data());
}

void call_query(FuzzedDataProvider& fdp, rknn_context ctx) {
  rknn_tensor_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.index = fuzz_index(fdp);
  const int cmd = fdp.ConsumeIntegralInRange<int>(RKNN_QUERY_INPUT_ATTR, RKNN_QUERY_CURRENT_INPUT_ATTR + 2);
  // Only the attr-sized commands: the size passed is the struct's real size.
  if (cmd == RKNN_QUERY_INPUT_ATTR || cmd == RKNN_QUERY_OUTPUT_ATTR ||
      (cmd >= RKNN_QUERY_NATIVE_INPUT_ATTR && cmd <= RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR)) {
    (void)rknn_query(ctx, static_cast<rknn_query_cmd>(cmd), &attr, sizeof(attr));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<uint8_t> kModels[3] = {orknn_fuzz::quantized_relu_model(),
                                                 orknn_fuzz::float_add_model(),
                                                 orknn_fuzz::float_conv_relu_model()};
  FuzzedDataProvider fdp(data, size);
  const std::vector<uint8_t>& model = kModels[fdp.ConsumeIntegralInRange<int>(0, 2)];
  std::vector<uint8_t> model_copy(model);  // rknn_init takes a non-const pointer
  rknn_context ctx = 0;
  if (rknn_init(&ctx, model_copy.data(), static_cast<uint32_t>(model_copy.size()), 0, nullptr) != RKNN_SUCC) {
    std::abort();  // the models are valid: failing to load them is a bug
  }
  std::vector<rknn_tensor_mem*> mems;
  for (int call = 0; call < kMaxCalls && fdp.remaining_bytes() > 0; ++call) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
      case 0: call_inputs_set(fdp, ctx); break;
      case 1: call_set_io_mem(fdp, ctx, &mems); break;
      case 2: call_destroy_mem(fdp, ctx, &mems); break;
      case 3: (void)rknn_run(ctx, nullptr); break;
      case 4: call_outputs_get(fdp, ctx); break;
      default: call_query(fdp, ctx); break;
    }
  }
  for (rknn_tensor_mem* mem : mems) (void)rknn_destroy_mem(ctx, mem);
  rknn_destroy(ctx);
  return 0;
}
