#include <algorithm>
#include <mutex>

#include "kernels/kernel.h"

namespace orknn {
namespace {
std::vector<KernelEntry>& entries() {
  static std::vector<KernelEntry> e;  // filled by static registrars before main()
  return e;
}
}  // namespace

void register_kernel(const KernelEntry& e) { entries().push_back(e); }

const KernelEntry* find_ref_kernel(OpId op) {
  for (const auto& e : entries())
    if (e.op == op && e.priority == 0) return &e;
  return nullptr;
}

std::vector<const KernelEntry*> kernels_for(OpId op) {
  std::vector<const KernelEntry*> r;
  for (const auto& e : entries())
    if (e.op == op) r.push_back(&e);
  std::stable_sort(r.begin(), r.end(), [](const KernelEntry* a, const KernelEntry* b) { return a->priority > b->priority; });
  return r;
}

std::unique_ptr<Kernel> create_kernel(const Graph& g, const Node& n, bool allow_fast, std::string* chosen_name) {
  for (const KernelEntry* e : kernels_for(n.op)) {
    if (e->priority > 0 && !allow_fast) continue;
    if (e->supports && !e->supports(g, n)) continue;
    if (chosen_name) *chosen_name = e->name;
    return e->create();
  }
  return nullptr;
}

}  // namespace orknn
