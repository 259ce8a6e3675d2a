// The emulated device's Reduce, SumToLike, Softmax and LogSoftmax: core/cuda/reduce.cu's schedule
// of a plan (device_reduce_schedule) and its arithmetic (core/kernel_plans/device_reduce.h,
// core/kernel_plans/device_softmax.h) on the host, each block's kReduceThreads threads and their
// tree of partial results in the GPU's order, so that the order of the sums (and the transposes and
// chunks that lead to it) is the one a GPU computes.
#include <cstring>
#include <vector>

#include "core/kernel_plans/layout.h"
#include "core/kernel_plans/reduce_plan.h"
#include "core/kernel_plans/strided_map.h"
#include "core/ops/op.h"
#include "core/kernel_plans/device_reduce.h"
#include "core/kernel_plans/device_softmax.h"
#include "element_kernels.h"

namespace kb::emulation {
namespace {

using Ins = std::vector<const Buffer*>;

// x (of dims) permuted by perm, as transpose_on_device writes it.
template <class T>
std::vector<T> transposed(const T* x, const Dims& dims, const std::vector<int64_t>& perm) {
  StridedMap m = transpose_map(dims, perm);
  std::vector<T> t(size_t(numel(dims)));
  for (int64_t i = 0; i < numel(dims); ++i) {
    int64_t off[2];
    m.offsets(i, off, 2);
    t[size_t(off[0])] = x[off[1]];
  }
  return t;
}

// One block of reduce_chunks: chunk `part` of `parts` of row `row` (length r) of x.
template <class E, class A, class X>
A block_result(const X* x, int64_t row, int64_t r, int64_t parts, int64_t part, int mode) {
  int64_t begin, end;
  reduce_chunk(r, parts, part, &begin, &end);
  A shares[kReduceThreads];
  for (int t = 0; t < kReduceThreads; ++t)
    shares[t] = reduce_thread_share<E, A>(x + row * r, begin, end, t, mode);
  for (int s = kReduceThreads / 2; s > 0; s >>= 1)
    for (int t = 0; t < s; ++t) shares[t] = reduce_combine<A>(mode, shares[t], shares[t + s]);
  return shares[0];
}

template <class T>
void run_reduce(int mode, const ReducePlan& p, const Buffer& in, Buffer& out) {
  using A = reduce_acc_t<T>;
  if (p.outer * p.inner == 0) return;
  DeviceReduceSchedule s = device_reduce_schedule(p);
  const T* x = in.as<T>();
  std::vector<T> permuted, as_rows;
  if (p.needs_transpose) x = (permuted = transposed(x, in.dims, p.perm)).data();
  if (s.columns_to_rows) x = (as_rows = transposed(x, {p.outer, p.r, p.inner}, {0, 2, 1})).data();
  T* o = out.as<T>();
  if (s.parts > 1) {
    std::vector<A> partial(size_t(s.outer * s.parts));
    for (int64_t b = 0; b < s.outer * s.parts; ++b)
      partial[size_t(b)] = block_result<T, A>(x, b / s.parts, s.r, s.parts, b % s.parts, mode);
    for (int64_t row = 0; row < s.outer; ++row)
      o[row] = reduce_narrow<T>(block_result<T, A>(partial.data(), row, s.parts, 1, 0, mode));
  } else if (s.inner == 1) {
    for (int64_t row = 0; row < s.outer; ++row)
      o[row] = reduce_narrow<T>(block_result<T, A>(x, row, s.r, 1, 0, mode));
  } else {
    for (int64_t i = 0; i < s.outer * s.inner; ++i) {
      const T* col = x + (i / s.inner) * s.r * s.inner + i % s.inner;
      o[i] = reduce_narrow<T>(reduce_column<A>(col, s.r, s.inner, mode));
    }
  }
}

// As core/cuda/reduce.cu's reduce_kernel: bool reduces as uint8.
Kernel reduce_kernel(DType t, int mode, const ReducePlan& p) {
  return dispatch_dtype(t, [&](auto z) -> Kernel {
    constexpr bool kBool = std::is_same_v<decltype(z), bool>;
    using T = std::conditional_t<kBool, uint8_t, decltype(z)>;
    return [mode, p](const Ins& in, Buffer& out) {
      if (kBool && bool_all_of_nothing(mode, p))
        return void(std::memset(out.data(), 1, out.nbytes()));
      run_reduce<T>(mode, p, *in[0], out);
    };
  });
}

// As core/cuda/reduce.cu's softmax kernels: a row's block of threads and their two trees, or a
// line per thread across a strided axis.
template <bool Log>
Kernel softmax_kernel(const KernelArgs& k) {
  AxisView v = axis_view(k.in[0].shape.dims, k.node.attrs.i(attr::axis));
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [v](const Ins& in, Buffer& out) {
      const T* x = in[0]->as<T>();
      T* o = out.as<T>();
      if (v.inner != 1) {
        for (int64_t i = 0; i < v.outer * v.inner; ++i) {
          int64_t base = v.line_start(i);
          softmax_line<Log, C>(x + base, o + base, v.n, v.inner);
        }
        return;
      }
      for (int64_t row = 0; row < v.outer; ++row) {
        const T* p = x + row * v.n;
        C shares[kReduceThreads];
        for (int t = 0; t < kReduceThreads; ++t) shares[t] = softmax_share_max<C>(p, v.n, t);
        for (int s = kReduceThreads / 2; s > 0; s >>= 1)
          for (int t = 0; t < s; ++t) shares[t] = softmax_max_of(shares[t], shares[t + s]);
        C mx = softmax_shift(shares[0]);
        for (int t = 0; t < kReduceThreads; ++t) shares[t] = softmax_share_sum<C>(p, v.n, t, mx);
        for (int s = kReduceThreads / 2; s > 0; s >>= 1)
          for (int t = 0; t < s; ++t) shares[t] += shares[t + s];
        for (int64_t j = 0; j < v.n; ++j)
          o[row * v.n + j] = T(softmax_value<Log>(C(p[j]), mx, shares[0]));
      }
    };
  });
}

}  // namespace

std::optional<Kernel> device_reduce_kernel(const char* op, const KernelArgs& k) {
  if (std::strcmp(op, "Softmax") == 0) return softmax_kernel<false>(k);
  if (std::strcmp(op, "LogSoftmax") == 0) return softmax_kernel<true>(k);
  if (std::strcmp(op, "SumToLike") != 0 && std::strcmp(op, "Reduce") != 0) return std::nullopt;
  DeviceReduction r = device_reduction(k);
  if (r.view) return std::nullopt;  // the CPU's kernel aliases, as the plugin's does
  return reduce_kernel(k.in[0].dtype, r.mode, r.plan);
}

}  // namespace kb::emulation
