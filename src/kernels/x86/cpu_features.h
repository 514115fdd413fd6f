// What the hand-written x86 kernels need of the CPU, asked once per process. The project is built
// for baseline x86-64 and each kernel is compiled with target attributes, so its supports() asks
// here before the runtime picks it.
#pragma once

namespace orknn::x86 {

inline bool cpu_avx2() {
  static const bool ok = __builtin_cpu_supports("avx2");
  return ok;
}
inline bool cpu_avx512f() {
  static const bool ok = __builtin_cpu_supports("avx512f");
  return ok;
}
inline bool cpu_avx512bw() {
  static const bool ok = cpu_avx512f() && __builtin_cpu_supports("avx512bw");
  return ok;
}
inline bool cpu_avx512bwvl() {
  static const bool ok = cpu_avx512bw() && __builtin_cpu_supports("avx512vl");
  return ok;
}
// Byte permutes (vpermb, vpermt2b).
inline bool cpu_avx512vbmi() {
  static const bool ok = cpu_avx512bw() && __builtin_cpu_supports("avx512vbmi");
  return ok;
}
// vpdpbusd, with the BW/VL instructions around it.
inline bool cpu_avx512vnni() {
  static const bool ok = cpu_avx512bwvl() && __builtin_cpu_supports("avx512vnni");
  return ok;
}

}  // namespace orknn::x86
