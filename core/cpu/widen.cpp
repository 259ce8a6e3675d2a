#include "core/cpu/widen.h"

#include <cstring>
#include <memory>
#include <type_traits>

#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "core/cpu/loops.h"
#include "core/cpu/simd_targets.h"
#include "core/graph/dispatch.h"

namespace kb::cpu {
namespace {

// float16 <-> float32 with the F16C instructions, 8 values at a time, on CPUs that have them (the
// library's baseline ISA does not). Both round to nearest even as half's conversions do; a block
// holding a NaN is converted by half's code, so a NaN narrows to the same bits on either path.
#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx,f16c"))) void widen_f16c(const half* s, float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  for (; i < n; ++i) d[i] = float(s[i]);
}

__attribute__((target("avx,f16c"))) void narrow_f16c(const float* s, half* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(s + i);
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    if (_mm256_testz_ps(nan, nan)) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                       _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    } else {
      for (int64_t j = i; j < i + 8; ++j) d[j] = half(s[j]);
    }
  }
  for (; i < n; ++i) d[i] = half(s[i]);
}

// F16C's bit read with CPUID: clang 14's __builtin_cpu_supports rejects "f16c". Its "avx" (as
// GCC's) also asks the OS whether it saves the YMM registers, which F16C's VEX code needs too.
bool has_f16c() {
  static const bool yes = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) &&
           (ecx & bit_F16C) != 0;
  }();
  return yes;
}
#else
void widen_f16c(const half*, float*, int64_t) {}
void narrow_f16c(const float*, half*, int64_t) {}
bool has_f16c() { return false; }
#endif

}  // namespace

// bfloat16's rounding on the float's bits (core/util/bfloat16.h), written for the vectorizer.
KB_SIMD_CLONES void bf16_to_f32(const bfloat16* __restrict src, float* __restrict dst, int64_t n) {
  const uint16_t* s = &src->bits;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x = uint32_t(s[i]) << 16;
    std::memcpy(dst + i, &x, 4);
  }
}

KB_SIMD_CLONES void f32_to_bf16(const float* __restrict src, bfloat16* __restrict dst, int64_t n) {
  uint16_t* d = &dst->bits;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x;
    std::memcpy(&x, src + i, 4);
    uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    d[i] = (x & 0x7fffffffu) > 0x7f800000u ? uint16_t(0x7fffu) : uint16_t(r);
  }
}

KB_SIMD_CLONES void round_to_bf16(float* __restrict values, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x;
    std::memcpy(&x, values + i, 4);
    uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) & 0xffff0000u;
    r = (x & 0x7fffffffu) > 0x7f800000u ? 0x7fff0000u : r;
    std::memcpy(values + i, &r, 4);
  }
}

void widen_into(DType t, const void* src, float* dst, int64_t n) {
  dispatch_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (is_narrow_float_v<T>) {
      const T* s = static_cast<const T*>(src);
      parallel_for(n, [&](int64_t lo, int64_t hi) {
        if constexpr (std::is_same_v<T, half>) {
          if (has_f16c()) return widen_f16c(s + lo, dst + lo, hi - lo);
        } else {
          return bf16_to_f32(s + lo, dst + lo, hi - lo);
        }
        for (int64_t i = lo; i < hi; ++i) dst[i] = float(s[i]);
      });
    }
  });
}
void narrow_into(DType t, const float* src, void* dst, int64_t n) {
  dispatch_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (is_narrow_float_v<T>) {
      T* d = static_cast<T*>(dst);
      parallel_for(n, [&](int64_t lo, int64_t hi) {
        if constexpr (std::is_same_v<T, half>) {
          if (has_f16c()) return narrow_f16c(src + lo, d + lo, hi - lo);
        } else {
          return f32_to_bf16(src + lo, d + lo, hi - lo);
        }
        for (int64_t i = lo; i < hi; ++i) d[i] = T(src[i]);
      });
    }
  });
}

Kernel widened(const KernelArgs& args, size_t reads,
               const std::function<Kernel(const KernelArgs&)>& make_f32) {
  std::vector<TensorType> in32 = args.in;
  for (TensorType& t : in32)
    if (is_narrow_float(t.dtype)) t.dtype = DType::f32;
  TensorType out32 = args.out;
  out32.dtype = DType::f32;
  Kernel f32 = make_f32(KernelArgs{args.node, in32, out32, args.used_parts});
  if (!f32) return {};
  std::vector<DType> in;
  for (size_t i = 0; i < reads && i < args.in.size(); ++i) in.push_back(args.in[i].dtype);
  return [f32 = std::move(f32), in = std::move(in), out_type = args.out.dtype](
             const std::vector<const Buffer*>& ins, Buffer& out) {
    std::vector<Buffer> wide(ins.size());
    std::vector<const Buffer*> values(ins.begin(), ins.end());
    for (size_t i = 0; i < ins.size() && i < in.size(); ++i) {
      if (!is_narrow_float(in[i])) continue;
      wide[i] = Buffer(DType::f32, ins[i]->dims);
      wide[i].allocate();
      widen_into(in[i], ins[i]->data(), wide[i].as<float>(), ins[i]->numel());
      values[i] = &wide[i];
    }
    if (!is_narrow_float(out_type)) {
      f32(values, out);
      return;
    }
    Buffer result(DType::f32, out.dims);
    result.allocate();
    f32(values, result);
    narrow_into(out_type, result.as<float>(), out.data(), out.numel());
  };
}

}  // namespace kb::cpu
