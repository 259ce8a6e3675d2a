// The calling thread's pending index checks (index_errors.cuh): slots in one block of device
// memory, read back in one copy when the thread settles.
#include <string>
#include <utility>

#include "core/cuda/index_errors.cuh"
#include "core/util/error.h"

namespace kb::cuda {
namespace {

// A slot: the flagged row, then the row's tuple of indices.
constexpr size_t kSlotWords = 1 + size_t(kMaxDims);
// Settling reads them all; a thread that takes more between two runs settles once per block.
constexpr size_t kSlots = 256;
constexpr size_t kBlockBytes = kSlots * kSlotWords * sizeof(long long);

struct PendingCheck {
  const char* who = "";
  TupleCheck check;  // empty until the kernel is queued: a slot whose launch failed
};

struct PendingChecks {
  std::shared_ptr<void> block;       // kSlots slots; those in use are cleared
  std::vector<PendingCheck> checks;  // one per slot in use, in launch order
  uint64_t settled = 0;              // how many times: a RowFlag's slot is of one round
  long long* slot(size_t i) const { return static_cast<long long*>(block.get()) + i * kSlotWords; }
};

PendingChecks& pending() {
  thread_local PendingChecks p;
  return p;
}

template <class I>
__global__ void keep_flagged_tuple(long long* slot, const I* idx, int64_t width) {
  long long row = slot[0];
  if (row == kNoRow) return;
  for (int64_t j = 0; j < width; ++j) slot[1 + j] = (long long)idx[row * width + j];
}

}  // namespace

RowFlag::RowFlag() {
  PendingChecks& p = pending();
  if (p.checks.size() == kSlots) settle_checks();
  if (!p.block) p.block = scratch(kBlockBytes);
  if (p.checks.empty())
    check_cuda(cudaMemsetAsync(p.block.get(), 0x7f, kBlockBytes, stream()), "index checks");
  slot_ = p.checks.size();
  round_ = p.settled;
  p.checks.emplace_back();
  flag_ = p.slot(slot_);
}

void RowFlag::defer(const Buffer& idx, int64_t width, const char* who, TupleCheck check) {
  PendingChecks& p = pending();
  kb::check(p.settled == round_, Status::internal, who, ": index checks settled mid-launch");
  // width 0: tuples of no index (a gather of whole tensors), which no row can fail.
  kb::check(width >= 0 && width <= kMaxDims, Status::internal, who, ": index tuples of ", width);
  if (idx.dtype == DType::i32)
    keep_flagged_tuple<<<1, 1, 0, stream()>>>(flag_, idx.as<int32_t>(), width);
  else
    keep_flagged_tuple<<<1, 1, 0, stream()>>>(flag_, idx.as<int64_t>(), width);
  after_launch(who);
  PendingCheck& c = p.checks[slot_];
  c.who = who;
  c.check = std::move(check);
}

void settle_checks() {
  PendingChecks& p = pending();
  if (p.checks.empty()) return;
  std::vector<PendingCheck> checks = std::move(p.checks);
  p.checks.clear();  // forgotten even when the read below fails
  ++p.settled;
  std::vector<long long> words(checks.size() * kSlotWords);
  check_cuda(cudaMemcpyAsync(words.data(), p.block.get(), words.size() * sizeof(long long),
                             cudaMemcpyDeviceToHost, stream()),
             "reading the index checks");
  check_cuda(cudaStreamSynchronize(stream()), "reading the index checks");
  for (size_t i = 0; i < checks.size(); ++i) {
    const long long* slot = words.data() + i * kSlotWords;
    if (slot[0] == kNoRow || !checks[i].check) continue;
    std::vector<int64_t> tuple(slot + 1, slot + kSlotWords);
    checks[i].check(tuple.data());
    fail(Status::internal, checks[i].who, ": index row ", slot[0], " was flagged but is in range");
  }
}

}  // namespace kb::cuda
