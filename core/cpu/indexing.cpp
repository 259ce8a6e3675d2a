// CPU kernels that index: Gather and its gradient ScatterAddLike, TileGrad (the sum over a tile's
// copies), ArgReduce (argmax/argmin), Cumulative (cumsum/cumprod) and InTopK, as the CUDA plugin
// has them (core/cuda/indexing.cu).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/cpu/reduce.h"
#include "core/cpu/sum_into.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/layout.h"
#include "core/kernel_plans/reduce_plan.h"

namespace kb::cpu {
namespace {

using Ins = std::vector<const Buffer*>;

template <class F>
void for_each_index(const Buffer& idx, int64_t limit, const char* who, F&& f) {
  int64_t n = idx.numel();
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = idx.index(i);
    check(v >= 0 && v < limit, Status::invalid_argument, who, ": index ", v,
          " is out of range [0, ", limit, ")");
    f(i, v);
  }
}

Kernel make_gather(const KernelArgs& k) {
  int64_t rows = k.in[0].shape.dims[0];
  int64_t row_bytes =
      int64_t(dtype_size(k.out.dtype)) * (numel(k.in[0].shape.dims) / std::max<int64_t>(rows, 1));
  return [rows, row_bytes](const Ins& in, Buffer& out) {
    const char* ref = static_cast<const char*>(in[0]->data());
    char* o = static_cast<char*>(out.data());
    for_each_index(*in[1], rows, "gather", [&](int64_t i, int64_t v) {
      std::memcpy(o + i * row_bytes, ref + v * row_bytes, size_t(row_bytes));
    });
  };
}
KernelRegistrar k16("cpu", ops::Gather, make_gather);

Kernel make_scatter_add_like(const KernelArgs& k) {
  int64_t rows = k.out.shape.dims[0];
  int64_t row = numel(k.out.shape.dims) / std::max<int64_t>(rows, 1);
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [rows, row](const Ins& in, Buffer& out) {
      const T* g = in[0]->as<T>();
      cpu::sum_into<T>(out, [&](C* acc) {
        for_each_index(*in[1], rows, "gather", [&](int64_t i, int64_t v) {
          for (int64_t j = 0; j < row; ++j)
            acc[v * row + j] = C(acc[v * row + j] + C(g[i * row + j]));
        });
      });
    };
  });
}
KernelRegistrar k17("cpu", ops::ScatterAddLike, make_scatter_add_like);

Kernel make_tile_grad(const KernelArgs& k) {
  const Dims& d = k.out.shape.dims;
  const auto& m = k.node.attrs.ints(attr::multiples);
  Dims split;
  std::vector<int64_t> axes;
  for (size_t i = 0; i < d.size(); ++i) {
    axes.push_back(int64_t(split.size()));
    split.push_back(m[i]);
    split.push_back(d[i]);
  }
  return [split, axes](const Ins& in, Buffer& out) {
    Buffer view(in[0]->dtype, split);
    view.storage = in[0]->storage;
    reduce_into(ReduceMode::sum, view, axes, out);
  };
}
KernelRegistrar k14("cpu", ops::TileGrad, make_tile_grad);

// (outer, n, inner) view of an axis.
Kernel make_arg_reduce(const KernelArgs& k) {
  const AxisScan scan = arg_reduce_scan(k);
  const AxisView v = scan.v;
  const bool is_max = scan.first_mode;
  return dispatch_dtype(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [v, is_max](const std::vector<const Buffer*>& in, Buffer& out) {
      const T* x = in[0]->as<T>();
      int64_t* o = out.as<int64_t>();
      for (int64_t a = 0; a < v.outer; ++a)
        for (int64_t i = 0; i < v.inner; ++i) {
          const T* p = x + a * v.n * v.inner + i;
          int64_t best = 0;
          C bv = C(p[0]);
          for (int64_t j = 1; j < v.n; ++j) {
            C c = C(p[j * v.inner]);
            if (is_max ? c > bv : c < bv) bv = c, best = j;
          }
          o[a * v.inner + i] = best;
        }
    };
  });
}
KernelRegistrar kr_arg_reduce("cpu", ops::ArgReduce, make_arg_reduce);

Kernel make_cumulative(const KernelArgs& k) {
  const AxisScan scan = cumulative_scan(k);
  const AxisView v = scan.v;
  const bool is_sum = scan.first_mode;
  return dispatch_dtype(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [v, is_sum](const std::vector<const Buffer*>& in, Buffer& out) {
      const T* x = in[0]->as<T>();
      T* o = out.as<T>();
      for (int64_t a = 0; a < v.outer; ++a)
        for (int64_t i = 0; i < v.inner; ++i) {
          int64_t base = a * v.n * v.inner + i;
          C acc = is_sum ? C(0) : C(1);
          for (int64_t j = 0; j < v.n; ++j) {
            C c = C(x[base + j * v.inner]);
            acc = is_sum ? C(acc + c) : C(acc * c);
            o[base + j * v.inner] = T(acc);
          }
        }
    };
  });
}
KernelRegistrar kr_cumulative("cpu", ops::Cumulative, make_cumulative);

Kernel make_in_top_k(const KernelArgs& k) {
  int64_t top = k.node.attrs.i(attr::k);
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
KernelRegistrar k3("cpu", ops::InTopK, make_in_top_k);

}  // namespace
}  // namespace kb::cpu
