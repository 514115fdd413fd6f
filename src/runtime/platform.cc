#include "runtime/platform.h"

#include <cctype>

namespace orknn {
namespace {
// C2 values: the vendor guide's Table 3-1 (architecture §6).
const PlatformInfo kPlatforms[] = {
    {"rk3588", 3, 16, 8, 16}, {"rk3576", 2, 16, 8, 16}, {"rk3566", 1, 8, 4, 16},
    {"rk3568", 1, 8, 4, 16},  {"rk3562", 1, 16, 8, 16}, {"rv1106", 1, 16, 8, 16},
    {"rv1103", 1, 16, 8, 16}, {"rv1106b", 1, 8, 0, 16}, {"rv1103b", 1, 8, 0, 16},
    {"rk2118", 1, 0, 4, 16},  {"rv1126b", 1, 16, 8, 16},
};
}  // namespace

const PlatformInfo* find_platform(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& p : kPlatforms)
    if (lower == p.name) return &p;
  return nullptr;
}

std::vector<std::string> platform_names() {
  std::vector<std::string> r;
  for (const auto& p : kPlatforms) r.push_back(p.name);
  return r;
}

}  // namespace orknn
