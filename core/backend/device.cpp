#include "core/backend/device.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>

#include "core/backend/collectives.h"
#include "core/backend/plugin_file.h"
#include "core/util/error.h"

namespace kb {

namespace {
const DeviceApi* g_cuda = nullptr;
int32_t g_cuda_ordinal = 0;  // the GPU the plugin runs on
std::string g_reason = "not probed";
std::once_flag g_probe;

void host_register_kernel(const char* device, const char* op, KernelFactory f) {
  register_kernel(device, op, f);
}
void host_register_device(Device d, const DeviceApi* api) { register_device(d, api); }
KernelFactory host_find_kernel(const char* device, const char* op) {
  return find_kernel(device, op);
}

// The job through core/backend/collectives.h, for the plugin's collectives.
const JobHost kJobHost{
    [] { return dist::initialized(); },
    [] { return dist::rank(); },
    [] { return dist::size(); },
    [](void* data, size_t bytes, int32_t root, const char* what) {
      auto b = Buffer::make(DType::u8, Dims{int64_t(bytes)});
      std::memcpy(b->data(), data, bytes);
      dist::broadcast(*b, root, what);
      std::memcpy(data, b->data(), bytes);
    },
    [] { return dist::timeout_seconds(); },
    [](const char* what) { return dist::begin_device_collective(what); },
    [](const char* what, uint64_t collective, const char* reason) {
      dist::fail_job(what, collective, reason);
    },
    [](const char* name) { dist::set_device_engine(name); },
};

// A GPU index written as 1 to 4 digits, or -1.
int32_t gpu_index(const std::string& text) {
  bool digits = !text.empty() && text.size() <= 4 &&
                text.find_first_not_of("0123456789") == std::string::npos;
  return digits ? std::stoi(text) : -1;
}

// The process' rank among the processes of its host, as the launcher says (Open MPI, MPICH's
// Hydra, Slurm, MVAPICH), or -1: a job of one process per GPU gives process r of a host GPU r.
// Read from the environment, so it holds before kb_dist_init too.
int32_t launcher_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                           "MV2_COMM_WORLD_LOCAL_RANK"}) {
    const char* v = std::getenv(name);
    if (int32_t rank = v ? gpu_index(v) : -1; rank >= 0) return rank;
  }
  return -1;
}

// KB_DEVICE: unset, "cpu", "cuda" or "cuda:N". Unset or "cuda": the GPU of the process' local
// rank when a launcher started it, else GPU 0.
struct DeviceSetting {
  bool cpu = false, valid = true;
  int32_t ordinal = 0;
  bool ordinal_from_launcher = false;
  std::string text;
};
DeviceSetting device_setting() {
  DeviceSetting s;
  if (int32_t local = launcher_local_rank(); local >= 0) {
    s.ordinal = local;
    s.ordinal_from_launcher = true;
  }
  const char* env = std::getenv("KB_DEVICE");
  if (!env) return s;
  s.text = env;
  if (s.text == "cpu") {
    s.cpu = true;
  } else if (s.text.rfind("cuda:", 0) == 0) {
    int32_t n = gpu_index(s.text.substr(5));
    s.valid = n >= 0;
    if (s.valid) {
      s.ordinal = n;
      s.ordinal_from_launcher = false;
    }
  } else {
    s.valid = s.text == "cuda";
  }
  return s;
}

void probe_cuda() {
  if (const char* off = std::getenv("KB_DISABLE_CUDA"); off && std::string(off) == "1") {
    g_reason = "disabled by KB_DISABLE_CUDA=1";
    return;
  }
  DeviceSetting setting = device_setting();
  if (!setting.valid) {
    g_reason = "KB_DEVICE=" + setting.text + " is not cpu, cuda or cuda:N";
    return;
  }
  bool named = false;
  std::string path = plugin_file("KB_CUDA_PLUGIN", "libkbackend_cuda.so", &named);
  if (path.empty()) {
    g_reason = "cannot locate the core library";
    return;
  }
  if (access(path.c_str(), R_OK) != 0) {
    g_reason = "plugin not loaded: " + path + " not found";
    return;
  }
  // Without a driver the plugin cannot run; loading it would still map cuBLAS and cuDNN
  // (about 150 MiB of resident memory in a CPU-only process). A named plugin checks for itself.
  if (!named && !dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    g_reason = "no CUDA driver (libcuda.so.1 not found)";
    return;
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    g_reason = std::string("plugin not loaded: ") + (e ? e : path);
    return;
  }
  auto init = reinterpret_cast<PluginInitFn>(dlsym(h, "kb_cuda_plugin_init"));
  if (!init) {
    g_reason = "plugin has no kb_cuda_plugin_init";
    return;  // never dlclose: static objects of the plugin may be referenced
  }
  static const PluginHost host{kPluginHostVersion, host_register_kernel, host_register_device,
                               host_find_kernel,   setting.ordinal,      &kJobHost};
  g_cuda_ordinal = setting.ordinal;
  char reason[512] = {0};
  if (init(&host, reason, sizeof reason) != 0) {
    g_reason = std::string("CUDA unavailable: ") + reason;
    if (setting.ordinal_from_launcher)
      g_reason += " (cuda:" + std::to_string(setting.ordinal) +
                  " is this process' local rank in its job; KB_DEVICE=cuda:N chooses another)";
    g_cuda = nullptr;
    return;
  }
  if (!g_cuda) {
    g_reason = "plugin registered no device";
    return;
  }
  g_reason.clear();
}
}  // namespace

namespace {
// Buffer::allocate's device memory (core/graph/buffer.h).
std::shared_ptr<void> allocate_on_device(Device device, size_t bytes) {
  const DeviceApi* api = device_api(device);
  check(api != nullptr, Status::device, "no ", device_name(device), " device");
  void* p = api->alloc(bytes == 0 ? 64 : bytes);
  if (!p) throw std::bad_alloc();
  auto free_fn = api->free;
  return std::shared_ptr<void>(p, [free_fn](void* q) { free_fn(q); });
}
}  // namespace

void register_device(Device d, const DeviceApi* api) {
  if (d == Device::cuda) g_cuda = api;
  set_device_allocator(allocate_on_device);
}

const DeviceApi* device_api(Device d) {
  if (d == Device::cuda) return cuda_available() ? g_cuda : nullptr;
  return nullptr;
}

bool cuda_available() {
  std::call_once(g_probe, probe_cuda);
  return g_cuda != nullptr;
}

std::string cuda_unavailable_reason() {
  cuda_available();
  return g_reason;
}

int64_t device_count(Device d) {
  if (d == Device::cpu) return 1;
  return cuda_available() ? 1 : 0;
}

const char* device_name(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }

namespace {
// The CPU's model name as the kernel reports it, or "cpu".
std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "cpu" : line.substr(start);
  }
  return "cpu";
}
}  // namespace

DeviceInfo device_info(Device kind, int64_t position) {
  int64_t n = device_count(kind);
  check(position >= 0 && position < n, Status::invalid_argument, "device ", position, " of kind ",
        device_name(kind), ": there ", n == 1 ? "is " : "are ", n, n == 1 ? " device" : " devices",
        kind == Device::cuda && n == 0 ? " (" + cuda_unavailable_reason() + ")" : std::string());
  if (kind == Device::cpu) {
    static const std::string name = cpu_model_name();
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return {kind, 0, name, pages > 0 && page > 0 ? int64_t(pages) * page : 0};
  }
  char name[256] = {0};
  int64_t memory = 0;
  g_cuda->describe(name, sizeof name, &memory);
  return {kind, g_cuda_ordinal, name, memory};
}

std::string device_label(Device d) {
  if (d == Device::cpu) return "cpu";
  return "cuda:" + std::to_string(cuda_available() ? g_cuda_ordinal : 0);
}

Device parse_device(const std::string& text) {
  if (text == "cpu") return Device::cpu;
  bool indexed = text.rfind("cuda:", 0) == 0;
  check(text == "cuda" || indexed, Status::invalid_argument, "device '", text,
        "' is not cpu, cuda or cuda:N");
  int32_t n = indexed ? gpu_index(text.substr(5)) : 0;
  check(n >= 0, Status::invalid_argument, "device '", text,
        "': N of cuda:N must be a number below 10000");
  check(cuda_available(), Status::device, "device '", text, "': ", cuda_unavailable_reason());
  check(!indexed || n == g_cuda_ordinal, Status::device, "device '", text,
        "': this process runs on cuda:", g_cuda_ordinal,
        " (one GPU per process: KB_DEVICE=cuda:N or the launcher's local rank chooses it)");
  return Device::cuda;
}

Device default_device() {
  if (device_setting().cpu) return Device::cpu;
  return cuda_available() ? Device::cuda : Device::cpu;
}

void settle(Device d) {
  if (d == Device::cpu) return;
  const DeviceApi* api = device_api(d);
  check(api != nullptr, Status::device, "no ", device_name(d), " device");
  api->settle();
}

std::shared_ptr<Buffer> transfer(const std::shared_ptr<Buffer>& b, Device to) {
  if (!b || b->device == to) return b;
  if (to == Device::cpu) settle(b->device);
  auto out = std::make_shared<Buffer>(b->dtype, b->dims);
  out->device = to;
  out->allocate();
  size_t n = b->nbytes();
  if (n) {
    if (to == Device::cpu)
      device_api(b->device)->copy_to_host(out->data(), b->data(), n);
    else
      device_api(to)->copy_to_device(out->data(), b->data(), n);
  }
  return out;
}

std::shared_ptr<Buffer> to_host(const std::shared_ptr<Buffer>& b) {
  return transfer(b, Device::cpu);
}

void copy_within(Device d, void* dst, const void* src, size_t n) {
  if (n == 0 || dst == src) return;
  if (d == Device::cpu) {
    std::memmove(dst, src, n);
  } else {
    device_api(d)->copy_on_device(dst, src, n);
  }
}

}  // namespace kb
