#include "runtime/matmul.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/env.h"
#include "common/fp16.h"
#include "common/log.h"
#include "runtime/platform.h"
#include "runtime/tensor_mem.h"

#if ORKNN_WITH_ONEDNN
#include "kernels/onednn/int8_common.h"
#include "kernels/onednn/onednn_common.h"
#endif

namespace orknn {
namespace {

constexpr int kMaxK = 10240;

const char* elem_name(MmElem e) {
  switch (e) {
    case MmElem::kF16: return "float16";
    case MmElem::kI8: return "int8";
    case MmElem::kI4: return "int4";
    case MmElem::kF32: return "float32";
    case MmElem::kI32: return "int32";
    case MmElem::kI16: return "int16";
    case MmElem::kBF16: return "bfloat16";
  }
  return "?";
}

rknn_tensor_type tensor_type(MmElem e) {
  switch (e) {
    case MmElem::kF16: return RKNN_TENSOR_FLOAT16;
    case MmElem::kI8: return RKNN_TENSOR_INT8;
    case MmElem::kI4: return RKNN_TENSOR_INT4;
    case MmElem::kF32: return RKNN_TENSOR_FLOAT32;
    case MmElem::kI32: return RKNN_TENSOR_INT32;
    case MmElem::kI16: return RKNN_TENSOR_INT16;
    case MmElem::kBF16: return RKNN_TENSOR_BFLOAT16;
  }
  return RKNN_TENSOR_FLOAT32;
}

int elem_bits(MmElem e) {
  switch (e) {
    case MmElem::kI4: return 4;
    case MmElem::kI8: return 8;
    case MmElem::kF16:
    case MmElem::kI16:
    case MmElem::kBF16: return 16;
    default: return 32;
  }
}

bool is_int(MmElem e) { return e == MmElem::kI8 || e == MmElem::kI4; }

// Per-platform tables of api-contract §5, indexed by input element kind.
struct PlatformMm {
  const char* name;
  int a_subk_i4, a_subk_i8, a_subk_f16;
  int b_i4[2], b_i8[2], b_f16[2];  // (subN, subK)
  int k_align_i4, k_align_i8, k_align_f16;
  int n_align_i4, n_align_i8, n_align_f16;
  int k_segment;
  bool int4;
};
const PlatformMm kPlatforms[] = {
    {"rk3588", 32, 16, 8, {64, 32}, {32, 32}, {16, 32}, 32, 32, 32, 64, 32, 16, 8192, true},
    {"rk3576", 32, 16, 8, {64, 32}, {32, 32}, {16, 32}, 32, 32, 32, 64, 32, 16, 4096, true},
    {"rk3566", 0, 8, 4, {0, 0}, {16, 32}, {8, 16}, 0, 32, 16, 0, 16, 8, 0, false},
    {"rk3568", 0, 8, 4, {0, 0}, {16, 32}, {8, 16}, 0, 32, 16, 0, 16, 8, 0, false},
    {"rk3562", 0, 16, 8, {0, 0}, {16, 32}, {8, 32}, 0, 32, 32, 0, 16, 8, 0, false},
};

const PlatformMm* find_mm_platform(const std::string& name) {
  for (const auto& p : kPlatforms)
    if (name == p.name) return &p;
  return nullptr;
}

int pick(MmElem e, int i4, int i8, int f16) { return e == MmElem::kI4 ? i4 : e == MmElem::kI8 ? i8 : f16; }

// ---- element access -------------------------------------------------------------------------

int read_i4(const uint8_t* p, size_t idx) {
  const int nib = (idx & 1) ? (p[idx >> 1] >> 4) : (p[idx >> 1] & 0xF);
  return nib >= 8 ? nib - 16 : nib;
}
void write_i4(uint8_t* p, size_t idx, int v) {
  uint8_t& b = p[idx >> 1];
  const uint8_t nib = static_cast<uint8_t>(v) & 0xF;
  b = (idx & 1) ? static_cast<uint8_t>((b & 0x0F) | (nib << 4)) : static_cast<uint8_t>((b & 0xF0) | nib);
}
// Integer value of an int4/int8 element, or the raw fp16 bits.
int read_int(MmElem e, const void* base, size_t idx) {
  if (e == MmElem::kI4) return read_i4(static_cast<const uint8_t*>(base), idx);
  return static_cast<const int8_t*>(base)[idx];
}
float read_f16(const void* base, size_t idx) { return fp16_to_fp32(static_cast<const uint16_t*>(base)[idx]); }

uint16_t fp32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  const uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

// Linear element index of operand elements in each layout.
size_t a_index(int layout, const MatmulTiles& t, int M, int K, int m, int k) {
  if (layout == RKNN_MM_LAYOUT_NATIVE)
    return (static_cast<size_t>(k / t.a_subk) * M + m) * t.a_subk + k % t.a_subk;
  return static_cast<size_t>(m) * K + k;
}
size_t b_index(int layout, const MatmulTiles& t, int K, int N, int k, int n) {
  if (layout == RKNN_MM_LAYOUT_TP_NORM) return static_cast<size_t>(n) * K + k;
  if (layout == RKNN_MM_LAYOUT_NATIVE) {
    const int seg_rows = (t.k_segment > 0 && K > t.k_segment) ? t.k_segment : K;
    const int k0 = (k / seg_rows) * seg_rows;
    const int ks = std::min(seg_rows, K - k0);
    const int kk = k - k0;
    const size_t tile = static_cast<size_t>(t.b_subn) * t.b_subk;
    return static_cast<size_t>(k0) * N +
           (static_cast<size_t>(n / t.b_subn) * (ks / t.b_subk) + kk / t.b_subk) * tile +
           static_cast<size_t>(n % t.b_subn) * t.b_subk + kk % t.b_subk;
  }
  return static_cast<size_t>(k) * N + n;
}
size_t c_index(int layout, const MatmulTiles& t, int M, int N, int m, int n) {
  if (layout == RKNN_MM_LAYOUT_NATIVE) return (static_cast<size_t>(n / t.c_sub) * M + m) * t.c_sub + n % t.c_sub;
  return static_cast<size_t>(m) * N + n;
}

// Where and how the epilogue writes C. Shared by the reference and the fast path so that the two
// round and saturate identically.
struct CStore {
  MmElem c;
  int layout;
  const MatmulTiles* tiles;
  int M, N;
  float sc;  // C's scale and zero point (int8/int16 C)
  int zpc;
  void* data;
};
// real: the fp32 result (float outputs, int8/int16 requantisation); exact: the int32 sum (int32 C).
void store_c(const CStore& s, int m, int n, float real, int32_t exact) {
  const size_t ci = c_index(s.layout, *s.tiles, s.M, s.N, m, n);
  switch (s.c) {
    case MmElem::kF32: static_cast<float*>(s.data)[ci] = real; break;
    case MmElem::kF16: static_cast<uint16_t*>(s.data)[ci] = fp32_to_fp16(real); break;
    case MmElem::kBF16: static_cast<uint16_t*>(s.data)[ci] = fp32_to_bf16(real); break;
    case MmElem::kI32: static_cast<int32_t*>(s.data)[ci] = exact; break;
    case MmElem::kI8:
    case MmElem::kI16: {
      const float lo = s.c == MmElem::kI8 ? -128.0f : -32768.0f;
      const float hi = s.c == MmElem::kI8 ? 127.0f : 32767.0f;
      float q = std::nearbyint(real / s.sc) + static_cast<float>(s.zpc);
      q = std::min(hi, std::max(lo, q));
      if (s.c == MmElem::kI8) static_cast<int8_t*>(s.data)[ci] = static_cast<int8_t>(q);
      else static_cast<int16_t*>(s.data)[ci] = static_cast<int16_t>(q);
      break;
    }
    default: break;
  }
}

bool is_per_group(int qtype) {
  return qtype == RKNN_QUANT_TYPE_PER_GROUP_SYM || qtype == RKNN_QUANT_TYPE_PER_GROUP_ASYM;
}

int quant_len(int qtype, int K, int N, int group_size) {
  switch (qtype) {
    case RKNN_QUANT_TYPE_PER_CHANNEL_SYM:
    case RKNN_QUANT_TYPE_PER_CHANNEL_ASYM: return N;
    case RKNN_QUANT_TYPE_PER_GROUP_SYM:
    case RKNN_QUANT_TYPE_PER_GROUP_ASYM: return N * (K / group_size);
    default: return 1;
  }
}
bool quant_sym(int qtype) { return qtype % 2 == 0; }

void set_attr(rknn_matmul_tensor_attr* a, const char* name, std::initializer_list<int> dims, MmElem e) {
  std::memset(a, 0, sizeof(*a));
  std::snprintf(a->name, sizeof(a->name), "%s", name);
  size_t elems = 1;
  for (int d : dims) {
    a->dims[a->n_dims++] = static_cast<uint32_t>(d);
    elems *= static_cast<size_t>(d);
  }
  a->size = static_cast<uint32_t>(elems * elem_bits(e) / 8);
  a->type = tensor_type(e);
}

int operand_of(const char* name) {
  if (std::strcmp(name, "A") == 0) return 0;
  if (std::strcmp(name, "B") == 0) return 1;
  if (std::strcmp(name, "C") == 0) return 2;
  return -1;
}

}  // namespace

Status matmul_type_info(int type, MatmulTypeInfo* out) {
  using E = MmElem;
  switch (type) {
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32: *out = {E::kF16, E::kF16, E::kF32}; break;
    case RKNN_INT8_MM_INT8_TO_INT32: *out = {E::kI8, E::kI8, E::kI32}; break;
    case RKNN_INT8_MM_INT8_TO_INT8: *out = {E::kI8, E::kI8, E::kI8}; break;
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16: *out = {E::kF16, E::kF16, E::kF16}; break;
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT32: *out = {E::kF16, E::kI8, E::kF32}; break;
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT16: *out = {E::kF16, E::kI8, E::kF16}; break;
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT32: *out = {E::kF16, E::kI4, E::kF32}; break;
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT16: *out = {E::kF16, E::kI4, E::kF16}; break;
    case RKNN_INT8_MM_INT8_TO_FLOAT32: *out = {E::kI8, E::kI8, E::kF32}; break;
    case RKNN_INT4_MM_INT4_TO_INT16: *out = {E::kI4, E::kI4, E::kI16}; break;
    case RKNN_INT8_MM_INT4_TO_INT32: *out = {E::kI8, E::kI4, E::kI32}; break;
    case RKNN_FLOAT16_MM_INT4_TO_BFLOAT16: *out = {E::kF16, E::kI4, E::kBF16}; break;
    case RKNN_INT8_MM_INT4_TO_FLOAT16: *out = {E::kI8, E::kI4, E::kF16}; break;
    default: return ORKNN_ERR(kInvalidParam, "matmul type %d is not an rknn_matmul_type value", type);
  }
  return Status::Ok();
}

std::string matmul_platform() {
  std::string p = "rk3588";
  if (const char* v = std::getenv("OPENRKNN_MATMUL_PLATFORM")) {
    if (*v) {
      p.clear();
      for (const char* c = v; *c; ++c) p += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    }
  }
  return p;
}

Status matmul_tiles(const std::string& platform, const rknn_matmul_info& info, MatmulTiles* out) {
  const PlatformMm* p = find_mm_platform(platform);
  if (!p)
    return ORKNN_ERR(kInvalidParam,
                     "platform '%s' (OPENRKNN_MATMUL_PLATFORM) has no matmul API (rk3588, rk3576, rk3566, rk3568, rk3562)",
                     platform.c_str());
  MatmulTypeInfo ti;
  ORKNN_RETURN_IF_ERROR(matmul_type_info(info.type, &ti));
  if ((ti.a == MmElem::kI4 || ti.b == MmElem::kI4) && !p->int4)
    return ORKNN_ERR(kInvalidParam, "matmul type %s needs int4 support, which %s does not have (rk3588/rk3576 only)",
                     get_matmul_type_string(info.type), platform.c_str());
  MatmulTiles t;
  t.a_subk = pick(ti.a, p->a_subk_i4, p->a_subk_i8, p->a_subk_f16);
  const int* bt = ti.b == MmElem::kI4 ? p->b_i4 : ti.b == MmElem::kI8 ? p->b_i8 : p->b_f16;
  t.b_subn = bt[0];
  t.b_subk = bt[1];
  t.c_sub = (platform == "rk3588" && info.type == RKNN_INT4_MM_INT4_TO_INT16) ? 8 : 4;
  t.k_segment = p->k_segment;
  t.k_align = std::max(pick(ti.a, p->k_align_i4, p->k_align_i8, p->k_align_f16),
                       pick(ti.b, p->k_align_i4, p->k_align_i8, p->k_align_f16));
  t.n_align = pick(ti.b, p->n_align_i4, p->n_align_i8, p->n_align_f16);
  *out = t;
  return Status::Ok();
}

Status matmul_describe(const std::string& platform, const rknn_matmul_info& info, int M, int K, int N,
                       rknn_matmul_io_attr* out) {
  MatmulTiles t;
  ORKNN_RETURN_IF_ERROR(matmul_tiles(platform, info, &t));
  MatmulTypeInfo ti;
  ORKNN_RETURN_IF_ERROR(matmul_type_info(info.type, &ti));
  const char* tn = get_matmul_type_string(info.type);
  if (info.B_layout < 0 || info.B_layout > RKNN_MM_LAYOUT_TP_NORM)
    return ORKNN_ERR(kInvalidParam, "B_layout %d is not an rknn_matmul_layout value", info.B_layout);
  if (info.AC_layout != RKNN_MM_LAYOUT_NORM && info.AC_layout != RKNN_MM_LAYOUT_NATIVE)
    return ORKNN_ERR(kInvalidParam, "AC_layout %d is invalid (NORM=0 or NATIVE=1; TP_NORM applies to B only)",
                     info.AC_layout);
  if (info.AC_quant_type != RKNN_QUANT_TYPE_PER_LAYER_SYM && info.AC_quant_type != RKNN_QUANT_TYPE_PER_LAYER_ASYM)
    return ORKNN_ERR(kInvalidParam, "AC_quant_type %d is invalid: A and C are quantised per layer only",
                     info.AC_quant_type);
  if (info.B_quant_type < 0 || info.B_quant_type > RKNN_QUANT_TYPE_PER_GROUP_ASYM)
    return ORKNN_ERR(kInvalidParam, "B_quant_type %d is not an rknn_matmul_quant_type value", info.B_quant_type);
  if (M <= 0 || K <= 0 || N <= 0) return ORKNN_ERR(kInvalidParam, "M=%d K=%d N=%d: every size must be > 0", M, K, N);
  if (K > kMaxK) return ORKNN_ERR(kInvalidParam, "K=%d exceeds the limit K <= %d", K, kMaxK);
  if (K % t.k_align != 0)
    return ORKNN_ERR(kInvalidParam, "K=%d must be a multiple of %d for %s on %s", K, t.k_align, tn, platform.c_str());
  if (N % t.n_align != 0)
    return ORKNN_ERR(kInvalidParam, "N=%d must be a multiple of %d for %s on %s", N, t.n_align, tn, platform.c_str());
  if (is_int(ti.b) && (info.B_quant_type == RKNN_QUANT_TYPE_PER_GROUP_SYM ||
                       info.B_quant_type == RKNN_QUANT_TYPE_PER_GROUP_ASYM)) {
    if (info.group_size <= 0 || info.group_size % 32 != 0 || K % info.group_size != 0)
      return ORKNN_ERR(kInvalidParam, "group_size %d is invalid for per-group B: it must be a positive multiple of 32 dividing K=%d",
                       info.group_size, K);
  }
  const bool native = info.AC_layout == RKNN_MM_LAYOUT_NATIVE;
  if (native) set_attr(&out->A, "A", {K / t.a_subk, M, t.a_subk}, ti.a);
  else set_attr(&out->A, "A", {M, K}, ti.a);
  if (info.B_layout == RKNN_MM_LAYOUT_NATIVE)
    set_attr(&out->B, "B", {N / t.b_subn, K / t.b_subk, t.b_subn, t.b_subk}, ti.b);
  else if (info.B_layout == RKNN_MM_LAYOUT_TP_NORM) set_attr(&out->B, "B", {N, K}, ti.b);
  else set_attr(&out->B, "B", {K, N}, ti.b);
  if (native) set_attr(&out->C, "C", {N / t.c_sub, M, t.c_sub}, ti.c);
  else set_attr(&out->C, "C", {M, N}, ti.c);
  return Status::Ok();
}

Status matmul_b_normal_to_native(const std::string& platform, const void* src, void* dst, int K, int N,
                                 const rknn_matmul_info& info) {
  if (!src || !dst) return ORKNN_ERR(kInvalidParam, "B_input or B_output is NULL");
  rknn_matmul_info native = info;
  native.B_layout = RKNN_MM_LAYOUT_NATIVE;
  rknn_matmul_io_attr attr;
  ORKNN_RETURN_IF_ERROR(matmul_describe(platform, native, 1, K, N, &attr));
  MatmulTiles t;
  ORKNN_RETURN_IF_ERROR(matmul_tiles(platform, native, &t));
  MatmulTypeInfo ti;
  ORKNN_RETURN_IF_ERROR(matmul_type_info(info.type, &ti));
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) {
      const size_t s = static_cast<size_t>(k) * N + n;
      const size_t d = b_index(RKNN_MM_LAYOUT_NATIVE, t, K, N, k, n);
      if (ti.b == MmElem::kI4) write_i4(static_cast<uint8_t*>(dst), d, read_i4(static_cast<const uint8_t*>(src), s));
      else if (ti.b == MmElem::kI8) static_cast<int8_t*>(dst)[d] = static_cast<const int8_t*>(src)[s];
      else static_cast<uint16_t*>(dst)[d] = static_cast<const uint16_t*>(src)[s];
    }
  return Status::Ok();
}

// ---- context ----------------------------------------------------------------------------------

Status MatmulContext::create(const rknn_matmul_info& info, const std::vector<rknn_matmul_shape>& shapes,
                             std::unique_ptr<MatmulContext>* out, std::vector<rknn_matmul_io_attr>* attrs) {
  if (shapes.empty()) return ORKNN_ERR(kInvalidParam, "no shape given");
  auto c = std::make_unique<MatmulContext>();
  c->info_ = info;
  c->platform_ = matmul_platform();
  ORKNN_RETURN_IF_ERROR(matmul_type_info(info.type, &c->types_));
  ORKNN_RETURN_IF_ERROR(matmul_tiles(c->platform_, info, &c->tiles_));
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto& s = shapes[i];
    if (s.K != shapes[0].K || s.N != shapes[0].N)
      return ORKNN_ERR(kInvalidParam, "shape %zu (M=%d K=%d N=%d): only M may differ between shapes (shape 0 has K=%d N=%d)",
                       i, s.M, s.K, s.N, shapes[0].K, shapes[0].N);
    rknn_matmul_io_attr a;
    Status st = matmul_describe(c->platform_, info, s.M, s.K, s.N, &a);
    if (!st.ok()) return Status(st.code(), strfmt("shape %zu: %s", i, st.message().c_str()));
    c->attrs_.push_back(a);
  }
  c->shapes_ = shapes;
  if (is_int(c->types_.b)) {  // defaults (scale 1, zp 0) with the length the B quant type indexes
    const size_t len = quant_len(info.B_quant_type, shapes[0].K, shapes[0].N, info.group_size);
    c->quant_[1].scale.assign(len, 1.0f);
    c->quant_[1].zp.assign(len, 0);
  }
  if (const char* v = std::getenv("OPENRKNN_NUM_THREADS")) c->threads_ = std::max(1, std::atoi(v));
  // OPENRKNN_MATMUL_REFERENCE=1, or OPENRKNN_REF_KERNELS=1 (the whole library on its reference
  // kernels, e.g. under ThreadSanitizer, which cannot see libgomp's synchronisation).
  c->reference_ = c->reference_ || env_flag("OPENRKNN_MATMUL_REFERENCE") || env_flag("OPENRKNN_REF_KERNELS");
  if (!c->reference_) ORKNN_RETURN_IF_ERROR(c->init_fast());
  *attrs = c->attrs_;
  *out = std::move(c);
  return Status::Ok();
}

Status MatmulContext::set_io_mem(rknn_tensor_mem* mem, const rknn_matmul_tensor_attr* attr) {
  const int op = operand_of(attr->name);
  if (op < 0) return ORKNN_ERR(kInvalidParam, "attr name '%.32s' is not A, B or C", attr->name);
  const uint64_t serial = tensor_mem_serial(mem);
  if (!serial) return ORKNN_ERR(kInvalidParam, "mem %p for %s was not created by rknn_create_mem* or was destroyed",
                                static_cast<void*>(mem), attr->name);
  if (mem->size < attr->size)
    return ORKNN_ERR(kInvalidParam, "mem for %s has %u bytes, the operand needs %u", attr->name, mem->size, attr->size);
  bind_[op].mem = mem;
  bind_[op].serial = serial;
  return Status::Ok();
}

Status MatmulContext::set_core_mask(int mask) {
  const PlatformInfo* p = find_platform(platform_);
  const int cores = p ? p->npu_cores : 1;
  if (cores <= 1) return ORKNN_ERR(kFail, "%s has a single NPU core: core masks are not supported", platform_.c_str());
  const int all = (1 << cores) - 1;
  int threads;
  if (mask == RKNN_NPU_CORE_AUTO) threads = 1;
  else if (mask == RKNN_NPU_CORE_ALL) threads = cores;
  else if (mask > 0 && (mask & ~all) == 0) threads = __builtin_popcount(static_cast<unsigned>(mask));
  else return ORKNN_ERR(kInvalidParam, "core_mask 0x%x is not valid on %s (%d cores)", mask, platform_.c_str(), cores);
  threads_ = threads;
  return Status::Ok();
}

Status MatmulContext::set_quant_params(const rknn_quant_params* p) {
  const int op = operand_of(p->name);
  if (op < 0) return ORKNN_ERR(kInvalidParam, "quant params name '%.32s' is not A, B or C", p->name);
  const MmElem e = op == 0 ? types_.a : op == 1 ? types_.b : types_.c;
  if (!(is_int(e) || e == MmElem::kI16))
    return ORKNN_ERR(kInvalidParam, "%s is %s in %s: it takes no quantisation parameters", p->name, elem_name(e),
                     get_matmul_type_string(info_.type));
  const int qtype = op == 1 ? info_.B_quant_type : info_.AC_quant_type;
  const int want = op == 1 ? quant_len(qtype, shapes_[0].K, shapes_[0].N, info_.group_size) : 1;
  if (p->scale_len != want || !p->scale)
    return ORKNN_ERR(kInvalidParam, "%s: scale_len is %d, expected %d for quant type %d", p->name, p->scale_len, want, qtype);
  if (p->zp_len != 0 && (p->zp_len != want || !p->zp))
    return ORKNN_ERR(kInvalidParam, "%s: zp_len is %d, expected %d (or 0)", p->name, p->zp_len, want);
  Quant q;
  q.scale.assign(p->scale, p->scale + want);
  q.zp.assign(want, 0);
  if (p->zp_len) q.zp.assign(p->zp, p->zp + want);
  const int lo = e == MmElem::kI4 ? -8 : e == MmElem::kI8 ? -128 : -32768;
  const int hi = -lo - 1;
  for (int i = 0; i < want; ++i) {
    if (!(q.scale[i] > 0.0f) || !std::isfinite(q.scale[i]))
      return ORKNN_ERR(kInvalidParam, "%s: scale[%d]=%g must be finite and > 0", p->name, i, q.scale[i]);
    if (q.zp[i] < lo || q.zp[i] > hi)
      return ORKNN_ERR(kInvalidParam, "%s: zp[%d]=%d is outside the %s range", p->name, i, q.zp[i], elem_name(e));
    if (quant_sym(qtype) && q.zp[i] != 0)
      return ORKNN_ERR(kInvalidParam, "%s: zp[%d]=%d but the quant type %d is symmetric", p->name, i, q.zp[i], qtype);
  }
  quant_[op] = std::move(q);
  return Status::Ok();
}

Status MatmulContext::get_quant_params(rknn_quant_params* p, float* scale) {
  const int op = operand_of(p->name);
  if (op < 0) return ORKNN_ERR(kInvalidParam, "quant params name '%.32s' is not A, B or C", p->name);
  Quant& q = quant_[op];
  p->scale = q.scale.data();
  p->scale_len = static_cast<int32_t>(q.scale.size());
  p->zp = q.zp.data();
  p->zp_len = static_cast<int32_t>(q.zp.size());
  if (scale) {
    if (op == 1) {
      const bool per_layer = q.scale.size() == 1;
      *scale = per_layer ? quant_[0].scale[0] * q.scale[0] : quant_[0].scale[0];
    } else {
      *scale = q.scale[0];
    }
  }
  return Status::Ok();
}

Status MatmulContext::set_dynamic_shape(const rknn_matmul_shape* s) {
  for (size_t i = 0; i < shapes_.size(); ++i)
    if (shapes_[i].M == s->M && shapes_[i].K == s->K && shapes_[i].N == s->N) {
      current_ = i;
      return Status::Ok();
    }
  return ORKNN_ERR(kInvalidParam, "shape M=%d K=%d N=%d is not one of the %zu shapes given at creation", s->M, s->K,
                   s->N, shapes_.size());
}

Status MatmulContext::run() {
  const rknn_matmul_io_attr& attr = attrs_[current_];
  const rknn_matmul_tensor_attr* ops[3] = {&attr.A, &attr.B, &attr.C};
  void* data[3];
  for (int i = 0; i < 3; ++i) {
    const Binding& b = bind_[i];
    if (!b.mem) return ORKNN_ERR(kInvalidParam, "no memory bound to %s (call rknn_matmul_set_io_mem)", ops[i]->name);
    if (tensor_mem_serial(b.mem) != b.serial)
      return ORKNN_ERR(kInvalidParam, "the memory bound to %s was destroyed", ops[i]->name);
    if (b.mem->size < ops[i]->size)
      return ORKNN_ERR(kInvalidParam, "the memory bound to %s has %u bytes, shape M=%d needs %u", ops[i]->name,
                       b.mem->size, shapes_[current_].M, ops[i]->size);
    data[i] = static_cast<char*>(b.mem->virt_addr) + b.mem->offset;
  }
  if (!reference_) {
    bool handled = false;
    ORKNN_RETURN_IF_ERROR(run_fast(data, &handled));
    if (handled) return Status::Ok();
  }
  return run_reference(data);
}

Status MatmulContext::run_reference(void* const data[3]) {
  const int M = shapes_[current_].M, K = shapes_[current_].K, N = shapes_[current_].N;
  const MatmulTiles& t = tiles_;
  const int acl = info_.AC_layout, bl = info_.B_layout;
  const bool int_a = is_int(types_.a), int_b = is_int(types_.b);
  const int qtype = info_.B_quant_type;
  const int gs = (int_b && is_per_group(qtype)) ? info_.group_size : K;
  const int groups = K / gs;
  const bool per_ch = qtype != RKNN_QUANT_TYPE_PER_LAYER_SYM && qtype != RKNN_QUANT_TYPE_PER_LAYER_ASYM;
  auto bq = [&](int n, int g) -> int { return !int_b || !per_ch ? 0 : (gs == K ? n : n * groups + g); };
  const float sa = quant_[0].scale[0];
  const int zpa = quant_[0].zp[0];
  const float sc = quant_[2].scale[0];
  const int zpc = quant_[2].zp[0];

  // Decode A and B (B transposed to [N][K]) into contiguous working copies: int16 with the zero point
  // removed for integer operands, fp32 for fp16 (and for integer B under an fp16 A, dequantised).
  std::vector<int16_t> ai;
  std::vector<float> af;
  if (int_a) {
    ai.resize(static_cast<size_t>(M) * K);
    for (int m = 0; m < M; ++m)
      for (int k = 0; k < K; ++k)
        ai[static_cast<size_t>(m) * K + k] = static_cast<int16_t>(read_int(types_.a, data[0], a_index(acl, t, M, K, m, k)) - zpa);
  } else {
    af.resize(static_cast<size_t>(M) * K);
    for (int m = 0; m < M; ++m)
      for (int k = 0; k < K; ++k) af[static_cast<size_t>(m) * K + k] = read_f16(data[0], a_index(acl, t, M, K, m, k));
  }
  const bool float_b = !int_a;  // an fp16 A multiplies a float (possibly dequantised) B
  const bool byte_b = types_.b == MmElem::kI8;
  const size_t es = byte_b ? 1 : 2;  // element size of int8/fp16 B (int4 takes the generic path)

  // Copies raw B elements of columns [c0, c1) into rows raw[(n - c0) * K + k]: contiguous runs for
  // TP_NORM and NATIVE (subK values per run), a cache-blocked transpose for NORM.
  const size_t kp = static_cast<size_t>(K) + 32;  // raw row stride: breaks power-of-two cache aliasing
  auto gather_raw = [&](int c0, int c1, uint8_t* raw) {
    const uint8_t* src = static_cast<const uint8_t*>(data[1]);
    if (bl == RKNN_MM_LAYOUT_TP_NORM) {
      for (int n = c0; n < c1; ++n) std::memcpy(raw + static_cast<size_t>(n - c0) * kp * es, src + static_cast<size_t>(n) * K * es, K * es);
    } else if (bl == RKNN_MM_LAYOUT_NATIVE) {
      for (int n = c0; n < c1; ++n)
        for (int k = 0; k < K; k += t.b_subk)
          std::memcpy(raw + (static_cast<size_t>(n - c0) * kp + k) * es, src + b_index(bl, t, K, N, k, n) * es, t.b_subk * es);
    } else if (byte_b) {
      for (int k = 0; k < K; ++k) {
        const uint8_t* row = src + static_cast<size_t>(k) * N;
        for (int n = c0; n < c1; ++n) raw[static_cast<size_t>(n - c0) * kp + k] = row[n];
      }
    } else {
      uint16_t* r16 = reinterpret_cast<uint16_t*>(raw);
      for (int k = 0; k < K; ++k) {
        const uint16_t* row = reinterpret_cast<const uint16_t*>(src) + static_cast<size_t>(k) * N;
        for (int n = c0; n < c1; ++n) r16[static_cast<size_t>(n - c0) * kp + k] = row[n];
      }
    }
  };
  // Decodes columns [c0, c1) of B into rows of bi (int16, zero point removed) or bf (fp32; integer B
  // dequantised with its scale).
  auto decode_b = [&](int c0, int c1, std::vector<uint8_t>& raw, std::vector<int16_t>& bi, std::vector<float>& bf) {
    const size_t rows = static_cast<size_t>(c1 - c0) * K;
    if (float_b) bf.resize(rows);
    else bi.resize(rows);
    if (types_.b == MmElem::kI4) {
      for (int n = c0; n < c1; ++n)
        for (int k = 0; k < K; ++k) {
          const size_t dst = static_cast<size_t>(n - c0) * K + k;
          const int qi = bq(n, k / gs);
          const int v = read_int(MmElem::kI4, data[1], b_index(bl, t, K, N, k, n)) - quant_[1].zp[qi];
          if (float_b) bf[dst] = quant_[1].scale[qi] * static_cast<float>(v);
          else bi[dst] = static_cast<int16_t>(v);
        }
      return;
    }
    raw.resize(static_cast<size_t>(c1 - c0) * kp * es);
    gather_raw(c0, c1, raw.data());
    for (int n = c0; n < c1; ++n) {
      const size_t row = static_cast<size_t>(n - c0) * K;
      if (!byte_b) {
        fp16_to_fp32(reinterpret_cast<const uint16_t*>(raw.data()) + static_cast<size_t>(n - c0) * kp, &bf[row], K);
        continue;
      }
      const int8_t* r8 = reinterpret_cast<const int8_t*>(raw.data()) + static_cast<size_t>(n - c0) * kp;
      for (int g = 0; g < groups; ++g) {
        const int qi = bq(n, g);
        const int zp = quant_[1].zp[qi];
        const float sb = quant_[1].scale[qi];
        const int k0 = g * gs;
        if (float_b)
          for (int k = k0; k < k0 + gs; ++k) bf[row + k] = sb * static_cast<float>(r8[k] - zp);
        else
          for (int k = k0; k < k0 + gs; ++k) bi[row + k] = static_cast<int16_t>(r8[k] - zp);
      }
    }
  };

  const CStore cs{types_.c, acl, &t, M, N, sc, zpc, data[2]};
  auto store = [&](int m, int n, float real, int32_t exact) { store_c(cs, m, n, real, exact); };

  // Columns are processed in chunks small enough that the decoded B rows stay in cache while every
  // row of A passes over them.
  auto compute = [&](int n0, int n1) {
    std::vector<uint8_t> raw;
    std::vector<int16_t> bi;
    std::vector<float> bf;
    const int chunk = float_b ? 32 : 64;
    for (int c0 = n0; c0 < n1; c0 += chunk) {
      const int c1 = std::min(n1, c0 + chunk);
      decode_b(c0, c1, raw, bi, bf);
      for (int n = c0; n < c1; ++n)
        for (int m = 0; m < M; ++m) {
          if (float_b) {
            const float* a = &af[static_cast<size_t>(m) * K];
            const float* b = &bf[static_cast<size_t>(n - c0) * K];
            float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int k = 0; k < K; k += 8)
              for (int j = 0; j < 8; ++j) lane[j] += a[k + j] * b[k + j];
            const float acc = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
            store(m, n, acc, 0);
          } else {
            const int16_t* a = &ai[static_cast<size_t>(m) * K];
            const int16_t* b = &bi[static_cast<size_t>(n - c0) * K];
            int32_t total = 0;
            float real = 0.0f;
            for (int g = 0; g < groups; ++g) {
              int32_t part = 0;
              const int k0 = g * gs;
              for (int k = k0; k < k0 + gs; ++k) part += static_cast<int32_t>(a[k]) * b[k];
              total += part;
              real += static_cast<float>(part) * quant_[1].scale[bq(n, g)];
            }
            store(m, n, sa * real, total);
          }
        }
    }
  };

  // K is a multiple of 8 on every platform (alignment >= 16), which the float lanes rely on.
  const int nthreads = std::max(1, std::min(threads_, N / 8));
  if (nthreads == 1) {
    compute(0, N);
  } else {
    // An exception must not escape a worker thread (std::terminate): record it and fail the run.
    std::atomic<bool> failed{false};
    auto worker = [&](int n0, int n1) {
      try {
        compute(n0, n1);
      } catch (...) {
        failed = true;
      }
    };
    std::vector<std::thread> pool;
    const int step = (N / nthreads + 7) / 8 * 8;
    for (int i = 0; i < nthreads; ++i) {
      const int n0 = i * step, n1 = std::min(N, n0 + step);
      if (n0 < n1) pool.emplace_back(worker, n0, n1);
    }
    for (auto& th : pool) th.join();
    if (failed) return ORKNN_ERR(kNoMemory, "out of memory in a matmul worker thread");
  }
  return Status::Ok();
}

// ---- oneDNN fast path ---------------------------------------------------------------------------
//
// Integer A (types 2, 3, 9, 10, 11, 15): A enters oneDNN as u8 (a + 128, plus one extra row of
// ones whose products are the column sums of B), B as s8 (int8 NORM/TP_NORM straight from the
// user's memory, otherwise decoded/relaid into a context buffer), and the primitive writes the
// raw int32 sums S = sum_k (a + 128) * b. With zU = zA + 128:
//   sum_k (a - zA)(b - zB) = S - zB * rowsum_u8(A)[m] - zU * colsum(B)[n] + K * zU * zB,
// evaluated in int64. |S| <= K * 255 * 128 and the true sum <= K * 255 * 255 (< 2^31 for
// K <= 10240), so nothing overflows and the result is the reference kernel's exact int32 sum; the
// epilogue (store_c) is the reference's. Why u8 and not s8 sources: with an s8 source oneDNN 2.6
// applies its +128 compensation in float32 (inexact above 2^24), see kernels/onednn/int8_common.h;
// only implementations that keep the int32 accumulators exact are accepted (select_exact_int8_impl).
//
// fp16 A (types 1, 4-8, 12): A decoded to fp32 (exact), B decoded (fp16, exact) or dequantised
// (sB * (b - zB) in fp32, as the reference) to fp32, then an f32 oneDNN matmul. Differs from the
// reference only in the fp32 summation order.
//
// Per-group B with an integer A: the same primitive runs once per group on dense K slices of A and
// B (group-major buffers; NORM B's row blocks in place), each partial sum corrected with the
// slice's row/column sums, and the epilogue accumulates
// total += part_g and real += float(part_g) * sB_g in group order, as the reference does.
// Nothing is cached across runs except primitives and buffers: B may change at any time.

#if ORKNN_WITH_ONEDNN
struct MatmulContext::Fast {
  bool int_a = false;
  bool b_in_place = false;  // int8 NORM/TP_NORM B: oneDNN reads the user's memory
  bool b_rows_k = true;     // B as seen by oneDNN is [K][N] (NORM) or [groups][N][gs] (TP_NORM, NATIVE)
  int m_max = 0, K = 0, N = 0;
  int gs = 0, groups = 1;        // int A: K slices of gs rows (per-group B), one primitive run each
  std::vector<uint8_t> a_u8;     // int A: [groups][M + 1][gs], a + 128; row M of each group is ones
  std::vector<int32_t> rowsum;   // int A: [groups][M] sums of (a + 128) over each K slice
  std::vector<int32_t> total;    // int A, groups > 1: [m_max][N] running int32 sum over groups
  std::vector<float> real;       // int A, groups > 1: [m_max][N] running sum_g float(part_g) * sB_g
  std::vector<float> a_f32;      // fp16 A: [m_max][K]
  std::vector<int8_t> b_s8;      // int A, B not in place: int4 decoded / NATIVE relaid out
  std::vector<float> b_f32;      // fp16 A: B decoded / dequantised
  std::vector<int32_t> acc_s32;  // [m_max + 1][N]; row M holds colsum(B)
  std::vector<float> acc_f32;    // [m_max][N]
  struct Prim {
    int threads = 0;      // thread count it was built for; 0: not built yet
    bool usable = false;  // false: oneDNN has no suitable implementation (the reference runs)
    dnnl::primitive prim;
    dnnl::memory src, wei, dst;
    std::vector<dnnl_exec_arg_t> args;  // prebuilt: execution allocates nothing on our side
    int scratch_arg = -1;
    std::string impl;
  };
  std::vector<Prim> prims;  // one per shape (dynamic M)
  dnnl::memory scratch;     // user scratchpad shared by the primitives (one run at a time)
  size_t scratch_bytes = 0;
  dnnl::stream stream;
};
#else
struct MatmulContext::Fast {};
#endif

MatmulContext::MatmulContext() = default;
MatmulContext::~MatmulContext() = default;

Status MatmulContext::init_fast() {
#if ORKNN_WITH_ONEDNN
  const bool int_a = is_int(types_.a);
  auto f = std::make_unique<Fast>();
  f->int_a = int_a;
  f->K = shapes_[0].K;
  f->N = shapes_[0].N;
  f->gs = int_a && is_per_group(info_.B_quant_type) ? info_.group_size : f->K;
  f->groups = f->K / f->gs;
  for (const auto& s : shapes_) f->m_max = std::max(f->m_max, s.M);
  f->b_rows_k = info_.B_layout == RKNN_MM_LAYOUT_NORM;
  const size_t K = f->K, N = f->N, mm = f->m_max;
  if (int_a) {
    f->b_in_place = types_.b == MmElem::kI8 && info_.B_layout != RKNN_MM_LAYOUT_NATIVE &&
                    (f->b_rows_k || f->groups == 1);
    f->a_u8.resize((mm + 1) * K);
    f->rowsum.resize(mm * f->groups);
    f->acc_s32.resize((mm + 1) * N);
    if (f->groups > 1) {
      f->total.resize(mm * N);
      f->real.resize(mm * N);
    }
    if (!f->b_in_place) f->b_s8.resize(K * N);
  } else {
    f->a_f32.resize(mm * K);
    f->b_f32.resize(K * N);
    f->acc_f32.resize(mm * N);
  }
  f->prims.resize(shapes_.size());
  try {
    f->stream = dnnl::stream(onednn::cpu_engine());
  } catch (const dnnl::error& e) {
    return ORKNN_ERR(kFail, "oneDNN stream creation failed: %s", e.what());
  }
  fast_ = std::move(f);
#endif
  return Status::Ok();
}

#if ORKNN_WITH_ONEDNN
namespace {

// Builds (or rebuilds for another thread count) the primitive of an M-row shape. A configuration
// oneDNN cannot serve exactly/fast leaves p.usable false.
void build_fast_prim(MatmulContext::Fast& f, MatmulContext::Fast::Prim& p, int M, int threads) {
  using dnnl::memory;
  using dt = memory::data_type;
  p = MatmulContext::Fast::Prim{};
  p.threads = threads;
  // K slice of gs rows (all of K unless per-group B with an integer A): A's slices are dense
  // (group-major buffer), and so are B's ([K][N] row blocks or [groups][N][gs]).
  const memory::dim N = f.N, rows = f.int_a ? M + 1 : M, ks = f.int_a ? f.gs : f.K;
  try {
    onednn::ScopedOmpThreads omp(threads);
    const memory::desc src({rows, ks}, f.int_a ? dt::u8 : dt::f32, memory::format_tag::ab);
    const memory::desc wei({ks, N}, f.int_a ? dt::s8 : dt::f32, f.b_rows_k ? memory::dims{N, 1} : memory::dims{1, ks});
    const memory::desc dst({rows, N}, f.int_a ? dt::s32 : dt::f32, memory::format_tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), onednn::user_scratchpad_attr(),
                                    onednn::cpu_engine());
    const bool ok = f.int_a ? onednn::select_exact_int8_impl(pd, ks * 255 * 128) : !onednn::is_reference_impl(pd);
    if (!ok) {
      ORKNN_LOGD("matmul M=%d K=%d N=%d: no suitable oneDNN implementation (%s); scalar kernel", M, f.K, f.N,
                 pd.impl_info_str());
      return;
    }
    p.impl = pd.impl_info_str();
    p.prim = dnnl::matmul(pd);
    const dnnl::engine& eng = onednn::cpu_engine();
    void* a = f.int_a ? static_cast<void*>(f.a_u8.data()) : static_cast<void*>(f.a_f32.data());
    void* b = f.int_a ? (f.b_in_place ? nullptr : static_cast<void*>(f.b_s8.data())) : static_cast<void*>(f.b_f32.data());
    void* c = f.int_a ? static_cast<void*>(f.acc_s32.data()) : static_cast<void*>(f.acc_f32.data());
    p.src = memory(src, eng, a);
    p.wei = memory(wei, eng, b);
    p.dst = memory(dst, eng, c);
    p.args = {{DNNL_ARG_SRC, p.src.get()}, {DNNL_ARG_WEIGHTS, p.wei.get()}, {DNNL_ARG_DST, p.dst.get()}};
    const size_t need = pd.scratchpad_desc().get_size();
    if (need > 0) {
      if (need > f.scratch_bytes) {
        f.scratch = memory(memory::desc({static_cast<memory::dim>(need)}, dt::u8, memory::format_tag::a), eng);
        f.scratch_bytes = need;
        for (auto& q : f.prims)
          if (q.scratch_arg >= 0) q.args[q.scratch_arg].memory = f.scratch.get();
      }
      p.scratch_arg = static_cast<int>(p.args.size());
      p.args.push_back({DNNL_ARG_SCRATCHPAD, f.scratch.get()});
    }
    p.usable = true;
    ORKNN_LOGD("matmul M=%d K=%d N=%d, %d thread(s): oneDNN %s, scratchpad %zu bytes", M, f.K, f.N, threads,
               p.impl.c_str(), need);
  } catch (const dnnl::error& e) {
    ORKNN_LOGD("matmul M=%d K=%d N=%d: oneDNN refused (%s); scalar kernel", M, f.K, f.N, e.what());
    p.usable = false;
  }
}

// count int4 values starting at the even element index `first` -> int8.
void decode_i4_run(const uint8_t* src, size_t first, size_t count, int8_t* dst) {
  const uint8_t* p = src + first / 2;
  for (size_t j = 0; j + 1 < count; j += 2) {
    const uint8_t byte = p[j / 2];
    dst[j] = static_cast<int8_t>(static_cast<int8_t>(byte << 4) >> 4);
    dst[j + 1] = static_cast<int8_t>(static_cast<int8_t>(byte) >> 4);
  }
  if (count & 1) dst[count - 1] = static_cast<int8_t>(static_cast<int8_t>(p[(count - 1) / 2] << 4) >> 4);
}

}  // namespace
#endif

Status MatmulContext::run_fast(void* const data[3], bool* handled) {
  *handled = false;
#if ORKNN_WITH_ONEDNN
  if (!fast_) return Status::Ok();
  Fast& f = *fast_;
  Fast::Prim& p = f.prims[current_];
  const int M = shapes_[current_].M, K = f.K, N = f.N;
  if (p.threads != threads_) build_fast_prim(f, p, M, threads_);
  if (!p.usable) return Status::Ok();
  *handled = true;
  const int nt = threads_;
  onednn::ScopedOmpThreads omp(nt);
  const MatmulTiles& t = tiles_;
  const int acl = info_.AC_layout, bl = info_.B_layout;
  const MmElem ea = types_.a, eb = types_.b;

  // ---- A ----
  if (f.int_a) {
    for (int m = 0; m < M; ++m) {
      // Group-major (dense K slices for oneDNN): element (m, k) of group g = k / gs at
      // [(g * (M + 1) + m) * gs + k % gs]; the same as [M + 1][K] when there is one group.
      for (int g = 0; g < f.groups; ++g) {
        uint8_t* row = &f.a_u8[(static_cast<size_t>(g) * (M + 1) + m) * f.gs];
        const int k0 = g * f.gs;
        if (ea == MmElem::kI8 && acl == RKNN_MM_LAYOUT_NORM) {
          const int8_t* src = static_cast<const int8_t*>(data[0]) + static_cast<size_t>(m) * K + k0;
          for (int k = 0; k < f.gs; ++k) row[k] = static_cast<uint8_t>(src[k] + 128);
        } else {
          for (int k = 0; k < f.gs; ++k)
            row[k] = static_cast<uint8_t>(read_int(ea, data[0], a_index(acl, t, M, K, m, k0 + k)) + 128);
        }
        int32_t sum = 0;
        for (int k = 0; k < f.gs; ++k) sum += row[k];
        f.rowsum[static_cast<size_t>(g) * M + m] = sum;
      }
    }
    for (int g = 0; g < f.groups; ++g)  // ones rows -> column sums of B
      std::memset(&f.a_u8[(static_cast<size_t>(g) * (M + 1) + M) * f.gs], 1, f.gs);
  } else {
    const uint16_t* a16 = static_cast<const uint16_t*>(data[0]);
    for (int m = 0; m < M; ++m) {
      float* row = &f.a_f32[static_cast<size_t>(m) * K];
      if (acl == RKNN_MM_LAYOUT_NORM) fp16_to_fp32(a16 + static_cast<size_t>(m) * K, row, K);
      else
        for (int k = 0; k < K; k += t.a_subk) fp16_to_fp32(a16 + a_index(acl, t, M, K, m, k), row + k, t.a_subk);
    }
  }

  // ---- B ----
  // Rows of the converted B: k for NORM ([K][N]), n otherwise ([groups][N][gs], i.e. [N][K] with
  // one group). Each row is a list of contiguous runs in the user's layout: one run for NORM, gs
  // long for TP_NORM, subK long for NATIVE (subK divides gs).
  const int nrows = f.b_rows_k ? K : N, rowlen = f.b_rows_k ? N : K;
  const int run_len = bl == RKNN_MM_LAYOUT_NATIVE ? t.b_subk : f.b_rows_k ? rowlen : f.gs;
  auto run_dst = [&](int r, int j) -> size_t {
    if (f.b_rows_k) return static_cast<size_t>(r) * rowlen + j;
    return (static_cast<size_t>(j / f.gs) * N + r) * f.gs + j % f.gs;
  };
  auto run_src = [&](int r, int j) -> size_t {  // linear source index of row r, element j (run start)
    if (bl == RKNN_MM_LAYOUT_NATIVE) return b_index(bl, t, K, N, j, r);
    return static_cast<size_t>(r) * rowlen + j;
  };
  if (f.int_a) {
    if (!f.b_in_place) {
      const uint8_t* src = static_cast<const uint8_t*>(data[1]);
#pragma omp parallel for num_threads(nt) schedule(static)
      for (int r = 0; r < nrows; ++r)
        for (int j = 0; j < rowlen; j += run_len) {
          int8_t* dst = &f.b_s8[run_dst(r, j)];
          const size_t si = run_src(r, j);
          if (eb == MmElem::kI4) decode_i4_run(src, si, run_len, dst);
          else std::memcpy(dst, src + si, run_len);
        }
    }
  } else {
    const int qtype = info_.B_quant_type;
    const bool per_ch = qtype != RKNN_QUANT_TYPE_PER_LAYER_SYM && qtype != RKNN_QUANT_TYPE_PER_LAYER_ASYM;
    const int gs = is_per_group(qtype) ? info_.group_size : K;
    const int groups = K / gs;
    const float* bs = quant_[1].scale.data();
    const int32_t* bz = quant_[1].zp.data();
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int r = 0; r < nrows; ++r)
      for (int j = 0; j < rowlen; j += run_len) {
        float* dst = &f.b_f32[run_dst(r, j)];
        const size_t si = run_src(r, j);
        if (eb == MmElem::kF16) {
          fp16_to_fp32(static_cast<const uint16_t*>(data[1]) + si, dst, run_len);
          continue;
        }
        for (int e = 0; e < run_len; ++e) {
          const int k = f.b_rows_k ? r : j + e, n = f.b_rows_k ? j + e : r;
          const int qi = !per_ch ? 0 : (gs == K ? n : n * groups + k / gs);
          const int v = read_int(eb, data[1], si + e) - bz[qi];
          dst[e] = bs[qi] * static_cast<float>(v);
        }
      }
  }

  auto execute = [&]() -> Status {
    const dnnl_status_t st =
        dnnl_primitive_execute(p.prim.get(), f.stream.get(), static_cast<int>(p.args.size()), p.args.data());
    if (st != dnnl_success) return ORKNN_ERR(kFail, "oneDNN matmul execution failed (status %d)", static_cast<int>(st));
    dnnl_stream_wait(f.stream.get());
    return Status::Ok();
  };

  // ---- oneDNN + epilogue ----
  const CStore cs{types_.c, acl, &t, M, N, quant_[2].scale[0], quant_[2].zp[0], data[2]};
  if (f.int_a) {
    const int32_t* acc = f.acc_s32.data();
    const int32_t* colsum = acc + static_cast<size_t>(M) * N;
    const int qtype = info_.B_quant_type;
    const bool per_ch = qtype != RKNN_QUANT_TYPE_PER_LAYER_SYM && qtype != RKNN_QUANT_TYPE_PER_LAYER_ASYM;
    const int G = f.groups, gs = f.gs;
    const int64_t zu = static_cast<int64_t>(quant_[0].zp[0]) + 128;
    const float sa = quant_[0].scale[0];
    const bool exact_only = types_.c == MmElem::kI32;
    const float* bs = quant_[1].scale.data();
    const int32_t* bz = quant_[1].zp.data();
    int8_t* b_base = f.b_in_place ? static_cast<int8_t*>(data[1]) : f.b_s8.data();
    for (int g = 0; g < G; ++g) {
      // K slice g: A columns [g*gs, (g+1)*gs), B rows of the same range.
      p.src.set_data_handle(f.a_u8.data() + static_cast<size_t>(g) * (M + 1) * gs);
      p.wei.set_data_handle(b_base + static_cast<size_t>(g) * gs * N);  // [K][N] and [groups][N][gs] alike
      ORKNN_RETURN_IF_ERROR(execute());
      const int32_t* rs = &f.rowsum[static_cast<size_t>(g) * M];
      // part = sum over the slice of (a - zA)(b - zB), exact (see the comment at the top).
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1 && M > 1)
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          const int qi = !per_ch ? 0 : (G == 1 ? n : n * G + g);
          const int64_t zb = bz[qi];
          const size_t i = static_cast<size_t>(m) * N + n;
          const int32_t part = static_cast<int32_t>(static_cast<int64_t>(acc[i]) - zb * rs[m] - zu * colsum[n] +
                                                    static_cast<int64_t>(gs) * zu * zb);
          if (G == 1) {
            float real = 0.0f;  // the reference's expression, operation for operation
            if (!exact_only) real += static_cast<float>(part) * bs[qi];
            store_c(cs, m, n, sa * real, part);
            continue;
          }
          if (g == 0) {
            f.total[i] = 0;
            f.real[i] = 0.0f;
          }
          f.total[i] += part;
          if (!exact_only) f.real[i] += static_cast<float>(part) * bs[qi];
          if (g == G - 1) store_c(cs, m, n, sa * f.real[i], f.total[i]);
        }
    }
  } else {
    ORKNN_RETURN_IF_ERROR(execute());
    const float* acc = f.acc_f32.data();
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1 && M > 1)
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) store_c(cs, m, n, acc[static_cast<size_t>(m) * N + n], 0);
  }
#else
  (void)data;
#endif
  return Status::Ok();
}

}  // namespace orknn
