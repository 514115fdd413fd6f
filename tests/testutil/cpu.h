// Tests of x86 kernels ask for the CPU features those kernels need; on other CPUs the answer is
// no, so such tests skip there (GCC's __builtin_cpu_supports exists only for x86 targets).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ORKNN_X86_HAS(feature) __builtin_cpu_supports(feature)
// AVX-VNNI (VEX-encoded VNNI, CPUID.(EAX=7,ECX=1):EAX bit 4) is asked through CPUID: clang 14's
// __builtin_cpu_supports does not know "avxvnni" (GCC's does), and the ThreadSanitizer build
// (scripts/sanitize.sh tsan) is clang's.
inline bool orknn_x86_has_avxvnni() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __builtin_cpu_supports("avx2") && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 4)) != 0;
}
#define ORKNN_X86_HAS_AVXVNNI() orknn_x86_has_avxvnni()
#else
#define ORKNN_X86_HAS(feature) false
#define ORKNN_X86_HAS_AVXVNNI() false
#endif
