#include <algorithm>
#include <mutex>

#include "kernels/kernel.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {
std::vector<KernelEntry>& entries() {
  static std::vector<KernelEntry> e;  // filled by static registrars before main()
  return e;
}
}  // namespace

void register_kernel(const KernelEntry& e) { entries().push_back(e); }

// A function of its own (not node_has_quant itself): its address marks the quantized reference
// kernels in the registry (has_quantized_ref_kernel).
bool is_quantized_node(const Graph& g, const Node& n) { return node_has_quant(g, n); }

const KernelEntry* find_ref_kernel(OpId op) {
  const KernelEntry* any = nullptr;
  for (const auto& e : entries()) {
    if (e.op != op || e.priority != 0) continue;
    if (!e.supports) return &e;
    if (!any) any = &e;
  }
  return any;
}

bool has_quantized_ref_kernel(OpId op) {
  for (const auto& e : entries())
    if (e.op == op && e.priority == 0 && e.supports == is_quantized_node) return true;
  return false;
}

std::vector<const KernelEntry*> kernels_for(OpId op) {
  std::vector<const KernelEntry*> r;
  for (const auto& e : entries())
    if (e.op == op) r.push_back(&e);
  // Highest priority first; at equal priority a kernel with a `supports` test goes before a
  // catch-all one, so that (for instance) an op's quantized reference kernel is found first.
  std::stable_sort(r.begin(), r.end(), [](const KernelEntry* a, const KernelEntry* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    return (a->supports != nullptr) > (b->supports != nullptr);
  });
  return r;
}

std::unique_ptr<Kernel> create_kernel(const Graph& g, const Node& n, bool allow_fast, std::string* chosen_name,
                                      ActLayout layout) {
  const bool quantized = is_quantized_node(g, n);
  for (const KernelEntry* e : kernels_for(n.op)) {
    if (e->priority > 0 && !allow_fast) continue;
    if (quantized && !e->supports) continue;  // a float kernel would misread int8 codes
    if (e->supports && !e->supports(g, n)) continue;
    std::unique_ptr<Kernel> k = e->create();
    if (layout == ActLayout::kNchw && k->layout_fit(g, n) == LayoutFit::kBlockedOnly) continue;
    if (chosen_name) *chosen_name = e->name;
    return k;
  }
  return nullptr;
}

}  // namespace orknn
