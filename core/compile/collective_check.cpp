// The collectives of a plan, compared across the processes before its first run: a process
// whose graph differs (another shape, another order, a collective more) would otherwise wait
// for partners that never come, or reduce mismatched buffers.
#include <mutex>
#include <set>

#include "core/backend/collectives.h"
#include "core/compile/passes.h"
#include "core/ops/op.h"
#include "core/util/fingerprint.h"

namespace kb {

namespace {
bool is_collective(const Node& n) {
  return n.is(ops::AllReduce) || n.is(ops::Broadcast) || n.is(ops::AllGather) ||
         n.is(ops::ReduceScatter);
}
}  // namespace

void describe_collectives(Plan& plan) {
  std::string text;
  for (const Step& st : plan.steps) {
    if (!st.node || !is_collective(*st.node)) continue;
    if (!text.empty()) text += "; ";
    std::string attrs = st.node->attrs.str();
    while (!attrs.empty() && attrs.back() == ' ') attrs.pop_back();
    text += st.node->op->name + " " + dtype_name(st.out_type.dtype) +
            st.in_types.at(0).shape.str() + " [" + attrs + "]";
  }
  plan.collectives = text;
}

void check_collectives_agree(const Plan& plan) {
  // A sequence every process agreed on once needs no second comparison: a plan made for other
  // input shapes (a short last batch, which processes of a data-parallel fit may each reach with
  // other row counts, one comparing while another goes on) issues the same collectives.
  static std::mutex mutex;
  static std::set<uint64_t> agreed;
  uint64_t value = fingerprint(plan.collectives);
  bool known;
  {
    std::lock_guard<std::mutex> lock(mutex);
    known = agreed.count(value) > 0;
  }
  if (!known) {
    dist::check_same_on_every_rank(value, "the first run of a function (" + plan.collectives + ")");
    std::lock_guard<std::mutex> lock(mutex);
    agreed.insert(value);
  }
  plan.collectives_agreed.store(true, std::memory_order_release);
}

}  // namespace kb
