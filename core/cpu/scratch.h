// Per-thread scratch memory kept from call to call: the temporary rows a kernel needs per thread
// would otherwise be allocated on every call.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

#include "core/graph/host_pool.h"

namespace kb::cpu {

// n elements of T (trivially copyable; not cleared between uses) for the calling thread, 64-byte
// aligned. `Tag` names the use, so that scratches alive at once on one thread are distinct.
// Blocks above kMaxKeptBytes come from the host pool and go back to it with this object: a rare
// large reduction does not pin its memory to a thread.
template <class T, class Tag>
class ThreadScratch {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static constexpr size_t kMaxKeptBytes = size_t(1) << 20;

  explicit ThreadScratch(size_t n) {
    size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    if (bytes <= kMaxKeptBytes) {
      Kept& k = kept();
      if (k.bytes < bytes) {
        std::free(k.p);
        k.p = nullptr;
        k.bytes = 0;
        k.p = std::aligned_alloc(64, bytes);
        if (!k.p) throw std::bad_alloc();
        k.bytes = bytes;
      }
      data_ = static_cast<T*>(k.p);
    } else {
      own_ = host_allocate(bytes);
      data_ = static_cast<T*>(own_.get());
    }
  }
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;
  T* data() const { return data_; }

 private:
  struct Kept {
    void* p = nullptr;
    size_t bytes = 0;
    ~Kept() { std::free(p); }
  };
  static Kept& kept() {
    static thread_local Kept k;
    return k;
  }
  std::shared_ptr<void> own_;
  T* data_ = nullptr;
};

}  // namespace kb::cpu
