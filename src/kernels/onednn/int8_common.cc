#include "kernels/onednn/int8_common.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "kernels/quant_util.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/int8_compute.h"

namespace orknn::onednn {
namespace {

bool per_tensor_i8(const Tensor& t) {
  return t.dtype == DType::kI8 && t.quant.scale.size() == 1 && t.quant.zero_point.size() <= 1 &&
         std::isfinite(t.quant.scale[0]) && t.quant.scale[0] > 0.f &&
         (t.quant.zero_point.empty() || (t.quant.zero_point[0] >= -128 && t.quant.zero_point[0] <= 127));
}

}  // namespace

bool read_int8_quant(const Graph& g, const Node& n, int64_t out_channels, int weight_axis, Int8Quant* q) {
  const Tensor* x = g.input(n, 0);
  const Tensor* w = g.input(n, 1);
  if (!x || !w || n.outputs.empty() || n.outputs[0] < 0) return false;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!per_tensor_i8(*x) || !per_tensor_i8(y)) return false;
  if (w->dtype != DType::kI8 || !w->is_const() || w->quant.empty()) return false;
  if (w->data.size < static_cast<size_t>(w->numel())) return false;
  const size_t ns = w->quant.scale.size();
  if (ns != 1) {
    const int64_t rank = static_cast<int64_t>(w->shape.size());
    const int64_t axis = w->quant.axis < 0 ? w->quant.axis + rank : w->quant.axis;
    if (static_cast<int64_t>(ns) != out_channels || axis != weight_axis) return false;
  }
  for (float s : w->quant.scale)
    if (!std::isfinite(s) || !(s > 0.f)) return false;
  for (int32_t z : w->quant.zero_point)
    if (z != 0) return false;  // weights are symmetric (docs/numerics.md)

  const QuantScalar xq = per_tensor(*x), yq = per_tensor(y);
  q->s_x = xq.scale;
  q->zp_x = xq.zp;
  q->s_y = yq.scale;
  q->zp_y = yq.zp;
  const FusedActivation act = read_fused_act(n.attrs);
  const bool value_act = n.op == OpId::Conv && is_int8_value_act(act.act);
  q->act = value_act ? act : FusedActivation{};
  q->mult = requant_multipliers(q->s_x, w->quant, value_act ? 1.f : q->s_y, out_channels);
  for (float m : q->mult)
    if (!std::isfinite(m)) return false;

  q->lo = -128;
  q->hi = 127;
  if (value_act) return true;
  switch (act.act) {
    case FusedAct::kNone:
      if (!n.attrs.get_string("fused_act", "").empty()) return false;  // a name we do not know
      break;
    case FusedAct::kRelu: q->lo = q->zp_y; break;
    case FusedAct::kClip:
      if (std::isnan(act.alpha) || std::isnan(act.beta)) return false;
      q->lo = quantize_value(act.alpha, q->s_y, q->zp_y);
      q->hi = quantize_value(act.beta, q->s_y, q->zp_y);
      break;
    default: return false;  // not allowed on a quantized node (docs/numerics.md)
  }
  return true;
}

bool int8_bias_ok(const Graph& g, const Node& n, size_t i, int64_t len) {
  const Tensor* b = g.input(n, i);
  if (!b) return true;
  return b->dtype == DType::kI32 && b->is_const() && b->numel() == len &&
         b->data.size >= static_cast<size_t>(len) * sizeof(int32_t);
}

WeightSums int8_weight_sums(const int8_t* w, int64_t channels, int64_t k, int64_t ch_stride, int64_t k_stride) {
  WeightSums s;
  s.sum.assign(static_cast<size_t>(channels), 0);
  for (int64_t c = 0; c < channels; ++c) {
    int64_t pos = 0, neg = 0;
    const int8_t* wc = w + c * ch_stride;
    if (k_stride == 1) {
      x86::int8_sign_sums(wc, k, &pos, &neg);
    } else {
      for (int64_t i = 0; i < k; ++i) {
        const int64_t v = wc[i * k_stride];
        if (v > 0) pos += v;
        else neg -= v;
      }
    }
    s.sum[static_cast<size_t>(c)] = pos - neg;
    // x_u8 in [0, 255]: the sum lies in [-255 * neg, 255 * pos].
    const int64_t worst = 255 * (pos > neg ? pos : neg);
    if (worst > s.worst_u8_acc) s.worst_u8_acc = worst;
  }
  return s;
}

std::vector<int32_t> int8_compensation(const std::vector<int64_t>& wsum, const int32_t* bias, int32_t zp_x) {
  std::vector<int32_t> comp(wsum.size());
  for (size_t c = 0; c < wsum.size(); ++c) comp[c] = x86::u8_compensation(bias ? bias[c] : 0, wsum[c], zp_x);
  return comp;
}

bool exact_int8_impl(const dnnl::primitive_desc_base& pd, int64_t worst_acc) {
  if (x86::int8_best_isa() == x86::Int8Isa::kNone) return false;  // no vector requantization
  const std::string impl = pd.impl_info_str();
  if (impl.compare(0, 3, "ref") == 0) return false;
  // VNNI (or AMX) products: u8 x s8 accumulated in int32 without intermediate saturation.
  if (impl.find("vnni") == std::string::npos && impl.find("amx") == std::string::npos) return false;
  // brgemm-based implementations store int32 accumulators as they are (nothing is applied to them);
  // the others convert through float32.
  const bool int32_store = impl.compare(0, 3, "brg") == 0 || impl.compare(0, 6, "brdgmm") == 0;
  return int32_store || worst_acc <= kFloatExactInt;
}

x86::RequantParams int8_requant_params(const Int8Quant& q, const std::vector<int32_t>& comp) {
  x86::RequantParams p;
  p.comp = comp.data();
  p.mult = q.mult.data();
  p.zp = q.zp_y;
  p.lo = q.lo;
  p.hi = q.hi;
  p.act = q.act.act;
  p.alpha = q.act.alpha;
  p.beta = q.act.beta;
  p.inv_s_y = 1.f / q.s_y;
  return p;
}

}  // namespace orknn::onednn
