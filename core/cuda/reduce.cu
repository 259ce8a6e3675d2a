// CUDA reductions (Reduce, SumToLike) and softmax / log-softmax.
#include <cfloat>

#include "core/kernel_plans/layout.h"
#include "core/kernel_plans/reduce_plan.h"
#include "core/cuda/common.cuh"
#include "core/kernel_plans/device_reduce.h"
#include "core/kernel_plans/device_softmax.h"
#include "core/ops/build.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;
constexpr int kThreads = kReduceThreads;

// Rows of length r (inner == 1), `parts` blocks per row: block b reduces chunk b % parts of row
// b / parts into out[b]. parts == 1 reduces whole rows. E: the element type being reduced (x may
// hold its partial results in A).
template <class E, class T, class A, class O>
__global__ void reduce_chunks(const T* x, O* out, int64_t outer, int64_t r, int parts, int mode) {
  __shared__ A part[kThreads];
  for (int64_t b = blockIdx.x; b < outer * parts; b += gridDim.x) {
    int64_t row = b / parts, begin, end;
    reduce_chunk(r, parts, b % parts, &begin, &end);
    part[threadIdx.x] = reduce_thread_share<E, A>(x + row * r, begin, end, threadIdx.x, mode);
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (int(threadIdx.x) < s)
        part[threadIdx.x] = reduce_combine<A>(mode, part[threadIdx.x], part[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) out[b] = reduce_narrow<O>(part[0]);
    __syncthreads();
  }
}

// One thread per output (outer, inner), walking the reduced axis with stride inner.
template <class T, class A>
__global__ void reduce_cols(const T* x, T* out, int64_t outer, int64_t r, int64_t inner, int mode) {
  int64_t n = outer * inner;
  KB_GRID_LOOP(i, n) {
    int64_t o = i / inner, k = i % inner;
    out[i] = reduce_narrow<T>(reduce_column<A>(x + o * r * inner + k, r, inner, mode));
  }
}

// out[i] = T(partial[i]).
template <class A, class T>
__global__ void copy_cast(const A* partial, T* out, int64_t n) {
  KB_GRID_LOOP(i, n) out[i] = reduce_narrow<T>(partial[i]);
}

// x permuted into scratch memory (kept alive by the returned block).
template <class T>
std::shared_ptr<void> transposed(const T*& x, DType t, const Dims& dims,
                                 const std::vector<int64_t>& perm) {
  Buffer src(t, dims);
  src.storage = std::shared_ptr<void>(std::shared_ptr<void>{}, const_cast<T*>(x));
  src.device = Device::cuda;
  Buffer dst(t, Dims{});
  dst.device = Device::cuda;
  std::shared_ptr<void> tmp = scratch(src.nbytes());
  dst.storage = tmp;
  transpose_on_device(src, dst, perm);
  x = static_cast<const T*>(tmp.get());
  return tmp;
}

// The plan's schedule (core/kernel_plans/reduce_plan.h), in the order the emulated device follows.
template <class T>
void run_reduce(int mode, const ReducePlan& p, const Buffer& in, Buffer& out) {
  using A = reduce_acc_t<T>;
  const T* x = in.as<T>();
  if (p.outer * p.inner == 0) return;
  DeviceReduceSchedule s = device_reduce_schedule(p);
  std::shared_ptr<void> permuted, as_rows;
  if (p.needs_transpose) permuted = transposed(x, in.dtype, in.dims, p.perm);
  if (s.columns_to_rows) as_rows = transposed(x, in.dtype, {p.outer, p.r, p.inner}, {0, 2, 1});
  if (s.parts > 1) {
    std::shared_ptr<void> partial = scratch(sizeof(A) * size_t(s.outer * (s.parts + 1)));
    A* pa = static_cast<A*>(partial.get());
    A* rows = pa + s.outer * s.parts;
    reduce_chunks<T, T, A, A><<<unsigned(s.outer * s.parts), kThreads, 0, stream()>>>(
        x, pa, s.outer, s.r, int(s.parts), mode);
    reduce_chunks<T, A, A, A>
        <<<unsigned(s.outer), kThreads, 0, stream()>>>(pa, rows, s.outer, s.parts, 1, mode);
    after_launch("reduce");
    copy_cast<<<blocks_for(s.outer), kThreads, 0, stream()>>>(rows, out.as<T>(), s.outer);
  } else if (s.inner == 1) {
    unsigned grid = unsigned(s.outer < 65535 * 4 ? s.outer : 65535 * 4);
    reduce_chunks<T, T, A, T>
        <<<grid, kThreads, 0, stream()>>>(x, out.as<T>(), s.outer, s.r, 1, mode);
  } else {
    reduce_cols<T, A><<<blocks_for(s.outer * s.inner), kThreads, 0, stream()>>>(
        x, out.as<T>(), s.outer, s.r, s.inner, mode);
  }
  after_launch("reduce");
}

// The kernel of a reduction planned as p; bool reduces as uint8. (Ranks beyond kMaxDims never
// come here: the plugin declines them for every op.)
Kernel reduce_kernel(DType t, int mode, const ReducePlan& p) {
  return dispatch_dtype(t, [&](auto z) -> Kernel {
    constexpr bool kBool = std::is_same_v<decltype(z), bool>;
    using T = std::conditional_t<kBool, uint8_t, decltype(z)>;
    return [mode, p](const Ins& in, Buffer& out) {
      if (!out.storage) out.storage = scratch(out.nbytes());
      if (kBool && bool_all_of_nothing(mode, p))
        return check_cuda(cudaMemsetAsync(out.data(), 1, out.nbytes(), stream()), "memset");
      run_reduce<T>(mode, p, *in[0], out);
    };
  });
}

Kernel make_reduce(const KernelArgs& k) {
  DeviceReduction r = device_reduction(k);
  if (r.view) return [](const Ins& in, Buffer& out) { out.storage = in[0]->storage; };
  return reduce_kernel(k.in[0].dtype, r.mode, r.plan);
}
Registrar reg_reduce(ops::Reduce, make_reduce);
Registrar reg_sum_to_like(ops::SumToLike, make_reduce);

// Softmax over rows of length n (inner == 1): one block per row
// (core/kernel_plans/device_softmax.h).
template <class T, bool Log, class C = compute_t<T>>
__global__ void softmax_rows(const T* x, T* out, int64_t outer, int64_t n) {
  __shared__ C part[kThreads];
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    const T* p = x + row * n;
    T* o = out + row * n;
    part[threadIdx.x] = softmax_share_max<C>(p, n, threadIdx.x);
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (int(threadIdx.x) < s)
        part[threadIdx.x] = softmax_max_of(part[threadIdx.x], part[threadIdx.x + s]);
      __syncthreads();
    }
    C mx = softmax_shift(part[0]);
    __syncthreads();
    part[threadIdx.x] = softmax_share_sum<C>(p, n, threadIdx.x, mx);
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (int(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
      __syncthreads();
    }
    C sum = part[0];
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      o[j] = T(softmax_value<Log>(C(p[j]), mx, sum));
    __syncthreads();
  }
}

template <class T, bool Log, class C = compute_t<T>>
__global__ void softmax_cols(const T* x, T* out, AxisView v) {
  int64_t total = v.outer * v.inner;
  KB_GRID_LOOP(i, total) {
    int64_t base = v.line_start(i);
    softmax_line<Log, C>(x + base, out + base, v.n, v.inner);
  }
}

template <bool Log>
Kernel make_softmax(const KernelArgs& k) {
  AxisView v = axis_view(k.in[0].shape.dims, k.node.attrs.i(attr::axis));
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [v](const Ins& in, Buffer& out) {
      if (v.outer * v.n * v.inner == 0) return;
      if (v.inner == 1) {
        unsigned grid = unsigned(v.outer < 65535 * 4 ? v.outer : 65535 * 4);
        softmax_rows<T, Log>
            <<<grid, kThreads, 0, stream()>>>(in[0]->as<T>(), out.as<T>(), v.outer, v.n);
      } else {
        softmax_cols<T, Log><<<blocks_for(v.outer * v.inner), kThreads, 0, stream()>>>(
            in[0]->as<T>(), out.as<T>(), v);
      }
      after_launch("softmax");
    };
  });
}
Registrar reg_softmax(ops::Softmax, make_softmax<false>);
Registrar reg_log_softmax(ops::LogSoftmax, make_softmax<true>);

}  // namespace

void reduce_on_device(int mode, const ReducePlan& p, const Buffer& in, Buffer& out) {
  dispatch_dtype(in.dtype, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, bool>) {
      if (bool_all_of_nothing(mode, p))
        return check_cuda(cudaMemsetAsync(out.data(), 1, out.nbytes(), stream()), "memset");
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
