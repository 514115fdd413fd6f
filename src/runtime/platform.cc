#include "runtime/platform.h"

#include <algorithm>
#include <cctype>

#include "common/threads.h"
#include "rknn_api.h"

namespace orknn {
namespace {
// C2 values: the vendor guide's Table 3-1; matmul tiles: the vendor's rknn_matmul_api.h
// (docs/api-contract.md §5).
constexpr MatmulPlatform kMatmulRk3588 = {true, 32, 16, 8, {64, 32}, {32, 32}, {16, 32}, 32, 32, 32, 64, 32, 16, 8192, true};
constexpr MatmulPlatform kMatmulRk3576 = {true, 32, 16, 8, {64, 32}, {32, 32}, {16, 32}, 32, 32, 32, 64, 32, 16, 4096, true};
constexpr MatmulPlatform kMatmulRk356x = {true, 0, 8, 4, {0, 0}, {16, 32}, {8, 16}, 0, 32, 16, 0, 16, 8, 0, false};
constexpr MatmulPlatform kMatmulRk3562 = {true, 0, 16, 8, {0, 0}, {16, 32}, {8, 32}, 0, 32, 32, 0, 16, 8, 0, false};
constexpr MatmulPlatform kNoMatmul = {};
const PlatformInfo kPlatforms[] = {
    {"rk3588", 3, 16, 8, 16, kMatmulRk3588},  {"rk3576", 2, 16, 8, 16, kMatmulRk3576},
    {"rk3566", 1, 8, 4, 16, kMatmulRk356x},   {"rk3568", 1, 8, 4, 16, kMatmulRk356x},
    {"rk3562", 1, 16, 8, 16, kMatmulRk3562},  {"rv1106", 1, 16, 8, 16, kNoMatmul},
    {"rv1103", 1, 16, 8, 16, kNoMatmul},      {"rv1106b", 1, 8, 0, 16, kNoMatmul},
    {"rv1103b", 1, 8, 0, 16, kNoMatmul},      {"rk2118", 1, 0, 4, 16, kNoMatmul},
    {"rv1126b", 1, 16, 8, 16, kNoMatmul},
};
}  // namespace

const PlatformInfo* find_platform(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& p : kPlatforms)
    if (lower == p.name) return &p;
  return nullptr;
}

std::string matmul_platform_names() {
  std::string r;
  for (const auto& p : kPlatforms)
    if (p.matmul.supported) r += (r.empty() ? "" : ", ") + std::string(p.name);
  return r;
}

int core_mask_threads(const PlatformInfo& p, uint32_t mask) {
  const int cpus = usable_cpus(), cores = std::max(1, p.npu_cores);
  const uint32_t all = (1u << cores) - 1u;
  const uint32_t m = mask == RKNN_NPU_CORE_ALL ? all : mask == RKNN_NPU_CORE_AUTO ? 1u : mask & all;
  if (m == all) return cpus;
  return std::min(cpus, std::max(1, __builtin_popcount(m)) * std::max(1, cpus / cores));
}

std::vector<std::string> platform_names() {
  std::vector<std::string> r;
  for (const auto& p : kPlatforms) r.push_back(p.name);
  return r;
}

}  // namespace orknn
