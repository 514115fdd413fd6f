// The graph IR shared by the converter and the runtime.
//
// Semantics: tensors keep the ONNX (NCHW) layout; node op types and attribute names follow ONNX
// opset 21. The converter normalises older opsets and constant "parameter" inputs (axes, pads,
// shape, scales, ...) into attributes (docs/format.md, docs/ops.md). After conversion every shape is static.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "ops/op.h"

namespace orknn {

// Element types. Values equal rknn_tensor_type so that they can be stored and reported directly.
enum class DType : uint8_t {
  kF32 = 0, kF16 = 1, kI8 = 2, kU8 = 3, kI16 = 4, kU16 = 5, kI32 = 6, kU32 = 7, kI64 = 8, kBool = 9,
};
size_t dtype_size(DType t);
const char* dtype_name(DType t);
bool dtype_valid(int v);

using Shape = std::vector<int64_t>;
int64_t shape_numel(const Shape& s);  // 1 for a scalar (empty shape)
std::string shape_str(const Shape& s);

// Affine quantization: real = scale * (q - zero_point). One entry per tensor, or one per
// channel along `axis` (weights). Empty for float tensors.
struct QuantParams {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  int32_t axis = -1;
  bool empty() const { return scale.empty(); }
};

// Immutable bytes of a constant tensor. `owner` keeps them alive (a vector in the converter, the
// model file in the runtime); `ptr` is 64-byte aligned when it comes from a model file.
struct ConstData {
  std::shared_ptr<const void> owner;
  const uint8_t* ptr = nullptr;
  size_t size = 0;
};

struct Tensor {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
  QuantParams quant;
  ConstData data;  // set for constants (weights, folded values)

  bool is_const() const { return data.ptr != nullptr; }
  int64_t numel() const { return shape_numel(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  template <typename T> const T* const_ptr() const { return reinterpret_cast<const T*>(data.ptr); }
};

struct AttrValue {
  enum class Kind : uint8_t { kInt = 0, kFloat = 1, kString = 2, kInts = 3, kFloats = 4 };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0.f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

class Attrs {
 public:
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  int64_t get_int(const std::string& name, int64_t def) const;
  float get_float(const std::string& name, float def) const;
  std::string get_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& def = {}) const;
  std::vector<float> get_floats(const std::string& name, const std::vector<float>& def = {}) const;
  void set_int(const std::string& name, int64_t v);
  void set_float(const std::string& name, float v);
  void set_string(const std::string& name, const std::string& v);
  void set_ints(const std::string& name, const std::vector<int64_t>& v);
  void set_floats(const std::string& name, const std::vector<float>& v);
  void set(const std::string& name, const AttrValue& v) { map_[name] = v; }
  void erase(const std::string& name) { map_.erase(name); }
  const std::map<std::string, AttrValue>& all() const { return map_; }

 private:
  std::map<std::string, AttrValue> map_;
};

// Equality of attribute values, with NaN equal to NaN (so a model compares equal to itself).
bool same_attr_value(const AttrValue& a, const AttrValue& b);
// Name of the first attribute that differs between a and b (missing in one, or another value),
// "" when they are equal.
std::string first_attr_difference(const Attrs& a, const Attrs& b);


struct Node {
  std::string name;
  OpId op = OpId::Identity;
  std::vector<int> inputs;   // tensor ids; -1 marks an absent optional input
  std::vector<int> outputs;  // tensor ids
  Attrs attrs;
};

// The tensor id of a Conv's residual input (its fourth, added before the fused activation:
// ops/conv.cc), or -1 when n is not a Conv with one.
inline int conv_residual(const Node& n) {
  return n.op == OpId::Conv && n.inputs.size() > 3 ? n.inputs[3] : -1;
}

// How float tensors are computed. kFp16: every op output is rounded to fp16, as the NPU stores it.
enum class FloatPrecision : uint8_t { kFp16 = 0, kFp32 = 1 };

struct GraphInput {
  int tensor = -1;
  std::vector<float> mean;  // per channel, applied by the runtime to UINT8 inputs: (x - mean) / std
  std::vector<float> std;
};

struct Graph {
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;  // topological order
  std::vector<GraphInput> inputs;
  std::vector<int> outputs;  // tensor ids
  std::string platform;      // target platform, lower case ("rk3588")
  std::string custom_string;
  std::string conversion_settings;  // how the converter made the model (e.g. its command line)
  FloatPrecision precision = FloatPrecision::kFp16;

  int add_tensor(const std::string& name, const Shape& shape, DType dtype);
  // Adds a constant tensor holding a copy of `bytes`.
  int add_const(const std::string& name, const Shape& shape, DType dtype, const void* bytes, size_t nbytes);
  int find_tensor(const std::string& name) const;  // -1 if none
  Tensor& tensor(int id) { return tensors.at(static_cast<size_t>(id)); }
  const Tensor& tensor(int id) const { return tensors.at(static_cast<size_t>(id)); }
  // Input i of node n, or nullptr when absent.
  const Tensor* input(const Node& n, size_t i) const;
};

// Sets t's constant data to a copy of `bytes`.
void set_const_data(Tensor& t, const void* bytes, size_t nbytes);

}  // namespace orknn
