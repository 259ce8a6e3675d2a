// The taps of Resize and ResizeGrad as per-element functions, shared by the CPU kernel (which
// gathers them into per-axis lists), the CUDA kernel and the emulated device (one output element
// at a time).
//
// Resize is separable: along an axis of extent n resized by factor f, output o reads at most two
// input indices (nearest: o / f with weight 1; legacy bilinear: t = (o % f) / f, lo = o / f,
// hi = min(lo + 1, n - 1), weights 1 - t and t, one tap of weight 1 where t = 0 or hi = lo).
// ResizeGrad applies the transposed taps: input i sums the outputs reading it, in ascending order.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/util/narrow_float.h"
#include "core/util/host_device.h"

namespace kb {

// Taps of output o along an axis of input extent n and factor f: count (1 or 2), index, weight.
KB_HD inline int resize_taps(int64_t o, int64_t n, int64_t f, bool bilinear, int64_t idx[2],
                             double w[2]) {
  int64_t lo = o / f, hi = lo + 1 < n ? lo + 1 : n - 1;
  double t = bilinear ? double(o % f) / double(f) : 0.0;
  idx[0] = lo;
  if (t == 0.0 || hi == lo) {
    w[0] = 1.0;
    return 1;
  }
  w[0] = 1.0 - t;
  idx[1] = hi;
  w[1] = t;
  return 2;
}

// Calls g(o, weight) for the outputs o reading input i (extent n, factor f), ascending.
template <class G>
KB_HD void resize_adjoint_taps(int64_t i, int64_t n, int64_t f, bool bilinear, G&& g) {
  int64_t idx[2];
  double w[2];
  // Outputs with lo = i - 1 read i as their hi tap; then those with lo = i.
  for (int64_t o = i > 0 ? (i - 1) * f : 0; o < (i + 1) * f; ++o) {
    int k = resize_taps(o, n, f, bilinear, idx, w);
    for (int j = 0; j < k; ++j)
      if (idx[j] == i) g(o, w[j]);
  }
}

// One Resize (or ResizeGrad: adjoint) problem, spatial dimensions right-aligned into three.
struct ResizeGeom {
  bool channels_first = false, bilinear = false, adjoint = false;
  int64_t C = 0;
  int64_t factor[3] = {1, 1, 1};
  int64_t small[3] = {1, 1, 1};                    // the un-resized extents
  int64_t src[3] = {1, 1, 1}, dst[3] = {1, 1, 1};  // extents of the operand and the result
  int64_t sn = 0, sc = 0, ss[3] = {0, 0, 0};       // element strides of the operand

  // Calls g(source index, weight) for the taps of destination index o along axis ax.
  template <class G>
  KB_HD void for_taps(int ax, int64_t o, G&& g) const {
    if (adjoint) {
      resize_adjoint_taps(o, small[ax], factor[ax], bilinear, g);
      return;
    }
    int64_t idx[2];
    double w[2];
    int k = resize_taps(o, small[ax], factor[ax], bilinear, idx, w);
    for (int j = 0; j < k; ++j) g(idx[j], w[j]);
  }
};

// The accumulator of an element: double for double, float for float and the 16-bit floats, the
// type itself for integers (whose weights round to it, as they always have).
template <class T>
using resize_acc_t = std::conditional_t<
    std::is_same_v<T, double>, double,
    std::conditional_t<std::is_same_v<T, float> || is_narrow_float_v<T>, float, T>>;

// Element e (memory order) of the result of g over operand x, accumulated in Acc as the CPU
// kernel does (per-axis weights rounded to Acc, then multiplied).
template <class Acc, class C, class T>
KB_HD T resize_at(const ResizeGeom& g, const T* x, int64_t e) {
  int64_t c = 0, o[3];
  if (!g.channels_first) c = e % g.C, e /= g.C;
  for (int ax = 2; ax >= 0; --ax) o[ax] = e % g.dst[ax], e /= g.dst[ax];
  if (g.channels_first) c = e % g.C, e /= g.C;
  const T* base = x + e * g.sn + c * g.sc;
  Acc acc = 0;
  g.for_taps(0, o[0], [&](int64_t i0, double w0) {
    g.for_taps(1, o[1], [&](int64_t i1, double w1) {
      Acc w01 = Acc(w0) * Acc(w1);
      g.for_taps(2, o[2], [&](int64_t i2, double w2) {
        acc += w01 * Acc(w2) * Acc(C(base[i0 * g.ss[0] + i1 * g.ss[1] + i2 * g.ss[2]]));
      });
    });
  });
  return T(C(acc));
}

}  // namespace kb
