// Single-pass float32 kernels over one contiguous row (the last axis), vectorized for the CPU at
// hand (core/cpu/simd_targets.h): the row sum of Reduce and the rows of Softmax / LogSoftmax.
// Each result depends only on the row (a fixed order of partial sums), not on the thread count.
#pragma once
#include <cstdint>

namespace kb::cpu {

// Sum of x[0..n) with float partial sums over short blocks, gathered in double.
double row_sum_f32(const float* x, int64_t n);

// acc[i] += sum over r < rows of x[r * inner + i], i < inner (a column sum, as of a bias gradient).
void add_rows_f32(const float* x, int64_t rows, int64_t inner, double* acc);

// Max pooling over `windows` windows of k >= 1 cells each, channels last: window w has its cells
// at x + w * step + cell[j] (j < k), each a row of n channels, and its result at y + w * n, the
// first maximum of each channel (a NaN only where the first cell holds one).
void max_windows_forward_f32(const float* x, const int64_t* cell, int64_t k, int64_t windows,
                             int64_t step, float* y, int64_t n);

// Its backward pass over the same windows (which must not overlap), their gradients at
// dy + w * n: per channel, the first maximum of x over the cells takes dy, the other cells of dx
// get 0.
void max_windows_backward_f32(const float* x, float* dx, const int64_t* cell, int64_t k,
                              int64_t windows, int64_t step, const float* dy, int64_t n);

// Largest element, NaNs skipped (-inf for an empty or all-NaN row).
float row_max_f32(const float* x, int64_t n);

// out = softmax(x) (log: log_softmax(x)) over one row, the row's maximum subtracted first;
// scratch holds n floats. stream: out is written with non-temporal stores (for results larger
// than the caches, which would otherwise read every line before writing it).
void softmax_row_f32(const float* x, float* out, float* scratch, int64_t n, bool log, bool stream);

}  // namespace kb::cpu
