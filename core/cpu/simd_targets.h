// Function multiversioning for the CPU's hot loops: the library is built for the baseline x86-64
// ISA, and a function marked KB_SIMD_CLONES is also compiled for AVX-512 and AVX2, the best one
// chosen by the CPU at load time. Files that use it are compiled with -ffp-contract=off (so an
// element gets the same operations in every clone) and -fno-trapping-math (so floating-point
// selects vectorize); see CMakeLists.txt.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define KB_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KB_SIMD_CLONES
#endif
