// KB_HD marks functions that CUDA device code calls too (header-only helpers shared by the CPU
// kernels and the CUDA plugin).
#pragma once

#ifdef __CUDACC__
#define KB_HD __host__ __device__
#else
#define KB_HD
#endif
