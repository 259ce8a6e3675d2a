#include "core/ops/slice_spec.h"

#include <algorithm>

#include "core/util/error.h"

namespace kb {

std::vector<AxisSlice> resolve_slices(const Dims& dims, const Attrs& a, const char* who) {
  const auto& begin = a.ints(attr::begin);
  const auto& end = a.ints(attr::end);
  const auto& strides = a.ints(attr::strides);
  int64_t bm = a.i(attr::begin_mask), em = a.i(attr::end_mask), sm = a.i(attr::shrink_mask);
  check(begin.size() == dims.size() && end.size() == dims.size() && strides.size() == dims.size(),
        Status::invalid_argument, who, ": the slice spec has ", begin.size(),
        " entries but the tensor has rank ", dims.size());
  // The masks hold one bit per axis.
  check(dims.size() <= 64, Status::invalid_argument, who, ": a tensor of rank ", dims.size(),
        " cannot be sliced (at most 64 axes)");
  std::vector<AxisSlice> out(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t n = dims[i], b = begin[i], e = end[i], s = strides[i];
    AxisSlice& r = out[i];
    r.shrink = (sm >> i) & 1;
    if (r.shrink) {
      r.step = 1;
      r.length = 1;
      if (n < 0) {
        r.start = b;
        continue;
      }
      int64_t idx = b < 0 ? b + n : b;
      check(idx >= 0 && idx < n, Status::invalid_argument, who, ": index ", b,
            " is out of range for axis ", i, " of size ", n);
      r.start = idx;
      continue;
    }
    check(s != 0, Status::invalid_argument, who, ": slice step is zero on axis ", i);
    r.step = s;
    if (n < 0) {
      r.length = -1;
      r.start = b;
      continue;
    }
    int64_t start, stop;
    if (s > 0) {
      start = (bm >> i) & 1 ? 0 : (b < 0 ? std::max(b + n, int64_t(0)) : std::min(b, n));
      stop = (em >> i) & 1 ? n : (e < 0 ? std::max(e + n, int64_t(0)) : std::min(e, n));
      // ceil((stop - start) / s) without forming stop - start + s - 1, which overflows for steps
      // near INT64_MAX (x[0:6:INT64_MAX] is x[0:1], as in NumPy).
      r.length = stop > start ? (stop - start - 1) / s + 1 : 0;
    } else {
      start = (bm >> i) & 1 ? n - 1 : (b < 0 ? std::max(b + n, int64_t(-1)) : std::min(b, n - 1));
      stop = (em >> i) & 1 ? -1 : (e < 0 ? std::max(e + n, int64_t(-1)) : std::min(e, n - 1));
      // The same for s < 0, without -s (which overflows for INT64_MIN): the quotient of a
      // non-negative by a negative number truncates toward zero.
      r.length = start > stop ? 1 - (start - stop - 1) / s : 0;
    }
    r.start = start;
  }
  return out;
}

SliceMap slice_map(const Dims& src, const Attrs& a) {
  auto sl = resolve_slices(src, a, "slice");
  SliceMap m;
  Dims cs = contiguous_strides(src);
  for (size_t i = 0; i < src.size(); ++i) {
    m.base += sl[i].start * cs[i];
    if (sl[i].shrink) continue;
    m.dims.push_back(sl[i].length);
    // A step that takes one element may reach far past the axis, and overflow times the row
    // stride; the stride of a one-element axis is never applied, so the step is dropped there.
    m.src_strides.push_back(sl[i].length > 1 ? sl[i].step * cs[i] : cs[i]);
  }
  return m;
}

namespace {

// Whether the slice spec takes all of axis i whatever its size.
bool whole_axis(const Attrs& a, size_t i) {
  const auto& begin = a.ints(attr::begin);
  const auto& strides = a.ints(attr::strides);
  if (i >= begin.size() || i >= strides.size() || i >= 64) return false;
  int64_t bit = int64_t(1) << i;
  return strides[i] == 1 && !(a.i(attr::shrink_mask) & bit) && (a.i(attr::end_mask) & bit) &&
         ((a.i(attr::begin_mask) & bit) || begin[i] == 0);
}

}  // namespace

bool axis_block(const Dims& src, const Attrs& attrs, AxisBlock* block) {
  // An axis of unknown size (a batch) counts when the slice keeps it whole: from the start (or
  // its mask) to the end mask, step 1. It stands in as size 1 to resolve the others.
  Dims known = src;
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] >= 0) continue;
    if (!whole_axis(attrs, i)) return false;
    known[i] = 1;
  }
  std::vector<AxisSlice> sl;
  try {
    sl = resolve_slices(known, attrs, "slice");
  } catch (const Error&) {
    return false;
  }
  int found = 0;
  for (size_t i = 0; i < sl.size(); ++i) {
    if (src[i] < 0) continue;
    if (sl[i].shrink || (sl[i].step != 1 && sl[i].length > 1)) return false;
    if (sl[i].start == 0 && sl[i].length == src[i]) continue;
    if (++found > 1) return false;
    *block = {int64_t(i), sl[i].start, sl[i].start + sl[i].length};
  }
  if (found == 0) {  // the whole tensor: a block of all of axis 0
    if (src.empty() || src[0] < 0) return false;
    *block = {0, 0, src[0]};
  }
  return true;
}

}  // namespace kb
