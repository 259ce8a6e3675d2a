// CPU kernels of BatchNorm and BatchCenteredDot (core/ops/batch_norm_ops.cpp): per-channel
// factors computed once, then one pass over x; centered sums accumulated in double per chunk of
// rows (chunks fixed by the shape: the same sums on any number of threads), the chunks' partial
// sums added in order.
#include <algorithm>
#include <vector>

#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/cpu/scratch.h"
#include "core/cpu/simd_targets.h"
#include "core/kernel_plans/batch_norm.h"
#include "core/graph/dispatch.h"

namespace kb::cpu {
namespace {

using Ins = std::vector<const Buffer*>;

// Rows of the reduced positions per chunk of a centered sum: chunks are fixed by the shape
// alone (not by the thread count), so that every run, on any number of threads, adds the same
// partial sums in the same order. Each chunk holds about 2^12 values per channel.
int64_t rows_per_chunk(const ChannelLayout& l) {
  return std::max<int64_t>(1, (int64_t(1) << 12) / std::max<int64_t>(l.inner, 1));
}

// The hot loops, also compiled for AVX-512 and AVX2 (core/cpu/simd_targets.h), without FMA
// contraction: y = x * scale + shift as the GPU's kernel (-fmad=false) and the composition compute
// it.
template <class T, class C>
KB_SIMD_CLONES void affine_rows(const T* __restrict x, T* __restrict y, const C* __restrict scale,
                                const C* __restrict shift, int64_t rows, int64_t channels) {
  for (int64_t o = 0; o < rows; ++o)
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) {
      int64_t p = o * channels + c;
      y[p] = T(C(x[p]) * scale[c] + shift[c]);
    }
}

template <class T, class C>
KB_SIMD_CLONES void affine_run(const T* __restrict x, T* __restrict y, C scale, C shift,
                               int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = T(C(x[i]) * scale + shift);
}

// Channels last: p[c] += the rows' (a - Center * mean[c]) * (x - mean[c]).
template <bool Center, class T, class C>
KB_SIMD_CLONES void centered_rows(const T* __restrict a, const T* __restrict x,
                                  const C* __restrict mean, double* __restrict p, int64_t rows,
                                  int64_t channels) {
  for (int64_t o = 0; o < rows; ++o)
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) {
      int64_t q = o * channels + c;
      C av = Center ? C(a[q]) - mean[c] : C(a[q]);
      p[c] += double(av * (C(x[q]) - mean[c]));
    }
}

// One channel's run of n values, summed in eight fixed lanes (so that the loop vectorizes
// without reassociating: the same sum in every clone).
template <bool Center, class T, class C>
KB_SIMD_CLONES double centered_run(const T* __restrict a, const T* __restrict x, C mean,
                                   int64_t n) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
#pragma omp simd
    for (int j = 0; j < 8; ++j) {
      C av = Center ? C(a[i + j]) - mean : C(a[i + j]);
      lane[j] += double(av * (C(x[i + j]) - mean));
    }
  for (; i < n; ++i) {
    C av = Center ? C(a[i]) - mean : C(a[i]);
    lane[i % 8] += double(av * (C(x[i]) - mean));
  }
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

Kernel make_batch_norm(const KernelArgs& k) {
  ChannelLayout l = channel_layout(k.in[0].shape.dims, k.node.attrs);
  double epsilon = k.node.attrs.f(attr::epsilon);
  // x is floating (the ops' inference checks it).
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [l, epsilon](const Ins& in, Buffer& out) {
      const T* x = in[0]->as<T>();
      T* y = out.as<T>();
      ThreadScratch<C, struct BatchNormFactors> factors(size_t(2 * l.channels));
      C* scale = factors.data();
      C* shift = scale + l.channels;
      for (int64_t c = 0; c < l.channels; ++c)
        batch_norm_affine<C>(in[1]->as<T>(), in[2]->as<T>(), in[3]->as<T>(), in[4]->as<T>(), c,
                             C(epsilon), scale[c], shift[c]);
      int64_t n = l.inner;
      if (n == 1) {  // channels last: rows of channels
        parallel_for(
            l.outer,
            [&](int64_t b, int64_t e) {
              affine_rows(x + b * l.channels, y + b * l.channels, scale, shift, e - b, l.channels);
            },
            std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.channels, 1)));
        return;
      }
      parallel_for(
          l.outer * l.channels,
          [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) {
              int64_t c = r % l.channels;
              affine_run(x + r * n, y + r * n, scale[c], shift[c], n);
            }
          },
          std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)));
    };
  });
}

// Chunk [first_row, last_row)'s sums of (a - Center * mean) * (x - mean) per channel, into p.
template <bool Center, class T, class C>
void chunk_sums(const T* a, const T* x, const C* mean, double* p, const ChannelLayout& l,
                int64_t first_row, int64_t last_row) {
  std::fill(p, p + l.channels, 0.0);
  if (l.inner == 1) {
    int64_t at = first_row * l.channels;
    centered_rows<Center>(a + at, x + at, mean, p, last_row - first_row, l.channels);
    return;
  }
  for (int64_t o = first_row; o < last_row; ++o)
    for (int64_t c = 0; c < l.channels; ++c) {
      int64_t at = (o * l.channels + c) * l.inner;
      p[c] += centered_run<Center>(a + at, x + at, mean[c], l.inner);
    }
}

Kernel make_centered_dot(const KernelArgs& k) {
  ChannelLayout l = channel_layout(k.in[1].shape.dims, k.node.attrs);
  bool center = k.node.attrs.i(attr::center) != 0;
  int64_t rows = rows_per_chunk(l);
  int64_t chunks = (l.outer + rows - 1) / rows;
  // x is floating (the ops' inference checks it).
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [l, center, rows, chunks](const Ins& in, Buffer& out) {
      const T *a = in[0]->as<T>(), *x = in[1]->as<T>();
      ThreadScratch<C, struct CenteredDotMean> mean_c(size_t(l.channels));
      C* mean = mean_c.data();
      for (int64_t c = 0; c < l.channels; ++c) mean[c] = C(in[2]->as<T>()[c]);
      ThreadScratch<double, struct CenteredDotSums> sums(size_t(std::max<int64_t>(chunks, 1)) *
                                                         size_t(l.channels));
      double* partial = sums.data();
      parallel_for(
          chunks,
          [&](int64_t b, int64_t e) {
            for (int64_t q = b; q < e; ++q) {
              double* p = partial + q * l.channels;
              int64_t first = q * rows, last = std::min(l.outer, first + rows);
              if (center)
                chunk_sums<true>(a, x, mean, p, l, first, last);
              else
                chunk_sums<false>(a, x, mean, p, l, first, last);
            }
          },
          1);
      T* y = out.as<T>();
      for (int64_t c = 0; c < l.channels; ++c) {
        double s = 0;
        for (int64_t q = 0; q < chunks; ++q) s += partial[q * l.channels + c];
        y[c] = T(C(s));
      }
    };
  });
}

KernelRegistrar k1("cpu", ops::BatchNorm, make_batch_norm);
KernelRegistrar k2("cpu", ops::BatchCenteredDot, make_centered_dot);

}  // namespace
}  // namespace kb::cpu
