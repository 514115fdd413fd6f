#include "kernels/xnnpack/xnnpack_common.h"

#include <cmath>
#include <map>
#include <mutex>

#include "common/log.h"
#include "kernels/quant_util.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/int8_compute.h"

namespace orknn::xnnpack {

bool available() {
  static const bool ok = [] {
    const xnn_status s = xnn_initialize(nullptr);  // the default allocator
    if (s != xnn_status_success)
      ORKNN_LOGD("XNNPACK is not available on this CPU (xnn_initialize: %d): its kernels are not used", int(s));
    return s == xnn_status_success;
  }();
  return ok;
}

bool qc8_params_ok(const Tensor& x, const QuantParams& w, const Tensor& y, const Attrs& attrs, int64_t channels) {
  const QuantScalar qx = per_tensor(x), qy = per_tensor(y);
  auto positive_normal = [](float s) { return std::isnormal(s) && s > 0.f; };
  if (!positive_normal(qx.scale) || !positive_normal(qy.scale)) return false;
  for (float sw : w.scale)
    if (!positive_normal(sw)) return false;
  for (float m : requant_multipliers(qx.scale, w, qy.scale, channels))
    if (!(m >= 0x1.0p-32f && m < 256.f)) return false;
  const Int8Clamp c = int8_clamp_of_fused_act(attrs, qy.scale, qy.zp);
  return c.lo < c.hi;
}

std::vector<float> qc8_kernel_scales(const QuantParams& w, int64_t channels) {
  if (w.scale.size() == 1) return std::vector<float>(static_cast<size_t>(channels), w.scale[0]);
  return std::vector<float>(w.scale.begin(), w.scale.begin() + channels);
}

FloatClamp float_clamp_of_fused_act(const Attrs& attrs) {
  const FusedActivation act = read_fused_act(attrs);
  FloatClamp c;
  c.clamp = act.act == FusedAct::kNone || act.act == FusedAct::kRelu ||
            (act.act == FusedAct::kClip && act.alpha < act.beta);  // false for NaN bounds too
  if (act.act == FusedAct::kRelu) c.lo = 0.f;
  if (act.act == FusedAct::kClip && c.clamp) c.lo = act.alpha, c.hi = act.beta;
  return c;
}

bool is_graph_input(const Graph& g, int t) {
  for (const GraphInput& in : g.inputs)
    if (in.tensor == t) return true;
  return false;
}

pthreadpool_t thread_pool(int threads) {
  if (threads <= 1) return nullptr;
  static std::mutex mu;
  static std::map<int, pthreadpool_t>* pools = new std::map<int, pthreadpool_t>();  // kept to the end
  std::lock_guard<std::mutex> lock(mu);
  pthreadpool_t& pool = (*pools)[threads];
  if (!pool) pool = pthreadpool_create(static_cast<size_t>(threads));
  return pool;  // nullptr if the threads could not be made: XNNPACK then runs on the caller
}

}  // namespace orknn::xnnpack
