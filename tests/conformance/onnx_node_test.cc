// ONNX backend node tests (Debian libonnx-testdata) run through the whole OpenRKNN pipeline:
// convert_onnx (fp32) -> write_model -> load -> runtime Context -> outputs, compared with the
// reference outputs stored next to each model, with the tolerance of ONNX's own backend runner.
// See docs/conformance.md for the scope rules, the tolerance exceptions and unsupported.txt.
//
// Each case runs in a forked child process so that a crash or a hang in one op fails that case
// only (set ORKNN_CONFORMANCE_NO_FORK=1 to run in-process, e.g. under a debugger). The parent
// never runs the runtime itself: OpenMP thread pools do not survive fork().
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "converter/convert.h"
#include "graph/ir.h"
#include "model/model_io.h"
#include "ops/op.h"
#include "rknn_api.h"
#include "runtime/context.h"

namespace {

// ------------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------------

const char* const kDefaultDataRoot = "/usr/share/libonnx-testdata/data";
// "real" holds whole downloaded models (not node tests) and is left to tests/models.
const char* const kCaseDirs[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

std::string data_root() {
  const char* v = std::getenv("ORKNN_ONNX_TESTDATA");
  return v && *v ? v : kDefaultDataRoot;
}

std::string unsupported_list_path() { return std::string(ORKNN_SOURCE_DIR) + "/tests/conformance/unsupported.txt"; }

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

int case_timeout_seconds() {
  const char* v = std::getenv("ORKNN_CONFORMANCE_TIMEOUT");
  int t = v ? std::atoi(v) : 0;
  return t > 0 ? t : 30;
}

// ONNX ops the converter rewrites into IR ops of another name (or folds away), so a model using
// them is in scope although they are not in op_list.inc. Taken from the converter's mapper list.
const std::set<std::string>& converter_only_ops() {
  static const std::set<std::string> ops = {
#define ORKNN_ONNX_MAPPER(op_type, fn) op_type,
#include "converter/onnx/ops/mapper_list.inc"
#undef ORKNN_ONNX_MAPPER
  };
  return ops;
}

bool op_in_scope(const std::string& op_type) {
  return orknn::find_op(op_type) != nullptr || converter_only_ops().count(op_type) != 0;
}

// Inputs that OpenRKNN requires to be constant at conversion time (the IR moves them into
// attributes: every shape is static after conversion, as on the NPU). Node tests often feed them
// as graph inputs; the suite then freezes the test's values into initializers before converting,
// which exercises exactly the path a real model takes. ONNX op type -> input slots.
const std::map<std::string, std::vector<int>>& parameter_slots() {
  static const std::map<std::string, std::vector<int>> slots = {
      {"Reshape", {1}},        {"Slice", {1, 2, 3, 4}},  {"Squeeze", {1}},    {"Unsqueeze", {1}},
      {"ReduceMean", {1}},     {"ReduceSum", {1}},       {"ReduceMax", {1}},  {"ReduceMin", {1}},
      {"ReduceProd", {1}},     {"ReduceL2", {1}},        {"Split", {1}},      {"Pad", {1, 2, 3}},
      {"Resize", {1, 2, 3}},   {"Upsample", {1}},        {"Clip", {1, 2}},    {"Expand", {1}},
      {"Tile", {1}},           {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}}, {"Dropout", {1, 2}},
  };
  return slots;
}

// Graph inputs (not initializers) whose values reach a parameter slot, directly or through other
// nodes (e.g. a window size fed through Cast and Div into Range). Shape and Size read only their
// input's shape, which is static after conversion anyway, so the walk stops there.
std::set<std::string> inputs_to_freeze(const onnx::GraphProto& g) {
  std::set<std::string> graph_inputs, params, frozen;
  for (const auto& v : g.input()) graph_inputs.insert(v.name());
  for (const auto& t : g.initializer()) graph_inputs.erase(t.name());
  // ONNX nodes are in topological order, so one reverse pass sees every consumer first.
  for (int k = g.node_size() - 1; k >= 0; --k) {
    const auto& n = g.node(k);
    auto it = parameter_slots().find(n.op_type());
    if (it != parameter_slots().end())
      for (int slot : it->second)
        if (slot < n.input_size() && !n.input(slot).empty()) params.insert(n.input(slot));
    if (n.op_type() == "Shape" || n.op_type() == "Size") continue;
    bool feeds_param = false;
    for (const auto& o : n.output()) feeds_param |= params.count(o) != 0;
    if (feeds_param)
      for (const auto& i : n.input())
        if (!i.empty()) params.insert(i);
  }
  for (const std::string& name : params)
    if (graph_inputs.count(name)) frozen.insert(name);
  return frozen;
}

// Tolerance of ONNX's backend test runner (onnx/backend/test/runner: assert_allclose with
// rtol=1e-3, atol=1e-7), and the documented exceptions. A case's tolerance is the first rule whose
// prefix matches its id ("node/test_erf" matches "node/test_erf" and "node/test_erf_...").
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};
struct ToleranceRule {
  const char* id_prefix;
  Tolerance tol;
  const char* reason;
};
// Every rule must say why it is needed; docs/conformance.md lists them.
const std::vector<ToleranceRule>& tolerance_rules() {
  static const std::vector<ToleranceRule> rules = {
      // None needed yet: every passing case meets the runner's default.
  };
  return rules;
}

Tolerance tolerance_for(const std::string& id) {
  for (const ToleranceRule& r : tolerance_rules())
    if (id.compare(0, std::strlen(r.id_prefix), r.id_prefix) == 0) return r.tol;
  return Tolerance();
}

// ------------------------------------------------------------------------------------------------
// Small file helpers
// ------------------------------------------------------------------------------------------------

bool read_file(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(path.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Files "<prefix><N><suffix>" in a directory, ordered by N (input_10 after input_9).
std::vector<std::string> numbered_files(const std::string& dir, const std::string& prefix, const std::string& suffix) {
  std::vector<std::pair<long, std::string>> found;
  for (const std::string& n : list_dir(dir)) {
    if (n.size() <= prefix.size() + suffix.size() || n.compare(0, prefix.size(), prefix) != 0 ||
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string num = n.substr(prefix.size(), n.size() - prefix.size() - suffix.size());
    if (num.find_first_not_of("0123456789") != std::string::npos) continue;
    found.emplace_back(std::atol(num.c_str()), dir + "/" + n);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

// ------------------------------------------------------------------------------------------------
// TensorProto decoding, written here independently of the converter's own decoder so that the
// test data does not pass through the code under test.
// ------------------------------------------------------------------------------------------------

float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float mag;
  if (exp == 0) mag = std::ldexp(static_cast<float>(mant), -24);              // zero / subnormal
  else if (exp == 31) mag = mant ? NAN : INFINITY;                              // inf / nan
  else mag = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  uint32_t bits;
  std::memcpy(&bits, &mag, 4);
  bits |= sign;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Nearest fp16 value (round to nearest even, overflow to inf) of f, as float.
float round_to_half(float f) {
  if (std::isnan(f) || std::isinf(f)) return f;
  const float a = std::fabs(f);
  if (a >= 65520.f) return std::copysign(INFINITY, f);
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  // fp16 keeps 11 significant bits for normals (e >= -13); below that the step is 2^-24.
  const int step_exp = std::max(e - 11, -24);
  const float q = std::nearbyint(std::ldexp(a, -step_exp));  // default rounding mode: to nearest even
  return std::copysign(std::ldexp(q, step_exp), f);
}

bool is_float_type(int t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::DOUBLE;
}

// Element types this suite can feed and compare. Strings, bfloat16, the 8/4-bit floats and ints,
// complex and uint64 (the IR has no such tensors) are out of scope.
bool elem_type_supported(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::FLOAT16: case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32:
    case onnx::TensorProto::INT64: case onnx::TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

const char* elem_type_name(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return "float";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT16: return "uint16";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::STRING: return "string";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::DOUBLE: return "double";
    case onnx::TensorProto::UINT32: return "uint32";
    case onnx::TensorProto::UINT64: return "uint64";
    case onnx::TensorProto::COMPLEX64: return "complex64";
    case onnx::TensorProto::COMPLEX128: return "complex128";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    default: return "other";
  }
}

// The rknn type a tensor of ONNX element type t is fed as, and reported as by the runtime.
rknn_tensor_type feed_type(int t) {
  switch (t) {
    case onnx::TensorProto::INT8: return RKNN_TENSOR_INT8;
    case onnx::TensorProto::UINT8: return RKNN_TENSOR_UINT8;
    case onnx::TensorProto::INT16: return RKNN_TENSOR_INT16;
    case onnx::TensorProto::UINT16: return RKNN_TENSOR_UINT16;
    case onnx::TensorProto::INT32: return RKNN_TENSOR_INT32;
    case onnx::TensorProto::UINT32: return RKNN_TENSOR_UINT32;
    case onnx::TensorProto::INT64: return RKNN_TENSOR_INT64;
    case onnx::TensorProto::BOOL: return RKNN_TENSOR_BOOL;
    default: return RKNN_TENSOR_FLOAT32;  // float, float16 and double are fed as float32
  }
}

// A decoded test tensor. Float types keep their values in `f` (double: exact for all of them);
// integer and bool types in `i` (exact for int64).
struct TestTensor {
  onnx::TensorProto proto;  // as stored (for inputs frozen into initializers)
  std::string name;
  int elem_type = 0;
  orknn::Shape dims;
  std::vector<double> f;
  std::vector<int64_t> i;
  size_t numel() const { return is_float_type(elem_type) ? f.size() : i.size(); }
};

template <typename T> T read_le(const std::string& raw, size_t k) {
  T v;
  std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
  return v;
}

bool decode_tensor(const onnx::TensorProto& t, TestTensor* out, std::string* err) {
  out->name = t.name();
  out->elem_type = t.data_type();
  out->dims.assign(t.dims().begin(), t.dims().end());
  if (!elem_type_supported(t.data_type())) {
    *err = std::string("element type ") + elem_type_name(t.data_type()) + " is not supported by this suite";
    return false;
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    *err = "external data in a test tensor";
    return false;
  }
  int64_t n = 1;
  for (int64_t d : out->dims) n *= d;
  const size_t count = static_cast<size_t>(n);
  const bool raw = t.has_raw_data();
  const std::string& r = t.raw_data();
  auto need_raw = [&](size_t elem) {
    if (r.size() != count * elem) {
      *err = "raw_data holds " + std::to_string(r.size()) + " bytes, expected " + std::to_string(count * elem);
      return false;
    }
    return true;
  };
  auto need_typed = [&](int have) {
    if (static_cast<size_t>(have) != count) {
      *err = "typed data holds " + std::to_string(have) + " values, expected " + std::to_string(count);
      return false;
    }
    return true;
  };
  out->f.clear();
  out->i.clear();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (raw) { if (!need_raw(4)) return false; for (size_t k = 0; k < count; ++k) out->f.push_back(read_le<float>(r, k)); }
      else { if (!need_typed(t.float_data_size())) return false; for (float v : t.float_data()) out->f.push_back(v); }
      return true;
    case onnx::TensorProto::DOUBLE:
      if (raw) { if (!need_raw(8)) return false; for (size_t k = 0; k < count; ++k) out->f.push_back(read_le<double>(r, k)); }
      else { if (!need_typed(t.double_data_size())) return false; for (double v : t.double_data()) out->f.push_back(v); }
      return true;
    case onnx::TensorProto::FLOAT16:
      if (raw) { if (!need_raw(2)) return false; for (size_t k = 0; k < count; ++k) out->f.push_back(half_bits_to_float(read_le<uint16_t>(r, k))); }
      else { if (!need_typed(t.int32_data_size())) return false; for (int32_t v : t.int32_data()) out->f.push_back(half_bits_to_float(static_cast<uint16_t>(v))); }
      return true;
    case onnx::TensorProto::INT64:
      if (raw) { if (!need_raw(8)) return false; for (size_t k = 0; k < count; ++k) out->i.push_back(read_le<int64_t>(r, k)); }
      else { if (!need_typed(t.int64_data_size())) return false; for (int64_t v : t.int64_data()) out->i.push_back(v); }
      return true;
    case onnx::TensorProto::UINT32:
      if (raw) { if (!need_raw(4)) return false; for (size_t k = 0; k < count; ++k) out->i.push_back(read_le<uint32_t>(r, k)); }
      else { if (!need_typed(t.uint64_data_size())) return false; for (uint64_t v : t.uint64_data()) out->i.push_back(static_cast<int64_t>(v)); }
      return true;
    default: {  // int32 and the narrower integer types, bool: int32_data when not raw
      size_t elem = t.data_type() == onnx::TensorProto::INT32 ? 4
                    : (t.data_type() == onnx::TensorProto::INT16 || t.data_type() == onnx::TensorProto::UINT16) ? 2 : 1;
      if (raw) {
        if (!need_raw(elem)) return false;
        for (size_t k = 0; k < count; ++k) {
          int64_t v = 0;
          switch (t.data_type()) {
            case onnx::TensorProto::INT32: v = read_le<int32_t>(r, k); break;
            case onnx::TensorProto::INT16: v = read_le<int16_t>(r, k); break;
            case onnx::TensorProto::UINT16: v = read_le<uint16_t>(r, k); break;
            case onnx::TensorProto::INT8: v = read_le<int8_t>(r, k); break;
            case onnx::TensorProto::BOOL: v = read_le<uint8_t>(r, k) != 0; break;
            default: v = read_le<uint8_t>(r, k); break;
          }
          out->i.push_back(v);
        }
      } else {
        if (!need_typed(t.int32_data_size())) return false;
        for (int32_t v : t.int32_data()) out->i.push_back(t.data_type() == onnx::TensorProto::BOOL ? (v != 0) : v);
      }
      return true;
    }
  }
}

bool load_test_tensor(const std::string& path, TestTensor* out, std::string* err) {
  std::string bytes;
  if (!read_file(path, &bytes)) { *err = "cannot read " + path; return false; }
  onnx::TensorProto& t = out->proto;
  if (!t.ParseFromString(bytes)) { *err = "cannot parse " + path + " as a TensorProto"; return false; }
  std::string why;
  if (!decode_tensor(t, out, &why)) { *err = path + ": " + why; return false; }
  return true;
}

// Bytes of a test tensor in the rknn type it is fed as.
std::vector<uint8_t> feed_bytes(const TestTensor& t, rknn_tensor_type type) {
  std::vector<uint8_t> b;
  const size_t n = t.numel();
  auto put = [&](auto v) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof(v));
  };
  for (size_t k = 0; k < n; ++k) {
    switch (type) {
      case RKNN_TENSOR_FLOAT32: put(static_cast<float>(t.f[k])); break;
      case RKNN_TENSOR_INT8: put(static_cast<int8_t>(t.i[k])); break;
      case RKNN_TENSOR_UINT8: case RKNN_TENSOR_BOOL: put(static_cast<uint8_t>(t.i[k])); break;
      case RKNN_TENSOR_INT16: put(static_cast<int16_t>(t.i[k])); break;
      case RKNN_TENSOR_UINT16: put(static_cast<uint16_t>(t.i[k])); break;
      case RKNN_TENSOR_INT32: put(static_cast<int32_t>(t.i[k])); break;
      case RKNN_TENSOR_UINT32: put(static_cast<uint32_t>(t.i[k])); break;
      default: put(static_cast<int64_t>(t.i[k])); break;
    }
  }
  return b;
}

// Reads element k of a runtime output buffer of integer/bool type `type`.
int64_t load_int(const void* buf, rknn_tensor_type type, size_t k) {
  switch (type) {
    case RKNN_TENSOR_INT8: return static_cast<const int8_t*>(buf)[k];
    case RKNN_TENSOR_UINT8: return static_cast<const uint8_t*>(buf)[k];
    case RKNN_TENSOR_BOOL: return static_cast<const uint8_t*>(buf)[k];
    case RKNN_TENSOR_INT16: return static_cast<const int16_t*>(buf)[k];
    case RKNN_TENSOR_UINT16: return static_cast<const uint16_t*>(buf)[k];
    case RKNN_TENSOR_INT32: return static_cast<const int32_t*>(buf)[k];
    case RKNN_TENSOR_UINT32: return static_cast<const uint32_t*>(buf)[k];
    default: return static_cast<const int64_t*>(buf)[k];
  }
}

std::string dims_str(const orknn::Shape& s) {
  std::string r = "[";
  for (size_t k = 0; k < s.size(); ++k) r += (k ? "," : "") + std::to_string(s[k]);
  return r + "]";
}

// ------------------------------------------------------------------------------------------------
// Discovery and scope
// ------------------------------------------------------------------------------------------------

struct Case {
  std::string dir, name, path;
  std::string id;          // "<dir>/<name>", the key used in unsupported.txt
  std::string test_name;   // gtest parameter name
  std::vector<std::string> ops;  // distinct op types of the model
  bool in_scope = false;
  std::string scope_reason;  // why it is out of scope
  std::string scope_kind;    // "op", "dtype", "training", "domain", "model"
  bool listed = false;       // in unsupported.txt
  std::string listed_reason;
};

// Ops whose use in training mode makes the outputs random or otherwise not inference semantics.
std::string training_mode_reason(const onnx::GraphProto& g) {
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  for (const auto& n : g.node()) {
    if (n.op_type() == "BatchNormalization") {
      for (const auto& a : n.attribute())
        if (a.name() == "training_mode" && a.i() != 0) return "BatchNormalization in training mode";
      if (n.output_size() > 1) return "BatchNormalization with training outputs (running mean/var)";
    }
    if (n.op_type() == "Dropout" && n.input_size() >= 3 && !n.input(2).empty() && !initializers.count(n.input(2)))
      return "Dropout with a training_mode input (random mask)";
  }
  return "";
}

std::string value_type_problem(const onnx::ValueInfoProto& v, const char* what) {
  if (!v.type().has_tensor_type()) return std::string(what) + " '" + v.name() + "' is not a tensor (sequence/map/optional)";
  int t = v.type().tensor_type().elem_type();
  if (!elem_type_supported(t)) return std::string(what) + " '" + v.name() + "' has element type " + elem_type_name(t);
  return "";
}

// Double data is fed and computed as float32 (the IR has no double); a value beyond float32's range
// cannot be fed or represented at all. Names the first such tensor of the case's data, or "".
std::string double_beyond_float(const std::string& case_path) {
  for (const std::string& dir : numbered_files(case_path, "test_data_set_", "")) {
    for (const char* prefix : {"input_", "output_"})
      for (const std::string& f : numbered_files(dir, prefix, ".pb")) {
        TestTensor t;
        std::string err;
        if (!load_test_tensor(f, &t, &err) || t.elem_type != onnx::TensorProto::DOUBLE) continue;
        for (double v : t.f)
          if (std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max())
            return "double data beyond float32's range (" + f.substr(case_path.size() + 1) +
                   "); double is computed as float32";
      }
  }
  return "";
}

void classify(Case* c) {
  std::string bytes;
  onnx::ModelProto m;
  if (!read_file(c->path + "/model.onnx", &bytes) || !m.ParseFromString(bytes)) {
    c->scope_kind = "model";
    c->scope_reason = "model.onnx cannot be read";
    return;
  }
  std::set<std::string> ops;
  std::string missing;
  for (const auto& n : m.graph().node()) {
    ops.insert(n.op_type());
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      if (c->scope_kind.empty()) {
        c->scope_kind = "domain";
        c->scope_reason = "op " + n.op_type() + " of domain " + n.domain();
      }
    } else if (!op_in_scope(n.op_type()) && missing.find(n.op_type()) == std::string::npos) {
      missing += (missing.empty() ? "" : ",") + n.op_type();
    }
  }
  c->ops.assign(ops.begin(), ops.end());
  if (!c->scope_kind.empty()) return;
  if (!missing.empty()) {
    c->scope_kind = "op";
    c->scope_reason = "op not in op_list: " + missing;
    return;
  }
  std::set<std::string> initializers;
  for (const auto& t : m.graph().initializer()) initializers.insert(t.name());
  for (const auto& v : m.graph().input()) {
    if (initializers.count(v.name())) continue;
    std::string p = value_type_problem(v, "input");
    if (!p.empty()) { c->scope_kind = "dtype"; c->scope_reason = p; return; }
  }
  for (const auto& v : m.graph().output()) {
    std::string p = value_type_problem(v, "output");
    if (!p.empty()) { c->scope_kind = "dtype"; c->scope_reason = p; return; }
  }
  std::string tr = training_mode_reason(m.graph());
  if (!tr.empty()) { c->scope_kind = "training"; c->scope_reason = tr; return; }
  if (numbered_files(c->path, "test_data_set_", "").empty()) {
    c->scope_kind = "model";
    c->scope_reason = "no test_data_set_N directory";
    return;
  }
  std::string big = double_beyond_float(c->path);
  if (!big.empty()) { c->scope_kind = "dtype"; c->scope_reason = big; return; }
  c->in_scope = true;
}

std::string sanitize(const std::string& s) {
  std::string r;
  for (char ch : s) r += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return r;
}

struct ListEntry {
  std::string reason;
  int line = 0;
};

struct Discovery {
  std::vector<Case> cases;
  std::map<std::string, size_t> by_id;
  std::map<std::string, ListEntry> unsupported;  // from unsupported.txt
  std::vector<std::string> list_errors;          // malformed lines
  bool data_present = false;
};

void load_unsupported(Discovery* d) {
  std::ifstream f(unsupported_list_path());
  std::string line;
  int lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    size_t hash = line.find('#');
    std::string body = line.substr(0, hash);
    size_t b = body.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    size_t e = body.find_first_of(" \t", b);
    std::string id = body.substr(b, e == std::string::npos ? std::string::npos : e - b);
    std::string reason;
    if (e != std::string::npos) {
      size_t rb = body.find_first_not_of(" \t", e);
      if (rb != std::string::npos) reason = body.substr(rb);
      while (!reason.empty() && (reason.back() == ' ' || reason.back() == '\r' || reason.back() == '\t')) reason.pop_back();
    }
    if (reason.empty())
      d->list_errors.push_back("line " + std::to_string(lineno) + ": '" + id + "' has no reason");
    if (d->unsupported.count(id))
      d->list_errors.push_back("line " + std::to_string(lineno) + ": '" + id + "' is listed twice");
    d->unsupported[id] = ListEntry{reason, lineno};
  }
}

const Discovery& discovery() {
  static const Discovery* d = [] {
    auto* r = new Discovery();
    const std::string root = data_root();
    r->data_present = is_dir(root + "/node");
    std::set<std::string> names;
    for (const char* dir : kCaseDirs) {
      for (const std::string& name : list_dir(root + "/" + dir)) {
        Case c;
        c.dir = dir;
        c.name = name;
        c.path = root + "/" + dir + "/" + name;
        if (!is_dir(c.path)) continue;
        c.id = c.dir + "/" + c.name;
        std::string short_name = name.compare(0, 5, "test_") == 0 ? name.substr(5) : name;
        c.test_name = sanitize(c.dir + "_" + short_name);
        while (!names.insert(c.test_name).second) c.test_name += "_";
        classify(&c);
        r->by_id[c.id] = r->cases.size();
        r->cases.push_back(std::move(c));
      }
    }
    load_unsupported(r);
    for (auto& kv : r->unsupported) {
      auto it = r->by_id.find(kv.first);
      if (it == r->by_id.end()) continue;
      Case& c = r->cases[it->second];
      c.listed = true;
      c.listed_reason = kv.second.reason;
    }
    return r;
  }();
  return *d;
}

// Ids of the in-scope cases: the parameters of the OnnxNode tests.
std::vector<std::string> in_scope_cases() {
  std::vector<std::string> v;
  for (const Case& c : discovery().cases)
    if (c.in_scope) v.push_back(c.id);
  return v;
}

// ------------------------------------------------------------------------------------------------
// Running one case
// ------------------------------------------------------------------------------------------------

struct Outcome {
  bool pass = false;
  std::string stage;    // convert, write, load, init, inputs, run, outputs, compare, data, crash, timeout
  std::string message;  // first error
};

Outcome fail(const std::string& stage, const std::string& msg) { return Outcome{false, stage, msg}; }

// Compares a float output with the expected values: |got - exp| <= atol + rtol * |exp|, NaN
// matches NaN, infinities must match exactly (numpy.testing.assert_allclose semantics).
std::string compare_float(const std::string& what, const TestTensor& exp, const float* got, const Tolerance& tol) {
  const bool as_half = exp.elem_type == onnx::TensorProto::FLOAT16;
  size_t bad = 0, first = 0;
  double max_err = 0;
  for (size_t k = 0; k < exp.f.size(); ++k) {
    const double e = exp.f[k];
    const double g = as_half ? round_to_half(got[k]) : got[k];
    bool ok;
    if (std::isnan(e)) ok = std::isnan(g);
    else if (std::isinf(e)) ok = g == e;
    else ok = std::isfinite(g) && std::fabs(g - e) <= tol.atol + tol.rtol * std::fabs(e);
    if (!ok) {
      if (bad++ == 0) first = k;
      if (std::isfinite(g) && std::isfinite(e)) max_err = std::max(max_err, std::fabs(g - e));
    }
  }
  if (!bad) return "";
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "%s: %zu of %zu values differ (rtol %g, atol %g); first at flat index %zu: got %.9g, expected %.9g; "
                "max abs error %.3g",
                what.c_str(), bad, exp.f.size(), tol.rtol, tol.atol, first,
                as_half ? round_to_half(got[first]) : got[first], exp.f[first], max_err);
  return buf;
}

std::string compare_int(const std::string& what, const TestTensor& exp, const void* got, rknn_tensor_type type) {
  size_t bad = 0, first = 0;
  for (size_t k = 0; k < exp.i.size(); ++k)
    if (load_int(got, type, k) != exp.i[k] && bad++ == 0) first = k;
  if (!bad) return "";
  return what + ": " + std::to_string(bad) + " of " + std::to_string(exp.i.size()) +
         " values differ; first at flat index " + std::to_string(first) + ": got " +
         std::to_string(load_int(got, type, first)) + ", expected " + std::to_string(exp.i[first]);
}

bool type_matches(int elem_type, rknn_tensor_type reported) {
  if (is_float_type(elem_type)) return reported == RKNN_TENSOR_FLOAT16 || reported == RKNN_TENSOR_FLOAT32;
  return reported == feed_type(elem_type);
}

struct Converted {
  std::unique_ptr<orknn::Context> ctx;
};

// Converts the case's model for one data set: frozen inputs become initializers; dynamic input
// dims are pinned to the test data's (static declared shapes are left to the converter).
Outcome convert_and_load(const Case& c, const onnx::ModelProto& m, const std::vector<TestTensor>& fed,
                         const std::vector<TestTensor>& frozen, Converted* out) {
  orknn::ConvertOptions opts;
  opts.platform = "rk3588";
  opts.precision = orknn::FloatPrecision::kFp32;
  std::map<std::string, const onnx::ValueInfoProto*> declared;
  for (const auto& v : m.graph().input()) declared[v.name()] = &v;
  for (const TestTensor& t : fed) {
    auto it = declared.find(t.name);
    bool is_static = it != declared.end() && it->second->type().tensor_type().has_shape();
    if (is_static)
      for (const auto& d : it->second->type().tensor_type().shape().dim())
        if (!d.has_dim_value()) is_static = false;
    if (!is_static) opts.input_shapes[t.name] = t.dims;
  }
  orknn::Graph g;
  orknn::Status st;
  if (frozen.empty()) {
    st = orknn::convert_onnx(c.path + "/model.onnx", opts, &g);
  } else {
    onnx::ModelProto fm = m;
    std::set<std::string> names;
    for (const TestTensor& t : frozen) {
      names.insert(t.name);
      onnx::TensorProto* init = fm.mutable_graph()->add_initializer();
      *init = t.proto;
      init->set_name(t.name);
    }
    auto* inputs = fm.mutable_graph()->mutable_input();
    for (int k = inputs->size() - 1; k >= 0; --k)
      if (names.count(inputs->Get(k).name())) inputs->DeleteSubrange(k, 1);
    std::string bytes;
    if (!fm.SerializeToString(&bytes)) return fail("data", "cannot serialise the model with frozen inputs");
    st = orknn::convert_onnx_bytes(bytes.data(), bytes.size(), opts, &g);
  }
  if (!st.ok()) return fail("convert", st.message());
  std::vector<uint8_t> bytes;
  st = orknn::write_model(g, &bytes);
  if (!st.ok()) return fail("write", st.message());
  std::shared_ptr<const orknn::Model> model;
  st = orknn::load_model_from_buffer(bytes.data(), bytes.size(), &model);
  if (!st.ok()) return fail("load", st.message());
  st = orknn::Context::create(model, 0, &out->ctx);
  if (!st.ok()) return fail("init", st.message());
  return Outcome{true, "", ""};
}

Outcome run_data_set(const Case& c, orknn::Context& ctx, const std::vector<TestTensor>& inputs,
                     const std::vector<TestTensor>& expected, const std::string& set_name) {
  // Inputs, by name (the converter keeps ONNX names).
  std::vector<rknn_input> feeds;
  std::vector<std::vector<uint8_t>> feed_data(inputs.size());
  std::map<std::string, uint32_t> in_index;
  std::string in_names;
  for (uint32_t k = 0; k < ctx.n_inputs(); ++k) {
    rknn_tensor_attr a;
    std::memset(&a, 0, sizeof(a));
    orknn::Status st = ctx.input_attr(k, &a);
    if (!st.ok()) return fail("inputs", st.message());
    in_index[a.name] = k;
    in_names += std::string(in_names.empty() ? "" : ", ") + a.name;
  }
  static uint8_t dummy[8];
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TestTensor& t = inputs[k];
    auto it = in_index.find(t.name);
    if (it == in_index.end())
      return fail("inputs", "the converted model has no input '" + t.name + "' (its inputs: " + in_names + ")");
    rknn_tensor_attr a;
    std::memset(&a, 0, sizeof(a));
    (void)ctx.input_attr(it->second, &a);
    if (a.n_elems != t.numel())
      return fail("inputs", "input '" + t.name + "' has " + std::to_string(a.n_elems) + " elements in the model, the test data " +
                                dims_str(t.dims) + " has " + std::to_string(t.numel()));
    rknn_input in;
    std::memset(&in, 0, sizeof(in));
    in.index = it->second;
    in.type = feed_type(t.elem_type);
    in.fmt = RKNN_TENSOR_NCHW;  // the data is in the model's own (ONNX) layout
    feed_data[k] = feed_bytes(t, in.type);
    in.buf = feed_data[k].empty() ? static_cast<void*>(dummy) : feed_data[k].data();
    in.size = static_cast<uint32_t>(feed_data[k].size());
    feeds.push_back(in);
  }
  if (!feeds.empty()) {
    orknn::Status st = ctx.inputs_set(static_cast<uint32_t>(feeds.size()), feeds.data());
    if (!st.ok()) return fail("inputs", st.message());
  }
  orknn::Status st = ctx.run();
  if (!st.ok()) return fail("run", st.message());

  // Outputs, by name.
  const uint32_t n_out = ctx.n_outputs();
  if (n_out != expected.size())
    return fail("outputs", "the converted model has " + std::to_string(n_out) + " outputs, the test expects " +
                               std::to_string(expected.size()));
  std::vector<rknn_tensor_attr> attrs(n_out);
  std::map<std::string, uint32_t> out_index;
  for (uint32_t k = 0; k < n_out; ++k) {
    std::memset(&attrs[k], 0, sizeof(rknn_tensor_attr));
    st = ctx.output_attr(k, &attrs[k]);
    if (!st.ok()) return fail("outputs", st.message());
    out_index[attrs[k].name] = k;
  }
  std::vector<int> expected_for(n_out, -1);  // output position -> expected tensor
  for (size_t k = 0; k < expected.size(); ++k) {
    auto it = out_index.find(expected[k].name);
    if (it == out_index.end()) return fail("outputs", "the converted model has no output '" + expected[k].name + "'");
    expected_for[it->second] = static_cast<int>(k);
  }
  std::vector<rknn_output> outs(n_out);
  for (uint32_t k = 0; k < n_out; ++k) {
    std::memset(&outs[k], 0, sizeof(rknn_output));
    outs[k].want_float = is_float_type(expected[static_cast<size_t>(expected_for[k])].elem_type) ? 1 : 0;
  }
  st = ctx.outputs_get(n_out, outs.data());
  if (!st.ok()) return fail("outputs", st.message());
  Outcome result{true, "", ""};
  const Tolerance tol = tolerance_for(c.id);
  for (uint32_t k = 0; k < n_out && result.pass; ++k) {
    const TestTensor& exp = expected[static_cast<size_t>(expected_for[k])];
    const rknn_tensor_attr& a = attrs[k];
    const std::string what = set_name + " output '" + exp.name + "'";
    orknn::Shape got_dims(a.dims, a.dims + a.n_dims);
    if (got_dims != exp.dims) {
      result = fail("compare", what + ": shape " + dims_str(got_dims) + ", expected " + dims_str(exp.dims));
    } else if (!type_matches(exp.elem_type, a.type)) {
      result = fail("compare", what + ": type " + get_type_string(a.type) + ", expected " + elem_type_name(exp.elem_type));
    } else {
      std::string err = is_float_type(exp.elem_type) ? compare_float(what, exp, static_cast<const float*>(outs[k].buf), tol)
                                                      : compare_int(what, exp, outs[k].buf, a.type);
      if (!err.empty()) result = fail("compare", err);
    }
  }
  (void)ctx.outputs_release(n_out, outs.data());
  return result;
}

Outcome run_case_in_process(const Case& c) {
  // Graph input/output names, for test tensors stored without a name.
  std::string bytes;
  onnx::ModelProto m;
  if (!read_file(c.path + "/model.onnx", &bytes) || !m.ParseFromString(bytes))
    return fail("data", "cannot parse model.onnx");
  std::set<std::string> initializers;
  for (const auto& t : m.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> graph_inputs, graph_outputs;
  for (const auto& v : m.graph().input())
    if (!initializers.count(v.name())) graph_inputs.push_back(v.name());
  for (const auto& v : m.graph().output()) graph_outputs.push_back(v.name());
  const std::set<std::string> freeze = inputs_to_freeze(m.graph());

  std::map<std::string, Converted> converted;  // by input-shape signature
  for (const std::string& set : numbered_files(c.path, "test_data_set_", "")) {
    const std::string set_name = set.substr(set.rfind('/') + 1);
    std::vector<TestTensor> inputs, expected;
    std::string err;
    for (const std::string& f : numbered_files(set, "input_", ".pb")) {
      TestTensor t;
      if (!load_test_tensor(f, &t, &err)) return fail("data", err);
      if (t.name.empty() && inputs.size() < graph_inputs.size()) t.name = graph_inputs[inputs.size()];
      inputs.push_back(std::move(t));
    }
    for (const std::string& f : numbered_files(set, "output_", ".pb")) {
      TestTensor t;
      if (!load_test_tensor(f, &t, &err)) return fail("data", err);
      if (t.name.empty() && expected.size() < graph_outputs.size()) t.name = graph_outputs[expected.size()];
      expected.push_back(std::move(t));
    }
    // Split off the inputs frozen into initializers; the conversion is cached per input shapes
    // and frozen values (data sets of one case usually share both).
    std::vector<TestTensor> fed, frozen;
    std::string signature;
    for (TestTensor& t : inputs) {
      if (freeze.count(t.name)) {
        signature += "=" + t.name + ":" + t.proto.SerializeAsString() + ";";
        frozen.push_back(std::move(t));
      } else {
        signature += t.name + dims_str(t.dims) + ";";
        fed.push_back(std::move(t));
      }
    }
    auto it = converted.find(signature);
    if (it == converted.end()) {
      Converted cv;
      Outcome o = convert_and_load(c, m, fed, frozen, &cv);
      if (!o.pass) return o;
      it = converted.emplace(signature, std::move(cv)).first;
    }
    Outcome o = run_data_set(c, *it->second.ctx, fed, expected, set_name);
    if (!o.pass) return o;
  }
  return Outcome{true, "", ""};
}

Outcome run_case_guarded(const Case& c) {
  try {
    return run_case_in_process(c);
  } catch (const std::exception& e) {
    return fail("exception", e.what());
  } catch (...) {
    return fail("exception", "unknown exception");
  }
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Runs the case in a child process; the parent only collects the outcome.
Outcome run_case(const Case& c) {
  if (env_flag("ORKNN_CONFORMANCE_NO_FORK")) return run_case_guarded(c);
  int fds[2];
  if (::pipe(fds) != 0) return fail("harness", "pipe() failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return fail("harness", "fork() failed");
  }
  if (pid == 0) {
    ::close(fds[0]);
    // Under sanitizers the child keeps stderr for their reports and leaves through exit(), so that
    // LeakSanitizer's check runs; a report turns into a non-zero exit status, a failure below.
    if (!kSanitized && !env_flag("ORKNN_CONFORMANCE_VERBOSE")) {  // the outcome carries the first error already
      int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) ::dup2(devnull, 2);
    }
    Outcome o = run_case_guarded(c);
    std::string msg = std::string(o.pass ? "P" : "F") + o.stage + "\n" + o.message;
    const char* p = msg.data();
    size_t left = msg.size();
    while (left > 0) {
      ssize_t w = ::write(fds[1], p, left);
      if (w <= 0) break;
      p += w;
      left -= static_cast<size_t>(w);
    }
    if (kSanitized) std::exit(0);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(case_timeout_seconds());
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) { timed_out = true; break; }
    pollfd pfd{fds[0], POLLIN, 0};
    int wait_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1;
    int r = ::poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    msg.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return fail("timeout", "did not finish within " + std::to_string(case_timeout_seconds()) + " s");
  if (WIFSIGNALED(status))
    return fail("crash", std::string("crashed with signal ") + std::to_string(WTERMSIG(status)) + " (" +
                             strsignal(WTERMSIG(status)) + ")");
  if (msg.empty()) return fail("crash", "the child exited (status " + std::to_string(WEXITSTATUS(status)) + ") without a result");
  if (WEXITSTATUS(status) != 0)
    return fail("crash", "the child exited with status " + std::to_string(WEXITSTATUS(status)) +
                             " after its result (a sanitizer report: see stderr)");
  Outcome o;
  o.pass = msg[0] == 'P';
  size_t nl = msg.find('\n');
  o.stage = msg.substr(1, nl == std::string::npos ? std::string::npos : nl - 1);
  if (nl != std::string::npos) o.message = msg.substr(nl + 1);
  return o;
}

// ------------------------------------------------------------------------------------------------
// Bookkeeping and summary
// ------------------------------------------------------------------------------------------------

struct Tally {
  int run = 0, passed = 0, listed_failing = 0, unexpected_failures = 0, listed_passing = 0;
  std::map<std::string, std::pair<int, int>> by_dir;  // dir -> (run, passed)
  FILE* report = nullptr;
};

Tally& tally() {
  static Tally t;
  return t;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string r;
  for (const std::string& s : v) r += (r.empty() ? "" : sep) + s;
  return r;
}

std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\t' || ch == '\r') ch = ' ';
  return s;
}

// ORKNN_CONFORMANCE_REPORT=<file>: one tab-separated line per case run (id, result, ops, stage,
// first error, milliseconds); the raw material for unsupported.txt and for op owners.
void record(const Case& c, const Outcome& o, long ms) {
  Tally& t = tally();
  ++t.run;
  ++t.by_dir[c.dir].first;
  if (o.pass) ++t.by_dir[c.dir].second;
  if (o.pass && !c.listed) ++t.passed;
  if (o.pass && c.listed) ++t.listed_passing;
  if (!o.pass && c.listed) ++t.listed_failing;
  if (!o.pass && !c.listed) ++t.unexpected_failures;
  if (!t.report) {
    const char* path = std::getenv("ORKNN_CONFORMANCE_REPORT");
    if (!path || !*path) return;
    t.report = std::fopen(path, "w");
    if (!t.report) return;
  }
  std::fprintf(t.report, "%s\t%s\t%s\t%s\t%s\t%ld\n", c.id.c_str(), o.pass ? "pass" : (c.listed ? "listed" : "FAIL"),
               join(c.ops, ",").c_str(), o.stage.c_str(), one_line(o.message).c_str(), ms);
  std::fflush(t.report);
}

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const Discovery& d = discovery();
    if (!d.data_present) return;
    int in_scope = 0;
    std::map<std::string, int> out_by_kind;
    std::map<std::string, int> missing_ops;
    for (const Case& c : d.cases) {
      if (c.in_scope) { ++in_scope; continue; }
      ++out_by_kind[c.scope_kind];
      if (c.scope_kind == "op") {
        std::string list = c.scope_reason.substr(c.scope_reason.find(':') + 2);
        std::stringstream ss(list);
        std::string op;
        while (std::getline(ss, op, ',')) ++missing_ops[op];
      }
    }
    const Tally& t = tally();
    std::printf("\n[conformance] %zu cases: %d in scope, %zu out of scope (", d.cases.size(), in_scope,
                d.cases.size() - static_cast<size_t>(in_scope));
    bool first = true;
    for (auto& kv : out_by_kind) {
      std::printf("%s%s %d", first ? "" : ", ", kv.first.c_str(), kv.second);
      first = false;
    }
    std::printf(")\n[conformance] run %d: passed %d, listed unsupported (failing as listed) %d, "
                "unexpected failures %d, listed but passing %d\n",
                t.run, t.passed, t.listed_failing, t.unexpected_failures, t.listed_passing);
    std::string per_dir;
    for (auto& kv : t.by_dir)
      per_dir += (per_dir.empty() ? "" : ", ") + kv.first + " " + std::to_string(kv.second.second) + "/" +
                 std::to_string(kv.second.first);
    if (!per_dir.empty()) std::printf("[conformance] passing/run per directory: %s\n", per_dir.c_str());
    std::vector<std::pair<int, std::string>> top;
    for (auto& kv : missing_ops) top.emplace_back(-kv.second, kv.first);
    std::sort(top.begin(), top.end());
    std::string s;
    for (size_t k = 0; k < top.size() && k < 15; ++k)
      s += (k ? ", " : "") + top[k].second + " " + std::to_string(-top[k].first);
    if (!s.empty()) std::printf("[conformance] ops keeping the most cases out of scope: %s\n", s.c_str());
    if (t.report) std::fclose(t.report);
  }
};

::testing::Environment* const g_summary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter());

// ------------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------------

class OnnxNode : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNode, MatchesReference) {
  const Case& c = discovery().cases[discovery().by_id.at(GetParam())];
  const auto t0 = std::chrono::steady_clock::now();
  Outcome o = run_case(c);
  const long ms = static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
  record(c, o, ms);
  const std::string ops = join(c.ops, ",");
  if (c.listed) {
    if (o.pass)
      ADD_FAILURE() << c.id << " [" << ops << "] passes now but is listed in tests/conformance/unsupported.txt ("
                    << c.listed_reason << "): remove it from the list";
    else if (o.stage != "convert")  // a listed case is one the converter refuses, cleanly
      ADD_FAILURE() << c.id << " [" << ops << "] is listed in tests/conformance/unsupported.txt (" << c.listed_reason
                    << ") as refused by the converter, but failed at stage " << o.stage << ": " << o.message;
  } else if (!o.pass) {
    ADD_FAILURE() << c.id << " [" << ops << "] " << o.stage << ": " << o.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Onnx, OnnxNode, ::testing::ValuesIn(in_scope_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return discovery().cases[discovery().by_id.at(info.param)].test_name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxNode);

TEST(OnnxConformance, TestDataPresent) {
  if (!discovery().data_present)
    GTEST_SKIP() << "ONNX test data not found under " << data_root()
                 << " (install Debian's libonnx-testdata or set ORKNN_ONNX_TESTDATA)";
  EXPECT_GT(in_scope_cases().size(), 0u);
}

// unsupported.txt only names in-scope cases that exist, once each, with a reason.
TEST(OnnxConformance, UnsupportedListIsClean) {
  const Discovery& d = discovery();
  if (!d.data_present) GTEST_SKIP() << "no ONNX test data";
  for (const std::string& e : d.list_errors) ADD_FAILURE() << "unsupported.txt " << e;
  for (const auto& kv : d.unsupported) {
    auto it = d.by_id.find(kv.first);
    if (it == d.by_id.end()) {
      ADD_FAILURE() << "unsupported.txt line " << kv.second.line << ": no test case '" << kv.first << "'";
      continue;
    }
    const Case& c = d.cases[it->second];
    if (!c.in_scope)
      ADD_FAILURE() << "unsupported.txt line " << kv.second.line << ": '" << kv.first
                    << "' is out of scope anyway (" << c.scope_reason << "): remove it";
  }
}

// The decoder and the comparison rules of this file, on hand-made values.
TEST(OnnxConformance, HarnessSelfCheck) {
  EXPECT_EQ(half_bits_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_bits_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(half_bits_to_float(0x7c00)));
  EXPECT_EQ(round_to_half(1.0f + std::ldexp(1.0f, -11)), 1.0f);  // tie -> even
  EXPECT_EQ(round_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(round_to_half(70000.f), INFINITY);
  EXPECT_EQ(round_to_half(std::ldexp(1.0f, -26)), 0.0f);
  EXPECT_EQ(round_to_half(std::ldexp(3.0f, -26)), std::ldexp(1.0f, -24));

  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::INT64);
  p.add_dims(2);
  p.add_int64_data(-5);
  p.add_int64_data(int64_t(1) << 60);
  TestTensor t;
  std::string err;
  ASSERT_TRUE(decode_tensor(p, &t, &err)) << err;
  EXPECT_EQ(t.i, (std::vector<int64_t>{-5, int64_t(1) << 60}));
  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::FLOAT16);
  raw.add_dims(1);
  raw.set_raw_data(std::string("\x00\x3c", 2));
  ASSERT_TRUE(decode_tensor(raw, &t, &err)) << err;
  EXPECT_EQ(t.f, std::vector<double>{1.0});
  raw.set_raw_data(std::string("\x00", 1));
  EXPECT_FALSE(decode_tensor(raw, &t, &err));

  TestTensor e;
  e.elem_type = onnx::TensorProto::FLOAT;
  e.f = {1.0, 0.0, NAN, INFINITY};
  const float good[] = {1.0009f, 0.0f, NAN, INFINITY};
  const float bad1[] = {1.0011f, 0.0f, NAN, INFINITY};
  const float bad2[] = {1.0f, 1e-6f, NAN, INFINITY};
  const float bad3[] = {1.0f, 0.0f, 0.0f, INFINITY};
  EXPECT_EQ(compare_float("x", e, good, Tolerance()), "");
  EXPECT_NE(compare_float("x", e, bad1, Tolerance()), "");
  EXPECT_NE(compare_float("x", e, bad2, Tolerance()), "");
  EXPECT_NE(compare_float("x", e, bad3, Tolerance()), "");
}

}  // namespace
