// The modes of Pad and where each reads outside the kept input: shared by the reference kernel
// (kernels/ref/pad.cc) and the fast one (kernels/x86/pad_rows.cc), so that they cannot
// disagree on the semantics.
#pragma once
#include <cstdint>
#include <string>

namespace orknn {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// The normalised "mode" attribute (infer accepts these four).
inline PadMode pad_mode(const std::string& mode) {
  return mode == "reflect" ? PadMode::kReflect
         : mode == "edge"  ? PadMode::kEdge
         : mode == "wrap"  ? PadMode::kWrap
                           : PadMode::kConstant;
}

// Kept coordinate that an outside coordinate k of an axis of kept length len >= 1 reads from
// (not for kConstant, which reads the value): edge clamps, wrap takes k modulo len, reflect
// mirrors at the ends without repeating the edge (period 2 * (len - 1)).
inline int64_t pad_map_outside(PadMode mode, int64_t k, int64_t len) {
  switch (mode) {
    case PadMode::kEdge: return k < 0 ? 0 : len - 1;
    case PadMode::kWrap: return ((k % len) + len) % len;
    case PadMode::kReflect: {
      if (len == 1) return 0;
      const int64_t period = 2 * (len - 1);
      const int64_t m = ((k % period) + period) % period;
      return m < len ? m : period - m;
    }
    case PadMode::kConstant: break;
  }
  return 0;
}

// The input coordinate that output coordinate o of an axis reads, crop included (*i), for an
// axis whose negative begin pad crops `crop` elements, whose positive begin pad shifts by `shift`
// and whose kept range has `kept` elements; false when o lies in the padding of a constant Pad
// (the element is the value).
inline bool pad_source(PadMode mode, int64_t o, int64_t shift, int64_t crop, int64_t kept, int64_t* i) {
  int64_t k = o - shift;
  if (k < 0 || k >= kept) {
    if (mode == PadMode::kConstant) return false;
    k = pad_map_outside(mode, k, kept);
  }
  *i = k + crop;
  return true;
}

}  // namespace orknn
