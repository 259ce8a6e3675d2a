// Function multiversioning for the CPU's hot loops: the library is built for the baseline x86-64
// ISA, and a function marked KB_SIMD_CLONES is also compiled for AVX-512 and AVX2, the best one
// chosen by the CPU at load time. Files that use it are compiled with -ffp-contract=off (so an
// element gets the same operations in every clone and in the fused kernel) and
// -fno-trapping-math (so floating-point selects vectorize); see CMakeLists.txt.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define KB_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
// With FMA (x86-64-v4: AVX-512; v3: AVX2 and FMA), for kernels whose values need not match
// another kernel's bit for bit and whose file is compiled with -ffp-contract=fast (row_kernels).
#define KB_SIMD_CLONES_FMA \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KB_SIMD_CLONES
#define KB_SIMD_CLONES_FMA
#endif
