// CPU kernels of Resize and ResizeGrad (core/ops/image_ops.cpp). (Pad: core/cpu/movement.cpp.)
//
// Resize and ResizeGrad gather the taps of core/kernel_plans/resize_taps.h, listed per axis once
// per shape, over channels innermost (no scatter, no atomics).
#include <algorithm>
#include <array>
#include <cstring>

#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/kernel_plans/resize_geom.h"
#include "core/graph/dispatch.h"

namespace kb::cpu {
namespace {

using Ins = std::vector<const Buffer*>;

// ---- Resize / ResizeGrad ----------------------------------------------------------------------
// For each destination index of one axis: the source indices and weights it sums (CSR), from the
// taps of core/kernel_plans/resize_taps.h.
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

Kernel make_separable(const KernelArgs& k, bool adjoint) {
  ResizeGeom g = resize_geom(k.node.attrs, k.in[0].shape.dims, k.out.shape.dims, adjoint);
  int64_t N = k.out.shape.dims[0];
  int64_t dn, dc, ds[3];  // the result's strides (the operand's are g's)
  spatial_strides(g.channels_first, g.C, g.dst, dn, dc, ds);
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
      return [m, g, N, dn, dc, ds](const Ins& in, Buffer& out) {
        const T* x = in[0]->as<T>();
        T* y = out.as<T>();
        int64_t positions = N * g.dst[0] * g.dst[1] * g.dst[2];
        int64_t C = g.C;
        parallel_for(
            positions,
            [&](int64_t b, int64_t e) {
              std::vector<Acc> acc(size_t(std::max<int64_t>(C, 1)));
              for (int64_t p = b; p < e; ++p) {
                int64_t t = p;
                int64_t o2 = t % g.dst[2];
                t /= g.dst[2];
                int64_t o1 = t % g.dst[1];
                t /= g.dst[1];
                int64_t o0 = t % g.dst[0], n = t / g.dst[0];
                std::fill(acc.begin(), acc.end(), Acc(0));
                for (int64_t e0 = m[0].off[o0]; e0 < m[0].off[o0 + 1]; ++e0) {
                  for (int64_t e1 = m[1].off[o1]; e1 < m[1].off[o1 + 1]; ++e1) {
                    Acc w01 = m[0].w[e0] * m[1].w[e1];
                    for (int64_t e2 = m[2].off[o2]; e2 < m[2].off[o2 + 1]; ++e2) {
                      Acc w = w01 * m[2].w[e2];
                      const T* xp = x + n * g.sn + m[0].idx[e0] * g.ss[0] + m[1].idx[e1] * g.ss[1] +
                                    m[2].idx[e2] * g.ss[2];
                      for (int64_t c = 0; c < C; ++c) acc[c] += w * Acc(compute_t<T>(xp[c * g.sc]));
                    }
                  }
                }
                T* yp = y + n * dn + o0 * ds[0] + o1 * ds[1] + o2 * ds[2];
                for (int64_t c = 0; c < C; ++c) yp[c * dc] = T(compute_t<T>(acc[c]));
              }
            },
            std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(C * 4, 1)));
      };
    }
  });
}

Kernel make_resize(const KernelArgs& k) { return make_separable(k, false); }
Kernel make_resize_grad(const KernelArgs& k) { return make_separable(k, true); }
KernelRegistrar k2("cpu", ops::Resize, make_resize);
KernelRegistrar k3("cpu", ops::ResizeGrad, make_resize_grad);

}  // namespace
}  // namespace kb::cpu
