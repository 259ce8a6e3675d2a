#include "core/kernel_plans/coo_index.h"

#include "core/util/error.h"
#include "core/kernel_plans/nd_index.h"

namespace kb {

Dims coo_dense_dims(const std::vector<int64_t>& dense_shape, const Dims& static_dims,
                    const char* who) {
  Dims d(dense_shape.begin(), dense_shape.end());
  check(d.size() == static_dims.size(), Status::shape, who, ": dense_shape has ", d.size(),
        " entries for a tensor of rank ", static_dims.size());
  for (size_t i = 0; i < d.size(); ++i) {
    check(d[i] >= 0, Status::invalid_argument, who, ": dense_shape has a negative entry ", d[i]);
    check(static_dims[i] < 0 || static_dims[i] == d[i], Status::shape, who, ": dense_shape ",
          dims_str(d), " does not match the tensor's shape ", dims_str(static_dims));
  }
  return d;
}

void check_coo_count(int64_t index_rows, int64_t index_numel, int64_t nnz, int64_t depth,
                     const char* who) {
  check(index_numel == nnz * depth, Status::shape, who, ": ", index_rows, " indices for ", nnz,
        " values");
}

int64_t checked_nd_offset(const int64_t* tuple, int64_t depth, const Dims& dims, const char* who) {
  int64_t off = nd_offset(tuple, depth, dims.data());
  for (int64_t d = 0; off < 0 && d < depth; ++d)
    check(tuple[d] >= 0 && tuple[d] < dims[size_t(d)], Status::invalid_argument, who, ": index ",
          tuple[d], " is out of range [0, ", dims[size_t(d)], ") on axis ", d);
  return off;
}

int64_t index_tuples(const Dims& index_dims) {
  int64_t n = 1;
  for (size_t d = 0; d + 1 < index_dims.size(); ++d) n *= index_dims[d];
  return n;
}

Dims sparse_product_dims(const Dims& a, const Dims& b, bool adjoint) {
  int64_t inner = adjoint ? a[0] : a[1];
  check(b[0] == inner, Status::shape, "dot: shapes ", dims_str(a), " and ", dims_str(b),
        " are not aligned");
  return {adjoint ? a[1] : a[0], b[1]};
}

void check_sparse_entry(int64_t r, int64_t c, const Dims& matrix) {
  check(r >= 0 && r < matrix[0] && c >= 0 && c < matrix[1], Status::invalid_argument,
        "dot: sparse index (", r, ", ", c, ") is out of range for shape ", dims_str(matrix));
}

}  // namespace kb
