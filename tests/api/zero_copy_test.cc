// Zero-copy memory and native layouts through librknnrt.so (docs/api-contract.md §1.4, §4.4): rknn_create_mem*,
// destroy_mem, mem_sync, the NATIVE_* queries and rknn_set_io_mem, checked against the same model
// run through inputs_set/outputs_get with outputs re-laid-out by a naive loop written here, with
// the C2 of the vendor guide's Table 3-1 (testutil/vendor_c2.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "graph/ir.h"
#include "model/model_io.h"
#include "api/api_test_util.h"
#include "rknn_api.h"
#include "testutil/vendor_c2.h"

namespace {

using orknn::DType;
using orknn::Graph;

constexpr int kC = 13, kH = 2, kW = 3, kHW = kH * kW, kN = kC * kHW;  // 13 channels: padding in every C2
const float kBias[kC] = {0.5f, -1.f, 2.f, 0.f, 1.f, -0.5f, 3.f, -2.f, 0.25f, 1.5f, -3.f, 0.75f, -0.25f};

// Float model: x [1,13,2,3] -> Relu -> Add(bias per channel) -> y [1,13,2,3] -> Reshape -> w [13,6].
std::vector<uint8_t> make_float_model(const std::string& platform) {
  Graph g;
  g.platform = platform;
  g.precision = orknn::FloatPrecision::kFp16;
  int x = g.add_tensor("x", {1, kC, kH, kW}, DType::kF32);
  int r = g.add_tensor("relu_out", {1, kC, kH, kW}, DType::kF32);
  int b = g.add_const("b", {1, kC, 1, 1}, DType::kF32, kBias, sizeof(kBias));
  int y = g.add_tensor("y", {1, kC, kH, kW}, DType::kF32);
  int w = g.add_tensor("w", {kC, kHW}, DType::kF32);
  orknn::Node relu; relu.name = "relu0"; relu.op = orknn::OpId::Relu; relu.inputs = {x}; relu.outputs = {r};
  orknn::Node add; add.name = "add0"; add.op = orknn::OpId::Add; add.inputs = {r, b}; add.outputs = {y};
  orknn::Node rs; rs.name = "reshape0"; rs.op = orknn::OpId::Reshape; rs.inputs = {y, -1}; rs.outputs = {w};
  rs.attrs.set_ints("shape", {kC, kHW});
  rs.attrs.set_int("allowzero", 0);
  g.nodes = {relu, add, rs};
  orknn::GraphInput gi; gi.tensor = x; gi.mean = {100.f}; gi.std = {20.f};
  g.inputs = {gi};
  g.outputs = {y, w};
  return api_test::model_bytes(g);
}

// Quantized model: x int8 [1,13,2,3] -> Relu -> y int8.
std::vector<uint8_t> make_quant_model(const std::string& platform) {
  Graph g;
  g.platform = platform;
  int x = g.add_tensor("x", {1, kC, kH, kW}, DType::kI8);
  int y = g.add_tensor("y", {1, kC, kH, kW}, DType::kI8);
  g.tensor(x).quant.scale = {0.05f};
  g.tensor(x).quant.zero_point = {-3};
  g.tensor(y).quant.scale = {0.025f};
  g.tensor(y).quant.zero_point = {-128};
  orknn::Node relu; relu.name = "relu0"; relu.op = orknn::OpId::Relu; relu.inputs = {x}; relu.outputs = {y};
  g.nodes = {relu};
  orknn::GraphInput gi; gi.tensor = x; gi.mean = {120.f}; gi.std = {3.f};
  g.inputs = {gi};
  g.outputs = {y};
  return api_test::model_bytes(g);
}

using api_test::Ctx;

int init(Ctx& c, std::vector<uint8_t> bytes) {
  return rknn_init(&c.ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr);
}

rknn_tensor_attr query_attr(rknn_context ctx, rknn_query_cmd cmd, uint32_t index) {
  rknn_tensor_attr a;
  std::memset(&a, 0, sizeof(a));
  a.index = index;
  EXPECT_EQ(rknn_query(ctx, cmd, &a, sizeof(a)), RKNN_SUCC) << "cmd " << cmd << " index " << index;
  return a;
}

// An NHWC uint8 image with values spread over 0..255.
std::vector<uint8_t> make_image(int seed) {
  std::vector<uint8_t> img(kN);
  for (int i = 0; i < kN; ++i) img[i] = static_cast<uint8_t>((i * 37 + seed * 11) % 256);
  return img;
}

// Naive NCHW -> NC1HWC2 written independently of the runtime (any padding stays `pad`).
template <typename T>
std::vector<T> to_nc1hwc2(const std::vector<T>& nchw, int C, int H, int W, int c2, T pad) {
  const int c1 = (C + c2 - 1) / c2;
  std::vector<T> out(static_cast<size_t>(c1 * H * W * c2), pad);
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < W; ++w) out[static_cast<size_t>(((c / c2) * H * W + h * W + w) * c2 + c % c2)] = nchw[static_cast<size_t>((c * H + h) * W + w)];
  return out;
}

// Naive NCHW -> NHWC, as the guide's NC1HWC2_to_NHWC example lays a feature out.
template <typename T>
std::vector<T> to_nhwc(const std::vector<T>& nchw, int C, int H, int W) {
  std::vector<T> out(static_cast<size_t>(C * H * W));
  for (int c = 0; c < C; ++c)
    for (int p = 0; p < H * W; ++p) out[static_cast<size_t>(p * C + c)] = nchw[static_cast<size_t>(c * H * W + p)];
  return out;
}

bool fd_is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// ---------------------------------------------------------------------------------------------
// Memory API

TEST(ZeroCopyMem, CreateMemGivesAWritableMappingWithARealFd) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  rknn_tensor_mem* m = rknn_create_mem(c.ctx, 1000);
  ASSERT_NE(m, nullptr);
  EXPECT_NE(m->virt_addr, nullptr);
  EXPECT_GT(m->fd, 0);
  EXPECT_TRUE(fd_is_open(m->fd));
  EXPECT_EQ(m->size, 1000u);
  EXPECT_EQ(m->offset, 0);
  EXPECT_EQ(m->flags, static_cast<uint32_t>(RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE));
  std::memset(m->virt_addr, 0x5A, 1000);
  EXPECT_EQ(static_cast<uint8_t*>(m->virt_addr)[999], 0x5A);
  // The fd really is the memory: read it back through the file.
  uint8_t b = 0;
  ASSERT_EQ(::pread(m->fd, &b, 1, 500), 1);
  EXPECT_EQ(b, 0x5A);
  const int fd = m->fd;
  EXPECT_EQ(rknn_destroy_mem(c.ctx, m), RKNN_SUCC);
  EXPECT_FALSE(fd_is_open(fd));
}

TEST(ZeroCopyMem, CreateMemErrors) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  EXPECT_EQ(rknn_create_mem(c.ctx, 0), nullptr);
  EXPECT_EQ(rknn_create_mem(0, 64), nullptr);
  EXPECT_EQ(rknn_create_mem(c.ctx + 12345, 64), nullptr);
}

TEST(ZeroCopyMem, CreateMem2FlagsAndNoContext) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  for (uint64_t f : {0ull, 1ull, 2ull, 4ull, 5ull}) {
    rknn_tensor_mem* m = rknn_create_mem2(c.ctx, 256, f);
    ASSERT_NE(m, nullptr) << "flags " << f;
    EXPECT_EQ(m->size, 256u);
    EXPECT_GT(m->fd, 0);
    EXPECT_EQ(m->flags, static_cast<uint32_t>(RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE));
    EXPECT_EQ(rknn_destroy_mem(c.ctx, m), RKNN_SUCC);
  }
  EXPECT_EQ(rknn_create_mem2(c.ctx, 256, 3), nullptr);        // cacheable and non-cacheable
  EXPECT_EQ(rknn_create_mem2(c.ctx, 256, 0x100), nullptr);    // unknown bit
  EXPECT_EQ(rknn_create_mem2(c.ctx, 0, 0), nullptr);          // size 0
  EXPECT_EQ(rknn_create_mem2(c.ctx, 1ull << 33, 0), nullptr); // does not fit the 32-bit size field
  EXPECT_EQ(rknn_create_mem2(0, 256, 0), nullptr);            // ctx 0 needs ALLOC_NO_CONTEXT
  rknn_tensor_mem* m = rknn_create_mem2(0, 256, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  ASSERT_NE(m, nullptr);
  std::memset(m->virt_addr, 1, 256);
  EXPECT_EQ(rknn_destroy_mem(0, m), RKNN_SUCC);
}

TEST(ZeroCopyMem, DestroyMemErrors) {
  Ctx a, b;
  ASSERT_EQ(init(a, make_float_model("rk3588")), RKNN_SUCC);
  ASSERT_EQ(init(b, make_float_model("rk3588")), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy_mem(a.ctx, nullptr), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_mem fake;
  std::memset(&fake, 0, sizeof(fake));
  EXPECT_EQ(rknn_destroy_mem(a.ctx, &fake), RKNN_ERR_PARAM_INVALID);  // not ours
  rknn_tensor_mem* m = rknn_create_mem(a.ctx, 64);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(rknn_destroy_mem(b.ctx, m), RKNN_ERR_PARAM_INVALID);      // another context's
  EXPECT_EQ(rknn_destroy_mem(a.ctx + 999, m), RKNN_ERR_CTX_INVALID);
  EXPECT_EQ(rknn_destroy_mem(a.ctx, m), RKNN_SUCC);
}

TEST(ZeroCopyMem, DestroyMemTwiceIsAnError) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  rknn_tensor_mem* m = rknn_create_mem(c.ctx, 64);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(rknn_destroy_mem(c.ctx, m), RKNN_SUCC);
  // The pointer is dangling now; the registry lookup never dereferences it.
  EXPECT_EQ(rknn_destroy_mem(c.ctx, m), RKNN_ERR_PARAM_INVALID);
}

TEST(ZeroCopyMem, FdRoundTripSeesTheSameBytes) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  constexpr uint32_t kSize = 3 * 4096;
  rknn_tensor_mem* m = rknn_create_mem(c.ctx, kSize);
  ASSERT_NE(m, nullptr);
  auto* base = static_cast<uint8_t*>(m->virt_addr);
  for (uint32_t i = 0; i < kSize; ++i) base[i] = static_cast<uint8_t>(i * 7 + 3);

  // As demos do: fd and virt of a create_mem result, with an offset into it.
  const int32_t off = 100;
  rknn_tensor_mem* w = rknn_create_mem_from_fd(c.ctx, m->fd, m->virt_addr, kSize - off, off);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->flags, static_cast<uint32_t>(RKNN_TENSOR_MEMORY_FLAGS_FROM_FD));
  EXPECT_EQ(w->fd, m->fd);
  EXPECT_EQ(w->offset, off);
  EXPECT_EQ(w->size, kSize - off);
  EXPECT_EQ(w->virt_addr, m->virt_addr);
  EXPECT_EQ(0, std::memcmp(static_cast<uint8_t*>(w->virt_addr) + w->offset, base + off, kSize - off));

  // virt NULL: the runtime maps the fd itself; a second mapping of the same memory.
  rknn_tensor_mem* v = rknn_create_mem_from_fd(c.ctx, m->fd, nullptr, kSize - 5000, 5000);
  ASSERT_NE(v, nullptr);
  ASSERT_NE(v->virt_addr, nullptr);
  EXPECT_NE(v->virt_addr, m->virt_addr);
  auto* vdata = static_cast<uint8_t*>(v->virt_addr) + v->offset;
  EXPECT_EQ(0, std::memcmp(vdata, base + 5000, kSize - 5000));
  vdata[0] = 0xEE;  // shared mapping: visible through the original
  EXPECT_EQ(base[5000], 0xEE);

  // Destroying the wrappers never closes the client's fd nor unmaps its memory.
  EXPECT_EQ(rknn_destroy_mem(c.ctx, v), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy_mem(c.ctx, w), RKNN_SUCC);
  EXPECT_TRUE(fd_is_open(m->fd));
  EXPECT_EQ(base[kSize - 1], static_cast<uint8_t>((kSize - 1) * 7 + 3));
  EXPECT_EQ(rknn_destroy_mem(c.ctx, m), RKNN_SUCC);
}

TEST(ZeroCopyMem, FromFdErrors) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  uint8_t buf[16];
  EXPECT_EQ(rknn_create_mem_from_fd(c.ctx, -1, buf, 16, 0), nullptr);
  EXPECT_EQ(rknn_create_mem_from_fd(c.ctx, 0, buf, 0, 0), nullptr);
  EXPECT_EQ(rknn_create_mem_from_fd(c.ctx, 0, buf, 16, -4), nullptr);
  EXPECT_EQ(rknn_create_mem_from_fd(c.ctx + 77, 0, buf, 16, 0), nullptr);
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  EXPECT_EQ(rknn_create_mem_from_fd(c.ctx, pipefd[0], nullptr, 16, 0), nullptr);  // cannot be mapped
  ::close(pipefd[0]);
  ::close(pipefd[1]);
}

TEST(ZeroCopyMem, FromPhysWrapsClientMemory) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  std::vector<uint8_t> buf(64, 9);
  rknn_tensor_mem* m = rknn_create_mem_from_phys(c.ctx, 0x12345000ull, buf.data(), 64);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->virt_addr, buf.data());
  EXPECT_EQ(m->phys_addr, 0x12345000ull);
  EXPECT_EQ(m->size, 64u);
  EXPECT_EQ(m->flags, static_cast<uint32_t>(RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS));
  EXPECT_EQ(rknn_destroy_mem(c.ctx, m), RKNN_SUCC);
  EXPECT_EQ(buf[63], 9);  // untouched, still ours
  EXPECT_EQ(rknn_create_mem_from_phys(c.ctx, 0x1000, nullptr, 64), nullptr);
  EXPECT_EQ(rknn_create_mem_from_phys(c.ctx, 0x1000, buf.data(), 0), nullptr);
  EXPECT_EQ(rknn_create_mem_from_phys(0, 0x1000, buf.data(), 64), nullptr);
}

TEST(ZeroCopyMem, MemSyncValidatesAndSucceeds) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  rknn_tensor_mem* m = rknn_create_mem(c.ctx, 64);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(rknn_mem_sync(c.ctx, m, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_SUCC);
  EXPECT_EQ(rknn_mem_sync(c.ctx, m, RKNN_MEMORY_SYNC_FROM_DEVICE), RKNN_SUCC);
  EXPECT_EQ(rknn_mem_sync(c.ctx, m, RKNN_MEMORY_SYNC_BIDIRECTIONAL), RKNN_SUCC);
  EXPECT_EQ(rknn_mem_sync(c.ctx, m, static_cast<rknn_mem_sync_mode>(9)), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_mem_sync(c.ctx, nullptr, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_mem_sync(c.ctx + 5, m, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_ERR_CTX_INVALID);
  rknn_tensor_mem fake{};
  EXPECT_EQ(rknn_mem_sync(c.ctx, &fake, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_destroy_mem(c.ctx, m), RKNN_SUCC);
}

TEST(ZeroCopyMem, DestroyContextFreesLeftoverMems) {
  rknn_context ctx = 0;
  std::vector<uint8_t> model = make_float_model("rk3588");
  ASSERT_EQ(rknn_init(&ctx, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr), RKNN_SUCC);
  rknn_tensor_mem* m = rknn_create_mem(ctx, 128);
  ASSERT_NE(m, nullptr);
  const int fd = m->fd;
  ASSERT_TRUE(fd_is_open(fd));
  ASSERT_EQ(rknn_destroy(ctx), RKNN_SUCC);
  EXPECT_FALSE(fd_is_open(fd));
}

// ---------------------------------------------------------------------------------------------
// Native attributes (docs/api-contract.md §4.4)

TEST(NativeAttrs, FloatModelOnRk3568) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3568")), RKNN_SUCC);  // fp16 C2 = 4
  for (rknn_query_cmd cmd : {RKNN_QUERY_NATIVE_INPUT_ATTR, RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR}) {
    rknn_tensor_attr a = query_attr(c.ctx, cmd, 0);
    EXPECT_EQ(a.fmt, RKNN_TENSOR_NHWC);
    EXPECT_EQ(a.type, RKNN_TENSOR_FLOAT16);
    EXPECT_EQ(a.n_dims, 4u);
    EXPECT_EQ(a.dims[0], 1u); EXPECT_EQ(a.dims[1], 2u); EXPECT_EQ(a.dims[2], 3u); EXPECT_EQ(a.dims[3], 13u);
    EXPECT_EQ(a.w_stride, 3u);
    EXPECT_EQ(a.size, static_cast<uint32_t>(kN * 2));
    EXPECT_EQ(a.size_with_stride, static_cast<uint32_t>(kN * 2));
    EXPECT_STREQ(a.name, "x");
  }
  rknn_tensor_attr o = query_attr(c.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
  EXPECT_EQ(o.fmt, RKNN_TENSOR_NC1HWC2);
  EXPECT_EQ(o.type, RKNN_TENSOR_FLOAT16);
  EXPECT_EQ(o.n_dims, 5u);
  const uint32_t want_dims[5] = {1, 4, 2, 3, 4};  // C1 = ceil(13/4)
  for (int i = 0; i < 5; ++i) EXPECT_EQ(o.dims[i], want_dims[i]) << i;
  EXPECT_EQ(o.size_with_stride, 1u * 4 * 2 * 3 * 4 * 2);
  EXPECT_GE(o.size_with_stride, o.size);
  EXPECT_STREQ(o.name, "y");
  rknn_tensor_attr h = query_attr(c.ctx, RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, 0);
  EXPECT_EQ(h.fmt, RKNN_TENSOR_NHWC);
  EXPECT_EQ(h.dims[0], 1u); EXPECT_EQ(h.dims[1], 2u); EXPECT_EQ(h.dims[2], 3u); EXPECT_EQ(h.dims[3], 13u);
  EXPECT_EQ(h.size, static_cast<uint32_t>(kN * 2));
  // Non-4-D output: original dims, UNDEFINED.
  rknn_tensor_attr w = query_attr(c.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 1);
  EXPECT_EQ(w.fmt, RKNN_TENSOR_UNDEFINED);
  EXPECT_EQ(w.n_dims, 2u);
  EXPECT_EQ(w.dims[0], 13u); EXPECT_EQ(w.dims[1], 6u);
  EXPECT_EQ(w.type, RKNN_TENSOR_FLOAT16);
}

TEST(NativeAttrs, QuantizedModelUsesInt8C2) {
  Ctx c;
  ASSERT_EQ(init(c, make_quant_model("rk3588")), RKNN_SUCC);  // int8 C2 = 16
  rknn_tensor_attr i = query_attr(c.ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  EXPECT_EQ(i.fmt, RKNN_TENSOR_NHWC);
  EXPECT_EQ(i.type, RKNN_TENSOR_INT8);
  EXPECT_EQ(i.zp, -3);
  rknn_tensor_attr o = query_attr(c.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
  EXPECT_EQ(o.fmt, RKNN_TENSOR_NC1HWC2);
  EXPECT_EQ(o.type, RKNN_TENSOR_INT8);
  EXPECT_EQ(o.qnt_type, RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
  EXPECT_EQ(o.zp, -128);
  EXPECT_FLOAT_EQ(o.scale, 0.025f);
  const uint32_t want_dims[5] = {1, 1, 2, 3, 16};
  for (int k = 0; k < 5; ++k) EXPECT_EQ(o.dims[k], want_dims[k]) << k;
  EXPECT_EQ(o.size_with_stride, 96u);
}

TEST(NativeAttrs, IndexOutOfRangeAndSmallSizeFail) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  rknn_tensor_attr a;
  std::memset(&a, 0, sizeof(a));
  a.index = 1;
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &a, sizeof(a)), RKNN_ERR_PARAM_INVALID);
  a.index = 2;
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &a, sizeof(a)), RKNN_ERR_PARAM_INVALID);
  a.index = 0;
  EXPECT_EQ(rknn_query(c.ctx, RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, &a, sizeof(a) - 1), RKNN_ERR_PARAM_INVALID);
}

// ---------------------------------------------------------------------------------------------
// rknn_set_io_mem and zero-copy runs

// Reference run through the general API: UINT8 NHWC in, raw (want_float=0) NCHW outputs.
std::vector<std::vector<uint8_t>> general_api_run(rknn_context ctx, const std::vector<uint8_t>& img, uint32_t n_out) {
  rknn_input in;
  std::memset(&in, 0, sizeof(in));
  in.buf = const_cast<uint8_t*>(img.data());
  in.size = static_cast<uint32_t>(img.size());
  in.type = RKNN_TENSOR_UINT8;
  in.fmt = RKNN_TENSOR_NHWC;
  EXPECT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
  EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
  std::vector<rknn_output> outs(n_out);
  std::memset(outs.data(), 0, outs.size() * sizeof(rknn_output));
  EXPECT_EQ(rknn_outputs_get(ctx, n_out, outs.data(), nullptr), RKNN_SUCC);
  std::vector<std::vector<uint8_t>> r;
  for (auto& o : outs) r.emplace_back(static_cast<uint8_t*>(o.buf), static_cast<uint8_t*>(o.buf) + o.size);
  EXPECT_EQ(rknn_outputs_release(ctx, n_out, outs.data()), RKNN_SUCC);
  return r;
}

template <typename T>
std::vector<T> as(const std::vector<uint8_t>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

// Every platform of the guide's Table 3-1, fp16 and INT8: NATIVE_OUTPUT_ATTR of the 13-channel
// output is NC1HWC2 with the table's C2 (C1 = ceil(13 / C2), padding counted in the sizes), and a
// buffer bound with that attribute receives exactly that layout. Where the table has "/" (RK2118
// int8, RV1103B/RV1106B fp16) the runtime reports the output as NHWC [N, H, W, C] without padding
// (docs/decisions.md "Native attributes"), writes NHWC into a buffer bound with it, and refuses an
// NC1HWC2 binding.
TEST(NativeLayouts, EveryPlatformAndDtypeHasTheGuidesC2) {
  for (const testutil::VendorC2& row : testutil::kVendorC2) {
    for (const bool int8 : {false, true}) {
      SCOPED_TRACE(std::string(row.platform) + (int8 ? " int8" : " fp16"));
      const int c2 = int8 ? row.int8 : row.fp16;
      const uint32_t es = int8 ? 1 : 2;
      Ctx c;
      ASSERT_EQ(init(c, int8 ? make_quant_model(row.platform) : make_float_model(row.platform)), RKNN_SUCC);
      rknn_tensor_attr o = query_attr(c.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
      EXPECT_EQ(o.type, int8 ? RKNN_TENSOR_INT8 : RKNN_TENSOR_FLOAT16);
      std::vector<uint32_t> want_dims;
      if (c2 > 0) {
        const uint32_t c1 = static_cast<uint32_t>((kC + c2 - 1) / c2);
        EXPECT_EQ(o.fmt, RKNN_TENSOR_NC1HWC2);
        want_dims = {1, c1, kH, kW, static_cast<uint32_t>(c2)};
        EXPECT_EQ(o.n_elems, c1 * kHW * static_cast<uint32_t>(c2));
      } else {
        EXPECT_EQ(o.fmt, RKNN_TENSOR_NHWC);
        want_dims = {1, kH, kW, kC};
        EXPECT_EQ(o.n_elems, static_cast<uint32_t>(kN));
      }
      ASSERT_EQ(o.n_dims, want_dims.size());
      for (size_t k = 0; k < want_dims.size(); ++k) EXPECT_EQ(o.dims[k], want_dims[k]) << "dims[" << k << "]";
      EXPECT_EQ(o.size, o.n_elems * es);
      EXPECT_EQ(o.size_with_stride, o.size);

      rknn_tensor_mem* mem = rknn_create_mem(c.ctx, o.size_with_stride);
      ASSERT_NE(mem, nullptr);
      if (c2 == 0) {
        rknn_tensor_attr nc1hwc2 = o;
        nc1hwc2.fmt = RKNN_TENSOR_NC1HWC2;
        EXPECT_EQ(rknn_set_io_mem(c.ctx, mem, &nc1hwc2), RKNN_ERR_OUTPUT_INVALID);
      }
      ASSERT_EQ(rknn_set_io_mem(c.ctx, mem, &o), RKNN_SUCC);
      std::memset(mem->virt_addr, 0x77, mem->size);  // every byte must be written, padding as zeros
      // outputs_get keeps giving NCHW beside the bound native buffer: the same run in both layouts.
      const std::vector<uint8_t> nchw = general_api_run(c.ctx, make_image(5), int8 ? 1 : 2)[0];
      ASSERT_EQ(nchw.size(), static_cast<size_t>(kN) * es);
      std::vector<uint8_t> want;
      if (int8) {
        const std::vector<int8_t> v = c2 ? to_nc1hwc2<int8_t>(as<int8_t>(nchw), kC, kH, kW, c2, 0)
                                         : to_nhwc<int8_t>(as<int8_t>(nchw), kC, kH, kW);
        want.assign(reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data() + v.size()));
      } else {
        const std::vector<uint16_t> v = c2 ? to_nc1hwc2<uint16_t>(as<uint16_t>(nchw), kC, kH, kW, c2, 0)
                                           : to_nhwc<uint16_t>(as<uint16_t>(nchw), kC, kH, kW);
        want.assign(reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data() + v.size()));
      }
      ASSERT_EQ(want.size(), o.size);
      EXPECT_EQ(0, std::memcmp(mem->virt_addr, want.data(), want.size()));
      EXPECT_EQ(rknn_destroy_mem(c.ctx, mem), RKNN_SUCC);
    }
  }
}

TEST(ZeroCopyRun, FloatModelUint8NhwcInNc1hwc2AndFloat32Out) {
  for (const char* platform : {"rk3568", "rk3588"}) {
    SCOPED_TRACE(platform);
    Ctx zc, ref;
    ASSERT_EQ(init(zc, make_float_model(platform)), RKNN_SUCC);
    ASSERT_EQ(init(ref, make_float_model(platform)), RKNN_SUCC);
    rknn_tensor_attr in_attr = query_attr(zc.ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
    rknn_tensor_attr y_attr = query_attr(zc.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
    rknn_tensor_attr w_attr = query_attr(zc.ctx, RKNN_QUERY_OUTPUT_ATTR, 1);
    ASSERT_EQ(y_attr.fmt, RKNN_TENSOR_NC1HWC2);
    const int c2 = testutil::vendor_c2(platform, false);  // the guide's, not the runtime's answer

    // Input as yolov8_zero_copy does: the native attr with the type overridden to UINT8.
    in_attr.type = RKNN_TENSOR_UINT8;
    in_attr.fmt = RKNN_TENSOR_NHWC;
    rknn_tensor_mem* in_mem = rknn_create_mem(zc.ctx, in_attr.n_elems);
    rknn_tensor_mem* y_mem = rknn_create_mem(zc.ctx, y_attr.size_with_stride);
    w_attr.type = RKNN_TENSOR_FLOAT32;  // demos: FLOAT32 outputs sized n_elems * 4
    rknn_tensor_mem* w_mem = rknn_create_mem(zc.ctx, w_attr.n_elems * 4);
    ASSERT_TRUE(in_mem && y_mem && w_mem);
    std::memset(y_mem->virt_addr, 0x77, y_mem->size);  // padding must be overwritten with zeros
    ASSERT_EQ(rknn_set_io_mem(zc.ctx, in_mem, &in_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(zc.ctx, y_mem, &y_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(zc.ctx, w_mem, &w_attr), RKNN_SUCC);

    for (int frame = 0; frame < 2; ++frame) {  // the bound input is re-read on every run
      std::vector<uint8_t> img = make_image(frame);
      std::memcpy(in_mem->virt_addr, img.data(), img.size());
      ASSERT_EQ(rknn_run(zc.ctx, nullptr), RKNN_SUCC);
      auto want = general_api_run(ref.ctx, img, 2);
      std::vector<uint16_t> want_y = to_nc1hwc2<uint16_t>(as<uint16_t>(want[0]), kC, kH, kW, c2, 0);
      ASSERT_EQ(want_y.size() * 2, y_attr.size_with_stride);
      const uint16_t* got_y = static_cast<const uint16_t*>(y_mem->virt_addr);
      for (size_t k = 0; k < want_y.size(); ++k) ASSERT_EQ(got_y[k], want_y[k]) << "frame " << frame << " pos " << k;
      // The 2-D output in FLOAT32: the fp16 reference widened.
      std::vector<uint16_t> w16 = as<uint16_t>(want[1]);
      const float* got_w = static_cast<const float*>(w_mem->virt_addr);
      for (int k = 0; k < kN; ++k) ASSERT_EQ(got_w[k], orknn::fp16_to_fp32(w16[k])) << k;
      // And the values are right, not merely consistent: y = relu((u - 100) / 20) + b[c].
      const float y0 = orknn::fp16_to_fp32(got_y[0]);  // c = 0, h = 0, w = 0
      EXPECT_NEAR(y0, std::max((img[0] - 100.f) / 20.f, 0.f) + kBias[0], 0.01f);
    }
    // Unbound tensors still work through the general API on the zero-copy context.
    rknn_output o[2];
    std::memset(o, 0, sizeof(o));
    o[0].want_float = 1; o[1].want_float = 1;
    ASSERT_EQ(rknn_outputs_get(zc.ctx, 2, o, nullptr), RKNN_SUCC);
    EXPECT_EQ(0, std::memcmp(o[1].buf, w_mem->virt_addr, kN * 4));
    ASSERT_EQ(rknn_outputs_release(zc.ctx, 2, o), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(zc.ctx, in_mem), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(zc.ctx, y_mem), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(zc.ctx, w_mem), RKNN_SUCC);
  }
}

TEST(ZeroCopyRun, QuantizedModelUint8NhwcInNc1hwc2Out) {
  for (const char* platform : {"rk3568", "rk3588"}) {
    SCOPED_TRACE(platform);
    Ctx zc, ref;
    ASSERT_EQ(init(zc, make_quant_model(platform)), RKNN_SUCC);
    ASSERT_EQ(init(ref, make_quant_model(platform)), RKNN_SUCC);
    rknn_tensor_attr in_attr = query_attr(zc.ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
    rknn_tensor_attr y_attr = query_attr(zc.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
    ASSERT_EQ(y_attr.fmt, RKNN_TENSOR_NC1HWC2);
    const int c2 = testutil::vendor_c2(platform, true);  // the guide's, not the runtime's answer
    in_attr.type = RKNN_TENSOR_UINT8;
    rknn_tensor_mem* in_mem = rknn_create_mem(zc.ctx, in_attr.n_elems);
    rknn_tensor_mem* y_mem = rknn_create_mem(zc.ctx, y_attr.size_with_stride);
    ASSERT_TRUE(in_mem && y_mem);
    std::memset(y_mem->virt_addr, 0x77, y_mem->size);
    ASSERT_EQ(rknn_set_io_mem(zc.ctx, in_mem, &in_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(zc.ctx, y_mem, &y_attr), RKNN_SUCC);
    std::vector<uint8_t> img = make_image(3);
    std::memcpy(in_mem->virt_addr, img.data(), img.size());
    ASSERT_EQ(rknn_run(zc.ctx, nullptr), RKNN_SUCC);
    auto want = general_api_run(ref.ctx, img, 1);
    std::vector<int8_t> want_y = to_nc1hwc2<int8_t>(as<int8_t>(want[0]), kC, kH, kW, c2, 0);
    ASSERT_EQ(want_y.size(), y_attr.size_with_stride);
    EXPECT_EQ(0, std::memcmp(y_mem->virt_addr, want_y.data(), want_y.size()));

    // INT8 input (already normalised and quantized codes, NHWC) equals pass_through inputs_set.
    rknn_tensor_attr q_attr = query_attr(zc.ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
    ASSERT_EQ(q_attr.type, RKNN_TENSOR_INT8);
    ASSERT_EQ(rknn_set_io_mem(zc.ctx, in_mem, &q_attr), RKNN_SUCC);
    std::vector<int8_t> codes(kN);
    for (int k = 0; k < kN; ++k) codes[k] = static_cast<int8_t>(k * 9 - 60);
    std::memcpy(in_mem->virt_addr, codes.data(), codes.size());
    ASSERT_EQ(rknn_run(zc.ctx, nullptr), RKNN_SUCC);
    rknn_input pin;
    std::memset(&pin, 0, sizeof(pin));
    pin.buf = codes.data();
    pin.size = kN;
    pin.pass_through = 1;
    ASSERT_EQ(rknn_inputs_set(ref.ctx, 1, &pin), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ref.ctx, nullptr), RKNN_SUCC);
    rknn_output o;
    std::memset(&o, 0, sizeof(o));
    ASSERT_EQ(rknn_outputs_get(ref.ctx, 1, &o, nullptr), RKNN_SUCC);
    std::vector<int8_t> want2 = to_nc1hwc2<int8_t>(std::vector<int8_t>(static_cast<int8_t*>(o.buf), static_cast<int8_t*>(o.buf) + kN),
                                                   kC, kH, kW, c2, 0);
    ASSERT_EQ(rknn_outputs_release(ref.ctx, 1, &o), RKNN_SUCC);
    EXPECT_EQ(0, std::memcmp(y_mem->virt_addr, want2.data(), want2.size()));
    EXPECT_EQ(rknn_destroy_mem(zc.ctx, in_mem), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(zc.ctx, y_mem), RKNN_SUCC);
  }
}

TEST(ZeroCopyRun, PassThroughFp16InputAndNhwcOutputAtAnOffset) {
  Ctx zc, ref;
  ASSERT_EQ(init(zc, make_float_model("rk3588")), RKNN_SUCC);
  ASSERT_EQ(init(ref, make_float_model("rk3588")), RKNN_SUCC);
  rknn_tensor_attr in_attr = query_attr(zc.ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  in_attr.pass_through = 1;  // native FLOAT16 NHWC
  rknn_tensor_attr y_attr = query_attr(zc.ctx, RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, 0);
  y_attr.type = RKNN_TENSOR_FLOAT32;
  // The input lives 64 bytes into a bigger buffer, reached through create_mem_from_fd (mem_reuse).
  rknn_tensor_mem* big = rknn_create_mem(zc.ctx, in_attr.size_with_stride + 64);
  ASSERT_NE(big, nullptr);
  rknn_tensor_mem* in_mem = rknn_create_mem_from_fd(zc.ctx, big->fd, big->virt_addr, in_attr.size_with_stride, 64);
  rknn_tensor_mem* y_mem = rknn_create_mem(zc.ctx, kN * 4);
  ASSERT_TRUE(in_mem && y_mem);
  ASSERT_EQ(rknn_set_io_mem(zc.ctx, in_mem, &in_attr), RKNN_SUCC);
  ASSERT_EQ(rknn_set_io_mem(zc.ctx, y_mem, &y_attr), RKNN_SUCC);
  std::vector<uint16_t> x16(kN);  // NHWC
  for (int k = 0; k < kN; ++k) x16[k] = orknn::fp32_to_fp16(static_cast<float>(k % 17) * 0.25f - 2.f);
  std::memcpy(static_cast<uint8_t*>(big->virt_addr) + 64, x16.data(), kN * 2);
  ASSERT_EQ(rknn_run(zc.ctx, nullptr), RKNN_SUCC);

  rknn_input pin;
  std::memset(&pin, 0, sizeof(pin));
  pin.buf = x16.data();
  pin.size = kN * 2;
  pin.pass_through = 1;
  ASSERT_EQ(rknn_inputs_set(ref.ctx, 1, &pin), RKNN_SUCC);
  ASSERT_EQ(rknn_run(ref.ctx, nullptr), RKNN_SUCC);
  rknn_output o[2];
  std::memset(o, 0, sizeof(o));
  o[0].want_float = 1;
  ASSERT_EQ(rknn_outputs_get(ref.ctx, 1, o, nullptr), RKNN_SUCC);
  const float* nchw = static_cast<const float*>(o[0].buf);
  const float* got = static_cast<const float*>(y_mem->virt_addr);
  for (int h = 0; h < kH; ++h)
    for (int w = 0; w < kW; ++w)
      for (int c = 0; c < kC; ++c)
        ASSERT_EQ(got[(h * kW + w) * kC + c], nchw[(c * kH + h) * kW + w]) << c << "," << h << "," << w;
  ASSERT_EQ(rknn_outputs_release(ref.ctx, 1, o), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy_mem(zc.ctx, in_mem), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy_mem(zc.ctx, big), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy_mem(zc.ctx, y_mem), RKNN_SUCC);
}

TEST(ZeroCopyRun, SetIoMemErrors) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  rknn_tensor_attr in_attr = query_attr(c.ctx, RKNN_QUERY_INPUT_ATTR, 0);
  rknn_tensor_attr y_attr = query_attr(c.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
  rknn_tensor_attr w_attr = query_attr(c.ctx, RKNN_QUERY_OUTPUT_ATTR, 1);
  rknn_tensor_mem* big = rknn_create_mem(c.ctx, 4096);
  rknn_tensor_mem* tiny = rknn_create_mem(c.ctx, 8);
  ASSERT_TRUE(big && tiny);
  EXPECT_EQ(rknn_set_io_mem(c.ctx, nullptr, &in_attr), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_set_io_mem(c.ctx, big, nullptr), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_set_io_mem(c.ctx + 3, big, &in_attr), RKNN_ERR_CTX_INVALID);
  rknn_tensor_mem fake = *big;  // a copy of the struct is not a mem of ours
  EXPECT_EQ(rknn_set_io_mem(c.ctx, &fake, &in_attr), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_attr bad = in_attr;
  std::snprintf(bad.name, sizeof(bad.name), "nope");
  EXPECT_EQ(rknn_set_io_mem(c.ctx, big, &bad), RKNN_ERR_PARAM_INVALID);
  bad = w_attr;
  bad.index = 0;  // name of output 1 with index 0
  EXPECT_EQ(rknn_set_io_mem(c.ctx, big, &bad), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_set_io_mem(c.ctx, tiny, &in_attr), RKNN_ERR_INPUT_INVALID);   // too small
  EXPECT_EQ(rknn_set_io_mem(c.ctx, tiny, &y_attr), RKNN_ERR_OUTPUT_INVALID);   // too small
  bad = in_attr;
  bad.fmt = RKNN_TENSOR_NC1HWC2;
  EXPECT_EQ(rknn_set_io_mem(c.ctx, big, &bad), RKNN_ERR_INPUT_INVALID);  // no NC1HWC2 inputs
  bad.fmt = RKNN_TENSOR_NHWC;
  bad.type = RKNN_TENSOR_BFLOAT16;
  EXPECT_EQ(rknn_set_io_mem(c.ctx, big, &bad), RKNN_ERR_INPUT_INVALID);
  bad = w_attr;
  bad.type = RKNN_TENSOR_UINT8;
  EXPECT_EQ(rknn_set_io_mem(c.ctx, big, &bad), RKNN_ERR_OUTPUT_INVALID);  // cannot produce uint8
  bad = w_attr;
  bad.fmt = RKNN_TENSOR_NC1HWC2;
  EXPECT_EQ(rknn_set_io_mem(c.ctx, big, &bad), RKNN_ERR_OUTPUT_INVALID);  // 2-D output
  bad = y_attr;
  bad.fmt = static_cast<rknn_tensor_format>(42);
  EXPECT_EQ(rknn_set_io_mem(c.ctx, big, &bad), RKNN_ERR_OUTPUT_INVALID);

  // A bound mem that is destroyed makes the next run fail instead of writing freed memory.
  ASSERT_EQ(rknn_set_io_mem(c.ctx, big, &y_attr), RKNN_SUCC);
  rknn_input in;
  std::memset(&in, 0, sizeof(in));
  std::vector<float> x(kN, 1.f);
  in.buf = x.data();
  in.size = kN * 4;
  in.type = RKNN_TENSOR_FLOAT32;
  in.fmt = RKNN_TENSOR_NCHW;
  ASSERT_EQ(rknn_inputs_set(c.ctx, 1, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);
  ASSERT_EQ(rknn_destroy_mem(c.ctx, big), RKNN_SUCC);
  EXPECT_EQ(rknn_run(c.ctx, nullptr), RKNN_ERR_OUTPUT_INVALID);
  EXPECT_EQ(rknn_destroy_mem(c.ctx, tiny), RKNN_SUCC);
}

TEST(ZeroCopyRun, UnnamedAttrBindsTheInputWithThatIndex) {
  Ctx c;
  ASSERT_EQ(init(c, make_float_model("rk3588")), RKNN_SUCC);
  rknn_tensor_attr a;
  std::memset(&a, 0, sizeof(a));
  a.type = RKNN_TENSOR_FLOAT32;
  a.fmt = RKNN_TENSOR_NCHW;
  rknn_tensor_mem* m = rknn_create_mem(c.ctx, kN * 4);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(rknn_set_io_mem(c.ctx, m, &a), RKNN_SUCC);
  float* x = static_cast<float*>(m->virt_addr);
  for (int k = 0; k < kN; ++k) x[k] = static_cast<float>(k % 5) - 2.f;
  ASSERT_EQ(rknn_run(c.ctx, nullptr), RKNN_SUCC);  // no inputs_set needed: the input is bound
  rknn_output o[2];
  std::memset(o, 0, sizeof(o));
  o[0].want_float = 1;
  ASSERT_EQ(rknn_outputs_get(c.ctx, 1, o, nullptr), RKNN_SUCC);
  const float* y = static_cast<const float*>(o[0].buf);
  for (int k = 0; k < kN; ++k) EXPECT_NEAR(y[k], std::max(x[k], 0.f) + kBias[k / kHW], 1e-3f) << k;
  ASSERT_EQ(rknn_outputs_release(c.ctx, 1, o), RKNN_SUCC);
  a.index = 5;
  EXPECT_EQ(rknn_set_io_mem(c.ctx, m, &a), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_destroy_mem(c.ctx, m), RKNN_SUCC);
}

TEST(ZeroCopyRun, PaddedRowStrideAndRawNchwOutputs) {
  Ctx zc, ref;
  ASSERT_EQ(init(zc, make_quant_model("rk3568")), RKNN_SUCC);  // int8 C2 = 8 -> C1 = 2
  ASSERT_EQ(init(ref, make_quant_model("rk3568")), RKNN_SUCC);
  // INT8 codes in NCHW (no pass_through): copied as they are.
  rknn_tensor_attr in_attr = query_attr(zc.ctx, RKNN_QUERY_INPUT_ATTR, 0);
  in_attr.type = RKNN_TENSOR_INT8;
  in_attr.fmt = RKNN_TENSOR_NCHW;
  rknn_tensor_attr y_attr = query_attr(zc.ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
  y_attr.w_stride = 5;  // rows padded from 3 to 5 pixels
  rknn_tensor_mem* in_mem = rknn_create_mem(zc.ctx, kN);
  const uint32_t padded = 2 * kH * 5 * 8;
  rknn_tensor_mem* y_mem = rknn_create_mem(zc.ctx, padded);
  ASSERT_TRUE(in_mem && y_mem);
  rknn_tensor_mem* small = rknn_create_mem(zc.ctx, padded - 1);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(rknn_set_io_mem(zc.ctx, small, &y_attr), RKNN_ERR_OUTPUT_INVALID);  // stride counts
  ASSERT_EQ(rknn_set_io_mem(zc.ctx, in_mem, &in_attr), RKNN_SUCC);
  ASSERT_EQ(rknn_set_io_mem(zc.ctx, y_mem, &y_attr), RKNN_SUCC);
  std::vector<int8_t> codes(kN);  // NCHW
  for (int k = 0; k < kN; ++k) codes[k] = static_cast<int8_t>(100 - k * 3);
  std::memcpy(in_mem->virt_addr, codes.data(), kN);
  std::memset(y_mem->virt_addr, 0x55, padded);
  ASSERT_EQ(rknn_run(zc.ctx, nullptr), RKNN_SUCC);

  // Reference: the same codes as native NHWC through pass_through.
  std::vector<int8_t> nhwc(kN);
  for (int c = 0; c < kC; ++c)
    for (int p = 0; p < kHW; ++p) nhwc[p * kC + c] = codes[c * kHW + p];
  rknn_input pin;
  std::memset(&pin, 0, sizeof(pin));
  pin.buf = nhwc.data();
  pin.size = kN;
  pin.pass_through = 1;
  ASSERT_EQ(rknn_inputs_set(ref.ctx, 1, &pin), RKNN_SUCC);
  ASSERT_EQ(rknn_run(ref.ctx, nullptr), RKNN_SUCC);
  rknn_output o;
  std::memset(&o, 0, sizeof(o));
  ASSERT_EQ(rknn_outputs_get(ref.ctx, 1, &o, nullptr), RKNN_SUCC);
  const int8_t* want = static_cast<const int8_t*>(o.buf);
  const int8_t* got = static_cast<const int8_t*>(y_mem->virt_addr);
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < kH; ++h)
      for (int w = 0; w < 5; ++w)
        for (int k = 0; k < 8; ++k) {
          const int c = b * 8 + k;
          const int8_t e = (c < kC && w < kW) ? want[(c * kH + h) * kW + w] : 0;
          ASSERT_EQ(got[((b * kH + h) * 5 + w) * 8 + k], e) << b << "," << h << "," << w << "," << k;
        }
  ASSERT_EQ(rknn_outputs_release(ref.ctx, 1, &o), RKNN_SUCC);

  // Raw INT8 NCHW output (the normal attribute) equals outputs_get(want_float = 0).
  rknn_tensor_attr raw_attr = query_attr(zc.ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  rknn_tensor_mem* raw_mem = rknn_create_mem(zc.ctx, kN);
  ASSERT_NE(raw_mem, nullptr);
  ASSERT_EQ(rknn_set_io_mem(zc.ctx, raw_mem, &raw_attr), RKNN_SUCC);
  ASSERT_EQ(rknn_run(zc.ctx, nullptr), RKNN_SUCC);
  std::memset(&o, 0, sizeof(o));
  ASSERT_EQ(rknn_outputs_get(ref.ctx, 1, &o, nullptr), RKNN_SUCC);
  EXPECT_EQ(0, std::memcmp(raw_mem->virt_addr, o.buf, kN));
  ASSERT_EQ(rknn_outputs_release(ref.ctx, 1, &o), RKNN_SUCC);
  // in_mem, y_mem, small and raw_mem are left for rknn_destroy to free.
}

}  // namespace
