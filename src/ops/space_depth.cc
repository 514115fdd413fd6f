// DepthToSpace and SpaceToDepth (rank-4 NCHW): validation, normalisation, shapes.
//
// Normalised form: "blocksize"; DepthToSpace also "mode" ("DCR" or "CRD") explicit. These ops
// only move elements, so any dtype is accepted (the output has the input's dtype); a quantized
// int8 output must carry the input's parameters.
#include <string>

#include "ops/infer_util.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {

// One 4-D input and "blocksize" >= 1 with blocksize^2 <= kMaxDim (larger blocks cannot divide a
// valid dim; the bound keeps dim * blocksize^2 inside int64).
Status check_io(const Graph& g, const Node& n, int64_t* block) {
  ORKNN_RETURN_IF_ERROR(check_arity(g, n, 1, 1, 1, 1, 1));
  ORKNN_RETURN_IF_ERROR(check_quant_passthrough(g, n));
  const Shape& x = g.input(n, 0)->shape;
  if (x.size() != 4) return ORKNN_NODE_ERR(n, "input must be 4-D (N, C, H, W), got %s", shape_str(x).c_str());
  if (!n.attrs.has("blocksize")) return ORKNN_NODE_ERR(n, "attribute blocksize is required");
  *block = n.attrs.get_int("blocksize", 0);
  if (*block < 1) return ORKNN_NODE_ERR(n, "blocksize must be >= 1, got %lld", (long long)*block);
  if (*block > kMaxDim / *block)
    return ORKNN_NODE_ERR(n, "blocksize %lld is too large (blocksize^2 must be <= %lld)", (long long)*block,
                          (long long)kMaxDim);
  return Status::Ok();
}

}  // namespace

Status infer_DepthToSpace(Graph& g, Node& n) {
  int64_t b = 0;
  ORKNN_RETURN_IF_ERROR(check_io(g, n, &b));
  const Tensor& x = *g.input(n, 0);
  const std::string mode = n.attrs.get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return ORKNN_NODE_ERR(n, "mode must be DCR or CRD, got '%s'", mode.c_str());
  if (x.shape[1] % (b * b) != 0)
    return ORKNN_NODE_ERR(n, "channels %lld not divisible by blocksize^2 = %lld", (long long)x.shape[1],
                          (long long)(b * b));
  n.attrs.set_string("mode", mode);
  return set_output(g, n, 0, {x.shape[0], x.shape[1] / (b * b), x.shape[2] * b, x.shape[3] * b}, x.dtype);
}

Status infer_SpaceToDepth(Graph& g, Node& n) {
  int64_t b = 0;
  ORKNN_RETURN_IF_ERROR(check_io(g, n, &b));
  const Tensor& x = *g.input(n, 0);
  if (x.shape[2] % b != 0 || x.shape[3] % b != 0)
    return ORKNN_NODE_ERR(n, "H and W of %s must be divisible by blocksize %lld", shape_str(x.shape).c_str(),
                          (long long)b);
  return set_output(g, n, 0, {x.shape[0], x.shape[1] * b * b, x.shape[2] / b, x.shape[3] / b}, x.dtype);
}

}  // namespace orknn
