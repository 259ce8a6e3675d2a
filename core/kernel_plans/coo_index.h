// The run-time checks of the sparse (COO) kernels on every device, with one set of messages:
// dense_shape's values against the static dims, index tuples against the dense dims.
#pragma once
#include <cstdint>
#include <vector>

#include "core/graph/shape.h"

namespace kb {

// dense_shape's values as dims, checked against the static dims (-1: any).
Dims coo_dense_dims(const std::vector<int64_t>& dense_shape, const Dims& static_dims,
                    const char* who);

// The number of index tuples (rows of an (n, depth) index matrix) must match the values'.
void check_coo_count(int64_t index_rows, int64_t index_numel, int64_t nnz, int64_t depth,
                     const char* who);

// The offset of tuple[0, depth) into dims; fails naming the coordinate and axis out of range.
int64_t checked_nd_offset(const int64_t* tuple, int64_t depth, const Dims& dims, const char* who);

// The number of index tuples in an (..., depth) index tensor of these dims.
int64_t index_tuples(const Dims& index_dims);

// The dims of A @ b (A^T @ b with adjoint) for the sparse matrix A of dims `a` and the dense
// matrix b, which must be aligned.
Dims sparse_product_dims(const Dims& a, const Dims& b, bool adjoint);

// A sparse matrix entry (r, c) must lie inside the matrix's dims.
void check_sparse_entry(int64_t r, int64_t c, const Dims& matrix);

}  // namespace kb
