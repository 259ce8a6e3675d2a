// CUDA: the collectives of data-parallel training (core/ops/collective_ops.cpp) and the parts of
// their buckets, through NCCL: the GPU's data never crosses to the host. NCCL's operations run in
// order on a stream of their own, each after the compute stream's work before it; the compute
// stream waits for one at once, or for a bucket's at its AllReduceWait, so that the steps between
// (the backward pass of earlier layers) compute while it runs. NCCL is opened at run time
// (libnccl.so.2), so the plugin loads without it; in a job without it, or for int16 (which NCCL
// cannot sum), a factory declines and the step runs on the CPU through the core's engine (MPI). A
// process that is no job (no kb_dist_init) needs no NCCL: a collective is then the identity.
//
// The communicator spans the job and is made at the first collective that runs, every rank there
// at the same point of its sequence: rank 0's identifier reaches the others over the core's
// engine. NCCL's operations cannot be interrupted once queued, so the waits for the compute
// stream poll instead of blocking while a communicator exists: past the job's deadline, or on an
// error NCCL reports, the communicator is aborted and the job failed (later collectives fail at
// once).
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#if KB_HAVE_NCCL_H
#include <nccl.h>
#endif

#include "core/cuda/common.cuh"
#include "core/kernel_plans/started_collectives.h"
#include "core/ops/collective_ops.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

// A collective step's two events: the compute stream's work before it, and its end on NCCL's
// stream. Made at its first run in a job.
struct Events {
  cudaEvent_t ready = nullptr, done = nullptr;
  Events() = default;
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    if (ready) cudaEventDestroy(ready);
    if (done) cudaEventDestroy(done);
  }
};

#if KB_HAVE_NCCL_H

// The library's entry points, resolved once.
struct Nccl {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  std::string version;  // "NCCL 2.28.3"
};

template <class F>
bool resolve(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

// nullptr when the library is not there or lacks an entry point.
const Nccl* nccl() {
  static const Nccl* loaded = []() -> const Nccl* {
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    static Nccl n;
    bool all = resolve(lib, "ncclGetVersion", n.get_version) &&
               resolve(lib, "ncclGetUniqueId", n.get_unique_id) &&
               resolve(lib, "ncclCommInitRank", n.comm_init_rank) &&
               resolve(lib, "ncclCommAbort", n.comm_abort) &&
               resolve(lib, "ncclCommGetAsyncError", n.comm_get_async_error) &&
               resolve(lib, "ncclGetErrorString", n.get_error_string) &&
               resolve(lib, "ncclAllReduce", n.all_reduce) &&
               resolve(lib, "ncclBroadcast", n.broadcast) &&
               resolve(lib, "ncclAllGather", n.all_gather) &&
               resolve(lib, "ncclReduceScatter", n.reduce_scatter);
    if (!all) return nullptr;
    int v = 0;
    if (n.get_version(&v) != ncclSuccess) return nullptr;
    // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch since 2.9.
    n.version = "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                std::to_string(v % 100);
    return &n;
  }();
  return loaded;
}

bool nccl_type(DType t, ncclDataType_t* out) {
  switch (t) {
    case DType::f32:
      *out = ncclFloat32;
      return true;
    case DType::f64:
      *out = ncclFloat64;
      return true;
    case DType::i8:
      *out = ncclInt8;
      return true;
    case DType::i32:
      *out = ncclInt32;
      return true;
    case DType::i64:
      *out = ncclInt64;
      return true;
    case DType::u8:
      *out = ncclUint8;
      return true;
    default:
      return false;
  }
}

// The job's communicator, its stream, and the latest collective queued (for the waits). NCCL's
// operations run in order on a stream of their own, each after the compute stream's work before
// it (an event); the compute stream waits for one where it is read: at once, or for a started
// bucket at its AllReduceWait.
struct Communicator {
  std::mutex mu;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  bool aborted = false;
  std::string last_what;  // the latest collective queued, and its number in the job
  uint64_t last_number = 0;
};
Communicator& communicator() {
  static Communicator* c = new Communicator;  // never destroyed: NCCL may outlive the statics
  return *c;
}

// Fails the job (and aborts the communicator, whose queued operations may never complete).
[[noreturn]] void fail_collective(Communicator& c, const std::string& what, uint64_t number,
                                  const std::string& reason) {
  if (c.comm && !c.aborted) {
    nccl()->comm_abort(c.comm);
    c.aborted = true;
  }
  job().fail(what.c_str(), number, reason.c_str());
  fail(Status::distributed, what, ": ", reason);  // not reached: fail throws
}

void check_nccl(Communicator& c, ncclResult_t r, const std::string& what, uint64_t number,
                const char* call) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  fail_collective(c, what, number, std::string(call) + ": " + nccl()->get_error_string(r));
}

// The communicator, made at the job's first collective on the GPU (c.mu held).
ncclComm_t job_communicator(Communicator& c, const std::string& what, uint64_t number) {
  if (c.comm) {
    if (c.aborted) fail_collective(c, what, number, "NCCL's communicator was aborted");
    return c.comm;
  }
  const Nccl* n = nccl();
  ncclUniqueId id{};
  int32_t rank = job().rank(), size = job().size();
  if (rank == 0) check_nccl(c, n->get_unique_id(&id), what, number, "ncclGetUniqueId");
  job().broadcast(&id, sizeof id, 0, "NCCL's identifier");
  use_device();
  if (!c.stream)
    check_cuda(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "NCCL's stream");
  ncclComm_t comm = nullptr;
  check_nccl(c, n->comm_init_rank(&comm, size, id, rank), what, number, "ncclCommInitRank");
  c.comm = comm;
  job().set_device_engine(n->version.c_str());
  return comm;
}

// Queues one NCCL operation, run(comm, stream), for the collective `what` after the compute
// stream's work so far; the compute stream waits for it at once unless `started` (then the
// caller waits for ev.done where the result is read).
template <class Run>
void queue(const std::string& what, Events& ev, bool started, Run run) {
  Communicator& c = communicator();
  std::lock_guard<std::mutex> lock(c.mu);
  uint64_t number = job().begin(what.c_str());
  ncclComm_t comm = job_communicator(c, what, number);
  if (!ev.ready) {
    check_cuda(cudaEventCreateWithFlags(&ev.ready, cudaEventDisableTiming), "collective event");
    check_cuda(cudaEventCreateWithFlags(&ev.done, cudaEventDisableTiming), "collective event");
  }
  check_cuda(cudaEventRecord(ev.ready, stream()), "collective event");
  check_cuda(cudaStreamWaitEvent(c.stream, ev.ready, 0), "collective event");
  check_nccl(c, run(comm, c.stream), what, number, "queueing it");
  check_cuda(cudaEventRecord(ev.done, c.stream), "collective event");
  if (!started) check_cuda(cudaStreamWaitEvent(stream(), ev.done, 0), "collective event");
  c.last_what = what;
  c.last_number = number;
}

bool queued_any() {
  Communicator& c = communicator();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.comm != nullptr;
}

bool nccl_usable() { return nccl() != nullptr; }

#else  // built without nccl.h: a job's collectives run on the CPU

bool queued_any() { return false; }
bool nccl_usable() { return false; }

#endif

// In a job without NCCL the factories decline: the CPU's engine runs the step.
bool declined_in_job() { return job().running() && !nccl_usable(); }

// Whether this run's collective goes through NCCL; else the process is no job, and the
// collective is the identity. A plan made before kb_dist_init whose collectives NCCL cannot
// carry fails rather than run them as the identity in a job.
bool in_job(const std::string& what) {
  if (!job().running()) return false;
  check(nccl_usable(), Status::unavailable, what,
        ": this function was compiled on the GPU before kb_dist_init, and NCCL (libnccl.so.2) is "
        "not there to run its collectives: build it after kb_dist_init");
  return true;
}

std::string label(const char* collective, const Node& n) {
  return std::string(collective) + " of '" + n.inputs[0]->name + "'";
}

void copy_if_apart(const Buffer& in, Buffer& out) {
  if (out.data() != in.data() && out.nbytes()) copy_on_device(out.data(), in.data(), out.nbytes());
}

// The average from the sum, as the CPU's engine computes it (average_of_sum).
template <class T>
__global__ void divide_kernel(T* v, int64_t n, int32_t size) {
  KB_GRID_LOOP(i, n) { v[i] = average_of_sum(v[i], size); }
}

// The job's number of processes; 1 outside a job.
int32_t job_size() { return job().running() ? job().size() : 1; }

void divide_on_device(Buffer& out, int32_t size) {
  dispatch_dtype(out.dtype, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_arithmetic_v<T>) {
      int64_t n = out.numel();
      divide_kernel<T><<<blocks_for(n), 256, 0, stream()>>>(out.as<T>(), n, size);
      after_launch("all_reduce average");
    }
  });
}

// A bucket's all-reduce: started by its AllReduce (`async` 1) on NCCL's stream, waited for by
// the compute stream at its AllReduceWait, before the first step that reads the bucket.
struct StartedAllReduce {
  Events ev;
  bool queued = false;          // queued on NCCL's stream, not yet waited for
  std::shared_ptr<void> owner;  // the buffer, held until the compute stream waits for it
};
StartedCollectives<StartedAllReduce>& started() {
  static auto* s = new StartedCollectives<StartedAllReduce>;
  return *s;
}

// The compute stream waits for p's collective: work queued after it, a reuse of its buffer
// included, runs after the collective.
void wait_for(StartedAllReduce& p) {
  if (!p.queued) return;
  check_cuda(cudaStreamWaitEvent(stream(), p.ev.done, 0), "collective event");
  p.queued = false;
  p.owner.reset();
}

Kernel make_started_all_reduce(const KernelArgs& k) {
#if KB_HAVE_NCCL_H
  ncclDataType_t type{};
  if (!nccl_type(k.out.dtype, &type)) return Kernel{};
#endif
  std::shared_ptr<StartedAllReduce> p = started().begin(k.node);
  return [=, what = label("all_reduce", k.node)](const Ins& in, Buffer& out) {
    copy_if_apart(*in[0], out);
    if (!in_job(what)) return;
    wait_for(*p);  // a run that failed between the two steps left it queued
#if KB_HAVE_NCCL_H
    queue(what, p->ev, true, [&](ncclComm_t comm, cudaStream_t s) {
      return nccl()->all_reduce(out.data(), out.data(), size_t(out.numel()), type, ncclSum, comm,
                                s);
    });
#endif
    p->queued = true;
    p->owner = out.storage;
  };
}

Kernel make_all_reduce_wait(const KernelArgs& k) {
  std::shared_ptr<StartedAllReduce> p = started().take(k.node, "on the GPU");
  bool average = k.node.inputs[0]->attrs.i(attr::average) != 0;
  return [p, average](const Ins& in, Buffer& out) {
    out.storage = in[0]->storage;
    wait_for(*p);
    if (average && job_size() > 1) divide_on_device(out, job_size());
  };
}
Registrar r7(ops::AllReduceWait, make_all_reduce_wait);

Kernel make_all_reduce(const KernelArgs& k) {
  if (declined_in_job()) return Kernel{};
  if (k.node.attrs.i(attr::async, 0)) return make_started_all_reduce(k);
#if KB_HAVE_NCCL_H
  ncclDataType_t type{};
  if (!nccl_type(k.out.dtype, &type)) return Kernel{};
#endif
  bool average = k.node.attrs.i(attr::average) != 0;
  int64_t root_only = k.node.attrs.i(attr::root_only);
  auto ev = std::make_shared<Events>();
  return [=, what = label("all_reduce", k.node)](const Ins& in, Buffer& out) {
    if (!in_job(what)) return copy_if_apart(*in[0], out);
#if KB_HAVE_NCCL_H
    queue(what, *ev, false, [&](ncclComm_t comm, cudaStream_t s) {
      return nccl()->all_reduce(in[0]->data(), out.data(), size_t(out.numel()), type, ncclSum, comm,
                                s);
    });
#endif
    int32_t size = job().size();
    if (average && size > 1) divide_on_device(out, size);
    if (root_only >= 0 && job().rank() != root_only) zero_on_device(out);
  };
}
Registrar r1(ops::AllReduce, make_all_reduce);

Kernel make_broadcast(const KernelArgs& k) {
  if (declined_in_job()) return Kernel{};
  int32_t root = int32_t(k.node.attrs.i(attr::root));
  auto ev = std::make_shared<Events>();
  return [=, what = label("broadcast", k.node)](const Ins& in, Buffer& out) {
    int32_t size = job_size();
    check(root < size, Status::invalid_argument, what, ": root ", root, " is not a rank of ", size);
    if (!in_job(what)) return copy_if_apart(*in[0], out);
#if KB_HAVE_NCCL_H
    queue(what, *ev, false, [&](ncclComm_t comm, cudaStream_t s) {
      return nccl()->broadcast(in[0]->data(), out.data(), out.nbytes(), ncclUint8, root, comm, s);
    });
#endif
  };
}
Registrar r2(ops::Broadcast, make_broadcast);

// AllGather and ReduceScatter: blocks along axis 0, one per process of the job the graph was
// built for.
Kernel make_all_gather(const KernelArgs& k) {
  if (declined_in_job()) return Kernel{};
  int64_t built = k.node.attrs.i(attr::size);
  auto ev = std::make_shared<Events>();
  return [=, what = label("all_gather", k.node)](const Ins& in, Buffer& out) {
    check_job_size(built, job_size(), "all_gather");
    if (!in_job(what)) return copy_if_apart(*in[0], out);
#if KB_HAVE_NCCL_H
    queue(what, *ev, false, [&](ncclComm_t comm, cudaStream_t s) {
      return nccl()->all_gather(in[0]->data(), out.data(), in[0]->nbytes(), ncclUint8, comm, s);
    });
#endif
  };
}
Registrar r3(ops::AllGather, make_all_gather);

Kernel make_reduce_scatter(const KernelArgs& k) {
  if (declined_in_job()) return Kernel{};
#if KB_HAVE_NCCL_H
  ncclDataType_t type{};
  if (!nccl_type(k.out.dtype, &type)) return Kernel{};
#endif
  int64_t built = k.node.attrs.i(attr::size);
  auto ev = std::make_shared<Events>();
  return [=, what = label("reduce_scatter", k.node)](const Ins& in, Buffer& out) {
    check_job_size(built, job_size(), "reduce_scatter");
    if (!in_job(what)) return copy_if_apart(*in[0], out);
#if KB_HAVE_NCCL_H
    queue(what, *ev, false, [&](ncclComm_t comm, cudaStream_t s) {
      return nccl()->reduce_scatter(in[0]->data(), out.data(), size_t(out.numel()), type, ncclSum,
                                    comm, s);
    });
#endif
  };
}
Registrar r4(ops::ReduceScatter, make_reduce_scatter);

// A bucket's parts (core/compile/bucket_collectives.cpp). Pack: the operands, one after another,
// into one buffer; Unpack: a view of a part of it.
Kernel make_pack(const KernelArgs&) {
  return [](const Ins& in, Buffer& out) {
    auto* o = static_cast<char*>(out.data());
    for (const Buffer* b : in) {
      if (b->nbytes()) copy_on_device(o, b->data(), b->nbytes());
      o += b->nbytes();
    }
  };
}
Registrar r5(ops::Pack, make_pack);

Kernel make_unpack(const KernelArgs& k) {
  size_t offset = size_t(k.node.attrs.i(attr::offset)) * dtype_size(k.out.dtype);
  return [offset](const Ins& in, Buffer& out) {
    out.storage = std::shared_ptr<void>(in[0]->storage, static_cast<char*>(in[0]->data()) + offset);
  };
}
Registrar r6(ops::Unpack, make_unpack);

}  // namespace

void wait_for_stream(const char* what) {
  use_device();
  if (!queued_any()) return check_cuda(cudaStreamSynchronize(stream()), what);
#if KB_HAVE_NCCL_H
  using Clock = std::chrono::steady_clock;
  auto begin = Clock::now();
  auto deadline = begin + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(job().timeout_seconds()));
  Communicator& c = communicator();
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream());
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) check_cuda(e, what);
    auto now = Clock::now();
    {
      std::lock_guard<std::mutex> lock(c.mu);
      ncclResult_t async = ncclSuccess;
      if (!c.aborted) nccl()->comm_get_async_error(c.comm, &async);
      if (async != ncclSuccess && async != ncclInProgress)
        fail_collective(c, c.last_what, c.last_number,
                        std::string("NCCL failed: ") + nccl()->get_error_string(async));
      if (now > deadline) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", job().timeout_seconds());
        fail_collective(c, c.last_what, c.last_number,
                        std::string("the GPU's work, its collectives included, did not complete "
                                    "within ") +
                            seconds + " s (a rank stalled or left the job)");
      }
    }
    // At full speed at first (most waits are short), then sleeping so a long wait costs no CPU.
    if (now - begin > std::chrono::milliseconds(2))
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
#endif
}

}  // namespace kb::cuda
