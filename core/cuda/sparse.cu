// CUDA kernels of the sparse (COO) primitives of core/ops/sparse_ops.cpp: densify, gather and
// scatter by index tuples, the sparse x dense matrix product. A thread per (tuple, element of its
// slice); sums go through atomics (core/cuda/atomic_sums.cuh), so a duplicate's floating-point
// sum may differ from the CPU's in its last bits (integer sums are exact, wrapping as the CPU's
// do). A kernel that meets an index tuple out of range flags its row; the run fails with the
// CPU's message for it when it settles (core/cuda/index_errors.cuh, core/kernel_plans/coo_index.h).
// dense_shape's values are read on the host: they are the result's dims.
#include "core/cuda/atomic_sums.cuh"
#include "core/cuda/common.cuh"
#include "core/cuda/index_errors.cuh"
#include "core/kernel_plans/coo_index.h"
#include "core/kernel_plans/nd_index.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

// The leading dims that index tuples address.
struct TupleDims {
  int64_t depth = 0;
  int64_t d[kMaxDims] = {};
};
TupleDims tuple_dims(const Dims& dims, int64_t depth) {
  TupleDims t;
  t.depth = depth;
  for (int64_t i = 0; i < depth; ++i) t.d[i] = dims[size_t(i)];
  return t;
}

// RowFlag::defer for tuples of `depth` indices into `dims`.
void defer_tuple_check(RowFlag& flag, const Buffer& idx, int64_t depth, const Dims& dims,
                       const char* who) {
  flag.defer(idx, depth, who, [depth, dims, who](const int64_t* tuple) {
    checked_nd_offset(tuple, depth, dims, who);
  });
}

// Calls f(t, offset of element j of tuple i in the dense tensor) for t = i * slice + j < n,
// flagging the tuples out of range.
template <class I, class F>
__device__ void for_tuple_elements(const I* idx, const TupleDims& td, int64_t n, int64_t slice,
                                   long long* bad, F&& f) {
  KB_GRID_LOOP(t, n) {
    int64_t i = t / slice;
    int64_t off = nd_offset(idx + i * td.depth, td.depth, td.d);
    if (off < 0)
      flag_row(bad, i);
    else
      f(t, off * slice + t % slice);
  }
}

template <class E, class I>
__global__ void gather_nd_kernel(const E* x, const I* idx, E* out, TupleDims td, int64_t n,
                                 int64_t slice, long long* bad) {
  for_tuple_elements(idx, td, n, slice, bad, [&](int64_t t, int64_t at) { out[t] = x[at]; });
}

// acc is zero beforehand.
template <class T, class I>
__global__ void scatter_nd_kernel(const T* u, const I* idx, sum_t<T>* acc, TupleDims td, int64_t n,
                                  int64_t slice, long long* bad) {
  for_tuple_elements(idx, td, n, slice, bad,
                     [&](int64_t t, int64_t at) { atomic_add(acc + at, sum_t<T>(u[t])); });
}

template <class T, class I>
void scatter_nd(const Buffer& u, const Buffer& idx, Buffer& out, const Dims& dims, int64_t depth,
                int64_t rows, int64_t slice, const char* who) {
  SumTarget<T> sum(out);
  int64_t n = rows * slice;
  if (n == 0) {
    // Nothing to add (empty slices), but the CPU checks every tuple all the same.
    std::vector<int64_t> all = host_indices(idx, 0, rows * depth);
    for (int64_t r = 0; r < rows; ++r) checked_nd_offset(all.data() + r * depth, depth, dims, who);
    return sum.finish();
  }
  RowFlag flag;
  scatter_nd_kernel<<<blocks_for(n), 256, 0, stream()>>>(
      u.as<T>(), idx.as<I>(), sum.acc(), tuple_dims(dims, depth), n, slice, flag.ptr());
  after_launch(who);
  sum.finish();
  defer_tuple_check(flag, idx, depth, dims, who);
}

// Calls f(T{}, I{}) for the value dtype `t` and index dtype `i`.
template <class F>
Kernel with_value_and_index_types(DType t, DType i, F&& f) {
  return dispatch_dtype(
      t, [&](auto z) -> Kernel { return with_index_type(i, [&](auto zi) { return f(z, zi); }); });
}

// SparseTensor / SparseToDense (indices, values, dense_shape): duplicates add up.
Kernel make_to_dense(const KernelArgs& k) {
  Dims static_dims = k.node.attrs.ints(attr::shape);
  return with_value_and_index_types(k.out.dtype, k.in[0].dtype, [&](auto z, auto zi) -> Kernel {
    using T = decltype(z);
    using I = decltype(zi);
    return [static_dims](const Ins& in, Buffer& out) {
      const char* who = "to_dense";
      out.dims = coo_dense_dims(host_indices(*in[2], 0, in[2]->numel()), static_dims, who);
      out.storage = scratch(out.nbytes());
      const Buffer &idx = *in[0], &val = *in[1];
      int64_t nnz = val.numel(), depth = int64_t(out.dims.size());
      check_coo_count(idx.dims[0], idx.numel(), nnz, depth, who);
      scatter_nd<T, I>(val, idx, out, out.dims, depth, nnz, 1, who);
    };
  });
}
Registrar r1(ops::SparseTensor, make_to_dense);
Registrar r2(ops::SparseToDense, make_to_dense);

// GatherNd(x, indices (..., depth)).
Kernel make_gather_nd(const KernelArgs& k) {
  int64_t depth = k.in[1].shape.dims.back();
  Dims xd = k.in[0].shape.dims;
  int64_t slice = 1;
  for (size_t d = size_t(depth); d < xd.size(); ++d) slice *= xd[d];
  size_t bytes = dtype_size(k.out.dtype);
  return with_index_type(k.in[1].dtype, [&](auto zi) -> Kernel {
    using I = decltype(zi);
    return [depth, xd, slice, bytes](const Ins& in, Buffer& out) {
      const char* who = "gather_nd";
      int64_t n = index_tuples(in[1]->dims) * slice;
      if (n == 0) return;
      RowFlag flag;
      with_element_type(bytes, [&](auto ze) {
        using E = decltype(ze);
        gather_nd_kernel<<<blocks_for(n), 256, 0, stream()>>>(
            static_cast<const E*>(in[0]->data()), in[1]->as<I>(), static_cast<E*>(out.data()),
            tuple_dims(xd, depth), n, slice, flag.ptr());
      });
      after_launch(who);
      defer_tuple_check(flag, *in[1], depth, xd, who);
    };
  });
}
Registrar r3(ops::GatherNd, make_gather_nd);

// ScatterNdLike(updates, indices (..., depth), like).
Kernel make_scatter_nd_like(const KernelArgs& k) {
  int64_t depth = k.in[1].shape.dims.back();
  Dims od = k.out.shape.dims;
  int64_t slice = 1;
  for (size_t d = size_t(depth); d < od.size(); ++d) slice *= od[d];
  return with_value_and_index_types(k.out.dtype, k.in[1].dtype, [&](auto z, auto zi) -> Kernel {
    using T = decltype(z);
    using I = decltype(zi);
    return [depth, od, slice](const Ins& in, Buffer& out) {
      scatter_nd<T, I>(*in[0], *in[1], out, od, depth, index_tuples(in[1]->dims), slice,
                       "scatter_nd");
    };
  });
}
Registrar r4(ops::ScatterNdLike, make_scatter_nd_like);

// out[r] += v_e * b[c] for entry e = (r, c) (swapped with adjoint), a thread per (e, column).
template <class T, class I>
__global__ void sparse_matmul_kernel(const I* idx, const T* val, const T* b, sum_t<T>* acc,
                                     int64_t n, int64_t cols, int64_t rows_a, int64_t cols_a,
                                     bool adjoint, long long* bad) {
  KB_GRID_LOOP(t, n) {
    int64_t e = t / cols, j = t % cols;
    int64_t r = int64_t(idx[2 * e]), c = int64_t(idx[2 * e + 1]);
    if (r < 0 || r >= rows_a || c < 0 || c >= cols_a) {
      flag_row(bad, e);
      continue;
    }
    if (adjoint) {
      int64_t s = r;
      r = c;
      c = s;
    }
    using C = compute_t<T>;
    atomic_add(acc + r * cols + j, C(val[e]) * C(b[c * cols + j]));
  }
}

// SparseMatMul(indices, values, dense_shape, b): A @ b or A^T @ b.
Kernel make_sparse_matmul(const KernelArgs& k) {
  Dims a_static = k.node.attrs.ints(attr::a_shape);
  bool adjoint = k.node.attrs.i(attr::adjoint_a) != 0;
  return with_value_and_index_types(k.out.dtype, k.in[0].dtype, [&](auto z, auto zi) -> Kernel {
    using T = decltype(z);
    using I = decltype(zi);
    return [a_static, adjoint](const Ins& in, Buffer& out) {
      Dims ad = coo_dense_dims(host_indices(*in[2], 0, in[2]->numel()), a_static, "dot");
      const Buffer &idx = *in[0], &val = *in[1], &b = *in[3];
      out.dims = sparse_product_dims(ad, b.dims, adjoint);
      int64_t cols = out.dims[1];
      out.storage = scratch(out.nbytes());
      SumTarget<T> sum(out);
      int64_t nnz = val.numel();
      check_coo_count(idx.dims[0], idx.numel(), nnz, 2, "dot");
      int64_t n = nnz * cols;
      if (n == 0) {
        // No column to compute (b has none), but the CPU checks every entry all the same.
        std::vector<int64_t> all = host_indices(idx, 0, 2 * nnz);
        for (int64_t e = 0; e < nnz; ++e) check_sparse_entry(all[2 * e], all[2 * e + 1], ad);
        return sum.finish();
      }
      RowFlag flag;
      sparse_matmul_kernel<<<blocks_for(n), 256, 0, stream()>>>(idx.as<I>(), val.as<T>(), b.as<T>(),
                                                                sum.acc(), n, cols, ad[0], ad[1],
                                                                adjoint, flag.ptr());
      after_launch("dot");
      sum.finish();
      flag.defer(idx, 2, "dot", [ad](const int64_t* rc) { check_sparse_entry(rc[0], rc[1], ad); });
    };
  });
}
Registrar r5(ops::SparseMatMul, make_sparse_matmul);

}  // namespace
}  // namespace kb::cuda
