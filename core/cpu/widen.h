// A float16 or bfloat16 problem run by a float32 kernel: the 16-bit inputs widened to float32
// (exact), the float32 result rounded once into the output. The kernels whose fast path is
// float32 only (oneDNN's convolutions, sgemm) serve the 16-bit types this way instead of plain
// loops; accumulating in float, they compute as the GPU's libraries do.
#pragma once
#include <functional>

#include "core/backend/kernel.h"
#include "core/util/bfloat16.h"

namespace kb::cpu {

// The kernel that make_f32 makes for args' problem in float32 (every 16-bit float input and the
// output typed float32), wrapped to widen the first `reads` inputs (the ones it reads as values;
// later ones, read for their shape alone, pass through) and narrow its result. Empty when
// make_f32 declines.
Kernel widened(const KernelArgs& args, size_t reads,
               const std::function<Kernel(const KernelArgs&)>& make_f32);

// Copies n values of the 16-bit float type t into float32 (exact), or rounds n float32 values into
// it (to nearest even); across the thread pool, with F16C for float16 where the CPU has it.
void widen_into(DType t, const void* src, float* dst, int64_t n);
void narrow_into(DType t, const float* src, void* dst, int64_t n);

// On the calling thread, vectorized (AVX-512 or AVX2 where the CPU has them): n bfloat16 values
// into float32 (exact); n float32 values rounded into bfloat16 (to nearest even, NaN to the
// canonical quiet NaN, as bfloat16's constructor); n float32 values rounded to bfloat16's
// precision in place.
void bf16_to_f32(const bfloat16* src, float* dst, int64_t n);
void f32_to_bf16(const float* src, bfloat16* dst, int64_t n);
void round_to_bf16(float* values, int64_t n);

}  // namespace kb::cpu
