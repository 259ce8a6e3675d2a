// State kept from one use to the next for one user at a time: a user arriving while it is taken
// gets a fresh T of its own, so concurrent uses stay correct and the common one reuses.
#pragma once
#include <atomic>

namespace kb {

template <class T>
class Exclusive {
 public:
  class Lease {
   public:
    explicit Lease(Exclusive& e)
        : e_(e), mine_(!e.busy_.exchange(true, std::memory_order_acquire)) {}
    ~Lease() {
      if (mine_) e_.busy_.store(false, std::memory_order_release);
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    T& operator*() { return mine_ ? e_.kept_ : own_; }
    T* operator->() { return &**this; }

   private:
    Exclusive& e_;
    bool mine_;
    T own_;  // empty unless the kept T was taken
  };

 private:
  std::atomic<bool> busy_{false};
  T kept_;
};

}  // namespace kb
