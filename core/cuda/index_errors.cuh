// Index errors found on the device, and the pieces of the kernels that index by data (gather,
// scatter, sparse): the index dtype dispatch.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "core/cuda/common.cuh"

namespace kb::cuda {

// Index checks that do not wait for the GPU. A kernel flags the lowest row (position in its
// index tensor) whose index is out of range in a slot of the host thread's pending checks, and
// a one-thread kernel queued after it copies that row's indices beside the flag. The host reads
// every slot at once when the thread settles (settle_checks: at the end of a run, or before the
// host reads device data) and fails with the CPU's error for the first flagged row: the error
// the CPU, which checks in order, reports.

// A slot's flag when no row is flagged: the slots are cleared by setting every byte to 0x7f.
constexpr long long kNoRow = 0x7f7f7f7f7f7f7f7fLL;

// The CPU's check of one index tuple: fails with its message when the tuple is out of range.
// It runs when the thread settles, so it holds what it needs by value.
using TupleCheck = std::function<void(const int64_t* tuple)>;

// A slot of the calling thread's pending checks, for one kernel launch.
class RowFlag {
 public:
  RowFlag();  // settles first when every slot is taken
  long long* ptr() const { return flag_; }
  // After the kernel: keeps the flagged row's tuple (indices [row * width, (row + 1) * width)
  // of idx, width <= kMaxDims) and its check, to run when the thread settles.
  void defer(const Buffer& idx, int64_t width, const char* who, TupleCheck check);

 private:
  long long* flag_;
  size_t slot_;
  uint64_t round_;  // the thread's settle count when the slot was taken
};

// Elements [begin, begin + n) of an index tensor (int32 or int64), on the host, as int64.
inline std::vector<int64_t> host_indices(const Buffer& b, int64_t begin, int64_t n) {
  if (b.dtype == DType::i64) return host_copy<int64_t>(b, begin, n);
  std::vector<int32_t> v = host_copy<int32_t>(b, begin, n);
  return std::vector<int64_t>(v.begin(), v.end());
}

// The CPU's error for index v of `idx`: "<who>: <what> <v> is out of range [0, limit)".
inline void check_index(int64_t v, int64_t limit, const char* who, const char* what) {
  check(v >= 0 && v < limit, Status::invalid_argument, who, ": ", what, " ", v,
        " is out of range [0, ", limit, ")");
}

// RowFlag::defer for single indices in [0, limit).
inline void defer_index_check(RowFlag& flag, const Buffer& idx, int64_t limit, const char* who,
                              const char* what) {
  flag.defer(idx, 1, who,
             [limit, who, what](const int64_t* v) { check_index(*v, limit, who, what); });
}

// Checks every index on the host: for a call with nothing to compute (empty rows), whose
// indices the CPU checks all the same.
inline void check_indices_on_host(const Buffer& idx, int64_t limit, const char* who,
                                  const char* what) {
  for (int64_t v : host_indices(idx, 0, idx.numel())) check_index(v, limit, who, what);
}

// Records row as bad: the flag ends up holding the lowest bad row.
__device__ inline void flag_row(long long* bad, int64_t row) { atomicMin(bad, (long long)row); }

// Whether index v (at `row` of its tensor) is in [0, limit); flags the row when not.
template <class I>
__device__ bool index_ok(I v, int64_t limit, int64_t row, long long* bad) {
  if (v < 0 || int64_t(v) >= limit) {
    flag_row(bad, row);
    return false;
  }
  return true;
}

template <class F>
Kernel with_index_type(DType t, F&& f) {
  if (t == DType::i32) return f(int32_t{});
  return f(int64_t{});
}

}  // namespace kb::cuda
