// CPU kernels for the scalar-op table (unary and broadcasting binary), Cast, Select and FillLike.
#include <algorithm>
#include <cmath>

#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/cpu/scratch.h"
#include "core/cpu/simd_targets.h"
#include "core/cpu/widen.h"
#include "core/graph/scalar.h"
#include "core/ops/op.h"
#include "core/ops/scalar_funcs.h"
#include "core/ops/scalar_ops.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/scalar_domain.h"

namespace kb::cpu {
namespace {

// The contiguous loops, also compiled for AVX-512 and AVX2 (core/cpu/simd_targets.h); the
// fused kernel evaluates the same expressions the same way, so fused and unfused values agree.
template <class C, class T, class O, class F>
KB_SIMD_CLONES void unary_loop(const T* __restrict a, O* __restrict o, int64_t n, F f) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) o[i] = O(f(C(a[i])));
}

// b_step / a_step 0: that operand is one value for the whole loop.
template <class C, class T, class O, class F>
KB_SIMD_CLONES void binary_loop(const T* __restrict a, int64_t a_step, const T* __restrict b,
                                int64_t b_step, O* __restrict o, int64_t n, F f) {
  if (a_step == 1 && b_step == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = O(f(C(a[i]), C(b[i])));
  } else if (a_step == 1) {
    C bv = C(b[0]);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = O(f(C(a[i]), bv));
  } else if (b_step == 1) {
    C av = C(a[0]);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = O(f(av, C(b[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = O(f(C(a[i * a_step]), C(b[i * b_step])));
  }
}

template <ScalarDomain D, ScalarResult R, class F>
Kernel unary_kernel(const KernelArgs& k, F f) {
  return dispatch_dtype(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!in_domain<D, T>()) {
      fail(Status::dtype, k.node.op->name, ": unsupported dtype");
    } else {
      using C = compute_t<T>;
      using O = std::conditional_t<R == ScalarResult::BOOL, bool, T>;
      return [f](const std::vector<const Buffer*>& in, Buffer& out) {
        const T* a = in[0]->as<T>();
        O* o = out.as<O>();
        parallel_for(out.numel(),
                     [&](int64_t b, int64_t e) { unary_loop<C>(a + b, o + b, e - b, f); });
      };
    }
  });
}

// The period of an operand of dims `d` broadcast to `od` when it is a trailing block of the output
// (a bias or a per-channel scale of the last axes: od's last dims, 1 or absent before them), its
// values repeating every numel(d) elements; 0 otherwise.
int64_t trailing_period(const Dims& d, const Dims& od) {
  if (d.size() > od.size()) return 0;
  size_t lead = od.size() - d.size();
  int64_t period = 1;
  bool inside = false;  // past the leading axes of size 1
  for (size_t i = 0; i < od.size(); ++i) {
    int64_t di = i < lead ? 1 : d[i - lead];
    if (!inside && di == 1 && od[i] != 1) continue;
    inside = true;
    if (di != od[i]) return 0;
    period *= di;
  }
  return period;
}

// A full operand against a trailing-block one (x * gamma over channels last): rows of the period
// alone are too short to vectorize, so the block is repeated into a per-thread run of whole
// periods (about kRun elements) and the full operand is walked in runs of that length.
constexpr int64_t kRun = 512;

template <class C, class T, class O, class F>
void periodic_binary(const T* full, const T* block, int64_t period, bool block_first, O* o,
                     int64_t n, F f) {
  int64_t run = period * std::max<int64_t>(1, kRun / period);
  int64_t runs = (n + run - 1) / run;
  parallel_for(
      runs,
      [&](int64_t r0, int64_t r1) {
        ThreadScratch<T, struct PeriodicRun> rep(static_cast<size_t>(run));
        T* p = rep.data();
        for (int64_t i = 0; i < run; i += period) std::copy(block, block + period, p + i);
        for (int64_t r = r0; r < r1; ++r) {
          int64_t at = r * run, len = std::min(run, n - at);
          if (block_first)
            binary_loop<C>(p, 1, full + at, 1, o + at, len, f);
          else
            binary_loop<C>(full + at, 1, p, 1, o + at, len, f);
        }
      },
      std::max<int64_t>(1, kParallelGrain / run));
}

template <ScalarDomain D, ScalarResult R, class F>
Kernel binary_kernel(const KernelArgs& k, F f) {
  return dispatch_dtype(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!in_domain<D, T>()) {
      fail(Status::dtype, k.node.op->name, ": unsupported dtype");
    } else {
      using C = compute_t<T>;
      using O = std::conditional_t<R == ScalarResult::BOOL, bool, T>;
      Dims od = k.out.shape.dims;
      Dims ad = k.in[0].shape.dims, bd = k.in[1].shape.dims;
      bool same = ad == bd;
      bool b_scalar = numel(bd) == 1, a_scalar = numel(ad) == 1;
      int64_t n_out = numel(od);
      // Periods worth a run of their own: shorter than a run, more than one element.
      auto short_period = [&](const Dims& d) {
        int64_t p = trailing_period(d, od);
        return p > 1 && p < kRun && p < n_out ? p : 0;
      };
      int64_t b_period = ad == od ? short_period(bd) : 0;
      int64_t a_period = bd == od ? short_period(ad) : 0;
      std::array<Dims, 3> strides{contiguous_strides(od), broadcast_strides(ad, od),
                                  broadcast_strides(bd, od)};
      return [=](const std::vector<const Buffer*>& in, Buffer& out) {
        const T* a = in[0]->as<T>();
        const T* b = in[1]->as<T>();
        O* o = out.as<O>();
        int64_t n = out.numel();
        if (same) {
          parallel_for(n, [&](int64_t s, int64_t e) {
            binary_loop<C>(a + s, 1, b + s, 1, o + s, e - s, f);
          });
        } else if (b_scalar && numel(ad) == n) {
          parallel_for(
              n, [&](int64_t s, int64_t e) { binary_loop<C>(a + s, 1, b, 0, o + s, e - s, f); });
        } else if (a_scalar && numel(bd) == n) {
          parallel_for(
              n, [&](int64_t s, int64_t e) { binary_loop<C>(a, 0, b + s, 1, o + s, e - s, f); });
        } else if (b_period) {
          periodic_binary<C>(a, b, b_period, false, o, n, f);
        } else if (a_period) {
          periodic_binary<C>(b, a, a_period, true, o, n, f);
        } else {
          strided_rows<3>(od, strides,
                          [&](const std::array<int64_t, 3>& off, const std::array<int64_t, 3>& st,
                              int64_t len) {
                            O* po = o + off[0];
                            const T* pa = a + off[1];
                            const T* pb = b + off[2];
                            if (st[0] == 1 && st[1] <= 1 && st[2] <= 1 && (st[1] | st[2])) {
                              binary_loop<C>(pa, st[1], pb, st[2], po, len, f);
                              return;
                            }
                            for (int64_t i = 0; i < len; ++i)
                              po[i * st[0]] = O(f(C(pa[i * st[1]]), C(pb[i * st[2]])));
                          });
        }
      };
    }
  });
}

#define KB_CPU_UNARY(Name, Dom, Res, expr, grad)                                               \
  Kernel make_##Name(const KernelArgs& k) {                                                    \
    return unary_kernel<ScalarDomain::Dom, ScalarResult::Res>(k, [](auto a) { return expr; }); \
  }                                                                                            \
  KernelRegistrar kr_##Name("cpu", ops::Name, make_##Name);
KB_UNARY_OPS(KB_CPU_UNARY)

#define KB_CPU_BINARY(Name, Dom, Res, expr, ga, gb)             \
  Kernel make_##Name(const KernelArgs& k) {                     \
    return binary_kernel<ScalarDomain::Dom, ScalarResult::Res>( \
        k, [](auto a, decltype(a) b) { return expr; });         \
  }                                                             \
  KernelRegistrar kr_##Name("cpu", ops::Name, make_##Name);
KB_BINARY_OPS(KB_CPU_BINARY)

template <class S, class D>
D convert(S v) {
  if constexpr (is_narrow_float_v<D>) {
    return D(convert_value<compute_t<S>, float>(compute_t<S>(v)));
  } else {
    return convert_value<compute_t<S>, D>(compute_t<S>(v));
  }
}

Kernel make_cast(const KernelArgs& k) {
  return dispatch_dtype(k.in[0].dtype, [&](auto zs) -> Kernel {
    using S = decltype(zs);
    return dispatch_dtype(k.out.dtype, [&](auto zd) -> Kernel {
      using D = decltype(zd);
      return [](const std::vector<const Buffer*>& in, Buffer& out) {
        const S* a = in[0]->as<S>();
        D* o = out.as<D>();
        parallel_for(out.numel(), [&](int64_t b, int64_t e) {
          // A mixed-precision model's casts between float32 and bfloat16, vectorized.
          if constexpr (std::is_same_v<S, bfloat16> && std::is_same_v<D, float>)
            return bf16_to_f32(a + b, o + b, e - b);
          if constexpr (std::is_same_v<S, float> && std::is_same_v<D, bfloat16>)
            return f32_to_bf16(a + b, o + b, e - b);
          for (int64_t i = b; i < e; ++i) o[i] = convert<S, D>(a[i]);
        });
      };
    });
  });
}
KernelRegistrar kr_cast("cpu", ops::Cast, make_cast);

Kernel make_select(const KernelArgs& k) {
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    Dims od = k.out.shape.dims;
    std::array<Dims, 4> strides{contiguous_strides(od), broadcast_strides(k.in[0].shape.dims, od),
                                broadcast_strides(k.in[1].shape.dims, od),
                                broadcast_strides(k.in[2].shape.dims, od)};
    return [=](const std::vector<const Buffer*>& in, Buffer& out) {
      const bool* c = in[0]->as<bool>();
      const T* a = in[1]->as<T>();
      const T* b = in[2]->as<T>();
      T* o = out.as<T>();
      strided_rows<4>(
          od, strides,
          [&](const std::array<int64_t, 4>& off, const std::array<int64_t, 4>& st, int64_t len) {
            for (int64_t i = 0; i < len; ++i)
              o[off[0] + i * st[0]] =
                  c[off[1] + i * st[1]] ? a[off[2] + i * st[2]] : b[off[3] + i * st[3]];
          });
    };
  });
}
KernelRegistrar kr_select("cpu", ops::Select, make_select);

Kernel make_fill_like(const KernelArgs& k) {
  double value = k.node.attrs.f(attr::value);
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    T v;
    write_scalar(k.out.dtype, &v, value);
    return [v](const std::vector<const Buffer*>&, Buffer& out) {
      T* o = out.as<T>();
      int64_t n = out.numel();
      for (int64_t i = 0; i < n; ++i) o[i] = v;
    };
  });
}
KernelRegistrar k18("cpu", ops::FillLike, make_fill_like);

}  // namespace
}  // namespace kb::cpu
