// oneDNN on the CPU: the engine, a stream per thread, an LRU cache of primitives created at plan
// time (keyed by everything that defines them: kind, dtype, dims, strides, dilations, pads,
// layouts), and the plumbing to run a primitive on plain row-major buffers with reorders into and
// out of the layouts that the primitive prefers.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/graph/shape.h"

namespace kb::cpu::dnnl_util {

dnnl::engine& engine();
dnnl::stream& stream();  // one per thread

// The cached object for `key`, made by `make` on a miss. Objects are immutable once cached and
// may be used by several plans at once. Keys must name the kind of object (the cast relies on it).
std::shared_ptr<const void> cached_any(const std::string& key,
                                       const std::function<std::shared_ptr<const void>()>& make);
template <class T, class F>
std::shared_ptr<const T> cached(const std::string& key, F&& make) {
  return std::static_pointer_cast<const T>(
      cached_any(key, [&]() -> std::shared_ptr<const void> { return make(); }));
}
size_t cache_size();
constexpr size_t kCacheCapacity = 256;

// Builds cache keys: `Key("conv_fwd").add(dims)...str()`. Every key holds the calling thread's
// OpenMP team size: oneDNN fixes a primitive's thread count when it makes it, and the team
// changes with the machine's load (threads_left_free).
class Key {
 public:
  explicit Key(const char* kind);
  Key& add(int64_t v);
  Key& add(const std::vector<int64_t>& v);
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

dnnl::memory::dims to_dims(const std::vector<int64_t>& d);

// One tensor argument of a primitive: the plain layout the caller has and the layout the
// primitive wants; a reorder between them when they differ.
struct ArgSpec {
  int id = 0;                // DNNL_ARG_*
  bool output = false;       // written by the primitive
  dnnl::memory::desc user;   // the caller's buffer (plain row-major)
  dnnl::memory::desc inner;  // what the primitive was created with
  bool needs_reorder = false;
  dnnl::reorder reorder;  // input: user -> inner; output: inner -> user

  ArgSpec() = default;
  ArgSpec(int id, bool output, const dnnl::memory::desc& user, const dnnl::memory::desc& inner);
};

// A primitive with its tensor arguments and scratchpad size (the scratchpad is user-managed, so
// one primitive may run in several plans at once).
struct PrimSpec {
  dnnl::primitive prim;
  std::vector<ArgSpec> args;
  dnnl::memory::desc scratchpad;
  std::string impl;  // oneDNN's implementation name
};

// Per-kernel execution state (each plan step has its own, so the buffers it owns are never shared
// between concurrent calls): memory objects and the buffers of reordered tensors and scratchpad.
class Runner {
 public:
  // work: the primitive's multiply-adds (or a like measure); below kSerialWork it runs on the
  // calling thread alone. -1: the number of elements of its arguments.
  explicit Runner(std::shared_ptr<const PrimSpec> spec, int64_t work = -1);
  // ptrs: one buffer per entry of spec->args, in the caller's (user) layout (a braced list: no
  // allocation per run). `kept`: an input whose buffer holds what it held on the previous run,
  // so that its reordered copy from then still holds (its reorder is skipped), or -1.
  void run(std::initializer_list<void*> ptrs, int kept = -1);
  const PrimSpec& spec() const { return *spec_; }

 private:
  std::shared_ptr<const PrimSpec> spec_;
  bool serial_ = false;
  std::vector<dnnl::memory> user_, inner_;
  dnnl::memory scratch_;
  std::vector<dnnl_exec_arg_t> exec_args_;                  // the primitive's
  std::vector<std::vector<dnnl_exec_arg_t>> reorder_args_;  // per arg with a reorder
  static void execute(const dnnl::primitive& p, const std::vector<dnnl_exec_arg_t>& args);
  std::vector<std::shared_ptr<void>> owned_;
};

// Whether oneDNN runs bfloat16 products on this CPU's own bf16 arithmetic (avx512_bf16 or AMX):
// there its bf16 kernels run 2.2x its float32 ones (1024^3, two cores); elsewhere it emulates
// them, slower than the float32 kernels on widened copies.
bool native_bf16();

// The oneDNN type of a float32 or bfloat16 tensor (the two the primitives here are made for).
dnnl::memory::data_type dnnl_type(bool bf16);

// A 64-byte aligned host buffer of at least `bytes` bytes (never null).
std::shared_ptr<void> aligned_buffer(size_t bytes);

// c (m x n, row-major, leading dimension ldc) = op(a) * op(b) through oneDNN's sgemm; a failure
// throws as the ABI reports it, its message starting with `who` ("dot", "conv").
void sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc, const char* who);

}  // namespace kb::cpu::dnnl_util
