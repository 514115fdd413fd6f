// rknn_matmul_api.h through librknnrt.so: every matmul type x layout on several platforms against a
// scalar reference written here (double accumulation), with the layouts re-derived here from the
// header's description (not from the runtime's code).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/fp16.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"
#include "testutil/cpu.h"

namespace {

enum Kind { F16, I8, I4, F32, I32, I16, BF16 };
struct Types {
  Kind a, b, c;
};
Types types_of(int t) {
  switch (t) {
    case 1: return {F16, F16, F32};
    case 2: return {I8, I8, I32};
    case 3: return {I8, I8, I8};
    case 4: return {F16, F16, F16};
    case 5: return {F16, I8, F32};
    case 6: return {F16, I8, F16};
    case 7: return {F16, I4, F32};
    case 8: return {F16, I4, F16};
    case 9: return {I8, I8, F32};
    case 10: return {I4, I4, I16};
    case 11: return {I8, I4, I32};
    case 12: return {F16, I4, BF16};
    default: return {I8, I4, F16};  // 15
  }
}

// Tiles from docs/api-contract.md §5 / the header, per platform.
struct Tiles {
  int a_subk, b_subn, b_subk, c_sub, kseg, k_align, n_align;
};
Tiles tiles_of(const std::string& p, int type) {
  const Types t = types_of(type);
  const bool big = p == "rk3588" || p == "rk3576";
  const bool r3568 = p == "rk3566" || p == "rk3568";
  Tiles r{};
  auto by = [](Kind k, int i4, int i8, int f16) { return k == I4 ? i4 : k == I8 ? i8 : f16; };
  if (big) {
    r.a_subk = by(t.a, 32, 16, 8);
    r.b_subn = by(t.b, 64, 32, 16);
    r.b_subk = 32;
    r.kseg = p == "rk3588" ? 8192 : 4096;
    r.k_align = 32;
    r.n_align = by(t.b, 64, 32, 16);
  } else {
    r.a_subk = r3568 ? by(t.a, 0, 8, 4) : by(t.a, 0, 16, 8);
    r.b_subn = by(t.b, 0, 16, 8);
    r.b_subk = r3568 ? by(t.b, 0, 32, 16) : 32;
    r.kseg = 0;
    r.k_align = std::max(by(t.a, 0, 32, r3568 ? 16 : 32), by(t.b, 0, 32, r3568 ? 16 : 32));
    r.n_align = by(t.b, 0, 16, 8);
  }
  r.c_sub = (p == "rk3588" && type == 10) ? 8 : 4;
  return r;
}

size_t idx_a(bool native, const Tiles& t, int M, int K, int m, int k) {
  return native ? (size_t)(k / t.a_subk) * M * t.a_subk + (size_t)m * t.a_subk + k % t.a_subk : (size_t)m * K + k;
}
// Naive native B: segments of kseg rows of K, each [N/subN, Ks/subK, subN, subK].
size_t idx_b(int layout, const Tiles& t, int K, int N, int k, int n) {
  if (layout == RKNN_MM_LAYOUT_NORM) return (size_t)k * N + n;
  if (layout == RKNN_MM_LAYOUT_TP_NORM) return (size_t)n * K + k;
  size_t base = 0;
  int seg_len = (t.kseg && K > t.kseg) ? t.kseg : K;
  int kk = k;
  while (kk >= seg_len) {
    base += (size_t)seg_len * N;
    kk -= seg_len;
  }
  const int rows_here = std::min(seg_len, K - (k - kk));
  const int kt = rows_here / t.b_subk;
  const int nb = n / t.b_subn, kb = kk / t.b_subk;
  return base + (((size_t)nb * kt + kb) * t.b_subn + n % t.b_subn) * t.b_subk + kk % t.b_subk;
}
size_t idx_c(bool native, const Tiles& t, int M, int N, int m, int n) {
  return native ? ((size_t)(n / t.c_sub) * M + m) * t.c_sub + n % t.c_sub : (size_t)m * N + n;
}

void put(Kind k, void* buf, size_t i, int iv, uint16_t h) {
  if (k == I4) {
    uint8_t& b = static_cast<uint8_t*>(buf)[i / 2];
    if (i % 2) b = (uint8_t)((b & 0x0F) | ((iv & 0xF) << 4));
    else b = (uint8_t)((b & 0xF0) | (iv & 0xF));
  } else if (k == I8) {
    static_cast<int8_t*>(buf)[i] = (int8_t)iv;
  } else {
    static_cast<uint16_t*>(buf)[i] = h;
  }
}
double get_c(Kind k, const void* buf, size_t i) {
  switch (k) {
    case F32: return static_cast<const float*>(buf)[i];
    case I32: return static_cast<const int32_t*>(buf)[i];
    case I16: return static_cast<const int16_t*>(buf)[i];
    case I8: return static_cast<const int8_t*>(buf)[i];
    case F16: return orknn::fp16_to_fp32(static_cast<const uint16_t*>(buf)[i]);
    case BF16: {
      uint32_t u = (uint32_t) static_cast<const uint16_t*>(buf)[i] << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    default: return 0;
  }
}

struct Operand {  // logical values
  std::vector<int> iv;
  std::vector<uint16_t> h;
};
Operand random_operand(Kind k, size_t n, std::mt19937& rng) {
  Operand o;
  o.iv.resize(n);
  o.h.resize(n);
  std::uniform_int_distribution<int> i8(-128, 127), i4(-8, 7);
  std::uniform_real_distribution<float> f(-1.0f, 1.0f);
  for (size_t i = 0; i < n; ++i) {
    if (k == I8) o.iv[i] = i8(rng);
    else if (k == I4) o.iv[i] = i4(rng);
    else o.h[i] = orknn::fp32_to_fp16(f(rng));
  }
  return o;
}

struct Quant {
  std::vector<float> sa{1.0f}, sb{1.0f}, sc{1.0f};
  std::vector<int32_t> za{0}, zb{0}, zc{0};
};

struct Case {
  std::string platform;
  int type, M, K, N, b_layout, ac_layout;
  int b_qtype = 0, group = 0;
};

class MatmulTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("OPENRKNN_MATMUL_PLATFORM");
    unsetenv("OPENRKNN_DISABLE_KERNELS");
    unsetenv("OPENRKNN_BUSY_HOST");
  }
};

rknn_matmul_info make_info(const Case& c) {
  rknn_matmul_info info;
  std::memset(&info, 0, sizeof(info));
  info.M = c.M;
  info.K = c.K;
  info.N = c.N;
  info.type = (rknn_matmul_type)c.type;
  info.B_layout = (int16_t)c.b_layout;
  info.AC_layout = (int16_t)c.ac_layout;
  info.B_quant_type = (int16_t)c.b_qtype;
  info.AC_quant_type = 1;
  info.group_size = (int16_t)c.group;
  return info;
}

void set_q(rknn_matmul_ctx ctx, const char* name, std::vector<float>& s, std::vector<int32_t>& z) {
  rknn_quant_params p;
  std::memset(&p, 0, sizeof(p));
  std::snprintf(p.name, sizeof(p.name), "%s", name);
  p.scale = s.data();
  p.scale_len = (int32_t)s.size();
  p.zp = z.data();
  p.zp_len = (int32_t)z.size();
  ASSERT_EQ(rknn_matmul_set_quant_params(ctx, &p), RKNN_SUCC) << name;
}

// Runs one case through the API (quant params set when `q` is given) and checks C element-wise.
void check_case(const Case& c, const Quant* q, unsigned seed = 1) {
  SCOPED_TRACE(c.platform + " type " + std::to_string(c.type) + " M" + std::to_string(c.M) + " K" +
               std::to_string(c.K) + " N" + std::to_string(c.N) + " B_layout " + std::to_string(c.b_layout) +
               " AC_layout " + std::to_string(c.ac_layout) + " Bq " + std::to_string(c.b_qtype));
  setenv("OPENRKNN_MATMUL_PLATFORM", c.platform.c_str(), 1);
  const Types ty = types_of(c.type);
  const Tiles t = tiles_of(c.platform, c.type);
  rknn_matmul_info info = make_info(c);
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
  ASSERT_NE(ctx, 0u);
  const bool nat = c.ac_layout == RKNN_MM_LAYOUT_NATIVE;
  auto bits = [](Kind k) { return k == I4 ? 4 : k == I8 ? 8 : (k == F32 || k == I32) ? 32 : 16; };
  EXPECT_EQ(io.A.size, (uint32_t)((size_t)c.M * c.K * bits(ty.a) / 8));
  EXPECT_EQ(io.B.size, (uint32_t)((size_t)c.K * c.N * bits(ty.b) / 8));
  EXPECT_EQ(io.C.size, (uint32_t)((size_t)c.M * c.N * bits(ty.c) / 8));
  EXPECT_STREQ(io.A.name, "A");
  if (c.b_layout == RKNN_MM_LAYOUT_NATIVE) {
    ASSERT_EQ(io.B.n_dims, 4u);
    EXPECT_EQ(io.B.dims[0], (uint32_t)(c.N / t.b_subn));
    EXPECT_EQ(io.B.dims[1], (uint32_t)(c.K / t.b_subk));
    EXPECT_EQ(io.B.dims[2], (uint32_t)t.b_subn);
    EXPECT_EQ(io.B.dims[3], (uint32_t)t.b_subk);
  } else if (c.b_layout == RKNN_MM_LAYOUT_TP_NORM) {
    EXPECT_EQ(io.B.dims[0], (uint32_t)c.N);
    EXPECT_EQ(io.B.dims[1], (uint32_t)c.K);
  }
  if (nat) {
    ASSERT_EQ(io.A.n_dims, 3u);
    EXPECT_EQ(io.A.dims[0], (uint32_t)(c.K / t.a_subk));
    EXPECT_EQ(io.A.dims[2], (uint32_t)t.a_subk);
    EXPECT_EQ(io.C.dims[0], (uint32_t)(c.N / t.c_sub));
    EXPECT_EQ(io.C.dims[2], (uint32_t)t.c_sub);
  }
  Quant qd;
  if (q) {
    qd = *q;
    if (ty.a != F16) set_q(ctx, "A", qd.sa, qd.za);
    if (ty.b != F16) set_q(ctx, "B", qd.sb, qd.zb);
    if (ty.c == I8 || ty.c == I16) set_q(ctx, "C", qd.sc, qd.zc);
  }
  rknn_tensor_mem* ma = rknn_create_mem(ctx, io.A.size);
  rknn_tensor_mem* mb = rknn_create_mem(ctx, io.B.size);
  rknn_tensor_mem* mc = rknn_create_mem(ctx, io.C.size);
  ASSERT_TRUE(ma && mb && mc);
  std::mt19937 rng(seed);
  Operand A = random_operand(ty.a, (size_t)c.M * c.K, rng), B = random_operand(ty.b, (size_t)c.K * c.N, rng);
  for (int m = 0; m < c.M; ++m)
    for (int k = 0; k < c.K; ++k) {
      const size_t l = (size_t)m * c.K + k;
      put(ty.a, ma->virt_addr, idx_a(nat, t, c.M, c.K, m, k), A.iv[l], A.h[l]);
    }
  for (int k = 0; k < c.K; ++k)
    for (int n = 0; n < c.N; ++n) {
      const size_t l = (size_t)k * c.N + n;
      put(ty.b, mb->virt_addr, idx_b(c.b_layout, t, c.K, c.N, k, n), B.iv[l], B.h[l]);
    }
  ASSERT_EQ(rknn_matmul_set_io_mem(ctx, ma, &io.A), RKNN_SUCC);
  ASSERT_EQ(rknn_matmul_set_io_mem(ctx, mb, &io.B), RKNN_SUCC);
  ASSERT_EQ(rknn_matmul_set_io_mem(ctx, mc, &io.C), RKNN_SUCC);
  ASSERT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);

  const int gs = (c.b_qtype >= 4) ? c.group : c.K;
  const int G = c.K / gs;
  auto qi = [&](int n, int g) { return c.b_qtype <= 1 ? 0 : (c.b_qtype <= 3 ? n : n * G + g); };
  int bad = 0;
  for (int m = 0; m < c.M; ++m)
    for (int n = 0; n < c.N; ++n) {
      double real = 0, sumabs = 0;
      long long exact = 0;
      for (int g = 0; g < G; ++g) {
        long long part = 0;
        double fpart = 0;
        for (int k = g * gs; k < (g + 1) * gs; ++k) {
          const size_t la = (size_t)m * c.K + k, lb = (size_t)k * c.N + n;
          const int zb = qd.zb[qi(n, g)];
          const double sb = qd.sb[qi(n, g)];
          if (ty.a != F16) {
            const long long p = (long long)(A.iv[la] - qd.za[0]) * (B.iv[lb] - zb);
            part += p;
            sumabs += std::fabs((double)p) * sb;
          } else {
            const double av = orknn::fp16_to_fp32(A.h[la]);
            const double bv = ty.b == F16 ? (double)orknn::fp16_to_fp32(B.h[lb]) : sb * (B.iv[lb] - zb);
            fpart += av * bv;
            sumabs += std::fabs(av * bv);
          }
        }
        exact += part;
        real += ty.a != F16 ? (double)part * qd.sb[qi(n, g)] : fpart;
      }
      if (ty.a != F16) {
        real *= qd.sa[0];
        sumabs *= qd.sa[0];
      }
      const double got = get_c(ty.c, mc->virt_addr, idx_c(nat, t, c.M, c.N, m, n));
      double want = real, tol = 1e-5 * sumabs + 1e-6;
      if (ty.c == I32) {
        want = (double)exact;
        tol = 0;
      } else if (ty.c == I8 || ty.c == I16) {
        const double lim = ty.c == I8 ? 127 : 32767;
        want = std::min(lim, std::max(-lim - 1, std::nearbyint(real / qd.sc[0]) + qd.zc[0]));
        tol = 1;
      } else if (ty.c == F16) {
        tol += 1e-3 * std::fabs(real);
      } else if (ty.c == BF16) {
        tol += 8e-3 * std::fabs(real);
      }
      if (std::fabs(got - want) > tol && ++bad <= 5)
        ADD_FAILURE() << "C[" << m << "," << n << "] = " << got << ", expected " << want << " (tol " << tol << ")";
    }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(rknn_destroy_mem(ctx, ma), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy_mem(ctx, mb), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy_mem(ctx, mc), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

const int kAllTypes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15};
bool has_int4(int type) {
  const Types t = types_of(type);
  return t.a == I4 || t.b == I4;
}

TEST_F(MatmulTest, EveryTypeAndLayoutRk3588Rk3576) {
  for (const char* p : {"rk3588", "rk3576"})
    for (int type : kAllTypes)
      for (int bl : {0, 1, 2})
        for (int acl : {0, 1}) {
          const Tiles t = tiles_of(p, type);
          // Odd multiples of the alignment and an odd M.
          check_case({p, type, 5, 3 * t.k_align, 3 * t.n_align, bl, acl}, nullptr, type * 7 + bl);
        }
}

TEST_F(MatmulTest, NonInt4TypesRk3568Rk3562) {
  for (const char* p : {"rk3568", "rk3562"})
    for (int type : kAllTypes) {
      if (has_int4(type)) continue;
      for (int bl : {0, 1, 2})
        for (int acl : {0, 1}) {
          const Tiles t = tiles_of(p, type);
          check_case({p, type, 3, 3 * t.k_align, 3 * t.n_align, bl, acl}, nullptr, type + bl);
        }
    }
}

TEST_F(MatmulTest, KSegmentsOfNativeB) {
  // RK3588 splits native B after 8192 rows of K, RK3576 after 4096 (10240 -> 4096+4096+2048).
  for (int type : {1, 2, 10})
    for (int acl : {0, 1}) {
      check_case({"rk3588", type, 3, 8192 + 64, tiles_of("rk3588", type).n_align, 1, acl}, nullptr);
      check_case({"rk3576", type, 2, 10240, tiles_of("rk3576", type).n_align, 1, acl}, nullptr);
    }
}

TEST_F(MatmulTest, QuantParamsPerLayerChannelGroup) {
  const int K = 128, N = 64, M = 4;
  Quant layer;
  layer.sa = {0.05f};
  layer.za = {3};
  layer.sb = {0.02f};
  layer.zb = {-2};
  layer.sc = {0.4f};
  layer.zc = {5};
  for (int type : {2, 3, 9, 5, 11, 15, 10}) {
    Quant q = layer;
    if (types_of(type).b == I4) q.zb = {1};
    if (types_of(type).c == I16) q.sc = {0.01f};
    check_case({"rk3588", type, M, K, N, 0, 0, 1}, &q);
  }
  Quant ch = layer;
  ch.sb.clear();
  ch.zb.assign(N, 0);
  for (int n = 0; n < N; ++n) ch.sb.push_back(0.01f + 0.001f * n);
  for (int type : {2, 3, 5, 9, 7})
    for (int bl : {0, 1, 2}) check_case({"rk3576", type, M, K, N, bl, 1, 2}, &ch);
  Quant chasym = ch;
  for (int n = 0; n < N; ++n) chasym.zb[n] = (n % 7) - 3;
  check_case({"rk3588", 3, M, K, N, 0, 0, 3}, &chasym);
  check_case({"rk3588", 6, M, K, N, 2, 0, 3}, &chasym);
  Quant grp = layer;
  const int gs = 32, G = K / gs;
  grp.sb.clear();
  grp.zb.assign(N * G, 0);
  for (int i = 0; i < N * G; ++i) grp.sb.push_back(0.005f + 0.0007f * (i % 13));
  for (int type : {3, 7, 8, 9, 12})
    for (int bl : {0, 1}) check_case({"rk3588", type, M, K, N, bl, 0, 4, gs}, &grp);
  Quant grpasym = grp;
  for (int i = 0; i < N * G; ++i) grpasym.zb[i] = (i % 5) - 2;
  check_case({"rk3576", 7, M, K, N, 0, 1, 5, gs}, &grpasym);
}

TEST_F(MatmulTest, GetQuantParams) {
  setenv("OPENRKNN_MATMUL_PLATFORM", "rk3588", 1);
  rknn_matmul_info info = make_info({"rk3588", 2, 4, 64, 64, 0, 0, 2});
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx;
  ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
  Quant q;
  q.sa = {0.5f};
  q.za = {0};
  q.sb.assign(64, 0.25f);
  q.sb[3] = 0.125f;
  q.zb.assign(64, 0);
  set_q(ctx, "A", q.sa, q.za);
  set_q(ctx, "B", q.sb, q.zb);
  rknn_quant_params p;
  std::memset(&p, 0, sizeof(p));
  std::strcpy(p.name, "B");
  float scale = 0;
  ASSERT_EQ(rknn_matmul_get_quant_params(ctx, &p, &scale), RKNN_SUCC);
  ASSERT_EQ(p.scale_len, 64);
  EXPECT_FLOAT_EQ(p.scale[3], 0.125f);
  EXPECT_FLOAT_EQ(scale, 0.5f);  // per channel: A's scale (times scale[n] per column)
  // Wrong length for per-channel B, symmetric type with a zero point, unknown name.
  std::vector<float> one{1.0f};
  std::vector<int32_t> zero{0};
  rknn_quant_params bad;
  std::memset(&bad, 0, sizeof(bad));
  std::strcpy(bad.name, "B");
  bad.scale = one.data();
  bad.scale_len = 1;
  EXPECT_EQ(rknn_matmul_set_quant_params(ctx, &bad), RKNN_ERR_PARAM_INVALID);
  std::strcpy(bad.name, "X");
  EXPECT_EQ(rknn_matmul_set_quant_params(ctx, &bad), RKNN_ERR_PARAM_INVALID);
  std::vector<int32_t> zp{4};
  std::strcpy(bad.name, "A");
  bad.zp = zp.data();
  bad.zp_len = 1;
  EXPECT_EQ(rknn_matmul_set_quant_params(ctx, &bad), RKNN_SUCC);  // A is per-layer ASYM in make_info
  one[0] = -1.0f;
  EXPECT_EQ(rknn_matmul_set_quant_params(ctx, &bad), RKNN_ERR_PARAM_INVALID);  // negative scale
  EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
  // fp16 x fp16 takes no quantisation.
  info = make_info({"rk3588", 1, 4, 64, 64, 0, 0});
  ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
  one[0] = 1.0f;
  bad.zp_len = 0;
  EXPECT_EQ(rknn_matmul_set_quant_params(ctx, &bad), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

TEST_F(MatmulTest, NormalToNativeLayoutMatchesNaiveRelayout) {
  for (const char* p : {"rk3588", "rk3576", "rk3568"})
    for (int type : {1, 2, 7, 10}) {
      if (std::string(p) == "rk3568" && has_int4(type)) continue;
      setenv("OPENRKNN_MATMUL_PLATFORM", p, 1);
      const Tiles t = tiles_of(p, type);
      const int K = std::string(p) == "rk3568" ? 96 : 8192 + 96, N = 2 * t.n_align;
      const Kind kb = types_of(type).b;
      std::mt19937 rng(type);
      Operand B = random_operand(kb, (size_t)K * N, rng);
      const size_t bytes = (size_t)K * N * (kb == I4 ? 1 : kb == I8 ? 2 : 4) / 2;
      std::vector<uint8_t> norm(bytes), want(bytes), got(bytes, 0xAB);
      for (int k = 0; k < K; ++k)
        for (int n = 0; n < N; ++n) {
          const size_t l = (size_t)k * N + n;
          put(kb, norm.data(), l, B.iv[l], B.h[l]);
          put(kb, want.data(), idx_b(RKNN_MM_LAYOUT_NATIVE, t, K, N, k, n), B.iv[l], B.h[l]);
        }
      rknn_matmul_info info = make_info({p, type, 1, K, N, 1, 0});
      ASSERT_EQ(rknn_B_normal_layout_to_native_layout(norm.data(), got.data(), K, N, &info), RKNN_SUCC) << p << type;
      EXPECT_EQ(got, want) << p << " type " << type;
    }
  rknn_matmul_info info = make_info({"rk3588", 2, 1, 40, 32, 1, 0});
  std::vector<int8_t> buf(40 * 32);
  EXPECT_EQ(rknn_B_normal_layout_to_native_layout(buf.data(), buf.data(), 40, 32, &info), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_B_normal_layout_to_native_layout(nullptr, buf.data(), 32, 32, &info), RKNN_ERR_PARAM_INVALID);
}

TEST_F(MatmulTest, DynamicM) {
  for (int type : {1, 2}) {
    setenv("OPENRKNN_MATMUL_PLATFORM", "rk3588", 1);
    const int K = 64, N = 32;
    rknn_matmul_shape shapes[3] = {{1, K, N}, {4, K, N}, {7, K, N}};
    rknn_matmul_io_attr io[3];
    rknn_matmul_info info = make_info({"rk3588", type, 0, 0, 0, 0, 0});
    rknn_matmul_ctx ctx;
    ASSERT_EQ(rknn_matmul_create_dynamic_shape(&ctx, &info, 3, shapes, io), RKNN_SUCC);
    const Types ty = types_of(type);
    EXPECT_EQ(io[2].A.dims[0], 7u);
    rknn_tensor_mem* ma = rknn_create_mem(ctx, io[2].A.size);
    rknn_tensor_mem* mb = rknn_create_mem(ctx, io[2].B.size);
    rknn_tensor_mem* mc = rknn_create_mem(ctx, io[2].C.size);
    std::mt19937 rng(3);
    Operand A = random_operand(ty.a, 7 * K, rng), B = random_operand(ty.b, K * N, rng);
    for (size_t i = 0; i < A.iv.size(); ++i) put(ty.a, ma->virt_addr, i, A.iv[i], A.h[i]);
    for (size_t i = 0; i < B.iv.size(); ++i) put(ty.b, mb->virt_addr, i, B.iv[i], B.h[i]);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, ma, &io[2].A), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, mb, &io[2].B), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, mc, &io[2].C), RKNN_SUCC);
    for (int s : {1, 0, 2}) {
      ASSERT_EQ(rknn_matmul_set_dynamic_shape(ctx, &shapes[s]), RKNN_SUCC);
      std::memset(mc->virt_addr, 0x7F, mc->size);
      ASSERT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);
      for (int m = 0; m < shapes[s].M; ++m)
        for (int n = 0; n < N; ++n) {
          double want = 0;
          for (int k = 0; k < K; ++k) {
            const size_t la = (size_t)m * K + k, lb = (size_t)k * N + n;
            want += type == 2 ? (double)A.iv[la] * B.iv[lb]
                              : (double)orknn::fp16_to_fp32(A.h[la]) * orknn::fp16_to_fp32(B.h[lb]);
          }
          const double got = get_c(ty.c, mc->virt_addr, (size_t)m * N + n);
          EXPECT_NEAR(got, want, type == 2 ? 0 : 1e-4) << "shape " << s << " m " << m << " n " << n;
        }
    }
    rknn_matmul_shape other{5, K, N};
    EXPECT_EQ(rknn_matmul_set_dynamic_shape(ctx, &other), RKNN_ERR_PARAM_INVALID);
    rknn_destroy_mem(ctx, ma);
    rknn_destroy_mem(ctx, mb);
    rknn_destroy_mem(ctx, mc);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
    // Shapes whose K or N differ are refused when B has a scale per channel (a length of N).
    rknn_matmul_shape mixed[2] = {{1, K, N}, {2, 2 * K, N}};
    if (type == 2) {
      rknn_matmul_info per_channel = make_info({"rk3588", type, 0, 0, 0, 0, 0, RKNN_QUANT_TYPE_PER_CHANNEL_SYM});
      EXPECT_EQ(rknn_matmul_create_dynamic_shape(&ctx, &per_channel, 2, mixed, io), RKNN_ERR_PARAM_INVALID);
      EXPECT_EQ(ctx, 0u);
    }
  }
}

// The vendor's dynamic-shape demo: B transposed (TP_NORM, [N][K]) and per-layer quantisation, with
// K and N changing between shapes; every shape computes its own product, on the fast engine and
// on the reference (OPENRKNN_DISABLE_KERNELS=onednn_matmul_api).
TEST_F(MatmulTest, DynamicKAndNWithTransposedB) {
  setenv("OPENRKNN_MATMUL_PLATFORM", "rk3588", 1);
  rknn_matmul_shape shapes[3] = {{4, 64, 32}, {2, 128, 64}, {3, 32, 96}};
  for (const char* disabled : {"", "onednn_matmul_api"}) {
    for (int type : {1, 2}) {
      SCOPED_TRACE(testing::Message() << "type " << type << (*disabled ? ", reference engine" : ""));
      setenv("OPENRKNN_DISABLE_KERNELS", disabled, 1);
      rknn_matmul_info info = make_info({"rk3588", type, 0, 0, 0, RKNN_MM_LAYOUT_TP_NORM, 0});
      rknn_matmul_io_attr io[3];
      rknn_matmul_ctx ctx = 0;
      ASSERT_EQ(rknn_matmul_create_dynamic_shape(&ctx, &info, 3, shapes, io), RKNN_SUCC);
      unsetenv("OPENRKNN_DISABLE_KERNELS");
      const Types ty = types_of(type);
      for (int s : {0, 1, 2, 0}) {
        const int M = shapes[s].M, K = shapes[s].K, N = shapes[s].N;
        EXPECT_EQ(io[s].B.dims[0], uint32_t(N));  // TP_NORM: [N][K]
        EXPECT_EQ(io[s].B.dims[1], uint32_t(K));
        rknn_tensor_mem* ma = rknn_create_mem(ctx, io[s].A.size);
        rknn_tensor_mem* mb = rknn_create_mem(ctx, io[s].B.size);
        rknn_tensor_mem* mc = rknn_create_mem(ctx, io[s].C.size);
        std::mt19937 rng(10 + s);
        Operand A = random_operand(ty.a, size_t(M) * K, rng), B = random_operand(ty.b, size_t(K) * N, rng);
        for (size_t i = 0; i < A.iv.size(); ++i) put(ty.a, ma->virt_addr, i, A.iv[i], A.h[i]);
        for (size_t i = 0; i < B.iv.size(); ++i) put(ty.b, mb->virt_addr, i, B.iv[i], B.h[i]);  // [N][K]
        ASSERT_EQ(rknn_matmul_set_dynamic_shape(ctx, &shapes[s]), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx, ma, &io[s].A), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx, mb, &io[s].B), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx, mc, &io[s].C), RKNN_SUCC);
        std::memset(mc->virt_addr, 0x7F, mc->size);
        ASSERT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);
        for (int m = 0; m < M; ++m)
          for (int n = 0; n < N; ++n) {
            double want = 0;
            for (int k = 0; k < K; ++k) {
              const size_t la = size_t(m) * K + k, lb = size_t(n) * K + k;
              want += type == 2 ? double(A.iv[la]) * B.iv[lb]
                                : double(orknn::fp16_to_fp32(A.h[la])) * orknn::fp16_to_fp32(B.h[lb]);
            }
            EXPECT_NEAR(get_c(ty.c, mc->virt_addr, size_t(m) * N + n), want, type == 2 ? 0 : 1e-3)
                << "shape " << s << " m " << m << " n " << n;
          }
        rknn_destroy_mem(ctx, ma);
        rknn_destroy_mem(ctx, mb);
        rknn_destroy_mem(ctx, mc);
      }
      EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
    }
  }
}

TEST_F(MatmulTest, AlignmentAndArgumentErrors) {
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  auto create = [&](const char* p, int type, int M, int K, int N, int bl = 0, int acl = 0) {
    setenv("OPENRKNN_MATMUL_PLATFORM", p, 1);
    rknn_matmul_info info = make_info({p, type, M, K, N, bl, acl});
    const int r = rknn_matmul_create(&ctx, &info, &io);
    if (r == RKNN_SUCC) rknn_matmul_destroy(ctx);
    return r;
  };
  EXPECT_EQ(create("rk3588", 2, 4, 48, 32), RKNN_ERR_PARAM_INVALID);   // K not a multiple of 32
  EXPECT_EQ(create("rk3588", 2, 4, 64, 48), RKNN_ERR_PARAM_INVALID);   // N not a multiple of 32
  EXPECT_EQ(create("rk3588", 1, 4, 64, 24), RKNN_ERR_PARAM_INVALID);   // fp16 N not a multiple of 16
  EXPECT_EQ(create("rk3588", 1, 4, 64, 16), RKNN_SUCC);
  EXPECT_EQ(create("rk3568", 1, 4, 48, 8), RKNN_SUCC);                 // fp16: K 16, N 8 on RK3568
  EXPECT_EQ(create("rk3568", 2, 4, 64, 16), RKNN_SUCC);
  EXPECT_EQ(create("rk3568", 2, 4, 48, 16), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(create("rk3588", 10, 4, 64, 32), RKNN_ERR_PARAM_INVALID);  // int4 N multiple of 64
  EXPECT_EQ(create("rk3568", 10, 4, 64, 64), RKNN_ERR_PARAM_INVALID);  // no int4 on RK3568
  EXPECT_EQ(create("rk3588", 2, 4, 10240 + 32, 32), RKNN_ERR_PARAM_INVALID);  // K > 10240
  EXPECT_EQ(create("rk3588", 2, 0, 64, 32), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(create("rk3588", 13, 4, 64, 32), RKNN_ERR_PARAM_INVALID);  // not a type
  EXPECT_EQ(create("rk3588", 2, 4, 64, 32, 0, 2), RKNN_ERR_PARAM_INVALID);  // TP_NORM for A/C
  EXPECT_EQ(create("rk3588", 2, 4, 64, 32, 3, 0), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(create("rv1106", 2, 4, 64, 32), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_matmul_create(nullptr, nullptr, &io), RKNN_ERR_PARAM_INVALID);
  setenv("OPENRKNN_MATMUL_PLATFORM", "rk3588", 1);
  rknn_matmul_info grp = make_info({"rk3588", 3, 4, 64, 32, 0, 0, 4, 48});
  EXPECT_EQ(rknn_matmul_create(&ctx, &grp, &io), RKNN_ERR_PARAM_INVALID);  // group_size 48

  // Run without memory, with destroyed memory, on a bad handle; core masks.
  rknn_matmul_info info = make_info({"rk3588", 2, 4, 64, 32, 0, 0});
  ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_run(ctx), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_mem* ma = rknn_create_mem(ctx, io.A.size);
  rknn_tensor_mem* mb = rknn_create_mem(ctx, io.B.size);
  rknn_tensor_mem* mc = rknn_create_mem(ctx, io.C.size);
  rknn_tensor_mem* small = rknn_create_mem(ctx, io.C.size - 4);
  ASSERT_TRUE(ma && mb && mc && small);
  EXPECT_EQ(rknn_matmul_set_io_mem(ctx, small, &io.C), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_matmul_set_io_mem(ctx, ma, &io.A), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_set_io_mem(ctx, mb, &io.B), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_set_io_mem(ctx, mc, &io.C), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_set_io_mem(ctx, nullptr, &io.C), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_matmul_set_core_mask(ctx, RKNN_NPU_CORE_0_1), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_set_core_mask(ctx, (rknn_core_mask)0x20), RKNN_ERR_PARAM_INVALID);
  EXPECT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);
  EXPECT_EQ(rknn_destroy_mem(ctx, mc), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_run(ctx), RKNN_ERR_PARAM_INVALID);  // C was destroyed
  EXPECT_EQ(rknn_destroy_mem(ctx, small), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_run(ctx + 12345), RKNN_ERR_CTX_INVALID);
  EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);  // frees A and B left behind
  EXPECT_EQ(rknn_matmul_run(ctx), RKNN_ERR_CTX_INVALID);
  EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_ERR_CTX_INVALID);
  EXPECT_EQ(rknn_create_mem(ctx, 64), nullptr);  // destroyed matmul handle

  setenv("OPENRKNN_MATMUL_PLATFORM", "rk3568", 1);
  info = make_info({"rk3568", 2, 4, 64, 32, 0, 0});
  ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_set_core_mask(ctx, RKNN_NPU_CORE_0), -1);  // single core
  EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

// Results do not depend on the thread count: exact for integer A; for fp16 A this is what oneDNN
// 2.6.3's f32 (brgemm, AVX-512) matmul does on these shapes (LLM-like ones included), checked bit
// for bit. Its AVX2 gemm splits K over threads for some shapes: there fp16-A results may differ in
// fp32 summation order only, checked against 1e-5 * sqrt(K) of the largest |C|.
TEST_F(MatmulTest, MultiThreadedMatchesSingleThread) {
  const bool avx512_core = ORKNN_X86_HAS("avx512f") && ORKNN_X86_HAS("avx512bw") &&
                           ORKNN_X86_HAS("avx512vl") && ORKNN_X86_HAS("avx512dq");
  auto expect_same = [&](const std::vector<uint8_t>& one, const std::vector<uint8_t>& more, int type, int K,
                         const char* what) {
    if (type == 2 || avx512_core) {
      EXPECT_TRUE(one == more) << "type " << type << ": " << what;
      return;
    }
    ASSERT_EQ(one.size(), more.size());
    const float* a = reinterpret_cast<const float*>(one.data());  // types 1 and 7: fp32 C
    const float* b = reinterpret_cast<const float*>(more.data());
    const size_t n = one.size() / sizeof(float);
    double largest = 0, worst = 0;
    for (size_t i = 0; i < n; ++i) largest = std::max(largest, std::fabs((double)a[i]));
    for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs((double)a[i] - (double)b[i]));
    EXPECT_GT(largest, 0.0);
    EXPECT_LE(worst, 1e-5 * std::sqrt((double)K) * largest) << "type " << type << ": " << what;
  };
  setenv("OPENRKNN_MATMUL_PLATFORM", "rk3588", 1);
  const int shapes[][3] = {{3, 256, 256}, {1, 4096, 4096}, {64, 4096, 512}, {17, 10240, 64}};
  for (const auto& sh : shapes)
  for (int type : {2, 1, 7}) {
    const int M = sh[0], K = sh[1], N = sh[2];
    SCOPED_TRACE("M" + std::to_string(M) + " K" + std::to_string(K) + " N" + std::to_string(N));
    rknn_matmul_info info = make_info({"rk3588", type, M, K, N, 0, 0});
    std::vector<std::vector<uint8_t>> outs;
    // The last run: two threads on a busy host (OPENRKNN_BUSY_HOST, common/threads.h), whose run
    // goes sequential but for the oneDNN primitives, which keep the threads they were built for.
    const std::pair<int, bool> runs[] = {
        {RKNN_NPU_CORE_0, false}, {RKNN_NPU_CORE_0_1, false}, {RKNN_NPU_CORE_0_1_2, false}, {RKNN_NPU_CORE_0_1, true}};
    for (const auto& [mask, busy] : runs) {
      if (busy) setenv("OPENRKNN_BUSY_HOST", "1", 1);
      rknn_matmul_io_attr io;
      rknn_matmul_ctx ctx;
      ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
      ASSERT_EQ(rknn_matmul_set_core_mask(ctx, (rknn_core_mask)mask), RKNN_SUCC);
      rknn_tensor_mem* m[3] = {rknn_create_mem(ctx, io.A.size), rknn_create_mem(ctx, io.B.size),
                               rknn_create_mem(ctx, io.C.size)};
      std::mt19937 rng(9);
      for (int i = 0; i < 2; ++i)
        for (uint32_t j = 0; j < m[i]->size; ++j) {
          uint8_t v = (uint8_t)rng();
          if (i == 0 && j % 2) v &= 0x3B;  // keep fp16 values finite and moderate
          if (i == 1 && types_of(type).b == F16 && j % 2) v &= 0x3B;
          static_cast<uint8_t*>(m[i]->virt_addr)[j] = v;
        }
      rknn_matmul_set_io_mem(ctx, m[0], &io.A);
      rknn_matmul_set_io_mem(ctx, m[1], &io.B);
      rknn_matmul_set_io_mem(ctx, m[2], &io.C);
      ASSERT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);
      unsetenv("OPENRKNN_BUSY_HOST");
      const uint8_t* c = static_cast<uint8_t*>(m[2]->virt_addr);
      outs.emplace_back(c, c + io.C.size);
      for (auto* x : m) rknn_destroy_mem(ctx, x);
      rknn_matmul_destroy(ctx);
    }
    expect_same(outs[0], outs[1], type, K, "1 vs 2 threads");
    expect_same(outs[0], outs[2], type, K, "1 vs 3 threads");
    EXPECT_TRUE(outs[1] == outs[3]) << "type " << type << ": 2 threads, idle vs busy host";
  }
}

// ---- fast engine (oneDNN) against the reference (OPENRKNN_DISABLE_KERNELS=onednn_matmul_api) ------
// Integer A: C must be bit-identical. fp16 A: the two differ only in fp32 summation order:
// |fast - ref| <= 1e-5 * sum_k |a_k * b_k| (+ one unit in the last place of an fp16/bf16 output).

// Creates a context (the reference kernel when `reference`), fills A and B from the logical operands,
// runs and returns C's bytes. mask != 0: rknn_matmul_set_core_mask(mask) first.
std::vector<uint8_t> run_bytes(const Case& c, const Quant& q, const Operand& A, const Operand& B, bool reference,
                               int mask) {
  setenv("OPENRKNN_MATMUL_PLATFORM", c.platform.c_str(), 1);
  if (reference) setenv("OPENRKNN_DISABLE_KERNELS", "onednn_matmul_api", 1);
  const Types ty = types_of(c.type);
  const Tiles t = tiles_of(c.platform, c.type);
  rknn_matmul_info info = make_info(c);
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  const int r = rknn_matmul_create(&ctx, &info, &io);
  unsetenv("OPENRKNN_DISABLE_KERNELS");
  EXPECT_EQ(r, RKNN_SUCC);
  if (r != RKNN_SUCC) return {};
  if (mask) EXPECT_EQ(rknn_matmul_set_core_mask(ctx, (rknn_core_mask)mask), RKNN_SUCC);
  Quant qd = q;
  if (ty.a != F16) set_q(ctx, "A", qd.sa, qd.za);
  if (ty.b != F16) set_q(ctx, "B", qd.sb, qd.zb);
  if (ty.c == I8 || ty.c == I16) set_q(ctx, "C", qd.sc, qd.zc);
  rknn_tensor_mem* ma = rknn_create_mem(ctx, io.A.size);
  rknn_tensor_mem* mb = rknn_create_mem(ctx, io.B.size);
  rknn_tensor_mem* mc = rknn_create_mem(ctx, io.C.size);
  EXPECT_TRUE(ma && mb && mc);
  const bool nat = c.ac_layout == RKNN_MM_LAYOUT_NATIVE;
  for (int m = 0; m < c.M; ++m)
    for (int k = 0; k < c.K; ++k) {
      const size_t l = (size_t)m * c.K + k;
      put(ty.a, ma->virt_addr, idx_a(nat, t, c.M, c.K, m, k), A.iv[l], A.h[l]);
    }
  for (int k = 0; k < c.K; ++k)
    for (int n = 0; n < c.N; ++n) {
      const size_t l = (size_t)k * c.N + n;
      put(ty.b, mb->virt_addr, idx_b(c.b_layout, t, c.K, c.N, k, n), B.iv[l], B.h[l]);
    }
  std::memset(mc->virt_addr, 0x5A, mc->size);
  EXPECT_EQ(rknn_matmul_set_io_mem(ctx, ma, &io.A), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_set_io_mem(ctx, mb, &io.B), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_set_io_mem(ctx, mc, &io.C), RKNN_SUCC);
  EXPECT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);
  const uint8_t* cb = static_cast<const uint8_t*>(mc->virt_addr);
  std::vector<uint8_t> out(cb, cb + io.C.size);
  rknn_destroy_mem(ctx, ma);
  rknn_destroy_mem(ctx, mb);
  rknn_destroy_mem(ctx, mc);
  EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
  return out;
}

// Random quantisation for case c: A per layer asymmetric (zp_a forced when given), B per c.b_qtype,
// C scaled so that outputs spread over (and partly saturate) the int8/int16 range.
Quant random_quant(const Case& c, std::mt19937& rng, int zp_a = 1000, int zp_b = 1000) {
  const Types ty = types_of(c.type);
  Quant q;
  std::uniform_real_distribution<float> sd(0.01f, 0.1f);
  auto zrange = [](Kind k) { return k == I4 ? 8 : 128; };
  q.sa = {sd(rng)};
  const int ra = zrange(ty.a);
  q.za = {zp_a != 1000 ? zp_a : std::uniform_int_distribution<int>(-ra, ra - 1)(rng)};
  const int G = c.b_qtype >= 4 ? c.K / c.group : 1;
  const int len = c.b_qtype <= 1 ? 1 : c.b_qtype <= 3 ? c.N : c.N * G;
  const bool asym = c.b_qtype % 2 == 1;
  const int rb = zrange(ty.b);
  q.sb.clear();
  q.zb.clear();
  for (int i = 0; i < len; ++i) {
    q.sb.push_back(sd(rng));
    q.zb.push_back(!asym ? 0 : zp_b != 1000 ? zp_b : std::uniform_int_distribution<int>(-rb, rb - 1)(rng));
  }
  const double va = ty.a == I4 ? 4.6 : 74, vb = ty.b == I4 ? 4.6 : 74;
  const double target = ty.c == I16 ? 8000 : 60;
  q.sc = {(float)(q.sa[0] * q.sb[0] * std::sqrt((double)c.K) * va * vb / target)};
  q.zc = {std::uniform_int_distribution<int>(-20, 20)(rng)};
  return q;
}

// sum_k |a_k * b_k| for C[m][n] (B dequantised as the API defines it), for the fp16-A tolerance.
double abs_dot(const Case& c, const Quant& q, const Operand& A, const Operand& B, int m, int n) {
  const Types ty = types_of(c.type);
  const int gs = c.b_qtype >= 4 ? c.group : c.K;
  double s = 0;
  for (int k = 0; k < c.K; ++k) {
    const size_t lb = (size_t)k * c.N + n;
    const int qi = c.b_qtype <= 1 ? 0 : c.b_qtype <= 3 ? n : n * (c.K / gs) + k / gs;
    const double bv = ty.b == F16 ? (double)orknn::fp16_to_fp32(B.h[lb]) : (double)q.sb[qi] * (B.iv[lb] - q.zb[qi]);
    s += std::fabs((double)orknn::fp16_to_fp32(A.h[(size_t)m * c.K + k]) * bv);
  }
  return s;
}

// Compares C of `fast` (the default engine) and `ref` (the reference engine) element-wise.
void expect_fast_matches(const Case& c, const Quant& q, const Operand& A, const Operand& B,
                         const std::vector<uint8_t>& fast, const std::vector<uint8_t>& ref) {
  ASSERT_EQ(fast.size(), ref.size());
  const Types ty = types_of(c.type);
  const Tiles t = tiles_of(c.platform, c.type);
  const bool nat = c.ac_layout == RKNN_MM_LAYOUT_NATIVE;
  if (ty.a != F16) {
    size_t diff = 0;
    while (diff < fast.size() && fast[diff] == ref[diff]) ++diff;
    EXPECT_EQ(diff, fast.size()) << "first differing byte of C at " << diff << " of " << fast.size();
    return;
  }
  int bad = 0;
  for (int m = 0; m < c.M; ++m)
    for (int n = 0; n < c.N; ++n) {
      const size_t ci = idx_c(nat, t, c.M, c.N, m, n);
      const double f = get_c(ty.c, fast.data(), ci), r = get_c(ty.c, ref.data(), ci);
      double tol = 1e-5 * abs_dot(c, q, A, B, m, n) + 1e-30;
      if (ty.c == F16) tol += std::fabs(r) * std::ldexp(1.0, -10) + std::ldexp(1.0, -24);
      if (ty.c == BF16) tol += std::fabs(r) * std::ldexp(1.0, -7);
      if (!(std::fabs(f - r) <= tol) && ++bad <= 5)
        ADD_FAILURE() << "C[" << m << "," << n << "]: fast " << f << ", reference " << r << " (tol " << tol << ")";
    }
  EXPECT_EQ(bad, 0);
}

void check_fast(const Case& c, unsigned seed, int mask = 0, int zp_a = 1000, int zp_b = 1000) {
  SCOPED_TRACE(c.platform + " type " + std::to_string(c.type) + " M" + std::to_string(c.M) + " K" +
               std::to_string(c.K) + " N" + std::to_string(c.N) + " B_layout " + std::to_string(c.b_layout) +
               " AC_layout " + std::to_string(c.ac_layout) + " Bq " + std::to_string(c.b_qtype) + " mask " +
               std::to_string(mask) + " seed " + std::to_string(seed));
  const Types ty = types_of(c.type);
  std::mt19937 rng(seed);
  const Quant q = random_quant(c, rng, zp_a, zp_b);
  const Operand A = random_operand(ty.a, (size_t)c.M * c.K, rng), B = random_operand(ty.b, (size_t)c.K * c.N, rng);
  const std::vector<uint8_t> ref = run_bytes(c, q, A, B, true, mask);
  const std::vector<uint8_t> fast = run_bytes(c, q, A, B, false, mask);
  expect_fast_matches(c, q, A, B, fast, ref);
}

bool platform_has(const char* p, int type) {
  return !has_int4(type) || std::string(p) == "rk3588" || std::string(p) == "rk3576";
}

TEST_F(MatmulTest, FastPathMatchesReferenceEveryTypeLayoutPlatform) {
  unsigned seed = 100;
  for (const char* p : {"rk3588", "rk3576", "rk3566", "rk3568", "rk3562"})
    for (int type : kAllTypes) {
      if (!platform_has(p, type)) continue;
      const Tiles t = tiles_of(p, type);
      for (int bl : {0, 1, 2})
        for (int acl : {0, 1}) {
          // Odd multiples of the alignments (e.g. M=3, K=96, N=96 for int8 on RK3588); B per layer,
          // asymmetric for integer B.
          check_fast({p, type, 3, 3 * t.k_align, 3 * t.n_align, bl, acl, 1}, ++seed);
        }
    }
}

TEST_F(MatmulTest, FastPathMatchesReferenceKSegmentsOfNativeB) {
  unsigned seed = 200;
  for (int type : kAllTypes)
    for (int acl : {0, 1}) {
      check_fast({"rk3588", type, 3, 8192 + 64, tiles_of("rk3588", type).n_align, 1, acl, 1}, ++seed);
      check_fast({"rk3576", type, 2, 10240, tiles_of("rk3576", type).n_align, 1, acl, 1}, ++seed);
    }
}

TEST_F(MatmulTest, FastPathMatchesReferenceZeroPointsAndQuantTypes) {
  unsigned seed = 300;
  const int M = 5, K = 128, N = 128, gs = 32;
  for (int type : kAllTypes) {
    const Types ty = types_of(type);
    const bool int_b = ty.b != F16;
    for (int bl : {0, 1, 2}) {
      // Extreme asymmetric zero points, per layer.
      const int lo_a = ty.a == I4 ? -8 : -128, hi_a = ty.a == I4 ? 7 : 127;
      const int lo_b = ty.b == I4 ? -8 : -128, hi_b = ty.b == I4 ? 7 : 127;
      check_fast({"rk3588", type, M, K, N, bl, 0, 1}, ++seed, 0, lo_a, lo_b);
      check_fast({"rk3588", type, M, K, N, bl, 1, 1}, ++seed, 0, hi_a, hi_b);
      check_fast({"rk3576", type, M, K, N, bl, 0, 1}, ++seed, 0, lo_a, hi_b);
      check_fast({"rk3588", type, M, K, N, bl, 0, 0}, ++seed, 0, 0);  // symmetric B
      if (!int_b) continue;
      for (int bq : {2, 3, 4, 5})  // per channel sym/asym, per group sym/asym
        for (int acl : {0, 1}) check_fast({"rk3588", type, M, K, N, bl, acl, bq, bq >= 4 ? gs : 0}, ++seed);
    }
  }
}

TEST_F(MatmulTest, FastPathMatchesReferenceTwoThreads) {
  unsigned seed = 400;
  // Wide, narrow and long shapes: oneDNN may split M, N or K over the threads.
  for (int type : {2, 3, 9, 11, 1, 4, 5, 7}) {
    const int na = tiles_of("rk3588", type).n_align;
    check_fast({"rk3588", type, 4, 4096, na, 0, 0, 1}, ++seed, RKNN_NPU_CORE_0_1);
    check_fast({"rk3588", type, 17, 256, 8 * na, 1, 1, 1}, ++seed, RKNN_NPU_CORE_0_1);
    check_fast({"rk3588", type, 1, 10240, 2 * na, 2, 0, 1}, ++seed, RKNN_NPU_CORE_0_1_2);
  }
  // Per-group B (integer A: one oneDNN run per K slice) with long K, native B with K segments.
  for (int type : {3, 9, 11, 15, 10, 7}) {
    const int na = tiles_of("rk3588", type).n_align;
    check_fast({"rk3588", type, 3, 4096, 2 * na, 2, 0, 5, 128}, ++seed, RKNN_NPU_CORE_0_1);
    check_fast({"rk3576", type, 2, 10240, na, 1, 1, 4, 256}, ++seed, RKNN_NPU_CORE_0_1);
    check_fast({"rk3588", type, 4, 8192 + 1024, na, 1, 0, 5, 1024}, ++seed);
  }
}

// Dynamic M, B rewritten and the core mask changed between runs (nothing may be cached across runs;
// primitives are rebuilt for a new thread count): every run of the fast path equals a reference
// context given the same inputs.
TEST_F(MatmulTest, FastPathDynamicMAndBRewrittenBetweenRuns) {
  for (int type : {2, 3, 1, 6, 11}) {
    for (int bl : {0, 1, 2}) {
      SCOPED_TRACE("type " + std::to_string(type) + " B_layout " + std::to_string(bl));
      setenv("OPENRKNN_MATMUL_PLATFORM", "rk3588", 1);
      const Types ty = types_of(type);
      const int K = 96, N = 3 * tiles_of("rk3588", type).n_align;
      rknn_matmul_shape shapes[3] = {{1, K, N}, {3, K, N}, {17, K, N}};
      rknn_matmul_info info = make_info({"rk3588", type, 0, 0, 0, bl, 0, 1});
      rknn_matmul_ctx ctx[2];
      rknn_matmul_io_attr io[2][3];
      rknn_tensor_mem* mem[2][3];
      std::mt19937 rng(type * 10 + bl);
      Quant q = random_quant({"rk3588", type, 17, K, N, bl, 0, 1}, rng);
      for (int r = 0; r < 2; ++r) {  // 0: fast, 1: reference
        if (r) setenv("OPENRKNN_DISABLE_KERNELS", "onednn_matmul_api", 1);
        ASSERT_EQ(rknn_matmul_create_dynamic_shape(&ctx[r], &info, 3, shapes, io[r]), RKNN_SUCC);
        unsetenv("OPENRKNN_DISABLE_KERNELS");
        if (ty.a != F16) set_q(ctx[r], "A", q.sa, q.za);
        if (ty.b != F16) set_q(ctx[r], "B", q.sb, q.zb);
        if (ty.c == I8 || ty.c == I16) set_q(ctx[r], "C", q.sc, q.zc);
        for (int i = 0; i < 3; ++i) mem[r][i] = rknn_create_mem(ctx[r], i == 0 ? io[r][2].A.size : i == 1 ? io[r][2].B.size : io[r][2].C.size);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx[r], mem[r][0], &io[r][2].A), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx[r], mem[r][1], &io[r][2].B), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx[r], mem[r][2], &io[r][2].C), RKNN_SUCC);
      }
      const Tiles t = tiles_of("rk3588", type);
      int iter = 0;
      for (int s : {2, 0, 1, 2, 0}) {
        const Case c{"rk3588", type, shapes[s].M, K, N, bl, 0, 1};
        ASSERT_EQ(rknn_matmul_set_core_mask(ctx[0], (rknn_core_mask)(iter++ % 2 ? RKNN_NPU_CORE_0_1 : RKNN_NPU_CORE_0)),
                  RKNN_SUCC);
        const Operand A = random_operand(ty.a, (size_t)c.M * K, rng), B = random_operand(ty.b, (size_t)K * N, rng);
        std::vector<uint8_t> out[2];
        for (int r = 0; r < 2; ++r) {
          for (int m = 0; m < c.M; ++m)
            for (int k = 0; k < K; ++k)
              put(ty.a, mem[r][0]->virt_addr, idx_a(false, t, c.M, K, m, k), A.iv[(size_t)m * K + k], A.h[(size_t)m * K + k]);
          for (int k = 0; k < K; ++k)
            for (int n = 0; n < N; ++n)
              put(ty.b, mem[r][1]->virt_addr, idx_b(bl, t, K, N, k, n), B.iv[(size_t)k * N + n], B.h[(size_t)k * N + n]);
          ASSERT_EQ(rknn_matmul_set_dynamic_shape(ctx[r], &shapes[s]), RKNN_SUCC);
          ASSERT_EQ(rknn_matmul_run(ctx[r]), RKNN_SUCC);
          const uint8_t* cb = static_cast<const uint8_t*>(mem[r][2]->virt_addr);
          out[r].assign(cb, cb + io[r][s].C.size);
        }
        expect_fast_matches(c, q, A, B, out[0], out[1]);
      }
      for (int r = 0; r < 2; ++r) {
        for (auto* m : mem[r]) rknn_destroy_mem(ctx[r], m);
        EXPECT_EQ(rknn_matmul_destroy(ctx[r]), RKNN_SUCC);
      }
    }
  }
}

}  // namespace
