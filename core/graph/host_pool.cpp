#include "core/graph/host_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

namespace kb {

namespace {

constexpr size_t kMinCachedBytes = size_t(64) << 10;

class HostPool {
 public:
  HostPool() {
    const char* env = std::getenv("KB_HOST_CACHE_MB");
    if (env && *env) {
      limit_ = size_t(std::strtoull(env, nullptr, 10)) << 20;
      fixed_limit_ = true;
    }
  }

  void* take(size_t bytes) {
    if (bytes >= kMinCachedBytes && limit_ > 0) {
      std::lock_guard<std::mutex> l(mu_);
      live_ += bytes;
      peak_live_ = std::max(peak_live_, live_);
      auto it = free_.find(bytes);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back().second;  // the most recently cached block of this size
        it->second.pop_back();
        cached_ -= bytes;
        return p;
      }
    }
    return fresh(bytes);
  }

  // Blocks of 2 MiB and more are 2 MiB-aligned and asked to be backed by huge pages: one TLB
  // entry and one page fault per 2 MiB instead of 512 (the bandwidth-bound kernels over tens of
  // MiB, W1 and W2, lost a third of their speed to TLB misses with 4 KiB pages).
  static void* fresh(size_t bytes) {
    constexpr size_t kHuge = size_t(2) << 20;
    void* p = nullptr;
    if (bytes >= kHuge) {
      size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
      p = std::aligned_alloc(kHuge, rounded);
#ifdef MADV_HUGEPAGE
      if (p) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure changes nothing
#endif
    } else {
      p = std::aligned_alloc(64, bytes);
    }
    if (!p) throw std::bad_alloc();
    return p;
  }

  // Unless KB_HOST_CACHE_MB fixes it, the cache may hold as much as the most the process ever
  // had in use at once: a compiled function that needs more than the default between two calls
  // (an LSTM's stacked states and gradients) would otherwise return blocks to the system at the
  // end of every call and fault them in again on the next.
  void give(void* p, size_t bytes) {
    if (bytes >= kMinCachedBytes && limit_ > 0) {
      std::lock_guard<std::mutex> l(mu_);
      live_ -= bytes;
      size_t limit = fixed_limit_ ? limit_ : std::max(limit_, peak_live_);
      if (bytes <= limit) {
        // The oldest cached blocks make room: sizes a function no longer asks for (an earlier
        // function's) go before the ones it uses on every call.
        while (cached_ + bytes > limit) evict_oldest();
        free_[bytes].push_back({clock_++, p});
        cached_ += bytes;
        return;
      }
    }
    std::free(p);
  }

 private:
  std::mutex mu_;
  // Frees the block cached longest ago (the front of its size's list: each list is in the order
  // the blocks were cached). The few sizes are scanned; no allocation on this path.
  void evict_oldest() {
    std::vector<std::pair<uint64_t, void*>>* oldest = nullptr;
    size_t oldest_bytes = 0;
    for (auto& [bytes, blocks] : free_)
      if (!blocks.empty() && (!oldest || blocks.front().first < oldest->front().first)) {
        oldest = &blocks;
        oldest_bytes = bytes;
      }
    std::free(oldest->front().second);
    oldest->erase(oldest->begin());
    cached_ -= oldest_bytes;
  }

  // Cached blocks per size, each with the clock value when it was cached.
  std::unordered_map<size_t, std::vector<std::pair<uint64_t, void*>>> free_;
  uint64_t clock_ = 0;
  size_t cached_ = 0;
  size_t live_ = 0, peak_live_ = 0;  // bytes of cacheable blocks handed out and not given back
  size_t limit_ = size_t(256) << 20;
  bool fixed_limit_ = false;
};

// Never destroyed: buffers may be released during static destruction.
HostPool& pool() {
  static HostPool* p = new HostPool();
  return *p;
}

}  // namespace

std::shared_ptr<void> host_allocate(size_t bytes) {
  size_t rounded = ((bytes + 63) / 64) * 64;
  if (rounded == 0) rounded = 64;
  HostPool& hp = pool();
  void* p = hp.take(rounded);
  // When the control block cannot be allocated, shared_ptr's constructor calls the deleter on p
  // itself before it throws: freeing p here too was a double free.
  return std::shared_ptr<void>(p, [rounded](void* q) { pool().give(q, rounded); });
}

}  // namespace kb
