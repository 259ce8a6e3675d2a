// Permuted copies (any rank, any element size).
#pragma once
#include <cstddef>
#include <vector>

#include "core/graph/shape.h"

namespace kb::cpu {

// dst[perm-ordered index] = src: dst dims are src dims permuted by perm.
void transpose_copy(const void* src, void* dst, const Dims& src_dims,
                    const std::vector<int64_t>& perm, size_t elem_size);

}  // namespace kb::cpu
