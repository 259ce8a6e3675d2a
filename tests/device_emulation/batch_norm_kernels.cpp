// The emulated device's BatchNorm and BatchCenteredDot: core/cuda/batch_norm.cu's factors and
// values (core/kernel_plans/batch_norm.h), and its chunks of sums with each block's threads
// combined in the GPU's order (core/kernel_plans/device_batch_norm.h), on the host.
#include <cstring>
#include <vector>

#include "core/ops/op.h"
#include "core/kernel_plans/device_batch_norm.h"
#include "core/graph/dispatch.h"
#include "element_kernels.h"

namespace kb::emulation {
namespace {

using Ins = std::vector<const Buffer*>;

Kernel batch_norm_kernel(const KernelArgs& k) {
  ChannelLayout l = channel_layout(k.in[0].shape.dims, k.node.attrs);
  double epsilon = k.node.attrs.f(attr::epsilon);
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [l, epsilon](const Ins& in, Buffer& out) {
      std::vector<C> scale(size_t(l.channels)), shift(size_t(l.channels));
      for (int64_t c = 0; c < l.channels; ++c)
        batch_norm_affine<C>(in[1]->as<T>(), in[2]->as<T>(), in[3]->as<T>(), in[4]->as<T>(), c,
                             C(epsilon), scale[size_t(c)], shift[size_t(c)]);
      const T* x = in[0]->as<T>();
      T* y = out.as<T>();
      for (int64_t e = 0; e < out.numel(); ++e) {
        size_t c = size_t(l.channel_of(e));
        y[e] = T(C(x[e]) * scale[c] + shift[c]);
      }
    };
  });
}

template <bool Center, class T, class C>
void chunk_sums(const T* a, const T* x, const T* mean, const ChannelLayout& l,
                const CenteredDotChunks& chunks, std::vector<double>& partial) {
  using Chunks = CenteredDotChunks;
  for (int64_t q = 0; q < chunks.chunks; ++q) {
    int64_t first, last;
    chunks.rows(q, l.outer, &first, &last);
    for (int64_t c = 0; c < l.channels; ++c) {
      C m = C(mean[c]);
      double s;
      if (chunks.channels_last) {
        s = centered_rows_sum<Center>(a, x, m, l, first, last, 0, c);
        for (int y = 1; y < Chunks::kRowsAtOnce; ++y)
          s += centered_rows_sum<Center>(a, x, m, l, first, last, y, c);
      } else {
        double shares[Chunks::kThreads];
        for (int t = 0; t < Chunks::kThreads; ++t)
          shares[t] = centered_runs_share<Center>(a, x, m, l, first, last, t, c);
        for (int w = Chunks::kThreads / 2; w > 0; w >>= 1)
          for (int t = 0; t < w; ++t) shares[t] += shares[t + w];
        s = shares[0];
      }
      partial[size_t(q * l.channels + c)] = s;
    }
  }
}

Kernel centered_dot_kernel(const KernelArgs& k) {
  ChannelLayout l = channel_layout(k.in[1].shape.dims, k.node.attrs);
  bool center = k.node.attrs.i(attr::center) != 0;
  CenteredDotChunks chunks(l);
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [l, center, chunks](const Ins& in, Buffer& out) {
      if (l.channels == 0) return;
      std::vector<double> partial(size_t(chunks.chunks * l.channels));
      const T *a = in[0]->as<T>(), *x = in[1]->as<T>(), *mean = in[2]->as<T>();
      if (center)
        chunk_sums<true, T, C>(a, x, mean, l, chunks, partial);
      else
        chunk_sums<false, T, C>(a, x, mean, l, chunks, partial);
      for (int64_t c = 0; c < l.channels; ++c)
        out.as<T>()[c] = T(C(centered_chunks_sum(partial.data(), chunks.chunks, l.channels, c)));
    };
  });
}

}  // namespace

std::optional<Kernel> batch_norm_kernel(const char* op, const KernelArgs& args) {
  if (std::strcmp(op, "BatchNorm") == 0) return batch_norm_kernel(args);
  if (std::strcmp(op, "BatchCenteredDot") == 0) return centered_dot_kernel(args);
  return std::nullopt;
}

}  // namespace kb::emulation
