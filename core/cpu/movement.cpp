// CPU kernels that move data: views, transpose, concat/split, slicing, tile, reverse,
// gather/scatter, and the shape-only values.
#include <cstring>

#include "core/backend/kernel.h"
#include "core/cpu/format.h"
#include "core/cpu/loops.h"
#include "core/cpu/reduce.h"
#include "core/cpu/sum_into.h"
#include "core/cpu/transpose.h"
#include "core/graph/scalar.h"
#include "core/graph/session.h"
#include "core/ops/reshape_dims.h"
#include "core/ops/slice_spec.h"
#include "core/graph/dispatch.h"

namespace kb::cpu {
namespace {

using Ins = std::vector<const Buffer*>;

Kernel make_alias(const KernelArgs&) {
  return [](const Ins& in, Buffer& out) { out.storage = in[0]->storage; };
}
KernelRegistrar k1("cpu", "Reshape", make_alias);
KernelRegistrar k2("cpu", "ReshapeLike", make_alias);
KernelRegistrar k3("cpu", "ExpandDims", make_alias);
KernelRegistrar k4("cpu", "Squeeze", make_alias);
KernelRegistrar k5("cpu", "Identity", make_alias);
KernelRegistrar k6("cpu", "StopGradient", make_alias);

// ReshapeTo: the target's values, read now.
Kernel make_reshape_to(const KernelArgs&) {
  return [](const Ins& in, Buffer& out) {
    const int64_t* spec = in[1]->as<int64_t>();
    out.dims = reshape_dims(Shape(in[0]->dims), Dims(spec, spec + in[1]->numel()));
    out.storage = in[0]->storage;
  };
}
KernelRegistrar k6t("cpu", "ReshapeTo", make_reshape_to);

Kernel make_print(const KernelArgs& k) {
  std::string message = k.node.attrs.s("message");
  return [message](const Ins& in, Buffer& out) {
    out.storage = in[0]->storage;
    Session::get().print(message + format_buffer(*in[0]) + "\n");
  };
}
KernelRegistrar k7("cpu", "Print", make_print);

// Copies with arbitrary element strides on both sides, element size es.
void strided_copy(const char* src, char* dst, const Dims& dims, const Dims& dst_strides,
                  const Dims& src_strides, size_t es) {
  using Small = SmallVector<int64_t, 8>;  // no allocation per call
  std::array<Small, 2> strides;
  for (size_t i = 0; i < dims.size(); ++i) {
    strides[0].push_back(dst_strides[i]);
    strides[1].push_back(src_strides[i]);
  }
  strided_rows<2>(
      dims, strides,
      [&](const std::array<int64_t, 2>& off, const std::array<int64_t, 2>& st, int64_t len) {
        if (st[0] == 1 && st[1] == 1) {
          std::memcpy(dst + off[0] * int64_t(es), src + off[1] * int64_t(es), size_t(len) * es);
          return;
        }
        for (int64_t i = 0; i < len; ++i)
          std::memcpy(dst + (off[0] + i * st[0]) * int64_t(es),
                      src + (off[1] + i * st[1]) * int64_t(es), es);
      });
}

Kernel make_transpose(const KernelArgs& k) {
  Dims d = k.in[0].shape.dims;
  auto perm = k.node.attrs.ints("perm");
  size_t es = dtype_size(k.out.dtype);
  return [d, perm, es](const Ins& in, Buffer& out) {
    transpose_copy(in[0]->data(), out.data(), d, perm, es);
  };
}
KernelRegistrar k8("cpu", "Transpose", make_transpose);

// Concat and SplitLike: inputs viewed as (outer, n_i * inner).
struct Blocks {
  int64_t outer = 1, inner = 1;
  std::vector<int64_t> widths;  // n_i * inner * es, in bytes
};
Blocks blocks(const std::vector<TensorType>& parts, int64_t axis, size_t es) {
  Blocks b;
  const Dims& d0 = parts[0].shape.dims;
  for (int64_t i = 0; i < axis; ++i) b.outer *= d0[i];
  for (size_t i = axis + 1; i < d0.size(); ++i) b.inner *= d0[i];
  for (auto& p : parts) b.widths.push_back(p.shape.dims[axis] * b.inner * int64_t(es));
  return b;
}

Kernel make_concat(const KernelArgs& k) {
  Blocks b = blocks(k.in, k.node.attrs.i("axis"), dtype_size(k.out.dtype));
  return [b](const Ins& in, Buffer& out) {
    int64_t total = 0;
    for (auto w : b.widths) total += w;
    char* o = static_cast<char*>(out.data());
    for (int64_t r = 0; r < b.outer; ++r) {
      int64_t pos = r * total;
      for (size_t i = 0; i < in.size(); ++i) {
        std::memcpy(o + pos, static_cast<const char*>(in[i]->data()) + r * b.widths[i],
                    size_t(b.widths[i]));
        pos += b.widths[i];
      }
    }
  };
}
KernelRegistrar k9("cpu", "Concat", make_concat);

Kernel make_split_like(const KernelArgs& k) {
  std::vector<TensorType> parts(k.in.begin() + 1, k.in.end());
  Blocks b = blocks(parts, k.node.attrs.i("axis"), dtype_size(k.out.dtype));
  int64_t index = k.node.attrs.i("index");
  int64_t before = 0, total = 0;
  for (size_t i = 0; i < b.widths.size(); ++i) {
    if (int64_t(i) < index) before += b.widths[i];
    total += b.widths[i];
  }
  int64_t w = b.widths[index];
  return [b, before, total, w](const Ins& in, Buffer& out) {
    const char* s = static_cast<const char*>(in[0]->data());
    char* o = static_cast<char*>(out.data());
    for (int64_t r = 0; r < b.outer; ++r) std::memcpy(o + r * w, s + r * total + before, size_t(w));
  };
}
KernelRegistrar k10("cpu", "SplitLike", make_split_like);

Kernel make_strided_slice(const KernelArgs& k) {
  SliceMap m = slice_map(k.in[0].shape.dims, k.node.attrs);
  size_t es = dtype_size(k.out.dtype);
  Dims dense = contiguous_strides(m.dims);
  return [m, dense, es](const Ins& in, Buffer& out) {
    if (numel(m.dims) == 0) return;
    strided_copy(static_cast<const char*>(in[0]->data()) + m.base * int64_t(es),
                 static_cast<char*>(out.data()), m.dims, dense, m.src_strides, es);
  };
}
KernelRegistrar k11("cpu", "StridedSlice", make_strided_slice);

Kernel make_strided_slice_grad(const KernelArgs& k) {
  SliceMap m = slice_map(k.out.shape.dims, k.node.attrs);
  size_t es = dtype_size(k.out.dtype);
  Dims dense = contiguous_strides(m.dims);
  return [m, dense, es](const Ins& in, Buffer& out) {
    std::memset(out.data(), 0, out.nbytes());
    if (numel(m.dims) == 0) return;
    strided_copy(static_cast<const char*>(in[0]->data()),
                 static_cast<char*>(out.data()) + m.base * int64_t(es), m.dims, m.src_strides,
                 dense, es);
  };
}
KernelRegistrar k12("cpu", "StridedSliceGrad", make_strided_slice_grad);

// Tile as a broadcast over interleaved (multiple, dim) axes.
Kernel make_tile(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  const auto& m = k.node.attrs.ints("multiples");
  Dims cs = contiguous_strides(d);
  Dims od, src;
  for (size_t i = 0; i < d.size(); ++i) {
    od.push_back(m[i]);
    src.push_back(0);
    od.push_back(d[i]);
    src.push_back(cs[i]);
  }
  size_t es = dtype_size(k.out.dtype);
  Dims dense = contiguous_strides(od);
  return [od, dense, src, es](const Ins& in, Buffer& out) {
    if (numel(od) == 0) return;
    strided_copy(static_cast<const char*>(in[0]->data()), static_cast<char*>(out.data()), od, dense,
                 src, es);
  };
}
KernelRegistrar k13("cpu", "Tile", make_tile);

Kernel make_tile_grad(const KernelArgs& k) {
  const Dims& d = k.out.shape.dims;
  const auto& m = k.node.attrs.ints("multiples");
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
KernelRegistrar k14("cpu", "TileGrad", make_tile_grad);

Kernel make_reverse(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  Reversal r = reversal(d, k.node.attrs.ints("axes"));
  Dims src = r.strides;
  int64_t base = r.offset;
  size_t es = dtype_size(k.out.dtype);
  Dims dense = contiguous_strides(d);
  return [d, dense, src, base, es](const Ins& in, Buffer& out) {
    if (numel(d) == 0) return;
    strided_copy(static_cast<const char*>(in[0]->data()) + base * int64_t(es),
                 static_cast<char*>(out.data()), d, dense, src, es);
  };
}
KernelRegistrar k15("cpu", "Reverse", make_reverse);

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
KernelRegistrar k16("cpu", "Gather", make_gather);

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
KernelRegistrar k17("cpu", "ScatterAddLike", make_scatter_add_like);

Kernel make_fill_like(const KernelArgs& k) {
  double value = k.node.attrs.f("value");
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    T v;
    write_scalar(k.out.dtype, &v, value);
    return [v](const Ins&, Buffer& out) {
      T* o = out.as<T>();
      int64_t n = out.numel();
      for (int64_t i = 0; i < n; ++i) o[i] = v;
    };
  });
}
KernelRegistrar k18("cpu", "FillLike", make_fill_like);

Kernel make_size_of(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  double n = 1;
  const auto& axes = k.node.attrs.ints("axes");
  if (axes.empty()) {
    n = double(numel(d));
  } else {
    for (int64_t ax : axes) n *= double(d[ax < 0 ? ax + int64_t(d.size()) : ax]);
  }
  DType t = k.out.dtype;
  return [n, t](const Ins&, Buffer& out) { write_scalar(t, out.data(), n); };
}
KernelRegistrar k19("cpu", "SizeOf", make_size_of);

Kernel make_shape_of(const KernelArgs& k) {
  Dims d = k.in[0].shape.dims;
  return [d](const Ins&, Buffer& out) {
    for (size_t i = 0; i < d.size(); ++i) out.as<int32_t>()[i] = int32_t(d[i]);
  };
}
KernelRegistrar k20("cpu", "ShapeOf", make_shape_of);

}  // namespace
}  // namespace kb::cpu
