// CUDA kernels for tiling's gradient, gather/scatter, arg-reductions, cumulative scans and
// in_top_k (slices, concatenation, tiling and reversal are copies: core/cuda/movement.cu).
#include "core/kernel_plans/layout.h"
#include "core/cuda/common.cuh"
#include "core/cuda/atomic_sums.cuh"
#include "core/cuda/index_errors.cuh"
#include "core/kernel_plans/axis_scans.h"
#include "core/ops/modes.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

// TileGrad sums the gradient over the multiples: a reduction of the interleaved (multiple, dim)
// axes that Tile broadcasts over (core/kernel_plans/copy_plan.cpp).
Kernel make_tile_grad(const KernelArgs& k) {
  const Dims& d = k.out.shape.dims;
  const auto& mult = k.node.attrs.ints(attr::multiples);
  Dims split;
  std::vector<int64_t> axes;
  for (size_t i = 0; i < d.size(); ++i) {
    axes.push_back(int64_t(split.size()));
    split.push_back(mult[i]);
    split.push_back(d[i]);
  }
  ReducePlan p = plan_reduce(split, axes);
  return [p, split](const Ins& in, Buffer& out) {
    Buffer view(in[0]->dtype, split);
    view.storage = in[0]->storage;
    view.device = Device::cuda;
    reduce_on_device(0, p, view, out);
  };
}
Registrar r1(ops::TileGrad, make_tile_grad);

template <class E, class I>
__global__ void gather_kernel(const E* ref, const I* idx, E* out, int64_t n_idx, int64_t row,
                              int64_t rows, long long* bad) {
  int64_t n = n_idx * row;
  KB_GRID_LOOP(t, n) {
    int64_t i = t / row, j = t % row;
    I v = idx[i];
    if (index_ok(v, rows, i, bad)) out[t] = ref[int64_t(v) * row + j];
  }
}

Kernel make_gather(const KernelArgs& k) {
  int64_t rows = k.in[0].shape.dims[0];
  int64_t row = rows ? numel(k.in[0].shape.dims) / rows : 0;
  size_t es = dtype_size(k.out.dtype);
  return with_index_type(k.in[1].dtype, [&](auto zi) -> Kernel {
    using I = decltype(zi);
    return [rows, row, es](const Ins& in, Buffer& out) {
      int64_t n_idx = in[1]->numel();
      if (n_idx * row == 0) return check_indices_on_host(*in[1], rows, "gather", "index");
      RowFlag flag;
      with_element_type(es, [&](auto ze) {
        using E = decltype(ze);
        gather_kernel<<<blocks_for(n_idx * row), 256, 0, stream()>>>(
            static_cast<const E*>(in[0]->data()), in[1]->as<I>(), static_cast<E*>(out.data()),
            n_idx, row, rows, flag.ptr());
      });
      after_launch("gather");
      defer_index_check(flag, *in[1], rows, "gather", "index");
    };
  });
}
Registrar r2(ops::Gather, make_gather);

template <class T, class I>
__global__ void scatter_add_kernel(const T* g, const I* idx, sum_t<T>* acc, int64_t n_idx,
                                   int64_t row, int64_t rows, long long* bad) {
  int64_t n = n_idx * row;
  KB_GRID_LOOP(t, n) {
    int64_t i = t / row, j = t % row;
    I v = idx[i];
    if (index_ok(v, rows, i, bad)) atomic_add(acc + int64_t(v) * row + j, sum_t<T>(g[t]));
  }
}

Kernel make_scatter_add_like(const KernelArgs& k) {
  int64_t rows = k.out.shape.dims[0];
  int64_t row = rows ? numel(k.out.shape.dims) / rows : 0;
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return with_index_type(k.in[1].dtype, [&](auto zi) -> Kernel {
      using I = decltype(zi);
      return [rows, row](const Ins& in, Buffer& out) {
        SumTarget<T> sum(out);
        int64_t n_idx = in[1]->numel();
        if (n_idx * row == 0) {
          check_indices_on_host(*in[1], rows, "gather", "index");
          return sum.finish();
        }
        RowFlag flag;
        scatter_add_kernel<<<blocks_for(n_idx * row), 256, 0, stream()>>>(
            in[0]->as<T>(), in[1]->as<I>(), sum.acc(), n_idx, row, rows, flag.ptr());
        after_launch("scatter_add");
        sum.finish();
        defer_index_check(flag, *in[1], rows, "gather", "index");
      };
    });
  });
}
Registrar r3(ops::ScatterAddLike, make_scatter_add_like);

template <class T>
__global__ void arg_kernel(const T* x, int64_t* out, AxisView v, bool is_max) {
  int64_t total = v.outer * v.inner;
  KB_GRID_LOOP(t, total) {
    const T* p = x + v.line_start(t);
    out[t] = arg_scan<compute_t<T>>(p, v.n, v.inner, is_max);
  }
}

// A lane's value as the warp shuffles it (no shuffle of 8- or 16-bit integers).
template <class C>
__device__ C shuffle_down(C v, int offset) {
  if constexpr (sizeof(C) < 4) {
    return C(__shfl_down_sync(0xffffffffu, int(v), offset));
  } else if constexpr (std::is_same_v<C, int64_t>) {
    return C(__shfl_down_sync(0xffffffffu, (long long)v, offset));
  } else {
    return __shfl_down_sync(0xffffffffu, v, offset);
  }
}

// Long rows (inner == 1): a warp per row (core/kernel_plans/axis_scans.h). Each lane finds the
// candidate of its strided part; the candidates combine down the warp, a tie to the lower position.
template <class T>
__global__ void arg_rows_kernel(const T* x, int64_t* out, int64_t rows, int64_t n, bool is_max) {
  using C = compute_t<T>;
  const int lane = threadIdx.x % kArgLanes;
  const int64_t warps = int64_t(gridDim.x) * blockDim.x / kArgLanes;
  for (int64_t r = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / kArgLanes; r < rows;
       r += warps) {
    const T* p = x + r * n;
    ArgCandidate<C> best = arg_lane<C>(p, n, lane, kArgLanes, is_max);
    for (int offset = kArgLanes / 2; offset > 0; offset >>= 1) {
      ArgCandidate<C> other{shuffle_down(best.value, offset),
                            int64_t(__shfl_down_sync(0xffffffffu, (long long)best.at, offset))};
      if (arg_prefer(best, other, is_max)) best = other;
    }
    if (lane == 0) out[r] = arg_row_result<C>(p, best);
  }
}

Kernel make_arg_reduce(const KernelArgs& k) {
  const AxisScan scan = arg_reduce_scan(k);
  const AxisView v = scan.v;
  const bool is_max = scan.first_mode;
  return dispatch_non_bool<Kernel>(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [v, is_max](const Ins& in, Buffer& out) {
      int64_t n = v.outer * v.inner;
      if (n == 0) return;
      if (v.inner == 1 && v.n >= kArgWarpRowLength)
        arg_rows_kernel<<<blocks_for(v.outer * kArgLanes), 256, 0, stream()>>>(
            in[0]->as<T>(), out.as<int64_t>(), v.outer, v.n, is_max);
      else
        arg_kernel<<<blocks_for(n), 256, 0, stream()>>>(in[0]->as<T>(), out.as<int64_t>(), v,
                                                        is_max);
      after_launch("argmax");
    };
  });
}
Registrar r4(ops::ArgReduce, make_arg_reduce);

template <class T>
__global__ void scan_kernel(const T* x, T* out, AxisView v, bool is_sum) {
  int64_t total = v.outer * v.inner;
  KB_GRID_LOOP(t, total) {
    int64_t base = v.line_start(t);
    cumulative_line<compute_t<T>>(x + base, out + base, v.n, v.inner, is_sum);
  }
}

Kernel make_cumulative(const KernelArgs& k) {
  const AxisScan scan = cumulative_scan(k);
  const AxisView v = scan.v;
  const bool is_sum = scan.first_mode;
  return dispatch_non_bool<Kernel>(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [v, is_sum](const Ins& in, Buffer& out) {
      int64_t n = v.outer * v.inner;
      if (n == 0) return;
      scan_kernel<<<blocks_for(n), 256, 0, stream()>>>(in[0]->as<T>(), out.as<T>(), v, is_sum);
      after_launch("cumsum");
    };
  });
}
Registrar r5(ops::Cumulative, make_cumulative);

template <class T, class I>
__global__ void in_top_k_kernel(const T* p, const I* targets, bool* out, int64_t batch,
                                int64_t classes, int64_t k, long long* bad) {
  KB_GRID_LOOP(b, batch) {
    I t = targets[b];
    if (!index_ok(t, classes, b, bad)) continue;
    const T* row = p + b * classes;
    compute_t<T> target = row[t];
    bool finite = true;
    int64_t greater = 0;
    for (int64_t c = 0; c < classes; ++c) {
      compute_t<T> v = row[c];
      if (!isfinite(v)) finite = false;
      if (v > target) ++greater;
    }
    out[b] = finite && greater < k;
  }
}

Kernel make_in_top_k(const KernelArgs& k) {
  int64_t top = k.node.attrs.i(attr::k);
  int64_t classes = k.in[0].shape.dims[1];
  return dispatch_float<Kernel>(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return with_index_type(k.in[1].dtype, [&](auto zi) -> Kernel {
      using I = decltype(zi);
      return [top, classes](const Ins& in, Buffer& out) {
        int64_t batch = out.numel();
        if (batch == 0) return;
        RowFlag flag;
        in_top_k_kernel<<<blocks_for(batch), 256, 0, stream()>>>(
            in[0]->as<T>(), in[1]->as<I>(), out.as<bool>(), batch, classes, top, flag.ptr());
        after_launch("in_top_k");
        defer_index_check(flag, *in[1], classes, "in_top_k", "target");
      };
    });
  });
}
Registrar r6(ops::InTopK, make_in_top_k);

}  // namespace
}  // namespace kb::cuda
