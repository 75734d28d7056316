// SPDX-License-Identifier: Zlib
#pragma once

/// BULLETGPU_CPU_CLONES marks a CPU function that GCC (or Clang) compiles twice on x86-64:
/// for x86-64-v3 (AVX2, BMI, POPCNT and the rest of that level) and for the baseline, choosing
/// one when the program loads. For the few loops whose speed depends on vector width or bit
/// instructions; both builds compute the same results (no floating-point contraction: the
/// project compiles with -ffp-contract=off). Elsewhere it marks nothing.
#if defined(__x86_64__) && defined(__GNUC__)
#define BULLETGPU_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BULLETGPU_CPU_CLONES
#endif
