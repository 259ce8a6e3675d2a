// CPU kernels of the sparse primitives (COO): densify, gather/scatter by coordinates, and the
// sparse x dense matrix product.
#include <cstring>
#include <utility>

#include "core/backend/kernel.h"
#include "core/cpu/sum_into.h"
#include "core/kernel_plans/coo_index.h"
#include "core/graph/dispatch.h"
#include "core/util/small_vector.h"

namespace kb {
namespace {

using Ins = std::vector<const Buffer*>;

// An index tensor's values as int64.
std::vector<int64_t> index_values(const Buffer& b) {
  std::vector<int64_t> v(static_cast<size_t>(b.numel()));
  for (int64_t i = 0; i < b.numel(); ++i) v[size_t(i)] = b.index(i);
  return v;
}

// Flat offset of row `i` of an (n, depth) index matrix into `dims` (first `depth` axes).
int64_t flat_offset(const Buffer& idx, int64_t i, int64_t depth, const Dims& dims,
                    const char* who) {
  SmallVector<int64_t, 8> tuple(static_cast<size_t>(depth));
  for (int64_t d = 0; d < depth; ++d) tuple[size_t(d)] = idx.index(i * depth + d);
  return checked_nd_offset(tuple.data(), depth, dims, who);
}

// SparseTensor / SparseToDense: duplicates add up.
Kernel make_to_dense(const KernelArgs& k) {
  Dims static_dims = k.node.attrs.ints(attr::shape);
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [static_dims](const Ins& in, Buffer& out) {
      out.dims = coo_dense_dims(index_values(*in[2]), static_dims, "to_dense");
      out.allocate();
      const Buffer &idx = *in[0], &val = *in[1];
      int64_t nnz = val.numel(), depth = int64_t(out.dims.size());
      check_coo_count(idx.dims[0], idx.numel(), nnz, depth, "to_dense");
      cpu::sum_into<T>(out, [&](C* acc) {
        for (int64_t i = 0; i < nnz; ++i) {
          int64_t off = flat_offset(idx, i, depth, out.dims, "to_dense");
          acc[off] = C(acc[off] + C(val.as<T>()[i]));
        }
      });
    };
  });
}
KernelRegistrar k1("cpu", ops::SparseTensor, make_to_dense);
KernelRegistrar k2("cpu", ops::SparseToDense, make_to_dense);

Kernel make_gather_nd(const KernelArgs& k) {
  int64_t depth = k.in[1].shape.dims.back();
  Dims xd = k.in[0].shape.dims;
  int64_t slice = 1;
  for (size_t d = size_t(depth); d < xd.size(); ++d) slice *= xd[d];
  size_t bytes = size_t(slice) * dtype_size(k.out.dtype);
  return [depth, xd, bytes](const Ins& in, Buffer& out) {
    const char* x = static_cast<const char*>(in[0]->data());
    char* o = static_cast<char*>(out.data());
    int64_t n = index_tuples(in[1]->dims);
    for (int64_t i = 0; i < n && bytes; ++i) {
      int64_t off = flat_offset(*in[1], i, depth, xd, "gather_nd");
      std::memcpy(o + size_t(i) * bytes, x + size_t(off) * bytes, bytes);
    }
  };
}
KernelRegistrar k3("cpu", ops::GatherNd, make_gather_nd);

Kernel make_scatter_nd_like(const KernelArgs& k) {
  int64_t depth = k.in[1].shape.dims.back();
  Dims od = k.out.shape.dims;
  int64_t slice = 1;
  for (size_t d = size_t(depth); d < od.size(); ++d) slice *= od[d];
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [depth, od, slice](const Ins& in, Buffer& out) {
      const T* u = in[0]->as<T>();
      int64_t n = index_tuples(in[1]->dims);
      cpu::sum_into<T>(out, [&](C* acc) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t off = flat_offset(*in[1], i, depth, od, "scatter_nd") * slice;
          for (int64_t j = 0; j < slice; ++j) acc[off + j] = C(acc[off + j] + C(u[i * slice + j]));
        }
      });
    };
  });
}
KernelRegistrar k4("cpu", ops::ScatterNdLike, make_scatter_nd_like);

Kernel make_sparse_matmul(const KernelArgs& k) {
  Dims a_static = k.node.attrs.ints(attr::a_shape);
  bool adj = k.node.attrs.i(attr::adjoint_a) != 0;
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [a_static, adj](const Ins& in, Buffer& out) {
      Dims ad = coo_dense_dims(index_values(*in[2]), a_static, "dot");
      const Buffer &idx = *in[0], &val = *in[1], &b = *in[3];
      out.dims = sparse_product_dims(ad, b.dims, adj);
      int64_t n = out.dims[1];
      out.allocate();
      int64_t nnz = val.numel();
      check_coo_count(idx.dims[0], idx.numel(), nnz, 2, "dot");
      const T* bv = b.as<T>();
      cpu::sum_into<T>(out, [&](C* acc) {
        for (int64_t e = 0; e < nnz; ++e) {
          int64_t r = idx.index(2 * e), c = idx.index(2 * e + 1);
          check_sparse_entry(r, c, ad);
          if (adj) std::swap(r, c);
          C v = C(val.as<T>()[e]);
          C* orow = acc + r * n;
          const T* brow = bv + c * n;
          for (int64_t j = 0; j < n; ++j) orow[j] = C(orow[j] + v * C(brow[j]));
        }
      });
    };
  });
}
KernelRegistrar k5("cpu", ops::SparseMatMul, make_sparse_matmul);

}  // namespace
}  // namespace kb
