// CPU kernels for Softmax, LogSoftmax (stable: max subtracted) and InTopK.
#include <cmath>
#include <limits>
#include <vector>

#include "core/backend/kernel.h"
#include "core/kernel_plans/layout.h"
#include "core/cpu/loops.h"
#include "core/cpu/scratch.h"
#include "core/cpu/row_kernels.h"
#include "core/graph/dispatch.h"

namespace kb::cpu {
namespace {

template <bool Log>
Kernel make_softmax_kernel(const KernelArgs& k) {
  AxisView v = axis_view(k.in[0].shape.dims, k.node.attrs.i("axis"));
  int64_t outer = v.outer, n = v.n, inner = v.inner;
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!is_float_v<T>) {
      fail(Status::dtype, "softmax: floating input required");
    } else {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      if constexpr (std::is_same_v<T, float>) {
        if (inner == 1)
          return [outer, n](const std::vector<const Buffer*>& in, Buffer& out) {
            const float* x = in[0]->as<float>();
            float* o = out.as<float>();
            // A result larger than the caches goes straight to memory.
            bool stream = outer * n * int64_t(sizeof(float)) >= (int64_t(8) << 20);
            parallel_for(
                outer,
                [&](int64_t b, int64_t e) {
                  ThreadScratch<float, struct SoftmaxRow> scratch(static_cast<size_t>(n));
                  for (int64_t r = b; r < e; ++r)
                    softmax_row_f32(x + r * n, o + r * n, scratch.data(), n, Log, stream);
                },
                std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)));
          };
      }
      return [outer, n, inner](const std::vector<const Buffer*>& in, Buffer& out) {
        const T* x = in[0]->as<T>();
        T* o = out.as<T>();
        parallel_for(
            outer * inner,
            [&](int64_t b, int64_t e) {
              for (int64_t oi = b; oi < e; ++oi) {
                int64_t base = (oi / inner) * n * inner + oi % inner;
                C mx = -std::numeric_limits<C>::infinity();
                for (int64_t j = 0; j < n; ++j) mx = std::max(mx, C(x[base + j * inner]));
                if (!std::isfinite(mx)) mx = std::isnan(mx) ? mx : C(0);
                C sum = 0;
                for (int64_t j = 0; j < n; ++j) sum += std::exp(C(x[base + j * inner]) - mx);
                if constexpr (Log) {
                  C ls = std::log(sum);  // (x - mx) - ls: see softmax_row_f32
                  for (int64_t j = 0; j < n; ++j)
                    o[base + j * inner] = T(C(x[base + j * inner]) - mx - ls);
                } else {
                  for (int64_t j = 0; j < n; ++j)
                    o[base + j * inner] = T(std::exp(C(x[base + j * inner]) - mx) / sum);
                }
              }
            },
            std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)));
      };
    }
  });
}
KernelRegistrar k1("cpu", "Softmax", make_softmax_kernel<false>);
KernelRegistrar k2("cpu", "LogSoftmax", make_softmax_kernel<true>);

Kernel make_in_top_k(const KernelArgs& k) {
  int64_t top = k.node.attrs.i("k");
  int64_t classes = k.in[0].shape.dims[1];
  return dispatch_dtype(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [top, classes](const std::vector<const Buffer*>& in, Buffer& out) {
      const T* p = in[0]->as<T>();
      bool* o = out.as<bool>();
      int64_t batch = out.numel();
      for (int64_t b = 0; b < batch; ++b) {
        int64_t t = in[1]->index(b);
        check(t >= 0 && t < classes, Status::invalid_argument, "in_top_k: target ", t,
              " is out of range [0, ", classes, ")");
        const T* row = p + b * classes;
        C target = C(row[t]);
        bool finite = true;
        int64_t greater = 0;
        for (int64_t c = 0; c < classes; ++c) {
          C v = C(row[c]);
          if (!std::isfinite(double(v))) finite = false;
          if (v > target) ++greater;
        }
        o[b] = finite && greater < top;
      }
    };
  });
}
KernelRegistrar k3("cpu", "InTopK", make_in_top_k);

}  // namespace
}  // namespace kb::cpu
