#include "converter/quant/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "common/fp16.h"
#include "common/log.h"
#include "common/threads.h"
#include "runtime/custom_ops.h"
#include "runtime/executor.h"

namespace orknn {

namespace {

// Prefix of the runtime's messages about the callbacks, which name the API function they mimic.
constexpr const char* kCustomCallbacks = "calibration (running the --custom-op-lib callbacks as the runtime does): ";

bool observable(const Tensor& t) { return !t.is_const() && t.dtype == DType::kF32 && t.quant.empty(); }

// Writes one sample buffer (floats) as the input tensor's dtype.
Status to_input_bytes(const Tensor& t, const std::vector<float>& v, std::vector<uint8_t>* bytes) {
  const size_t n = v.size();
  bytes->resize(n * dtype_size(t.dtype));
  uint8_t* dst = bytes->data();
  switch (t.dtype) {
    case DType::kF32: std::memcpy(dst, v.data(), n * 4); return Status::Ok();
    case DType::kF16:
      for (size_t k = 0; k < n; ++k) {
        const uint16_t h = fp32_to_fp16(v[k]);
        std::memcpy(dst + 2 * k, &h, 2);
      }
      return Status::Ok();
    default: break;
  }
  double lo, hi;  // the integer dtype's range
  switch (t.dtype) {
    case DType::kI8: lo = -128; hi = 127; break;
    case DType::kU8: case DType::kBool: lo = 0; hi = 255; break;
    case DType::kI16: lo = -32768; hi = 32767; break;
    case DType::kU16: lo = 0; hi = 65535; break;
    case DType::kI32: lo = -2147483648.0; hi = 2147483647.0; break;
    case DType::kU32: lo = 0; hi = 4294967295.0; break;
    case DType::kI64: lo = -9.2e18; hi = 9.2e18; break;
    default: return ORKNN_ERR(kInvalidParam, "input '%s': dtype %s cannot be fed for calibration", t.name.c_str(), dtype_name(t.dtype));
  }
  const size_t size = dtype_size(t.dtype);
  for (size_t k = 0; k < n; ++k) {
    const double x = v[k];
    if (!(x >= lo && x <= hi))
      return ORKNN_ERR(kInvalidParam, "input '%s' (%s): calibration value %g at element %zu is out of range", t.name.c_str(),
                       dtype_name(t.dtype), x, k);
    // Images or float .npy on an integer input truncate like a C cast.
    const int64_t y = t.dtype == DType::kBool ? (x != 0.0) : static_cast<int64_t>(x);
    std::memcpy(dst + size * k, &y, size);  // little-endian: the low bytes
  }
  return Status::Ok();
}

}  // namespace

Status calibrate(const Graph& float_graph, const std::vector<CalibrationSample>& samples, CalibAlgorithm alg,
                 std::map<int, std::pair<float, float>>* ranges, const std::vector<rknn_custom_op>& custom_ops,
                 bool kl_keep_tails) {
  ranges->clear();
  if (samples.empty()) return ORKNN_ERR(kInvalidParam, "calibration: no samples");
  Graph g = float_graph;  // constants are shared, not copied
  g.precision = FloatPrecision::kFp32;

  for (size_t s = 0; s < samples.size(); ++s) {
    if (samples[s].inputs.size() != g.inputs.size())
      return ORKNN_ERR(kInvalidParam, "calibration sample %zu has %zu inputs, the model has %zu", s,
                       samples[s].inputs.size(), g.inputs.size());
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Tensor& t = g.tensor(g.inputs[i].tensor);
      if (samples[s].inputs[i].size() != static_cast<size_t>(t.numel()))
        return ORKNN_ERR(kInvalidParam, "calibration sample %zu, input %zu ('%s' %s): %zu values, %lld expected", s, i,
                         t.name.c_str(), shape_str(t.shape).c_str(), samples[s].inputs[i].size(),
                         static_cast<long long>(t.numel()));
    }
  }

  // One observer per observed tensor: graph inputs first, then node outputs in graph order.
  std::vector<int> observer_of(g.tensors.size(), -1);
  std::vector<int> observed;  // tensor ids, by observer index
  auto add = [&](int id) {
    if (id < 0 || observer_of[static_cast<size_t>(id)] >= 0 || !observable(g.tensor(id))) return;
    observer_of[static_cast<size_t>(id)] = static_cast<int>(observed.size());
    observed.push_back(id);
  };
  for (const GraphInput& gi : g.inputs) add(gi.tensor);
  for (const Node& n : g.nodes)
    for (int id : n.outputs) add(id);
  std::vector<Observer> observers(observed.size(), Observer(alg, kl_keep_tails));

  // The application's operators of the graph's custom types, registered as the runtime does;
  // declared before the executor, whose kernels point into it.
  CustomOps custom(g);
  std::set<std::string> graph_types, registered;
  for (const Node& n : g.nodes)
    if (n.op == OpId::Custom) graph_types.insert(n.attrs.get_string("custom_type", ""));
  std::vector<rknn_custom_op> used;
  for (const rknn_custom_op& op : custom_ops)
    if (graph_types.count(op.op_type)) {
      used.push_back(op);
      registered.insert(op.op_type);
    }
  if (!used.empty()) {
    Status st = custom.register_ops(used.data(), static_cast<uint32_t>(used.size()));
    if (!st.ok()) return Status(st.code(), kCustomCallbacks + st.message());
  }

  ExecOptions eo;
  eo.allow_fast = true;
  eo.keep_all_tensors = true;
  eo.num_threads = usable_cpus();
  eo.custom_kernel = [&](const Graph& eg, const Node& n) {
    return registered.count(n.attrs.get_string("custom_type", "")) ? custom.make_kernel(eg, n)
                                                                  : create_kernel(eg, n, true, nullptr);
  };
  std::unique_ptr<Executor> runner;
  Status st = Executor::create(g, eo, &runner);
  if (!st.ok()) return Status(st.code(), "calibration: " + st.message());

  auto observe = [&](int id) {
    const int k = observer_of[static_cast<size_t>(id)];
    if (k < 0) return;
    observers[static_cast<size_t>(k)].observe(runner->data_as<float>(id), static_cast<size_t>(g.tensor(id).numel()));
  };
  const int passes = Observer(alg).passes();
  std::vector<uint8_t> bytes;
  for (int pass = 0; pass < passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const CalibrationSample& sample : samples) {
      for (size_t i = 0; i < g.inputs.size(); ++i) {
        ORKNN_RETURN_IF_ERROR(to_input_bytes(g.tensor(g.inputs[i].tensor), sample.inputs[i], &bytes));
        ORKNN_RETURN_IF_ERROR(runner->set_input(i, bytes.data(), bytes.size()));
        observe(g.inputs[i].tensor);
      }
      ORKNN_RETURN_IF_ERROR(runner->run(false, [&](size_t k) {
        if (g.nodes[k].op == OpId::Custom) {
          Status cst = custom.take_run_error();
          if (!cst.ok()) return Status(cst.code(), kCustomCallbacks + cst.message());
        }
        for (int id : g.nodes[k].outputs) observe(id);
        return Status::Ok();
      }));
    }
    for (Observer& o : observers) o.end_pass();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ORKNN_LOGI("calibration pass %d/%d (%s, %s): %zu samples, %zu tensors, %.2f s", pass + 1, passes,
               calib_algorithm_name(alg), pass == 0 ? "min/max" : "histograms", samples.size(), observed.size(), secs);
  }

  for (size_t k = 0; k < observed.size(); ++k) {
    float lo, hi;
    observers[k].range(&lo, &hi);
    (*ranges)[observed[k]] = {lo, hi};
    if (observers[k].nonfinite() > 0)
      ORKNN_LOGW("calibration: tensor '%s' held %llu NaN/inf values (ignored for its range)",
                 g.tensor(observed[k]).name.c_str(), static_cast<unsigned long long>(observers[k].nonfinite()));
  }
  return Status::Ok();
}

}  // namespace orknn

namespace orknn {

namespace {

// The inputs beyond which activation node n is constant: [lo, hi] (infinite where it is not);
// false for nodes that are not such an activation.
bool saturation_interval(const Node& n, double* lo, double* hi) {
  *lo = -std::numeric_limits<double>::infinity();
  *hi = std::numeric_limits<double>::infinity();
  switch (n.op) {
    case OpId::HardSwish:  // x * min(max(x + 3, 0), 6) / 6: 0 for x <= -3
      *lo = -3.0;
      return true;
    case OpId::Relu:
      *lo = 0.0;
      return true;
    case OpId::HardSigmoid: {  // max(0, min(1, alpha * x + beta)): 0 and 1 outside [-beta, 1 - beta] / alpha
      const double alpha = n.attrs.get_float("alpha", 0.2f), beta = n.attrs.get_float("beta", 0.5f);
      if (!(alpha > 0.0) || !std::isfinite(beta)) return false;
      *lo = -beta / alpha;
      *hi = (1.0 - beta) / alpha;
      return true;
    }
    default: return false;
  }
}

}  // namespace

int narrow_saturated_ranges(const Graph& g, std::map<int, std::pair<float, float>>* ranges) {
  // Per tensor: the union of its readers' intervals; a reader that is no such activation (or a
  // graph output) needs every value.
  const double inf = std::numeric_limits<double>::infinity();
  std::map<int, std::pair<double, double>> needed;
  std::set<int> whole;
  for (int out : g.outputs) whole.insert(out);
  for (const Node& n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int t = n.inputs[i];
      if (t < 0) continue;
      double lo, hi;
      if (i != 0 || !saturation_interval(n, &lo, &hi)) {
        whole.insert(t);
        continue;
      }
      auto it = needed.emplace(t, std::make_pair(inf, -inf)).first;
      it->second.first = std::min(it->second.first, lo);
      it->second.second = std::max(it->second.second, hi);
    }
  int narrowed = 0;
  for (const auto& [t, interval] : needed) {
    auto r = ranges->find(t);
    if (whole.count(t) || r == ranges->end()) continue;
    // Keep 0 inside the range (activation_qparams does).
    const float lo = std::min(std::max(r->second.first, static_cast<float>(std::max(interval.first, -3.4e38))), 0.f);
    const float hi = std::max(std::min(r->second.second, static_cast<float>(std::min(interval.second, 3.4e38))), 0.f);
    if (lo == r->second.first && hi == r->second.second) continue;
    r->second = {lo, hi};
    ++narrowed;
  }
  return narrowed;
}

}  // namespace orknn
