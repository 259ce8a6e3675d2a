// The CUDA plugin's entry point, its device (memory, copies, stream) and a caching allocator.
#include <cublas_v2.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "core/backend/device.h"
#include "core/cuda/common.cuh"
#include "core/kernel_plans/cuda_ops.h"
#include "core/ops/op.h"

namespace kb::cuda {

namespace {
cudaStream_t g_stream = nullptr;
int g_ordinal = 0;
const JobHost* g_job = nullptr;

// The caching allocator's state, never destroyed: buffers may still be freed while the process
// exits (the core's statics, finalizers of a binding's host language), after this library's
// statics would have gone.
struct Pool {
  std::mutex mu;
  std::multimap<size_t, void*> free;  // cached blocks by size
  std::map<void*, size_t> sizes;      // live and cached blocks
};
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

size_t round_size(size_t n) { return ((n + 511) / 512) * 512; }

void* pool_alloc(size_t bytes) {
  size_t n = round_size(bytes);
  try {
    use_device();
  } catch (const Error&) {
    return nullptr;
  }
  Pool& pl = pool();
  {
    std::lock_guard<std::mutex> l(pl.mu);
    auto it = pl.free.find(n);
    if (it != pl.free.end()) {
      void* p = it->second;
      pl.free.erase(it);
      return p;
    }
  }
  // A failed cudaMalloc is also the thread's last error, which the next launch's check would
  // report: cleared after each failure.
  void* p = nullptr;
  if (cudaMalloc(&p, n) != cudaSuccess) {
    cudaGetLastError();
    release_cached_memory();  // and try once more
    if (cudaMalloc(&p, n) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
  }
  std::lock_guard<std::mutex> l(pl.mu);
  pl.sizes[p] = n;
  return p;
}

// One stream: work queued later reuses a block only after earlier work on it, so freed blocks
// can be handed out again at once.
void pool_free(void* p) {
  if (!p) return;
  Pool& pl = pool();
  std::lock_guard<std::mutex> l(pl.mu);
  auto it = pl.sizes.find(p);
  if (it == pl.sizes.end()) return;
  pl.free.emplace(it->second, p);
}

void copy_to_device(void* dst, const void* src, size_t n) {
  use_device();
  check_cuda(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, g_stream), "copy to device");
  wait_for_stream("copy to device");
}
void copy_to_host(void* dst, const void* src, size_t n) {
  use_device();
  check_cuda(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, g_stream), "copy to host");
  wait_for_stream("copy to host");
}
void synchronize() { wait_for_stream("synchronize"); }

void settle() {
  use_device();
  settle_checks();
}

void describe(char* name, size_t name_size, int64_t* total_memory) {
  cudaDeviceProp prop{};
  bool known = cudaGetDeviceProperties(&prop, g_ordinal) == cudaSuccess;
  std::snprintf(name, name_size, "%s", known ? prop.name : "unknown CUDA device");
  *total_memory = known ? int64_t(prop.totalGlobalMem) : 0;
}

const DeviceApi kApi{"cuda",         pool_alloc,  pool_free, copy_to_device, copy_to_host,
                     copy_on_device, synchronize, settle,    describe};
}  // namespace

void copy_on_device(void* dst, const void* src, size_t n) {
  use_device();
  check_cuda(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, g_stream), "device copy");
}

// Checked on every entry: the host program (or another CUDA library in it) may change a thread's
// current device between calls.
void use_device() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == g_ordinal) return;
  check_cuda(cudaSetDevice(g_ordinal), "select the device");
}

cudaStream_t stream() {
  use_device();
  return g_stream;
}

const JobHost& job() { return *g_job; }

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // reported here, not again by the next launch's check
  fail(Status::device, "cuda: ", what, ": ", cudaGetErrorString(e));
}

void release_cached_memory() {
  use_device();
  Pool& pl = pool();
  // Locked before the wait: a block freed after it could still have work queued on the stream.
  std::lock_guard<std::mutex> l(pl.mu);
  cudaStreamSynchronize(g_stream);  // the cached blocks' last users have run
  for (auto& kv : pl.free) {
    cudaFree(kv.second);
    pl.sizes.erase(kv.second);
  }
  pl.free.clear();
  cudaGetLastError();  // a failure here is not the next launch's
}

void* scratch_alloc(size_t bytes) {
  void* p = pool_alloc(bytes);
  if (!p) fail(Status::out_of_memory, "cuda: out of device memory (", bytes, " bytes)");
  return p;
}
void scratch_free(void* p) { pool_free(p); }

std::vector<Registration>& registrations() {
  static std::vector<Registration> r;
  return r;
}

Registrar::Registrar(OpName op, KernelFactory f) { registrations().push_back({op.c_str(), f}); }

namespace {
// What the host calls for every op: a problem that the table of the device's operations declines
// (core/kernel_plans/cuda_ops.cpp) runs on the CPU; the rest go to the op's factory.
Kernel factory_of_any_op(const KernelArgs& k) {
  if (!cuda_takes(k)) return Kernel{};
  for (const Registration& r : registrations())
    if (k.node.op->name == r.op) return r.factory(k);
  return Kernel{};
}

// The registered factories and the table name the same operations; "" when they do, else the
// first difference.
std::string table_mismatch() {
  for (const Registration& r : registrations())
    if (!find_cuda_op(r.op)) return std::string(r.op) + " has a kernel but no row in cuda_ops";
  for (const DeviceOp& op : cuda_ops()) {
    bool found = false;
    for (const Registration& r : registrations()) found = found || op.name == std::string(r.op);
    if (!found) return std::string(op.name) + " has a row in cuda_ops but no kernel";
  }
  return "";
}
}  // namespace

}  // namespace kb::cuda

extern "C" __attribute__((visibility("default"))) int32_t kb_cuda_plugin_init(
    const kb::PluginHost* host, char* reason, size_t reason_size) {
  auto say = [&](const std::string& s) {
    if (reason && reason_size) {
      std::strncpy(reason, s.c_str(), reason_size - 1);
      reason[reason_size - 1] = 0;
    }
  };
  try {
    if (!host || host->version != kb::kPluginHostVersion) {
      say("core and plugin versions differ");
      return 1;
    }
    if (std::string m = kb::cuda::table_mismatch(); !m.empty()) {
      say(m);
      return 1;
    }
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      say(std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e));
      return 1;
    }
    if (count == 0) {
      say("no CUDA device");
      return 1;
    }
    if (host->ordinal < 0 || host->ordinal >= count) {
      say("KB_DEVICE=cuda:" + std::to_string(host->ordinal) + ", but the driver sees " +
          std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s"));
      return 1;
    }
    kb::cuda::g_ordinal = host->ordinal;
    kb::cuda::g_job = host->job;
    e = cudaSetDevice(host->ordinal);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&kb::cuda::g_stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
      say(std::string("cannot create a CUDA stream: ") + cudaGetErrorString(e));
      return 1;
    }
    for (auto& r : kb::cuda::registrations())
      host->register_kernel("cuda", r.op, kb::cuda::factory_of_any_op);
    host->register_device(kb::Device::cuda, &kb::cuda::kApi);
    return 0;
  } catch (const std::exception& ex) {
    say(ex.what());
    return 1;
  }
}
