#include "graph/ir.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace orknn {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32: case DType::kI32: case DType::kU32: return 4;
    case DType::kF16: case DType::kI16: case DType::kU16: return 2;
    case DType::kI8: case DType::kU8: case DType::kBool: return 1;
    case DType::kI64: return 8;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "float32";
    case DType::kF16: return "float16";
    case DType::kI8: return "int8";
    case DType::kU8: return "uint8";
    case DType::kI16: return "int16";
    case DType::kU16: return "uint16";
    case DType::kI32: return "int32";
    case DType::kU32: return "uint32";
    case DType::kI64: return "int64";
    case DType::kBool: return "bool";
  }
  return "?";
}

bool dtype_valid(int v) { return v >= 0 && v <= static_cast<int>(DType::kBool); }

int64_t shape_numel(const Shape& s) {
  // An empty shape may have huge other dims (the verifier allows that): multiplying them before
  // reaching the 0 would overflow.
  for (int64_t d : s)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ",";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

int64_t Attrs::get_int(const std::string& name, int64_t def) const {
  auto it = map_.find(name);
  if (it == map_.end()) return def;
  if (it->second.kind == AttrValue::Kind::kFloat) {
    // A model may store any float here: converting one outside int64's range (or NaN) is undefined
    // behaviour, so saturate (NaN -> INT64_MIN); callers reject the out-of-range value.
    const float f = it->second.f;
    if (!(f > -9.2e18f)) return std::numeric_limits<int64_t>::min();
    if (!(f < 9.2e18f)) return std::numeric_limits<int64_t>::max();
    return static_cast<int64_t>(f);
  }
  return it->second.i;
}
float Attrs::get_float(const std::string& name, float def) const {
  auto it = map_.find(name);
  if (it == map_.end()) return def;
  if (it->second.kind == AttrValue::Kind::kInt) return static_cast<float>(it->second.i);
  return it->second.f;
}
std::string Attrs::get_string(const std::string& name, const std::string& def) const {
  auto it = map_.find(name);
  return it == map_.end() ? def : it->second.s;
}
std::vector<int64_t> Attrs::get_ints(const std::string& name, const std::vector<int64_t>& def) const {
  auto it = map_.find(name);
  return it == map_.end() ? def : it->second.ints;
}
std::vector<float> Attrs::get_floats(const std::string& name, const std::vector<float>& def) const {
  auto it = map_.find(name);
  return it == map_.end() ? def : it->second.floats;
}
void Attrs::set_int(const std::string& name, int64_t v) {
  AttrValue a; a.kind = AttrValue::Kind::kInt; a.i = v; map_[name] = a;
}
void Attrs::set_float(const std::string& name, float v) {
  AttrValue a; a.kind = AttrValue::Kind::kFloat; a.f = v; map_[name] = a;
}
void Attrs::set_string(const std::string& name, const std::string& v) {
  AttrValue a; a.kind = AttrValue::Kind::kString; a.s = v; map_[name] = a;
}
void Attrs::set_ints(const std::string& name, const std::vector<int64_t>& v) {
  AttrValue a; a.kind = AttrValue::Kind::kInts; a.ints = v; map_[name] = a;
}
void Attrs::set_floats(const std::string& name, const std::vector<float>& v) {
  AttrValue a; a.kind = AttrValue::Kind::kFloats; a.floats = v; map_[name] = a;
}

void set_const_data(Tensor& t, const void* bytes, size_t nbytes) {
  // 64-byte aligned owned copy (kernels may use aligned loads on weights).
  size_t alloc = (nbytes + 63) / 64 * 64 + 64;
  std::shared_ptr<uint8_t> buf(static_cast<uint8_t*>(::operator new[](alloc, std::align_val_t(64))),
                               [](uint8_t* p) { ::operator delete[](p, std::align_val_t(64)); });
  if (nbytes) std::memcpy(buf.get(), bytes, nbytes);
  std::memset(buf.get() + nbytes, 0, alloc - nbytes);
  t.data.owner = buf;
  t.data.ptr = buf.get();
  t.data.size = nbytes;
}

int Graph::add_tensor(const std::string& name, const Shape& shape, DType dtype) {
  Tensor t;
  t.name = name;
  t.shape = shape;
  t.dtype = dtype;
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

int Graph::add_const(const std::string& name, const Shape& shape, DType dtype, const void* bytes, size_t nbytes) {
  int id = add_tensor(name, shape, dtype);
  set_const_data(tensors.back(), bytes, nbytes);
  return id;
}

int Graph::find_tensor(const std::string& name) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return static_cast<int>(i);
  return -1;
}

const Tensor* Graph::input(const Node& n, size_t i) const {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
  return &tensors.at(static_cast<size_t>(n.inputs[i]));
}

namespace {
bool same_float(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }
}  // namespace

bool same_attr_value(const AttrValue& a, const AttrValue& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case AttrValue::Kind::kInt: return a.i == b.i;
    case AttrValue::Kind::kFloat: return same_float(a.f, b.f);
    case AttrValue::Kind::kString: return a.s == b.s;
    case AttrValue::Kind::kInts: return a.ints == b.ints;
    case AttrValue::Kind::kFloats:
      if (a.floats.size() != b.floats.size()) return false;
      for (size_t i = 0; i < a.floats.size(); ++i)
        if (!same_float(a.floats[i], b.floats[i])) return false;
      return true;
  }
  return false;
}

std::string first_attr_difference(const Attrs& a, const Attrs& b) {
  for (const auto& [name, value] : a.all()) {
    auto it = b.all().find(name);
    if (it == b.all().end() || !same_attr_value(value, it->second)) return name;
  }
  for (const auto& [name, value] : b.all())
    if (!a.has(name)) return name;
  return "";
}

}  // namespace orknn
