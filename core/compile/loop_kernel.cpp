// Runs Loop nodes: the body is planned once for the concrete step types and then run once per
// step, with per-step slices bound as views of the sequences. TupleGet takes a part apart.
#include <cstring>

#include "core/backend/device.h"
#include "core/backend/kernel.h"
#include "core/compile/plan.h"
#include "core/graph/subgraph.h"
#include "core/util/exclusive.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Parts = std::vector<std::shared_ptr<Buffer>>;

// What one run of a Loop kernel needs and the next may reuse: the stacked parts (when nothing
// outside holds them any more), the argument and place tables, the per-step views.
struct LoopRun {
  std::shared_ptr<Parts> parts;
  std::vector<std::shared_ptr<Buffer>> args, res, seq_views, state_views;
  std::vector<OutputPlace> places;

  bool parts_reusable(const std::vector<bool>& used) const {
    if (!parts || parts.use_count() != 1) return false;
    for (size_t p = 0; p < parts->size(); ++p) {
      const std::shared_ptr<Buffer>& b = (*parts)[p];
      if (b.use_count() != 1 || (used[p] && (!b->storage || b->storage.use_count() != 1)))
        return false;
    }
    return true;
  }
  // After a run (also one whose body failed): drops the references into the inputs and the
  // parts (the parts stay, for the next run to check; the views keep their Buffer objects).
  void release() {
    for (auto* v : {&args, &res}) v->clear();
    for (auto* v : {&seq_views, &state_views})
      for (auto& b : *v)
        if (b && b.use_count() == 1) b->storage.reset();
    for (auto& p : places) p = {};
  }
};

Kernel loop_kernel(const KernelArgs& k, Device device) {
  const Subgraph& body = *k.node.attrs.graph(attr::body);
  int64_t n_seq = k.node.attrs.i(attr::n_seq), n_state = k.node.attrs.i(attr::n_state),
          n_out = k.node.attrs.i(attr::n_out);
  bool reverse = k.node.attrs.i(attr::reverse, 0) != 0;
  int64_t n_aux = k.node.attrs.i(attr::n_aux, 0);
  int64_t steps = k.in[0].shape.dims[0];
  std::vector<TensorType> step_types;
  for (int64_t i = 0; i < n_seq; ++i) {
    const Dims& d = k.in[i].shape.dims;
    step_types.push_back({k.in[i].dtype, Shape(Dims(d.begin() + 1, d.end())), {}});
  }
  for (size_t i = size_t(n_seq); i < k.in.size(); ++i) step_types.push_back(k.in[i]);
  std::vector<TensorType> part_types = k.out.parts;
  // Parts nobody reads are neither allocated nor written: a loop outside any gradient need not
  // store its states, and a gradient loop's own stored states are read only by a second
  // derivative.
  std::vector<bool> used(part_types.size(), true);
  if (k.used_parts && k.used_parts->size() == used.size()) used = *k.used_parts;
  // The body's plan computes the stacked values only where they are stored (as results they
  // could not be fused into their readers): its results are the outputs, the new states and
  // the stored values, in that order.
  std::vector<NodePtr> results(body.outputs.begin(), body.outputs.begin() + n_out + n_state);
  std::vector<int64_t> stored_aux;  // aux index of each stored value
  for (int64_t a = 0; a < n_aux; ++a)
    if (used[size_t(n_out + 2 * n_state + a)]) {
      stored_aux.push_back(a);
      results.push_back(body.outputs[size_t(n_out + n_state + a)]);
    }
  std::shared_ptr<Plan> plan;
  if (steps > 0) plan = build_plan(body.inputs, step_types, results, {}, 0, device);
  auto kept = std::make_shared<Exclusive<LoopRun>>();
  return [=](const std::vector<const Buffer*>& in, Buffer& out) {
    // One run at a time uses the memory kept from the last; a concurrent one makes its own.
    Exclusive<LoopRun>::Lease lease(*kept);
    LoopRun& run = *lease;
    struct Release {
      LoopRun& run;
      ~Release() { run.release(); }
    } release{run};
    std::shared_ptr<Parts>& parts = run.parts;
    if (plan) release_borrowed(*plan);  // the body's Buffers pointed into the last run's parts
    if (!run.parts_reusable(used)) {
      parts = std::make_shared<Parts>();
      for (size_t p = 0; p < part_types.size(); ++p) {
        const TensorType& t = part_types[p];
        auto b = std::make_shared<Buffer>(t.dtype, t.shape.dims);
        b->device = device;
        if (used[p]) b->allocate();
        parts->push_back(b);
      }
    }
    std::vector<std::shared_ptr<Buffer>>& args = run.args;
    args.assign(in.size(), nullptr);
    // States and captured values: shared, never written.
    for (size_t i = size_t(n_seq); i < in.size(); ++i)
      args[i] = std::shared_ptr<Buffer>(std::shared_ptr<Buffer>{}, const_cast<Buffer*>(in[i]));
    // Step t's slice of a stacked part, as storage that keeps the part alive.
    auto slice = [&](size_t part, int64_t t) {
      const Buffer& b = *(*parts)[part];
      size_t n = b.nbytes() / size_t(steps);
      return OutputPlace{
          std::shared_ptr<void>(b.storage, static_cast<char*>(b.data()) + size_t(t) * n), n};
    };
    // Copies src into step t's slice of a part unless the body wrote it there already.
    auto copy_into = [&](size_t part, int64_t t, const Buffer& src) {
      OutputPlace dst = slice(part, t);
      if (dst.storage.get() != src.data())
        copy_within(device, dst.storage.get(), src.data(), dst.bytes);
    };
    // A Buffer of `type` from `kept` (made again when something still holds the last one), its
    // storage pointed at `storage`: the per-step views of sequences and states.
    auto point = [&](std::shared_ptr<Buffer>& kept_buffer, std::shared_ptr<Buffer>& arg,
                     const TensorType& type, std::shared_ptr<void> storage) {
      if (arg == kept_buffer) arg.reset();
      if (!kept_buffer || kept_buffer.use_count() > 1) {
        kept_buffer = std::make_shared<Buffer>(type.dtype, type.shape.dims);
        kept_buffer->device = device;
      }
      kept_buffer->storage = std::move(storage);
      arg = kept_buffer;
    };
    // The body writes its results straight into the stacked parts: outputs and products into
    // step t's slices, new states into the stored states' next slice (the next step's input).
    std::vector<OutputPlace>& places = run.places;
    places.assign(results.size(), OutputPlace{});
    run.seq_views.resize(size_t(n_seq));
    run.state_views.resize(size_t(n_state));
    std::vector<std::shared_ptr<Buffer>>& res = run.res;
    for (int64_t it = 0; it < steps; ++it) {
      int64_t t = reverse ? steps - 1 - it : it;
      int64_t next = reverse ? t - 1 : t + 1;
      for (int64_t o = 0; o < n_out; ++o)
        if (used[size_t(o)]) places[size_t(o)] = slice(size_t(o), t);
      for (int64_t j = 0; j < n_state; ++j)
        places[size_t(n_out + j)] = used[size_t(n_out + n_state + j)] && next >= 0 && next < steps
                                        ? slice(size_t(n_out + n_state + j), next)
                                        : OutputPlace{};
      for (size_t r = 0; r < stored_aux.size(); ++r)
        places[size_t(n_out + n_state) + r] = slice(size_t(n_out + 2 * n_state + stored_aux[r]), t);
      res.clear();  // keeps its capacity
      for (int64_t i = 0; i < n_seq; ++i) {
        size_t off = size_t(t) * (in[i]->nbytes() / size_t(steps));
        point(run.seq_views[size_t(i)], args[size_t(i)], step_types[size_t(i)],
              std::shared_ptr<void>(in[i]->storage, static_cast<char*>(in[i]->data()) + off));
      }
      for (int64_t j = 0; j < n_state; ++j)
        if (used[size_t(n_out + n_state + j)])
          copy_into(size_t(n_out + n_state + j), t, *args[size_t(n_seq + j)]);
      run_plan(*plan, args, places, res);
      // Results the body wrote into their places are null.
      for (auto& r : res)
        if (r) r = transfer(r, device);  // a step may have run on the CPU
      for (int64_t o = 0; o < n_out; ++o)
        if (used[size_t(o)] && res[size_t(o)]) copy_into(size_t(o), t, *res[size_t(o)]);
      for (size_t r = 0; r < stored_aux.size(); ++r)
        if (const auto& v = res[size_t(n_out + n_state) + r])
          copy_into(size_t(n_out + 2 * n_state + stored_aux[r]), t, *v);
      for (int64_t j = 0; j < n_state; ++j) {
        std::shared_ptr<Buffer>& arg = args[size_t(n_seq + j)];
        if (const auto& v = res[size_t(n_out + j)])
          arg = v;
        else  // written into the stored states' next slice
          point(run.state_views[size_t(j)], arg, step_types[size_t(n_seq + j)],
                places[size_t(n_out + j)].storage);
      }
    }
    for (int64_t j = 0; j < n_state; ++j) {
      if (!used[size_t(n_out + j)]) continue;
      Buffer& fin = *(*parts)[size_t(n_out + j)];
      copy_within(device, fin.data(), args[size_t(n_seq + j)]->data(), fin.nbytes());
    }
    out.storage = std::shared_ptr<void>(parts, parts.get());
  };
}

Kernel loop_cpu(const KernelArgs& k) { return loop_kernel(k, Device::cpu); }
Kernel loop_cuda(const KernelArgs& k) { return loop_kernel(k, Device::cuda); }

Kernel tuple_get(const KernelArgs& k) {
  size_t index = size_t(k.node.attrs.i(attr::index));
  return [index](const std::vector<const Buffer*>& in, Buffer& out) {
    const Parts& parts = *static_cast<const Parts*>(in[0]->data());
    out.storage = parts.at(index)->storage;
  };
}

KernelRegistrar r1("cpu", ops::Loop, loop_cpu);
KernelRegistrar r2("cuda", ops::Loop, loop_cuda);
KernelRegistrar r3("cpu", ops::TupleGet, tuple_get);
KernelRegistrar r4("cuda", ops::TupleGet, tuple_get);

}  // namespace
}  // namespace kb
