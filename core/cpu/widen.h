// A float16 or bfloat16 problem run by a float32 kernel: the 16-bit inputs widened to float32
// (exact), the float32 result rounded once into the output. The kernels whose fast path is
// float32 only (oneDNN's convolutions) serve the 16-bit types this way instead of the reference
// loops; accumulating in float, they compute as the GPU's libraries do.
#pragma once
#include <vector>

#include "core/backend/kernel.h"

namespace kb::cpu {

// f32: the float32 kernel of the same problem; in: the dtypes of the leading inputs it reads as
// values (later ones, read for their shape alone, pass through); out: the output's dtype.
Kernel widened(Kernel f32, std::vector<DType> in, DType out);

}  // namespace kb::cpu
