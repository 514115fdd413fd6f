#include "ops/op.h"

#include "graph/ir.h"

namespace orknn {
namespace {

const OpDef kOps[] = {
#define OP(name, id) {OpId::name, #name, &infer_##name},
#include "ops/op_list.inc"
#undef OP
};

constexpr int kIds[] = {
#define OP(name, id) id,
#include "ops/op_list.inc"
#undef OP
};
constexpr int kOpCount = sizeof(kIds) / sizeof(kIds[0]);

// Ids must be 0..N-1 in order, so that a table lookup by id works.
constexpr bool ids_dense() {
  for (int i = 0; i < kOpCount; ++i)
    if (kIds[i] != i) return false;
  return true;
}
static_assert(ids_dense(), "op_list.inc ids must be dense and in order");

}  // namespace

const OpDef* find_op(OpId id) {
  int i = static_cast<int>(id);
  return (i >= 0 && i < kOpCount) ? &kOps[i] : nullptr;
}

const OpDef* find_op(const std::string& name) {
  for (const auto& d : kOps)
    if (name == d.name) return &d;
  return nullptr;
}

const char* op_name(OpId id) {
  const OpDef* d = find_op(id);
  return d ? d->name : "?";
}

int op_count() { return kOpCount; }
const OpDef* op_at(int i) { return (i >= 0 && i < kOpCount) ? &kOps[i] : nullptr; }

}  // namespace orknn

namespace orknn {

bool op_copies_input_values(OpId id) {
  switch (id) {
    case OpId::Identity: case OpId::Dropout: case OpId::Reshape: case OpId::Flatten: case OpId::Squeeze:
    case OpId::Unsqueeze: case OpId::Concat: case OpId::Split: case OpId::Slice: case OpId::Transpose:
    case OpId::Gather: case OpId::Expand: case OpId::Tile: case OpId::DepthToSpace: case OpId::SpaceToDepth:
    case OpId::MaxPool: case OpId::GlobalMaxPool: case OpId::Max: case OpId::Min: case OpId::Relu:
      return true;
    default:
      return false;
  }
}

int64_t node_macs(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.outputs.empty() || n.inputs[0] < 0 || n.inputs[1] < 0 || n.outputs[0] < 0) return 0;
  const Shape& a = g.tensor(n.inputs[0]).shape;
  const Shape& b = g.tensor(n.inputs[1]).shape;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  switch (n.op) {
    case OpId::Conv:  // every output: (C_in / group) * kernel taps; weights [OC, IC/G, k...]
    case OpId::ConvTranspose: {  // every input: (C_out / group) * taps; weights [IC, OC/G, k...]
      if (b.size() < 3) return 0;
      int64_t per = b[1];
      for (size_t i = 2; i < b.size(); ++i) per *= b[i];
      return (n.op == OpId::Conv ? shape_numel(y) : shape_numel(a)) * per;
    }
    case OpId::Gemm: {  // M x N outputs, K each
      if (a.size() != 2 || y.size() != 2) return 0;
      const int64_t k = n.attrs.get_int("transA", 0) ? a[0] : a[1];
      return shape_numel(y) * k;
    }
    case OpId::MatMul:  // every output: K = the last dim of A
      return a.empty() ? 0 : shape_numel(y) * a.back();
    default:
      return 0;
  }
}

}  // namespace orknn
