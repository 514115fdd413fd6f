// What the hand-written x86 kernels need of the CPU, asked once per process. The project is built
// for baseline x86-64 and each kernel is compiled with target attributes, so its supports() asks
// here before the runtime picks it.
#pragma once

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

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

// AMX with 8-bit integer tiles, usable by this process: the CPU has AMX-TILE and AMX-INT8
// (CPUID.(7,0):EDX bits 24, 25), the OS saves the tile state (XCR0 bits 17, 18) and Linux grants
// the process the tile data (arch_prctl ARCH_REQ_XCOMP_PERM, which oneDNN requests too before its
// AMX kernels run). The INT8 pointwise and stem products (pointwise_int8_vnni.cc) then run on
// AMX tiles. (GCC's __builtin_cpu_supports("amx-int8") is not
// known to clang 14, the fuzz build's compiler.)
inline bool cpu_amx_int8() {
  static const bool ok = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 25))) return false;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE: xgetbv works
    uint32_t lo = 0, hi = 0;
    asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo & (3u << 17)) != (3u << 17)) return false;
#ifdef __linux__
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
#endif
    return true;
  }();
  return ok;
}

}  // namespace orknn::x86
