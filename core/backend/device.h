// Devices: the CPU always; an NVIDIA GPU when the CUDA plugin (libkbackend_cuda.so, next to the
// core library) loads and finds one. Devices are reached through function tables so that the
// plugin, a separately loaded module, can provide them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/backend/kernel.h"
#include "core/graph/buffer.h"

namespace kb {

struct DeviceApi {
  const char* name;              // "cuda"
  void* (*alloc)(size_t bytes);  // throws nothing; nullptr on failure
  void (*free)(void* p);
  void (*copy_to_device)(void* dst, const void* src, size_t bytes);
  void (*copy_to_host)(void* dst, const void* src, size_t bytes);
  void (*copy_on_device)(void* dst, const void* src, size_t bytes);  // stream-ordered
  void (*synchronize)();
  // Reports the first error that the calling thread's device steps found without waiting for
  // them (an index out of range, flagged by a kernel and read back later) by throwing the CPU's
  // error for it, and forgets them all. The core calls it before a run's updates take effect,
  // when a run fails, and before device data reaches the host: nothing reads a value computed
  // after an error unseen, and the error reported is the first, as on the CPU.
  void (*settle)();
  // The device's product name (NUL-terminated, truncated to name_size) and memory in bytes.
  void (*describe)(char* name, size_t name_size, int64_t* total_memory);
};

// The most dims a device kernel indexes (the CUDA plugin's strided maps hold that many): the
// compiler runs a step with an operand of higher rank on the CPU.
constexpr int kMaxDeviceRank = 8;

// The data-parallel job (core/backend/collectives.h) as the plugin's collectives (NCCL) see it.
// The functions that fail throw the core's errors, as kernels do.
struct JobHost {
  bool (*running)();  // kb_dist_init started the engine; else the process is no job
  int32_t (*rank)();
  int32_t (*size)();
  // Rank root's `bytes` at data, on every rank, over the core's engine (MPI).
  void (*broadcast)(void* data, size_t bytes, int32_t root, const char* what);
  double (*timeout_seconds)();
  // As a device collective is queued: fails if an earlier collective failed, else counts it
  // (kb_dist_collectives, when the job has several processes) and returns its number.
  uint64_t (*begin)(const char* what);
  // Fails the job (Status::distributed, naming the collective and this rank): every later
  // collective fails with the same message.
  void (*fail)(const char* what, uint64_t collective, const char* reason);
  // The device's collectives engine ("NCCL 2.28.3"), which kb_dist_engine names too.
  void (*set_device_engine)(const char* name);
};

// What the core hands to the plugin's entry point `kb_cuda_plugin_init`.
struct PluginHost {
  int32_t version;
  void (*register_kernel)(const char* device, const char* op, KernelFactory f);
  void (*register_device)(Device device, const DeviceApi* api);
  KernelFactory (*find_kernel)(const char* device, const char* op);  // nullptr when none
  int32_t ordinal;     // the GPU to run on (KB_DEVICE=cuda:N; 0 by default)
  const JobHost* job;  // never nullptr
};
// Changes whenever what crosses between the two does: these structures, the kernel interface, or
// the numbering of the scalar table's operations that fused programs carry (6).
constexpr int32_t kPluginHostVersion = 8;
// Returns 0 on success; otherwise writes a reason (NUL-terminated) into reason[reason_size].
using PluginInitFn = int32_t (*)(const PluginHost* host, char* reason, size_t reason_size);

void register_device(Device device, const DeviceApi* api);
const DeviceApi* device_api(Device device);  // nullptr when absent

// Loads the CUDA plugin once (unless KB_DISABLE_CUDA=1); true when a GPU is usable. The plugin
// is libkbackend_cuda.so beside the core library, or the file KB_CUDA_PLUGIN names (the test
// build's emulated device, tests/device_emulation).
bool cuda_available();
// Why CUDA is not used ("" when it is).
std::string cuda_unavailable_reason();
int64_t device_count(Device device);
// The device a new function runs on: KB_DEVICE=cpu|cuda[:N], else the GPU when there is one.
// cuda:N chooses which GPU the process uses (one per process); a value of another form leaves
// CUDA unused, cuda_unavailable_reason() saying so.
Device default_device();
const char* device_name(Device d);

// One device this process can run on: kind, index (the N of cuda:N; 0 for the CPU), product
// name and memory in bytes (the machine's for the CPU).
struct DeviceInfo {
  Device kind;
  int64_t index;
  std::string name;
  int64_t memory;
};
// The devices of a kind, in order (position 0 .. device_count(kind) - 1).
DeviceInfo device_info(Device kind, int64_t position);
// "cpu", "cuda" (this process' GPU) or "cuda:N" (which must be this process' GPU: one GPU per
// process, chosen by KB_DEVICE or the launcher's local rank): the device kind, or an error that
// says why not.
Device parse_device(const std::string& text);
// "cpu" or "cuda:N".
std::string device_label(Device d);

// DeviceApi::settle for device d (nothing for the CPU, whose steps fail as they run).
void settle(Device d);

// A copy of `b` on `to` (b itself when it is already there). A copy to the host settles the
// device first.
std::shared_ptr<Buffer> transfer(const std::shared_ptr<Buffer>& b, Device to);
std::shared_ptr<Buffer> to_host(const std::shared_ptr<Buffer>& b);
// Copies n bytes between two places of the same device.
void copy_within(Device d, void* dst, const void* src, size_t n);

}  // namespace kb
