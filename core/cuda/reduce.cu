// CUDA reductions (Reduce, SumToLike) and softmax / log-softmax.
#include <cfloat>

#include "core/backend/layout.h"
#include "core/backend/reduce_plan.h"
#include "core/cuda/common.cuh"
#include "core/ops/build.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;
constexpr int kThreads = 256;

// Floating types accumulate in double and integers in int64, as on the CPU, so that both devices
// round a sum once.
template <class T>
using acc_t = std::conditional_t<is_float_v<T>, double, int64_t>;

// The identity of a reduction of T accumulated in A: an integer max or min over an empty axis is
// T's lowest or highest value, not int64's.
template <class A, class T>
__device__ A reduce_identity(int mode) {
  if (mode == 0) return A(0);
  if (mode == 1) return A(1);
  if constexpr (std::is_floating_point_v<A>) {
    return mode == 2 ? A(-INFINITY) : A(INFINITY);
  } else {
    return mode == 2 ? A(std::numeric_limits<T>::lowest()) : A(std::numeric_limits<T>::max());
  }
}

// An accumulated value as O: a 16-bit float through float, as the CPU rounds it.
template <class O, class A>
__device__ O narrow(A a) {
  if constexpr (is_float_v<O>) {
    return O(compute_t<O>(a));
  } else {
    return O(a);
  }
}

template <class A>
__device__ A combine(int mode, A acc, A v) {
  switch (mode) {
    case 0:
      return acc + v;
    case 1:
      return acc * v;
    case 2:
      return (v > acc || v != v) ? v : acc;
    default:
      return (v < acc || v != v) ? v : acc;
  }
}

// Rows of length r (inner == 1), `parts` blocks per row: block b reduces chunk b % parts of row
// b / parts into out[b]. parts == 1 reduces whole rows. E: the element type being reduced (x may
// hold its partial results in A).
template <class E, class T, class A, class O>
__global__ void reduce_chunks(const T* x, O* out, int64_t outer, int64_t r, int parts, int mode) {
  __shared__ A part[kThreads];
  int64_t chunk = (r + parts - 1) / parts;
  for (int64_t b = blockIdx.x; b < outer * parts; b += gridDim.x) {
    int64_t row = b / parts, p = b % parts;
    int64_t begin = p * chunk, end = begin + chunk < r ? begin + chunk : r;
    A acc = reduce_identity<A, E>(mode);
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x)
      acc = combine<A>(mode, acc, A(x[row * r + j]));
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (int(threadIdx.x) < s)
        part[threadIdx.x] = combine<A>(mode, part[threadIdx.x], part[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) out[b] = narrow<O>(part[0]);
    __syncthreads();
  }
}

// One thread per output (outer, inner), walking the reduced axis with stride inner.
template <class T, class A>
__global__ void reduce_cols(const T* x, T* out, int64_t outer, int64_t r, int64_t inner, int mode) {
  int64_t n = outer * inner;
  KB_GRID_LOOP(i, n) {
    int64_t o = i / inner, k = i % inner;
    const T* p = x + o * r * inner + k;
    A acc = reduce_identity<A, T>(mode);
    for (int64_t j = 0; j < r; ++j) acc = combine<A>(mode, acc, A(p[j * inner]));
    out[i] = narrow<T>(acc);
  }
}

// out[i] = T(partial[i * stride]).
template <class A, class T>
__global__ void copy_cast(const A* partial, int64_t stride, T* out, int64_t n) {
  KB_GRID_LOOP(i, n)
  out[i] = narrow<T>(partial[i * stride]);
}

template <class T>
void run_reduce(int mode, const ReducePlan& p, const Buffer& in, Buffer& out) {
  using A = acc_t<T>;
  const T* x = in.as<T>();
  std::shared_ptr<void> tmp;
  if (p.needs_transpose) {
    Buffer t(in.dtype, Dims{});
    Dims td(p.perm.size());
    for (size_t i = 0; i < p.perm.size(); ++i) td[i] = in.dims[p.perm[i]];
    t.dims = td;
    t.device = Device::cuda;
    tmp = scratch(in.nbytes());
    t.storage = tmp;
    transpose_on_device(in, t, p.perm);
    x = t.as<T>();
  }
  if (p.outer * p.inner == 0) return;
  if (!p.needs_transpose && p.inner > 1 && p.outer * p.inner < 4096 && p.r >= 2048) {
    // Few outputs over long strided columns (a bias gradient: sum over N*H*W): one thread per
    // column would be serial; make the columns rows first.
    Buffer src(in.dtype, Dims{p.outer, p.r, p.inner});
    src.storage = std::shared_ptr<void>(std::shared_ptr<void>{}, const_cast<T*>(x));
    src.device = Device::cuda;
    Buffer t(in.dtype, Dims{p.outer, p.inner, p.r});
    t.device = Device::cuda;
    tmp = scratch(in.nbytes());
    t.storage = tmp;
    transpose_on_device(src, t, {0, 2, 1});
    ReducePlan rows;
    rows.outer = p.outer * p.inner;
    rows.r = p.r;
    rows.inner = 1;
    rows.dims = t.dims;
    Buffer rows_in = t;
    run_reduce<T>(mode, rows, rows_in, out);
    return;
  }
  if (p.inner == 1 && p.outer < 1024 && p.r >= 65536) {
    // Few long rows: spread each row over many blocks, then reduce the partial results.
    int parts = int(std::min<int64_t>(1024, p.r / 8192));
    std::shared_ptr<void> partial = scratch(sizeof(A) * size_t(p.outer * (parts + 1)));
    A* pa = static_cast<A*>(partial.get());
    A* rows = pa + p.outer * parts;
    int64_t blocks = p.outer * parts;
    reduce_chunks<T, T, A, A>
        <<<unsigned(blocks), kThreads, 0, stream()>>>(x, pa, p.outer, p.r, parts, mode);
    reduce_chunks<T, A, A, A>
        <<<unsigned(p.outer), kThreads, 0, stream()>>>(pa, rows, p.outer, parts, 1, mode);
    after_launch("reduce");
    copy_cast<<<blocks_for(p.outer), kThreads, 0, stream()>>>(rows, 1, out.as<T>(), p.outer);
  } else if (p.inner == 1) {
    unsigned grid = unsigned(p.outer < 65535 * 4 ? p.outer : 65535 * 4);
    reduce_chunks<T, T, A, T>
        <<<grid, kThreads, 0, stream()>>>(x, out.as<T>(), p.outer, p.r, 1, mode);
  } else {
    int64_t n = p.outer * p.inner;
    reduce_cols<T, A>
        <<<blocks_for(n), kThreads, 0, stream()>>>(x, out.as<T>(), p.outer, p.r, p.inner, mode);
  }
  after_launch("reduce");
}

// The kernel of a reduction planned as p; bool reduces as uint8. (Ranks beyond kMaxDims never
// come here: the plugin declines them for every op.)
Kernel reduce_kernel(DType t, int mode, const ReducePlan& p) {
  return dispatch_dtype(t, [&](auto z) -> Kernel {
    using T = std::conditional_t<std::is_same_v<decltype(z), bool>, uint8_t, decltype(z)>;
    return [mode, p](const Ins& in, Buffer& out) {
      if (!out.storage) out.storage = scratch(out.nbytes());
      run_reduce<T>(mode, p, *in[0], out);
    };
  });
}

Kernel make_reduce(const KernelArgs& k) {
  std::vector<int64_t> axes;
  int64_t rank = k.in[0].shape.rank();
  for (int64_t a : k.node.attrs.ints("axes")) axes.push_back(a < 0 ? a + rank : a);
  return reduce_kernel(k.in[0].dtype, int(k.node.attrs.i("mode")),
                       plan_reduce(k.in[0].shape.dims, axes));
}
Registrar reg_reduce("Reduce", make_reduce);

Kernel make_sum_to_like(const KernelArgs& k) {
  const Dims& gd = k.in[0].shape.dims;
  const Dims& ld = k.out.shape.dims;
  if (gd == ld) return [](const Ins& in, Buffer& out) { out.storage = in[0]->storage; };
  // bool has no sum: the CPU's kernel reports it.
  if (is_bool(k.in[0].dtype)) return Kernel{};
  return reduce_kernel(k.in[0].dtype, 0, plan_reduce(gd, sum_to_axes(gd, ld)));
}
Registrar reg_sum_to_like("SumToLike", make_sum_to_like);

// Softmax over rows of length n (inner == 1): one block per row. C: the compute type.
template <class T, bool Log, class C = compute_t<T>>
__global__ void softmax_rows(const T* x, T* out, int64_t outer, int64_t n) {
  __shared__ C part[kThreads];
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    const T* p = x + row * n;
    T* o = out + row * n;
    C mx = C(-INFINITY);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) mx = C(p[j]) > mx ? C(p[j]) : mx;
    part[threadIdx.x] = mx;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (int(threadIdx.x) < s && part[threadIdx.x + s] > part[threadIdx.x])
        part[threadIdx.x] = part[threadIdx.x + s];
      __syncthreads();
    }
    mx = part[0];
    if (!isfinite(mx)) mx = C(0);
    __syncthreads();
    C sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += exp(C(p[j]) - mx);
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (int(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
      __syncthreads();
    }
    sum = part[0];
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      o[j] = T(Log ? C(p[j]) - mx - log(sum) : exp(C(p[j]) - mx) / sum);
    __syncthreads();
  }
}

template <class T, bool Log, class C = compute_t<T>>
__global__ void softmax_cols(const T* x, T* out, int64_t outer, int64_t n, int64_t inner) {
  int64_t total = outer * inner;
  KB_GRID_LOOP(i, total) {
    int64_t base = (i / inner) * n * inner + i % inner;
    C mx = C(-INFINITY);
    for (int64_t j = 0; j < n; ++j) {
      C v = C(x[base + j * inner]);
      mx = v > mx ? v : mx;
    }
    if (!isfinite(mx)) mx = C(0);
    C sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += exp(C(x[base + j * inner]) - mx);
    for (int64_t j = 0; j < n; ++j) {
      C v = C(x[base + j * inner]) - mx;
      out[base + j * inner] = T(Log ? v - log(sum) : exp(v) / sum);
    }
  }
}

template <bool Log>
Kernel make_softmax(const KernelArgs& k) {
  AxisView v = axis_view(k.in[0].shape.dims, k.node.attrs.i("axis"));
  int64_t outer = v.outer, n = v.n, inner = v.inner;
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!is_float_v<T>) {
      return Kernel{};
    } else {
      return [outer, n, inner](const Ins& in, Buffer& out) {
        if (outer * n * inner == 0) return;
        if (inner == 1) {
          unsigned grid = unsigned(outer < 65535 * 4 ? outer : 65535 * 4);
          softmax_rows<T, Log>
              <<<grid, kThreads, 0, stream()>>>(in[0]->as<T>(), out.as<T>(), outer, n);
        } else {
          softmax_cols<T, Log><<<blocks_for(outer * inner), kThreads, 0, stream()>>>(
              in[0]->as<T>(), out.as<T>(), outer, n, inner);
        }
        after_launch("softmax");
      };
    }
  });
}
Registrar reg_softmax("Softmax", make_softmax<false>);
Registrar reg_log_softmax("LogSoftmax", make_softmax<true>);

}  // namespace

void reduce_on_device(int mode, const ReducePlan& p, const Buffer& in, Buffer& out) {
  dispatch_dtype(in.dtype, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, bool>) {
      run_reduce<uint8_t>(mode, p, in, out);
    } else {
      run_reduce<T>(mode, p, in, out);
    }
  });
}

void zero_on_device(Buffer& out) {
  check_cuda(cudaMemsetAsync(out.data(), 0, out.nbytes(), stream()), "memset");
}

}  // namespace kb::cuda
