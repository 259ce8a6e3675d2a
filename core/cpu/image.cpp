// CPU kernels of Pad (zero padding), Resize and ResizeGrad (core/ops/image_ops.cpp).
//
// Resize and ResizeGrad gather the taps of core/util/resize_taps.h, listed per axis once per
// shape, over channels innermost (no scatter, no atomics).
#include <algorithm>
#include <array>
#include <cstring>

#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/ops/resize_geom.h"
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
// For each destination index of one axis: the source indices and weights it sums (CSR), from the
// taps of core/util/resize_taps.h.
struct AxisMap {
  std::vector<int64_t> off{0}, idx;
  std::vector<double> w;
};

AxisMap axis_map(const ResizeGeom& g, int ax) {
  AxisMap m;
  for (int64_t o = 0; o < g.dst[ax]; ++o) {
    g.for_taps(ax, o, [&](int64_t i, double w) {
      m.idx.push_back(i);
      m.w.push_back(w);
    });
    m.off.push_back(int64_t(m.idx.size()));
  }
  return m;
}

struct Layout {
  int64_t n = 0, c = 0, sn = 0, sc = 0;
  int64_t sp[3] = {1, 1, 1}, ss[3] = {0, 0, 0};
};

Layout layout_of(const Dims& d, const ResizeGeom& g, const int64_t sp[3]) {
  Layout l;
  l.n = d[0];
  l.c = g.C;
  for (int ax = 0; ax < 3; ++ax) l.sp[ax] = sp[ax];
  spatial_strides(g.channels_first, g.C, l.sp, l.sn, l.sc, l.ss);
  return l;
}

Kernel make_separable(const KernelArgs& k, bool adjoint) {
  ResizeGeom g = resize_geom(k.node.attrs, k.in[0].shape.dims, k.out.shape.dims, adjoint);
  Layout src = layout_of(k.in[0].shape.dims, g, g.src), dst = layout_of(k.out.shape.dims, g, g.dst);
  std::array<AxisMap, 3> maps{axis_map(g, 0), axis_map(g, 1), axis_map(g, 2)};
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
