#include "core/backend/reduce_plan.h"

#include "core/util/error.h"

namespace kb {

ReducePlan plan_reduce(const Dims& dims, std::vector<int64_t> axes) {
  ReducePlan p;
  p.dims = dims;
  if (axes.empty())
    for (size_t i = 0; i < dims.size(); ++i) axes.push_back(int64_t(i));
  std::vector<bool> red(dims.size(), false);
  for (int64_t a : axes) red[a] = true;
  // Ignore size-1 axes when deciding whether the reduced axes are contiguous.
  int64_t first = -1, last = -1;
  bool gap = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (red[i]) {
      if (first < 0)
        first = int64_t(i);
      else if (gap)
        p.needs_transpose = true;
      last = int64_t(i);
    } else if (first >= 0) {
      gap = true;
    }
  }
  if (!p.needs_transpose) {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (first < 0 || int64_t(i) < first)
        p.outer *= dims[i];
      else if (red[i])
        p.r *= dims[i];
      else if (int64_t(i) > last)
        p.inner *= dims[i];
    }
    return p;
  }
  for (size_t i = 0; i < dims.size(); ++i)
    if (!red[i]) p.perm.push_back(int64_t(i));
  for (size_t i = 0; i < dims.size(); ++i)
    if (red[i]) p.perm.push_back(int64_t(i));
  for (size_t i = 0; i < dims.size(); ++i) (red[i] ? p.r : p.outer) *= dims[i];
  return p;
}

std::vector<int64_t> sum_to_axes(const Dims& gd, const Dims& ld) {
  check(gd.size() >= ld.size(), Status::shape, "sum_to_like: cannot reduce ", dims_str(gd), " to ",
        dims_str(ld));
  std::vector<int64_t> axes;
  size_t off = gd.size() - ld.size();
  for (size_t i = 0; i < gd.size(); ++i) {
    if (i < off) {
      axes.push_back(int64_t(i));
    } else if (ld[i - off] == 1 && gd[i] != 1) {
      axes.push_back(int64_t(i));
    } else {
      check(ld[i - off] == gd[i], Status::shape, "sum_to_like: cannot reduce ", dims_str(gd),
            " to ", dims_str(ld));
    }
  }
  return axes;
}

}  // namespace kb
