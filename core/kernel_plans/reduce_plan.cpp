#include "core/kernel_plans/reduce_plan.h"

#include <algorithm>

#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

// Blocks of adjacent axes, size-1 axes left out, each all reduced or all kept.
struct Block {
  int64_t size;
  bool reduced;
};

std::vector<ReduceStage> plan_stages(const Dims& dims, const std::vector<bool>& red) {
  std::vector<Block> blocks;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!blocks.empty() && blocks.back().reduced == red[i])
      blocks.back().size *= dims[i];
    else
      blocks.push_back({dims[i], red[i]});
  }
  std::vector<ReduceStage> stages;
  for (;;) {
    // The reduced block of most values (the last of equals) goes first: the next stages read
    // fewer values.
    int64_t pick = -1;
    for (size_t b = 0; b < blocks.size(); ++b)
      if (blocks[b].reduced && (pick < 0 || blocks[b].size >= blocks[size_t(pick)].size))
        pick = int64_t(b);
    if (pick < 0) break;
    ReduceStage s;
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (int64_t(b) < pick)
        s.outer *= blocks[b].size;
      else if (int64_t(b) > pick)
        s.inner *= blocks[b].size;
    }
    s.r = blocks[size_t(pick)].size;
    stages.push_back(s);
    blocks.erase(blocks.begin() + pick);
    // Its kept neighbours are now adjacent: one block.
    if (pick > 0 && size_t(pick) < blocks.size() && !blocks[size_t(pick) - 1].reduced &&
        !blocks[size_t(pick)].reduced) {
      blocks[size_t(pick) - 1].size *= blocks[size_t(pick)].size;
      blocks.erase(blocks.begin() + pick);
    }
  }
  if (stages.empty()) {
    // Nothing to reduce but size-1 axes: a copy.
    ReduceStage s;
    for (int64_t d : dims) s.outer *= d;
    stages.push_back(s);
  }
  return stages;
}

}  // namespace

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
  p.stages = plan_stages(dims, red);
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

DeviceReduceSchedule device_reduce_schedule(const ReducePlan& p) {
  DeviceReduceSchedule s;
  s.outer = p.outer, s.r = p.r, s.inner = p.inner;
  if (!p.needs_transpose && p.inner > 1 && p.outer * p.inner < 4096 && p.r >= 2048) {
    // One thread per column would walk each of these long columns serially.
    s.columns_to_rows = true;
    s.outer = p.outer * p.inner, s.inner = 1;
  }
  // Few long rows: spread each over many blocks, then reduce the partial results.
  if (s.inner == 1 && s.outer < 1024 && s.r >= 65536) s.parts = std::min<int64_t>(1024, s.r / 8192);
  return s;
}

DeviceReduction device_reduction(const KernelArgs& k) {
  const Dims& dims = k.in[0].shape.dims;
  DeviceReduction r;
  if (k.node.is(ops::SumToLike)) {
    r.view = dims == k.out.shape.dims;
    r.declined = !r.view && k.in[0].dtype == DType::b8;
    if (!r.view && !r.declined) r.plan = plan_reduce(dims, sum_to_axes(dims, k.out.shape.dims));
    return r;
  }
  std::vector<int64_t> axes;
  int64_t rank = int64_t(dims.size());
  for (int64_t a : k.node.attrs.ints(attr::axes)) axes.push_back(a < 0 ? a + rank : a);
  r.mode = int(k.node.attrs.i(attr::mode));
  r.plan = plan_reduce(dims, axes);
  return r;
}

}  // namespace kb
