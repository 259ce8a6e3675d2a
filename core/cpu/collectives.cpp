// CPU kernels of the collectives (core/ops/collective_ops.cpp), through the engine of
// core/backend/collectives.h: the identity in a single process.
#include "core/backend/collectives.h"
#include "core/backend/device.h"
#include "core/backend/kernel.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/started_collectives.h"
#include "core/ops/collective_ops.h"

namespace kb::cpu {
namespace {

using Ins = std::vector<const Buffer*>;

std::string what(const char* collective, const Node& n) {
  return std::string(collective) + " of '" + n.inputs[0]->name + "'";
}

// A bucket's started all-reduces, from its AllReduce's factory to its AllReduceWait's.
StartedCollectives<dist::PendingCollective>& started() {
  static auto* s = new StartedCollectives<dist::PendingCollective>;
  return *s;
}

Kernel make_started_all_reduce(const KernelArgs& k) {
  std::shared_ptr<dist::PendingCollective> pending = started().begin(k.node);
  return [pending, label = what("all_reduce", k.node)](const Ins& in, Buffer& out) {
    if (out.data() != in[0]->data())
      copy_within(Device::cpu, out.data(), in[0]->data(), out.nbytes());
    dist::all_reduce_start(out, label, *pending);
  };
}

Kernel make_all_reduce_wait(const KernelArgs& k) {
  std::shared_ptr<dist::PendingCollective> pending = started().take(k.node, "on the CPU");
  bool average = k.node.inputs[0]->attrs.i(attr::average) != 0;
  return [pending, average](const Ins& in, Buffer& out) {
    out.storage = in[0]->storage;
    dist::all_reduce_finish(out, average, *pending);
  };
}
KernelRegistrar k7("cpu", ops::AllReduceWait, make_all_reduce_wait);

Kernel make_all_reduce(const KernelArgs& k) {
  if (k.node.attrs.i(attr::async, 0)) return make_started_all_reduce(k);
  bool average = k.node.attrs.i(attr::average) != 0;
  int64_t root_only = k.node.attrs.i(attr::root_only);
  std::string label = what("all_reduce", k.node);
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [average, root_only, label](const Ins& in, Buffer& out) {
      dist::all_reduce(*in[0], out, average, label);
      if (root_only >= 0 && dist::rank() != root_only) std::fill_n(out.as<T>(), out.numel(), T(0));
    };
  });
}
KernelRegistrar k1("cpu", ops::AllReduce, make_all_reduce);

Kernel make_broadcast(const KernelArgs& k) {
  int32_t root = int32_t(k.node.attrs.i(attr::root));
  std::string label = what("broadcast", k.node);
  return [root, label](const Ins& in, Buffer& out) {
    copy_within(Device::cpu, out.data(), in[0]->data(), out.nbytes());
    dist::broadcast(out, root, label);
  };
}
KernelRegistrar k2("cpu", ops::Broadcast, make_broadcast);

// AllGather and ReduceScatter: blocks along axis 0, one per process of the job the graph was
// built for.
using BlockwiseCollective = void (*)(const Buffer&, Buffer&, const std::string&);
Kernel blockwise(const KernelArgs& k, const char* name, BlockwiseCollective collective) {
  const Node* node = &k.node;
  std::string label = what(name, k.node);
  return [node, name, collective, label](const Ins& in, Buffer& out) {
    check_job_size(node->attrs.i(attr::size), dist::size(), name);
    collective(*in[0], out, label);
  };
}
Kernel make_all_gather(const KernelArgs& k) { return blockwise(k, "all_gather", dist::all_gather); }
KernelRegistrar k3("cpu", ops::AllGather, make_all_gather);
Kernel make_reduce_scatter(const KernelArgs& k) {
  return blockwise(k, "reduce_scatter", dist::reduce_scatter_sum);
}
KernelRegistrar k4("cpu", ops::ReduceScatter, make_reduce_scatter);

Kernel make_pack(const KernelArgs&) {
  return [](const Ins& in, Buffer& out) {
    auto* o = static_cast<char*>(out.data());
    for (const Buffer* b : in) {
      // A part computed in place (core/compile/memory_plan.cpp lays a bucket out) stays.
      if (b->nbytes() && b->data() != o) std::memcpy(o, b->data(), b->nbytes());
      o += b->nbytes();
    }
  };
}
KernelRegistrar k5("cpu", ops::Pack, make_pack);

Kernel make_unpack(const KernelArgs& k) {
  size_t offset = size_t(k.node.attrs.i(attr::offset)) * dtype_size(k.out.dtype);
  return [offset](const Ins& in, Buffer& out) {
    out.storage = std::shared_ptr<void>(in[0]->storage, static_cast<char*>(in[0]->data()) + offset);
    out.device = in[0]->device;
  };
}
KernelRegistrar k6("cpu", ops::Unpack, make_unpack);

}  // namespace
}  // namespace kb::cpu
