#include "core/compile/memory_plan.h"

#include <algorithm>
#include <string>

#include "core/compile/plan.h"
#include "core/graph/host_pool.h"
#include "core/ops/op.h"

namespace kb {

namespace {

// cudaMalloc's alignment, which device libraries may count on (vectorized loads, cuDNN's and
// cuBLASLt's algorithm choice); beyond a CPU cache line, at a few bytes per value.
constexpr size_t kAlign = 256;

size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// A step whose output may share the storage of its inputs: a view (input 0) or a kernel that
// sets its output itself (any input, to be safe).
bool aliases(const Step& st, size_t input) { return (st.view && input == 0) || st.dynamic; }

// Values placed together: one value, or a chain of elementwise steps each writing over the
// operand before it. Live from the first definition to the last read.
struct Group {
  size_t bytes = 0;
  int begin = 0, end = 0;
  size_t offset = 0;
  int within = -1;  // a part of this group, placed with it
  size_t at = 0;    // where in that group
};

// A bucket's gradients (core/compile/bucket_collectives.cpp) one after another where its Pack
// would copy them, in a CPU plan: Pack then moves nothing (its kernel skips a part already in
// place) and the collective reduces them where they were computed. Each operand must be a value of
// its own in the arena that dies at the Pack. Adds the groups that hold a bucket each.
void lay_out_buckets(const Plan& plan, const std::vector<int>& end, std::vector<Group>& groups,
                     const std::vector<int>& group_of) {
  if (plan.device != Device::cpu) return;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& pack = plan.steps[i];
    if (!pack.node || !pack.node->is(ops::Pack) || pack.device != Device::cpu) continue;
    int whole = group_of[size_t(pack.out)];
    if (whole < 0) continue;
    std::vector<int> parts;
    size_t bytes = 0;
    bool fits = true;
    for (int r : pack.in) {
      int g = group_of[size_t(r)];
      fits = fits && g >= 0 && end[size_t(r)] == int(i) && groups[size_t(g)].within < 0 &&
             std::find(parts.begin(), parts.end(), g) == parts.end();
      if (!fits) break;
      parts.push_back(g);
      bytes += groups[size_t(g)].bytes;
    }
    if (!fits || bytes != groups[size_t(whole)].bytes) continue;
    Group bucket{bytes, groups[size_t(whole)].begin, groups[size_t(whole)].end, 0, -1, 0};
    int id = int(groups.size());
    size_t at = 0;
    for (int g : parts) {
      bucket.begin = std::min(bucket.begin, groups[size_t(g)].begin);
      groups[size_t(g)].within = id;
      groups[size_t(g)].at = at;
      at += groups[size_t(g)].bytes;
    }
    groups[size_t(whole)].within = id;
    groups.push_back(bucket);
  }
}

}  // namespace

void plan_memory(Plan& plan, bool arena) {
  const bool arena_off = !arena;
  const size_t n_slots = size_t(plan.num_slots);
  std::vector<int>& producer = plan.producer;
  producer.assign(n_slots, -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) producer[size_t(plan.steps[i].out)] = int(i);
  plan.update_steps.clear();
  plan.is_update_slot.assign(n_slots, false);
  for (auto& u : plan.updates) {
    plan.update_steps.push_back(producer[size_t(u.second)]);
    plan.is_update_slot[size_t(u.second)] = true;
  }

  // Values that outlive the run: outputs, updates, and (below) what a view of them aliases.
  std::vector<bool> escapes(n_slots, false);
  for (int s : plan.outputs) escapes[size_t(s)] = true;
  for (auto& u : plan.updates) escapes[size_t(u.second)] = true;
  for (const Step& st : plan.steps)  // kept from run to run (mark_invariant_steps)
    if (st.kept) escapes[size_t(st.out)] = true;
  std::vector<bool> constant(n_slots, false);
  for (auto& c : plan.constants) constant[size_t(c.first)] = true;
  // The last step that reads each value directly lets go of it there, unless the value outlives
  // the run or belongs to the plan (a constant).
  std::vector<int> end(n_slots, -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    plan.steps[i].release.clear();
    for (int s : plan.steps[i].in) end[size_t(s)] = int(i);
  }
  for (size_t s = 0; s < n_slots; ++s)
    if (end[s] >= 0 && !escapes[s] && !constant[s])
      plan.steps[size_t(end[s])].release.push_back(int(s));
  // An elementwise kernel reads element i before it writes element i (and an OpDef::in_place
  // kernel copes with one storage): its output may take the storage of an operand of its shape
  // that dies here.
  for (auto& st : plan.steps)
    st.in_place = st.device == Device::cpu && !st.run_time && !st.view && !st.dynamic &&
                  !st.release.empty() &&
                  (is_elementwise_op(st.node->op->name) || st.node->is(ops::FusedElementwise) ||
                   st.node->op->in_place);
  // From here on, end[s] also covers the reads through the views aliasing s.
  for (size_t i = plan.steps.size(); i-- > 0;) {
    const Step& st = plan.steps[i];
    end[size_t(st.out)] = std::max(end[size_t(st.out)], int(i));
    for (size_t k = 0; k < st.in.size(); ++k) {
      if (!aliases(st, k)) continue;
      size_t s = size_t(st.in[k]);
      end[s] = std::max(end[s], end[size_t(st.out)]);
      if (escapes[size_t(st.out)]) escapes[s] = true;
    }
  }

  std::vector<Group> groups;
  std::vector<int> group_of(n_slots, -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    Step& st = plan.steps[i];
    st.arena_offset = -1;
    const TensorType& t = st.out_type;
    size_t s = size_t(st.out);
    // A device plan's arena is device memory: the steps that fell back to the CPU are not in it.
    if (arena_off || st.device != plan.device || st.view || st.dynamic || st.run_time ||
        !t.parts.empty() || escapes[s] || !t.shape.fully_known())
      continue;
    size_t bytes = size_t(numel(t.shape.dims)) * dtype_size(t.dtype);
    if (bytes == 0) continue;
    // An elementwise step may write over an operand of its size read for the last time here.
    int joined = -1;
    if (st.in_place)
      for (int r : st.in) {
        int g = group_of[size_t(r)];
        if (g >= 0 && end[size_t(r)] == int(i) && groups[size_t(g)].bytes == bytes &&
            plan.steps[size_t(producer[size_t(r)])].out_type.shape.dims == t.shape.dims) {
          joined = g;
          break;
        }
      }
    if (joined < 0) {
      joined = int(groups.size());
      groups.push_back({bytes, int(i), int(i), 0});
    }
    Group& g = groups[size_t(joined)];
    g.end = std::max(g.end, end[s]);
    group_of[s] = joined;
  }

  lay_out_buckets(plan, end, groups, group_of);

  // Largest first, each at the lowest offset clear of the groups placed so far that are live at
  // the same time; a group within another goes where that one does.
  std::vector<size_t> order;
  for (size_t g = 0; g < groups.size(); ++g)
    if (groups[g].within < 0) order.push_back(g);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return groups[a].bytes > groups[b].bytes; });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> taken;  // [begin, end) of overlapping placed groups
  size_t total = 0;
  for (size_t gi : order) {
    Group& g = groups[gi];
    taken.clear();
    for (size_t pi : placed) {
      const Group& p = groups[pi];
      if (p.begin <= g.end && g.begin <= p.end) taken.push_back({p.offset, p.offset + p.bytes});
    }
    std::sort(taken.begin(), taken.end());
    size_t offset = 0;
    for (auto& [b, e] : taken) {
      if (offset + g.bytes <= b) break;
      offset = std::max(offset, aligned(e));
    }
    g.offset = offset;
    total = std::max(total, offset + g.bytes);
    placed.push_back(gi);
  }
  for (Group& g : groups)
    if (g.within >= 0) g.offset = groups[size_t(g.within)].offset + g.at;
  for (auto& st : plan.steps)
    if (int g = group_of[size_t(st.out)]; g >= 0)
      st.arena_offset = int64_t(groups[size_t(g)].offset);
  plan.arena_bytes = aligned(total);
}

void RunState::prepare(const Plan& plan) {
  const size_t n = plan.steps.size();
  if (slots.size() != size_t(plan.num_slots)) slots.assign(size_t(plan.num_slots), nullptr);
  if (spares.size() != n) {
    spares.assign(n, {});
    borrows_storage.assign(n, false);
    for (size_t i = 0; i < n; ++i) {
      const Step& st = plan.steps[i];
      borrows_storage[i] = st.arena_offset >= 0 || st.view || st.dynamic;
    }
  }
  // A value returned last time (a view of a loop's result, say) holds its spare until the caller
  // lets go of it; from then on the spare must not keep what it aliases alive.
  drop_borrowed_storage();
  if (arena || plan.arena_bytes == 0) return;
  if (plan.device == Device::cpu) {
    arena = host_allocate(plan.arena_bytes);
  } else {
    // Reused by every run: a run's kernels write into it only after the previous run's, queued
    // before them on the device's one stream.
    Buffer block(DType::u8, {int64_t(plan.arena_bytes)});
    block.device = plan.device;
    block.allocate();
    arena = std::move(block.storage);
  }
  arena_places.assign(n, nullptr);
  arena_steps = 0;
  for (size_t i = 0; i < n; ++i)
    if (plan.steps[i].arena_offset >= 0) {
      arena_places[i] = std::shared_ptr<void>(
          arena, static_cast<char*>(arena.get()) + size_t(plan.steps[i].arena_offset));
      ++arena_steps;
    }
}

std::shared_ptr<Buffer> RunState::buffer_for(size_t step, const TensorType& t, Device device,
                                             bool reusable, bool& storage_kept) {
  storage_kept = false;
  if (!reusable) {
    auto b = std::make_shared<Buffer>(t.dtype, t.shape.dims);
    b->device = device;
    return b;
  }
  auto& pair = spares[step];
  for (auto& spare : pair)
    if (spare && spare.use_count() == 1 && spare->dtype == t.dtype && spare->device == device &&
        spare->dims == t.shape.dims) {
      storage_kept = spare->storage && spare->storage.use_count() == 1;
      return spare;
    }
  auto b = std::make_shared<Buffer>(t.dtype, t.shape.dims);
  b->device = device;
  // Into an empty place, else over the older spare (whoever holds it keeps it alive).
  if (!pair[0]) {
    pair[0] = b;
  } else {
    pair[1] = std::move(pair[0]);
    pair[0] = b;
  }
  return b;
}

void RunState::stash(int step, std::shared_ptr<Buffer> old) {
  if (step < 0 || !old) return;
  auto& pair = spares[size_t(step)];
  if (pair[0] == old || pair[1] == old) return;
  if (!pair[0])
    pair[0] = std::move(old);
  else if (!pair[1] || pair[1].use_count() > 1)
    pair[1] = std::move(old);
}

void RunState::drop_borrowed_storage() {
  // A spare keeps storage that is its own alone (the next run writes there again); what it
  // borrowed (the arena, a view's operand, a caller's place) goes.
  for (size_t i = 0; i < spares.size(); ++i)
    for (auto& spare : spares[i])
      if (spare && spare.use_count() == 1 && spare->storage &&
          (borrows_storage[i] || spare->storage.use_count() > 1))
        spare->storage.reset();
}

void release_borrowed(const Plan& plan) {
  // While a run holds it, the lease gives an empty RunState: nothing to let go of.
  Exclusive<RunState>::Lease lease(plan.run_state);
  (*lease).drop_borrowed_storage();
}

void RunState::finish() {
  for (auto& s : slots) s.reset();
  drop_borrowed_storage();
  if (!arena) return;
  // Held: the arena itself and each step's place. More owners means an alias outlived its run.
  if (size_t(arena.use_count()) > 1 + arena_steps) {
    arena.reset();
    arena_places.clear();
    for (size_t i = 0; i < spares.size(); ++i) spares[i] = {};
  }
}

RunStateLease::RunStateLease(const Plan& plan) : lease_(plan.run_state) { (*lease_).prepare(plan); }

}  // namespace kb
