// Helpers shared by the shape/dtype inference functions of the primitives.
#pragma once
#include <string>
#include <vector>

#include "core/graph/node.h"
#include "core/ops/scalar_ops.h"

namespace kb {

// NumPy broadcasting of two static shapes (unknown dims stay unknown unless the other fixes them).
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& who);
// Concrete broadcasting, used by kernels.
Dims broadcast_dims(const Dims& a, const Dims& b);
void check_domain(DType t, ScalarDomain d, const std::string& who);
void check_arity(const std::vector<TensorType>& in, size_t n, const std::string& who);
// Axis list normalization: negative -> positive, sorted, duplicates rejected.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    const char* who);

}  // namespace kb
