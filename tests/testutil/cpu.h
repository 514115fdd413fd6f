// Tests of x86 kernels ask for the CPU features those kernels need; on other CPUs the answer is
// no, so such tests skip there (GCC's __builtin_cpu_supports exists only for x86 targets).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#define ORKNN_X86_HAS(feature) __builtin_cpu_supports(feature)
#else
#define ORKNN_X86_HAS(feature) false
#endif
