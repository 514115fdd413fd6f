#include "converter/onnx/const_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/fp16.h"
#include "converter/onnx/tensor_proto.h"

namespace orknn::onnx_import {
namespace {

// A computed output may not exceed this (a hostile constant shape must not exhaust memory); the
// constant folder of IR ops has the same bound.
constexpr int64_t kMaxOutputBytes = int64_t(64) << 20;

// A constant input or a computed output.
struct Value {
  bool present = false;  // false for an absent optional input
  Shape shape;
  DType dtype = DType::kF32;
  std::vector<uint8_t> bytes;
  int64_t numel() const { return shape_numel(shape); }
  size_t esize() const { return dtype_size(dtype); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

using Outputs = std::vector<Value>;
using EvalFn = Status (*)(MapContext& ctx, const std::vector<Value>& in, Outputs* out);

template <typename T> T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void store(uint8_t* p, T v) { std::memcpy(p, &v, sizeof(T)); }

bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16; }

// Element i as a number: integers and bool exactly as int64 (uint64 was widened to int64 at
// import, so its bit pattern is kept), floats as double.
int64_t get_int(const Value& v, int64_t i) {
  const uint8_t* p = v.bytes.data() + static_cast<size_t>(i) * v.esize();
  switch (v.dtype) {
    case DType::kI8: return load<int8_t>(p);
    case DType::kU8: case DType::kBool: return load<uint8_t>(p);
    case DType::kI16: return load<int16_t>(p);
    case DType::kU16: return load<uint16_t>(p);
    case DType::kI32: return load<int32_t>(p);
    case DType::kU32: return load<uint32_t>(p);
    case DType::kI64: return load<int64_t>(p);
    case DType::kF32: return static_cast<int64_t>(load<float>(p));
    case DType::kF16: return static_cast<int64_t>(fp16_to_fp32(load<uint16_t>(p)));
  }
  return 0;
}

double get_double(const Value& v, int64_t i) {
  const uint8_t* p = v.bytes.data() + static_cast<size_t>(i) * v.esize();
  if (v.dtype == DType::kF32) return load<float>(p);
  if (v.dtype == DType::kF16) return fp16_to_fp32(load<uint16_t>(p));
  return static_cast<double>(get_int(v, i));
}

// Stores x in element i, wrapping to the type's width as ONNX's integer arithmetic does.
void set_int(Value& v, int64_t i, int64_t x) {
  uint8_t* p = v.bytes.data() + static_cast<size_t>(i) * v.esize();
  switch (v.dtype) {
    case DType::kI8: case DType::kU8: store<uint8_t>(p, static_cast<uint8_t>(x)); break;
    case DType::kBool: store<uint8_t>(p, x != 0); break;
    case DType::kI16: case DType::kU16: store<uint16_t>(p, static_cast<uint16_t>(x)); break;
    case DType::kI32: case DType::kU32: store<uint32_t>(p, static_cast<uint32_t>(x)); break;
    case DType::kI64: store<int64_t>(p, x); break;
    case DType::kF32: store<float>(p, static_cast<float>(x)); break;
    case DType::kF16: store<uint16_t>(p, fp32_to_fp16(static_cast<float>(x))); break;
  }
}

void set_double(Value& v, int64_t i, double x) {
  uint8_t* p = v.bytes.data() + static_cast<size_t>(i) * v.esize();
  if (v.dtype == DType::kF32) store<float>(p, static_cast<float>(x));
  else if (v.dtype == DType::kF16) store<uint16_t>(p, fp32_to_fp16(static_cast<float>(x)));
  else if (std::isfinite(x) && std::fabs(x) < 9.2e18) set_int(v, i, static_cast<int64_t>(x));
  else set_int(v, i, 0);  // out of the integer range: undefined in ONNX, defined here
}

// A zero-filled output, refused above kMaxOutputBytes.
Status make_output(MapContext& ctx, const Shape& shape, DType dtype, Value* out) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return ctx.error("computed output dim %lld is negative", static_cast<long long>(d));
    if (d > 0 && n > kMaxOutputBytes / d) n = kMaxOutputBytes + 1;
    else n *= d;
  }
  if (n > kMaxOutputBytes / static_cast<int64_t>(dtype_size(dtype)))
    return ctx.unsupported("the constant output %s would exceed %lld MiB", shape_str(shape).c_str(),
                           static_cast<long long>(kMaxOutputBytes >> 20));
  out->present = true;
  out->shape = shape;
  out->dtype = dtype;
  out->bytes.assign(static_cast<size_t>(n) * dtype_size(dtype), 0);
  return Status::Ok();
}

int64_t attr_int(const MapContext& ctx, const char* name, int64_t def) {
  const onnx::AttributeProto* a = ctx.attr(name);
  return a ? a->i() : def;
}
std::string attr_string(const MapContext& ctx, const char* name, const std::string& def) {
  const onnx::AttributeProto* a = ctx.attr(name);
  return a ? a->s() : def;
}

Status need_inputs(MapContext& ctx, const std::vector<Value>& in, size_t required) {
  for (size_t i = 0; i < required; ++i)
    if (i >= in.size() || !in[i].present) return ctx.error("input %zu is required", i);
  return Status::Ok();
}

// An axis in [-rank, rank) made non-negative.
Status resolve_axis(MapContext& ctx, int64_t axis, int64_t rank, int64_t* out) {
  if (axis < -rank || axis >= rank)
    return ctx.error("axis %lld is out of range for rank %lld", static_cast<long long>(axis),
                     static_cast<long long>(rank));
  *out = axis < 0 ? axis + rank : axis;
  return Status::Ok();
}

// An index along a dim of size `dim`, negative counting from the end, made non-negative.
Status resolve_index(MapContext& ctx, int64_t idx, int64_t dim, int64_t* out) {
  if (idx < -dim || idx >= dim)
    return ctx.error("index %lld is out of range [%lld, %lld)", static_cast<long long>(idx),
                     static_cast<long long>(-dim), static_cast<long long>(dim));
  *out = idx < 0 ? idx + dim : idx;
  return Status::Ok();
}

Status scalar_int(MapContext& ctx, const Value& v, const char* what, int64_t* out) {
  if (v.numel() != 1) return ctx.error("%s must hold one value, it has shape %s", what, shape_str(v.shape).c_str());
  *out = get_int(v, 0);
  return Status::Ok();
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// Multi-index of flat index i in shape s.
std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  return idx;
}

// numpy broadcasting of two shapes, and for each output element the element of `in` it reads.
Status broadcast2(MapContext& ctx, const Shape& a, const Shape& b, Shape* out) {
  size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t k = 0; k < r; ++k) {
    int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      return ctx.error("shapes %s and %s do not broadcast", shape_str(a).c_str(), shape_str(b).c_str());
    (*out)[k] = da == 1 ? db : da;
  }
  return Status::Ok();
}

// The element of a tensor of shape `in` that output element o (of the broadcast shape `out`) reads:
// right-aligned coordinates, a dim of 1 contributing nothing.
int64_t broadcast_source(int64_t o, const Shape& out, const Shape& in) {
  int64_t src = 0, in_stride = 1, rest = o;
  for (size_t k = 0; k < in.size(); ++k) {
    const int64_t od = out[out.size() - 1 - k], dim = in[in.size() - 1 - k];
    const int64_t coord = rest % od;
    rest /= od;
    if (dim != 1) src += coord * in_stride;
    in_stride *= dim;
  }
  return src;
}

// Element-wise binary op with broadcasting; f(out, o, a, ia, b, ib) writes element o.
template <typename F>
Status binary(MapContext& ctx, const Value& a, const Value& b, DType out_type, Outputs* out, F f) {
  Shape shape;
  ORKNN_RETURN_IF_ERROR(broadcast2(ctx, a.shape, b.shape, &shape));
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, shape, out_type, &r));
  for (int64_t o = 0, n = r.numel(); o < n; ++o)
    ORKNN_RETURN_IF_ERROR(f(r, o, a, broadcast_source(o, shape, a.shape), b, broadcast_source(o, shape, b.shape)));
  out->push_back(std::move(r));
  return Status::Ok();
}

Status same_types(MapContext& ctx, const Value& a, const Value& b) {
  if (a.dtype != b.dtype)
    return ctx.error("inputs have different types (%s, %s)", dtype_name(a.dtype), dtype_name(b.dtype));
  return Status::Ok();
}

// ---- element-wise ---------------------------------------------------------------------------

// Mod: fmod=1 is C's fmod (the result has the dividend's sign); fmod=0 is Python's % (the
// divisor's sign).
Status eval_Mod(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 2));
  ORKNN_RETURN_IF_ERROR(same_types(ctx, in[0], in[1]));
  const bool c_fmod = attr_int(ctx, "fmod", 0) != 0;
  if (is_float(in[0].dtype)) {
    return binary(ctx, in[0], in[1], in[0].dtype, out, [&](Value& r, int64_t o, const Value& a, int64_t ia,
                                                           const Value& b, int64_t ib) {
      double x = get_double(a, ia), y = get_double(b, ib), m = std::fmod(x, y);
      if (!c_fmod && m != 0 && ((m < 0) != (y < 0))) m += y;
      set_double(r, o, m);
      return Status::Ok();
    });
  }
  return binary(ctx, in[0], in[1], in[0].dtype, out, [&](Value& r, int64_t o, const Value& a, int64_t ia,
                                                         const Value& b, int64_t ib) {
    int64_t x = get_int(a, ia), y = get_int(b, ib);
    if (y == 0) return ctx.error("integer division by zero (element %lld of the divisor)", static_cast<long long>(ib));
    int64_t m = y == -1 ? 0 : x % y;  // INT64_MIN % -1 overflows in C++
    if (!c_fmod && m != 0 && ((m < 0) != (y < 0))) m += y;
    set_int(r, o, m);
    return Status::Ok();
  });
}

Status eval_logical(MapContext& ctx, const std::vector<Value>& in, Outputs* out, int which) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 2));
  for (const Value& v : in)
    if (v.dtype != DType::kBool) return ctx.error("inputs must be bool, not %s", dtype_name(v.dtype));
  return binary(ctx, in[0], in[1], DType::kBool, out, [&](Value& r, int64_t o, const Value& a, int64_t ia,
                                                          const Value& b, int64_t ib) {
    bool x = get_int(a, ia) != 0, y = get_int(b, ib) != 0;
    set_int(r, o, which == 0 ? (x && y) : which == 1 ? (x || y) : (x != y));
    return Status::Ok();
  });
}
Status eval_And(MapContext& ctx, const std::vector<Value>& in, Outputs* out) { return eval_logical(ctx, in, out, 0); }
Status eval_Or(MapContext& ctx, const std::vector<Value>& in, Outputs* out) { return eval_logical(ctx, in, out, 1); }
Status eval_Xor(MapContext& ctx, const std::vector<Value>& in, Outputs* out) { return eval_logical(ctx, in, out, 2); }

// BitShift is defined on unsigned integers; int64 here is an ONNX uint64 (widened at import).
Status eval_BitShift(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 2));
  ORKNN_RETURN_IF_ERROR(same_types(ctx, in[0], in[1]));
  const DType t = in[0].dtype;
  if (t != DType::kU8 && t != DType::kU16 && t != DType::kU32 && t != DType::kI64)
    return ctx.error("inputs must be unsigned integers, not %s", dtype_name(t));
  const std::string dir = attr_string(ctx, "direction", "");
  if (dir != "LEFT" && dir != "RIGHT") return ctx.error("direction must be LEFT or RIGHT, not '%s'", dir.c_str());
  const uint64_t bits = in[0].esize() * 8;
  const uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  return binary(ctx, in[0], in[1], t, out, [&](Value& r, int64_t o, const Value& a, int64_t ia, const Value& b,
                                               int64_t ib) {
    uint64_t x = static_cast<uint64_t>(get_int(a, ia)) & mask, y = static_cast<uint64_t>(get_int(b, ib)) & mask;
    uint64_t v = y >= bits ? 0 : dir == "LEFT" ? (x << y) & mask : x >> y;
    set_int(r, o, static_cast<int64_t>(v));
    return Status::Ok();
  });
}

Status eval_IsNaN(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 1));
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, in[0].shape, DType::kBool, &r));
  for (int64_t i = 0; i < r.numel(); ++i) set_int(r, i, is_float(in[0].dtype) && std::isnan(get_double(in[0], i)));
  out->push_back(std::move(r));
  return Status::Ok();
}

Status eval_IsInf(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 1));
  const bool neg = attr_int(ctx, "detect_negative", 1) != 0, pos = attr_int(ctx, "detect_positive", 1) != 0;
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, in[0].shape, DType::kBool, &r));
  for (int64_t i = 0; i < r.numel(); ++i) {
    double x = is_float(in[0].dtype) ? get_double(in[0], i) : 0.0;
    set_int(r, i, std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg)));
  }
  out->push_back(std::move(r));
  return Status::Ok();
}

// ---- along an axis ---------------------------------------------------------------------------

Status eval_CumSum(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 2));
  const Value& x = in[0];
  int64_t axis_v = 0, axis = 0;
  ORKNN_RETURN_IF_ERROR(scalar_int(ctx, in[1], "axis", &axis_v));
  ORKNN_RETURN_IF_ERROR(resolve_axis(ctx, axis_v, std::max<int64_t>(x.rank(), 1), &axis));
  const bool exclusive = attr_int(ctx, "exclusive", 0) != 0, reverse = attr_int(ctx, "reverse", 0) != 0;
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, x.shape, x.dtype, &r));
  const int64_t len = x.rank() ? x.shape[static_cast<size_t>(axis)] : 1;
  const int64_t inner = x.rank() ? strides_of(x.shape)[static_cast<size_t>(axis)] : 1;
  const int64_t outer = (len && inner) ? x.numel() / (len * inner) : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double fsum = 0;
      int64_t isum = 0;
      for (int64_t k = 0; k < len; ++k) {
        const int64_t pos = (o * len + (reverse ? len - 1 - k : k)) * inner + i;
        if (is_float(x.dtype)) {
          if (!exclusive) fsum += get_double(x, pos);
          set_double(r, pos, fsum);
          if (exclusive) fsum += get_double(x, pos);
        } else {
          // Unsigned wrap-around keeps int64 overflow defined.
          auto add = [](int64_t s, int64_t v) { return static_cast<int64_t>(static_cast<uint64_t>(s) + static_cast<uint64_t>(v)); };
          if (!exclusive) isum = add(isum, get_int(x, pos));
          set_int(r, pos, isum);
          if (exclusive) isum = add(isum, get_int(x, pos));
        }
      }
    }
  out->push_back(std::move(r));
  return Status::Ok();
}

Status eval_ReverseSequence(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 2));
  const Value& x = in[0];
  if (x.rank() < 2) return ctx.error("input must have rank 2 or more, it has shape %s", shape_str(x.shape).c_str());
  int64_t batch_axis = 0, time_axis = 0;
  ORKNN_RETURN_IF_ERROR(resolve_axis(ctx, attr_int(ctx, "batch_axis", 1), 2, &batch_axis));
  ORKNN_RETURN_IF_ERROR(resolve_axis(ctx, attr_int(ctx, "time_axis", 0), 2, &time_axis));
  if (batch_axis == time_axis) return ctx.error("batch_axis and time_axis must differ");
  const int64_t batch = x.shape[static_cast<size_t>(batch_axis)], time = x.shape[static_cast<size_t>(time_axis)];
  if (in[1].numel() != batch)
    return ctx.error("sequence_lens has %lld values for a batch of %lld", static_cast<long long>(in[1].numel()),
                     static_cast<long long>(batch));
  Value r = x;
  const auto st = strides_of(x.shape);
  const size_t es = x.esize();
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto idx = unravel(i, x.shape);
    const int64_t len = get_int(in[1], idx[static_cast<size_t>(batch_axis)]);
    if (len < 0 || len > time)
      return ctx.error("sequence length %lld is outside [0, %lld]", static_cast<long long>(len), static_cast<long long>(time));
    int64_t& t = idx[static_cast<size_t>(time_axis)];
    if (t >= len) continue;
    const int64_t src = i + (len - 1 - 2 * t) * st[static_cast<size_t>(time_axis)];
    std::memcpy(r.bytes.data() + i * es, x.bytes.data() + src * es, es);
  }
  out->push_back(std::move(r));
  return Status::Ok();
}

Status eval_Compress(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 2));
  const Value& x = in[0];
  const Value& cond = in[1];
  if (cond.rank() != 1) return ctx.error("condition must be 1-D, it has shape %s", shape_str(cond.shape).c_str());
  const bool flat = ctx.attr("axis") == nullptr;
  int64_t axis = 0;
  if (!flat) ORKNN_RETURN_IF_ERROR(resolve_axis(ctx, attr_int(ctx, "axis", 0), x.rank(), &axis));
  const Shape xs = flat ? Shape{x.numel()} : x.shape;
  const int64_t len = xs[static_cast<size_t>(axis)];
  if (cond.numel() > len)
    return ctx.error("condition has %lld values for an axis of %lld", static_cast<long long>(cond.numel()),
                     static_cast<long long>(len));
  std::vector<int64_t> keep;
  for (int64_t k = 0; k < cond.numel(); ++k)
    if (get_double(cond, k) != 0) keep.push_back(k);
  Shape os = xs;
  os[static_cast<size_t>(axis)] = static_cast<int64_t>(keep.size());
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, os, x.dtype, &r));
  const int64_t inner = strides_of(xs)[static_cast<size_t>(axis)] * static_cast<int64_t>(x.esize());
  const int64_t outer = x.numel() ? x.numel() / (len * strides_of(xs)[static_cast<size_t>(axis)]) : 0;
  uint8_t* dst = r.bytes.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k : keep) {
      std::memcpy(dst, x.bytes.data() + (o * len + k) * inner, static_cast<size_t>(inner));
      dst += inner;
    }
  out->push_back(std::move(r));
  return Status::Ok();
}

// ---- matrices --------------------------------------------------------------------------------

Status eval_Trilu(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 1));
  const Value& x = in[0];
  if (x.rank() < 2) return ctx.error("input must have rank 2 or more, it has shape %s", shape_str(x.shape).c_str());
  int64_t k = 0;
  if (in.size() > 1 && in[1].present) ORKNN_RETURN_IF_ERROR(scalar_int(ctx, in[1], "k", &k));
  const bool upper = attr_int(ctx, "upper", 1) != 0;
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, x.shape, x.dtype, &r));
  const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  const size_t es = x.esize();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = i % cols, row = (cols ? i / cols : 0) % std::max<int64_t>(rows, 1);
    // k and the positions are bounded by the dims (int64 arithmetic cannot overflow for them), but
    // k itself comes from the file: compare without forming row + k.
    const bool keep = upper ? c - row >= k : c - row <= k;
    if (keep) std::memcpy(r.bytes.data() + i * es, x.bytes.data() + i * es, es);
  }
  out->push_back(std::move(r));
  return Status::Ok();
}

Status eval_EyeLike(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 1));
  const Value& x = in[0];
  if (x.rank() != 2) return ctx.error("input must be 2-D, it has shape %s", shape_str(x.shape).c_str());
  DType t = x.dtype;
  if (const onnx::AttributeProto* a = ctx.attr("dtype"))
    if (!dtype_from_onnx(static_cast<int>(a->i()), &t))
      return ctx.unsupported("dtype %s is not supported", onnx_type_name(static_cast<int>(a->i())));
  const int64_t k = attr_int(ctx, "k", 0);
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, x.shape, t, &r));
  for (int64_t i = 0; i < x.shape[0]; ++i)
    for (int64_t j = 0; j < x.shape[1]; ++j)
      if (j - i == k) set_int(r, i * x.shape[1] + j, 1);
  out->push_back(std::move(r));
  return Status::Ok();
}

Status eval_NonZero(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 1));
  const Value& x = in[0];
  const Shape xs = x.rank() ? x.shape : Shape{1};  // numpy treats a scalar as one element
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (get_double(x, i) != 0 || (is_float(x.dtype) && std::isnan(get_double(x, i)))) hits.push_back(i);
  const int64_t rank = static_cast<int64_t>(xs.size()), nnz = static_cast<int64_t>(hits.size());
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, {rank, nnz}, DType::kI64, &r));
  for (int64_t h = 0; h < nnz; ++h) {
    auto idx = unravel(hits[static_cast<size_t>(h)], xs);
    for (int64_t d = 0; d < rank; ++d) set_int(r, d * nnz + h, idx[static_cast<size_t>(d)]);
  }
  out->push_back(std::move(r));
  return Status::Ok();
}

Status eval_OneHot(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 3));
  const Value& ind = in[0];
  int64_t depth = 0;
  if (in[1].numel() != 1) return ctx.error("depth must hold one value, it has shape %s", shape_str(in[1].shape).c_str());
  depth = static_cast<int64_t>(get_double(in[1], 0));
  if (depth < 1) return ctx.error("depth must be positive, it is %lld", static_cast<long long>(depth));
  if (in[2].numel() != 2) return ctx.error("values must hold [off, on], it has shape %s", shape_str(in[2].shape).c_str());
  int64_t axis = 0;
  ORKNN_RETURN_IF_ERROR(resolve_axis(ctx, attr_int(ctx, "axis", -1), ind.rank() + 1, &axis));
  Shape os = ind.shape;
  os.insert(os.begin() + axis, depth);
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, os, in[2].dtype, &r));
  const size_t es = r.esize();
  const int64_t inner = strides_of(os)[static_cast<size_t>(axis)];
  for (int64_t o = 0; o < r.numel(); ++o) std::memcpy(r.bytes.data() + o * es, in[2].bytes.data(), es);
  for (int64_t i = 0; i < ind.numel(); ++i) {
    int64_t v = static_cast<int64_t>(get_double(ind, i));
    if (v < 0) v += depth;
    if (v < 0 || v >= depth) continue;  // out of range: all off, as ONNX says
    const int64_t outer_i = i / inner, inner_i = i % inner;
    std::memcpy(r.bytes.data() + ((outer_i * depth + v) * inner + inner_i) * es, in[2].bytes.data() + es, es);
  }
  out->push_back(std::move(r));
  return Status::Ok();
}

// ---- gather / scatter ------------------------------------------------------------------------

Status need_index_type(MapContext& ctx, const Value& v, const char* what) {
  if (v.dtype != DType::kI64 && v.dtype != DType::kI32)
    return ctx.error("%s must be int32 or int64, not %s", what, dtype_name(v.dtype));
  return Status::Ok();
}

// Combines `upd` into element `pos` of r by `reduction` (none, add, mul, max, min).
Status reduce_into(MapContext& ctx, Value& r, int64_t pos, const Value& upd, int64_t upos, const std::string& reduction) {
  const size_t es = r.esize();
  if (reduction == "none") {
    std::memcpy(r.bytes.data() + pos * es, upd.bytes.data() + upos * es, es);
    return Status::Ok();
  }
  if (is_float(r.dtype)) {
    double a = get_double(r, pos), b = get_double(upd, upos);
    double v = reduction == "add" ? a + b : reduction == "mul" ? a * b : reduction == "max" ? std::max(a, b) : std::min(a, b);
    set_double(r, pos, v);
  } else {
    uint64_t a = static_cast<uint64_t>(get_int(r, pos)), b = static_cast<uint64_t>(get_int(upd, upos));
    int64_t sa = get_int(r, pos), sb = get_int(upd, upos);
    int64_t v = reduction == "add" ? static_cast<int64_t>(a + b)
                : reduction == "mul" ? static_cast<int64_t>(a * b)
                : reduction == "max" ? std::max(sa, sb) : std::min(sa, sb);
    set_int(r, pos, v);
  }
  (void)ctx;
  return Status::Ok();
}

Status reduction_attr(MapContext& ctx, std::string* out) {
  *out = attr_string(ctx, "reduction", "none");
  if (*out != "none" && *out != "add" && *out != "mul" && *out != "max" && *out != "min")
    return ctx.error("reduction '%s' is not one of none, add, mul, max, min", out->c_str());
  return Status::Ok();
}

Status eval_GatherND(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 2));
  const Value &data = in[0], &ind = in[1];
  ORKNN_RETURN_IF_ERROR(need_index_type(ctx, ind, "indices"));
  const int64_t b = attr_int(ctx, "batch_dims", 0);
  if (ind.rank() < 1 || b < 0 || b >= ind.rank() || b >= data.rank())
    return ctx.error("batch_dims %lld does not fit data rank %lld and indices rank %lld", static_cast<long long>(b),
                     static_cast<long long>(data.rank()), static_cast<long long>(ind.rank()));
  for (int64_t d = 0; d < b; ++d)
    if (data.shape[static_cast<size_t>(d)] != ind.shape[static_cast<size_t>(d)])
      return ctx.error("batch dim %lld differs between data and indices", static_cast<long long>(d));
  const int64_t k = ind.shape.back();
  if (k < 1 || b + k > data.rank())
    return ctx.error("indices' last dim %lld does not fit data rank %lld", static_cast<long long>(k),
                     static_cast<long long>(data.rank()));
  Shape os(ind.shape.begin(), ind.shape.end() - 1);
  os.insert(os.end(), data.shape.begin() + b + k, data.shape.end());
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, os, data.dtype, &r));
  const auto st = strides_of(data.shape);
  int64_t batches = 1;
  for (int64_t d = 0; d < b; ++d) batches *= data.shape[static_cast<size_t>(d)];
  const int64_t slice = b + k < data.rank() ? st[static_cast<size_t>(b + k - 1)] : 1;
  const int64_t tuples = ind.numel() / k, per_batch = batches ? tuples / batches : 0;
  const int64_t batch_stride = b ? st[static_cast<size_t>(b - 1)] : 0;
  const size_t es = data.esize();
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t base = (per_batch ? t / per_batch : 0) * batch_stride;
    for (int64_t d = 0; d < k; ++d) {
      int64_t idx = 0;
      ORKNN_RETURN_IF_ERROR(resolve_index(ctx, get_int(ind, t * k + d), data.shape[static_cast<size_t>(b + d)], &idx));
      base += idx * st[static_cast<size_t>(b + d)];
    }
    if (slice > 0)  // an empty slice has no bytes (and r maybe no buffer)
      std::memcpy(r.bytes.data() + t * slice * es, data.bytes.data() + base * es, static_cast<size_t>(slice) * es);
  }
  out->push_back(std::move(r));
  return Status::Ok();
}

// The data element that element i of `ind` addresses along `axis` (other coordinates its own).
Status element_target(MapContext& ctx, const Value& data, const Value& ind, int64_t axis, int64_t i,
                      const std::vector<int64_t>& st, int64_t* pos) {
  auto idx = unravel(i, ind.shape);
  ORKNN_RETURN_IF_ERROR(resolve_index(ctx, get_int(ind, i), data.shape[static_cast<size_t>(axis)], &idx[static_cast<size_t>(axis)]));
  *pos = 0;
  for (size_t d = 0; d < idx.size(); ++d) *pos += idx[d] * st[d];
  return Status::Ok();
}

Status check_element_shapes(MapContext& ctx, const Value& data, const Value& ind, int64_t axis) {
  if (ind.rank() != data.rank())
    return ctx.error("indices have rank %lld, data %lld", static_cast<long long>(ind.rank()), static_cast<long long>(data.rank()));
  for (int64_t d = 0; d < data.rank(); ++d)
    if (d != axis && ind.shape[static_cast<size_t>(d)] > data.shape[static_cast<size_t>(d)])
      return ctx.error("indices %s exceed data %s in dim %lld", shape_str(ind.shape).c_str(), shape_str(data.shape).c_str(),
                       static_cast<long long>(d));
  return Status::Ok();
}

Status eval_GatherElements(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 2));
  const Value &data = in[0], &ind = in[1];
  ORKNN_RETURN_IF_ERROR(need_index_type(ctx, ind, "indices"));
  int64_t axis = 0;
  ORKNN_RETURN_IF_ERROR(resolve_axis(ctx, attr_int(ctx, "axis", 0), data.rank(), &axis));
  ORKNN_RETURN_IF_ERROR(check_element_shapes(ctx, data, ind, axis));
  Value r;
  ORKNN_RETURN_IF_ERROR(make_output(ctx, ind.shape, data.dtype, &r));
  const auto st = strides_of(data.shape);
  const size_t es = data.esize();
  for (int64_t i = 0; i < ind.numel(); ++i) {
    int64_t pos = 0;
    ORKNN_RETURN_IF_ERROR(element_target(ctx, data, ind, axis, i, st, &pos));
    std::memcpy(r.bytes.data() + i * es, data.bytes.data() + pos * es, es);
  }
  out->push_back(std::move(r));
  return Status::Ok();
}

Status eval_ScatterElements(MapContext& ctx, const std::vector<Value>& in, Outputs* out) {
  ORKNN_RETURN_IF_ERROR(need_inputs(ctx, in, 3));
  const Value &data = in[0], &ind = in[1], &upd = in[2];
  ORKNN_RETURN_IF_ERROR(need_index_type(ctx, ind, "indices"));
  ORKNN_RETURN_IF_ERROR(same_types(ctx, data, upd));
  if (upd.shape != ind.shape)
    return ctx.error("updates %s and indices %s differ in shape", shape_str(upd.shape).c_str(), shape_str(ind.shape).c_str());
  std::string reduction;
  ORKNN_RETURN_IF_ERROR(reduction_attr(ctx, &reduction));
  int64_t axis = 0;
  ORKNN_RETURN_IF_ERROR(resolve_axis(ctx, attr_int(ctx, "axis", 0), data.rank(), &axis));
  ORKNN_RETURN_IF_ERROR(check_element_shapes(ctx, data, ind, axis));
  Value r = data;
  const auto st = strides_of(data.shape);
  for (int64_t i = 0; i < ind.numel(); ++i) {
    int64_t pos = 0;
    ORKNN_RETURN_IF_ERROR(element_target(ctx, data, ind, axis, i, st, &pos));
    ORKNN_RETURN_IF_ERROR(reduce_into(ctx, r, pos, upd, i, reduction));
  }
  out->push_back(std::move(r));
  return Status::Ok();
}

struct EvalOp {
  const char* type;
  EvalFn fn;
};
const EvalOp kEvalOps[] = {
    {"And", eval_And}, {"BitShift", eval_BitShift}, {"Compress", eval_Compress}, {"CumSum", eval_CumSum},
    {"EyeLike", eval_EyeLike}, {"GatherElements", eval_GatherElements}, {"GatherND", eval_GatherND},
    {"IsInf", eval_IsInf}, {"IsNaN", eval_IsNaN}, {"Mod", eval_Mod}, {"NonZero", eval_NonZero},
    {"OneHot", eval_OneHot}, {"Or", eval_Or}, {"ReverseSequence", eval_ReverseSequence},
    {"ScatterElements", eval_ScatterElements}, {"Trilu", eval_Trilu}, {"Xor", eval_Xor},
};

}  // namespace

const std::vector<std::string>& const_eval_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const auto& e : kEvalOps) v.push_back(e.type);
    return v;
  }();
  return ops;
}

bool is_const_eval_op(const std::string& op_type) {
  for (const auto& e : kEvalOps)
    if (op_type == e.type) return true;
  return false;
}

Status map_const_eval(MapContext& ctx) {
  const EvalOp* op = nullptr;
  for (const auto& e : kEvalOps)
    if (ctx.op_type() == e.type) op = &e;
  if (!op) return ctx.unsupported("op not supported by OpenRKNN yet; see docs/ops.md");
  std::vector<Value> in(ctx.num_inputs());
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input_tensor(i);
    if (!t) continue;
    if (!t->is_const())
      return ctx.unsupported("OpenRKNN computes %s at conversion only, when every input is constant, and input %zu "
                             "('%s') is computed at run time; fix the input shapes (--input-shape) if it depends on "
                             "them only, or see docs/ops.md", ctx.op_type().c_str(), i, t->name.c_str());
    in[i].present = true;
    in[i].shape = t->shape;
    in[i].dtype = t->dtype;
    in[i].bytes.assign(t->data.ptr, t->data.ptr + t->nbytes());
  }
  Outputs outs;
  ORKNN_RETURN_IF_ERROR(op->fn(ctx, in, &outs));
  for (size_t i = 0; i < outs.size() && i < ctx.num_outputs(); ++i)
    ORKNN_RETURN_IF_ERROR(ctx.output_const(i, outs[i].shape, outs[i].dtype, outs[i].bytes.data(), outs[i].bytes.size()));
  ctx.count_folded();
  return Status::Ok();
}

}  // namespace orknn::onnx_import
