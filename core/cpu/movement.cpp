// CPU kernels that move data: views, transpose, concat/split, slicing, tile, reverse, broadcast,
// zero padding, the chosen branch of a Switch, and the shape-only values. (Gather and the other
// indexing kernels: core/cpu/indexing.cpp.)
#include <array>
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
KernelRegistrar k1("cpu", ops::Reshape, make_alias);
KernelRegistrar k2("cpu", ops::ReshapeLike, make_alias);
KernelRegistrar k3("cpu", ops::ExpandDims, make_alias);
KernelRegistrar k4("cpu", ops::Squeeze, make_alias);
KernelRegistrar k5("cpu", ops::Identity, make_alias);
KernelRegistrar k6("cpu", ops::StopGradient, make_alias);

// ReshapeTo: the target's values, read now.
Kernel make_reshape_to(const KernelArgs&) {
  return [](const Ins& in, Buffer& out) {
    const int64_t* spec = in[1]->as<int64_t>();
    out.dims = reshape_dims(Shape(in[0]->dims), Dims(spec, spec + in[1]->numel()));
    out.storage = in[0]->storage;
  };
}
KernelRegistrar k6t("cpu", ops::ReshapeTo, make_reshape_to);

Kernel make_print(const KernelArgs& k) {
  std::string message = k.node.attrs.s(attr::message);
  return [message](const Ins& in, Buffer& out) {
    out.storage = in[0]->storage;
    Session::get().print(message + format_buffer(*in[0]) + "\n");
  };
}
KernelRegistrar k7("cpu", ops::Print, make_print);

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
  auto perm = k.node.attrs.ints(attr::perm);
  size_t es = dtype_size(k.out.dtype);
  return [d, perm, es](const Ins& in, Buffer& out) {
    transpose_copy(in[0]->data(), out.data(), d, perm, es);
  };
}
KernelRegistrar k8("cpu", ops::Transpose, make_transpose);

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
  Blocks b = blocks(k.in, k.node.attrs.i(attr::axis), dtype_size(k.out.dtype));
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
KernelRegistrar k9("cpu", ops::Concat, make_concat);

Kernel make_split_like(const KernelArgs& k) {
  std::vector<TensorType> parts(k.in.begin() + 1, k.in.end());
  Blocks b = blocks(parts, k.node.attrs.i(attr::axis), dtype_size(k.out.dtype));
  int64_t index = k.node.attrs.i(attr::index);
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
KernelRegistrar k10("cpu", ops::SplitLike, make_split_like);

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
KernelRegistrar k11("cpu", ops::StridedSlice, make_strided_slice);

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
KernelRegistrar k12("cpu", ops::StridedSliceGrad, make_strided_slice_grad);

// Tile as a broadcast over interleaved (multiple, dim) axes.
Kernel make_tile(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  const auto& m = k.node.attrs.ints(attr::multiples);
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
KernelRegistrar k13("cpu", ops::Tile, make_tile);

Kernel make_reverse(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  Reversal r = reversal(d, k.node.attrs.ints(attr::axes));
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
KernelRegistrar k15("cpu", ops::Reverse, make_reverse);

Kernel make_size_of(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  double n = 1;
  const auto& axes = k.node.attrs.ints(attr::axes);
  if (axes.empty()) {
    n = double(numel(d));
  } else {
    for (int64_t ax : axes) n *= double(d[ax < 0 ? ax + int64_t(d.size()) : ax]);
  }
  DType t = k.out.dtype;
  return [n, t](const Ins&, Buffer& out) { write_scalar(t, out.data(), n); };
}
KernelRegistrar k19("cpu", ops::SizeOf, make_size_of);

Kernel make_shape_of(const KernelArgs& k) {
  Dims d = k.in[0].shape.dims;
  return [d](const Ins&, Buffer& out) {
    for (size_t i = 0; i < d.size(); ++i) out.as<int32_t>()[i] = int32_t(d[i]);
  };
}
KernelRegistrar k20("cpu", ops::ShapeOf, make_shape_of);

Kernel make_broadcast_like(const KernelArgs& k) {
  Dims od = k.out.shape.dims;
  std::array<Dims, 2> strides{contiguous_strides(od), broadcast_strides(k.in[0].shape.dims, od)};
  size_t es = dtype_size(k.out.dtype);
  return [=](const std::vector<const Buffer*>& in, Buffer& out) {
    const char* x = static_cast<const char*>(in[0]->data());
    char* o = static_cast<char*>(out.data());
    strided_rows<2>(
        od, strides,
        [&](const std::array<int64_t, 2>& off, const std::array<int64_t, 2>& st, int64_t len) {
          if (st[1] == 0 && es == 4) {
            uint32_t v;
            std::memcpy(&v, x + off[1] * es, 4);
            uint32_t* po = reinterpret_cast<uint32_t*>(o + off[0] * es);
            for (int64_t i = 0; i < len; ++i) po[i] = v;
          } else {
            for (int64_t i = 0; i < len; ++i)
              std::memcpy(o + (off[0] + i * st[0]) * es, x + (off[1] + i * st[1]) * es, es);
          }
        });
  };
}
KernelRegistrar kr_broadcast_like("cpu", ops::BroadcastLike, make_broadcast_like);

// ---- Pad --------------------------------------------------------------------------------------
Kernel make_pad(const KernelArgs& k) {
  const Dims& in = k.in[0].shape.dims;
  const Dims& out = k.out.shape.dims;
  Placement pl = placement(in, out, k.node.attrs.ints(attr::pad_before));
  std::array<Dims, 2> strides{pl.outer_strides, pl.inner_strides};
  int64_t base = pl.offset;
  size_t es = dtype_size(k.out.dtype);
  return [in, strides, base, es](const Ins& ins, Buffer& o) {
    // Zero is all-bits-zero for every dtype.
    std::memset(o.data(), 0, o.nbytes());
    if (numel(in) == 0) return;
    const char* src = static_cast<const char*>(ins[0]->data());
    char* dst = static_cast<char*>(o.data()) + base * int64_t(es);
    strided_rows<2>(
        in, strides,
        [&](const std::array<int64_t, 2>& off, const std::array<int64_t, 2>& st, int64_t len) {
          if (st[0] == 1 && st[1] == 1) {
            std::memcpy(dst + off[0] * int64_t(es), src + off[1] * int64_t(es), size_t(len) * es);
            return;
          }
          for (int64_t i = 0; i < len; ++i)
            std::memcpy(dst + (off[0] + i * st[0]) * int64_t(es),
                        src + (off[1] + i * st[1]) * int64_t(es), es);
        });
  };
}
KernelRegistrar k_pad("cpu", ops::Pad, make_pad);

Kernel make_switch(const KernelArgs& k) {
  check(k.in[1].shape.dims == k.in[2].shape.dims, Status::shape,
        "switch: the branches have shapes ", k.in[1].shape.str(), " and ", k.in[2].shape.str(),
        "; branches of different shapes need a condition known when the function is built");
  return [](const std::vector<const Buffer*>& in, Buffer& out) {
    const Buffer* src = *in[0]->as<bool>() ? in[1] : in[2];
    if (src->nbytes()) std::memcpy(out.data(), src->data(), src->nbytes());
  };
}
KernelRegistrar kr_switch("cpu", ops::Switch, make_switch);

}  // namespace
}  // namespace kb::cpu
