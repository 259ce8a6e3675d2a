// The windows of Pool / PoolBackward / MaxPoolGradGrad as per-element functions, shared by the
// CPU's reference loops and the CUDA kernels (one thread per output or input cell). Spatial
// dimensions are right-aligned into three (leading extents 1). Max takes the first maximum of a
// window in row-major order and ignores padded cells; avg divides by the number of real cells.
// The backward pass gathers: an input cell sums the outputs whose windows hold it, in row-major
// order of the outputs (no scatter, no atomics).
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/util/host_device.h"

namespace kb {

struct PoolWindows {
  bool channels_first = false;
  int64_t N = 0, C = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};  // spatial extents of x and y
  int64_t w[3] = {1, 1, 1}, s[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
  // Element strides: of a batch item, of a channel and of each spatial axis, in x and in y.
  int64_t xn = 0, xc = 0, xs[3] = {0, 0, 0};
  int64_t yn = 0, yc = 0, ys[3] = {0, 0, 0};

  // The input indices [lo, hi) along axis `ax` of the real cells of window o.
  KB_HD void window(int ax, int64_t o, int64_t& lo, int64_t& hi) const {
    lo = o * s[ax] - pb[ax];
    hi = lo + w[ax] < in[ax] ? lo + w[ax] : in[ax];
    if (lo < 0) lo = 0;
  }
  // The outputs [lo, hi) along axis `ax` whose windows hold input index i.
  KB_HD void readers(int ax, int64_t i, int64_t& lo, int64_t& hi) const {
    int64_t top = i + pb[ax];  // o * s <= top and o * s + w > top
    hi = top / s[ax] + 1;
    if (hi > out[ax]) hi = out[ax];
    int64_t first = top - w[ax] + 1;
    // ceil(first / s) without first + s - 1, which overflows for strides near INT64_MAX.
    lo = first <= 0 ? 0 : (first - 1) / s[ax] + 1;
  }
  KB_HD int64_t cell_count(const int64_t o[3]) const {
    int64_t n = 1;
    for (int ax = 0; ax < 3; ++ax) {
      int64_t lo, hi;
      window(ax, o[ax], lo, hi);
      n *= hi > lo ? hi - lo : 0;
    }
    return n;
  }
  // Calls f(offset of the cell in its (n, c) plane of x) for the real cells of window o, in
  // row-major order.
  template <class F>
  KB_HD void for_cells(const int64_t o[3], F&& f) const {
    int64_t lo[3], hi[3];
    for (int ax = 0; ax < 3; ++ax) window(ax, o[ax], lo[ax], hi[ax]);
    for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
      for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1)
        for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) f(i0 * xs[0] + i1 * xs[1] + i2 * xs[2]);
  }
  // The plane offset of the first maximum of window o of plane x (-1 for a window without real
  // cells).
  template <class C, class T>
  KB_HD int64_t argmax(const T* x, const int64_t o[3]) const {
    int64_t best = -1;
    C top{};
    for_cells(o, [&](int64_t i) {
      C v = C(x[i]);
      if (best < 0 || v > top) best = i, top = v;
    });
    return best;
  }

  // (n, c, spatial index) of element e of a tensor with spatial extents sp, in memory order.
  KB_HD void split(int64_t e, const int64_t sp[3], int64_t& n, int64_t& c, int64_t idx[3]) const {
    if (!channels_first) c = e % C, e /= C;
    for (int ax = 2; ax >= 0; --ax) idx[ax] = e % sp[ax], e /= sp[ax];
    if (channels_first) c = e % C, e /= C;
    n = e;
  }
};

// The accumulator of an average: double for double, float for float and float16.
template <class T>
using pool_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// y[e] for output element e (memory order of y).
template <class C, class Acc, class T>
KB_HD T pool_forward_at(const PoolWindows& g, bool avg, const T* x, int64_t e) {
  int64_t n, c, o[3];
  g.split(e, g.out, n, c, o);
  const T* plane = x + n * g.xn + c * g.xc;
  if (!avg) {
    int64_t best = g.argmax<C>(plane, o);
    return best < 0 ? T(C(0)) : plane[best];
  }
  Acc sum = 0;
  g.for_cells(o, [&](int64_t i) { sum += Acc(C(plane[i])); });
  int64_t count = g.cell_count(o);
  return T(C(count ? sum / Acc(count) : Acc(0)));
}

// dx[e] for input element e (memory order of x): the gradients of the outputs reading it.
template <class C, class T>
KB_HD T pool_backward_at(const PoolWindows& g, bool avg, const T* dy, const T* x, int64_t e) {
  int64_t n, c, i[3];
  g.split(e, g.in, n, c, i);
  const T* xp = x + n * g.xn + c * g.xc;
  const T* dyp = dy + n * g.yn + c * g.yc;
  int64_t self = i[0] * g.xs[0] + i[1] * g.xs[1] + i[2] * g.xs[2];
  int64_t lo[3], hi[3];
  for (int ax = 0; ax < 3; ++ax) g.readers(ax, i[ax], lo[ax], hi[ax]);
  C sum = 0;
  int64_t o[3];
  for (o[0] = lo[0]; o[0] < hi[0]; ++o[0])
    for (o[1] = lo[1]; o[1] < hi[1]; ++o[1])
      for (o[2] = lo[2]; o[2] < hi[2]; ++o[2]) {
        C d = C(dyp[o[0] * g.ys[0] + o[1] * g.ys[1] + o[2] * g.ys[2]]);
        if (avg)
          sum += d / C(g.cell_count(o));
        else if (g.argmax<C>(xp, o) == self)
          sum += d;
      }
  return T(sum);
}

// MaxPoolGradGrad's out[e] for output element e: gx at the cell max pooling of x selects.
template <class C, class T>
KB_HD T max_pool_grad_grad_at(const PoolWindows& g, const T* gx, const T* x, int64_t e) {
  int64_t n, c, o[3];
  g.split(e, g.out, n, c, o);
  int64_t plane = n * g.xn + c * g.xc;
  int64_t best = g.argmax<C>(x + plane, o);
  return best < 0 ? T(C(0)) : gx[plane + best];
}

}  // namespace kb
