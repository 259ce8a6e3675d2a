// An emulated GPU for machines without one: a plugin (loaded through KB_CUDA_PLUGIN) that
// registers itself as the "cuda" device with the CUDA plugin's operations and the same answers to
// which problems each takes (core/kernel_plans/cuda_ops.h), each kernel running the CPU kernel. Its
// memory is host memory behind tagged addresses that host code cannot dereference (a non-canonical
// address faults), so a plan that reads or writes device memory on the host, or hands host memory
// to a device step, fails here as it would on a GPU. It tests the core's device paths (placement,
// transfers, fallbacks, memory lifetimes, loops, outputs), not the CUDA kernels; except that where
// a CUDA kernel runs a per-element function shared with the host (element_kernels.h), the emulated
// kernel runs that function.
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/device.h"
#include "core/graph/dtype.h"
#include "core/kernel_plans/cuda_ops.h"
#include "core/ops/op.h"
#include "core/util/error.h"
#include "element_kernels.h"

namespace {

using kb::Buffer;
using kb::Kernel;
using kb::KernelArgs;
using kb::KernelFactory;

constexpr uintptr_t kTag = uintptr_t(1) << 62;

bool tagged(const void* p) { return (reinterpret_cast<uintptr_t>(p) & kTag) != 0; }
void* tag(void* p) { return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) | kTag); }
void* untag(const void* p) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) & ~kTag);
}

[[noreturn]] void misuse(const std::string& what) {
  throw std::logic_error("emulated device: " + what);
}

void* emu_alloc(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  return p ? tag(p) : nullptr;
}
void emu_free(void* p) {
  if (p && !tagged(p)) misuse("free of a host address");
  std::free(untag(p));
}
void emu_copy_to_device(void* dst, const void* src, size_t n) {
  if (!tagged(dst) || tagged(src)) misuse("copy to device between the wrong places");
  std::memcpy(untag(dst), src, n);
}
void emu_copy_to_host(void* dst, const void* src, size_t n) {
  if (tagged(dst) || !tagged(src)) misuse("copy to host between the wrong places");
  std::memcpy(dst, untag(src), n);
}
void emu_copy_on_device(void* dst, const void* src, size_t n) {
  if (!tagged(dst) || !tagged(src)) misuse("device copy with a host address");
  std::memmove(untag(dst), untag(src), n);
}
void emu_synchronize() {}

// The CUDA plugin's index checks do not wait for the GPU: the error of a step that indexes out
// of range is reported when the thread settles, after later steps have run (index_errors.cuh).
// The emulated device defers the errors of the same steps (DeviceOp::defers_index_errors) so that
// the core's settling is tested: the first error is the one reported, and no update takes effect.
// Kept here: the calling thread's first deferred error since it last settled.
std::exception_ptr& first_deferred_error() {
  thread_local std::exception_ptr first;
  return first;
}

void emu_settle() {
  std::exception_ptr first = std::exchange(first_deferred_error(), nullptr);
  if (first) std::rethrow_exception(first);
}

// The emulation's memory is the host's; it reports a name of its own so tests can tell.
void emu_describe(char* name, size_t name_size, int64_t* total_memory) {
  std::snprintf(name, name_size, "kbackend emulated GPU");
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  *total_memory = pages > 0 && page > 0 ? int64_t(pages) * page : 0;
}

const kb::DeviceApi kApi{"cuda",           emu_alloc,          emu_free,        emu_copy_to_device,
                         emu_copy_to_host, emu_copy_on_device, emu_synchronize, emu_settle,
                         emu_describe};

// A device buffer seen by the CPU kernel: the same storage (kept alive), untagged.
Buffer on_host(const Buffer& b, const char* role, size_t i) {
  if (b.device != kb::Device::cuda)
    misuse(std::string(role) + " " + std::to_string(i) + " of a device step is on the host");
  Buffer h(b.dtype, b.dims);
  if (b.storage) {
    if (!tagged(b.storage.get()))
      misuse(std::string(role) + " " + std::to_string(i) + " has host memory");
    h.storage = std::shared_ptr<void>(b.storage, untag(b.storage.get()));
  }
  return h;
}

// Which operations ran on the device, and with which operand types: with
// KB_EMULATED_COVERAGE=<file>, written there when the process exits, one line per registered
// operation ("Op runs dtype..."), so that a suite can be checked to run every kernel of the plugin
// (tests/cuda/coverage_test.sh).
struct Coverage {
  std::vector<std::atomic<uint64_t>> runs;
  std::vector<std::atomic<uint32_t>> dtypes;  // bit t: an operand or the result of DType t

  Coverage() : runs(kb::cuda_ops().size()), dtypes(kb::cuda_ops().size()) {
    for (size_t i = 0; i < runs.size(); ++i) runs[i] = 0, dtypes[i] = 0;
  }

  void record(size_t op, const std::vector<const Buffer*>& in, const Buffer& out) {
    uint32_t bits = 1u << int(out.dtype);
    for (const Buffer* b : in) bits |= 1u << int(b->dtype);
    runs[op].fetch_add(1, std::memory_order_relaxed);
    dtypes[op].fetch_or(bits, std::memory_order_relaxed);
  }

  ~Coverage() {
    const char* path = std::getenv("KB_EMULATED_COVERAGE");
    if (!path || !*path) return;
    FILE* f = std::fopen(path, "w");
    if (!f) return;
    for (size_t i = 0; i < runs.size(); ++i) {
      std::fprintf(f, "%s %llu", kb::cuda_ops()[i].name,
                   static_cast<unsigned long long>(runs[i].load()));
      for (int t = 0; t < kb::kNumDTypes; ++t)
        if (dtypes[i].load() & (1u << t)) std::fprintf(f, " %s", kb::dtype_name(kb::DType(t)));
      std::fprintf(f, "\n");
    }
    std::fclose(f);
  }
};
Coverage g_coverage;

std::vector<KernelFactory> g_cpu;  // by row of the table
const kb::PluginHost* g_host = nullptr;
KernelFactory cpu_factory(const char* op) { return g_host->find_kernel("cpu", op); }

Kernel emulated(const KernelArgs& a) {
  const kb::DeviceOp* op = kb::find_cuda_op(a.node.op->name);
  if (!op) misuse("a kernel asked for " + a.node.op->name + ", which is not registered");
  if (op->takes && !op->takes(a)) return Kernel{};
  size_t row = size_t(op - kb::cuda_ops().data());
  std::optional<Kernel> shared = kb::emulation::element_kernel(op->name, a, cpu_factory);
  Kernel k = shared ? std::move(*shared) : g_cpu[row](a);
  if (!k) return Kernel{};
  return [k = std::move(k), row, defers = op->defers_index_errors](
             const std::vector<const Buffer*>& in, Buffer& out) {
    std::vector<Buffer> host;
    host.reserve(in.size());
    std::vector<const Buffer*> ptrs;
    for (size_t i = 0; i < in.size(); ++i) {
      host.push_back(on_host(*in[i], "input", i));
      ptrs.push_back(&host.back());
    }
    g_coverage.record(row, in, out);
    Buffer o = on_host(out, "output", 0);
    void* given = o.storage.get();
    try {
      k(ptrs, o);
    } catch (const kb::Error& e) {
      if (!defers || e.code() != kb::Status::invalid_argument) throw;
      if (!first_deferred_error()) first_deferred_error() = std::current_exception();
    }
    out.dims = o.dims;  // an op of run-time shape sets them
    if (o.storage.get() != given) out.storage = std::shared_ptr<void>(o.storage, tag(o.data()));
  };
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t kb_cuda_plugin_init(
    const kb::PluginHost* host, char* reason, size_t reason_size) {
  if (!host || host->version != kb::kPluginHostVersion) {
    if (reason && reason_size)
      std::snprintf(reason, reason_size, "core and plugin versions differ");
    return 1;
  }
  if (host->ordinal != 0) {
    if (reason && reason_size)
      std::snprintf(reason, reason_size, "KB_DEVICE=cuda:%d, but the emulated device is cuda:0",
                    int(host->ordinal));
    return 1;
  }
  g_host = host;
  const std::vector<kb::DeviceOp>& ops = kb::cuda_ops();
  g_cpu.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    g_cpu[i] = host->find_kernel("cpu", ops[i].name);
    if (g_cpu[i]) host->register_kernel("cuda", ops[i].name, emulated);
  }
  host->register_device(kb::Device::cuda, &kApi);
  return 0;
}
