// Gradient buckets (core/compile/passes.h): many small all-reduces cost a latency each, so the
// all-reduces of one dtype, kind and device are gathered, in the order their operands are computed,
// into buckets of about `bucket_bytes`. A bucket is four kinds of step: Pack (the operands into
// one buffer), AllReduce (in place over it: one collective, started there), AllReduceWait (which
// completes it) and an Unpack per member, a view of its part that takes the member's slot, so its
// readers are unchanged; a bucket of one is its AllReduce, started, and the wait. The steps are
// then put back in order: each bucket's Pack and AllReduce where its last member was, its wait and
// views as late as their first reader allows, so that the steps between compute while the
// collective runs (the backward pass of earlier layers while the later layers' gradients are
// reduced).
#include <algorithm>
#include <limits>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "core/backend/device.h"
#include "core/compile/choose_kernels.h"
#include "core/compile/passes.h"
#include "core/ops/collective_ops.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

namespace {

// Whether a device runs a bucket's parts (the CPU always does).
bool packs_on(Device d) {
  return d == Device::cpu ||
         (find_kernel(device_name(d), "Pack") && find_kernel(device_name(d), "Unpack"));
}

bool bucketable(const Step& st) {
  if (!st.node || !st.node->is(ops::AllReduce) || !packs_on(st.device) || st.run_time ||
      st.in_types.size() != 1)
    return false;
  const TensorType& t = st.in_types[0];
  return st.node->attrs.i(attr::root_only) < 0 && t.shape.fully_known() && t.parts.empty() &&
         summable_across_processes(t.dtype);
}

// A bucket's step on the device of its members.
Step step_for(Plan& plan, const NodePtr& node, std::vector<int> in,
              std::vector<TensorType> in_types, int out, Device device) {
  Step st;
  KernelFactory f =
      device == Device::cpu ? cpu_factory(*node) : find_kernel(device_name(device), node->op->name);
  st.kernel = f(KernelArgs{*node, in_types, node->type});
  check(bool(st.kernel), Status::internal, "bucket_collectives: ", device_name(device),
        " declines ", node->op->name, " of a bucket");
  st.in = std::move(in);
  st.in_types = std::move(in_types);
  st.out = out;
  st.out_type = node->type;
  st.view = node->op->view;
  st.node = node.get();
  st.device = device;
  plan.nodes.push_back(node);
  return st;
}

// The place in the order of a step that runs as late as its readers allow.
constexpr size_t kLast = std::numeric_limits<size_t>::max();

}  // namespace

void bucket_collectives(Plan& plan, long long bucket_bytes) {
  if (bucket_bytes <= 0) return;
  // Members of each bucket (step indices in order), per (dtype, average). A member whose operand
  // depends on an open bucket's result closes the open buckets first (else the bucket would
  // wait for itself): dep[slot] is the latest bucket a value depends on.
  struct Open {
    std::vector<size_t> members;
    long long bytes = 0, id = 0;
  };
  std::vector<std::vector<size_t>> buckets;
  std::map<std::tuple<int, int64_t, int>, Open> open;  // by (dtype, average, device)
  std::vector<long long> dep(size_t(plan.num_slots), -1);
  long long next_id = 0;
  auto close_all = [&] {
    for (auto& [key, o] : open) buckets.push_back(std::move(o.members));
    open.clear();
  };
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& st = plan.steps[i];
    long long d = -1;
    for (int s : st.in) d = std::max(d, dep[size_t(s)]);
    if (bucketable(st)) {
      for (const auto& [key, o] : open)
        if (o.id <= d) {
          close_all();
          break;
        }
      auto key = std::make_tuple(int(st.in_types[0].dtype), st.node->attrs.i(attr::average),
                                 int(st.device));
      Open& o = open[key];
      if (o.members.empty()) o.id = next_id++;
      o.members.push_back(i);
      o.bytes += numel(st.in_types[0].shape.dims) * (long long)dtype_size(st.in_types[0].dtype);
      d = std::max(d, o.id);
      if (o.bytes >= bucket_bytes) {
        buckets.push_back(std::move(o.members));
        open.erase(key);
      }
    }
    dep[size_t(st.out)] = d;
  }
  close_all();
  // A bucket of one all-reduces its operand in place, unless it cannot: an operand that is not a
  // step's value (an input's, a variable's, a constant's: the caller's or the plan's) or that
  // another step reads. Such an all-reduce stays as it was (MPI from buffer to buffer).
  std::vector<int> reads(size_t(plan.num_slots), 0);
  std::vector<bool> computed(size_t(plan.num_slots), false);
  for (const Step& st : plan.steps) {
    computed[size_t(st.out)] = true;
    for (int s : st.in) ++reads[size_t(s)];
  }
  for (int s : plan.outputs) ++reads[size_t(s)];
  for (const auto& u : plan.updates) ++reads[size_t(u.second)];
  std::erase_if(buckets, [&](const std::vector<size_t>& b) {
    int operand = plan.steps[b[0]].in[0];
    return b.size() == 1 && (!computed[size_t(operand)] || reads[size_t(operand)] > 1);
  });
  if (buckets.empty()) return;

  // The new steps, each with its place in the order: (place, rank within the place).
  std::vector<Step> steps;
  std::vector<std::pair<size_t, size_t>> place;
  std::vector<bool> replaced(plan.steps.size(), false);
  size_t late = 0;  // the buckets' waits and views among themselves: in the buckets' order
  for (const auto& members : buckets) {
    const Step& first = plan.steps[members.front()];
    DType t = first.in_types[0].dtype;
    Device device = first.device;
    Attrs started{{attr::average, first.node->attrs.i(attr::average)},
                  {attr::root_only, -1},
                  {attr::async, 1}};
    if (members.size() == 1) {
      // A bucket of one: no Pack or Unpack, its all-reduce started and waited for all the same.
      NodePtr sum = plan_node("AllReduce", {first.node->inputs[0]}, started, first.out_type,
                              first.node->name + "/start");
      NodePtr done = plan_node("AllReduceWait", {sum}, {}, first.out_type, first.node->name);
      int started_slot = plan.num_slots++;
      int out = first.out;
      steps.push_back(
          step_for(plan, sum, {first.in[0]}, {first.in_types[0]}, started_slot, device));
      place.push_back({members[0], 0});
      steps.push_back(step_for(plan, done, {started_slot}, {first.out_type}, out, device));
      place.push_back({kLast, late++});
      replaced[members[0]] = true;
      continue;
    }
    std::vector<NodePtr> operands;
    std::vector<int> in;
    std::vector<TensorType> in_types;
    int64_t total = 0;
    for (size_t m : members) {
      const Step& st = plan.steps[m];
      operands.push_back(st.node->inputs[0]);
      in.push_back(st.in[0]);
      in_types.push_back(st.in_types[0]);
      total += numel(st.in_types[0].shape.dims);
      replaced[m] = true;
    }
    TensorType packed{t, Shape(Dims{total})};
    std::string name = "bucket_" + std::to_string(steps.size());
    NodePtr pack = plan_node("Pack", operands, {}, packed, name + "/pack");
    NodePtr sum = plan_node("AllReduce", {pack}, started, packed, name + "/all_reduce");
    NodePtr done = plan_node("AllReduceWait", {sum}, {}, packed, name + "/wait");
    size_t at = members.back(), rank = 0;
    int packed_slot = plan.num_slots++, summed_slot = plan.num_slots++,
        done_slot = plan.num_slots++;
    steps.push_back(step_for(plan, pack, in, in_types, packed_slot, device));
    place.push_back({at, rank++});
    steps.push_back(step_for(plan, sum, {packed_slot}, {packed}, summed_slot, device));
    place.push_back({at, rank++});
    // The wait and the views of the bucket as late as their readers allow: the order below
    // takes every step that does not need them first, and those run while the bucket is reduced.
    steps.push_back(step_for(plan, done, {summed_slot}, {packed}, done_slot, device));
    place.push_back({kLast, late++});
    int64_t offset = 0;
    for (size_t m : members) {
      const Step& st = plan.steps[m];
      NodePtr part = plan_node("Unpack", {done},
                               {{attr::offset, offset}, {attr::dims, st.out_type.shape.dims}},
                               st.out_type, st.node->name);
      steps.push_back(step_for(plan, part, {done_slot}, {packed}, st.out, device));
      place.push_back({kLast, late++});
      offset += numel(st.out_type.shape.dims);
    }
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (replaced[i]) continue;
    steps.push_back(std::move(plan.steps[i]));
    place.push_back({i, 0});
  }

  // Kahn's order over the slots' producers, earliest place first: the original order wherever
  // it still holds.
  std::unordered_map<int, size_t> producer;
  for (size_t i = 0; i < steps.size(); ++i) producer[steps[i].out] = i;
  std::vector<std::vector<size_t>> readers(steps.size());
  std::vector<int> waiting(steps.size(), 0);
  for (size_t i = 0; i < steps.size(); ++i)
    for (int s : steps[i].in) {
      auto p = producer.find(s);
      if (p == producer.end() || p->second == i) continue;
      readers[p->second].push_back(i);
      ++waiting[i];
    }
  using Entry = std::pair<std::pair<size_t, size_t>, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (size_t i = 0; i < steps.size(); ++i)
    if (waiting[i] == 0) ready.push({place[i], i});
  std::vector<Step> ordered;
  ordered.reserve(steps.size());
  while (!ready.empty()) {
    size_t i = ready.top().second;
    ready.pop();
    for (size_t r : readers[i])
      if (--waiting[r] == 0) ready.push({place[r], r});
    ordered.push_back(std::move(steps[i]));
  }
  check(ordered.size() == steps.size(), Status::internal,
        "bucket_collectives: the steps form a cycle");
  plan.steps = std::move(ordered);
}

}  // namespace kb
