// Counts heap allocations by defining the malloc family in the executable, which the dynamic
// linker binds ahead of the C library for every shared object of the process (glibc documents
// replacing malloc this way). Each entry forwards to glibc's own allocator (__libc_*), so the
// heap itself is unchanged; the count is one relaxed atomic add per call.
#include "alloc_counter.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "libc_alloc.h"

namespace {
std::atomic<uint64_t> allocations{0};
std::atomic<bool> tracing{false};
std::atomic<bool> attributing{false};
std::atomic<uint64_t> onednn{0};
thread_local bool in_trace = false;  // backtrace itself may allocate

// Whether the nearest frame in oneDNN's or kbackend's library is oneDNN's.
bool from_onednn() {
  void* frames[64];
  int n = backtrace(frames, 64);
  for (int i = 0; i < n; ++i) {
    Dl_info info;
    if (!dladdr(frames[i], &info) || !info.dli_fname) continue;
    if (std::strstr(info.dli_fname, "libdnnl")) return true;
    if (std::strstr(info.dli_fname, "libkbackend")) return false;
  }
  return false;
}

void count() {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (in_trace) return;
  if (attributing.load(std::memory_order_relaxed)) {
    in_trace = true;
    if (from_onednn()) onednn.fetch_add(1, std::memory_order_relaxed);
    in_trace = false;
  }
  if (!tracing.load(std::memory_order_relaxed)) return;
  in_trace = true;
  void* frames[32];
  int n = backtrace(frames, 32);
  static const char rule[] = "-- allocation\n";
  (void)!write(2, rule, sizeof rule - 1);
  backtrace_symbols_fd(frames + 2, n - 2, 2);
  in_trace = false;
}
}  // namespace

uint64_t kb_bench::heap_allocations() { return allocations.load(std::memory_order_relaxed); }

uint64_t kb_bench::onednn_allocations() { return onednn.load(std::memory_order_relaxed); }

namespace {
// The first backtrace loads the unwinder (and allocates): done before any stack is walked.
void load_unwinder() {
  void* warm[2];
  backtrace(warm, 2);
}
}  // namespace

void kb_bench::attribute_allocations(bool on) {
  if (on) load_unwinder();
  attributing.store(on, std::memory_order_relaxed);
}

void kb_bench::trace_allocations(bool on) {
  static const bool wanted = [] {
    const char* v = std::getenv("KB_ALLOC_TRACE");
    bool yes = v && *v == '1';
    if (yes) load_unwinder();
    return yes;
  }();
  tracing.store(on && wanted, std::memory_order_relaxed);
}

extern "C" {

void* malloc(size_t n) {
  count();
  return __libc_malloc(n);
}

void* calloc(size_t n, size_t size) {
  count();
  return __libc_calloc(n, size);
}

void* realloc(void* p, size_t n) {
  count();
  return __libc_realloc(p, n);
}

void free(void* p) { __libc_free(p); }

void* memalign(size_t align, size_t n) {
  count();
  return __libc_memalign(align, n);
}

void* aligned_alloc(size_t align, size_t n) {
  count();
  return __libc_memalign(align, n);
}

int posix_memalign(void** out, size_t align, size_t n) {
  if (align < sizeof(void*) || (align & (align - 1)) != 0) return EINVAL;
  count();
  void* p = __libc_memalign(align, n);
  if (!p && n != 0) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"
