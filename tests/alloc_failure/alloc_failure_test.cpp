// Allocation failure: the Nth heap allocation of a whole training step (building the graph, its
// gradients, compiling, two calls) fails, for every N until the step needs no more. Every call
// must then return KB_OK or KB_ERROR_OUT_OF_MEMORY with a message, nothing may leak (the live
// allocations after releasing everything return to where they were), and the library must train
// normally right afterwards. The malloc family is defined here, ahead of the C library's for the
// whole process (as bench/alloc_counter.cpp does); only the testing thread's allocations fail.
#include <kbackend.h>
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/libc_alloc.h"

namespace {

std::atomic<int64_t> live{0};         // allocations not yet freed, every thread
thread_local int64_t countdown = -1;  // this thread's allocations left before one fails
thread_local int64_t failures = 0;    // allocations failed on this thread

bool fail_now() {
  if (countdown < 0) return false;
  if (countdown-- > 0) return false;
  ++failures;
  errno = ENOMEM;
  return true;
}
void* counted(void* p) {
  if (p) live.fetch_add(1, std::memory_order_relaxed);
  return p;
}

}  // namespace

extern "C" {
void* malloc(size_t n) { return fail_now() ? nullptr : counted(__libc_malloc(n)); }
void* calloc(size_t n, size_t size) {
  return fail_now() ? nullptr : counted(__libc_calloc(n, size));
}
void* realloc(void* p, size_t n) {
  if (!p) return malloc(n);
  if (n == 0) {
    free(p);
    return nullptr;
  }
  return fail_now() ? nullptr : __libc_realloc(p, n);  // on failure p stays allocated
}
void free(void* p) {
  if (p) live.fetch_sub(1, std::memory_order_relaxed);
  __libc_free(p);
}
void* memalign(size_t align, size_t n) {
  return fail_now() ? nullptr : counted(__libc_memalign(align, n));
}
void* aligned_alloc(size_t align, size_t n) { return memalign(align, n); }
int posix_memalign(void** out, size_t align, size_t n) {
  void* p = memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void* valloc(size_t n) { return memalign(4096, n); }
void* pvalloc(size_t n) { return memalign(4096, (n + 4095) & ~size_t(4095)); }
}

namespace {

int problems = 0;

void complain(const char* what, int64_t n, kb_status st) {
  if (++problems <= 20)
    std::fprintf(stderr, "allocation %lld: %s (status %d: %s)\n", static_cast<long long>(n), what,
                 int(st), kb_last_error_message());
}

// Checks a call's status under injected failures; false when the step must stop.
bool step_ok(kb_status st, int64_t n) {
  if (st == KB_OK) return true;
  if (st != KB_ERROR_OUT_OF_MEMORY) complain("a status other than out of memory", n, st);
  const char* m = kb_last_error_message();
  if (!m || !*m) complain("a failure without a message", n, st);
  return false;
}

// A dense softmax classifier's training step, from nothing to two calls; releases everything it
// made. Returns whether every call succeeded.
bool training_step(int64_t n) {
  const int64_t batch = 8, in = 6, classes = 3;
  std::vector<float> w0(size_t(in * classes)), xs(size_t(batch * in)), ys(size_t(batch * classes));
  for (size_t i = 0; i < w0.size(); ++i) w0[i] = float(i % 7) * 0.1f - 0.3f;
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = float(i % 5) * 0.2f;
  for (int64_t r = 0; r < batch; ++r) ys[size_t(r * classes + r % classes)] = 1.0f;
  const int64_t wshape[2] = {in, classes}, xshape[2] = {-1, in}, yshape[2] = {-1, classes};
  const int64_t xdims[2] = {batch, in}, ydims[2] = {batch, classes};
  const float rate = 0.1f;

  std::vector<kb_tensor*> held;  // released at the end, whatever happened
  held.reserve(32);
  countdown = n;  // armed after this test's own allocations (n < 0: nothing fails)
  kb_tensor_list* grads = nullptr;
  kb_tensor_list* out = nullptr;
  kb_compiled_function* f = nullptr;
  bool ok = true;
  // A call with one tensor out-parameter, made while every call before it succeeded.
  auto make = [&](auto call) -> kb_tensor* {
    kb_tensor* t = nullptr;
    if (!ok) return nullptr;
    kb_status st = call(&t);
    if (st == KB_OK) held.push_back(t);
    ok = step_ok(st, n);
    return ok ? t : nullptr;
  };
  using Out = kb_tensor**;
  kb_tensor* w = make(
      [&](Out o) { return kb_variable(w0.data(), KB_FLOAT32, wshape, 2, KB_FLOAT32, "w", o); });
  kb_tensor* x = make([&](Out o) { return kb_placeholder(xshape, 2, 2, KB_FLOAT32, 0, "x", o); });
  kb_tensor* y = make([&](Out o) { return kb_placeholder(yshape, 2, 2, KB_FLOAT32, 0, "y", o); });
  kb_tensor* xw = make([&](Out o) { return kb_dot(x, w, o); });
  kb_tensor* losses = make([&](Out o) { return kb_categorical_crossentropy(y, xw, 1, -1, o); });
  kb_tensor* loss = make([&](Out o) { return kb_mean(losses, nullptr, 0, 0, o); });
  if (ok) ok = step_ok(kb_gradients(loss, &w, 1, &grads), n);
  kb_tensor* g = make([&](Out o) { return kb_tensor_list_get(grads, 0, o); });
  kb_tensor* lr =
      make([&](Out o) { return kb_tensor_from_data(&rate, KB_FLOAT32, nullptr, 0, o); });
  kb_tensor* step = make([&](Out o) { return kb_multiply(g, lr, o); });
  kb_tensor* update = make([&](Out o) { return kb_update_sub(w, step, o); });
  if (ok) {
    kb_tensor* ins[2] = {x, y};
    ok = step_ok(kb_function(ins, 2, &loss, 1, &update, 1, &f), n);
  }
  kb_tensor* xv =
      make([&](Out o) { return kb_tensor_from_data(xs.data(), KB_FLOAT32, xdims, 2, o); });
  kb_tensor* yv =
      make([&](Out o) { return kb_tensor_from_data(ys.data(), KB_FLOAT32, ydims, 2, o); });
  for (int call = 0; call < 2 && ok; ++call) {
    kb_tensor* feeds[2] = {xv, yv};
    ok = step_ok(kb_function_call(f, feeds, 2, &out), n);
    if (ok) {
      kb_tensor_list_release(out);
      out = nullptr;
    }
  }
  kb_function_release(f);
  kb_tensor_list_release(grads);
  for (kb_tensor* t : held) kb_tensor_release(t);
  countdown = -1;
  return ok;
}

}  // namespace

int main() {
  setenv("KB_NUM_THREADS", "1", 1);  // the failing thread is the only one allocating
  // Two unfailed steps fill the library's caches (plans, kernels, host blocks, names).
  if (!training_step(-1) || !training_step(-1)) {
    std::fprintf(stderr, "the training step fails without injected failures\n");
    return 1;
  }
  // An error message is kept per thread in a string that grows to the longest one: grown here,
  // so that the first failure's message is not counted as left behind.
  std::string longest(1024, 'x');
  kb_set_error(KB_ERROR_OUT_OF_MEMORY, longest.c_str());
  kb_clear_error();
  int64_t steady = live.load();
  training_step(-1);
  int64_t drift = live.load() - steady;  // what an unfailed step leaves (0 when caches are full)
  int64_t n = 0;
  for (;; ++n) {
    int64_t before = live.load();
    failures = 0;
    bool all = training_step(n);
    int64_t left = live.load() - before;
    if (left > drift) {
      if (++problems <= 20)
        std::fprintf(stderr, "allocation %lld: %lld allocations left after releasing all\n",
                     static_cast<long long>(n), static_cast<long long>(left));
    }
    if (!training_step(-1)) complain("the next unfailed step fails", n, kb_last_error_code());
    if (all && failures == 0) break;  // the step needed fewer than n + 1 allocations
    if (problems > 20) break;
  }
  std::printf("%lld allocation points failed in turn: %d problems\n", static_cast<long long>(n),
              problems);
  return problems == 0 ? 0 : 1;
}
