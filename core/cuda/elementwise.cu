// CUDA kernels for the scalar-op table (unary, broadcasting binary), Cast, Select, FillLike.
// float16 is stored as half and computed in float, as on the CPU.
#include "core/cuda/common.cuh"
#include "core/graph/scalar.h"
#include "core/ops/scalar_funcs.h"
#include "core/ops/scalar_ops.h"
#include "core/kernel_plans/scalar_domain.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

template <class T, class O, class F>
__global__ void unary_kernel(const T* a, O* o, int64_t n, F f) {
  using C = compute_t<T>;
  KB_GRID_LOOP(i, n) o[i] = O(f(C(a[i])));
}

template <class T, class O, class F>
__global__ void binary_kernel(const T* a, const T* b, O* o, int64_t n, StridedMap m, bool same,
                              F f) {
  using C = compute_t<T>;
  KB_GRID_LOOP(i, n) {
    if (same) {
      o[i] = O(f(C(a[i]), C(b[i])));
    } else {
      int64_t off[3];
      m.offsets(i, off, 3);
      o[i] = O(f(C(a[off[1]]), C(b[off[2]])));
    }
  }
}

template <ScalarDomain D, ScalarResult R, class F>
Kernel unary_factory(const KernelArgs& k) {
  return dispatch_in_domain<D, Kernel>(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using O = std::conditional_t<R == ScalarResult::BOOL, bool, T>;
    return [](const Ins& in, Buffer& out) {
      int64_t n = out.numel();
      if (n == 0) return;
      unary_kernel<<<blocks_for(n), 256, 0, stream()>>>(in[0]->as<T>(), out.as<O>(), n, F{});
      after_launch("unary");
    };
  });
}

template <ScalarDomain D, ScalarResult R, class F>
Kernel binary_factory(const KernelArgs& k) {
  return dispatch_in_domain<D, Kernel>(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using O = std::conditional_t<R == ScalarResult::BOOL, bool, T>;
    const Dims& od = k.out.shape.dims;
    bool same = k.in[0].shape.dims == od && k.in[1].shape.dims == od;
    StridedMap m = make_map(od, {od, k.in[0].shape.dims, k.in[1].shape.dims});
    return [m, same](const Ins& in, Buffer& out) {
      int64_t n = out.numel();
      if (n == 0) return;
      binary_kernel<<<blocks_for(n), 256, 0, stream()>>>(in[0]->as<T>(), in[1]->as<T>(),
                                                         out.as<O>(), n, m, same, F{});
      after_launch("binary");
    };
  });
}

#define KB_CUDA_UNARY(Name, Dom, Res, expr, grad) \
  struct Fn##Name {                               \
    template <class A>                            \
    __device__ auto operator()(A a) const {       \
      return expr;                                \
    }                                             \
  };                                              \
  Registrar reg_##Name(ops::Name, unary_factory<ScalarDomain::Dom, ScalarResult::Res, Fn##Name>);
KB_UNARY_OPS(KB_CUDA_UNARY)

#define KB_CUDA_BINARY(Name, Dom, Res, expr, ga, gb) \
  struct Fn##Name {                                  \
    template <class A>                               \
    __device__ auto operator()(A a, A b) const {     \
      return expr;                                   \
    }                                                \
  };                                                 \
  Registrar reg_##Name(ops::Name, binary_factory<ScalarDomain::Dom, ScalarResult::Res, Fn##Name>);
KB_BINARY_OPS(KB_CUDA_BINARY)

template <class S, class D>
__global__ void cast_kernel(const S* a, D* o, int64_t n) {
  KB_GRID_LOOP(i, n) o[i] = convert_value<compute_t<S>, D>(compute_t<S>(a[i]));
}

Kernel make_cast(const KernelArgs& k) {
  return dispatch_dtype(k.in[0].dtype, [&](auto zs) -> Kernel {
    using S = decltype(zs);
    return dispatch_dtype(k.out.dtype, [&](auto zd) -> Kernel {
      using D = decltype(zd);
      return [](const Ins& in, Buffer& out) {
        int64_t n = out.numel();
        if (n == 0) return;
        cast_kernel<<<blocks_for(n), 256, 0, stream()>>>(in[0]->as<S>(), out.as<D>(), n);
        after_launch("cast");
      };
    });
  });
}
Registrar reg_cast(ops::Cast, make_cast);

template <class T>
__global__ void select_kernel(const bool* c, const T* a, const T* b, T* o, int64_t n,
                              StridedMap m) {
  KB_GRID_LOOP(i, n) {
    int64_t off[3];
    m.offsets(i, off, 3);
    o[i] = c[off[0]] ? a[off[1]] : b[off[2]];
  }
}

Kernel make_select(const KernelArgs& k) {
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    StridedMap m =
        make_map(k.out.shape.dims, {k.in[0].shape.dims, k.in[1].shape.dims, k.in[2].shape.dims});
    return [m](const Ins& in, Buffer& out) {
      int64_t n = out.numel();
      if (n == 0) return;
      select_kernel<<<blocks_for(n), 256, 0, stream()>>>(in[0]->as<bool>(), in[1]->as<T>(),
                                                         in[2]->as<T>(), out.as<T>(), n, m);
      after_launch("select");
    };
  });
}
Registrar reg_select(ops::Select, make_select);

template <class T>
__global__ void fill_kernel(T* o, int64_t n, T v) {
  KB_GRID_LOOP(i, n) o[i] = v;
}

Kernel make_fill_like(const KernelArgs& k) {
  double value = k.node.attrs.f(attr::value);
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    T v = convert_value<double, T>(value);
    return [v](const Ins&, Buffer& out) {
      int64_t n = out.numel();
      if (n == 0) return;
      fill_kernel<<<blocks_for(n), 256, 0, stream()>>>(out.as<T>(), n, v);
      after_launch("fill");
    };
  });
}
Registrar reg_fill_like(ops::FillLike, make_fill_like);

}  // namespace
}  // namespace kb::cuda
