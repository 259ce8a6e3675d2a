// IEEE 754 binary16 storage type with conversions to and from float (round to nearest even; NaN
// to the canonical quiet NaN 0x7fff). The same type in CUDA device code, where the conversions
// are the hardware's (same rounding, same NaN), so both devices store the same bits.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/util/host_device.h"
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace kb {

struct half {
  uint16_t bits = 0;
  half() = default;
  KB_HD half(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a float
  KB_HD operator float() const { return to_float(bits); }

  KB_HD static uint16_t from_float(float f) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__float2half_rn(f));
#else
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t mag = x & 0x7fffffffu;
    if (mag > 0x7f800000u) return 0x7fffu;  // NaN: the canonical one, as CUDA's conversion
    if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // inf, and overflow to inf
    if (mag < 0x38800000u) {                                  // subnormal or zero
      if (mag < 0x33000000u) return uint16_t(sign);
      uint32_t e = mag >> 23;
      uint32_t m = (mag & 0x7fffffu) | 0x800000u;
      uint32_t shift = 126 - e;  // value / 2^-24 == m * 2^(e - 126)
      uint32_t out = m >> shift;
      uint32_t rem = m & ((1u << shift) - 1);
      uint32_t halfway = 1u << (shift - 1);
      if (rem > halfway || (rem == halfway && (out & 1u))) ++out;
      return uint16_t(sign | out);
    }
    uint32_t out = ((mag - 0x38000000u) >> 13);
    uint32_t rem = mag & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (out & 1u))) ++out;
    return uint16_t(sign | out);
#endif
  }

  KB_HD static float to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(h));
#else
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
      if (man == 0) {
        x = sign;
      } else {  // subnormal: normalize
        int e = -1;
        do {
          ++e;
          man <<= 1;
        } while ((man & 0x400u) == 0);
        x = sign | (uint32_t(112 - e) << 23) | ((man & 0x3ffu) << 13);
      }
    } else if (exp == 0x1f) {
      x = sign | 0x7f800000u | (man << 13);
    } else {
      x = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
#endif
  }
};

}  // namespace kb
