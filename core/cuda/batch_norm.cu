// CUDA kernels of BatchNorm and BatchCenteredDot (core/ops/batch_norm_ops.cpp) over x viewed as
// (outer, channels, inner) (core/kernel_plans/batch_norm.h). BatchNorm: each channel's factor and
// offset once (batch_norm_affine, the CPU's operations: this file is compiled with -fmad=false),
// then one thread per value. BatchCenteredDot: blocks sum chunks of rows per channel in double into
// scratch (channels last: a warp's lanes read 32 adjacent channels; otherwise a block reads one
// channel's runs), then one thread per channel adds its chunks in order
// (core/kernel_plans/device_batch_norm.h).
#include <algorithm>

#include "core/cuda/common.cuh"
#include "core/kernel_plans/batch_norm.h"
#include "core/kernel_plans/device_batch_norm.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

template <class T, class C>
__global__ void affine_factors(const T* mean, const T* var, const T* gamma, const T* beta,
                               C epsilon, C* scale, C* shift, int64_t channels) {
  KB_GRID_LOOP(c, channels)
  batch_norm_affine<C>(mean, var, gamma, beta, c, epsilon, scale[c], shift[c]);
}

template <class T, class C>
__global__ void affine_values(const T* x, T* y, const C* scale, const C* shift, ChannelLayout l,
                              int64_t n) {
  KB_GRID_LOOP(e, n) {
    int64_t c = l.channel_of(e);
    y[e] = T(C(x[e]) * scale[c] + shift[c]);
  }
}

Kernel make_batch_norm(const KernelArgs& k) {
  ChannelLayout l = channel_layout(k.in[0].shape.dims, k.node.attrs);
  double epsilon = k.node.attrs.f(attr::epsilon);
  // x is floating (the ops' inference checks it).
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [l, epsilon](const Ins& in, Buffer& out) {
      int64_t n = out.numel();
      if (n == 0) return;
      std::shared_ptr<void> factors = scratch(size_t(2 * l.channels) * sizeof(C));
      C* scale = static_cast<C*>(factors.get());
      C* shift = scale + l.channels;
      affine_factors<<<blocks_for(l.channels), 256, 0, stream()>>>(
          in[1]->as<T>(), in[2]->as<T>(), in[3]->as<T>(), in[4]->as<T>(), C(epsilon), scale, shift,
          l.channels);
      after_launch("batch norm factors");
      affine_values<<<blocks_for(n), 256, 0, stream()>>>(in[0]->as<T>(), out.as<T>(), scale, shift,
                                                         l, n);
      after_launch("batch norm");
    };
  });
}

using Chunks = CenteredDotChunks;

// Block (chunk q, tile of 32 channels): partial[q * channels + c].
template <bool Center, class T, class C>
__global__ void channels_last_sums(const T* a, const T* x, const T* mean, double* partial,
                                   ChannelLayout l, Chunks chunks) {
  __shared__ double part[Chunks::kRowsAtOnce][Chunks::kLanes];
  int64_t c = int64_t(blockIdx.y) * Chunks::kLanes + threadIdx.x, first, last;
  chunks.rows(blockIdx.x, l.outer, &first, &last);
  double s = 0;
  if (c < l.channels)
    s = centered_rows_sum<Center>(a, x, C(mean[c]), l, first, last, threadIdx.y, c);
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < l.channels) {
    for (int r = 1; r < Chunks::kRowsAtOnce; ++r) s += part[r][threadIdx.x];
    partial[int64_t(blockIdx.x) * l.channels + c] = s;
  }
}

// Block (chunk q, channel c): the chunk's rows' runs of channel c.
template <bool Center, class T, class C>
__global__ void channel_runs_sums(const T* a, const T* x, const T* mean, double* partial,
                                  ChannelLayout l, Chunks chunks) {
  __shared__ double part[Chunks::kThreads];
  int64_t c = blockIdx.y, first, last;
  chunks.rows(blockIdx.x, l.outer, &first, &last);
  part[threadIdx.x] = centered_runs_share<Center>(a, x, C(mean[c]), l, first, last, threadIdx.x, c);
  __syncthreads();
  for (int w = Chunks::kThreads / 2; w > 0; w >>= 1) {
    if (int(threadIdx.x) < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[int64_t(blockIdx.x) * l.channels + c] = part[0];
}

template <class T, class C>
__global__ void add_chunks(const double* partial, T* out, int64_t chunks, int64_t channels) {
  KB_GRID_LOOP(c, channels) out[c] = T(C(centered_chunks_sum(partial, chunks, channels, c)));
}

Kernel make_centered_dot(const KernelArgs& k) {
  ChannelLayout l = channel_layout(k.in[1].shape.dims, k.node.attrs);
  bool center = k.node.attrs.i(attr::center) != 0;
  Chunks chunks(l);  // fits a grid (core/kernel_plans/cuda_ops.cpp)
  // x is floating (the ops' inference checks it).
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [=](const Ins& in, Buffer& out) {
      if (l.channels == 0) return;
      if (chunks.chunks == 0) {  // nothing to sum: zeros
        check_cuda(cudaMemsetAsync(out.data(), 0, out.nbytes(), stream()), "zero sums");
        return;
      }
      std::shared_ptr<void> sums = scratch(size_t(chunks.chunks * l.channels) * sizeof(double));
      double* partial = static_cast<double*>(sums.get());
      const T *a = in[0]->as<T>(), *x = in[1]->as<T>(), *mean = in[2]->as<T>();
      dim3 grid{unsigned(chunks.chunks), unsigned(chunks.tiles)};
      if (chunks.channels_last) {
        dim3 block{Chunks::kLanes, Chunks::kRowsAtOnce};
        if (center)
          channels_last_sums<true, T, C>
              <<<grid, block, 0, stream()>>>(a, x, mean, partial, l, chunks);
        else
          channels_last_sums<false, T, C>
              <<<grid, block, 0, stream()>>>(a, x, mean, partial, l, chunks);
      } else if (center) {
        channel_runs_sums<true, T, C>
            <<<grid, Chunks::kThreads, 0, stream()>>>(a, x, mean, partial, l, chunks);
      } else {
        channel_runs_sums<false, T, C>
            <<<grid, Chunks::kThreads, 0, stream()>>>(a, x, mean, partial, l, chunks);
      }
      after_launch("centered sums");
      add_chunks<T, C><<<blocks_for(l.channels), 256, 0, stream()>>>(partial, out.as<T>(),
                                                                     chunks.chunks, l.channels);
      after_launch("centered sums (chunks)");
    };
  });
}

Registrar r1(ops::BatchNorm, make_batch_norm);
Registrar r2(ops::BatchCenteredDot, make_centered_dot);

}  // namespace
}  // namespace kb::cuda
