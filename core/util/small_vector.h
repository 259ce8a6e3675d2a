// A vector that keeps up to N elements inline: the dims and strides a kernel builds on every call
// stay off the heap (a tensor of rank above N spills to it).
#pragma once
#include <array>
#include <cstddef>
#include <vector>

namespace kb {

template <class T, size_t N>
class SmallVector {
 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, const T& v = T()) { assign(n, v); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return size_ <= N ? inline_.data() : heap_.data(); }
  const T* data() const { return size_ <= N ? inline_.data() : heap_.data(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  void push_back(const T& v) {
    if (size_ < N) {
      inline_[size_++] = v;
      return;
    }
    if (size_ == N) heap_.assign(inline_.begin(), inline_.end());
    heap_.push_back(v);
    ++size_;
  }
  void assign(size_t n, const T& v) {
    size_ = n;
    if (n <= N) {
      heap_.clear();
      for (size_t i = 0; i < n; ++i) inline_[i] = v;
    } else {
      heap_.assign(n, v);
    }
  }

 private:
  std::array<T, N> inline_{};
  std::vector<T> heap_;  // all the elements once there are more than N
  size_t size_ = 0;
};

}  // namespace kb
