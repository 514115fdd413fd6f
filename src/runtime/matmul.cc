// The matmul API's contract (runtime/matmul.h): types, per-platform tiles, operand attributes,
// bindings and quantisation parameters; the computation is the engines' (kernels/matmul_engine.h).
#include "runtime/matmul.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "common/threads.h"
#include "runtime/platform.h"
#include "runtime/tensor_mem.h"

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

int pick(MmElem e, int i4, int i8, int f16) { return e == MmElem::kI4 ? i4 : e == MmElem::kI8 ? i8 : f16; }

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
  const PlatformInfo* pi = find_platform(platform);
  if (!pi || !pi->matmul.supported)
    return ORKNN_ERR(kInvalidParam, "platform '%s' (OPENRKNN_MATMUL_PLATFORM) has no matmul API (%s)", platform.c_str(),
                     matmul_platform_names().c_str());
  const MatmulPlatform* p = &pi->matmul;
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
  // K and N may differ between shapes (the vendor's dynamic-shape demo changes them with a
  // transposed B), unless B has a scale per channel or per group: its parameters are per shape then.
  const bool per_layer_b = !is_int(c->types_.b) || is_per_layer(info.B_quant_type);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto& s = shapes[i];
    if (!per_layer_b && (s.K != shapes[0].K || s.N != shapes[0].N))
      return ORKNN_ERR(kInvalidParam, "shape %zu (M=%d K=%d N=%d): with B quantised per channel or per group, only M "
                       "may differ between shapes (shape 0 has K=%d N=%d)", i, s.M, s.K, s.N, shapes[0].K, shapes[0].N);
    rknn_matmul_io_attr a;
    Status st = matmul_describe(c->platform_, info, s.M, s.K, s.N, &a);
    if (!st.ok()) return Status(st.code(), strfmt("shape %zu: %s", i, st.message().c_str()));
    c->attrs_.push_back(a);
  }
  c->shapes_ = shapes;
  if (is_int(c->types_.b)) {  // defaults (scale 1, zp 0) with the length the B quant type indexes
    const size_t len = static_cast<size_t>(quant_len(info.B_quant_type, shapes[0].K, shapes[0].N, info.group_size));
    c->quant_[1].scale.assign(len, 1.0f);
    c->quant_[1].zp.assign(len, 0);
  }
  if (const char* v = std::getenv("OPENRKNN_NUM_THREADS")) c->threads_ = std::max(1, std::atoi(v));
  MatmulProblem problem;
  problem.info = info;
  problem.types = c->types_;
  problem.tiles = c->tiles_;
  problem.shapes = shapes;
  c->engines_ = create_matmul_engines(problem);
  if (c->engines_.empty()) return ORKNN_ERR(kFail, "no matmul engine is registered");
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
  if (mask != RKNN_NPU_CORE_AUTO && mask != RKNN_NPU_CORE_ALL && (mask <= 0 || (mask & ~all) != 0))
    return ORKNN_ERR(kInvalidParam, "core_mask 0x%x is not valid on %s (%d cores)", mask, platform_.c_str(), cores);
  if (!std::getenv("OPENRKNN_NUM_THREADS")) threads_ = core_mask_threads(*p, static_cast<uint32_t>(mask));
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
  MatmulQuant q;
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
  MatmulQuant& q = quant_[op];
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
  const RunThreads threads(threads_);  // one while the CPUs are taken (common/threads.h)
  for (const std::unique_ptr<MatmulEngine>& e : engines_) {
    bool handled = false;
    ORKNN_RETURN_IF_ERROR(e->run(current_, data, quant_, threads.threads(), &handled));
    if (handled) return Status::Ok();
  }
  return ORKNN_ERR(kFail, "no matmul engine serves %s (M=%d K=%d N=%d)", get_matmul_type_string(info_.type),
                   shapes_[current_].M, shapes_[current_].K, shapes_[current_].N);
}

}  // namespace orknn
