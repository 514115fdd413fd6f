// Hostile input: a written model mutated at random (seeded, so failures reproduce) must either be
// refused with an error or load as a graph that passes verify_graph. It must never crash; run
// this binary under -fsanitize=address to see reads out of bounds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "graph/verifier.h"
#include "model/model_io.h"

namespace orknn {
namespace {

struct AlignedBytes {
  std::shared_ptr<uint8_t> buf;
  size_t size = 0;
  explicit AlignedBytes(const std::vector<uint8_t>& v) : size(v.size()) {
    buf.reset(static_cast<uint8_t*>(::operator new[](v.empty() ? 1 : v.size(), std::align_val_t(64))),
              [](uint8_t* q) { ::operator delete[](q, std::align_val_t(64)); });
    if (!v.empty()) std::memcpy(buf.get(), v.data(), v.size());
  }
};

bool has_infer(OpId op) { return find_op(op) && find_op(op)->infer; }

// Nodes when their infer functions exist (so that mutated op ids, indices and attributes reach
// the verifier and the infer functions), otherwise tensors only.
Graph seed_graph() {
  Graph g;
  g.platform = "rk3588";
  g.custom_string = "mutation seed";
  int x = g.add_tensor("x", {1, 2, 2, 2}, DType::kF32);
  g.inputs.push_back({x, {1.f, 2.f}, {3.f, 4.f}});
  float kv[2] = {0.5f, -1.f};
  int k = g.add_const("k", {1, 2, 1, 1}, DType::kF32, kv, sizeof kv);
  int8_t wv[4] = {1, -2, 3, -4};
  int w = g.add_const("w", {4}, DType::kI8, wv, sizeof wv);
  g.tensors[w].quant.scale = {0.1f, 0.2f, 0.3f, 0.4f};
  g.tensors[w].quant.zero_point = {0, 0, 0, 0};
  g.tensors[w].quant.axis = 0;
  int64_t iv[3] = {1, 2, 3};
  int i64 = g.add_const("i64", {3}, DType::kI64, iv, sizeof iv);
  g.outputs = {k, i64};
  if (!has_infer(OpId::Relu) || !has_infer(OpId::Identity)) return g;
  auto add_node = [&g](const char* name, OpId op, std::vector<int> in, int out) -> Node& {
    Node n;
    n.name = name;
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = {out};
    g.nodes.push_back(std::move(n));
    return g.nodes.back();
  };
  int r = g.add_tensor("r", {1, 2, 2, 2}, DType::kF32);
  add_node("relu", OpId::Relu, {x}, r);
  if (has_infer(OpId::Add)) {
    int y = g.add_tensor("y", {1, 2, 2, 2}, DType::kF32);
    add_node("add", OpId::Add, {r, k}, y);
    r = y;
  }
  if (has_infer(OpId::Conv)) {
    // Mutated kernel_shape/pads/strides/group reach Conv's infer function.
    float cw[2 * 2 * 3 * 3];
    for (size_t i = 0; i < sizeof cw / sizeof cw[0]; ++i) cw[i] = 0.1f * static_cast<float>(i % 7);
    int wt = g.add_const("conv_w", {2, 2, 3, 3}, DType::kF32, cw, sizeof cw);
    int c = g.add_tensor("c", {1, 2, 2, 2}, DType::kF32);
    Node& conv = add_node("conv", OpId::Conv, {r, wt}, c);
    conv.attrs.set_ints("kernel_shape", {3, 3});
    conv.attrs.set_ints("pads", {1, 1, 1, 1});
    conv.attrs.set_ints("strides", {1, 1});
    conv.attrs.set_ints("dilations", {1, 1});
    conv.attrs.set_int("group", 1);
    Status st = find_op(OpId::Conv)->infer(g, conv);  // normalise, as the converter does
    if (!st.ok()) g.nodes.pop_back();
    else r = c;
  }
  int z = g.add_tensor("z", {1, 2, 2, 2}, DType::kF32);
  Node& id = add_node("id", OpId::Identity, {r}, z);
  id.attrs.set_int("i", 3);
  id.attrs.set_float("f", 1.5f);
  id.attrs.set_string("s", "abc");
  id.attrs.set_ints("is", {1, 2});
  id.attrs.set_floats("fs", {0.25f});
  g.outputs = {z, k};
  return g;
}

uint32_t interesting_u32(std::mt19937& rng, size_t file_size) {
  const uint32_t values[] = {0u, 1u, 2u, 4u, 63u, 64u, 0x7fu, 0x80u, 0xffu, 0xffffu, 0x7fffffffu, 0x80000000u,
                             0xffffffffu, 0xfffffffeu, static_cast<uint32_t>(file_size),
                             static_cast<uint32_t>(file_size / 2), static_cast<uint32_t>(file_size - 4)};
  return values[rng() % (sizeof values / sizeof values[0])];
}

uint64_t interesting_u64(std::mt19937& rng, size_t file_size) {
  const uint64_t values[] = {0u, 1u, 64u, 128u, file_size, file_size - 8, file_size + 64, UINT64_MAX,
                             UINT64_MAX - 63, uint64_t{1} << 40, uint64_t{1} << 63, uint64_t{1} << 32};
  return values[rng() % (sizeof values / sizeof values[0])];
}

void mutate(std::vector<uint8_t>& b, size_t meta_size, std::mt19937& rng) {
  if (b.empty()) return;
  // Most mutations land in the metadata, where the structure is.
  auto pos = [&](size_t width) -> size_t {
    size_t limit = (rng() % 5 != 0 && meta_size > width) ? meta_size : b.size();
    if (limit <= width) return 0;
    return rng() % (limit - width);
  };
  switch (rng() % 7) {
    case 0: {  // flip bits
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) b[pos(1)] ^= static_cast<uint8_t>(1u << (rng() % 8));
      break;
    }
    case 1: {  // random bytes over a range
      size_t len = 1 + rng() % 16;
      size_t p = pos(len);
      for (size_t i = p; i < p + len && i < b.size(); ++i) b[i] = static_cast<uint8_t>(rng());
      break;
    }
    case 2: {  // interesting 32-bit value (offsets, lengths, vtable entries, ints)
      size_t p = pos(4) & ~size_t{3};
      uint32_t v = interesting_u32(rng, b.size());
      if (p + 4 <= b.size()) std::memcpy(&b[p], &v, 4);
      break;
    }
    case 3: {  // interesting 64-bit value (buffer offsets/sizes, dims, int attributes)
      size_t p = pos(8) & ~size_t{7};
      uint64_t v = interesting_u64(rng, b.size());
      if (p + 8 <= b.size()) std::memcpy(&b[p], &v, 8);
      break;
    }
    case 4: {  // small signed delta on a 32-bit word (indices off by one)
      size_t p = pos(4) & ~size_t{3};
      if (p + 4 <= b.size()) {
        uint32_t v;  // unsigned: wraps instead of overflowing
        std::memcpy(&v, &b[p], 4);
        v += static_cast<uint32_t>(rng() % 5) - 2u;
        std::memcpy(&b[p], &v, 4);
      }
      break;
    }
    case 5: {  // copy one range over another
      size_t len = 1 + rng() % 32;
      size_t from = pos(len), to = pos(len);
      if (from + len <= b.size() && to + len <= b.size()) std::memmove(&b[to], &b[from], len);
      break;
    }
    case 6: {  // truncate or extend
      if (rng() % 2) b.resize(rng() % b.size());
      else b.resize(b.size() + 1 + rng() % 128, static_cast<uint8_t>(rng()));
      break;
    }
  }
}

TEST(ModelMutation, NeverCrashesAndOnlyLoadsValidGraphs) {
  Graph g = seed_graph();
  std::vector<uint8_t> original;
  Status st = write_model(g, &original);
  ASSERT_TRUE(st.ok()) << st.message();
  uint32_t prefix;
  std::memcpy(&prefix, original.data(), 4);
  const size_t meta_size = 4 + prefix;

  // ORKNN_MUTATION_ITERS / ORKNN_MUTATION_SEED run a longer or different campaign by hand.
  const char* iters_env = std::getenv("ORKNN_MUTATION_ITERS");
  const char* seed_env = std::getenv("ORKNN_MUTATION_SEED");
  const int iters = iters_env ? std::atoi(iters_env) : 2000;
  std::mt19937 rng(seed_env ? static_cast<uint32_t>(std::strtoul(seed_env, nullptr, 10)) : 20240611u);
  int loaded = 0, refused = 0;
  for (int iter = 0; iter < iters; ++iter) {
    std::vector<uint8_t> bytes = original;
    int n_mut = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < n_mut; ++m) mutate(bytes, meta_size, rng);
    AlignedBytes file(bytes);
    Graph out;
    st = load_model(file.buf, file.buf.get(), file.size, &out);
    if (!st.ok()) {
      ++refused;
      ASSERT_FALSE(st.message().empty()) << "iteration " << iter;
      ASSERT_TRUE(st.code() == StatusCode::kInvalidModel || st.code() == StatusCode::kNoMemory)
          << "iteration " << iter << ": " << st.message();
      continue;
    }
    ++loaded;
    Status v = verify_graph(out);
    ASSERT_TRUE(v.ok()) << "iteration " << iter << ": loaded a graph the verifier rejects: " << v.message();
    // Touch every constant byte (ASan checks they lie inside the file) and write the graph back.
    unsigned sum = 0;
    for (const Tensor& t : out.tensors)
      for (size_t i = 0; i < t.data.size; ++i) sum += t.data.ptr[i];
    (void)sum;
    std::vector<uint8_t> rewritten;
    st = write_model(out, &rewritten);
    ASSERT_TRUE(st.ok()) << "iteration " << iter << ": " << st.message();
  }
  std::cout << "mutated models: " << loaded << " loaded, " << refused << " refused\n";
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace orknn
