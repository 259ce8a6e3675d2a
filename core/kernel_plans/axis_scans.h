// Scans along one axis, shared by the CUDA kernels and the emulated device that runs them on the
// host: argmax/argmin (a thread per line, or a warp per long row) and cumulative sums/products.
//
// argmax/argmin give the CPU scan's answer: the first value is kept until a strictly greater
// (smaller) one comes, so the result is the lowest position of the extreme value among the values
// that are not NaN, or 0 when the first value is NaN.
#pragma once
#include <cstdint>

#include "core/util/host_device.h"

namespace kb {

// Rows (contiguous lines) at least this long take a warp of kArgLanes threads each.
constexpr int64_t kArgWarpRowLength = 64;
constexpr int kArgLanes = 32;

// A line of n values `stride` apart, scanned in order, computed in C.
template <class C, class T>
KB_HD int64_t arg_scan(const T* p, int64_t n, int64_t stride, bool is_max) {
  int64_t best = 0;
  C bv = C(p[0]);
  for (int64_t j = 1; j < n; ++j) {
    C c = C(p[j * stride]);
    if (is_max ? c > bv : c < bv) bv = c, best = j;
  }
  return best;
}

// A lane's candidate in a contiguous row: the extreme value that is not NaN among positions lane,
// lane + lanes, ..., at its lowest position (at < 0: none).
template <class C>
struct ArgCandidate {
  C value;
  int64_t at;
};

template <class C, class T>
KB_HD ArgCandidate<C> arg_lane(const T* p, int64_t n, int lane, int lanes, bool is_max) {
  ArgCandidate<C> best{C(0), -1};
  for (int64_t j = lane; j < n; j += lanes) {
    C v = C(p[j]);
    if (v != v) continue;  // NaN
    if (best.at < 0 || (is_max ? v > best.value : v < best.value)) best = ArgCandidate<C>{v, j};
  }
  return best;
}

// Whether the lanes' combination keeps `other` instead of `mine`: a tie goes to the lower position.
template <class C>
KB_HD bool arg_prefer(const ArgCandidate<C>& mine, const ArgCandidate<C>& other, bool is_max) {
  if (other.at < 0) return false;
  return mine.at < 0 || (is_max ? other.value > mine.value : other.value < mine.value) ||
         (other.value == mine.value && other.at < mine.at);
}

// The row's answer from the candidate that survived the combination.
template <class C, class T>
KB_HD int64_t arg_row_result(const T* p, const ArgCandidate<C>& best) {
  C first = C(p[0]);
  return first != first || best.at < 0 ? 0 : best.at;
}

// out[j] = x[0] + ... + x[j] (or the product) along a line of n values `stride` apart, in order,
// each partial result rounded to T as the CPU's are.
template <class C, class T>
KB_HD void cumulative_line(const T* x, T* out, int64_t n, int64_t stride, bool is_sum) {
  C acc = is_sum ? C(0) : C(1);
  for (int64_t j = 0; j < n; ++j) {
    C c = C(x[j * stride]);
    acc = is_sum ? C(acc + c) : C(acc * c);
    out[j * stride] = T(acc);
  }
}

}  // namespace kb
