#include "ops/op.h"

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
