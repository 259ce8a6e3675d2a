// bfloat16 storage type (float32's sign, exponent and top 7 mantissa bits) with conversions to and
// from float: round to nearest even, NaN to the canonical quiet NaN 0x7fff (as CUDA's
// __float2bfloat16_rn, so both devices store the same bits). The same type in CUDA device code.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/util/host_device.h"
#if defined(__CUDACC__)
#include <cuda_bf16.h>
#endif

namespace kb {

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  KB_HD bfloat16(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a float
  KB_HD operator float() const { return to_float(bits); }

  KB_HD static uint16_t from_float(float f) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    // Adding 0x7fff plus the kept part's lowest bit rounds to nearest, ties to even; a carry
    // into the exponent is the correct rounding up (the largest finite values round to inf).
    x += 0x7fffu + ((x >> 16) & 1u);
    return uint16_t(x >> 16);
#endif
  }

  KB_HD static float to_float(uint16_t b) {
    uint32_t x = uint32_t(b) << 16;
    float f;
#if defined(__CUDA_ARCH__)
    f = __uint_as_float(x);
#else
    std::memcpy(&f, &x, 4);
#endif
    return f;
  }
};

}  // namespace kb
