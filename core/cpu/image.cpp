// CPU kernels of Pad (zero padding), Resize and ResizeGrad (core/ops/image_ops.cpp).
//
// Resize is separable: along each spatial axis an output index o reads at most two input indices
// with weights (nearest: floor(o / f) with weight 1; legacy bilinear: s = o / f, lo = floor(s),
// hi = min(lo + 1, in - 1), weights 1 - (s - lo) and s - lo). ResizeGrad applies the transposed
// per-axis lists, so both run through one kernel that gathers (no scatter, no atomics).
#include <algorithm>
#include <array>
#include <cstring>

#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/util/dispatch.h"

namespace kb::cpu {
namespace {

using Ins = std::vector<const Buffer*>;

// ---- Pad --------------------------------------------------------------------------------------
Kernel make_pad(const KernelArgs& k) {
  const Dims& in = k.in[0].shape.dims;
  const Dims& out = k.out.shape.dims;
  const auto& pb = k.node.attrs.ints("pad_before");
  Dims os = contiguous_strides(out), is = contiguous_strides(in);
  int64_t base = 0;
  for (size_t i = 0; i < in.size(); ++i) base += pb[i] * os[i];
  size_t es = dtype_size(k.out.dtype);
  return [in, os, is, base, es](const Ins& ins, Buffer& o) {
    // Zero is all-bits-zero for every dtype.
    std::memset(o.data(), 0, o.nbytes());
    if (numel(in) == 0) return;
    const char* src = static_cast<const char*>(ins[0]->data());
    char* dst = static_cast<char*>(o.data()) + base * int64_t(es);
    std::array<Dims, 2> strides{os, is};
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
KernelRegistrar k1("cpu", "Pad", make_pad);

// ---- Resize / ResizeGrad ----------------------------------------------------------------------
// For each destination index of one axis: the source indices and weights it sums (CSR).
struct AxisMap {
  std::vector<int64_t> off{0}, idx;
  std::vector<double> w;
  void add(int64_t i, double weight) {
    idx.push_back(i);
    w.push_back(weight);
  }
  void end_row() { off.push_back(int64_t(idx.size())); }
};

// Resize along one axis of input size n by factor f (output n * f).
AxisMap forward_map(int64_t n, int64_t f, bool bilinear) {
  AxisMap m;
  for (int64_t o = 0; o < n * f; ++o) {
    int64_t lo = o / f, hi = std::min(lo + 1, n - 1);
    double w = bilinear ? double(o % f) / double(f) : 0.0;
    if (w == 0.0 || hi == lo) {
      m.add(lo, 1.0);
    } else {
      m.add(lo, 1.0 - w);
      m.add(hi, w);
    }
    m.end_row();
  }
  return m;
}

// The transpose of a map from `src_n` indices.
AxisMap transpose_map(const AxisMap& f, int64_t src_n) {
  std::vector<std::vector<std::pair<int64_t, double>>> rows(size_t(std::max<int64_t>(src_n, 0)));
  for (size_t o = 0; o + 1 < f.off.size(); ++o)
    for (int64_t e = f.off[o]; e < f.off[o + 1]; ++e)
      rows[f.idx[e]].push_back({int64_t(o), f.w[e]});
  AxisMap t;
  for (auto& r : rows) {
    for (auto& [i, w] : r) t.add(i, w);
    t.end_row();
  }
  return t;
}

struct Layout {
  int64_t n = 0, c = 0, sn = 0, sc = 0;
  std::array<int64_t, 3> sp{1, 1, 1}, ss{0, 0, 0};
};

// dims of rank nsp + 2; spatial dims right-aligned into 3 (leading extents 1).
Layout layout_of(const Dims& d, bool first, size_t nsp) {
  Layout l;
  l.n = d[0];
  l.c = first ? d[1] : d[nsp + 1];
  size_t off = 3 - nsp;
  for (size_t i = 0; i < nsp; ++i) l.sp[off + i] = d[(first ? 2 : 1) + i];
  int64_t plane = l.sp[0] * l.sp[1] * l.sp[2];
  if (first) {
    l.ss = {l.sp[1] * l.sp[2], l.sp[2], 1};
    l.sc = plane;
  } else {
    l.ss = {l.sp[1] * l.sp[2] * l.c, l.sp[2] * l.c, l.c};
    l.sc = 1;
  }
  l.sn = l.c * plane;
  return l;
}

template <class T>
using resize_acc_t = std::conditional_t<
    std::is_same_v<T, double>, double,
    std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, half>, float, T>>;

Kernel make_separable(const KernelArgs& k, bool adjoint) {
  const Attrs& a = k.node.attrs;
  bool first = a.i("layout") != 0, bilinear = a.i("mode") == 1;
  const auto& factors = a.ints("factors");
  size_t nsp = factors.size();
  const Dims& src_d = k.in[0].shape.dims;
  const Dims& dst_d = k.out.shape.dims;
  Layout src = layout_of(src_d, first, nsp), dst = layout_of(dst_d, first, nsp);
  // The maps go from destination indices to source indices; axes without resizing (the leading
  // padding of 2-D problems) map identically.
  std::array<AxisMap, 3> maps;
  for (size_t ax = 0; ax < 3; ++ax) {
    if (ax < 3 - nsp) {
      maps[ax] = forward_map(1, 1, false);
      continue;
    }
    int64_t f = factors[ax - (3 - nsp)];
    const Layout& x = adjoint ? dst : src;  // the un-resized side
    AxisMap fwd = forward_map(x.sp[ax], f, bilinear);
    maps[ax] = adjoint ? transpose_map(fwd, x.sp[ax]) : fwd;
  }
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, bool>) {
      fail(Status::dtype, "resize: bool input is not supported");
    } else {
      using Acc = resize_acc_t<T>;
      struct W {
        std::vector<int64_t> off, idx;
        std::vector<Acc> w;
      };
      std::array<W, 3> m;
      for (size_t ax = 0; ax < 3; ++ax) {
        m[ax].off = maps[ax].off;
        m[ax].idx = maps[ax].idx;
        for (double v : maps[ax].w) m[ax].w.push_back(Acc(v));
      }
      return [m, src, dst](const Ins& in, Buffer& out) {
        const T* x = in[0]->as<T>();
        T* y = out.as<T>();
        int64_t positions = dst.n * dst.sp[0] * dst.sp[1] * dst.sp[2];
        int64_t C = dst.c;
        parallel_for(
            positions,
            [&](int64_t b, int64_t e) {
              std::vector<Acc> acc(size_t(std::max<int64_t>(C, 1)));
              for (int64_t p = b; p < e; ++p) {
                int64_t t = p;
                int64_t o2 = t % dst.sp[2];
                t /= dst.sp[2];
                int64_t o1 = t % dst.sp[1];
                t /= dst.sp[1];
                int64_t o0 = t % dst.sp[0], n = t / dst.sp[0];
                std::fill(acc.begin(), acc.end(), Acc(0));
                for (int64_t e0 = m[0].off[o0]; e0 < m[0].off[o0 + 1]; ++e0) {
                  for (int64_t e1 = m[1].off[o1]; e1 < m[1].off[o1 + 1]; ++e1) {
                    Acc w01 = m[0].w[e0] * m[1].w[e1];
                    for (int64_t e2 = m[2].off[o2]; e2 < m[2].off[o2 + 1]; ++e2) {
                      Acc w = w01 * m[2].w[e2];
                      const T* xp = x + n * src.sn + m[0].idx[e0] * src.ss[0] +
                                    m[1].idx[e1] * src.ss[1] + m[2].idx[e2] * src.ss[2];
                      for (int64_t c = 0; c < C; ++c)
                        acc[c] += w * Acc(compute_t<T>(xp[c * src.sc]));
                    }
                  }
                }
                T* yp = y + n * dst.sn + o0 * dst.ss[0] + o1 * dst.ss[1] + o2 * dst.ss[2];
                for (int64_t c = 0; c < C; ++c) yp[c * dst.sc] = T(compute_t<T>(acc[c]));
              }
            },
            std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(C * 4, 1)));
      };
    }
  });
}

Kernel make_resize(const KernelArgs& k) { return make_separable(k, false); }
Kernel make_resize_grad(const KernelArgs& k) { return make_separable(k, true); }
KernelRegistrar k2("cpu", "Resize", make_resize);
KernelRegistrar k3("cpu", "ResizeGrad", make_resize_grad);

}  // namespace
}  // namespace kb::cpu
