// Conversion-time evaluation (converter/onnx/const_eval.h) against ONNX's own expected outputs:
// every ONNX backend node test (Debian libonnx-testdata) of an op the importer evaluates, with its
// graph inputs turned into initializers, must import to constant outputs equal to the case's
// output_*.pb (integers and bool exactly; floats with ONNX's backend tolerance, rtol 1e-3 and
// atol 1e-7). The data is a dependency of the tests (scripts/setup.sh): missing data fails.
#include <gtest/gtest.h>

#include <dirent.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "converter/onnx/const_eval.h"
#include "converter/onnx/importer.h"
#include "converter/onnx/tensor_proto.h"
#include "graph/ir.h"

namespace {

using orknn::DType;
using orknn::onnx_import::TensorBytes;

std::string node_dir() {
  const char* v = std::getenv("ORKNN_ONNX_TESTDATA");
  return std::string(v && *v ? v : "/usr/share/libonnx-testdata/data") + "/node";
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool read_tensor(const std::string& path, onnx::TensorProto* t) {
  std::string bytes;
  return read_file(path, &bytes) && t->ParseFromString(bytes);
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> r;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') r.push_back(e->d_name);
    closedir(d);
  }
  std::sort(r.begin(), r.end());
  return r;
}

double element(const uint8_t* p, DType t, size_t i) {
  switch (t) {
    case DType::kF32: { float v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::kI8: return static_cast<int8_t>(p[i]);
    case DType::kU8: case DType::kBool: return p[i];
    case DType::kI16: { int16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case DType::kU16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case DType::kI32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::kU32: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    default: return NAN;
  }
}

// Empty when the constant `got` equals `want`, else what differs.
std::string compare(const orknn::Tensor& got, const TensorBytes& want) {
  if (!got.is_const()) return "output '" + got.name + "' is not a constant";
  if (got.shape != want.shape) return "shape " + orknn::shape_str(got.shape) + ", want " + orknn::shape_str(want.shape);
  if (got.dtype != want.dtype) return std::string("type ") + orknn::dtype_name(got.dtype) + ", want " + orknn::dtype_name(want.dtype);
  const size_t n = static_cast<size_t>(got.numel());
  if (got.dtype == DType::kI64) {
    // Compared as bit patterns: uint64 is held as int64 (tensor_proto.h).
    if (n && std::memcmp(got.data.ptr, want.bytes.data(), n * 8) != 0) return "int64 values differ";
    return "";
  }
  for (size_t i = 0; i < n; ++i) {
    double g = element(got.data.ptr, got.dtype, i), w = element(want.bytes.data(), want.dtype, i);
    bool ok = got.dtype == DType::kF32 ? (std::isnan(w) ? std::isnan(g) : std::fabs(g - w) <= 1e-7 + 1e-3 * std::fabs(w))
                                       : g == w;
    if (!ok) return "element " + std::to_string(i) + ": " + std::to_string(g) + ", want " + std::to_string(w);
  }
  return "";
}

// Runs one case directory; returns "" on success, else the failure.
std::string run_case(const std::string& dir) {
  std::string bytes;
  onnx::ModelProto m;
  if (!read_file(dir + "/model.onnx", &bytes) || !m.ParseFromString(bytes)) return "cannot read model.onnx";
  for (const std::string& set : list_dir(dir)) {
    if (set.rfind("test_data_set_", 0) != 0) continue;
    onnx::ModelProto mc = m;
    onnx::GraphProto* g = mc.mutable_graph();
    for (int i = 0; i < g->input_size(); ++i) {
      onnx::TensorProto* t = g->add_initializer();
      if (!read_tensor(dir + "/" + set + "/input_" + std::to_string(i) + ".pb", t)) return set + ": missing input " + std::to_string(i);
      t->set_name(g->input(i).name());
    }
    g->clear_input();
    orknn::Graph graph;
    orknn::onnx_import::ImportOptions opts;
    orknn::Status st = orknn::onnx_import::import_model(mc, opts, &graph, nullptr);
    if (!st.ok()) return set + ": import failed: " + st.message();
    if (graph.outputs.size() != static_cast<size_t>(g->output_size())) return set + ": output count differs";
    for (size_t j = 0; j < graph.outputs.size(); ++j) {
      onnx::TensorProto tp;
      if (!read_tensor(dir + "/" + set + "/output_" + std::to_string(j) + ".pb", &tp)) return set + ": missing output";
      TensorBytes want;
      st = orknn::onnx_import::read_tensor_proto(tp, "", "expected output", &want);
      if (!st.ok()) return set + ": " + st.message();
      std::string diff = compare(graph.tensor(graph.outputs[j]), want);
      if (!diff.empty()) return set + ": output " + std::to_string(j) + ": " + diff;
    }
  }
  return "";
}

// The single op of a case's model, or "" for a model with several nodes (the *_expanded cases).
std::string single_op(const std::string& dir) {
  std::string bytes;
  onnx::ModelProto m;
  if (!read_file(dir + "/model.onnx", &bytes) || !m.ParseFromString(bytes) || m.graph().node_size() != 1) return "";
  return m.graph().node(0).op_type();
}

// Cases the IR cannot represent, with the reason. This list only shrinks.
const std::map<std::string, std::string> kExcluded = {
};

TEST(ConstEval, OnnxBackendCasesOfEveryEvaluatedOp) {
  const std::vector<std::string> cases = list_dir(node_dir());
  ASSERT_FALSE(cases.empty()) << "no ONNX backend test data under " << node_dir()
                              << " (Debian package libonnx-testdata; scripts/setup.sh installs it)";
  std::map<std::string, int> passed_per_op;
  int passed = 0;
  for (const std::string& c : cases) {
    const std::string op = single_op(node_dir() + "/" + c);
    if (op.empty() || !orknn::onnx_import::is_const_eval_op(op)) continue;
    if (kExcluded.count(c)) continue;
    std::string err = run_case(node_dir() + "/" + c);
    EXPECT_EQ(err, "") << c << " (" << op << ")";
    if (err.empty()) ++passed_per_op[op], ++passed;
  }
  for (const std::string& op : orknn::onnx_import::const_eval_ops())
    EXPECT_GT(passed_per_op[op], 0) << op << ": no ONNX backend case passed";
  // The count of Debian's libonnx-testdata 1.12 cases: a change of the data or of the op list must
  // update it (and docs/ops.md) knowingly.
  EXPECT_EQ(passed, 98);
}

}  // namespace
