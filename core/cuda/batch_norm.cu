// CUDA kernels of BatchNorm and BatchCenteredDot (core/ops/batch_norm_ops.cpp) over x viewed as
// (outer, channels, inner) (core/util/batch_norm.h). BatchNorm: each channel's factor and offset
// once (batch_norm_affine, the CPU's operations: this file is compiled with -fmad=false), then
// one thread per value. BatchCenteredDot: blocks sum chunks of rows per channel in double into
// scratch (channels last: a warp's lanes read 32 adjacent channels; otherwise a block reads one
// channel's runs), then one thread per channel adds its chunks in order.
#include <algorithm>

#include "core/cuda/common.cuh"
#include "core/util/batch_norm.h"

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
  double epsilon = k.node.attrs.f("epsilon");
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

constexpr int kLanes = 32, kRowsAtOnce = 8, kChunkRows = 256;  // channels last
constexpr int kThreads = 256, kChunkValues = 8192;             // channels first

template <bool Center, class T, class C>
__device__ double centered_term(const T* a, const T* x, C mean, int64_t i) {
  C av = Center ? C(a[i]) - mean : C(a[i]);
  return double(av * (C(x[i]) - mean));
}

// Block (chunk q, tile of 32 channels): partial[q * channels + c].
template <bool Center, class T, class C>
__global__ void channels_last_sums(const T* a, const T* x, const T* mean, double* partial,
                                   ChannelLayout l) {
  __shared__ double part[kRowsAtOnce][kLanes];
  int64_t c = int64_t(blockIdx.y) * kLanes + threadIdx.x;
  int64_t first = int64_t(blockIdx.x) * kChunkRows;
  int64_t last = first + kChunkRows < l.outer ? first + kChunkRows : l.outer;
  double s = 0;
  if (c < l.channels) {
    C m = C(mean[c]);
    for (int64_t o = first + threadIdx.y; o < last; o += kRowsAtOnce)
      s += centered_term<Center>(a, x, m, o * l.channels + c);
  }
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < l.channels) {
    for (int r = 1; r < kRowsAtOnce; ++r) s += part[r][threadIdx.x];
    partial[int64_t(blockIdx.x) * l.channels + c] = s;
  }
}

// Block (chunk q, channel c): the chunk's rows' runs of channel c.
template <bool Center, class T, class C>
__global__ void channel_runs_sums(const T* a, const T* x, const T* mean, double* partial,
                                  ChannelLayout l, int64_t chunk_rows) {
  __shared__ double part[kThreads];
  int64_t c = blockIdx.y;
  int64_t first = int64_t(blockIdx.x) * chunk_rows;
  int64_t last = first + chunk_rows < l.outer ? first + chunk_rows : l.outer;
  int64_t values = (last - first) * l.inner;
  C m = C(mean[c]);
  double s = 0;
  for (int64_t j = threadIdx.x; j < values; j += kThreads) {
    int64_t o = first + j / l.inner, i = j % l.inner;
    s += centered_term<Center>(a, x, m, (o * l.channels + c) * l.inner + i);
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (int(threadIdx.x) < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[int64_t(blockIdx.x) * l.channels + c] = part[0];
}

template <class T, class C>
__global__ void add_chunks(const double* partial, T* out, int64_t chunks, int64_t channels) {
  KB_GRID_LOOP(c, channels) {
    double s = 0;
    for (int64_t q = 0; q < chunks; ++q) s += partial[q * channels + c];
    out[c] = T(C(s));
  }
}

Kernel make_centered_dot(const KernelArgs& k) {
  ChannelLayout l = channel_layout(k.in[1].shape.dims, k.node.attrs);
  bool center = k.node.attrs.i("center") != 0;
  bool last = l.inner == 1;
  int64_t chunk_rows =
      last ? kChunkRows : std::max<int64_t>(1, kChunkValues / std::max<int64_t>(l.inner, 1));
  int64_t chunks = (l.outer + chunk_rows - 1) / chunk_rows;
  int64_t grid_y = last ? (l.channels + kLanes - 1) / kLanes : l.channels;
  // Beyond a grid's second dimension or its first: the CPU's kernel.
  if (grid_y > 65535 || chunks > int64_t(1) << 30) return Kernel{};
  // x is floating (the ops' inference checks it).
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [=](const Ins& in, Buffer& out) {
      if (l.channels == 0) return;
      if (chunks == 0) {  // nothing to sum: zeros
        check_cuda(cudaMemsetAsync(out.data(), 0, out.nbytes(), stream()), "zero sums");
        return;
      }
      std::shared_ptr<void> sums = scratch(size_t(chunks * l.channels) * sizeof(double));
      double* partial = static_cast<double*>(sums.get());
      const T *a = in[0]->as<T>(), *x = in[1]->as<T>(), *mean = in[2]->as<T>();
      dim3 grid{unsigned(chunks), unsigned(grid_y)};
      if (last) {
        dim3 block{kLanes, kRowsAtOnce};
        if (center)
          channels_last_sums<true, T, C><<<grid, block, 0, stream()>>>(a, x, mean, partial, l);
        else
          channels_last_sums<false, T, C><<<grid, block, 0, stream()>>>(a, x, mean, partial, l);
      } else if (center) {
        channel_runs_sums<true, T, C>
            <<<grid, kThreads, 0, stream()>>>(a, x, mean, partial, l, chunk_rows);
      } else {
        channel_runs_sums<false, T, C>
            <<<grid, kThreads, 0, stream()>>>(a, x, mean, partial, l, chunk_rows);
      }
      after_launch("centered sums");
      add_chunks<T, C>
          <<<blocks_for(l.channels), 256, 0, stream()>>>(partial, out.as<T>(), chunks, l.channels);
      after_launch("centered sums (chunks)");
    };
  });
}

Registrar r1("BatchNorm", make_batch_norm);
Registrar r2("BatchCenteredDot", make_centered_dot);

}  // namespace
}  // namespace kb::cuda
