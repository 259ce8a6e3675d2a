// Counts heap allocations by defining the malloc family in the executable, which the dynamic
// linker binds ahead of the C library for every shared object of the process (glibc documents
// replacing malloc this way). Each entry forwards to glibc's own allocator (__libc_*), so the
// heap itself is unchanged; the count is one relaxed atomic add per call.
#include "alloc_counter.h"

#include <execinfo.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {
std::atomic<uint64_t> allocations{0};
std::atomic<bool> tracing{false};
thread_local bool in_trace = false;  // backtrace itself may allocate

void count() {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (!tracing.load(std::memory_order_relaxed) || in_trace) return;
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

void kb_bench::trace_allocations(bool on) {
  static const bool wanted = [] {
    const char* v = std::getenv("KB_ALLOC_TRACE");
    if (v && *v == '1') {
      void* warm[2];
      backtrace(warm, 2);  // loads the unwinder now, not while tracing
      return true;
    }
    return false;
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
