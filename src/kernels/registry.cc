#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/env.h"
#include "kernels/kernel.h"
#include "ops/quant_infer.h"

namespace orknn {
namespace {
std::vector<KernelEntry>& entries() {
  static std::vector<KernelEntry> e;  // filled by static registrars before main()
  return e;
}
std::vector<FusionEntry>& fusions() {
  static std::vector<FusionEntry> f;
  return f;
}

class FusedAway : public Kernel {
 public:
  explicit FusedAway(BlockedIo io) : io_(io) {}
  BlockedIo blocked_io(const Graph&, const Node&) const override { return io_; }
  bool rounds_fp16_outputs() const override { return true; }  // nothing written, nothing to round
  void run(const KernelContext&) override {}

 private:
  BlockedIo io_;
};
}  // namespace

void register_kernel(const KernelEntry& e) { entries().push_back(e); }
void register_fusion(const FusionEntry& e) { fusions().push_back(e); }

bool reference_kernels_only() { return env_flag("OPENRKNN_REF_KERNELS"); }

bool kernel_disabled(const char* name) {
  const char* list = std::getenv("OPENRKNN_DISABLE_KERNELS");
  if (!list || !name) return false;
  const size_t len = std::strlen(name);
  for (const char* p = list; *p;) {
    const char* end = std::strchr(p, ',');
    if (!end) end = p + std::strlen(p);
    const size_t n = static_cast<size_t>(end - p);
    const bool prefix = n > 0 && p[n - 1] == '*';
    const size_t cmp = prefix ? n - 1 : n;
    if (n > 0 && (prefix ? len >= cmp : len == cmp) && std::strncmp(p, name, cmp) == 0) return true;
    p = *end ? end + 1 : end;
  }
  return false;
}

std::vector<FusedGroup> find_fusions(const Graph& g) {
  std::vector<FusedGroup> groups;
  if (reference_kernels_only()) return groups;
  std::vector<const FusionEntry*> order;
  for (const FusionEntry& f : fusions()) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(),
                   [](const FusionEntry* a, const FusionEntry* b) { return a->priority > b->priority; });
  std::vector<uint8_t> taken(g.nodes.size(), 0);
  for (const FusionEntry* f : order) {
    if (kernel_disabled(f->name)) continue;
    for (FusedGroup& grp : f->find(g)) {
      bool free = grp.nodes.size() >= 2;
      for (int k : grp.nodes) free = free && !taken[static_cast<size_t>(k)];
      if (!free) continue;
      for (int k : grp.nodes) taken[static_cast<size_t>(k)] = 1;
      grp.fusion = f->name;
      groups.push_back(std::move(grp));
    }
  }
  return groups;
}

std::unique_ptr<Kernel> fused_away_kernel(BlockedIo io) { return std::make_unique<FusedAway>(io); }

// A function of its own (not node_has_quant itself): its address marks the quantized reference
// kernels in the registry (has_quantized_ref_kernel).
bool is_quantized_node(const Graph& g, const Node& n) { return node_has_quant(g, n); }

const KernelEntry* find_ref_kernel(OpId op) {
  const KernelEntry* any = nullptr;
  for (const auto& e : entries()) {
    if (e.op != op || e.priority != kPriorityReference) continue;
    if (!e.supports) return &e;
    if (!any) any = &e;
  }
  return any;
}

bool has_quantized_ref_kernel(OpId op) {
  for (const auto& e : entries())
    if (e.op == op && e.priority == kPriorityReference && e.supports == is_quantized_node) return true;
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
    if (e->priority > kPriorityReference && (!allow_fast || kernel_disabled(e->name))) continue;
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
